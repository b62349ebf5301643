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
import threading
import time
from collections.abc import Iterator
from functools import cache, lru_cache

import numpy as np

from chemassay.chem.fingerprints import pack_bits, popcount, unpack_bits

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


def max_tanimoto(
    a, b, *, backend: str = "auto", block_rows: int = DEFAULT_BLOCK_ROWS, return_index: bool = False,
    n_threads: int | None = None,
):
    """For each row of ``a`` its highest Tanimoto to any row of ``b`` (and the argmax).

    Exact: the values (float64 ``c / (a + b - c)`` from integer counts) and the argmax (ties
    resolve to the lowest index of ``b``) are those of the full matrix. With a matrix-product
    backend most pairs are never counted exactly: see :class:`NearestNeighbourIndex` (an
    upper bound from 4-fold folded counts rules out whole chunks of ``b``). Memory is
    bounded by ``block_rows`` query rows at a time whatever the set sizes. ``n_threads``
    query blocks run at once (each on one kernel thread; default: the torch thread count).
    """
    index = NearestNeighbourIndex(b, backend=backend)
    return index.query(a, return_index=return_index, block_rows=block_rows, n_threads=n_threads)


FOLD = 4
"""Folding factor of the bound: bit ``i`` of an ``n``-bit fingerprint adds to dimension
``i % (n / FOLD)``; ``sum_j fold(x)_j fold(y)_j`` is at least the common-bit count."""
CHUNK_ROWS = 256
"""Reference rows (consecutive in popcount order) that share one bound per query."""
PRUNE_ROUNDS = 3
"""Rounds in which each query counts its most promising remaining chunk first."""
FOLD_COLUMNS = 1024
"""Reference rows per folded product: ``torch._int_mm`` runs ~4x faster on outputs of at
most ~1,024 columns than on 8,192 (measured on a 2-core AVX-512 VNNI CPU)."""


def _fold_counts(dense01: np.ndarray, fold: int = FOLD) -> np.ndarray:
    """``(n, bits)`` 0/1 rows summed in ``fold`` interleaved groups: ``(n, bits // fold)`` int8."""
    n, bits = dense01.shape
    return dense01.reshape(n, fold, bits // fold).sum(axis=1, dtype=np.int8)


def _folded_products(qf: np.ndarray, rf: np.ndarray) -> np.ndarray:
    """Exact integer products of folded rows (values <= FOLD): int8 ``_int_mm`` or float32."""
    if backend_available("torch-int8"):
        return _counts_dense(qf, rf, "torch-int8")
    return (qf.astype(np.float32) @ rf.astype(np.float32).T).astype(np.int32)


class NearestNeighbourIndex:
    """Reference fingerprints prepared for exact nearest-neighbour (max Tanimoto) queries.

    Prepared once (sorted by popcount, unpacked, folded), queried many times (streamed
    query chunks reuse it). For a query ``q`` with ``a`` bits and a reference ``r`` with
    ``b`` bits, the common count ``c`` is at most ``U = fold(q) . fold(r)`` (products of
    non-negative per-group counts dominate the per-bit products) and at most ``min(a, b)``;
    ``c / (a + b - c)`` grows with ``c`` and falls with ``b``, so a chunk of references with
    popcounts ``b_min..b_max`` and largest ``U`` cannot beat ``U' / (a + b_min - U')`` with
    ``U' = min(U, a, b_max)``. The folded product is a quarter of the exact one; the chunk
    whose bound is highest is then counted exactly for each query, and only chunks whose
    bound still exceeds that query's best so far are counted after it (on MOSES data about
    4 % of them). Float64 divisions are correctly rounded, hence monotone, so comparing
    bounds in floating point never drops a chunk that could win. With the
    ``numpy-popcount`` backend (no matrix product) every pair is counted.
    """

    def __init__(self, reference, *, backend: str = "auto", chunk_rows: int = CHUNK_ROWS) -> None:
        packed = np.ascontiguousarray(np.atleast_2d(reference), dtype=np.uint64)
        counts = popcount(packed)
        self.order = np.argsort(counts, kind="stable")
        self.prepared = PreparedFingerprints(packed[self.order], backend)
        self.backend = self.prepared.backend
        self.counts = self.prepared.counts
        self.chunk_rows = chunk_rows
        n = len(self.prepared)
        self.starts = np.arange(0, n, chunk_rows)
        self.stops = np.minimum(self.starts + chunk_rows, n)
        self.chunk_min = self.counts[self.starts] if n else np.zeros(0, dtype=np.int64)
        self.chunk_max = self.counts[self.stops - 1] if n else np.zeros(0, dtype=np.int64)
        self._runs: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.folded: np.ndarray | None = None
        if n and self.backend != "numpy-popcount":
            dense = self.prepared.dense()
            folded = _fold_counts(dense)
            pad = len(self.starts) * chunk_rows - n  # zero rows never raise a chunk's bound
            self.folded = np.concatenate([folded, np.zeros((pad, folded.shape[1]), np.int8)]) if pad else folded

    def __len__(self) -> int:
        return len(self.prepared)

    def query(
        self, queries, *, return_index: bool = False, block_rows: int = DEFAULT_BLOCK_ROWS,
        n_threads: int | None = None,
    ):
        """Highest Tanimoto of each query row to the reference (and its index there)."""
        pa = _prepare(queries, self.backend)
        n = len(pa)
        best = np.zeros(n, dtype=np.float64)
        index = np.zeros(n, dtype=np.int64)
        if len(self) == 0:
            return (best, index - 1) if return_index else best
        if n == 0:
            return (best, index) if return_index else best
        if self.folded is None:
            self._query_all_pairs(pa, best, index, block_rows)
        else:
            from chemassay.runtime.threads import thread_map

            block = max(1, min(block_rows, 1024))
            starts = list(range(0, n, block))

            def run(start: int) -> None:
                rows = np.arange(start, min(start + block, n))
                self._query_pruned(pa.rows_at(rows), best, index, rows, return_index)

            thread_map(run, starts, n_threads=n_threads)
        index = self.order[index]
        return (best, index) if return_index else best

    def _exact(self, part: PreparedFingerprints, lo: int, hi: int):
        """Exact Tanimoto (float64) of ``part`` against sorted reference rows ``lo:hi``."""
        common = intersection_counts(part, self.prepared.rows(lo, hi))
        union = part.counts[:, None] + self.counts[None, lo:hi] - common
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(union > 0, common / np.maximum(union, 1), 0.0)

    def _update(self, sim: np.ndarray, lo: int, rows: np.ndarray, best, index, return_index: bool) -> None:
        """Fold a block of exact similarities (sorted columns ``lo:``) into best/index.

        ``index`` holds sorted positions (``len(self)`` for "none yet"); with
        ``return_index`` a tie goes to the lowest *original* index of the reference.
        """
        arg = sim.argmax(axis=1)
        top = sim[np.arange(len(rows)), arg]
        candidate = arg + lo
        if return_index:
            original = self.order[lo:lo + sim.shape[1]]
            tied = np.where(sim == top[:, None], original[None, :], len(self.order))
            candidate = np.argmin(tied, axis=1) + lo
            none_yet = index[rows] >= len(self.order)
            current = np.where(none_yet, len(self.order), self.order[np.minimum(index[rows], len(self.order) - 1)])
            better = (top > best[rows]) | ((top == best[rows]) & (self.order[candidate] < current))
        else:
            better = top > best[rows]
        best[rows[better]] = top[better]
        index[rows[better]] = candidate[better]

    def _query_pruned(self, part: PreparedFingerprints, best, index, rows: np.ndarray, return_index: bool) -> None:
        n_chunks = len(self.starts)
        part.dense()
        qf = _fold_counts(part.dense())
        umax = np.empty((len(rows), n_chunks), dtype=np.int32)
        per_block = max(1, FOLD_COLUMNS // self.chunk_rows)
        for c0 in range(0, n_chunks, per_block):
            c1 = min(c0 + per_block, n_chunks)
            products = _folded_products(qf, self.folded[c0 * self.chunk_rows:c1 * self.chunk_rows])
            umax[:, c0:c1] = products.reshape(len(rows), c1 - c0, self.chunk_rows).max(axis=2)
        a = part.counts[:, None]
        bounded = np.minimum(np.minimum(umax, a), self.chunk_max[None, :])
        denominator = a + self.chunk_min[None, :] - bounded
        with np.errstate(invalid="ignore", divide="ignore"):
            bound = np.where(denominator > 0, bounded / np.maximum(denominator, 1), 0.0)
        local_best = np.zeros(len(rows), dtype=np.float64)
        local_index = np.full(len(rows), len(self.order), dtype=np.int64)  # "none yet"
        local_rows = np.arange(len(rows))
        # Each query's most promising chunks first (a few rounds), so that its best so far
        # is near its final best before the sweep over every chunk still above it.
        pending = bound.copy()
        for round_number in range(PRUNE_ROUNDS):
            pick = pending.argmax(axis=1)
            top = pending[local_rows, pick]
            chosen = (top >= local_best) if return_index else (top > local_best)
            if round_number == 0:
                chosen[:] = True
            chosen &= top >= 0
            if not chosen.any():
                break
            pending[local_rows[chosen], pick[chosen]] = -1.0
            for chunk in np.unique(pick[chosen]):
                members = np.flatnonzero(chosen & (pick == chunk))
                self._exact_update(part, members, int(chunk), local_best, local_index, return_index)
        # A tie with a lower index can still win the argmax, so keep bound == best then.
        alive = (pending >= local_best[:, None]) if return_index else (pending > local_best[:, None])
        for chunk in np.flatnonzero(alive.any(axis=0)):
            members = np.flatnonzero(alive[:, chunk])
            self._exact_update(part, members, int(chunk), local_best, local_index, return_index)
        best[rows] = local_best
        index[rows] = np.minimum(local_index, len(self.order) - 1)

    def _exact_update(self, part, members: np.ndarray, chunk: int, best, index, return_index: bool) -> None:
        """Count chunk ``chunk`` exactly for the query rows ``members`` and fold it in."""
        lo, hi = int(self.starts[chunk]), int(self.stops[chunk])
        queries = part.rows_at(members)
        if return_index:
            self._update(self._exact(queries, lo, hi), lo, members, best, index, return_index=True)
            return
        # Within a run of equal reference popcounts Tanimoto grows with the common count:
        # one division per run, on the run's largest count.
        common = intersection_counts(queries, self.prepared.rows(lo, hi))
        run_starts, run_counts = self.chunk_runs(chunk)
        top = np.maximum.reduceat(common, run_starts, axis=1).astype(np.int64)
        union = queries.counts[:, None] + run_counts[None, :] - top
        with np.errstate(invalid="ignore", divide="ignore"):
            sim = np.where(union > 0, top / np.maximum(union, 1), 0.0).max(axis=1)
        better = sim > best[members]
        best[members[better]] = sim[better]

    def chunk_runs(self, chunk: int) -> tuple[np.ndarray, np.ndarray]:
        """Offsets (within the chunk) where the reference popcount changes, and the popcounts."""
        runs = self._runs.get(chunk)
        if runs is None:
            counts = self.counts[int(self.starts[chunk]):int(self.stops[chunk])]
            offsets = np.concatenate([[0], np.flatnonzero(np.diff(counts)) + 1])
            runs = (offsets, counts[offsets])
            self._runs[chunk] = runs
        return runs

    def _query_all_pairs(self, pa: PreparedFingerprints, best, index, block_rows: int) -> None:
        index[:] = len(self.order)
        all_rows = np.arange(len(pa))
        for r0 in range(0, len(pa), block_rows):
            rows = all_rows[r0:r0 + block_rows]
            part = pa.rows_at(rows)
            for lo in range(0, len(self), block_rows):
                hi = min(lo + block_rows, len(self))
                self._update(self._exact(part, lo, hi), lo, rows, best, index, return_index=True)
        index[:] = np.minimum(index, len(self.order) - 1)


# ------------------------------------------------------------------------------ streamed references

PROJECTION_DIMS = 256
"""Dimensions of the screening projection: each bit is summed into one of these groups."""
PROJECTION_GROUP_BITS = 16
"""Most bits in one group, so a projected count fits an int8 weight (<= 127) with room."""
SCREEN_QUERY_ROWS = 4096
"""Query rows per prepacked screening block (the product's output columns); 4,096 ran ~15 %
faster than 1,024 on MOSES (fewer calls: a chunk's popcount runs are ~1,000 references)."""
SCREEN_REFERENCE_ROWS = 4096
"""Reference rows per screening product (all of one popcount)."""
SEED_REFERENCES = 512
"""References (spread over the popcounts) counted exactly for every query before the first screen."""
EXACT_PAIRS = 1 << 18
"""Candidate pairs counted exactly per gather (bounds the temporary to ~130 MB at 2,048 bits)."""


def bit_groups(frequencies: np.ndarray, dims: int = PROJECTION_DIMS,
               max_bits: int = PROJECTION_GROUP_BITS) -> np.ndarray:
    """A partition of the bits into ``dims`` groups of similar total frequency: the group of each bit.

    Bits are placed most frequent first, each into the group of smallest total frequency that
    still has room (at most ``max_bits`` bits), ties to the lowest group: frequent bits end up
    (nearly) alone and rare ones share groups, so the projected product ``sum_g P(q)_g P(r)_g``
    (at least the common-bit count for any partition) overshoots it far less than a fold by
    ``bit % dims``, whose groups mix common bits with others.
    """
    import heapq

    nbits = len(frequencies)
    dims = max(1, min(dims, nbits))
    max_bits = max(max_bits, -(-nbits // dims))
    order = np.argsort(-np.asarray(frequencies, dtype=np.float64), kind="stable")
    heap = [(0.0, group) for group in range(dims)]
    sizes = np.zeros(dims, dtype=np.int64)
    full: list[tuple[float, int]] = []
    group_of = np.empty(nbits, dtype=np.int64)
    for bit in order:
        mass, group = heapq.heappop(heap)
        while sizes[group] >= max_bits:
            full.append((mass, group))
            mass, group = heapq.heappop(heap)
        group_of[bit] = group
        sizes[group] += 1
        heapq.heappush(heap, (mass + float(frequencies[bit]), group))
    return group_of


class _Projection:
    """Sums a fingerprint's bits per group: packed rows -> ``(n, dims)`` uint8 counts."""

    def __init__(self, group_of: np.ndarray) -> None:
        _, group_of = np.unique(group_of, return_inverse=True)  # no empty group (reduceat needs that)
        self.dims = int(group_of.max()) + 1
        self.perm = np.argsort(group_of, kind="stable")
        sizes = np.bincount(group_of, minlength=self.dims)
        self.starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        self.max_count = int(sizes.max())

        self.group_of = group_of
        self._weights = None

    def __call__(self, packed: np.ndarray, rows: int = 16384, engine: str = "numpy") -> np.ndarray:
        """The projected counts; ``engine="onednn"``: as an int8 product with the 0/1 group matrix."""
        out = np.empty((len(packed), self.dims), dtype=np.uint8)
        for start in range(0, len(packed), rows):
            dense = unpack_bits(packed[start:start + rows])
            if engine == "onednn" and len(dense):
                out[start:start + rows] = self._onednn(dense)
            else:
                out[start:start + rows] = np.add.reduceat(dense[:, self.perm], self.starts, axis=1, dtype=np.uint8)
        return out

    def _onednn(self, dense: np.ndarray) -> np.ndarray:
        torch = _torch()
        if self._weights is None:
            member = np.zeros((self.dims, len(self.group_of)), dtype=np.int8)
            member[self.group_of, np.arange(len(self.group_of))] = 1
            self._weights = (torch.ops.onednn.qlinear_prepack(torch.from_numpy(member), [16384, member.shape[1]]),
                             torch.ones(self.dims), torch.zeros(self.dims, dtype=torch.long))
        weights, scales, zeros = self._weights
        return torch.ops.onednn.qlinear_pointwise(torch.from_numpy(dense), 1.0, 0, weights, scales, zeros, None,
                                                  1.0, 0, None, "none", [], "").numpy()


def required_common(best: np.ndarray, a: np.ndarray, b: int, floor: float = 0.0) -> np.ndarray:
    """Per query, the least common-bit count ``c`` with ``c / (a + b - c)`` (float64, as reported)
    above ``best`` and at least ``floor`` against a reference of ``b`` bits; a count above
    ``min(a, b)`` (no such reference can exist) is returned as ``IMPOSSIBLE``."""
    a = np.asarray(a, dtype=np.int64)
    best = np.asarray(best, dtype=np.float64)
    total = a + b
    limit = np.minimum(a, b)

    def passes(c: np.ndarray) -> np.ndarray:
        union = total - c
        with np.errstate(divide="ignore", invalid="ignore"):
            value = np.where(union > 0, c / np.maximum(union, 1), 0.0)
        return (value > best) & (value >= floor) & (c <= limit)

    # the real threshold is tau (a + b) / (1 + tau); start two below it and step up
    tau = np.maximum(best, floor)
    c = np.clip(np.floor(tau * total / (1.0 + tau)).astype(np.int64) - 2, 0, None)
    below = (c > 0) & passes(c)  # cannot happen (the estimate is within 1): be safe anyway
    while below.any():
        c = np.where(below, c - 1, c)
        below = (c > 0) & passes(c) & below
    for _ in range(8):
        short = ~passes(c) & (c <= limit)
        if not short.any():
            break
        c = c + short
    else:  # pragma: no cover - the float estimate is within a few counts
        while (short := ~passes(c) & (c <= limit)).any():
            c = c + short
    return np.where(c > limit, IMPOSSIBLE, c)


IMPOSSIBLE = 1 << 20


@cache
def onednn_screen_available() -> bool:
    """Whether oneDNN's int8 product (``torch.ops.onednn.qlinear_pointwise``: AMX or VNNI)
    runs here and gives exact screens on a self-check."""
    torch = _torch()
    if torch is None or not hasattr(torch.ops, "onednn"):
        return False
    try:
        rng = np.random.default_rng(2)
        x = rng.integers(0, 17, (40, 256)).astype(np.uint8)
        w = rng.integers(0, 17, (33, 256)).astype(np.int8)
        x[0] = 16
        w[0] = 16  # a product of 65,536, past every 8- and 16-bit limit
        need = rng.integers(1, 2000, 33)
        need[1] = IMPOSSIBLE
        bits = (rng.random((50, 2048)) < 0.3).astype(np.uint8)
        bits[0] = 1
        projection = _Projection(np.arange(2048) % 128)
        if not np.array_equal(projection(pack_bits(bits), engine="onednn"), projection(pack_bits(bits))):
            return False
        got = _Screen(w, "onednn").survivors(x, need)
        product = x.astype(np.int64) @ w.astype(np.int64).T
        expected = np.nonzero(product >= need[None, :])
        return bool(np.array_equal(got[0], expected[0]) and np.array_equal(got[1], expected[1]))
    except Exception:
        return False


class _Screen:
    """One block of projected queries, ready for ``products >= need`` against reference rows.

    ``onednn``: the queries are int8 weights prepacked once; the product, minus ``need - 1``
    as a bias, comes back as saturated uint8 (one byte per pair, zero where the pair is
    ruled out). ``torch-float32`` / ``numpy-float32``: exact float32 products compared with
    ``need``.
    """

    def __init__(self, projected: np.ndarray, engine: str) -> None:
        self.engine = engine
        self.rows = len(projected)
        if engine == "onednn":
            torch = _torch()
            self.weights = torch.ops.onednn.qlinear_prepack(
                torch.from_numpy(np.ascontiguousarray(projected, dtype=np.int8)),
                [SCREEN_REFERENCE_ROWS, projected.shape[1]])
            self.scales = torch.ones(self.rows, dtype=torch.float32)
            self.zeros = torch.zeros(self.rows, dtype=torch.long)
        elif engine == "torch-float32":
            self.weights = _torch().from_numpy(projected.astype(np.float32))
        else:
            self.weights = projected.astype(np.float32)

    def survivors(self, x: np.ndarray, need: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(reference rows, query rows) of the pairs whose product reaches ``need`` (per query)."""
        if self.engine == "onednn":
            torch = _torch()
            bias = torch.from_numpy((1 - np.minimum(need, IMPOSSIBLE)).astype(np.float32))
            out = torch.ops.onednn.qlinear_pointwise(
                torch.from_numpy(np.ascontiguousarray(x, dtype=np.uint8)), 1.0, 0, self.weights, self.scales,
                self.zeros, bias, 1.0, 0, None, "none", [], "").numpy()
        elif self.engine == "torch-float32":
            torch = _torch()
            products = torch.from_numpy(x.astype(np.float32)) @ self.weights.T
            out = (products >= torch.from_numpy(need.astype(np.float32))).numpy().view(np.uint8)
        else:
            out = (x.astype(np.float32) @ self.weights.T >= need.astype(np.float32)).view(np.uint8)
        return _nonzero_bytes(out)


def _nonzero_bytes(out: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row and column indices of the non-zero bytes of a uint8 matrix (sparse ones: fast): the
    rows with any first (one reduction), then the positions within those rows."""
    torch = _torch()
    if torch is not None:
        rows = np.flatnonzero(torch.from_numpy(out).amax(dim=1).numpy())
    else:
        rows = np.flatnonzero(out.max(axis=1))
    if len(rows) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    if out.shape[1] % 8:
        at, column = np.nonzero(out[rows])
        return rows[at], column
    words = out.view(np.uint64)  # eight pairs per word: a word test rules out most of a row at once
    at, word = np.nonzero(words[rows] != 0)
    sub, byte = np.nonzero(out.reshape(len(out), -1, 8)[rows[at], word])
    return rows[at[sub]], word[sub] * 8 + byte


def _exact_pairs(qpacked, qcounts, rpacked, rcounts, qi: np.ndarray, rj: np.ndarray) -> np.ndarray:
    """Exact Tanimoto (float64) of the pairs ``(qi, rj)`` from packed words."""
    out = np.empty(len(qi), dtype=np.float64)
    for start in range(0, len(qi), EXACT_PAIRS):
        i, j = qi[start:start + EXACT_PAIRS], rj[start:start + EXACT_PAIRS]
        common = np.bitwise_count(qpacked[i] & rpacked[j]).sum(axis=1, dtype=np.int64)
        union = qcounts[i] + rcounts[j] - common
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start:start + len(i)] = np.where(union > 0, common / np.maximum(union, 1), 0.0)
    return out


class StreamingNearest:
    """Each query's highest Tanimoto to references that arrive in chunks (the leakage audit).

    The queries are fixed and prepared once; :meth:`update` folds in one chunk of references
    and returns every query's best so far. Exact: each value is ``c / (a + b - c)`` in float64
    from integer counts (RDKit's value) of a real query/reference pair, and after the last
    chunk it is the true maximum over all of them (0.0 for an empty fingerprint or none).

    How: a pair can beat a query's best so far only if its common-bit count reaches the least
    count that would (:func:`required_common`, from the best, ``a`` and ``b``). Each bit is
    summed into one of 256 groups balanced by the queries' bit frequencies
    (:func:`bit_groups`); the product of two such projections is at least the common count,
    so every pair whose projected product falls short is ruled out by an int8 product of 256
    dimensions (one byte of output per pair; oneDNN's AMX/VNNI kernels where torch has them).
    References run in popcount order, ``b`` fixed per product; the few pairs left (about
    1 in 10,000 on MOSES once the best values are typical) are counted exactly from the
    packed words. The best values carry over from chunk to chunk, which is what makes later
    chunks cheap; a first chunk starts from an exact pass over 512 of its references.
    ``backend="numpy-popcount"`` counts every pair (the slow reference).

    An instance is used by one thread at a time; pickling keeps the queries and best values
    (the prepared blocks are rebuilt where it is unpickled).
    """

    def __init__(self, queries, *, backend: str = "auto", dims: int = PROJECTION_DIMS,
                 block_rows: int = SCREEN_QUERY_ROWS) -> None:
        self.packed = np.ascontiguousarray(np.atleast_2d(queries), dtype=np.uint64)
        self.counts = popcount(self.packed)
        self.backend = resolve_backend(backend)
        self.dims = dims
        self.block_rows = block_rows
        self.best = np.zeros(len(self.packed), dtype=np.float64)
        self.seeded = False
        self._prepared: tuple | None = None
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.packed)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_prepared"] = None
        del state["_lock"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def engine(self) -> str:
        """The screening product used: ``onednn``, ``torch-float32``, ``numpy-float32`` or ``all-pairs``."""
        if self.backend == "numpy-popcount":
            return "all-pairs"
        if self.backend in ("torch-int8", "torch-bf16") and onednn_screen_available():
            return "onednn"
        return "torch-float32" if self.backend.startswith("torch") else "numpy-float32"

    def _prepare(self) -> tuple:
        if self._prepared is None:
            nbits = self.packed.shape[1] * 64
            frequencies = np.zeros(nbits, dtype=np.float64)
            for start in range(0, len(self), 16384):
                frequencies += unpack_bits(self.packed[start:start + 16384]).sum(axis=0)
            dims = max(self.dims, -(-nbits // 120))  # at most 120 bits a group: counts fit int8
            projection = _Projection(bit_groups(frequencies, dims, min(PROJECTION_GROUP_BITS, 120)))
            engine = self.engine()
            blocks = []
            for start in range(0, len(self), self.block_rows):
                stop = min(start + self.block_rows, len(self))
                blocks.append((start, stop, _Screen(projection(self.packed[start:stop], engine=engine), engine)))
            self._prepared = (projection, blocks)
        return self._prepared

    def update(self, reference) -> np.ndarray:
        """Fold in the reference fingerprints ``reference``; a copy of every query's best so far.

        Calls from several threads run one at a time (each sees the others' best values)."""
        with self._lock:
            return self._update(reference)

    def _update(self, reference) -> np.ndarray:
        ref = np.ascontiguousarray(np.atleast_2d(reference), dtype=np.uint64)
        if len(ref) == 0 or len(self) == 0:
            return self.best.copy()
        if ref.shape[1] != self.packed.shape[1]:
            raise ValueError(f"reference fingerprints have {ref.shape[1] * 64} bits, the queries {self.packed.shape[1] * 64}")
        rcounts = popcount(ref)
        order = np.argsort(rcounts, kind="stable")
        ref, rcounts = ref[order], rcounts[order]
        if self.backend == "numpy-popcount":
            self._all_pairs(ref, rcounts)
            return self.best.copy()
        if not self.seeded:
            self._seed(ref, rcounts)
        projection, blocks = self._prepare()
        projected = projection(ref, engine=self.engine())
        runs = np.concatenate([[0], np.flatnonzero(np.diff(rcounts)) + 1, [len(ref)]])
        tiles = [(int(lo), int(min(lo + SCREEN_REFERENCE_ROWS, hi)))
                 for lo, hi in zip(runs[:-1], runs[1:], strict=True) for lo in range(lo, hi, SCREEN_REFERENCE_ROWS)]
        # References outer, query blocks inner: one threshold pass per tile over every query,
        # and each tile sees the best values that the tiles before it left.
        for lo, hi in tiles:
            need = required_common(self.best, self.counts, int(rcounts[lo]))
            x = projected[lo:hi]
            for q0, q1, screen in blocks:
                part = need[q0:q1]
                if (part >= IMPOSSIBLE).all():
                    continue
                rj, qi = screen.survivors(x, part)
                if len(qi):
                    qi = qi + q0
                    values = _exact_pairs(self.packed, self.counts, ref, rcounts, qi, rj + lo)
                    np.maximum.at(self.best, qi, values)
        return self.best.copy()

    def _seed(self, ref: np.ndarray, rcounts: np.ndarray) -> None:
        """Exact best over a spread of the references (every popcount region), for a starting best."""
        pick = np.unique(np.linspace(0, len(ref) - 1, min(SEED_REFERENCES, len(ref))).astype(np.int64))
        sample = PreparedFingerprints(ref[pick], self.backend)
        for rows, block in tanimoto_blocks(self.packed, sample, block_rows=DEFAULT_BLOCK_ROWS, backend=self.backend):
            np.maximum(self.best[rows], block.max(axis=1), out=self.best[rows])
        self.seeded = True

    def _all_pairs(self, ref: np.ndarray, rcounts: np.ndarray) -> None:
        for start in range(0, len(self), 256):
            stop = min(start + 256, len(self))
            common = np.stack([np.bitwise_count(ref & q).sum(axis=1, dtype=np.int64) for q in self.packed[start:stop]])
            union = self.counts[start:stop, None] + rcounts[None, :] - common
            with np.errstate(invalid="ignore", divide="ignore"):
                values = np.where(union > 0, common / np.maximum(union, 1), 0.0)
            np.maximum(self.best[start:stop], values.max(axis=1), out=self.best[start:stop])


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
