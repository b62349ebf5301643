"""Year of a US patent document from its number: USPTO anchors, applications, other series."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chemassay.suites.reaction_ood.years import (
    first_patent_table,
    normalize_patent_id,
    parse_us_patent,
    year_from_grant_number,
    year_from_patent,
)

# USPTO "Milestones in U.S. patenting": number -> issue date
MILESTONES = {
    3_000_000: 1961, 4_000_000: 1976, 5_000_000: 1991, 6_000_000: 1999, 7_000_000: 2006,
    8_000_000: 2011, 9_000_000: 2015, 10_000_000: 2018, 11_000_000: 2021,
}


@pytest.mark.parametrize(("number", "year"), sorted(MILESTONES.items()))
def test_milestone_patents_get_their_issue_year(number, year):
    assert year_from_grant_number(number) == year
    assert year_from_patent(f"US{number}") == year


def test_issue_anchors_in_every_spelling():
    assert year_from_patent("4,000,000") == 1976  # issued 1976-12-28
    assert year_from_patent("US 5,000,000 A") == 1991  # 1991-03-19
    assert year_from_patent("US6000000A") == 1999  # 1999-12-07
    assert year_from_patent("07000000") == 2006  # 2006-02-14
    assert year_from_patent("US8000000B2") == 2011  # 2011-08-16


def test_year_boundaries_follow_the_table():
    rows = {row.year: row.first_patent_number for row in first_patent_table()}
    assert year_from_grant_number(rows[2001]) == 2001
    assert year_from_grant_number(rows[2001] - 1) == 2000
    assert year_from_grant_number(rows[1976]) == 1976
    assert year_from_grant_number(rows[1960] - 1) is None  # before the table: unknown
    assert year_from_grant_number(rows[max(rows)] + 10_000_000) is None  # far past the table


def test_table_is_sorted_and_documents_its_provenance():
    rows = first_patent_table()
    numbers = [r.first_patent_number for r in rows]
    assert numbers == sorted(numbers)
    assert [r.year for r in rows] == list(range(rows[0].year, rows[-1].year + 1))
    assert {r.status for r in rows} <= {"copy-seen", "recalled", "derived"}
    assert all(r.note for r in rows if r.status == "derived")


def test_applications_carry_their_publication_year():
    assert year_from_patent("US20120123456A1") == 2012
    assert year_from_patent("US20130079342A1") == 2013
    assert year_from_patent("20010000044") == 2001
    assert parse_us_patent("US20120123456A1").series == "application"


@pytest.mark.parametrize("text", ["USRE041234E", "RE041234", "USH0002255", "H0001234", "D512345", "PP12345", "T947001"])
def test_separate_series_have_no_year(text):
    assert year_from_patent(text) is None


def test_not_a_us_patent():
    assert year_from_patent("EP1234567A1") is None
    assert year_from_patent("WO2012012345") is None
    assert year_from_patent("") is None
    assert normalize_patent_id(" ep1234567a1 ") == "EP1234567A1"


def test_normalization_matches_the_schneider_spellings():
    # the Schneider 50k set writes the same patent with and without 'US'
    assert normalize_patent_id("US06887874") == normalize_patent_id("06887874") == "06887874"
    assert normalize_patent_id("US6887874B1") == "06887874"
    assert normalize_patent_id("USRE041234") == normalize_patent_id("RE041234") == "RE041234"
    assert normalize_patent_id("US20130079342A1") == "20130079342"
    assert normalize_patent_id("US20100123456A1_0001") == "20100123456"  # Pistachio section suffix


@given(st.integers(min_value=2_919_443, max_value=11_000_000), st.sampled_from(["", "A", "B1", "B2"]))
def test_grant_numbers_round_trip_and_years_rise_with_numbers(number, kind):
    text = f"US{number}{kind}"
    parsed = parse_us_patent(text)
    assert parsed is not None and parsed.series == "utility" and parsed.number == number
    assert normalize_patent_id(text) == f"{number:08d}"
    year = year_from_patent(text)
    assert 1960 <= year <= 2023
    assert year_from_grant_number(number + 50_000) >= year
