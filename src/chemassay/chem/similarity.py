"""Bulk Tanimoto similarity on packed fingerprints: one-vs-many, matrices, max-similarity.

The hot loop of three suites (MOSES SNN and IntDiv, oMeS partial credit, nearest-neighbour
analyses). Tanimoto is ``c / (a + b - c)`` with ``c`` the common on-bits, computed in
float64 from exact integer counts, so values equal RDKit's ``BulkTanimotoSimilarity``
bit for bit; two empty fingerprints have similarity 0.0, as in RDKit.

The common-bit counts ``c`` for many pairs are a matrix product of 0/1 matrices. Backends:

``torch-int8``
    ``torch._int_mm`` on int8 0/1 matrices with int32 accumulation: exact (uses VNNI / AMX
    int8 where the CPU has them).
``torch-bf16``
    bfloat16 0/1 matrices, products accumulated in float32 by the CPU's matrix kernels, in
    slices of 256 bits so that every partial count (at most 256) is an integer bfloat16
    holds exactly; the slices are summed as integers. Fast on CPUs with native bfloat16
    (AMX-BF16, AVX512-BF16); emulated, and slow, elsewhere.
``torch-float32`` / ``numpy-float32``
    float32 matrix products (BLAS): exact because every partial sum is an integer below
    2**24.
``numpy-popcount``
    ``bitwise_count`` of ANDed words: no large temporary, slowest; the portable reference.

Every backend is verified on a self-check (exact counts up to the full 1024 bits) before
first use. ``backend="auto"`` (or ``$CHEMASSAY_SIMILARITY_BACKEND``) times the verified torch
backends once per process on a small block (a few milliseconds) and takes the fastest, so a
CPU with native bfloat16 gets that path and others get int8; without torch it takes
``numpy-float32``. The choice changes speed only, never a value.
Work is done in blocks of rows so memory stays bounded whatever the set sizes.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from functools import cache, lru_cache

import numpy as np

from chemassay.chem.fingerprints import popcount, unpack_bits

BACKENDS = ("torch-int8", "torch-bf16", "torch-float32", "numpy-float32", "numpy-popcount")
BF16_SLICE_BITS = 256  # bfloat16 represents every integer up to 256 exactly
DEFAULT_BLOCK_ROWS = 4096


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch


@cache
def backend_available(name: str) -> bool:
    """Whether ``name`` runs here and gives exact counts on a self-check."""
    if name not in BACKENDS:
        raise ValueError(f"unknown similarity backend {name!r}; choose from {BACKENDS}")
    if name.startswith("numpy"):
        return True
    if _torch() is None:
        return False
    rng = np.random.default_rng(0)
    a = rng.random((33, 1024)) < 0.3
    b = rng.random((40, 1024)) < 0.3
    a[0] = b[0] = True  # a full 1024-bit count, past every slice and rounding limit
    a[1, :300] = b[1, :300] = True
    expected = a.astype(np.int64) @ b.astype(np.int64).T
    try:
        got = _counts_dense(a.astype(np.uint8), b.astype(np.uint8), name)
    except Exception:
        return False
    return bool(np.array_equal(got, expected))


def resolve_backend(backend: str = "auto") -> str:
    """The backend ``auto`` stands for here (or ``backend`` itself, checked)."""
    if backend == "auto":
        forced = os.environ.get("CHEMASSAY_SIMILARITY_BACKEND")
        if forced:
            return resolve_backend(forced)
        fastest = _fastest_torch_backend()
        if fastest is not None:
            return fastest
        for name in BACKENDS:
            if backend_available(name):
                return name
    if not backend_available(backend):
        raise ValueError(f"similarity backend {backend!r} is not available here")
    return backend


@lru_cache(maxsize=1)
def _fastest_torch_backend() -> str | None:
    """The faster of the verified ``torch-int8`` / ``torch-bf16`` here, timed on one block."""
    candidates = [name for name in ("torch-int8", "torch-bf16") if backend_available(name)]
    if len(candidates) <= 1:
        return candidates[0] if candidates else None
    rng = np.random.default_rng(1)
    a = (rng.random((256, 1024)) < 0.05).astype(np.uint8)
    b = (rng.random((2048, 1024)) < 0.05).astype(np.uint8)
    seconds = {}
    for name in candidates:
        _counts_dense(a, b, name)  # first call: kernel selection, allocation
        started = time.perf_counter()
        _counts_dense(a, b, name)
        seconds[name] = time.perf_counter() - started
    return min(candidates, key=seconds.__getitem__)


def _counts_dense(a01: np.ndarray, b01: np.ndarray, backend: str) -> np.ndarray:
    """Common-bit counts of two 0/1 uint8 matrices ``(na, nbits) x (nb, nbits)``."""
    if backend == "torch-int8":
        torch = _torch()
        # 0/1 bytes read as int8 without a copy; _int_mm takes the transposed view as is
        # (copying a large b for every small block of a used to cost more than the product).
        ta = torch.from_numpy(np.ascontiguousarray(a01, dtype=np.uint8)).view(torch.int8)
        tb = torch.from_numpy(np.ascontiguousarray(b01, dtype=np.uint8)).view(torch.int8).T
        # _int_mm wants at least 17 rows on the left; pad tiny blocks.
        pad = max(0, 17 - ta.shape[0])
        if pad:
            ta = torch.cat([ta, torch.zeros((pad, ta.shape[1]), dtype=torch.int8)])
        out = torch._int_mm(ta, tb)
        return out[: a01.shape[0]].numpy()
    if backend == "torch-bf16":
        torch = _torch()
        ta = torch.from_numpy(np.ascontiguousarray(a01, dtype=np.uint8)).to(torch.bfloat16)
        tb = torch.from_numpy(np.ascontiguousarray(b01, dtype=np.uint8)).to(torch.bfloat16)
        out = torch.zeros((a01.shape[0], b01.shape[0]), dtype=torch.int32)
        for start in range(0, a01.shape[1], BF16_SLICE_BITS):
            stop = start + BF16_SLICE_BITS
            out += (ta[:, start:stop] @ tb[:, start:stop].T).to(torch.int32)
        return out.numpy()
    if backend == "torch-float32":
        torch = _torch()
        out = torch.from_numpy(a01).float() @ torch.from_numpy(b01).float().T
        return out.numpy().astype(np.int32)
    if backend == "numpy-float32":
        return (a01.astype(np.float32) @ b01.astype(np.float32).T).astype(np.int32)
    raise ValueError(backend)


class PreparedFingerprints:
    """Packed fingerprints with their popcounts and (lazily) a backend-ready dense form.

    Preparing the reference set once avoids re-unpacking it for every query block.
    """

    def __init__(self, packed: np.ndarray, backend: str = "auto") -> None:
        self.packed = np.ascontiguousarray(np.atleast_2d(packed), dtype=np.uint64)
        self.counts = popcount(self.packed)
        self.backend = resolve_backend(backend)
        self._dense: np.ndarray | None = None

    def __len__(self) -> int:
        return self.packed.shape[0]

    def dense(self) -> np.ndarray:
        if self._dense is None:
            self._dense = unpack_bits(self.packed)
        return self._dense

    def rows_at(self, indices: np.ndarray) -> PreparedFingerprints:
        """The fingerprints at ``indices`` (a gathered copy)."""
        part = PreparedFingerprints.__new__(PreparedFingerprints)
        part.packed = self.packed[indices]
        part.counts = self.counts[indices]
        part.backend = self.backend
        part._dense = None if self._dense is None else self._dense[indices]
        return part

    def rows(self, start: int, stop: int) -> PreparedFingerprints:
        part = PreparedFingerprints.__new__(PreparedFingerprints)
        part.packed = self.packed[start:stop]
        part.counts = self.counts[start:stop]
        part.backend = self.backend
        part._dense = None if self._dense is None else self._dense[start:stop]
        return part


def _prepare(x, backend: str) -> PreparedFingerprints:
    return x if isinstance(x, PreparedFingerprints) else PreparedFingerprints(x, backend)


def intersection_counts(a, b, *, backend: str = "auto") -> np.ndarray:
    """Common on-bit counts for every pair, shape ``(len(a), len(b))``, ``int32``."""
    pa = _prepare(a, backend)
    pb = _prepare(b, pa.backend)
    if pa.backend == "numpy-popcount":
        out = np.empty((len(pa), len(pb)), dtype=np.int32)
        for i in range(len(pa)):
            out[i] = np.bitwise_count(pb.packed & pa.packed[i]).sum(axis=1)
        return out
    return _counts_dense(pa.dense(), pb.dense(), pa.backend)


def _tanimoto_from_counts(common: np.ndarray, ca: np.ndarray, cb: np.ndarray) -> np.ndarray:
    union = ca[:, None] + cb[None, :] - common
    with np.errstate(invalid="ignore", divide="ignore"):
        sim = common / union.astype(np.float64)
    sim[union == 0] = 0.0
    return sim


def tanimoto_one_to_many(query: np.ndarray, refs, *, backend: str = "numpy-popcount") -> np.ndarray:
    """Tanimoto of one packed fingerprint to each row of ``refs`` (float64)."""
    q = np.atleast_2d(np.asarray(query, dtype=np.uint64))
    return tanimoto_matrix(q, refs, backend=backend)[0]


def tanimoto_blocks(
    a, b, *, block_rows: int = DEFAULT_BLOCK_ROWS, backend: str = "auto"
) -> Iterator[tuple[slice, np.ndarray]]:
    """Yield ``(rows_of_a, similarity_block)`` covering the full ``a x b`` matrix.

    Each block is ``(block_rows, len(b))`` float64, so memory stays bounded; use this for
    aggregates (means, maxima, thresholds) over sets too large for one matrix.
    """
    pa = _prepare(a, backend)
    pb = _prepare(b, pa.backend)
    for start in range(0, len(pa), block_rows):
        stop = min(start + block_rows, len(pa))
        part = pa.rows(start, stop)
        common = intersection_counts(part, pb)
        yield slice(start, stop), _tanimoto_from_counts(common, part.counts, pb.counts)


def tanimoto_matrix(a, b=None, *, backend: str = "auto", block_rows: int = DEFAULT_BLOCK_ROWS) -> np.ndarray:
    """Full Tanimoto matrix ``(len(a), len(b))`` in float64 (``b`` defaults to ``a``)."""
    pa = _prepare(a, backend)
    pb = pa if b is None else _prepare(b, pa.backend)
    out = np.empty((len(pa), len(pb)), dtype=np.float64)
    for rows, block in tanimoto_blocks(pa, pb, block_rows=block_rows):
        out[rows] = block
    return out


def _popcount_buckets(counts: np.ndarray) -> tuple[np.ndarray, list[tuple[int, int, int]]]:
    """Stable order of rows by popcount and the ``(popcount, start, stop)`` runs of it."""
    order = np.argsort(counts, kind="stable")
    ordered = counts[order]
    edges = np.flatnonzero(np.diff(ordered)) + 1
    starts = np.concatenate([[0], edges]).astype(np.int64)
    stops = np.concatenate([edges, [len(ordered)]]).astype(np.int64)
    return order, [(int(ordered[s]), int(s), int(e)) for s, e in zip(starts, stops, strict=True)]


def max_tanimoto(
    a, b, *, backend: str = "auto", block_rows: int = DEFAULT_BLOCK_ROWS, return_index: bool = False
):
    """For each row of ``a`` its highest Tanimoto to any row of ``b`` (and the argmax).

    Exact, with two shortcuts that cannot change the result. The rows of ``b`` are grouped
    by popcount: within a group Tanimoto ``c / (a + b - c)`` grows with the common-bit
    count ``c``, so only each group's largest ``c`` per query needs a division. And a group
    whose bound ``min(a, b) / max(a, b)`` cannot beat a query's best so far is skipped for
    that query. Memory is bounded by ``block_rows x block_rows`` counts whatever the set
    sizes; ties resolve to the lowest index of ``b``.
    """
    pa = _prepare(a, backend)
    pb = _prepare(b, pa.backend)
    best = np.zeros(len(pa), dtype=np.float64)
    index = np.zeros(len(pa), dtype=np.int64)
    if len(pb) == 0:
        return (best, index - 1) if return_index else best
    if len(pa) == 0:
        return (best, index) if return_index else best
    order, buckets = _popcount_buckets(pb.counts)
    ordered_b = PreparedFingerprints(pb.packed[order], pa.backend)
    if pa.backend != "numpy-popcount":  # unpack once; tiles below are views or gathers
        ordered_b.dense()
        pa.dense()
    index[:] = len(pb)  # "none yet": larger than any real index
    query_counts = pa.counts
    # Popcounts near the queries' own first: good early maxima prune the later groups.
    centre = float(np.median(query_counts))
    buckets.sort(key=lambda bucket: abs(bucket[0] - centre))
    for b_count, start, stop in buckets:
        lo, hi = np.minimum(query_counts, b_count), np.maximum(query_counts, b_count)
        with np.errstate(invalid="ignore", divide="ignore"):
            bound = np.where(hi > 0, lo / np.maximum(hi, 1), 0.0)
        # A tie with a lower index of b can still win the argmax, so keep bound == best.
        alive = np.flatnonzero(bound >= best) if return_index else np.flatnonzero(bound > best)
        if alive.size == 0:
            continue
        for row_start in range(0, alive.size, block_rows):
            rows = alive[row_start:row_start + block_rows]
            queries = pa.rows_at(rows)
            for col in range(start, stop, block_rows):
                col_stop = min(col + block_rows, stop)
                common = intersection_counts(queries, ordered_b.rows(col, col_stop))
                if return_index:
                    arg = common.argmax(axis=1)
                    top = common[np.arange(rows.size), arg].astype(np.int64)
                else:
                    top = common.max(axis=1).astype(np.int64)
                union = query_counts[rows] + b_count - top
                with np.errstate(invalid="ignore", divide="ignore"):
                    sim = np.where(union > 0, top / np.maximum(union, 1), 0.0)
                if return_index:
                    candidate = order[col + arg]
                    better = (sim > best[rows]) | ((sim == best[rows]) & (candidate < index[rows]))
                    index[rows[better]] = candidate[better]
                else:
                    better = sim > best[rows]
                best[rows[better]] = sim[better]
    return (best, index) if return_index else best


def set_num_threads(n: int) -> None:
    """Limit the threads the matrix-product backends use (torch and BLAS)."""
    torch = _torch()
    if torch is not None:
        torch.set_num_threads(n)
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(n)
    except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
        pass
