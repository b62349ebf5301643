"""Multilabel metrics (Appendices E and F), mass-balance diagnostics (Appendix B), compat mode."""

from __future__ import annotations

import pytest

from chemassay.suites.stoichiometry.metrics import (
    METRIC_KEYS,
    BagError,
    BagReader,
    aggregate,
    balance_class,
    multilabel_counts,
    reference_counts,
    reference_entries,
    score_sample,
)
from chemassay.suites.stoichiometry.scoring import score_files


@pytest.fixture(scope="module")
def formulas():
    return BagReader("formula")


@pytest.fixture(scope="module")
def smiles():
    return BagReader("smiles")


def test_appendix_e_and_f_worked_example(formulas):
    # prediction 3 H2O + 2 HCl + CO2 against truth 2 H2O + 2 HCl + CH4
    predicted = formulas.parse("{3}H2O.{2}HCl.{1}CO2")
    target = formulas.parse("{2}H2O.{2}HCl.{1}CH4")
    assert multilabel_counts(predicted.coefficients, target.coefficients) == (4, 2, 1, 2, 1, 1)
    score = score_sample(1, predicted, target, None)
    assert score.jac == pytest.approx(4 / 7) and score.f1 == pytest.approx(8 / 11)
    assert score.mol_jac == pytest.approx(2 / 4) and score.mol_f1 == pytest.approx(4 / 6)
    assert score.em == 0 and score.acc == 0 and score.alo == 1


def test_species_are_canonicalized_before_comparison(smiles, formulas):
    assert smiles.parse("{2}OCC.{1}O").coefficients == smiles.parse("{1}O.{2}CCO").coefficients
    assert formulas.parse("{1}OH2").coefficients == {"H2O": 1}
    # plain SMILES with duplicates: every molecule counts one
    assert smiles.parse("CCO.CCO.O").coefficients == {"CCO": 2, "O": 1}
    # tokenized lines (spaces between tokens) and reaction SMILES are accepted
    assert smiles.parse("{ 2 } C C O".replace("{ 2 }", "{2}")).coefficients == {"CCO": 2}
    assert smiles.parse("CC(=O)O.OCC>[H+]>CCOC(C)=O.O", "src").coefficients == {"CC(=O)O": 1, "CCO": 1, "[H+]": 1}
    assert smiles.parse("CC(=O)O.OCC>[H+]>CCOC(C)=O.O", "tgt").coefficients == {"CCOC(C)=O": 1, "O": 1}


@pytest.mark.parametrize("line, fragment", [
    ("", "empty bag"), ("{2}CCO..O", "empty item"), ("{0}O", "coefficient 0"), ("CC{2}O", "before the species"),
    ("{3}", "no species"), ("{1}C1CC", "SMILES"),
])
def test_malformed_predictions_name_the_problem(smiles, line, fragment):
    with pytest.raises(BagError, match=fragment):
        smiles.parse(line)


def test_mass_balance_diagnostics_on_the_sabatier_reaction(smiles):
    source = smiles.parse("{1}O=C=O.{4}[H][H]", "src")
    assert balance_class(source, smiles.parse("{1}C.{2}O")) == "BAL"
    assert balance_class(source, smiles.parse("{1}C.{1}O")) == "DEF"
    assert balance_class(source, smiles.parse("{1}C.{3}O")) == "EXC"
    assert balance_class(source, smiles.parse("{1}CC.{1}O")) == "DE"
    assert balance_class(smiles.parse("{1}[NH4+]"), smiles.parse("{1}N.{1}[H]")) == "CHG"


def test_aggregate_scores_invalid_predictions_as_zero(smiles):
    target = smiles.parse("{2}O")
    source = smiles.parse("{2}[H][H].{1}O=O", "src")
    scores = [score_sample(1, smiles.parse("{2}O"), target, source),
              score_sample(2, None, target, source, "item #1: bad")]
    metrics = aggregate(scores)
    assert set(metrics) == set(METRIC_KEYS)
    assert metrics["EM"] == 0.5 and metrics["VAL"] == 0.5 and metrics["JAC"] == 0.5
    assert metrics["BAL"] == 1.0  # balance diagnostics cover valid predictions only


def test_reference_compat_list_matching_and_quirks(smiles):
    # duplicates stay separate entries in the authors' notebook
    counts = reference_counts(reference_entries("{4}O", smiles), reference_entries("{2}O.{2}O", smiles))
    assert counts == {"tp": 2, "fp": 2, "fn": 2, "mol_tp": 1, "mol_fp": 0, "mol_fn": 1}
    # an unparseable species is dropped, not fatal
    assert reference_entries("{1}C1CC.{2}O", smiles) == [(2, "O")]
    # plain SMILES have no coefficient: the coefficient counts stay 0, so EM is vacuous there
    counts = reference_counts(reference_entries("CCO", smiles), reference_entries("O", smiles))
    assert counts["tp"] == counts["fp"] == counts["fn"] == 0 and counts["mol_fp"] == 1


def test_score_files_both_modes_and_skips(tmp_path):
    (tmp_path / "tgt.txt").write_text("{2}O.{1}CCO\n{1}C\n{1}not-a-molecule\n{4}O\n")
    (tmp_path / "src.txt").write_text("{2}[H][H].{1}O=O.{1}CCO\n{1}C\n{1}C\n{4}O\n")
    (tmp_path / "pred.txt").write_text("{2}O.{1}OCC\nC1CC\n{1}C\n{2}O.{2}O\n")
    report = score_files(tmp_path / "pred.txt", tmp_path / "tgt.txt", tmp_path / "src.txt")
    assert [s["line"] for s in report.skipped] == [3] and "target" in report.skipped[0]["reason"]
    assert len(report.samples) == 3
    assert report.metrics["EM"] == pytest.approx(2 / 3) and report.metrics["VAL"] == pytest.approx(2 / 3)
    assert report.samples[1].valid is False and "SMILES" in report.samples[1].reason
    reference = score_files(tmp_path / "pred.txt", tmp_path / "tgt.txt", compat="reference")
    assert reference.metrics["EM"] == pytest.approx(1 / 3)  # {2}O.{2}O is not {4}O there


def test_score_files_rejects_misaligned_files(tmp_path):
    from chemassay.contract.errors import UserInputError

    (tmp_path / "a.txt").write_text("{1}O\n")
    (tmp_path / "b.txt").write_text("{1}O\n{1}O\n")
    with pytest.raises(UserInputError, match="line-aligned"):
        score_files(tmp_path / "a.txt", tmp_path / "b.txt")
