"""Top-k scoring: canonical product-set matching, multi-product and stereo cases."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rdkit import Chem

from chemassay.suites.reaction_ood.metrics import (
    is_match,
    product_set,
    score_all,
    score_item,
    topk_accuracy,
)

IBUPROFEN = "CC(C)Cc1ccc(cc1)[C@@H](C)C(=O)O"
PARACETAMOL = "CC(=O)Nc1ccc(O)cc1"


def test_product_set_is_order_invariant_and_canonical():
    # the reference code's own unit test: the two orders match, one molecule alone does not
    first = product_set(f"{PARACETAMOL}.{IBUPROFEN}")
    second = product_set("CC(C)Cc1ccc(cc1)[C@@H](C)C(O)=O.CC(=O)Nc1ccc(O)cc1")
    alone = product_set("CC(C)Cc1ccc(cc1)[C@@H](C)C(O)=O")
    assert first == second
    assert first != alone
    assert product_set("OCC") == product_set("CCO") == frozenset({("CCO", 1)})


def test_product_set_counts_repeated_molecules():
    assert product_set("CCO.CCO") == frozenset({("CCO", 2)})
    assert product_set("CCO.CCO") != product_set("CCO")


def test_product_set_ignores_atom_maps_and_rejects_bad_text():
    assert product_set("[CH3:1][CH2:2][OH:3]") == product_set("CCO")
    assert product_set("C1CC") is None          # unclosed ring
    assert product_set("c1ccccc") is None       # cannot kekulize
    assert product_set("") is None
    assert product_set("CC O") is None          # whitespace inside
    assert product_set(None) is None


def test_stereo_agnostic_set_drops_only_stereo():
    assert product_set("C/C=C/C", stereo=False) == product_set("CC=CC", stereo=False)
    assert product_set("C/C=C/C") != product_set("CC=CC")
    assert product_set("N[C@@H](C)O", stereo=False) == product_set("N[C@H](C)O", stereo=False)
    # isotopes and charges are not stereo: they still count
    assert product_set("[13CH4]", stereo=False) != product_set("C", stereo=False)
    assert product_set("C[NH3+]", stereo=False) != product_set("CN", stereo=False)


def test_score_item_ranks_first_correct_prediction():
    score = score_item("CCO", ["CC", "not a smiles(", "OCC", "CCO"])
    assert score.rank == 3
    assert score.rank_stereo_agnostic == 3
    assert score.n_predictions == 4
    assert score.n_invalid == 1
    assert not score.top1_invalid
    assert score_item("CCO", ["C1CC", "CCO"]).top1_invalid


def test_multi_product_truth_needs_the_whole_set_unless_subset_mode():
    truth = "CC(=O)O.CCO"  # ester hydrolysis: acid and alcohol recorded
    assert score_item(truth, ["CC(=O)O"]).rank is None
    assert score_item(truth, ["OCC.CC(O)=O"]).rank == 1
    assert score_item(truth, ["CC(=O)O"], match="subset").rank == 1
    assert score_item(truth, ["CC(=O)O.CCN"], match="subset").rank is None
    # a prediction of the pair with an extra copy is not the recorded multiset
    assert score_item(truth, ["CC(=O)O.CCO.CCO"]).rank is None


def test_stereo_cases():
    truth = "C[C@H](N)C(=O)O"  # L-alanine
    enantiomer = "C[C@@H](N)C(=O)O"
    flat = "CC(N)C(=O)O"
    score = score_item(truth, [enantiomer, flat, truth])
    assert score.rank == 3
    assert score.rank_stereo_agnostic == 1
    heck = "O=C(O)/C=C/c1ccccc1"  # E-cinnamic acid; Z is a different product
    z_isomer = "O=C(O)/C=C\\c1ccccc1"
    assert score_item(heck, [z_isomer]).rank is None
    assert score_item(heck, [z_isomer]).rank_stereo_agnostic == 1


def test_unreadable_truth_is_reported_not_scored():
    with pytest.raises(ValueError, match="cannot be read"):
        score_item("C1CC", ["CCC"])
    scored = score_all(["CCO", "C1CC"], [["CCO"], ["CCC"]])
    assert scored[0].rank == 1
    assert isinstance(scored[1], str) and "cannot be read" in scored[1]


def test_topk_accuracy_hand_checked():
    ranks = [1, 2, None, 5]
    assert topk_accuracy(ranks, [1, 2, 3, 5, 10]) == {1: 0.25, 2: 0.5, 3: 0.5, 5: 0.75, 10: 0.75}
    assert math.isnan(topk_accuracy([], [1])[1])


def test_is_match_rejects_unknown_mode():
    from chemassay.contract.errors import UserInputError

    with pytest.raises(UserInputError):
        is_match(product_set("C"), product_set("C"), match="fuzzy")


def test_parallel_scoring_equals_serial():
    truths = ["CCO", "c1ccccc1O", "CC(=O)O.CCO"] * 5
    preds = [["OCC"], ["Oc1ccccc1", "C"], ["CC(=O)O"]] * 5
    serial = score_all(truths, preds, chunk=4)
    parallel = score_all(truths, preds, chunk=4, n_jobs=2)
    assert serial == parallel
    assert [s.rank for s in serial[:3]] == [1, 1, None]


MOLECULES = ["CCO", "c1ccccc1", "CC(=O)O", "C[C@H](N)C(=O)O", "O=C(O)/C=C/c1ccccc1", "[Na+]", "[Cl-]", "N#CC"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(MOLECULES), min_size=1, max_size=4), st.randoms(use_true_random=False))
def test_product_set_invariant_to_order_and_smiles_spelling(molecules, rng):
    canonical = product_set(".".join(molecules))
    shuffled = list(molecules)
    rng.shuffle(shuffled)
    spelled = []
    for smiles in shuffled:
        mol = Chem.MolFromSmiles(smiles)
        spelled.append(Chem.MolToSmiles(mol, doRandom=True, canonical=False))
    assert product_set(".".join(spelled)) == canonical
    assert score_item(".".join(molecules), [".".join(spelled)]).rank == 1


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["CCO", "OCC", "CC", "C1CC", "CCO.CCO", "c1ccccc1"]), min_size=3,
                         max_size=3), min_size=1, max_size=12))
def test_topk_equals_the_reference_cumulative_formula(prediction_lists):
    # the reference code's rule: top-k = mean over items of (cumsum of correct flags up to k) > 0.5
    import numpy as np

    truth = "CCO"
    flags = np.array([[product_set(p) == product_set(truth) for p in preds] for preds in prediction_lists], dtype=float)
    expected = np.mean(np.cumsum(flags, axis=1) > 0.5, axis=0)
    ranks = [score_item(truth, preds).rank for preds in prediction_lists]
    got = topk_accuracy(ranks, [1, 2, 3])
    assert [got[k] for k in (1, 2, 3)] == pytest.approx(expected.tolist())
