"""The MOSES metrics of any number of molecules, in chunks, resumable.

:func:`evaluate_chunks` is the engine behind
:func:`chemassay.suites.generation.metrics.evaluate_samples`: the input (a list, or a file
streamed by :func:`iter_smiles_file`) is cut into chunks of ``chunk_rows`` strings. For each
chunk the strings are parsed and canonicalized, the molecules not seen in an earlier chunk
are described (RDKit, worker processes or a Dask cluster), then their ChemNet activations
and nearest-reference similarities are computed (threads, or the GPU), and everything is
written to the run's work folder as one chunk file. The metrics are aggregated from the
chunk files at the end, so memory holds one chunk's molecules plus a few numbers per
distinct molecule (fingerprint, properties, similarities: ~300 bytes), whatever the input
size. ChemNet/SNN of chunk ``k`` run in a background thread while the RDKit work of chunk
``k + 1`` runs in the worker processes (stages that use different resources overlap).

A run given a ``work_dir`` that was interrupted resumes there: finished chunk files (each
checked against the sha256 recorded beside it) are kept and the run goes on with the next
chunk. The folder's manifest records what the run computes (input checksum, references,
chunk size, versions); a folder of another run is refused with a one-line error.

Values are those of the in-memory computation: per-molecule quantities do not depend on
the chunking, the FCD mean and covariance are the weighted two-pass sums of ``np.cov``
(identical up to float64 summation order), Wasserstein distances see the same multiset of
values, and duplicates across chunks are weighted, not recomputed.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import shutil
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from chemassay.contract.errors import UserInputError
from chemassay.data.readers import open_smiles_rows
from chemassay.runtime.files import atomic_write_bytes, atomic_write_text, sha256_file
from chemassay.runtime.parallel import Failure, dask_client, parallel_map
from chemassay.runtime.threads import single_threaded_kernels
from chemassay.suites.generation.chemnet import frechet_distance
from chemassay.suites.generation.descriptors import canonicalize, describe_smiles, invalid_reason
from chemassay.suites.generation.pairs import (
    SnnReference,
    estimate_internal_diversities,
    internal_diversities,
)
from chemassay.suites.generation.reference import PROPERTY_NAMES

CHUNK_ROWS = 50_000
"""Input strings per chunk (the unit of work written to disk and of resumption)."""
FORMAT = 1
ACTIVATION_SIZE = 512
FINGERPRINT_WORDS = 16


# ---------------------------------------------------------------- reading in chunks


@dataclass
class SmilesChunk:
    """Consecutive input strings and their line numbers in the file (``None`` for a list)."""

    smiles: list[str]
    lines: list[int] | None = None


def iter_list(smiles: Sequence[str], chunk_rows: int = CHUNK_ROWS) -> Iterator[SmilesChunk]:
    """A list of SMILES in chunks."""
    for start in range(0, len(smiles), chunk_rows):
        yield SmilesChunk([s if isinstance(s, str) else str(s) for s in smiles[start:start + chunk_rows]])


def iter_smiles_file(path: str | os.PathLike, column: str | None = None,
                     chunk_rows: int = CHUNK_ROWS) -> Iterator[SmilesChunk]:
    """Stream a SMILES file in chunks, with the rules of the one reader.

    Yields exactly what :func:`chemassay.data.readers.read_smiles_file` returns (same
    strings, same line numbers, empty table cells kept as empty SMILES), without holding
    the file: both read :func:`chemassay.data.readers.open_smiles_rows`.
    """
    with open_smiles_rows(path, column) as source:
        chunk = SmilesChunk([], [])
        for line_no, value in source.rows:
            chunk.smiles.append(value)
            chunk.lines.append(line_no)
            if len(chunk.smiles) == chunk_rows:
                yield chunk
                chunk = SmilesChunk([], [])
        if chunk.smiles:
            yield chunk


# ---------------------------------------------------------------- per-chunk work


def _parse_many(chunk: list[str]) -> list[tuple[str | None, str | None]]:
    """Canonical SMILES (MOSES's ``canonic_smiles``) of each string, or ``None`` and why not."""
    out: list[tuple[str | None, str | None]] = []
    for text in chunk:
        canonical = canonicalize(text)
        out.append((canonical, None) if canonical is not None else (None, invalid_reason(text)))
    return out


def _describe(text: str):
    return describe_smiles(text)


@dataclass
class RunState:
    """What the chunks seen so far left for the next ones (rebuilt from the files on resume)."""

    ids: dict[str, int] = field(default_factory=dict)
    """first-canonical SMILES -> global id of the distinct molecule."""
    failed: set[int] = field(default_factory=set)
    """ids of valid molecules whose canonical SMILES could not be processed."""
    n_input: int = 0


@dataclass
class InvalidItem:
    """An input string that is not a valid molecule (or could not be processed)."""

    index: int
    smiles: str
    reason: str
    line: int | None = None


class WorkDir:
    """The chunk files of one run and its manifest."""

    def __init__(self, path: Path, manifest: dict) -> None:
        self.path = path
        self.manifest = manifest
        path.mkdir(parents=True, exist_ok=True)
        target = path / "manifest.json"
        if target.exists():
            try:
                found = json.loads(target.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                found = None
            if found != manifest:
                raise UserInputError(
                    f"{path}: this work folder holds a run of other inputs or settings; remove it or give "
                    "another --work-dir"
                )
        else:
            atomic_write_text(target, json.dumps(manifest, indent=1, sort_keys=True) + "\n")

    def _files(self, k: int) -> tuple[Path, Path]:
        return self.path / f"chunk-{k:06d}.npz", self.path / f"chunk-{k:06d}.json"

    def load(self, k: int) -> tuple[dict, dict] | None:
        """Chunk ``k``'s arrays and document if finished and intact, else ``None``."""
        arrays_path, doc_path = self._files(k)
        if not doc_path.exists() or not arrays_path.exists():
            return None
        try:
            doc = json.loads(doc_path.read_text(encoding="utf-8"))
            if doc.get("npz_sha256") != sha256_file(arrays_path):
                raise ValueError("checksum mismatch")
            with np.load(arrays_path, allow_pickle=False) as data:
                arrays = {key: data[key] for key in data.files}
        except (OSError, ValueError, KeyError):
            from chemassay.runtime.cache import cache_warning

            cache_warning(f"{doc_path}: damaged chunk file, computing the chunk again")
            return None
        return arrays, doc

    def save(self, k: int, arrays: dict, doc: dict) -> None:
        arrays_path, doc_path = self._files(k)
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        data = buffer.getvalue()
        atomic_write_bytes(arrays_path, data)
        doc = dict(doc, npz_sha256=hashlib.sha256(data).hexdigest())
        atomic_write_text(doc_path, json.dumps(doc) + "\n")  # written last: the chunk is done


@dataclass
class ChunkOptions:
    n_jobs: int = 1
    device: str = "cpu"
    batch_size: int = 512
    scheduler: str | None = None
    n_threads: int | None = None
    show_progress: bool | None = None


def _parse_chunk(chunk: SmilesChunk, options: ChunkOptions) -> list[tuple[str | None, str | None]]:
    smiles = chunk.smiles
    jobs = max(1, options.n_jobs)
    size = max(50, min(2000, len(smiles) // (jobs * 4) or 1))
    pieces = [smiles[i:i + size] for i in range(0, len(smiles), size)]
    results = parallel_map(_parse_many, pieces, n_jobs=options.n_jobs, chunk_size=1, scheduler=options.scheduler,
                           description="parsing", show_progress=options.show_progress)
    out: list[tuple[str | None, str | None]] = []
    for piece, result in zip(pieces, results, strict=True):
        if isinstance(result, Failure):  # an RDKit crash inside a piece: redo it string by string
            for text in piece:
                try:
                    out.extend(_parse_many([text]))
                except Exception as exc:  # noqa: BLE001 - counted as invalid with its reason
                    out.append((None, f"{type(exc).__name__}: {exc}"))
        else:
            out.extend(result)
    return out


def _torch_stage(texts2: list[str], fingerprints: np.ndarray, ok: np.ndarray, snn_refs: dict, options: ChunkOptions):
    """ChemNet activations and nearest-reference similarities of a chunk's new molecules."""
    from chemassay.suites.generation import chemnet

    activations = np.zeros((len(texts2), ACTIVATION_SIZE), dtype=np.float32)
    good = np.flatnonzero(ok)
    timings = {}
    clock = time.perf_counter()
    if len(good):
        activations[good] = chemnet.chemnet_activations(
            [texts2[i] for i in good], device=options.device, batch_size=options.batch_size,
            show_progress=options.show_progress, n_threads=options.n_threads,
        )
    timings["fcd"] = time.perf_counter() - clock
    clock = time.perf_counter()
    snn = {}
    for label, reference in snn_refs.items():
        values = np.full(len(texts2), np.nan)
        if len(good) and len(reference):
            if options.scheduler:
                values[good] = _snn_on_cluster(fingerprints[good], reference, options.scheduler)
            else:
                values[good] = reference.best(fingerprints[good], n_threads=options.n_threads)
        snn[label] = values
    timings["snn"] = time.perf_counter() - clock
    return activations, snn, timings


def _snn_block(reference_packed, queries):
    key = (id(reference_packed), len(reference_packed))
    prepared = _SNN_CACHE.get(key)
    if prepared is None:
        _SNN_CACHE.clear()
        prepared = _SNN_CACHE[key] = SnnReference(reference_packed)
    with single_threaded_kernels():
        return prepared.best(queries, n_threads=1)


_SNN_CACHE: dict = {}


def _snn_on_cluster(queries: np.ndarray, reference, scheduler: str, block: int = 2048) -> np.ndarray:
    """SNN of query blocks as Dask tasks (the reference is sent to each worker once)."""
    with dask_client(scheduler) as client:
        [data] = client.scatter([reference.packed], broadcast=True)
        futures = [client.submit(_snn_block, data, queries[i:i + block], pure=False)
                   for i in range(0, len(queries), block)]
        parts = client.gather(futures)
    return np.concatenate(parts) if parts else np.zeros(0)


def _process_chunk(k: int, chunk: SmilesChunk, state: RunState, options: ChunkOptions, timings: dict):
    """The RDKit part of a chunk (in this thread) and a callable for the rest."""
    clock = time.perf_counter()
    parsed = _parse_chunk(chunk, options)
    timings["parse"] = timings.get("parse", 0.0) + time.perf_counter() - clock
    clock = time.perf_counter()
    ids = np.full(len(parsed), -1, dtype=np.int64)
    first_id = len(state.ids)
    new_texts: list[str] = []
    invalid = []
    for i, (canonical, reason) in enumerate(parsed):
        if canonical is None:
            invalid.append([i, chunk.smiles[i], reason or "RDKit cannot parse it"])
            continue
        known = state.ids.get(canonical)
        if known is None:
            known = state.ids[canonical] = len(state.ids)
            new_texts.append(canonical)
        ids[i] = known
    described = parallel_map(_describe, new_texts, n_jobs=options.n_jobs, scheduler=options.scheduler,
                             description="describing molecules", show_progress=options.show_progress)
    ok = np.array([not isinstance(r, Failure) for r in described], dtype=bool)
    for offset, good in enumerate(ok):
        if not good:
            state.failed.add(first_id + offset)
    fingerprints = np.zeros((len(new_texts), FINGERPRINT_WORDS), dtype=np.uint64)
    props = np.full((len(new_texts), 4), np.nan)
    passes = np.zeros(len(new_texts), dtype=np.int8)
    texts2, fragments, scaffolds = [], [], []
    for row, record in enumerate(described):
        if isinstance(record, Failure):
            texts2.append("")
            fragments.append([])
            scaffolds.append(None)
            continue
        fingerprints[row] = np.frombuffer(record.fingerprint, dtype="<u8")
        props[row] = (record.logp, record.sa, record.qed, record.weight)
        passes[row] = 1 if record.passes_filters else 0
        texts2.append(record.canonical)
        fragments.append(list(record.fragments))
        scaffolds.append(record.scaffold)
    timings["describe"] = timings.get("describe", 0.0) + time.perf_counter() - clock
    by_id = {first_id + i: text for i, text in enumerate(new_texts)}
    dropped = [[i, chunk.smiles[i], by_id.get(int(ids[i]), parsed[i][0])]
               for i in range(len(ids)) if ids[i] >= 0 and int(ids[i]) in state.failed]
    state.n_input += len(chunk.smiles)
    arrays = {"ids": ids, "fingerprints": fingerprints, "properties": props, "passes": passes, "ok": ok}
    doc = {"chunk": k, "n": len(chunk.smiles), "first_id": first_id, "canonical": new_texts, "canonical2": texts2,
           "fragments": fragments, "scaffolds": scaffolds, "invalid": invalid, "dropped": dropped,
           "lines": chunk.lines}
    return arrays, doc, texts2, fingerprints, ok


def _restore(state: RunState, arrays: dict, doc: dict) -> None:
    first = doc["first_id"]
    for offset, text in enumerate(doc["canonical"]):
        state.ids[text] = first + offset
    for offset in np.flatnonzero(~arrays["ok"]):
        state.failed.add(first + int(offset))
    state.n_input += doc["n"]


# ---------------------------------------------------------------- the run


class _Background:
    """One call in a daemon thread (an interrupted run exits without waiting for it)."""

    def __init__(self, fn, *args) -> None:
        self.result = None
        self.error: BaseException | None = None

        def run() -> None:
            try:
                self.result = fn(*args)
            except BaseException as exc:  # re-raised in the caller by wait()
                self.error = exc

        self.thread = threading.Thread(target=run, daemon=True, name="chemassay-chunk")
        self.thread.start()

    def wait(self):
        self.thread.join()
        if self.error is not None:
            raise self.error
        return self.result


@dataclass
class ChunkedEvaluation:
    """What :func:`evaluate_chunks` returns to :func:`~.metrics.evaluate_samples`."""

    metrics: dict[str, float]
    n_input: int
    n_valid: int
    n_unique_valid: int
    invalid: list[InvalidItem]
    dropped: list[InvalidItem]
    warnings: list[str]
    properties: dict[str, np.ndarray]
    timings: dict[str, float]
    item_scores: dict[str, list[float | None]]
    estimates: dict = field(default_factory=dict)
    chunks: int = 0
    resumed_chunks: int = 0


def evaluate_chunks(
    chunks: Iterable[SmilesChunk],
    *,
    references: dict,
    train_set,
    unique_k: Sequence[int],
    options: ChunkOptions,
    work_dir: str | os.PathLike | None = None,
    manifest: dict | None = None,
    intdiv_exact_max: int | None = None,
    seed: int = 0,
    overlap: bool = True,
) -> ChunkedEvaluation:
    """Every MOSES metric over ``chunks`` (see the module docstring)."""
    from chemassay.suites.generation.pairs import INTDIV_EXACT_MAX, SnnReference

    timings: dict[str, float] = {}
    temporary = None
    if work_dir is None:
        temporary = tempfile.mkdtemp(prefix="chemassay-generation-")
        folder = Path(temporary)
    else:
        folder = Path(work_dir)
    try:
        store = WorkDir(folder, manifest or {"format": FORMAT})
        snn_refs = {label: SnnReference(ref.fingerprints, device=options.device)
                    for label, ref in references.items()}
        state = RunState()
        n_chunks = resumed = 0
        pending: _Background | None = None

        def finish(k, arrays, doc, texts2, fingerprints, ok):
            activations, snn, stage_times = _torch_stage(texts2, fingerprints, ok, snn_refs, options)
            arrays = dict(arrays, activations=activations, **{f"snn_{label}": v for label, v in snn.items()})
            store.save(k, arrays, doc)
            return stage_times

        def collect(stage_times: dict) -> None:
            for key, value in stage_times.items():
                timings[key] = timings.get(key, 0.0) + value

        try:
            for k, chunk in enumerate(chunks):
                n_chunks += 1
                loaded = store.load(k)
                if loaded is not None and loaded[1].get("n") == len(chunk.smiles):
                    _restore(state, *loaded)
                    resumed += 1
                    continue
                work = _process_chunk(k, chunk, state, options, timings)
                if pending is not None:
                    collect(pending.wait())
                    pending = None
                if overlap and options.device == "cpu" and not options.scheduler:
                    pending = _Background(finish, k, *work)
                else:
                    collect(finish(k, *work))
            if pending is not None:
                collect(pending.wait())
                pending = None
        except BaseException:
            if pending is not None:  # let a nearly done chunk be saved, but never hold up Ctrl-C for long
                pending.thread.join(timeout=5.0)
            raise
        clock = time.perf_counter()
        # Single-threaded BLAS here: a two-thread eigh of the 512 x 512 covariances took 21 s
        # instead of a fraction of one on a busy machine (threads waiting for each other).
        with single_threaded_kernels():
            result = _aggregate(store, n_chunks, state, references, train_set, unique_k, options,
                                INTDIV_EXACT_MAX if intdiv_exact_max is None else intdiv_exact_max, seed, timings)
        timings["aggregate"] = time.perf_counter() - clock - timings.get("intdiv", 0.0)
        result.chunks, result.resumed_chunks = n_chunks, resumed
        return result
    finally:
        if temporary is not None:
            shutil.rmtree(temporary, ignore_errors=True)


def _aggregate(store: WorkDir, n_chunks: int, state: RunState, references: dict, train_set, unique_k,
               options: ChunkOptions, intdiv_exact_max: int, seed: int, timings: dict) -> ChunkedEvaluation:
    from chemassay.suites.generation.metrics import (
        count_cosine_similarity,
        fraction_unique,
        property_distance,
    )

    n_distinct = len(state.ids)
    fingerprints = np.zeros((n_distinct, FINGERPRINT_WORDS), dtype=np.uint64)
    props = np.full((n_distinct, 4), np.nan)
    passes = np.zeros(n_distinct, dtype=np.float64)
    ok = np.zeros(n_distinct, dtype=bool)
    snn = {label: np.full(n_distinct, np.nan) for label in references}
    canonical2: list[str] = [""] * n_distinct
    ids_parts = []
    invalid: list[InvalidItem] = []
    dropped_rows = []
    offset = 0
    for k in range(n_chunks):
        arrays, doc = store.load(k)
        first, count = doc["first_id"], len(doc["canonical"])
        part = slice(first, first + count)
        fingerprints[part] = arrays["fingerprints"]
        props[part] = arrays["properties"]
        passes[part] = arrays["passes"]
        ok[part] = arrays["ok"]
        for label in references:
            snn[label][part] = arrays[f"snn_{label}"]
        canonical2[first:first + count] = doc["canonical2"]
        ids_parts.append(arrays["ids"])
        lines = doc["lines"]
        for index, text, reason in doc["invalid"]:
            invalid.append(InvalidItem(offset + index, text, reason, None if lines is None else lines[index]))
        for index, text, canonical in doc["dropped"]:
            dropped_rows.append((offset + index, text, canonical, None if lines is None else lines[index]))
        offset += doc["n"]
    ids = np.concatenate(ids_parts) if ids_parts else np.zeros(0, dtype=np.int64)
    n_input = len(ids)
    valid_mask = ids >= 0
    scored_mask = valid_mask.copy()
    scored_mask[valid_mask] = ok[ids[valid_mask]]
    dropped = [InvalidItem(index, text, f"canonical SMILES {canonical!r} cannot be processed", line)
               for index, text, canonical, line in dropped_rows]
    scored_ids = ids[scored_mask]
    weights = np.bincount(scored_ids, minlength=n_distinct).astype(np.float64)
    present = np.flatnonzero(weights > 0)
    w = weights[present]
    warnings_out: list[str] = []
    if dropped:
        warnings_out.append(f"{len(dropped)} valid molecules could not be re-read from their canonical SMILES")

    metrics: dict[str, float] = {"valid": float(valid_mask.mean()) if n_input else math.nan}
    # unique@k reads the first k scored molecules (all of them when there are fewer).
    second = [canonical2[i] for i in scored_ids[:max(unique_k, default=0)]]
    for k in unique_k:
        value, warning = fraction_unique(second, k)
        metrics[f"unique@{k}"] = value
        if warning:
            warnings_out.append(warning)

    # FCD: weighted two-pass mean and covariance (np.cov of the expanded activations).
    clock = time.perf_counter()
    total = float(w.sum())
    gen_mu = gen_sigma = None
    if total >= 2:
        sum_x = np.zeros(ACTIVATION_SIZE)
        for rows, x in _activation_blocks(store, n_chunks, weights):
            sum_x += weights[rows] @ x
        gen_mu = sum_x / total
        scatter = np.zeros((ACTIVATION_SIZE, ACTIVATION_SIZE))
        for rows, x in _activation_blocks(store, n_chunks, weights):
            centred = x - gen_mu
            scatter += (centred * weights[rows][:, None]).T @ centred
        gen_sigma = scatter / (total - 1)
    else:
        warnings_out.append(f"FCD needs at least 2 valid molecules ({int(total)} given)")
    timings["fcd"] = timings.get("fcd", 0.0) + time.perf_counter() - clock

    fragments: Counter = Counter()
    scaffolds: Counter = Counter()
    for k in range(n_chunks):
        doc = store.load(k)[1]
        first = doc["first_id"]
        for offset_id, (frags, scaffold) in enumerate(zip(doc["fragments"], doc["scaffolds"], strict=True)):
            count = weights[first + offset_id]
            if count == 0:
                continue
            count = int(count)
            for fragment in frags:
                fragments[fragment] += count
            if scaffold is not None:
                scaffolds[scaffold] += count

    item_scores: dict[str, list[float | None]] = {"valid": [1.0 if v else 0.0 for v in valid_mask]}

    def per_valid(values_by_id: np.ndarray) -> list[float | None]:
        out = np.full(n_input, np.nan)
        out[scored_mask] = values_by_id[scored_ids]
        return [None if math.isnan(v) else float(v) for v in out]

    for label, ref in references.items():
        metrics[f"FCD/{label}"] = (math.nan if gen_mu is None or ref.fcd_mu is None
                                   else frechet_distance(ref.fcd_mu, ref.fcd_sigma, gen_mu, gen_sigma))
        if total > 0 and len(ref.fingerprints):
            metrics[f"SNN/{label}"] = float(np.sum(snn[label][present] * w) / total)
            item_scores[f"SNN/{label}"] = per_valid(snn[label])
        else:
            metrics[f"SNN/{label}"] = math.nan
        metrics[f"Frag/{label}"] = count_cosine_similarity(ref.fragments, fragments)
        metrics[f"Scaf/{label}"] = count_cosine_similarity(ref.scaffolds, scaffolds)

    clock = time.perf_counter()
    estimates: dict = {}
    if total == 0:
        metrics["IntDiv"] = metrics["IntDiv2"] = math.nan
    elif len(present) > intdiv_exact_max and options.device == "cpu" and not options.scheduler:
        estimate = estimate_internal_diversities(fingerprints[present], w, seed=seed, n_threads=options.n_threads)
        metrics["IntDiv"], metrics["IntDiv2"] = estimate.intdiv, estimate.intdiv2
        estimates["IntDiv"] = estimate.describe()
        warnings_out.append(
            f"IntDiv and IntDiv2 are estimates: {len(present)} distinct molecules exceed the exact limit of "
            f"{intdiv_exact_max} on one CPU ({estimate.rows} sampled molecules, seed {seed}; IntDiv 95% interval "
            f"{estimate.intdiv_interval[0]:.6f}-{estimate.intdiv_interval[1]:.6f}); use --device cuda or "
            "--scheduler for the exact values"
        )
    else:
        metrics["IntDiv"], metrics["IntDiv2"] = internal_diversities(
            fingerprints[present], w, device=options.device, n_threads=options.n_threads, scheduler=options.scheduler)
    timings["intdiv"] = time.perf_counter() - clock

    metrics["Filters"] = float(np.sum(passes[present] * w) / total) if total else math.nan
    if total:
        item_scores["Filters"] = per_valid(passes)
    properties = {name: np.repeat(props[present, column], w.astype(np.int64))
                  for column, name in enumerate(PROPERTY_NAMES)}
    for name in PROPERTY_NAMES:
        metrics[name] = property_distance(references["Test"].properties[name], properties[name])
    if train_set is not None:
        from chemassay.suites.generation.metrics import novelty

        second_all = [canonical2[i] for i in scored_ids]
        metrics["Novelty"] = novelty(second_all, train_set)
        if second_all:
            first_seen: dict[str, int] = {}
            for index, text in zip(np.flatnonzero(scored_mask).tolist(), second_all, strict=True):
                first_seen.setdefault(text, index)
            known = train_set.contains(list(first_seen))
            novel: list[float | None] = [None] * n_input
            for position, index in enumerate(first_seen.values()):
                novel[index] = 0.0 if bool(known[position]) else 1.0
            item_scores["Novelty"] = novel
    return ChunkedEvaluation(
        metrics=metrics, n_input=n_input, n_valid=int(valid_mask.sum()), n_unique_valid=len(present),
        invalid=invalid, dropped=dropped, warnings=warnings_out, properties=properties, timings=timings,
        item_scores=item_scores, estimates=estimates,
    )


def _activation_blocks(store: WorkDir, n_chunks: int, weights: np.ndarray):
    for k in range(n_chunks):
        arrays, doc = store.load(k)
        first = doc["first_id"]
        rows = np.arange(first, first + len(doc["canonical"]))
        keep = weights[rows] > 0
        if keep.any():
            yield rows[keep], arrays["activations"][keep].astype(np.float64)
