"""Fuzzing the suite's parsers (issue 18): random and adversarial bag lines, reaction lines and
prediction files raise only the documented errors. A short run here; ``make test-slow`` runs
10,000 examples per target."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chemassay.contract.errors import UserInputError
from chemassay.suites.stoichiometry.metrics import BagError, BagReader, ParsedBag
from chemassay.suites.stoichiometry.prepare import INVALID, STATUSES, RebalanceConfig, process_line
from chemassay.suites.stoichiometry.scoring import score_lines

PIECES = ["{", "}", ".", ">", ">>", "C", "O", "N", "Cl", "[H]", "[Na+]", "c1ccccc1", "(", ")", "=", "#", "1",
          "{2}", "{0}", "{" + "9" * 12 + "}", "{" + "9" * 5000 + "}", " ", "\t", ":", "[CH3:1]", "H2O", "CO2",
          "\x00", "é", "C" * 12_000, "{1}CCO", ";", ",", '{"a": 1}']
lines = st.one_of(
    st.text(max_size=200),
    st.lists(st.sampled_from(PIECES), max_size=12).map("".join),
)
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LONG = settings(max_examples=10_000, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check_bag(line: str, encoding: str) -> None:
    try:
        parsed = BagReader(encoding).parse(line, "tgt")
    except BagError:
        return
    assert isinstance(parsed, ParsedBag) and all(c >= 1 for c in parsed.coefficients.values())


def check_reaction(line: str, encoding: str) -> None:
    outcome, _ = process_line("all", 1, line, RebalanceConfig(encoding=encoding))
    assert outcome.status in STATUSES
    assert outcome.status != INVALID or outcome.reason


def check_scoring(predictions: list[str], targets: list[str]) -> None:
    size = min(len(predictions), len(targets))
    try:
        report = score_lines(predictions[:size], targets[:size], targets[:size])
    except UserInputError:
        return
    assert len(report.samples) + len(report.skipped) == size


@FAST
@given(lines, st.sampled_from(["smiles", "formula"]))
def test_bag_parser_raises_only_bag_errors(line, encoding):
    check_bag(line, encoding)


@FAST
@given(lines, st.sampled_from(["smiles", "formula"]))
def test_reaction_lines_always_get_an_outcome(line, encoding):
    check_reaction(line, encoding)


@FAST
@given(st.lists(lines, max_size=5), st.lists(lines, max_size=5))
def test_scoring_raises_only_user_errors(predictions, targets):
    check_scoring(predictions, targets)


@pytest.mark.slow
@LONG
@given(lines, st.sampled_from(["smiles", "formula"]))
def test_bag_parser_long(line, encoding):
    check_bag(line, encoding)


@pytest.mark.slow
@LONG
@given(lines, st.sampled_from(["smiles", "formula"]))
def test_reaction_lines_long(line, encoding):
    check_reaction(line, encoding)


@pytest.mark.slow
@LONG
@given(st.lists(lines, max_size=5), st.lists(lines, max_size=5))
def test_scoring_long(predictions, targets):
    check_scoring(predictions, targets)
