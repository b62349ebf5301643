"""Publication year of a US patent document from its number alone.

US utility patents (the 1836 series) are numbered in order of grant, so the year of grant of
a grant number ``n`` is the last year whose first number is ``<= n``. The first number of each
year comes from the USPTO table "Issue Years and Patent Numbers", shipped as
``data/uspto_first_patent_by_year.csv`` with its citation and a per-row status (which rows were
checked against a public copy and which were not; see the file header).

Published applications (``US20120123456A1``, 2001 onwards) carry their publication year in
their first four digits. Reissues (``RE``), statutory invention registrations (``H``), defensive
publications (``T``), design (``D``) and plant (``PP``) patents are numbered in separate series
that are not comparable with grant numbers: their year is unknown (``None``), never guessed.

Public API: :func:`normalize_patent_id`, :func:`parse_us_patent`, :func:`year_from_patent`,
:func:`years_from_patents`, :func:`first_patent_table`.
"""

from __future__ import annotations

import bisect
import csv
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

_TABLE_FILE = "uspto_first_patent_by_year.csv"

# Prefix 'US' optional, then the series letters (none for utility grants), digits, optional
# kind code such as A, A1, B1, B2, E, H. Separators that some exports use are tolerated.
_US_DOCUMENT = re.compile(
    r"^(?:US)?[-\s]?(?P<series>RE|PP|H|T|D|X)?[-\s]?(?P<digits>\d[\d,]*)(?:[-\s]?(?P<kind>[A-Z]\d?))?$"
)


@dataclass(frozen=True)
class PatentNumber:
    """A parsed US patent document number.

    ``series`` is ``"utility"`` (1836-series grants), ``"application"`` (pre-grant
    publication, ``YYYYNNNNNNN``), or the separate series ``"reissue"``, ``"sir"``,
    ``"defensive"``, ``"design"``, ``"plant"``, ``"x"``; ``number`` is the numeric part.
    """

    series: str
    number: int
    kind: str | None = None
    digits: str = ""


_SERIES_NAMES = {"RE": "reissue", "PP": "plant", "H": "sir", "T": "defensive", "D": "design", "X": "x"}


@dataclass(frozen=True)
class FirstPatentRow:
    """One row of the shipped USPTO table: a year, its first grant number and how it was checked."""

    year: int
    first_patent_number: int
    status: str
    note: str


@lru_cache(maxsize=1)
def first_patent_table() -> tuple[FirstPatentRow, ...]:
    """The shipped USPTO table of the first utility patent number issued each year (sorted)."""
    text = resources.files("chemassay.suites.reaction_ood").joinpath("data", _TABLE_FILE).read_text("utf-8")
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
    rows = [
        FirstPatentRow(int(r["year"]), int(r["first_patent_number"]), r["status"], r["note"] or "")
        for r in csv.DictReader(lines)
    ]
    rows.sort(key=lambda row: row.year)
    numbers = [row.first_patent_number for row in rows]
    if numbers != sorted(numbers):
        raise RuntimeError(f"{_TABLE_FILE}: first patent numbers must increase with the year")
    return tuple(rows)


@lru_cache(maxsize=1)
def _boundaries() -> tuple[list[int], list[int]]:
    rows = first_patent_table()
    return [row.first_patent_number for row in rows], [row.year for row in rows]


def normalize_patent_id(text: str) -> str:
    """Canonical document id of a US patent document: ``US`` prefix and kind code removed.

    Grants are zero-padded to 8 digits (``US6887874B1`` → ``06887874``, the Schneider 50k
    spelling once ``US`` is stripped), applications keep their 11 digits
    (``US20130079342A1`` → ``20130079342``), separate series keep their letters
    (``USRE041234E`` → ``RE041234``, digits as written). Text that is not a US patent number (``EP1234567A1``,
    a Pistachio ``title``) is returned stripped and upper-cased, without the part after an
    underscore (Pistachio writes ``US1234567B2_0001`` for sections of one document).
    """
    cleaned = text.strip().upper().split("_")[0]
    parsed = parse_us_patent(cleaned)
    if parsed is None:
        return cleaned
    if parsed.series == "utility":
        return f"{parsed.number:08d}"
    if parsed.series == "application":
        return f"{parsed.number:011d}"
    letters = next(k for k, v in _SERIES_NAMES.items() if v == parsed.series)
    return f"{letters}{parsed.digits}"


def parse_us_patent(text: str) -> PatentNumber | None:
    """Parse a US patent or application number; ``None`` when ``text`` is not one.

    Accepts ``US`` prefixes, kind codes, separators and thousands commas
    (``US 6,887,874 B1``). An 11-digit number starting with a plausible year (``2001``–
    ``2099``) is a pre-grant publication; other numbers are utility grants.
    """
    if not isinstance(text, str):
        return None
    cleaned = text.strip().upper().split("_")[0].replace(" ", "")
    match = _US_DOCUMENT.match(cleaned)
    if match is None:
        return None
    digits = match.group("digits").replace(",", "")
    if not digits:
        return None
    series_letters = match.group("series")
    kind = match.group("kind")
    if series_letters:
        return PatentNumber(_SERIES_NAMES[series_letters], int(digits), kind, digits)
    if len(digits) == 11 and 2001 <= int(digits[:4]) <= 2099:
        return PatentNumber("application", int(digits), kind, digits)
    if len(digits) > 9:
        return None
    return PatentNumber("utility", int(digits), kind, digits)


def year_from_patent(text: str) -> int | None:
    """Year of grant (or of publication, for an application) of a US patent document.

    ``US20120123456A1`` → 2012; a grant number is looked up in the USPTO table
    (``4,000,000`` → 1976, ``5,000,000`` → 1991). ``None`` for numbers outside the table,
    separate series (reissues, SIRs, designs, plants, defensive publications) and text that
    is not a US patent number.
    """
    parsed = parse_us_patent(text) if isinstance(text, str) else None
    if parsed is None:
        return None
    if parsed.series == "application":
        return parsed.number // 10_000_000
    if parsed.series != "utility":
        return None
    return year_from_grant_number(parsed.number)


def year_from_grant_number(number: int) -> int | None:
    """Year of a utility grant number from the USPTO table; ``None`` before the table starts.

    Numbers past the last row are assigned the last year of the table only if they are
    below ``last + 400,000`` (about one year of grants); beyond that the year is unknown.
    """
    firsts, years = _boundaries()
    position = bisect.bisect_right(firsts, number) - 1
    if position < 0:
        return None
    if position == len(firsts) - 1 and number >= firsts[-1] + 400_000:
        return None
    return years[position]


def years_from_patents(texts: Iterable[str | None]) -> list[int | None]:
    """:func:`year_from_patent` over many ids (missing values give ``None``)."""
    cache: dict[str, int | None] = {}
    out: list[int | None] = []
    for text in texts:
        if not isinstance(text, str):
            out.append(None)
            continue
        if text not in cache:
            cache[text] = year_from_patent(text)
        out.append(cache[text])
    return out
