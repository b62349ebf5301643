"""Rank-based metrics, implemented once for every suite: top-k accuracy (reaction-ood's
top-k, robustness's Acc@k), mean reciprocal rank, mean and median rank.

Ranks here are **1-based**: the position of the first correct answer, with ``None`` (or any
value below 1, or NaN) meaning "never found". Suites that compute 0-based ranks add one
first. How a tie between the correct answer and others is ranked is a choice made where the
ranks are computed; :func:`rank_with_ties` implements the three conventions:

* ``index`` — tied candidates keep their order (the candidate with the lower index first),
  as FAISS and AMORE's code do;
* ``optimistic`` — the correct answer comes first among those tied with it;
* ``pessimistic`` — it comes last.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

TIE_POLICIES = ("index", "optimistic", "pessimistic")
NEVER = np.iinfo(np.int64).max


def as_ranks(ranks: Iterable[int | float | None] | np.ndarray) -> np.ndarray:
    """1-based ranks as an int64 array, "never found" as :data:`NEVER`."""
    if isinstance(ranks, np.ndarray) and ranks.dtype.kind in "iu":
        values = ranks.astype(np.int64, copy=True)
        values[values < 1] = NEVER
        return values
    out = []
    for rank in ranks:
        if rank is None or (isinstance(rank, float) and math.isnan(rank)) or rank < 1:
            out.append(NEVER)
        else:
            out.append(int(rank))
    return np.asarray(out, dtype=np.int64)


def hits_at_k(ranks: Iterable[int | float | None] | np.ndarray, k: int) -> np.ndarray:
    """Per item: whether the first correct answer is within the top ``k`` (bool array)."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    return as_ranks(ranks) <= k


def accuracy_at_k(ranks: Iterable[int | float | None] | np.ndarray, ks: Sequence[int]) -> dict[int, float]:
    """Fraction of items whose first correct answer is within the top ``k``, per k (NaN if no items)."""
    values = as_ranks(ranks)
    if values.size == 0:
        return {k: math.nan for k in ks}
    return {k: float(np.mean(values <= k)) for k in ks}


def reciprocal_ranks(ranks: Iterable[int | float | None] | np.ndarray) -> np.ndarray:
    """Per item ``1 / rank`` (0 for never found)."""
    values = as_ranks(ranks)
    return np.where(values == NEVER, 0.0, 1.0 / np.minimum(values, NEVER - 1).astype(np.float64))


def mean_reciprocal_rank(ranks: Iterable[int | float | None] | np.ndarray) -> float:
    """Mean of ``1 / rank`` over items (0 for never found; NaN if no items)."""
    values = reciprocal_ranks(ranks)
    return float(values.mean()) if values.size else math.nan


def rank_summary(ranks: Iterable[int | float | None] | np.ndarray, ks: Sequence[int]) -> dict[str, float]:
    """``acc@k`` per k, ``mrr``, ``mean_rank`` and ``median_rank`` of 1-based ranks.

    Mean and median rank are over items that were found (NaN when none was).
    """
    values = as_ranks(ranks)
    metrics = {f"acc@{k}": value for k, value in accuracy_at_k(values, ks).items()}
    metrics["mrr"] = mean_reciprocal_rank(values)
    found = values[values != NEVER].astype(np.float64)
    metrics["mean_rank"] = float(found.mean()) if found.size else math.nan
    metrics["median_rank"] = float(np.median(found)) if found.size else math.nan
    return metrics


def rank_with_ties(closer: np.ndarray, tied_before: np.ndarray, tied_after: np.ndarray, policy: str = "index") -> np.ndarray:
    """1-based rank of the correct answer given how many candidates are strictly better
    (``closer``), and how many tie with it and come before / after it by index."""
    if policy not in TIE_POLICIES:
        raise ValueError(f"unknown tie policy {policy!r}; choose one of {', '.join(TIE_POLICIES)}")
    closer = np.asarray(closer, dtype=np.int64)
    if policy == "optimistic":
        return closer + 1
    if policy == "index":
        return closer + np.asarray(tied_before, dtype=np.int64) + 1
    return closer + np.asarray(tied_before, dtype=np.int64) + np.asarray(tied_after, dtype=np.int64) + 1
