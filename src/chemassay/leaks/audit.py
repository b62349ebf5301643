"""The leakage audit: every test item of every declared task against a model's training data.

The test side is indexed once (:class:`TestIndex`: the distinct test items of each kind, their
exact keys and packed fingerprints). The training side streams in chunks of lines
(:mod:`chemassay.leaks.training`); each chunk is parsed, keyed and fingerprinted, its keys
are looked up among the test keys, and every test item's highest Tanimoto similarity to the
chunk is computed exactly with :class:`chemassay.chem.similarity.StreamingNearest` (the test
items are its queries, prepared once per process; each chunk is screened pair by pair with one
int8 product of 256-group projections against the best values so far, and only the few pairs
left are counted bit by bit). A chunk's result is a few keys and one float per test item (at
least the chunk's best, never above the true best), merged into the running answer by taking
minima (first training line) and maxima (similarity), so memory stays one chunk's molecules plus the test index whatever the
training size, and the chunks run in worker processes (``n_jobs``) or on a Dask cluster
(``scheduler``) in any order with the same answer.
"""

from __future__ import annotations

import json
import os
import pickle
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, wait
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
import rdkit

from chemassay.chem.similarity import StreamingNearest
from chemassay.contract.errors import UserInputError
from chemassay.leaks.keys import (
    MOLECULE,
    MOLECULE_FINGERPRINT,
    MOLECULE_KEYS,
    REACTION,
    REACTION_FINGERPRINT,
    REACTION_KEYS,
    SCAFFOLD,
    keyed,
    kind_of,
)
from chemassay.leaks.testsets import TestSet, ids_sha256
from chemassay.leaks.training import CHUNK_LINES, TrainingChunk, check_files, iter_chunks
from chemassay.runtime.files import atomic_write_text, sha256_file
from chemassay.runtime.parallel import (
    Failure,
    _new_pool,
    _stop_pool,
    dask_client,
    effective_jobs,
    parallel_map,
)

FORMAT = 1
DEFAULT_THRESHOLD = 0.7
"""Tanimoto at or above which a test item's nearest training item is a near duplicate (see
docs/leakage.md: a one-heavy-atom change of a MOSES test molecule has Morgan Tanimoto 0.67-0.84
to the original, 10th-90th percentile, and none of 175,574 such changes reaches 0.95)."""
UNREADABLE_LISTED = 100
"""Unreadable lines listed (line number and reason) per training file; all are counted."""
TIE = 1e-9
"""Tolerance of "at or above the threshold": a Tanimoto equal to it (``7 / 10`` against 0.7) counts."""
HISTOGRAM_EDGES = tuple(round(0.05 * i, 2) for i in range(21))
QUANTILES = (0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99)
AT_LEAST = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0)
PRIMARY_KEY = {MOLECULE: "inchikey", REACTION: "reaction"}
STEREO_FREE_KEY = {MOLECULE: "skeleton"}


# ------------------------------------------------------------------------------ test side


@dataclass
class KindIndex:
    """The distinct test items of one kind: their texts, which keys every training chunk looks
    up (``lookups``), which test items each key belongs to (``owners``), fingerprints."""

    kind: str
    texts: list[str]
    ok: np.ndarray
    errors: dict[int, str]
    fingerprints: np.ndarray
    lookups: dict[str, frozenset[str]]
    owners: dict[str, dict[str, list[int]]]
    scaffolds: bool = False
    acyclic: np.ndarray | None = None
    graph_keys: frozenset[int] | None = None
    """The test molecules' graph keys: a training molecule whose graph is not among them gets no
    InChIKey (``chemassay.leaks.keys``, the InChIKey filter); ``None``: no filter."""


@dataclass
class TestIndex:
    """Every declared test set and the distinct items behind them, by kind (built once)."""

    sets: list[TestSet]
    positions: list[np.ndarray]
    kinds: dict[str, KindIndex]
    near: bool = True

    def for_workers(self) -> TestIndex:
        """The part a chunk worker needs (no test sets, no owners lists)."""
        kinds = {kind: KindIndex(k.kind, [], k.ok, {}, k.fingerprints, k.lookups, {}, k.scaffolds,
                                 graph_keys=k.graph_keys)
                 for kind, k in self.kinds.items()}
        return TestIndex([], [], kinds, self.near)


def build_index(sets: Sequence[TestSet], *, near: bool = True, n_jobs: int = 1) -> TestIndex:
    """Index the test sets: distinct items per kind, keyed and fingerprinted once."""
    texts: dict[str, dict[str, int]] = {}
    positions = []
    for test_set in sets:
        table = texts.setdefault(test_set.kind, {})
        positions.append(np.array([table.setdefault(item, len(table)) for item in test_set.items], dtype=np.int64))
    kinds: dict[str, KindIndex] = {}
    for kind, table in texts.items():
        items = list(table)
        scaffolds = near and any(s.scaffolds for s in sets if s.kind == kind)  # --exact-only: no scaffolds
        step = 2000
        pieces = [items[i:i + step] for i in range(0, len(items), step)]
        results = parallel_map(_key_piece, [(kind, piece, scaffolds, near) for piece in pieces], n_jobs=n_jobs,
                               chunk_size=1, description=f"indexing test {kind}s", show_progress=False)
        ok = np.zeros(len(items), dtype=bool)
        fingerprints = np.zeros((len(items), 32), dtype=np.uint64)
        errors: dict[int, str] = {}
        acyclic = np.zeros(len(items), dtype=bool)
        names = (MOLECULE_KEYS if kind == MOLECULE else REACTION_KEYS) + ((SCAFFOLD,) if scaffolds else ())
        owners: dict[str, dict[str, list[int]]] = {name: {} for name in names}
        graph_keys: set[int] | None = set() if kind == MOLECULE else None
        for number, result in enumerate(results):
            if isinstance(result, Failure):
                raise RuntimeError(f"indexing the test {kind}s failed: {result}")
            start = number * step
            stop = start + len(pieces[number])
            ok[start:stop] = result.ok
            fingerprints[start:stop] = result.fingerprints
            errors.update({start + i: reason for i, reason in result.errors.items()})
            if scaffolds:
                acyclic[start:stop] = [key == "" for key in result.keys[SCAFFOLD]]
            if graph_keys is not None and result.graphs_unsafe:
                graph_keys = None
            elif graph_keys is not None:
                graph_keys.update(g for g in result.graphs if g is not None)
            for name in names:
                for offset, key in enumerate(result.keys[name]):
                    if key:
                        owners[name].setdefault(key, []).append(start + offset)
        lookups = {name: frozenset(keys) for name, keys in owners.items()}
        kinds[kind] = KindIndex(kind, items, ok, errors, fingerprints, lookups, owners, scaffolds,
                                acyclic if scaffolds else None, frozenset(graph_keys) if graph_keys is not None else None)
    return TestIndex(list(sets), positions, kinds, near)


def _key_piece(job: tuple[str, list[str], bool, bool]):
    kind, piece, scaffolds, near = job
    return keyed(kind, piece, scaffolds=scaffolds, fingerprints=near, graphs=kind == MOLECULE)


# ------------------------------------------------------------------------------ one chunk


@dataclass
class ChunkResult:
    """What one training chunk contributes: counts, unreadable lines, matched keys with their
    first ``(file, line)``, and for each test item a similarity at least its best to the chunk
    and at most its best to the whole training data (see :func:`_nearest`)."""

    file: int
    counts: dict[str, int]
    unreadable: int
    unreadable_lines: list[tuple[int, str]]
    matches: dict[str, dict[str, dict[str, tuple[int, int]]]]
    best: dict[str, np.ndarray] = field(default_factory=dict)
    seconds: float = 0.0


def audit_chunk(index: TestIndex, chunk: TrainingChunk, n_threads: int | None = None) -> ChunkResult:
    """Key, fingerprint and compare one training chunk against the test index."""
    started = time.perf_counter()
    by_kind: dict[str, list[int]] = {MOLECULE: [], REACTION: []}
    unreadable: list[tuple[int, str]] = []
    for position, text in enumerate(chunk.texts):
        if not text:
            unreadable.append((chunk.lines[position], "empty SMILES"))
            continue
        by_kind[kind_of(text)].append(position)
    counts = {kind: len(rows) for kind, rows in by_kind.items()}
    matches: dict[str, dict[str, dict[str, tuple[int, int]]]] = {}
    best: dict[str, np.ndarray] = {}
    for kind, rows in by_kind.items():
        test = index.kinds.get(kind)
        if test is None or not rows:
            continue
        found = keyed(kind, [chunk.texts[r] for r in rows], scaffolds=test.scaffolds, fingerprints=index.near,
                      candidates=test.graph_keys)
        for offset, reason in sorted(found.errors.items()):
            unreadable.append((chunk.lines[rows[offset]], reason))
        kind_matches: dict[str, dict[str, tuple[int, int]]] = {}
        for name, keys in found.keys.items():
            lookup = test.lookups.get(name, frozenset())
            hits: dict[str, tuple[int, int]] = {}
            for offset, key in enumerate(keys):
                if key and key in lookup:
                    where = (chunk.file, chunk.lines[rows[offset]])
                    if key not in hits or where < hits[key]:
                        hits[key] = where
            kind_matches[name] = hits
        matches[kind] = kind_matches
        if index.near and found.ok.any() and test.ok.any():
            values = np.zeros(len(test.ok), dtype=np.float64)
            values[test.ok] = _nearest(test).update(found.fingerprints[found.ok])
            best[kind] = values
    unreadable.sort()
    return ChunkResult(chunk.file, counts, len(unreadable), unreadable[:UNREADABLE_LISTED], matches, best,
                       time.perf_counter() - started)


def _nearest(test: KindIndex) -> StreamingNearest:
    """The test items' :class:`StreamingNearest`, made once per process that holds ``test``.

    It keeps each test item's best similarity over every chunk this process has compared, so a
    chunk's values are at least its own best and never above the true best over the training
    data: merged by maxima they give the exact answer, and later chunks are screened against
    high values (most pairs ruled out by one int8 product)."""
    nearest = test.__dict__.get("_nearest")
    if nearest is None:
        nearest = test.__dict__["_nearest"] = StreamingNearest(test.fingerprints[test.ok])
    return nearest


# ------------------------------------------------------------------------------ running chunks


@lru_cache(maxsize=2)
def _index_from_file(path: str) -> TestIndex:
    with open(path, "rb") as handle:
        return pickle.load(handle)


def _chunk_in_worker(path: str, chunk: TrainingChunk) -> ChunkResult:
    index = _index_from_file(path)
    if index.near:  # one kernel thread per worker process (importing torch only when it computes)
        from chemassay.chem.similarity import set_num_threads

        set_num_threads(1)
    return audit_chunk(index, chunk, n_threads=1)


def _chunk_on_dask(index: TestIndex, chunk: TrainingChunk) -> ChunkResult:
    return audit_chunk(index, chunk, n_threads=1)


def run_chunks(index: TestIndex, chunks: Iterable[TrainingChunk], *, n_jobs: int = 1, scheduler: str | None = None,
               on_result: Callable[[ChunkResult], None]) -> None:
    """Audit every chunk (in this process, in ``n_jobs`` worker processes, or on the Dask
    cluster ``scheduler``), at most two chunks per worker in flight, handing each result to
    ``on_result`` as it arrives (any order)."""
    jobs = effective_jobs(n_jobs)
    if scheduler:
        _run_dask(index, chunks, scheduler, on_result)
    elif jobs == 1:
        for chunk in chunks:
            on_result(audit_chunk(index, chunk))
    else:
        _run_pool(index, chunks, jobs, on_result)


def _bounded(submit: Callable[[TrainingChunk], object], chunks: Iterable[TrainingChunk], in_flight: int,
             finish: Callable[[object], None]) -> None:
    pending: set = set()
    for chunk in chunks:
        pending.add(submit(chunk))
        while len(pending) >= in_flight:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                finish(future)
    while pending:
        done, pending = wait(pending, return_when=FIRST_COMPLETED)
        for future in done:
            finish(future)


def _run_pool(index: TestIndex, chunks: Iterable[TrainingChunk], jobs: int,
              on_result: Callable[[ChunkResult], None]) -> None:
    with tempfile.TemporaryDirectory(prefix="chemassay-leakage-") as folder:
        path = os.path.join(folder, "index.pkl")
        with open(path, "wb") as handle:
            pickle.dump(index.for_workers(), handle, protocol=pickle.HIGHEST_PROTOCOL)
        pool = _new_pool(jobs)
        try:
            _bounded(lambda chunk: pool.submit(_chunk_in_worker, path, chunk), chunks, 2 * jobs,
                     lambda future: on_result(future.result()))
        except BaseException:
            _stop_pool(pool)
            raise
        pool.shutdown(wait=True)


def _run_dask(index: TestIndex, chunks: Iterable[TrainingChunk], scheduler: str,
              on_result: Callable[[ChunkResult], None]) -> None:
    if scheduler != "dask-local" and "://" not in scheduler:
        raise UserInputError(f"--scheduler {scheduler}: give a Dask address (tcp://host:8786) or dask-local")
    with dask_client(scheduler) as client:
        [shared] = client.scatter([index.for_workers()], broadcast=True, hash=False)  # a fresh copy per audit: workers keep best values on it
        workers = max(1, len(client.scheduler_info().get("workers", {})))
        from distributed import wait as dask_wait

        pending: list = []
        for chunk in chunks:
            pending.append(client.submit(_chunk_on_dask, shared, chunk, pure=False))
            if len(pending) >= 2 * workers:
                done = dask_wait(pending, return_when="FIRST_COMPLETED").done
                for future in done:
                    on_result(future.result())
                pending = [f for f in pending if f not in done]
        for future in pending:
            on_result(future.result())


# ------------------------------------------------------------------------------ the audit


@dataclass
class _Running:
    """The merged answer so far."""

    files: list[dict]
    first: dict[str, dict[str, dict[str, tuple[int, int]]]]
    best: dict[str, np.ndarray]
    chunks: int = 0
    seconds: float = 0.0

    def add(self, result: ChunkResult) -> None:
        record = self.files[result.file]
        for kind, count in result.counts.items():
            record[f"{kind}s"] += count
        record["unreadable"] += result.unreadable
        room = UNREADABLE_LISTED - len(record["unreadable_lines"])
        if room > 0:
            record["unreadable_lines"].extend({"line": line, "reason": reason}
                                              for line, reason in result.unreadable_lines[:room])
            record["unreadable_lines"].sort(key=lambda row: row["line"])
        for kind, names in result.matches.items():
            for name, hits in names.items():
                table = self.first.setdefault(kind, {}).setdefault(name, {})
                for key, where in hits.items():
                    if key not in table or where < table[key]:
                        table[key] = where
        for kind, values in result.best.items():
            np.maximum(self.best[kind], values, out=self.best[kind])
        self.chunks += 1
        self.seconds += result.seconds


def _distribution(values: np.ndarray) -> dict:
    if len(values) == 0:
        return {"quantiles": {}, "mean": None, "histogram": {"edges": list(HISTOGRAM_EDGES), "counts": []},
                "at_least": {}}
    counts, _ = np.histogram(values, bins=np.asarray(HISTOGRAM_EDGES))
    return {
        "quantiles": {f"{q:g}": round(float(np.quantile(values, q)), 4) for q in QUANTILES},
        "mean": round(float(values.mean()), 4),
        "histogram": {"edges": list(HISTOGRAM_EDGES), "counts": [int(c) for c in counts]},
        "at_least": {f"{t:g}": int((values >= t - TIE).sum()) for t in AT_LEAST},
    }


def _task_entry(test_set: TestSet, positions: np.ndarray, kind_index: KindIndex, running: _Running,
                threshold: float, near: bool, paths: list[str]) -> dict:
    readable = kind_index.ok[positions]
    first = running.first.get(test_set.kind, {})

    def matched(name: str) -> np.ndarray:
        hits = np.zeros(len(kind_index.texts), dtype=bool)
        where: dict[int, tuple[int, int]] = {}
        for key, place in first.get(name, {}).items():
            for owner in kind_index.owners.get(name, {}).get(key, []):
                hits[owner] = True
                where[owner] = min(where.get(owner, place), place)
        return hits, where

    primary = PRIMARY_KEY[test_set.kind]
    exact_hits, exact_where = matched(primary)
    exact = exact_hits[positions]
    leaking = exact.copy()
    key_counts = {primary: int(exact.sum())}
    leaked: dict[str, list[str]] = {}
    ids = np.asarray(test_set.ids, dtype=object)
    if test_set.kind in STEREO_FREE_KEY:
        name = STEREO_FREE_KEY[test_set.kind]
        stereo_hits, _ = matched(name)
        stereo = stereo_hits[positions]
        key_counts[name] = int(stereo.sum())
        leaked["stereo"] = ids[stereo & ~exact].tolist()
        leaking |= stereo
    if test_set.kind == REACTION:
        product_hits, _ = matched("products")
        products = product_hits[positions]
        key_counts["products"] = int(products.sum())
        if test_set.products:
            leaked["products"] = ids[products & ~leaking].tolist()
            leaking |= products
    entry: dict = {
        "suite": test_set.suite, "task": test_set.task, "kind": test_set.kind, "dataset": test_set.dataset,
        "n": len(test_set.ids), "unreadable": int((~readable).sum()),
        "unreadable_ids": [{"id": test_set.ids[i], "reason": kind_index.errors.get(int(positions[i]), "")}
                           for i in np.flatnonzero(~readable)[:UNREADABLE_LISTED]],
        "exact": int(exact.sum()), "exact_keys": key_counts,
    }
    leaked["exact"] = ids[exact].tolist()
    if near:
        values = running.best[test_set.kind][positions].astype(np.float64)
        close = (values >= threshold - TIE) & readable & ~leaking
        leaking |= close
        entry["near"] = int(close.sum())
        entry["fingerprint"] = MOLECULE_FINGERPRINT if test_set.kind == MOLECULE else REACTION_FINGERPRINT
        entry["nearest_similarity"] = _distribution(values[readable])
        leaked["near"] = ids[close].tolist()
    else:
        entry["near"] = None
    entry["threshold"] = threshold
    if test_set.scaffolds and not kind_index.scaffolds:  # --exact-only: scaffolds not computed
        entry["scaffold"] = entry["acyclic"] = None
    elif test_set.scaffolds:
        scaffold_hits, _ = matched(SCAFFOLD)
        entry["scaffold"] = int(scaffold_hits[positions].sum())
        entry["acyclic"] = int(kind_index.acyclic[positions].sum()) if kind_index.acyclic is not None else 0
    entry["leaked"] = int(leaking.sum())
    entry["clean"] = len(test_set.ids) - int(leaking.sum())
    entry["ids_sha256"] = ids_sha256(test_set.ids)
    entry["leaked_ids"] = leaked
    entry["exact_lines"] = {test_set.ids[i]: {"file": paths[exact_where[int(positions[i])][0]],
                                              "line": exact_where[int(positions[i])][1]}
                            for i in np.flatnonzero(exact)[:UNREADABLE_LISTED]}
    if test_set.note:
        entry["note"] = test_set.note
    return entry


def audit(sets: Sequence[TestSet], train: Sequence[str | os.PathLike], *, column: str | None = None,
          threshold: float = DEFAULT_THRESHOLD, near: bool = True, n_jobs: int = 1, scheduler: str | None = None,
          chunk_lines: int = CHUNK_LINES, progress: Callable[[str], None] | None = None) -> dict:
    """The leakage report (a JSON-ready dict) of ``sets`` against the training files."""
    if not 0.0 < threshold <= 1.0:
        raise UserInputError(f"--threshold {threshold}: give a Tanimoto similarity in (0, 1]")
    if not sets:
        raise UserInputError("no test sets to audit")
    paths = [str(p) for p in train]
    check_files(paths, column)
    started = time.perf_counter()
    say = progress or (lambda text: None)
    say(f"indexing {sum(len(s.ids) for s in sets):,} test items of {len(sets)} tasks")
    index = build_index(sets, near=near, n_jobs=n_jobs)
    indexed = time.perf_counter() - started
    files = [{"path": path, "sha256": sha256_file(path), "molecules": 0, "reactions": 0, "unreadable": 0,
              "unreadable_lines": []} for path in paths]
    running = _Running(files, {}, {kind: np.zeros(len(k.texts), dtype=np.float64) for kind, k in index.kinds.items()})
    lines_seen = [0]

    def counted(chunks: Iterator[TrainingChunk]) -> Iterator[TrainingChunk]:
        for chunk in chunks:
            lines_seen[0] += len(chunk.texts)
            yield chunk

    def on_result(result: ChunkResult) -> None:
        running.add(result)
        say(f"chunk {running.chunks}: {sum(f['molecules'] + f['reactions'] for f in files):,} training items")

    run_chunks(index, counted(iter_chunks(paths, column, chunk_lines)), n_jobs=n_jobs, scheduler=scheduler,
               on_result=on_result)
    tasks = [_task_entry(test_set, positions, index.kinds[test_set.kind], running, threshold, near, paths)
             for test_set, positions in zip(index.sets, index.positions, strict=True)]
    for record in files:
        record["kinds"] = [kind for kind in (MOLECULE, REACTION) if record[f"{kind}s"]]
        record["compared"] = {kind: kind in index.kinds for kind in record["kinds"]}
    return {
        "format": FORMAT,
        "threshold": threshold,
        "near": near,
        "training": files,
        "tasks": tasks,
        "config": {"chunk_lines": chunk_lines, "n_jobs": n_jobs, "scheduler": scheduler, "column": column,
                   "fingerprints": {MOLECULE: MOLECULE_FINGERPRINT, REACTION: REACTION_FINGERPRINT}},
        "timing": {"index_s": round(indexed, 2), "total_s": round(time.perf_counter() - started, 2),
                   "chunks": running.chunks, "training_items": lines_seen[0]},
        "versions": _versions(),
    }


def _versions() -> dict[str, str]:
    from chemassay import __version__

    return {"chemassay": __version__, "rdkit": rdkit.__version__}


def write_report(report: dict, out: str | os.PathLike) -> Path:
    """Write ``report`` as ``OUT/leakage.json`` (atomically); returns the path."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "leakage.json"
    atomic_write_text(path, json.dumps(report, indent=1, sort_keys=False) + "\n")
    return path
