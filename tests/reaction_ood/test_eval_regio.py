"""Regioisomer-agnostic top-k accuracy (the paper's Heck analysis): regioisomers of the recorded
products count as correct, other molecules do not."""

from chemassay.reaction_ood import evaluate

from chemassay.suites.reaction_ood.metrics import regio_key, regio_set, score_item


def test_regioisomers_share_a_key_and_other_molecules_do_not():
    para, ortho = "Cc1ccc([N+](=O)[O-])cc1", "Cc1ccccc1[N+](=O)[O-]"
    assert regio_key(para) == regio_key(ortho) == "C7H7NO2|c1ccccc1"
    # Heck: the branched (alpha) and the linear (beta, E or Z) arylation products
    linear_e, linear_z, branched = "COC(=O)/C=C/c1ccccc1", "COC(=O)/C=C\\c1ccccc1", "C=C(C(=O)OC)c1ccccc1"
    assert regio_key(linear_e) == regio_key(linear_z) == regio_key(branched)
    # a different ring system or another formula is another molecule
    assert regio_key("Cc1ccc(N)cc1") != regio_key(para)
    assert regio_key("CC1CCCCC1") != regio_key("Cc1ccccc1")
    assert regio_key("c1ccc2ccccc2c1") == "C10H8|c1ccc2ccccc2c1"
    assert regio_key("not smiles") is None
    assert regio_set("CCO.Cc1ccccc1[N+](=O)[O-]") == regio_set(para + ".OCC")


def test_scores_regio_after_stereo():
    score = score_item("COC(=O)/C=C/c1ccccc1", ["C=C(C(=O)OC)c1ccccc1", "COC(=O)/C=C\\c1ccccc1"])
    assert (score.rank, score.rank_stereo_agnostic, score.rank_regio_agnostic) == (None, 2, 1)
    assert score_item("CCO", ["OCC"]).rank_regio_agnostic == 1
    assert score_item("CCO", ["COC"]).rank_regio_agnostic == 1  # same formula, no rings: a constitutional isomer
    assert score_item("CCO", ["CC=O"]).rank_regio_agnostic is None


def test_evaluate_reports_regio_agnostic_accuracy_with_intervals():
    result = evaluate([["Cc1ccccc1[N+](=O)[O-]"], ["CCN"]], ["Cc1ccc([N+](=O)[O-])cc1", "CCN"], k=1)
    assert result.metrics["top1_accuracy"] == 0.5
    assert result.metrics["top1_accuracy_regio_agnostic"] == 1.0
    assert result.item_scores["top1_accuracy_regio_agnostic"] == [1.0, 1.0]
    assert "top1_accuracy_regio_agnostic" in result.intervals
