"""The AMORE pipeline: augment a molecule set, embed both sides, score retrieval.

:func:`augmented_rows` makes (and caches) one augmentation of a molecule table;
:func:`score_embeddings` scores aligned original/augmented embeddings in both directions,
leaving out (and reporting) pairs that cannot be scored; :func:`run_amore` does every
augmentation for one encoder and returns the rows of the paper's table. The Python API
(:mod:`.api`) turns their output into a :class:`~chemassay.contract.result.Result`.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from rapidfuzz.distance import Levenshtein
from rdkit import __version__ as rdkit_version

from chemassay.contract import Run
from chemassay.runtime.cache import cached
from chemassay.suites.robustness.augment import (
    ALGORITHM_VERSION,
    DEFAULT_AUGMENTATIONS,
    RANDOM_AUGMENTATIONS,
    STATUS_FAILED,
    STATUS_NOT_APPLICABLE,
    AugmentedRow,
    augment_many,
)
from chemassay.suites.robustness.data import MoleculeTable
from chemassay.suites.robustness.encoders import encode_cached, nonfinite_rows
from chemassay.suites.robustness.retrieval import (
    DEFAULT_KS,
    DIRECTIONS,
    per_query_scores,
    score_pair,
)

AUGMENTED_COLUMNS = ("row", "id", "SMILES", "original", "status", "reason")
AUGMENTED_CACHE = "robustness/augmented"


def rows_to_csv(rows: Sequence[AugmentedRow], ids: Sequence[str]) -> str:
    """CSV text of augmented rows (``row,id,SMILES,original,status,reason``)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(AUGMENTED_COLUMNS)
    for row in rows:
        writer.writerow([row.index, ids[row.index], row.augmented, row.original, row.status, row.reason])
    return buffer.getvalue()


def rows_from_csv(text: str) -> list[AugmentedRow]:
    """Inverse of :func:`rows_to_csv`."""
    reader = csv.DictReader(io.StringIO(text))
    return [AugmentedRow(int(r["row"]), r["original"], r["SMILES"], r["status"], r["reason"]) for r in reader]


def augmented_rows(table: MoleculeTable, kind: str, *, seed: int = 0, n_jobs: int = 1,
                   use_cache: bool = True) -> list[AugmentedRow]:
    """Augment every molecule of ``table`` with ``kind`` (identity-checked), cached.

    The cache entry (:mod:`chemassay.runtime.cache`, namespace ``robustness/augmented``) is
    keyed by the SMILES checksum, the augmentation, the seed (for the random ones), the
    RDKit version (RDKit's writer output can change between versions) and
    :data:`~.augment.ALGORITHM_VERSION`; a damaged or altered entry is reported and rebuilt.
    """
    def build() -> list[AugmentedRow]:
        return augment_many(table.smiles, kind, seed=seed, n_jobs=n_jobs)

    if not use_cache:
        return build()
    key = {"smiles_sha256": table.checksum(), "n": len(table), "kind": kind,
           "seed": seed if kind in RANDOM_AUGMENTATIONS else None, "rdkit": rdkit_version,
           "algorithm": ALGORITHM_VERSION}

    def load(path: Path) -> list[AugmentedRow]:
        rows = rows_from_csv(path.read_text(encoding="utf-8"))
        if len(rows) != len(table) or any(r.original != s for r, s in zip(rows, table.smiles, strict=True)):
            raise ValueError("its rows are not this table's molecules")
        return rows

    def save(rows: list[AugmentedRow], path: Path) -> None:
        path.write_text(rows_to_csv(rows, table.ids), encoding="utf-8")

    return cached(AUGMENTED_CACHE, key, build, save=save, load=load, suffix=".csv")


@dataclass
class PairScores:
    """Metrics of one original/augmented pair of embedding sets, per layer."""

    metrics: dict[str, float]
    per_layer: list[dict[str, float]]
    ranks: dict[str, np.ndarray]
    kept: np.ndarray
    per_query: dict[str, np.ndarray] = field(default_factory=dict)
    """Per kept query (last layer): ``<direction>_acc@k``, ``_mrr``, ``_mean_rank`` values."""


def score_embeddings(
    original_layers: list, augmented_layers: list, *, keep: np.ndarray | None = None,
    metric: str = "l2", ties: str = "index", backend: str = "auto", ks: tuple[int, ...] = DEFAULT_KS,
) -> PairScores:
    """Score aligned embeddings layer by layer; ``keep`` selects the scoreable rows.

    The metrics of the last layer are returned flat (``o2a_acc@1`` ...); ``per_layer``
    holds the same keys for every layer (layer 0 = embeddings when all layers are given).
    """
    n = original_layers[0].shape[0]
    keep = np.ones(n, dtype=bool) if keep is None else keep
    index = np.flatnonzero(keep)
    per_layer = []
    ranks: dict[str, np.ndarray] = {}
    for original, augmented in zip(original_layers, augmented_layers, strict=True):
        scores = score_pair(original[index], augmented[index], metric=metric, ties=ties, backend=backend, ks=ks)
        per_layer.append(scores.metrics)
        ranks = scores.ranks
    per_query = {f"{direction}_{key}": values for direction in DIRECTIONS
                 for key, values in per_query_scores(ranks[direction], ks).items()}
    return PairScores(per_layer[-1], per_layer, ranks, index, per_query)


def pair_skips(rows: Sequence[AugmentedRow], table: MoleculeTable, failures: dict[int, str],
               nonfinite: Sequence[int] = ()) -> tuple[np.ndarray, list[dict]]:
    """Which pairs can be scored, and a skipped entry (line, id, reason) for each that cannot."""
    keep = np.ones(len(rows), dtype=bool)
    skipped = []
    bad_values = set(int(i) for i in nonfinite)
    for row in rows:
        reason = None
        if row.status == STATUS_FAILED:
            reason = f"augmentation failed: {row.reason}"
        elif row.index in failures:
            reason = f"could not embed: {failures[row.index]}"
        elif row.index in bad_values:
            reason = "embedding has NaN or infinite values"
        if reason:
            keep[row.index] = False
            skipped.append({"line": table.lines[row.index], "item": table.ids[row.index], "reason": reason})
    return keep, skipped


@dataclass
class AmoreRun:
    """Everything :func:`run_amore` measured for one encoder on one molecule set."""

    table_rows: list[dict]
    metrics: dict[str, float]
    per_layer: dict[str, list[dict[str, float]]]
    skipped: list[dict]
    not_applied: dict[str, int]
    n_scored: dict[str, int]
    string_stats: dict[str, dict[str, float]]
    item_scores: dict[str, list[float | None]] = field(default_factory=dict)
    """Per molecule of the table (``None`` where the pair was not scored), for intervals."""
    truncated: list[int] = field(default_factory=list)
    misses: list[dict] = field(default_factory=list)
    """Up to :data:`MISSES_PER_AUGMENTATION` molecules per augmentation whose rewritten string
    is not retrieved first (original→augmented): ``augmentation``, ``id``, ``original``,
    ``augmented`` and ``rank`` (1-based, last layer), for failure galleries."""
    run: Run | None = None
    """The latest run of the encoder (:func:`chemassay.models.run`; ``None`` when the embeddings
    cache answered every list): the model's identity and its request counts so far."""


MISSES_PER_AUGMENTATION = 20


def levenshtein_ratio(original: str, augmented: str) -> float:
    """The AMORE paper's Levenshtein ratio (its Table 11): edit distance divided by the length
    of the original string. Unbounded (1.49 on average for explicit hydrogens, whose strings
    double in length); 0 for an unchanged string. Not rapidfuzz's ``ratio``/normalized
    similarity, which is ``1 - distance / max(len)`` and lies in [0, 1]."""
    return Levenshtein.distance(original, augmented) / max(1, len(original))


def normalized_similarity(original: str, augmented: str) -> float:
    """rapidfuzz's normalized Levenshtein similarity, ``1 - distance / max(len(a), len(b))``
    (1 = unchanged, 0 = nothing in common)."""
    return Levenshtein.normalized_similarity(original, augmented)


def string_statistics(originals: Sequence[str], augmented: Sequence[str]) -> dict[str, float]:
    """The paper's string analysis (Table 11): mean and std of the augmented SMILES length and
    of the Levenshtein ratio to the original (:func:`levenshtein_ratio`, distance / original
    length), the mean normalized similarity (:func:`normalized_similarity`, a different,
    bounded quantity) and the share of unchanged strings."""
    keys = ("mean_length", "std_length", "mean_levenshtein_ratio", "std_levenshtein_ratio",
            "mean_normalized_similarity", "unchanged")
    if not originals:
        return {key: float("nan") for key in keys}
    pairs = list(zip(originals, augmented, strict=True))
    ratios = [levenshtein_ratio(a, b) for a, b in pairs]
    lengths = [len(b) for b in augmented]
    return {
        "mean_length": float(np.mean(lengths)), "std_length": float(np.std(lengths)),
        "mean_levenshtein_ratio": float(np.mean(ratios)), "std_levenshtein_ratio": float(np.std(ratios)),
        "mean_normalized_similarity": float(np.mean([normalized_similarity(a, b) for a, b in pairs])),
        "unchanged": float(np.mean([a == b for a, b in pairs])),
    }


def spread(values: np.ndarray, kept: np.ndarray, n: int) -> list[float | None]:
    """Per-kept-row ``values`` placed at their rows of an ``n``-row table, ``None`` elsewhere."""
    out: list[float | None] = [None] * n
    for position, row in enumerate(kept):
        out[int(row)] = float(values[position])
    return out


def run_amore(
    table: MoleculeTable, encoder, *, augmentations: Sequence[str] = DEFAULT_AUGMENTATIONS, layers: str = "last",
    metric: str = "l2", ties: str = "index", backend: str = "auto", seed: int = 0, n_jobs: int = 1,
    use_cache: bool = True, ks: tuple[int, ...] = DEFAULT_KS,
) -> AmoreRun:
    """Every augmentation of ``table`` scored with ``encoder``: the paper's table rows.

    Rows an augmentation does not apply to (no ring for ``cycle_renumber``) stay in, as in
    AMORE, and are counted in ``not_applied``; failed rows, rows the encoder cannot embed
    and rows whose embedding has NaN values are left out of both sides and listed in
    ``skipped``.
    """
    original = encode_cached(encoder, table.smiles, layers, use_cache=use_cache)
    latest = original.run
    original_bad = set(nonfinite_rows(original.layers).tolist())
    table_rows = []
    metrics: dict[str, float] = {}
    per_layer: dict[str, list[dict[str, float]]] = {}
    skipped: list[dict] = []
    not_applied: dict[str, int] = {}
    n_scored: dict[str, int] = {}
    item_scores: dict[str, list[float | None]] = {}
    misses: list[dict] = []
    truncated = set(original.truncated)
    string_stats: dict[str, dict[str, float]] = {"original": string_statistics(table.smiles, table.smiles)}
    for kind in augmentations:
        rows = augmented_rows(table, kind, seed=seed, n_jobs=n_jobs, use_cache=use_cache)
        augmented_text = [row.augmented if row.augmented else row.original for row in rows]
        augmented = encode_cached(encoder, augmented_text, layers, use_cache=use_cache)
        latest = augmented.run or latest
        truncated |= set(augmented.truncated)
        failures = {**original.failures, **augmented.failures}
        nonfinite = original_bad | set(nonfinite_rows(augmented.layers).tolist())
        keep, kind_skipped = pair_skips(rows, table, failures, sorted(nonfinite))
        for entry in kind_skipped:
            entry["augmentation"] = kind
        skipped += kind_skipped
        scores = score_embeddings(original.layers, augmented.layers, keep=keep, metric=metric, ties=ties,
                                  backend=backend, ks=ks)
        not_applied[kind] = sum(row.status == STATUS_NOT_APPLICABLE for row in rows)
        n_scored[kind] = int(keep.sum())
        per_layer[kind] = scores.per_layer
        kept_index = np.flatnonzero(keep)
        string_stats[kind] = string_statistics([table.smiles[i] for i in kept_index], [augmented_text[i] for i in kept_index])
        for key, value in scores.metrics.items():
            metrics[f"{kind}/{key}"] = value
        for key, values in scores.per_query.items():
            item_scores[f"{kind}/{key}"] = spread(values, scores.kept, len(table))
        ranks = np.asarray(scores.ranks["o2a"], dtype=np.int64) + 1
        missed = [(int(row), int(rank)) for row, rank in zip(scores.kept, ranks, strict=True) if rank > 1]
        misses += [{"augmentation": kind, "id": str(table.ids[row]), "original": table.smiles[row],
                    "augmented": augmented_text[row], "rank": rank} for row, rank in missed[:MISSES_PER_AUGMENTATION]]
        table_rows.append({"augmentation": kind, "n": int(keep.sum()), "not_applied": not_applied[kind],
                           **{k: v for k, v in scores.metrics.items() if "tied" not in k}})
    return AmoreRun(table_rows, metrics, per_layer, skipped, not_applied, n_scored, string_stats, item_scores,
                    sorted(truncated), misses, latest)


TABLE_COLUMNS = ("o2a_acc@1", "o2a_acc@5", "o2a_mrr", "a2o_acc@1", "a2o_acc@5", "a2o_mrr")


def markdown_table(rows: Sequence[dict], title: str = "") -> str:
    """The paper's Table 1/2 layout: one row per augmentation, Acc@1/Acc@5/MRR both ways (in %)."""
    header = "| augmentation | n | " + " | ".join(TABLE_COLUMNS) + " |"
    lines = ([f"**{title}**", ""] if title else []) + [header, "|" + " --- |" * (len(TABLE_COLUMNS) + 2)]
    for row in rows:
        cells = [f"{100 * row[c]:.1f}" if row.get(c) is not None and row[c] == row[c] else "-" for c in TABLE_COLUMNS]
        lines.append(f"| {row['augmentation']} | {row['n']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def layers_table(per_layer: dict[str, list[dict[str, float]]], key: str = "acc@1") -> str:
    """Every layer at a glance: one row per augmentation, one column per layer (0 = embedding
    layer), each cell ``o2a/a2o`` of ``key`` in percent (e.g. ``63.0/61.2``)."""
    n_layers = max((len(values) for values in per_layer.values()), default=0)
    header = "| augmentation | " + " | ".join(f"L{i}" for i in range(n_layers)) + " |"
    lines = [f"{key} per layer, original->augmented / augmented->original (%)", "", header,
             "|" + " --- |" * (n_layers + 1)]

    def cell(values: dict[str, float], direction: str) -> str:
        value = values.get(f"{direction}_{key}")
        return "-" if value is None or value != value else f"{100 * value:.1f}"

    for kind, values in per_layer.items():
        cells = [f"{cell(layer, 'o2a')}/{cell(layer, 'a2o')}" for layer in values]
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
