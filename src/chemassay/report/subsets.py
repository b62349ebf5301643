"""Seeded, stratified subsets of a benchmark's items, and how many items a precision needs.

``chemassay assay --limit N`` runs every task on at most ``N`` of its items, the same items for
every model (given the same seed), so two models' subset results can be compared item by item
and stand beside the papers' rows with their intervals. :func:`stratified_subset` picks them:

1. the ids are sorted (the choice does not depend on the order a file lists them in);
2. ``N`` is shared among the strata (a suite's splits, difficulty levels, rewrite classes...)
   in proportion to their sizes (largest remainders), with at least one item for every
   non-empty stratum (when ``N`` is smaller than the number of strata: one item each from
   ``N`` strata drawn at random);
3. each stratum's items are drawn without replacement by one seeded ``numpy`` Generator,
   strata in sorted order.

The chosen ids come back in the order they were given. :func:`subset_sha256` fingerprints a
subset (the sha256 of its sorted ids), which a result records with the seed and size
(:class:`~chemassay.contract.result.SubsetRef`).

``--precision H`` chooses ``N`` instead (:func:`items_for_precision`): the items for which a
proportion's 95 % interval is at most ``±H`` in the worst case, at ``p = 0.5``.

>>> ids = [f"r{i}" for i in range(10)]
>>> chosen = stratified_subset(ids, 4, seed=0, strata=["easy"] * 8 + ["hard"] * 2)
>>> len(chosen), sum(i in {"r8", "r9"} for i in chosen)
(4, 1)
>>> chosen == stratified_subset(list(reversed(ids)), 4, seed=0, strata=["hard"] * 2 + ["easy"] * 8)[::-1]
True
>>> items_for_precision(0.05), round(wilson_half_width(385), 4)
(385, 0.0497)
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np

from chemassay.contract.assay import AssayContext
from chemassay.contract.result import SubsetRef


def subset_sha256(ids: Sequence[str]) -> str:
    """The sha256 of the sorted ids, one per line: the fingerprint of a subset."""
    return hashlib.sha256("\n".join(sorted(str(i) for i in ids)).encode("utf-8")).hexdigest()


def allocate(sizes: Sequence[int], limit: int) -> list[int]:
    """How many items each stratum gives to a subset of ``limit``: proportional to ``sizes``
    (largest remainders), at least one per non-empty stratum, never more than a stratum holds.
    Needs ``limit`` at least the number of non-empty strata and below their total."""
    total = sum(sizes)
    quota = [limit * size / total for size in sizes]
    counts = [min(size, max(1, math.floor(q))) if size else 0 for size, q in zip(sizes, quota, strict=True)]
    while sum(counts) > limit:  # the at-least-one rule overshot: take back where it overshot most
        index = max((i for i, c in enumerate(counts) if c > 1), key=lambda i: (counts[i] - quota[i], -i))
        counts[index] -= 1
    while sum(counts) < limit:
        index = max((i for i, c in enumerate(counts) if c < sizes[i]), key=lambda i: (quota[i] - counts[i], -i))
        counts[index] += 1
    return counts


def stratified_subset(ids: Sequence[str], limit: int, *, seed: int = 0,
                      strata: Sequence[str] | None = None) -> list[str]:
    """At most ``limit`` of ``ids``, seeded and stratified (see the module docstring), in
    the order given; all of them when ``limit`` is not below their number."""
    if limit < 1:
        raise ValueError(f"a subset needs at least one item, got limit={limit}")
    ids = [str(i) for i in ids]
    if len(set(ids)) != len(ids):
        raise ValueError("item ids repeat: a subset is chosen by id")
    if strata is not None and len(strata) != len(ids):
        raise ValueError(f"{len(strata)} strata for {len(ids)} items")
    if limit >= len(ids):
        return list(ids)
    labels = [str(s) for s in strata] if strata is not None else [""] * len(ids)
    members: dict[str, list[str]] = {}
    for item, label in sorted(zip(ids, labels, strict=True), key=lambda pair: (pair[1], pair[0])):
        members.setdefault(label, []).append(item)
    names = sorted(members)
    rng = np.random.default_rng(seed)
    if limit < len(names):  # fewer items than strata: one item from each of `limit` strata
        names = sorted(names[i] for i in rng.choice(len(names), size=limit, replace=False))
        counts = [1] * limit
    else:
        counts = allocate([len(members[name]) for name in names], limit)
    chosen: set[str] = set()
    for name, count in zip(names, counts, strict=True):
        pool = members[name]
        chosen.update(pool[i] for i in rng.choice(len(pool), size=count, replace=False))
    return [item for item in ids if item in chosen]


def _z(level: float) -> float:
    return NormalDist().inv_cdf(0.5 + level / 2)


def wilson_half_width(n: int, p: float = 0.5, level: float = 0.95) -> float:
    """Half the width of the Wilson score interval of a proportion ``p`` measured on ``n`` items."""
    z = _z(level)
    return z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)


def items_for_precision(half_width: float, level: float = 0.95) -> int:
    """Items for which a proportion's interval is at most ``±half_width`` at its worst (``p =
    0.5``): ``ceil(z² / (4 H²))``, 385 for ``H = 0.05``. The results' proportions (top-k
    accuracy, exact match, Acc@k, validity...) carry Wilson intervals
    (:mod:`chemassay.report.intervals`), whose half-width is at most ``z / (2√(n + z²))``, below
    ``H`` on that many items whatever the proportion; the normal interval ``z / (2√n)`` is
    ``±H`` too. A percentile bootstrap gives no such bound (its ends are resampled: ±5.2 points
    on 197 of 385), which is why proportions do not use it."""
    if not 0 < half_width < 0.5:
        raise ValueError(f"a precision is a half-width between 0 and 0.5, got {half_width}")
    z = _z(level)
    return math.ceil(z * z / (4 * half_width * half_width) - 1e-9)


def subset_record(ids: Sequence[str], *, limit: int | None, seed: int = 0, strata: Sequence[str] | None = None,
                  precision: float | None = None, method: str = "stratified") -> tuple[list[str], SubsetRef | None]:
    """The ids to run and the :class:`~chemassay.contract.result.SubsetRef` a result records:
    all of ``ids`` and ``None`` without a ``limit``; else :func:`stratified_subset` (or, with
    ``method="first"``, the first ``limit``) and its seed, size, sha256 and strata counts."""

    ids = [str(i) for i in ids]
    if limit is None:
        return ids, None
    if method == "first":
        chosen = ids[:limit]
    elif method == "stratified":
        chosen = stratified_subset(ids, limit, seed=seed, strata=strata)
    else:
        raise ValueError(f"subset method must be stratified or first, got {method!r}")
    counts: dict[str, int] = {}
    if strata is not None and method == "stratified":
        label = dict(zip(ids, (str(s) for s in strata), strict=True))
        counts = dict(sorted(Counter(label[i] for i in chosen).items()))
    return chosen, SubsetRef(seed=seed, size=len(chosen), of=len(ids), sha256=subset_sha256(chosen), limit=limit,
                             precision=precision, strata=counts, method=method)


def task_subset(ctx: AssayContext, ids: Sequence[str], strata: Sequence[str] | None = None,
                method: str = "stratified") -> tuple[list[str], SubsetRef | None]:
    """The ids a task runs and the record its result carries (``Result.subset``): all of
    ``ids`` and ``None`` without ``ctx.limit``; else at most ``ctx.limit`` of them, seeded by
    ``ctx.seed`` and stratified by ``strata`` (:func:`stratified_subset`),
    so every model gets the same items. ``method="first"`` takes the first ``ctx.limit``
    instead (a generator's samples, which are not items to choose among)."""
    return subset_record(ids, limit=ctx.limit, seed=ctx.seed, strata=strata, precision=ctx.precision, method=method)
