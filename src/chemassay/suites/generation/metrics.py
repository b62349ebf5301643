"""The MOSES metrics, with the values of the reference implementation and faster.

:func:`compute_metrics` returns the dictionary MOSES's ``get_all_metrics`` returns, with
the same keys and values (to 1e-6; FCD to 1e-3) for the same input:

``valid``
    fraction of the input strings RDKit parses.
``unique@k``
    distinct canonical SMILES among the first ``k`` valid molecules, divided by ``k`` (or by
    the number of valid molecules when there are fewer, with a warning, as MOSES does).
``FCD/Test``, ``SNN/Test``, ``Frag/Test``, ``Scaf/Test`` (and ``/TestSF`` for the scaffold
test set)
    Fréchet ChemNet Distance; mean over generated molecules of the highest Tanimoto
    similarity to a reference molecule (Morgan radius 2, 1024 bits); cosine similarity of
    BRICS-fragment counts; cosine similarity of Bemis-Murcko scaffold counts.
``IntDiv``, ``IntDiv2``
    ``1 - mean`` of all pairwise Tanimoto similarities of the generated set (self-pairs
    included), and ``1 - mean_i sqrt(mean_j T_ij^2)``.
``Filters``
    fraction passing the MOSES filters (MCF, PAINS, allowed atoms, no charges, rings).
``logP``, ``SA``, ``QED``, ``weight``
    Wasserstein-1 distance between the generated and the test set's property values.
``Novelty``
    fraction of distinct generated canonical SMILES not in the training set (the MOSES
    training split by default, in every entry point; ``train=None`` leaves it out).

Everything after ``valid`` is computed on the valid molecules only, re-read from their
canonical SMILES as MOSES does; duplicates count as often as they occur.

One deliberate difference: ``Frag`` and ``Scaf`` cosines are computed in float64. The
reference computes them on int64 count vectors whose squared norms overflow at realistic
set sizes (a 30,000-molecule sample against the MOSES test set), and then reports a
clipped 1.0; we report the true cosine.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import rdkit
from scipy.stats import wasserstein_distance

from chemassay.report.cards import MetricCard
from chemassay.runtime.cache import cached
from chemassay.runtime.files import need_file, sha256_file
from chemassay.suites.generation.data import (
    moses_part_path,
    moses_part_sha256,
    parse_moses_name,
    smiles_set,
)
from chemassay.suites.generation.pairs import SnnReference, _block_sums, unique_rows
from chemassay.suites.generation.reference import (
    PROPERTY_NAMES,  # noqa: F401 - re-exported (the API and plots read it here)
    ReferenceSpec,
    ReferenceStats,
    resolve_reference,
)

DEFAULT_UNIQUE_K = (1000, 10000)
DEFAULT_TRAIN = "moses"
"""The training set of ``Novelty`` everywhere (as MOSES's ``get_all_metrics``); ``None`` omits it."""
METRIC_KEYS = (
    "valid", "unique@1000", "unique@10000",
    "FCD/Test", "SNN/Test", "Frag/Test", "Scaf/Test",
    "FCD/TestSF", "SNN/TestSF", "Frag/TestSF", "Scaf/TestSF",
    "IntDiv", "IntDiv2", "Filters", "logP", "SA", "QED", "weight", "Novelty",
)
_BLOCK = 1024
"""Rows per block of the IntDiv pair sums (see :data:`.pairs.BLOCK`)."""


# ---------------------------------------------------------------- single metrics


def fraction_valid(valid_flags: Sequence[bool]) -> float:
    """Fraction of ``True`` flags (NaN for an empty input)."""
    if len(valid_flags) == 0:
        return math.nan
    return float(np.mean(np.asarray(valid_flags, dtype=bool)))


def fraction_unique(canonical: Sequence[str], k: int | None = None) -> tuple[float, str | None]:
    """``unique@k``: distinct entries among the first ``k`` of ``canonical`` over their count.

    Returns the value and a warning when fewer than ``k`` molecules were given: MOSES then
    warns and divides by the number available, so the value is ``unique@N`` of all ``N``
    valid molecules, and the warning says so. An empty input gives NaN.
    """
    warning = None
    if k is not None:
        if len(canonical) < k:
            count = len(canonical)
            warning = (
                f"Can't compute unique@{k}: only {count} valid molecules; the value reported as "
                f"unique@{k} is unique@{count} (distinct molecules among all {count} valid ones, divided by "
                f"{count}), as MOSES computes it"
            )
        canonical = canonical[:k]
    if len(canonical) == 0:
        return math.nan, warning
    return len(set(canonical)) / len(canonical), warning


def novelty(canonical: Iterable[str], train) -> float:
    """Fraction of distinct ``canonical`` SMILES that are not in ``train`` (NaN if none).

    ``train`` is a set of strings or a :class:`SortedStrings`.
    """
    distinct = list(set(canonical))
    if not distinct:
        return math.nan
    if isinstance(train, SortedStrings):
        known = int(train.contains(distinct).sum())
    else:
        known = sum(1 for text in distinct if text in train)
    return (len(distinct) - known) / len(distinct)


def count_cosine_similarity(reference: Counter, generated: Counter) -> float:
    """Cosine similarity of two count dictionaries (missing keys count zero), in float64.

    NaN when either is empty, as in MOSES. Float64 (not int64) products keep the squared
    norms exact enough at any size; see the module docstring.
    """
    if not reference or not generated:
        return math.nan
    keys = list(reference.keys() | generated.keys())
    ref = np.array([reference.get(key, 0) for key in keys], dtype=np.float64)
    gen = np.array([generated.get(key, 0) for key in keys], dtype=np.float64)
    denominator = math.sqrt(float(ref @ ref) * float(gen @ gen))
    # scipy's cosine distance (used by MOSES) is clipped to [0, 2]; keep the same range.
    return float(1.0 - np.clip(1.0 - float(ref @ gen) / denominator, 0.0, 2.0))


def property_distance(reference: np.ndarray, generated: np.ndarray) -> float:
    """Wasserstein-1 distance between two samples of a property (scipy's definition)."""
    if len(reference) == 0 or len(generated) == 0:
        return math.nan
    return float(wasserstein_distance(reference, generated))


def _unique_rows(packed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of a packed fingerprint matrix and how often each occurs."""
    return unique_rows(packed)


def nearest_neighbour_similarities(
    generated: np.ndarray, reference, *, device: str = "cpu", n_threads: int | None = None
) -> np.ndarray:
    """For each generated fingerprint, its highest Tanimoto similarity to ``reference``.

    ``reference`` is a packed fingerprint matrix or a prepared
    :class:`~chemassay.suites.generation.pairs.SnnReference` (reused across chunks).
    Reference duplicates are dropped first (they cannot change a maximum). As in MOSES, two
    empty fingerprints have similarity 1. Empty inputs give an empty array.
    """
    if len(generated) == 0 or len(reference) == 0:
        return np.zeros(0, dtype=np.float64)
    prepared = reference if isinstance(reference, SnnReference) else SnnReference(reference, device=device)
    return prepared.best(generated, n_threads=n_threads)


def nearest_neighbour_similarity(
    generated: np.ndarray, weights: np.ndarray, reference: np.ndarray
) -> float:
    """SNN: weighted mean over generated fingerprints of their highest Tanimoto to ``reference``.

    ``generated`` holds distinct packed fingerprints with ``weights`` (multiplicities); see
    :func:`nearest_neighbour_similarities`.
    """
    if len(generated) == 0 or len(reference) == 0:
        return math.nan
    best = nearest_neighbour_similarities(generated, reference)
    return float(np.sum(best * weights) / np.sum(weights))


def internal_diversity(fingerprints: np.ndarray, weights: np.ndarray | None = None, p: int = 1) -> float:
    """IntDiv_p: ``1 - mean_i (mean_j T_ij^p)^(1/p)`` over all ordered pairs, self-pairs included.

    ``fingerprints`` are distinct packed rows and ``weights`` their multiplicities (the
    result equals that on the expanded set). Pairs are counted from exact integer
    intersection counts in blocks (each unordered block once) in float64; two empty
    fingerprints have similarity 1 as in MOSES.
    """
    sums = pairwise_power_sums(fingerprints, weights, powers=(p,))
    total = float(np.sum(_weights(fingerprints, weights)))
    if total == 0:
        return math.nan
    row = sums[p] / total
    w = _weights(fingerprints, weights)
    return float(1.0 - np.sum(w * row ** (1.0 / p)) / total)


def _weights(fingerprints: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    if weights is None:
        return np.ones(len(fingerprints), dtype=np.float64)
    return np.asarray(weights, dtype=np.float64)


def pairwise_power_sums(
    fingerprints: np.ndarray, weights: np.ndarray | None = None, powers: tuple[int, ...] = (1, 2), *,
    device: str = "cpu", n_threads: int | None = None, scheduler: str | None = None,
) -> dict[int, np.ndarray]:
    """For each row ``i`` and power ``p``: ``sum_j w_j T_ij^p`` over all rows ``j``.

    See :func:`chemassay.suites.generation.pairs.pairwise_power_sums` (exact integer counts
    per block, float64 sums, each unordered block once; CPU threads, GPU or Dask).
    """
    from chemassay.suites.generation import pairs

    return pairs.pairwise_power_sums(fingerprints, weights, powers, device=device, n_threads=n_threads,
                                     scheduler=scheduler, block=_BLOCK)


def _block_power_sums_numpy(common, a, b, wa, wb, powers, mirrored):
    """Plain NumPy version of one block's weighted power sums (the reference of the torch one)."""
    common = common.astype(np.float64)
    union = a[:, None] + b[None, :] - common
    with np.errstate(invalid="ignore", divide="ignore"):
        sim = common / union
    sim[union == 0] = 1.0  # two empty fingerprints: 1, as in MOSES
    out = {}
    for p in powers:
        block = sim if p == 1 else sim**p
        out[p] = (block @ wb, wa @ block if mirrored else None)
    return out


def _block_power_sums_torch(torch, common, a, b, wa, wb, powers, mirrored):
    """One block's weighted power sums with the kernels the pair stage uses (NumPy in and out)."""
    out = _block_sums(torch, torch.from_numpy(np.ascontiguousarray(common)), torch.from_numpy(a),
                      torch.from_numpy(b), torch.from_numpy(wa), torch.from_numpy(wb), powers, mirrored)
    return {p: (rows.numpy(), None if cols is None else cols.numpy()) for p, (rows, cols) in out.items()}


def internal_diversities(
    fingerprints: np.ndarray, weights: np.ndarray | None = None, *, device: str = "cpu",
    n_threads: int | None = None, scheduler: str | None = None,
) -> tuple[float, float]:
    """``(IntDiv, IntDiv2)`` from one pass over the pairs (exact; see :mod:`.pairs`)."""
    from chemassay.suites.generation import pairs

    return pairs.internal_diversities(fingerprints, weights, device=device, n_threads=n_threads,
                                      scheduler=scheduler, block=_BLOCK)


# ---------------------------------------------------------------- training set


class SortedStrings:
    """A set of strings held as one sorted fixed-width byte array (exact membership tests).

    1.6 million training SMILES take ~90 MB this way, load from the cache with ``mmap`` in
    milliseconds, and answer membership for a whole sample with one ``searchsorted``.
    """

    def __init__(self, values: np.ndarray) -> None:
        self.values = values

    @classmethod
    def from_strings(cls, strings: Iterable[str]) -> SortedStrings:
        encoded = sorted({text.encode("utf-8") for text in strings})
        width = max((len(b) for b in encoded), default=1)
        return cls(np.array(encoded, dtype=f"S{max(1, width)}"))

    def __len__(self) -> int:
        return len(self.values)

    def contains(self, strings: Sequence[str]) -> np.ndarray:
        """For each string, whether it is in the set."""
        width = self.values.dtype.itemsize
        encoded = [text.encode("utf-8") for text in strings]
        fits = np.array([len(b) <= width and b"\x00" not in b for b in encoded], dtype=bool)
        out = np.zeros(len(encoded), dtype=bool)
        if not len(self.values) or not fits.any():
            return out
        probe = np.array([b for b, ok in zip(encoded, fits, strict=True) if ok], dtype=f"S{width}")
        position = np.searchsorted(self.values, probe)
        position = np.minimum(position, len(self.values) - 1)
        out[fits] = self.values[position] == probe
        return out


TRAIN_CACHE_NAMESPACE = "generation/train-sets"
TRAIN_CACHE_VERSION = 1


def _save_sorted(table: SortedStrings, path) -> None:
    with open(path, "wb") as handle:
        np.save(handle, table.values, allow_pickle=False)


def _load_sorted(path) -> SortedStrings:
    values = np.load(path, mmap_mode="r", allow_pickle=False)
    if values.dtype.kind != "S" or values.ndim != 1:
        raise ValueError(f"not a sorted string table (dtype {values.dtype}, {values.ndim} dimensions)")
    return SortedStrings(values)


def training_set(train, *, limit: int | None = None) -> SortedStrings | None:
    """The training SMILES: ``"moses"``, a file path, a list/set of SMILES, or ``None``.

    As in MOSES the strings are compared as given (MOSES's training SMILES are canonical).
    A file or MOSES split is indexed once and kept in chemassay's checked cache
    (``generation/train-sets``), keyed by the source's sha256: a damaged or swapped entry is
    reported and rebuilt. ``limit`` keeps the first ``limit`` SMILES.
    """
    if train is None:
        return None
    if isinstance(train, SortedStrings):
        return train
    if isinstance(train, (set, frozenset)):
        return SortedStrings.from_strings(train)
    if isinstance(train, (list, tuple)):
        return SortedStrings.from_strings(train if limit is None else train[:limit])
    def source_sha256() -> str:
        part = parse_moses_name(train)
        if part is not None:
            part = part or "train"
            moses_part_path(part)  # fetched and verified before its checksum is trusted
            return moses_part_sha256(part)

        return sha256_file(need_file(train, "training SMILES"))

    def build() -> SortedStrings:
        return SortedStrings.from_strings(smiles_set(train, limit=limit).smiles)

    key = {"what": "training set (sorted distinct SMILES)", "source_sha256": source_sha256(),
           "limit": limit, "format": TRAIN_CACHE_VERSION}
    return cached(TRAIN_CACHE_NAMESPACE, key, build, save=_save_sorted, load=_load_sorted, suffix=".npy")


# ---------------------------------------------------------------- the whole set


@dataclass
class InvalidMolecule:
    """A generated string that is not a valid molecule: its position, text, why, and its
    line in the input file (``None`` for a list)."""

    index: int
    smiles: str
    reason: str
    line: int | None = None


@dataclass
class GenerationEvaluation:
    """Everything :func:`evaluate_samples` computed: the metrics and what explains them.

    ``properties`` holds the generated molecules' logP/SA/QED/weight (one value per valid
    molecule, duplicates included, in no particular order) and ``references`` the statistics
    compared against (``"Test"``, ``"TestSF"``). ``item_scores`` holds, for each metric that
    is a mean over molecules, one value per input string (``None`` where the metric does not
    count that string): ``valid`` (every string), ``Filters`` and ``SNN/...`` (every valid
    molecule), ``Novelty`` (the first occurrence of each distinct valid molecule); each
    metric is the mean of its non-``None`` values. ``estimates`` describes metrics that were
    estimated rather than computed exactly (IntDiv of very large sets on one CPU).
    """

    metrics: dict[str, float]
    n_input: int
    n_valid: int
    n_unique_valid: int
    invalid: list[InvalidMolecule]
    dropped: list[InvalidMolecule]
    warnings: list[str]
    properties: dict[str, np.ndarray]
    references: dict[str, ReferenceStats]
    timings: dict[str, float] = field(default_factory=dict)
    item_scores: dict[str, list[float | None]] = field(default_factory=dict)
    estimates: dict = field(default_factory=dict)
    chunks: int = 0
    resumed_chunks: int = 0


def _run_manifest(input_digest: str, references: dict, train, unique_k, chunk_rows: int) -> dict:
    """What a resumable run computes: a work folder is reused only for the same manifest."""
    from chemassay.suites.generation.stream import FORMAT

    train_name = None if train is None else (train if isinstance(train, str) else f"{type(train).__name__}")
    if isinstance(train, SortedStrings):
        train_name = f"sorted set of {len(train)}"
    return {
        "format": FORMAT, "input_sha256": input_digest, "chunk_rows": chunk_rows, "unique_k": list(unique_k),
        "references": {label: [ref.name, ref.sha256, ref.n_molecules] for label, ref in references.items()},
        "train": train_name, "rdkit": rdkit.__version__,
    }


def evaluate_samples(
    gen_smiles,
    *,
    test: ReferenceSpec = "moses",
    scaffold_test: ReferenceSpec | None = "moses",
    train=DEFAULT_TRAIN,
    unique_k: Sequence[int] = DEFAULT_UNIQUE_K,
    n_jobs: int = 1,
    device: str = "cpu",
    batch_size: int = 512,
    show_progress: bool | None = None,
    scheduler: str | None = None,
    n_threads: int | None = None,
    work_dir=None,
    chunk_rows: int | None = None,
    input_sha256: str | None = None,
    intdiv_exact_max: int | None = None,
    seed: int = 0,
) -> GenerationEvaluation:
    """Compute every MOSES metric of ``gen_smiles`` and keep the details (see module doc).

    ``gen_smiles`` is a list of SMILES or an iterable of
    :class:`~chemassay.suites.generation.stream.SmilesChunk` (a file streamed with
    :func:`~chemassay.suites.generation.stream.iter_smiles_file`). ``test``/``scaffold_test``:
    ``"moses"`` (the published statistics), a SMILES file, a list of SMILES or
    :class:`ReferenceStats`; ``scaffold_test=None`` skips the ``/TestSF`` metrics. ``train``:
    ``"moses"`` (the default, as in :func:`compute_metrics` and MOSES's ``get_all_metrics``),
    a file, a list/set of SMILES, or ``None`` to leave ``Novelty`` out. ``n_jobs`` worker
    processes do the RDKit work (or ``scheduler``, a Dask address or ``"dask-local"``, runs
    it and the similarity blocks on a cluster); ``n_threads`` threads run ChemNet and the
    similarity blocks; ``device="cuda"`` puts ChemNet, SNN and IntDiv on the GPU. The input is
    processed in chunks of ``chunk_rows`` strings; with ``work_dir`` each finished chunk is
    kept there and an interrupted run resumes (``input_sha256`` names the input). IntDiv of
    more than ``intdiv_exact_max`` distinct molecules on one CPU is estimated (seeded by
    ``seed``; see :mod:`.pairs`).
    """
    from chemassay.suites.generation import stream

    clock = time.perf_counter()
    references = {"Test": resolve_reference(test, moses_set="test", n_jobs=n_jobs, device=device,
                                            batch_size=batch_size, show_progress=show_progress)}
    if scaffold_test is not None:
        references["TestSF"] = resolve_reference(
            scaffold_test, moses_set="test_scaffolds", n_jobs=n_jobs, device=device,
            batch_size=batch_size, show_progress=show_progress,
        )
    train_set = training_set(train)
    reference_seconds = time.perf_counter() - clock
    rows = chunk_rows or stream.CHUNK_ROWS
    if isinstance(gen_smiles, (list, tuple)):
        smiles = [s if isinstance(s, str) else str(s) for s in gen_smiles]
        if input_sha256 is None:
            from chemassay.suites.generation.reference import _list_digest

            input_sha256 = _list_digest(smiles)
        chunks = stream.iter_list(smiles, rows)
    else:
        chunks = gen_smiles
    if work_dir is not None and input_sha256 is None:
        raise ValueError("a resumable run (work_dir) needs input_sha256, the checksum of its input")
    options = stream.ChunkOptions(n_jobs=n_jobs, device=device, batch_size=batch_size, scheduler=scheduler,
                                  n_threads=n_threads, show_progress=show_progress)
    result = stream.evaluate_chunks(
        chunks, references=references, train_set=train_set, unique_k=unique_k, options=options,
        work_dir=work_dir, manifest=_run_manifest(input_sha256 or "", references, train, unique_k, rows),
        intdiv_exact_max=intdiv_exact_max, seed=seed,
    )
    for warning in result.warnings:
        if warning.startswith("Can't compute unique@"):
            # once, as a line (the CLI prints it; a Python user sees it once from logging),
            # and in the result's details.warnings
            from chemassay.runtime.progress import warn

            warn(warning)
    ordered = {key: result.metrics[key] for key in METRIC_KEYS if key in result.metrics}
    ordered.update({key: value for key, value in result.metrics.items() if key not in ordered})
    timings = {"references": reference_seconds, **result.timings}
    return GenerationEvaluation(
        metrics=ordered,
        n_input=result.n_input,
        n_valid=result.n_valid,
        n_unique_valid=result.n_unique_valid,
        invalid=[InvalidMolecule(i.index, i.smiles, i.reason, i.line) for i in result.invalid],
        dropped=[InvalidMolecule(i.index, i.smiles, i.reason, i.line) for i in result.dropped],
        warnings=result.warnings,
        properties=result.properties,
        references=references,
        timings=timings,
        item_scores=result.item_scores,
        estimates=result.estimates,
        chunks=result.chunks,
        resumed_chunks=result.resumed_chunks,
    )


def compute_metrics(
    gen_smiles: Sequence[str],
    *,
    test: ReferenceSpec = "moses",
    scaffold_test: ReferenceSpec | None = "moses",
    train=DEFAULT_TRAIN,
    unique_k: Sequence[int] = DEFAULT_UNIQUE_K,
    n_jobs: int = 1,
    device: str = "cpu",
    batch_size: int = 512,
    show_progress: bool | None = None,
    scheduler: str | None = None,
    n_threads: int | None = None,
) -> dict[str, float]:
    """The MOSES metrics of ``gen_smiles`` as a dict keyed like MOSES's ``get_all_metrics``.

    ``test="moses"``/``scaffold_test="moses"`` compare against the published statistics
    of the MOSES test and scaffold test sets; pass a SMILES file path, a list of SMILES or
    :class:`~chemassay.suites.generation.reference.ReferenceStats` for others (their
    statistics are cached), and ``scaffold_test=None`` to skip the ``/TestSF`` metrics.
    ``train="moses"`` (default) or a path/list gives ``Novelty``; ``None`` leaves it out.
    See :func:`evaluate_samples` for the details kept alongside (invalid strings, warnings).
    """
    return evaluate_samples(
        gen_smiles, test=test, scaffold_test=scaffold_test, train=train, unique_k=unique_k,
        n_jobs=n_jobs, device=device, batch_size=batch_size, show_progress=show_progress,
        scheduler=scheduler, n_threads=n_threads,
    ).metrics


# ---------------------------------------------------------------- metric cards

_SETS = {"Test": "the MOSES test set (or the `test` reference given)",
         "TestSF": "the MOSES scaffold test set (or the `scaffold_test` reference given)"}
_W1_NOTE = "a distance between two samples' distributions, not a mean over molecules"


def unique_computed_on(result: Any, key: str) -> int | None:
    """The valid molecules ``unique@k`` of ``result`` was computed on, when fewer than ``k``
    (MOSES then divides by the number available: the value is ``unique@N``)."""
    try:
        k = int(key.rsplit("@", 1)[1])
    except (IndexError, ValueError):
        return None
    counts = getattr(getattr(result, "details", None), "counts", None)
    valid = getattr(counts, "valid", None)
    return int(valid) if isinstance(valid, int) and 0 < valid < k else None


def _cards() -> list[MetricCard]:
    cards = [
        MetricCard("valid", "generation", "fraction of generated strings that are valid molecules (RDKit parses them)",
                   "higher", (0.0, 1.0), "Valid", "Table 1", interval="wilson"),
        MetricCard("unique@{k}", "generation",
                   "distinct canonical SMILES among the first k valid molecules, divided by k (with fewer than k "
                   "valid molecules: divided by their number, with a warning, as MOSES does)",
                   "higher", (0.0, 1.0), "Unique@1k / Unique@10k", "Table 1",
                   interval_note="a count of distinct molecules over a prefix, not a mean over molecules",
                   computed_on=unique_computed_on),
    ]
    for label, what in _SETS.items():
        cards += [
            MetricCard(f"FCD/{label}", "generation",
                       f"Fréchet ChemNet Distance between the valid generated molecules and {what}",
                       "lower", (0.0, None), f"FCD/{label}", "Table 3",
                       interval_note="a distance between two Gaussian fits of ChemNet activations, not a mean over molecules"),
            MetricCard(f"SNN/{label}", "generation",
                       f"mean over valid generated molecules of the highest Tanimoto similarity (Morgan r=2, 1024 "
                       f"bits) to a molecule of {what}",
                       "higher", (0.0, 1.0), f"SNN/{label}", "Table 3", interval="bootstrap"),
            MetricCard(f"Frag/{label}", "generation",
                       f"cosine similarity of BRICS-fragment counts of the valid generated molecules and {what}",
                       "higher", (0.0, 1.0), f"Frag/{label}", "Table 4",
                       interval_note="a cosine of two count vectors over the whole set, not a mean over molecules"),
            MetricCard(f"Scaf/{label}", "generation",
                       f"cosine similarity of Bemis-Murcko scaffold counts of the valid generated molecules and {what}",
                       "higher", (0.0, 1.0), f"Scaf/{label}", "Table 4",
                       interval_note="a cosine of two count vectors over the whole set, not a mean over molecules"),
        ]
    cards += [
        MetricCard("IntDiv", "generation", "internal diversity: 1 - mean pairwise Tanimoto similarity of the valid "
                   "generated molecules (self-pairs included); exact, except above --intdiv-exact-max distinct "
                   "molecules on one CPU, where it is an estimate (result: estimates, config.intdiv)",
                   "higher", (0.0, 1.0), "IntDiv1", "Table 2",
                   interval_note="exact: a mean over pairs of molecules, not over molecules (no interval); an "
                                 "estimate carries a 95 % normal-approximation interval over its sampled molecules"),
        MetricCard("IntDiv2", "generation", "internal diversity with p=2: 1 - mean_i sqrt(mean_j T_ij^2); estimated "
                   "like IntDiv above --intdiv-exact-max distinct molecules on one CPU",
                   "higher", (0.0, 1.0), "IntDiv2", "Table 2",
                   interval_note="exact: a mean over pairs of molecules, not over molecules (no interval); an "
                                 "estimate carries a 95 % normal-approximation interval over its sampled molecules"),
        MetricCard("Filters", "generation", "fraction of valid generated molecules passing the MOSES filters "
                   "(MCF, PAINS, allowed atoms, no charges, no rings of 8+ atoms)",
                   "higher", (0.0, 1.0), "Filters", "Table 2", interval="wilson"),
        MetricCard("logP", "generation", "Wasserstein-1 distance between the Crippen logP of the valid generated "
                   "molecules and of the test set", "lower", (0.0, None), "logP (W1)", "Figure 4",
                   interval_note=_W1_NOTE),
        MetricCard("SA", "generation", "Wasserstein-1 distance between the synthetic accessibility scores of the "
                   "valid generated molecules and of the test set", "lower", (0.0, 9.0), "SA (W1)", "Figure 4",
                   interval_note=_W1_NOTE),
        MetricCard("QED", "generation", "Wasserstein-1 distance between the QED drug-likeness of the valid "
                   "generated molecules and of the test set", "lower", (0.0, 1.0), "QED (W1)", "Figure 4",
                   interval_note=_W1_NOTE),
        MetricCard("weight", "generation", "Wasserstein-1 distance between the molecular weights (Da) of the valid "
                   "generated molecules and of the test set", "lower", (0.0, None), "weight (W1)", "Figure 4",
                   interval_note=_W1_NOTE),
        MetricCard("Novelty", "generation", "fraction of distinct valid generated molecules (canonical SMILES) not "
                   "in the training set", "higher", (0.0, 1.0), "Novelty", "Table 2", interval="wilson"),
    ]
    count_note = "a count of molecules, not an estimate"
    cards += [
        MetricCard("n_input", "generation", "filter: molecules read from the input", "none", (0.0, None),
                   interval_note=count_note),
        MetricCard("n_kept", "generation", "filter: molecules passing every MOSES filter", "none", (0.0, None),
                   interval_note=count_note),
        MetricCard("n_removed", "generation", "filter: molecules failing at least one MOSES filter", "none",
                   (0.0, None), interval_note=count_note),
        MetricCard("fraction_kept", "generation", "filter: n_kept / n_input", "none", (0.0, 1.0),
                   interval_note="a fraction of a data set, not an estimate"),
        MetricCard("removed/{filter}", "generation",
                   "filter: molecules removed by this filter, their first failing one in the order parse, ring_size, "
                   "charge, atoms, mcf, pains, roundtrip (the counts add up to n_removed)",
                   "none", (0.0, None), interval_note=count_note),
        MetricCard("failing/{filter}", "generation", "filter: molecules failing this filter (first failure or not)",
                   "none", (0.0, None), interval_note=count_note),
        MetricCard("n_train", "generation", "split: molecules in the training part", "none", (0.0, None),
                   interval_note=count_note),
        MetricCard("n_test", "generation", "split: molecules in the random test part", "none", (0.0, None),
                   interval_note=count_note),
        MetricCard("n_test_scaffolds", "generation", "split: molecules in the scaffold test part (held-out scaffolds)",
                   "none", (0.0, None), interval_note=count_note),
        MetricCard("n_skipped", "generation", "split: inputs left out (invalid SMILES, repeated molecules)", "none",
                   (0.0, None), interval_note=count_note),
        MetricCard("n_scaffolds", "generation", "split: distinct Bemis-Murcko scaffolds of the kept molecules", "none",
                   (0.0, None), interval_note=count_note),
        MetricCard("n_held_out_scaffolds", "generation", "split: scaffolds held out for the scaffold test part",
                   "none", (0.0, None), interval_note=count_note),
        MetricCard("n_acyclic", "generation", "split: kept molecules without a ring (never held out)", "none",
                   (0.0, None), interval_note=count_note),
    ]
    return cards


METRIC_CARDS: list[MetricCard] = _cards()
"""Every metric key a generation result can carry (``evaluate``, ``filter``, ``split``)."""
