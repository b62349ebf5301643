"""AMORE retrieval: rank every candidate by embedding distance, score the true match.

Row ``i`` of the query set and row ``i`` of the candidate set are the same molecule (an
original and its augmentation). For each query, every candidate is ranked by its distance
(squared L2 by default, as AMORE's ``faiss.IndexFlatL2``; or cosine distance) and the rank
of the true match gives the metrics:

- ``acc@k`` = fraction of queries whose true match is among the ``k`` nearest candidates,
- ``mrr`` = mean over queries of ``1 / (rank + 1)`` with 0-based ranks (AMORE's
  ``sum(1/(i+1))/n`` over ``list(I).index(i)``).

**Ties.** Candidates at exactly the same distance as the true match are ordered by the
``ties`` policy of the shared ranking module (:func:`chemassay.report.ranking.rank_with_ties`):
``index`` (default) puts the candidate with the lower row index first, which is the order
FAISS's flat index returns and hence what the AMORE code measured; ``optimistic`` puts the
true match first; ``pessimistic`` puts it last. Exact ties are common for count vectors
(e.g. two stereoisomers have the same achiral fingerprint). Acc@k, MRR and the mean and
median rank are :func:`chemassay.report.ranking.rank_summary` of the 1-based ranks.

**Exactness.** Distances are screened in float32 (FAISS or BLAS, the fast part) and every
candidate whose float32 distance is within a rigorous rounding bound of the true match's
distance is recomputed exactly (float64 differences), so ranks are those of the exact
distances; identical candidate vectors are merged first so they always tie exactly.
Sparse count matrices are ranked with an exact float64 sparse product.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from chemassay.chem.similarity import backend_available
from chemassay.contract.errors import UserInputError, require
from chemassay.report.ranking import TIE_POLICIES, rank_summary, rank_with_ties, reciprocal_ranks

METRICS = ("l2", "cosine")
BACKENDS = ("auto", "faiss", "numpy", "faiss-search")
DEFAULT_KS = (1, 5)
_EPS32 = float(np.finfo(np.float32).eps)


def faiss_available() -> bool:
    """True when the ``faiss`` module imports."""
    try:
        import faiss  # noqa: F401
    except ImportError:
        return False
    return True


def resolve_backend(backend: str) -> str:
    """``auto`` → ``faiss`` when installed, else ``numpy``; ``faiss*`` without FAISS is an error."""
    if backend not in BACKENDS:
        raise UserInputError(f"unknown retrieval backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if backend == "auto":
        return "faiss" if faiss_available() else "numpy"
    if backend.startswith("faiss"):
        require("faiss", "faiss", f"the {backend} retrieval backend (or use --backend numpy)")
    return backend


def _is_sparse(matrix) -> bool:
    return hasattr(matrix, "tocsr") and hasattr(matrix, "nnz")


def _as_dense64(matrix) -> np.ndarray:
    if _is_sparse(matrix):
        return np.asarray(matrix.toarray(), dtype=np.float64)
    return np.asarray(matrix, dtype=np.float64)


def _normalise_rows(matrix):
    if _is_sparse(matrix):
        from scipy import sparse

        csr = sparse.csr_matrix(matrix, dtype=np.float64)
        norms = np.sqrt(np.asarray(csr.multiply(csr).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        return sparse.diags(1.0 / norms) @ csr
    dense = np.asarray(matrix, dtype=np.float64)
    norms = np.linalg.norm(dense, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return dense / norms


def _unique_rows(matrix) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the first occurrence of each distinct row, and each row's group."""
    if _is_sparse(matrix):
        csr = matrix.tocsr()
        csr.sum_duplicates()
        csr.sort_indices()
        keys = [
            csr.indices[csr.indptr[r]:csr.indptr[r + 1]].tobytes() + b"|" + csr.data[csr.indptr[r]:csr.indptr[r + 1]].tobytes()
            for r in range(csr.shape[0])
        ]
    else:
        contiguous = np.ascontiguousarray(matrix)
        keys = [row.tobytes() for row in contiguous]
    first: dict[bytes, int] = {}
    group = np.empty(len(keys), dtype=np.int64)
    representatives: list[int] = []
    for row, key in enumerate(keys):
        slot = first.get(key)
        if slot is None:
            slot = first[key] = len(representatives)
            representatives.append(row)
        group[row] = slot
    return np.asarray(representatives, dtype=np.int64), group


@dataclass
class RankResult:
    """0-based rank of the true match for every query, and how many candidates tied with it."""

    ranks: np.ndarray
    ties: np.ndarray
    true_distances: np.ndarray


def _exact_sq_distances(queries: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """Row-wise squared L2 distances ``|queries[k] - candidates[k]|^2`` in float64."""
    diff = queries - candidates
    return np.einsum("ij,ij->i", diff, diff)


class _Groups:
    """Rows of the candidate set grouped by identical vectors (merged so they tie exactly)."""

    def __init__(self, group: np.ndarray, n_groups: int) -> None:
        self.group = group
        self.sizes = np.bincount(group, minlength=n_groups).astype(np.int64)
        order = np.argsort(group, kind="stable")
        bounds = np.concatenate([[0], np.cumsum(self.sizes)])
        self.members = [order[bounds[g]:bounds[g + 1]] for g in range(n_groups)]

    def tied_rows(self, column: int, row: int) -> tuple[int, int]:
        """Rows of group ``column`` before and after ``row`` (``row`` itself excluded)."""
        members = self.members[column]
        before = int(np.searchsorted(members, row, side="left"))
        after = len(members) - int(np.searchsorted(members, row, side="right"))
        return before, after


def _finish_block(rows: np.ndarray, closer: np.ndarray, equal: np.ndarray, groups: _Groups,
                  ties: str, out: RankResult) -> None:
    """Turn per-column "strictly closer" / "exactly as close" masks into ranks for ``rows``."""
    less = closer.astype(np.int64) @ groups.sizes
    before = np.zeros(len(rows), dtype=np.int64)
    after = np.zeros(len(rows), dtype=np.int64)
    for offset, column in zip(*np.nonzero(equal), strict=True):
        b, a = groups.tied_rows(int(column), int(rows[offset]))
        before[offset] += b
        after[offset] += a
    out.ranks[rows] = rank_with_ties(less, before, after, ties) - 1
    out.ties[rows] = before + after


def _empty_result(n: int) -> RankResult:
    return RankResult(np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64), np.empty(n, dtype=np.float64))


def _int8_products_available() -> bool:
    return backend_available("torch-int8")


def _int8_dense(matrix) -> np.ndarray:
    """Dense uint8 copy of a sparse matrix of counts 0..127, columns padded to a multiple of 8."""
    dense = np.zeros((matrix.shape[0], -(-matrix.shape[1] // 8) * 8), dtype=np.uint8)
    dense[:, : matrix.shape[1]] = matrix.toarray()
    return dense


def _ranks_sparse(queries, database, ties: str, block: int) -> RankResult:
    q = sparse.csr_matrix(queries, dtype=np.float64)
    x = sparse.csr_matrix(database, dtype=np.float64)
    representatives, group = _unique_rows(x)
    groups = _Groups(group, len(representatives))
    xu = x[representatives]
    # Dimensions that are zero in both sets add nothing to any distance: drop them before
    # the dense products (hashed n-gram vectors use fewer than half of their 4,096 slots).
    used = np.union1d(q.indices, xu.indices)
    if len(used) < q.shape[1]:
        q, xu = q[:, used], xu[:, used]
    q_norms = np.asarray(q.multiply(q).sum(axis=1)).ravel()
    x_norms = np.asarray(xu.multiply(xu).sum(axis=1)).ravel()
    n = q.shape[0]
    out = _empty_result(n)
    # Integer counts whose squared norms stay below 2**24 give Gram entries (and every
    # partial sum) that float32 represents exactly, so BLAS sgemm is exact for them.
    integral = all(np.array_equal(m.data, np.round(m.data)) for m in (q, xu))
    exact32 = integral and max(q_norms.max(initial=0.0), x_norms.max(initial=0.0)) < 2.0**24
    # Small non-negative counts (fingerprints, n-grams) fit int8: the chemistry core's exact
    # int8 product (int32 accumulation; norms < 2**24 keep every sum in range) is ~3x sgemm.
    int8 = exact32 and _int8_products_available() and all(
        m.data.size == 0 or (m.data.min() >= 0 and m.data.max() <= 127) for m in (q, xu)
    )
    xu_dense32 = xu.toarray().astype(np.float32) if exact32 and not int8 else None
    xu_dense8 = _int8_dense(xu) if int8 else None
    for start in range(0, n, block):
        rows = np.arange(start, min(n, start + block))
        if xu_dense8 is not None:
            from chemassay.chem.similarity import _counts_dense

            gram = _counts_dense(_int8_dense(q[rows]), xu_dense8, "torch-int8").astype(np.float64)
        elif xu_dense32 is not None:
            gram = (q[rows].toarray().astype(np.float32) @ xu_dense32.T).astype(np.float64)
        else:
            # sparse x dense: cost nnz(candidates) x block, far cheaper than a sparse x
            # sparse product whose result is dense anyway (fingerprints share many bits).
            gram = np.asarray(xu @ np.ascontiguousarray(q[rows].toarray().T)).T
        distances = q_norms[rows, None] + x_norms[None, :] - 2.0 * gram
        np.maximum(distances, 0.0, out=distances)
        true = distances[np.arange(len(rows)), group[rows]]
        out.true_distances[rows] = true
        _finish_block(rows, distances < true[:, None], distances == true[:, None], groups, ties, out)
    return out


def _screen_distances(queries32: np.ndarray, candidates32: np.ndarray, backend: str) -> np.ndarray:
    """float32 squared L2 distances between two float32 matrices (FAISS or BLAS)."""
    if backend == "faiss":
        import faiss

        return faiss.pairwise_distances(queries32, candidates32)
    gram = queries32 @ candidates32.T
    q_norms = np.einsum("ij,ij->i", queries32, queries32)
    x_norms = np.einsum("ij,ij->i", candidates32, candidates32)
    gram *= -2.0
    gram += q_norms[:, None]
    gram += x_norms[None, :]
    return gram


def _ranks_dense(queries: np.ndarray, database: np.ndarray, ties: str, backend: str, block: int) -> RankResult:
    q64 = np.asarray(queries, dtype=np.float64)
    x64 = np.asarray(database, dtype=np.float64)
    representatives, group = _unique_rows(x64)
    groups = _Groups(group, len(representatives))
    xu = x64[representatives]
    # Centring on the candidates' mean shrinks the norms, and so the float32 rounding,
    # without changing any L2 distance.
    centre = xu.mean(axis=0)
    xu32 = np.ascontiguousarray((xu - centre).astype(np.float32))
    max_x_norm = float((xu32.astype(np.float64) ** 2).sum(1).max(initial=0.0))
    dim = q64.shape[1]
    n = q64.shape[0]
    out = _empty_result(n)
    for start in range(0, n, block):
        rows = np.arange(start, min(n, start + block))
        qc32 = np.ascontiguousarray((q64[rows] - centre).astype(np.float32))
        q_norms = (qc32.astype(np.float64) ** 2).sum(1)
        screen = _screen_distances(qc32, xu32, backend)
        true = _exact_sq_distances(q64[rows], x64[rows])
        out.true_distances[rows] = true
        # A bound on |float32 screen - exact distance| per query row: the Gram product's
        # rounding error is at most dim*eps*|q||x| <= dim*eps*(|q|^2+|x|^2)/2, plus float32
        # storage of the centred inputs, of the result and of the true distance.
        tolerance = ((dim + 16) * _EPS32 * (q_norms + max_x_norm) + 4 * _EPS32 * true + 1e-30).astype(np.float32)
        screen -= true.astype(np.float32)[:, None]
        closer = screen < -tolerance[:, None]
        np.abs(screen, out=screen)
        near_rows, near_columns = np.nonzero(screen <= tolerance[:, None])
        equal = np.zeros_like(closer)
        # Only candidates whose side of the true distance float32 cannot tell are
        # recomputed exactly, in chunks to bound memory.
        for lo in range(0, len(near_rows), 4096):
            r = near_rows[lo:lo + 4096]
            c = near_columns[lo:lo + 4096]
            exact = _exact_sq_distances(q64[rows[r]], xu[c])
            own = c == group[rows[r]]
            exact[own] = true[r[own]]
            closer[r, c] = exact < true[r]
            equal[r, c] = exact == true[r]
        equal[np.arange(len(rows)), group[rows]] = True
        _finish_block(rows, closer, equal, groups, ties, out)
    return out


def reference_ranks_faiss(queries, database, metric: str = "l2") -> np.ndarray:
    """Ranks exactly as AMORE's code gets them: ``IndexFlatL2`` over the candidates, one
    query at a time, ``k`` = all candidates, rank = position of the true match.

    Slow (a full sort per query); used to check :func:`true_match_ranks` against the
    reference procedure. Cosine uses ``IndexFlatIP`` on L2-normalised vectors.
    """
    faiss = require("faiss", "faiss", "the reference FAISS ranking")
    q = _as_dense64(_normalise_rows(queries) if metric == "cosine" else queries).astype(np.float32)
    x = _as_dense64(_normalise_rows(database) if metric == "cosine" else database).astype(np.float32)
    index = faiss.IndexFlatIP(x.shape[1]) if metric == "cosine" else faiss.IndexFlatL2(x.shape[1])
    index.add(np.ascontiguousarray(x))
    n = x.shape[0]
    ranks = np.empty(q.shape[0], dtype=np.int64)
    for row in range(q.shape[0]):
        _, found = index.search(np.ascontiguousarray(q[row:row + 1]), n)
        ranks[row] = int(np.flatnonzero(found[0] == row)[0])
    return ranks


def true_match_ranks(
    queries, database, *, metric: str = "l2", ties: str = "index", backend: str = "auto", block: int = 1024
) -> RankResult:
    """0-based rank of ``database[i]`` among all database rows for query ``queries[i]``.

    ``queries`` and ``database`` are ``(n, d)`` arrays (dense, or scipy sparse for count
    vectors) with the same ``n``; row ``i`` of each is the same molecule. ``metric`` is
    ``l2`` (squared Euclidean, AMORE's) or ``cosine``; ``ties`` one of
    :data:`TIE_POLICIES`; ``backend`` chooses the float32 screening engine (``faiss``,
    ``numpy``, ``auto``) or ``faiss-search`` for AMORE's own procedure. Every backend
    except ``faiss-search`` returns the ranks of the exact distances.
    """
    if metric not in METRICS:
        raise UserInputError(f"unknown metric {metric!r}; choose one of {', '.join(METRICS)}")
    if ties not in TIE_POLICIES:
        raise UserInputError(f"unknown tie policy {ties!r}; choose one of {', '.join(TIE_POLICIES)}")
    if queries.shape[0] != database.shape[0]:
        raise UserInputError(f"queries ({queries.shape[0]}) and candidates ({database.shape[0]}) differ in number of rows")
    if queries.shape[1] != database.shape[1]:
        raise UserInputError(f"query ({queries.shape[1]}) and candidate ({database.shape[1]}) embedding sizes differ")
    if queries.shape[0] == 0:
        empty = np.zeros(0, dtype=np.int64)
        return RankResult(empty, empty, np.zeros(0))
    engine = resolve_backend(backend)
    if engine == "faiss-search":
        ranks = reference_ranks_faiss(queries, database, metric)
        return RankResult(ranks, np.full(len(ranks), -1), np.full(len(ranks), np.nan))
    if metric == "cosine":
        queries, database = _normalise_rows(queries), _normalise_rows(database)
    if _is_sparse(queries) and _is_sparse(database):
        return _ranks_sparse(queries, database, ties, block)
    return _ranks_dense(_as_dense64(queries), _as_dense64(database), ties, engine, block)


def rank_metrics(ranks: np.ndarray, ks: tuple[int, ...] = DEFAULT_KS) -> dict[str, float]:
    """``acc@k`` for each k, ``mrr``, ``mean_rank`` and ``median_rank`` (1-based) of 0-based
    ranks: :func:`chemassay.report.ranking.rank_summary` of ``ranks + 1``."""
    return rank_summary(np.asarray(ranks, dtype=np.int64) + 1, ks)


def per_query_scores(ranks: np.ndarray, ks: tuple[int, ...] = DEFAULT_KS) -> dict[str, np.ndarray]:
    """Per query: ``acc@k`` (0/1), ``mrr`` (reciprocal rank) and ``mean_rank`` (1-based), whose
    means are the metrics of :func:`rank_metrics` (the per-item values of the intervals)."""
    one_based = np.asarray(ranks, dtype=np.int64) + 1
    values = {f"acc@{k}": (one_based <= k).astype(np.float64) for k in ks}
    values["mrr"] = reciprocal_ranks(one_based)
    values["mean_rank"] = one_based.astype(np.float64)
    return values


DIRECTIONS = ("o2a", "a2o")
"""``o2a``: originals query the augmented set (AMORE's MRR notebook); ``a2o``: augmented
molecules query the originals (AMORE's ``eval_faiss.count_res`` and "reversed" notebook)."""


@dataclass
class RetrievalScores:
    """Metrics and per-row ranks of one (originals, augmented) pair in both directions."""

    metrics: dict[str, float]
    ranks: dict[str, np.ndarray]
    ties: dict[str, np.ndarray]


def score_pair(
    original, augmented, *, metric: str = "l2", ties: str = "index", backend: str = "auto",
    ks: tuple[int, ...] = DEFAULT_KS,
) -> RetrievalScores:
    """AMORE metrics in both directions; keys ``o2a_acc@1``, ``a2o_mrr``, ... (see :data:`DIRECTIONS`)."""
    metrics: dict[str, float] = {}
    ranks: dict[str, np.ndarray] = {}
    tie_counts: dict[str, np.ndarray] = {}
    for direction, (queries, database) in (("o2a", (original, augmented)), ("a2o", (augmented, original))):
        result = true_match_ranks(queries, database, metric=metric, ties=ties, backend=backend)
        ranks[direction] = result.ranks
        tie_counts[direction] = result.ties
        for key, value in rank_metrics(result.ranks, ks).items():
            metrics[f"{direction}_{key}"] = value
        metrics[f"{direction}_tied_queries"] = int((result.ties > 0).sum())
    return RetrievalScores(metrics, ranks, tie_counts)
