"""oMeS alignment and scores: hand-worked cases (the paper's Appendix F edge cases among
them), values pinned from the published scorer (skylarkie/oMeBench scripts/utils_eval.py,
run on the same inputs), gold against itself, and properties of the dynamic program."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rdkit import Chem, DataStructs
from rdkit.Chem import rdFingerprintGenerator

from chemassay.suites.mechanism.oms import GoldStep, MoleculeCache, align, reaction_scores
from chemassay.suites.mechanism.parse import parse_steps
from chemassay.suites.mechanism.scoring import ScoreConfig, gold_steps, score_reaction

PT, NA = "acid_base_proton_transfer", "nucleophilic_addition"
# oMe-Gold NR-001 (base-catalysed aldol addition), weights as shipped.
ALDOL = [
    GoldStep(PT, "[CH2-]C=O", 0.22857142857142856),
    GoldStep(NA, "CC([O-])CC=O", 0.6),
    GoldStep(PT, "CC(O)CC=O", 0.1714285714285714),
]


def run(gold, pred, *, tau=0.6, round_to=None, cache=None):
    cache = cache or MoleculeCache()
    alignment = align(gold, [p[0] for p in pred], [p[1] for p in pred], cache, tau=tau)
    return alignment, reaction_scores(alignment, gold, round_to=round_to)


def test_perfect_prediction_scores_one():
    alignment, scores = run(ALDOL, [(s.subtype, s.smiles) for s in ALDOL])
    assert alignment.tags == ["match", "match", "match"]
    assert (scores.S_total, scores.S_partial, scores.V, scores.L) == (1.0, 1.0, 1.0, 1.0)


def test_appendix_f_redundant_predicted_step_is_skipped_without_loss():
    # The model repeats its first step: the extra step is skipped, nothing is lost.
    pred = [(PT, "[CH2-]C=O"), (PT, "[CH2-]C=O"), (NA, "CC([O-])CC=O"), (PT, "CC(O)CC=O")]
    alignment, scores = run(ALDOL, pred)
    assert alignment.tags == ["skip_pred", "match", "match", "match"]  # as the published scorer
    assert scores.S_total == 1.0 and scores.L == 1.0 and scores.V == 1.0


def test_appendix_f_terminal_type_error_loses_the_last_weight():
    pred = [(PT, "[CH2-]C=O"), (NA, "CC([O-])CC=O"), (NA, "CC(O)CC=O")]
    alignment, scores = run(ALDOL, pred)
    assert alignment.tags == ["match", "match", "type_mismatch"]
    expected = (0.22857142857142856 + 0.6) / (0.22857142857142856 + 0.6 + 0.1714285714285714)
    assert scores.S_total == pytest.approx(expected, abs=1e-15)
    assert scores.L == pytest.approx(2 / 3)
    assert alignment.gold_tag == ["match", "match", "type_mismatch"]
    # Published tool: S_total 0.83, S_partial 0.83, L 0.67 after rounding.
    _, rounded = run(ALDOL, pred, round_to=2)
    assert (rounded.S_total, rounded.S_partial, rounded.V, rounded.L) == (0.83, 0.83, 1.0, 0.67)


def test_right_label_wrong_intermediate_counts_for_l_not_for_s():
    pred = [(PT, "[CH2-]C=O"), (NA, "CC(O)CC=O"), (PT, "CC(O)CC=O")]  # alkoxide given as alcohol
    alignment, scores = run(ALDOL, pred, round_to=2)
    assert alignment.tags == ["match", "match", "match"]
    # Tanimoto(alkoxide, alcohol) = 0.5 < tau: no partial credit (published tool: 0.4, 0.4, 1.0, 1.0).
    assert (scores.S_total, scores.S_partial, scores.V, scores.L) == (0.4, 0.4, 1.0, 1.0)


def test_invalid_intermediate_lowers_validity():
    pred = [(PT, "[CH2-]C=O"), (NA, "C1CC"), (PT, "CC(O)CC=O")]
    alignment, scores = run(ALDOL, pred, round_to=2)
    assert (scores.S_total, scores.S_partial, scores.V, scores.L) == (0.4, 0.4, 0.67, 1.0)
    assert alignment.n_valid_pred == 2


def test_swapped_steps_published_values():
    pred = [(NA, "CC([O-])CC=O"), (PT, "[CH2-]C=O"), (PT, "CC(O)CC=O")]
    alignment, scores = run(ALDOL, pred, round_to=2)
    assert alignment.tags == ["skip_gold", "match", "skip_pred", "match"]
    assert (scores.S_total, scores.S_partial, scores.V, scores.L) == (0.77, 0.77, 1.0, 0.67)


def test_empty_prediction():
    alignment, scores = run(ALDOL, [])
    assert alignment.tags == ["skip_gold"] * 3
    assert (scores.S_total, scores.S_partial, scores.V, scores.L) == (0.0, 0.0, 0.0, 0.0)


def _rdkit_tanimoto(a: str, b: str) -> float:
    generator = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048)
    return DataStructs.TanimotoSimilarity(
        generator.GetFingerprint(Chem.MolFromSmiles(a)), generator.GetFingerprint(Chem.MolFromSmiles(b))
    )


def test_partial_credit_is_weight_times_tanimoto_above_tau():
    gold = [GoldStep(NA, "CCCCCCCCCCC(=O)OCC", 0.625), GoldStep(PT, "CCCCCCCCCCC(=O)O", 0.375)]
    pred = [(NA, "CCCCCCCCCCC(=O)OC"), (PT, "CCCCCCCCCCC(=O)O")]
    similarity = _rdkit_tanimoto("CCCCCCCCCCC(=O)OCC", "CCCCCCCCCCC(=O)OC")
    assert similarity == pytest.approx(0.64)
    alignment, scores = run(gold, pred)
    assert scores.S_total == pytest.approx(0.375)
    assert scores.S_partial == pytest.approx(0.625 * similarity + 0.375)
    assert alignment.gold_partial[0] == similarity and alignment.gold_exact == [False, True]
    # Published tool: S_total 0.38, S_partial 0.78; with tau = 0.9 the partial credit vanishes.
    _, rounded = run(gold, pred, round_to=2)
    assert (rounded.S_total, rounded.S_partial) == (0.38, 0.78)
    _, strict_tau = run(gold, pred, tau=0.9, round_to=2)
    assert (strict_tau.S_total, strict_tau.S_partial) == (0.38, 0.38)


def test_tie_breaking_follows_the_published_order():
    gold = [GoldStep("a", "CCO", 0.5), GoldStep("b", "CCN", 0.5)]
    alignment, scores = run(gold, [("c", "CCO"), ("a", "CCO")], round_to=2)
    assert alignment.tags == ["skip_pred", "match", "skip_gold"]
    assert (scores.S_total, scores.L) == (0.5, 0.5)
    alignment, _ = run([GoldStep("a", "CCO", 1.0)], [("a", "CCO"), ("a", "CCO")])
    assert alignment.tags == ["skip_pred", "match"]


def test_atom_maps_are_kept_as_in_the_reference():
    # Canonical SMILES keep atom maps (no exact credit) but fingerprints ignore them (full partial credit).
    alignment, scores = run([GoldStep("a", "CCO", 1.0)], [("a", "[CH3:1][CH2:2][OH:3]")])
    assert scores.S_total == 0.0 and scores.S_partial == 1.0


def test_none_labels_never_match():
    alignment, scores = run([GoldStep(None, "CCO", 1.0)], [(None, "CCO")])
    assert alignment.tags == ["type_mismatch"] and scores.L == 0.0


def test_every_gold_reaction_against_itself_scores_exactly_one(gold_reactions):
    cache = MoleculeCache()
    for round_to in (None, 2):
        for reaction in gold_reactions:
            pred = parse_steps(
                [{"subtype": s.subtype, "type": s.type, "intermediate_smiles": s.intermediate_smiles} for s in reaction.steps]
            )
            result = score_reaction(reaction, pred, cache, ScoreConfig(round_to=round_to))
            assert result.values == {"S_total": 1.0, "S_partial": 1.0, "V": 1.0, "L": 1.0}, reaction.reaction_id
            assert set(result.alignment.tags) == {"match"}


def test_unrounded_weights_off_by_an_ulp_still_give_one(gold_reactions):
    # 68 Gold reactions have weights summing to 1 +- 1 ulp; the raw DP sum is not 1.0 there.
    off = [r for r in gold_reactions if sum(s.step_weight for s in r.steps) != 1.0]
    assert len(off) == 68
    reaction = off[0]
    gold, _ = gold_steps(reaction)
    alignment, scores = run(gold, [(s.subtype, s.smiles) for s in gold])
    assert alignment.dp_total != 1.0 and scores.S_total == 1.0


def test_cache_round_trip(tmp_path):
    cache = MoleculeCache()
    cache.add(["CCO", "c1ccccc1O", "C1CC", "", "CC(=O)[O-]"])
    path = tmp_path / "cache.npz"
    cache.save(path)
    loaded = MoleculeCache.load(path)
    assert loaded is not None and len(loaded) == len(cache) == 5
    for smiles in ("CCO", "c1ccccc1O", "C1CC", "", "CC(=O)[O-]"):
        assert loaded.canonical(smiles) == cache.canonical(smiles)
    assert loaded.canonical("C1CC") is None and loaded.canonical("") is None
    assert loaded.similarity("CCO", "c1ccccc1O") == cache.similarity("CCO", "c1ccccc1O") == _rdkit_tanimoto("CCO", "c1ccccc1O")
    assert MoleculeCache.load(tmp_path / "missing.npz") is None


# ----------------------------------------------------------------------------- properties

LABELS = ["a", "b"]
MOLECULES = ["CCO", "CCN", "c1ccccc1", "CC(=O)O", "C1CC"]  # the last one is invalid


def _brute_force(gold, pred, cache, tau):
    """Best (S_total, S_partial) over every monotone alignment, enumerated."""
    best = (0.0, 0.0)
    n, m = len(gold), len(pred)
    for k in range(0, min(n, m) + 1):
        for gi in itertools.combinations(range(n), k):
            for pj in itertools.combinations(range(m), k):
                tot = par = 0.0
                for i, j in zip(gi, pj, strict=True):
                    if gold[i].subtype != pred[j][0]:
                        continue
                    g, p = cache.canonical(gold[i].smiles), cache.canonical(pred[j][1])
                    if g and g == p:
                        tot += gold[i].weight
                    if g and p:
                        sim = cache.similarity(gold[i].smiles, pred[j][1])
                        par += gold[i].weight * (sim if sim >= tau else 0.0)
                if tot > best[0] + 1e-12 or (abs(tot - best[0]) <= 1e-12 and par > best[1] + 1e-12):
                    best = (tot, par)
    return best


step_strategy = st.tuples(st.sampled_from(LABELS), st.sampled_from(MOLECULES))


@settings(max_examples=150, deadline=None)
@given(
    gold=st.lists(st.tuples(step_strategy, st.sampled_from([0.125, 0.25, 0.5])), min_size=1, max_size=4),
    pred=st.lists(step_strategy, max_size=4),
)
def test_dynamic_program_finds_the_best_alignment(gold, pred):
    gold_steps_ = [GoldStep(label, smiles, weight) for (label, smiles), weight in gold]
    cache = MoleculeCache()
    alignment, _ = run(gold_steps_, pred, cache=cache)
    tot, par = _brute_force(gold_steps_, pred, cache, 0.6)
    assert alignment.dp_total == pytest.approx(tot, abs=1e-12)
    assert alignment.dp_partial == pytest.approx(par, abs=1e-12)
    assert alignment.dp_total <= alignment.dp_partial + 1e-12
    # The tags describe a full alignment of both sequences.
    assert sum(t in ("match", "type_mismatch", "skip_gold") for t in alignment.tags) == len(gold_steps_)
    assert sum(t in ("match", "type_mismatch", "skip_pred") for t in alignment.tags) == len(pred)
    assert 0.0 <= alignment.validity <= 1.0 and 0.0 <= alignment.logic <= 1.0
    assert math.isclose(alignment.validity, sum(cache.canonical(s) is not None for _, s in pred) / max(1, len(pred)))
