"""Retrieval metrics on tiny hand-checked embedding sets (ties included) and agreement of
every backend with AMORE's own FAISS procedure."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse

from chemassay.contract.errors import UserInputError
from chemassay.suites.robustness.retrieval import (
    rank_metrics,
    reference_ranks_faiss,
    score_pair,
    true_match_ranks,
)


def test_hand_checked_ranks_and_metrics():
    originals = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [5.0, 5.0]])
    # Augmented 0 is far from original 0 and closest to original 1's position.
    augmented = np.array([[0.9, 0.0], [1.0, 0.2], [0.0, 1.0], [5.0, 4.0]])
    ranks = true_match_ranks(originals, augmented).ranks
    # query 0 at (0,0): distances 0.81 (true), 1.04, 1.0, 41 -> rank 0
    # query 1 at (1,0): distances 0.01, 0.04 (true), 2, 32 -> rank 1
    assert ranks.tolist() == [0, 1, 0, 0]
    metrics = rank_metrics(ranks)
    assert metrics["acc@1"] == pytest.approx(0.75)
    assert metrics["acc@5"] == pytest.approx(1.0)
    assert metrics["mrr"] == pytest.approx((1 + 0.5 + 1 + 1) / 4)
    assert metrics["mean_rank"] == pytest.approx(1.25)


def test_tie_policies():
    # Candidates 0, 1 and 2 are the same vector: every query among them ties three ways.
    originals = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0], [0.0, 3.0]])
    augmented = originals.copy()
    index = true_match_ranks(originals, augmented, ties="index").ranks
    optimistic = true_match_ranks(originals, augmented, ties="optimistic").ranks
    pessimistic = true_match_ranks(originals, augmented, ties="pessimistic").ranks
    assert index.tolist() == [0, 1, 2, 0]          # lower row first, as FAISS orders them
    assert optimistic.tolist() == [0, 0, 0, 0]
    assert pessimistic.tolist() == [2, 2, 2, 0]
    assert true_match_ranks(originals, augmented).ties.tolist() == [2, 2, 2, 0]
    assert rank_metrics(index)["mrr"] == pytest.approx((1 + 1 / 2 + 1 / 3 + 1) / 4)
    assert rank_metrics(index)["acc@1"] == pytest.approx(0.5)


def test_ties_between_different_vectors_at_equal_distance():
    originals = np.array([[0.0, 0.0], [9.0, 9.0], [7.0, 7.0]])
    augmented = np.array([[0.0, 2.0], [2.0, 0.0], [-2.0, 0.0]])
    # Query 0 is at squared distance 4 from all three (different) candidates.
    ranks = true_match_ranks(originals, augmented, ties="index").ranks
    assert ranks[0] == 0
    pessimistic = true_match_ranks(originals, augmented, ties="pessimistic").ranks
    assert pessimistic[0] == 2


def test_same_ranks_for_every_backend_and_the_faiss_reference():
    pytest.importorskip("faiss", reason="the reference ranks are AMORE's own FAISS search (extra 'faiss')")
    rng = np.random.default_rng(7)
    originals = rng.integers(0, 3, (300, 24)).astype(np.float64)
    originals[10] = originals[3]
    originals[40:45] = originals[20]
    augmented = originals + (rng.random(originals.shape) < 0.04) * rng.integers(-1, 2, originals.shape)
    reference = reference_ranks_faiss(originals, augmented)
    for backend in ("numpy", "faiss"):
        assert np.array_equal(true_match_ranks(originals, augmented, backend=backend).ranks, reference), backend
    assert np.array_equal(true_match_ranks(sparse.csr_matrix(originals), sparse.csr_matrix(augmented)).ranks, reference)
    queries_dense = rng.normal(size=(200, 32))
    candidates_dense = queries_dense + 0.8 * rng.normal(size=queries_dense.shape)
    assert np.array_equal(true_match_ranks(queries_dense, candidates_dense).ranks,
                          reference_ranks_faiss(queries_dense, candidates_dense))


def test_int8_count_path_gives_the_float_paths_ranks(monkeypatch):
    # Non-negative small counts (fingerprints, n-grams) take the exact int8 product when
    # torch is there; ranks, ties and distances must equal the float32/float64 path's.
    pytest.importorskip("faiss", reason="the reference ranks are AMORE's own FAISS search (extra 'faiss')")
    from chemassay.suites.robustness import retrieval

    rng = np.random.default_rng(3)
    originals = rng.integers(0, 6, (400, 300)) * (rng.random((400, 300)) < 0.1)
    originals[7] = originals[2]  # duplicate candidates tie exactly
    augmented = originals + (rng.random(originals.shape) < 0.02) * rng.integers(0, 3, originals.shape)
    augmented[:, 250:] = 0  # unused columns are dropped before the products
    q, x = sparse.csr_matrix(originals.astype(float)), sparse.csr_matrix(augmented.astype(float))
    fast = true_match_ranks(q, x, ties="pessimistic")
    in_index_order = true_match_ranks(q, x, ties="index").ranks
    assert np.array_equal(in_index_order, reference_ranks_faiss(originals.astype(float), augmented.astype(float)))
    monkeypatch.setattr(retrieval, "_int8_products_available", lambda: False)
    slow = true_match_ranks(q, x, ties="pessimistic")
    assert np.array_equal(fast.ranks, slow.ranks) and np.array_equal(fast.ties, slow.ties)
    assert np.array_equal(fast.true_distances, slow.true_distances)


def test_cosine_metric():
    originals = np.array([[1.0, 0.0], [0.0, 1.0]])
    augmented = np.array([[10.0, 0.5], [1.0, 1.0]])
    assert true_match_ranks(originals, augmented, metric="cosine").ranks.tolist() == [0, 0]
    # With L2 the long vector is far from everything: query 0's nearest is candidate 1.
    assert true_match_ranks(originals, augmented, metric="l2").ranks.tolist() == [1, 0]


def test_score_pair_directions():
    originals = np.array([[0.0], [1.0], [2.0]])
    augmented = np.array([[0.6], [1.0], [2.0]])
    scores = score_pair(originals, augmented)
    # original 0 -> augmented: 0.36 (true) vs 1 -> rank 0; augmented 0 (0.6) -> originals:
    # 0.36 (true), 0.16 (original 1 is closer) -> rank 1.
    assert scores.ranks["o2a"].tolist() == [0, 0, 0]
    assert scores.ranks["a2o"].tolist() == [1, 0, 0]
    assert scores.metrics["o2a_acc@1"] == 1.0
    assert scores.metrics["a2o_acc@1"] == pytest.approx(2 / 3)


def test_bad_shapes_and_options():
    with pytest.raises(UserInputError):
        true_match_ranks(np.zeros((3, 2)), np.zeros((4, 2)))
    with pytest.raises(UserInputError):
        true_match_ranks(np.zeros((3, 2)), np.zeros((3, 5)))
    with pytest.raises(UserInputError):
        true_match_ranks(np.zeros((3, 2)), np.zeros((3, 2)), ties="random")
    with pytest.raises(UserInputError):
        true_match_ranks(np.zeros((3, 2)), np.zeros((3, 2)), metric="manhattan")
