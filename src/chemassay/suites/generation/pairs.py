"""The pair stages of the MOSES metrics: SNN (nearest reference) and IntDiv (all pairs).

Three ways to run each, with the same values:

* **CPU** (default): exact integer common-bit counts with the chemistry core's kernels,
  in independent blocks on ``n_threads`` threads with one kernel thread each (see
  :mod:`chemassay.runtime.threads`: a busy core slows one block, not every barrier). SNN
  uses :class:`~chemassay.chem.similarity.NearestNeighbourIndex`, which counts only the
  reference chunks a folded-count bound cannot rule out.
* **GPU** (``device="cuda"``): the counts are float32 matrix products of 0/1 matrices on
  the device (exact: every partial sum is an integer below 2**24, and 0/1 inputs are exact
  in TF32 too), Tanimoto and the IntDiv sums in float64 on the device; SNN takes the
  float32 maximum per row (a correctly rounded division keeps distinct Tanimoto values of
  1024-bit fingerprints apart, so the maximum is the exact one) and recomputes its value
  in float64 from the integer count.
* **Dask** (``scheduler=``): the same blocks as tasks on a cluster.

IntDiv over more than :data:`INTDIV_EXACT_MAX` distinct molecules on a CPU without a
scheduler is *estimated* (:func:`estimate_internal_diversities`): seeded random rows, each
compared exactly with every molecule, give unbiased estimates with a normal-approximation
95 % interval, and the result says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from chemassay.chem.fingerprints import popcount, unpack_bits
from chemassay.chem.similarity import (
    NearestNeighbourIndex,
    _counts_dense,
    backend_available,
    intersection_counts,
)
from chemassay.contract.errors import require
from chemassay.runtime.threads import single_threaded_kernels, thread_map

INTDIV_EXACT_MAX = 100_000
"""Distinct molecules up to which IntDiv is exact on a CPU without a scheduler (5e9 pairs,
about a minute on two cores); above it, without a GPU or a cluster, it is estimated."""
INTDIV_SAMPLE_ROWS = 4096
"""Rows (molecules drawn with their multiplicities) of the IntDiv estimate."""
BLOCK = 1024
"""Rows per block: ``torch._int_mm`` is several times faster on outputs of <= ~1,024 columns."""


def unique_rows(packed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of a packed fingerprint matrix and how often each occurs."""
    if len(packed) == 0:
        return packed, np.zeros(0, dtype=np.int64)
    view = np.ascontiguousarray(packed).view(np.dtype((np.void, packed.dtype.itemsize * packed.shape[1])))
    _, first, counts = np.unique(view.ravel(), return_index=True, return_counts=True)
    return packed[first], counts.astype(np.int64)


# ---------------------------------------------------------------- SNN


class SnnReference:
    """A reference fingerprint set prepared once for the SNN of any number of query chunks.

    Duplicate reference rows are dropped (they cannot change a maximum). As in MOSES, two
    empty fingerprints have similarity 1 (the core's convention is 0, fixed up here).
    """

    def __init__(self, reference: np.ndarray, *, device: str = "cpu") -> None:
        self.packed, _ = unique_rows(np.ascontiguousarray(reference, dtype=np.uint64))
        self.device = device
        self.has_empty = bool((popcount(self.packed) == 0).any()) if len(self.packed) else False
        self._index = None
        self._device_rows = None

    def __len__(self) -> int:
        return len(self.packed)

    def index(self):
        if self._index is None:
            self._index = NearestNeighbourIndex(self.packed)
        return self._index

    def best(self, generated: np.ndarray, *, n_threads: int | None = None) -> np.ndarray:
        """Highest Tanimoto of each generated row to the reference (float64)."""
        if len(generated) == 0 or len(self) == 0:
            return np.zeros(len(generated) if len(self) == 0 else 0, dtype=np.float64)
        if self.device == "cpu":
            best = self.index().query(generated, n_threads=n_threads)
        else:
            best = self._best_on_device(generated)
        if self.has_empty:
            best[popcount(generated) == 0] = 1.0
        return best

    def _best_on_device(self, generated: np.ndarray) -> np.ndarray:
        torch = _torch()
        if self._device_rows is None:
            dense = torch.from_numpy(unpack_bits(self.packed)).to(self.device, torch.float32)
            self._device_rows = (dense, dense.sum(1))
        refs, ref_counts = self._device_rows
        return device_max_tanimoto(generated, refs, ref_counts, self.packed)


def device_max_tanimoto(generated: np.ndarray, refs, ref_counts, ref_packed: np.ndarray,
                        block_rows: int = 4096, block_cols: int = 65536) -> np.ndarray:
    """Max Tanimoto per generated row against ``refs`` (0/1 float32 rows on a torch device).

    Float32 products of 0/1 rows are exact integers; the float32 division is correctly
    rounded, so the row maximum picks a pair with the largest exact Tanimoto (distinct
    values ``c / u`` with ``u <= 2048`` differ by more than float32's spacing), whose value
    is then recomputed in float64 from its integer count, as on the CPU.
    """
    torch = _torch()
    device = refs.device
    queries = torch.from_numpy(unpack_bits(generated)).to(device, torch.float32)
    query_counts = queries.sum(1)
    best_arg = np.empty(len(generated), dtype=np.int64)
    for r0 in range(0, len(generated), block_rows):
        q = queries[r0:r0 + block_rows]
        a = query_counts[r0:r0 + block_rows, None]
        top = torch.full((len(q),), -1.0, device=device)
        arg = torch.zeros(len(q), dtype=torch.int64, device=device)
        for c0 in range(0, len(refs), block_cols):
            common = q @ refs[c0:c0 + block_cols].T
            union = a + ref_counts[None, c0:c0 + block_cols] - common
            sim = torch.where(union > 0, common / union.clamp_min(1), torch.zeros_like(common))
            value, where = sim.max(dim=1)
            better = value > top
            top = torch.where(better, value, top)
            arg = torch.where(better, where + c0, arg)
        best_arg[r0:r0 + len(q)] = arg.cpu().numpy()
    common = np.bitwise_count(generated & ref_packed[best_arg]).sum(axis=1).astype(np.int64)
    union = popcount(generated) + popcount(ref_packed[best_arg]) - common
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(union > 0, common / np.maximum(union, 1), 0.0)


# ---------------------------------------------------------------- IntDiv


def _torch():
    return require("torch", "torch", "the GPU path of the generation metrics")


def _block_sums(torch, common, a, b, wa, wb, powers, mirrored):
    """Weighted power sums of one block of exact counts (float64)."""
    c = common.to(torch.float64)
    union = a[:, None] + b[None, :] - c
    sim = c.div_(union).masked_fill_(union == 0, 1.0)  # two empty fingerprints: 1, as in MOSES
    out = {}
    block = sim
    for p in sorted(powers):
        block = sim if p == 1 else (block * sim if p == 2 and 1 in powers else sim.pow(p))
        out[p] = (block @ wb, wa @ block if mirrored else None)
    return out


@dataclass
class _Prepared:
    dense: np.ndarray
    counts: np.ndarray
    weights: np.ndarray


def _row_block_sums(prepared: _Prepared, i0: int, powers: tuple[int, ...], block: int = BLOCK):
    """Sums of row block ``i0`` against column blocks ``j >= i0`` (upper triangle)."""
    import torch

    n = len(prepared.counts)
    i1 = min(i0 + block, n)
    counts = torch.from_numpy(prepared.counts)
    w = torch.from_numpy(prepared.weights)
    rows = {p: torch.zeros(i1 - i0, dtype=torch.float64) for p in powers}
    cols = {p: torch.zeros(n, dtype=torch.float64) for p in powers}
    for j0 in range(i0, n, block):
        j1 = min(j0 + block, n)
        common = torch.from_numpy(_counts_dense(prepared.dense[i0:i1], prepared.dense[j0:j1], "torch-int8"))
        sums = _block_sums(torch, common, counts[i0:i1], counts[j0:j1], w[i0:i1], w[j0:j1], powers, j0 != i0)
        for p, (row_part, col_part) in sums.items():
            rows[p] += row_part
            if col_part is not None:
                cols[p][j0:j1] += col_part
    return i0, {p: rows[p].numpy() for p in powers}, {p: cols[p].numpy() for p in powers}


def pairwise_power_sums(
    fingerprints: np.ndarray, weights: np.ndarray | None = None, powers: tuple[int, ...] = (1, 2), *,
    device: str = "cpu", n_threads: int | None = None, scheduler: str | None = None, block: int = BLOCK,
) -> dict[int, np.ndarray]:
    """For each row ``i`` and power ``p``: ``sum_j w_j T_ij^p`` over all rows ``j``.

    Exact integer common-bit counts per block, Tanimoto and the weighted sums in float64;
    each unordered block once (added to both sides). CPU blocks run on ``n_threads``
    threads, ``device="cuda"`` on the GPU, ``scheduler`` on a Dask cluster.
    """
    w = np.ones(len(fingerprints)) if weights is None else np.asarray(weights, dtype=np.float64)
    n = len(fingerprints)
    sums = {p: np.zeros(n, dtype=np.float64) for p in powers}
    if n == 0:
        return sums
    packed = np.ascontiguousarray(fingerprints, dtype=np.uint64)
    if device != "cpu":
        return _device_power_sums(packed, w, powers, device)
    if not backend_available("torch-int8"):  # pragma: no cover - numpy fallback without torch
        return _numpy_power_sums(packed, w, powers)
    prepared = _Prepared(unpack_bits(packed), popcount(packed).astype(np.float64), w)
    starts = list(range(0, n, block))
    if scheduler:
        from chemassay.runtime.parallel import dask_client

        with dask_client(scheduler) as client:
            [data] = client.scatter([(packed, w)], broadcast=True)
            futures = [client.submit(_dask_block, data, powers, i0, block, pure=False) for i0 in starts]
            results = client.gather(futures)
    else:
        from chemassay.runtime.threads import thread_map

        results = thread_map(lambda i0: _row_block_sums(prepared, i0, powers, block), starts, n_threads=n_threads)
    for i0, rows, cols in results:
        for p in powers:
            sums[p][i0:i0 + len(rows[p])] += rows[p]
            sums[p] += cols[p]
    return sums


_WORKER_CACHE: dict[tuple[int, int], object] = {}


def _dask_block(data, powers, i0, block):
    """One IntDiv row block on a Dask worker (the unpacked set is kept per worker process)."""
    packed, w = data
    key = (id(packed), len(packed))
    prepared = _WORKER_CACHE.get(key)
    if prepared is None:
        _WORKER_CACHE.clear()
        prepared = _WORKER_CACHE[key] = _Prepared(unpack_bits(packed), popcount(packed).astype(np.float64), w)

    with single_threaded_kernels():
        return _row_block_sums(prepared, i0, powers, block)


def _numpy_power_sums(packed, w, powers):  # pragma: no cover - without torch

    n = len(packed)
    counts = popcount(packed).astype(np.float64)
    sums = {p: np.zeros(n) for p in powers}
    for i0 in range(0, n, BLOCK):
        common = intersection_counts(packed[i0:i0 + BLOCK], packed).astype(np.float64)
        union = counts[i0:i0 + BLOCK, None] + counts[None, :] - common
        with np.errstate(invalid="ignore", divide="ignore"):
            sim = np.where(union == 0, 1.0, common / np.where(union == 0, 1, union))
        for p in powers:
            sums[p][i0:i0 + BLOCK] = (sim**p) @ w
    return sums


def _device_power_sums(packed, w, powers, device, block: int = 8192):
    torch = _torch()
    dense = torch.from_numpy(unpack_bits(packed)).to(device, torch.float32)
    counts = dense.sum(1).to(torch.float64)
    weights = torch.from_numpy(w).to(device)
    n = len(packed)
    sums = {p: torch.zeros(n, dtype=torch.float64, device=device) for p in powers}
    for i0 in range(0, n, block):
        i1 = min(i0 + block, n)
        for j0 in range(i0, n, block):
            j1 = min(j0 + block, n)
            common = dense[i0:i1] @ dense[j0:j1].T  # exact integers in float32
            parts = _block_sums(torch, common, counts[i0:i1], counts[j0:j1], weights[i0:i1], weights[j0:j1],
                                powers, j0 != i0)
            for p, (row_part, col_part) in parts.items():
                sums[p][i0:i1] += row_part
                if col_part is not None:
                    sums[p][j0:j1] += col_part
    return {p: sums[p].cpu().numpy() for p in powers}


def internal_diversities(
    fingerprints: np.ndarray, weights: np.ndarray | None = None, *, device: str = "cpu",
    n_threads: int | None = None, scheduler: str | None = None, block: int = BLOCK,
) -> tuple[float, float]:
    """Exact ``(IntDiv, IntDiv2)`` of distinct rows with multiplicities, from one pass over the pairs."""
    w = np.ones(len(fingerprints)) if weights is None else np.asarray(weights, dtype=np.float64)
    total = float(np.sum(w))
    if total == 0:
        return math.nan, math.nan
    sums = pairwise_power_sums(fingerprints, w, (1, 2), device=device, n_threads=n_threads, scheduler=scheduler,
                               block=block)
    intdiv = 1.0 - float(np.sum(w * sums[1])) / total**2
    intdiv2 = 1.0 - float(np.sum(w * np.sqrt(sums[2] / total))) / total
    return intdiv, intdiv2


@dataclass
class IntDivEstimate:
    """Estimated ``IntDiv``/``IntDiv2`` with 95 % intervals and how they were obtained."""

    intdiv: float
    intdiv2: float
    intdiv_interval: tuple[float, float]
    intdiv2_interval: tuple[float, float]
    rows: int
    seed: int

    def describe(self) -> dict:
        return {
            "method": "estimate: seeded random molecules (drawn with their multiplicities), each compared "
                      "exactly with every molecule; 95 % normal-approximation intervals",
            "rows": self.rows, "seed": self.seed,
            "IntDiv": {"value": self.intdiv, "low": self.intdiv_interval[0], "high": self.intdiv_interval[1]},
            "IntDiv2": {"value": self.intdiv2, "low": self.intdiv2_interval[0], "high": self.intdiv2_interval[1]},
        }


def estimate_internal_diversities(
    fingerprints: np.ndarray, weights: np.ndarray | None = None, *, rows: int = INTDIV_SAMPLE_ROWS,
    seed: int = 0, n_threads: int | None = None,
) -> IntDivEstimate:
    """IntDiv and IntDiv2 estimated from ``rows`` seeded random molecules.

    Both metrics are means over molecules ``x`` (drawn with their multiplicities) of a row
    quantity: ``mean_y T(x, y)`` for IntDiv, ``sqrt(mean_y T(x, y)^2)`` for IntDiv2. Each
    sampled row is computed exactly against every molecule, so each estimate is an
    unbiased mean of i.i.d. exact row values; the interval is mean +- 1.96 standard errors.
    """
    w = np.ones(len(fingerprints)) if weights is None else np.asarray(weights, dtype=np.float64)
    total = float(np.sum(w))
    rng = np.random.default_rng(seed)
    picked = rng.choice(len(fingerprints), size=rows, replace=True, p=w / total)
    packed = np.ascontiguousarray(fingerprints, dtype=np.uint64)
    prepared = _Prepared(unpack_bits(packed), popcount(packed).astype(np.float64), w)
    sample = _Prepared(prepared.dense[picked], prepared.counts[picked], np.ones(rows))

    def block(i0: int):
        import torch

        i1 = min(i0 + BLOCK, rows)
        out = {1: np.zeros(i1 - i0), 2: np.zeros(i1 - i0)}
        wt = torch.from_numpy(w)
        a = torch.from_numpy(sample.counts[i0:i1])
        for j0 in range(0, len(packed), BLOCK):
            j1 = min(j0 + BLOCK, len(packed))
            common = torch.from_numpy(_counts_dense(sample.dense[i0:i1], prepared.dense[j0:j1], "torch-int8"))
            sums = _block_sums(torch, common, a, torch.from_numpy(prepared.counts[j0:j1]), None, wt[j0:j1],
                               (1, 2), False)
            out[1] += sums[1][0].numpy()
            out[2] += sums[2][0].numpy()
        return i0, out

    first = np.zeros(rows)
    second = np.zeros(rows)
    for i0, out in thread_map(block, list(range(0, rows, BLOCK)), n_threads=n_threads):
        first[i0:i0 + len(out[1])] = out[1] / total
        second[i0:i0 + len(out[2])] = np.sqrt(out[2] / total)
    half1 = 1.96 * float(np.std(first, ddof=1)) / math.sqrt(rows)
    half2 = 1.96 * float(np.std(second, ddof=1)) / math.sqrt(rows)
    m1, m2 = float(np.mean(first)), float(np.mean(second))
    return IntDivEstimate(1.0 - m1, 1.0 - m2, (1.0 - m1 - half1, 1.0 - m1 + half1),
                          (1.0 - m2 - half2, 1.0 - m2 + half2), rows, seed)
