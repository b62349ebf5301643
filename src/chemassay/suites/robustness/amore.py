"""The AMORE pipeline: augment a molecule set, embed both sides, score retrieval.

:func:`augmented_rows` makes (and caches) one augmentation of a molecule table;
:func:`score_embeddings` scores aligned original/augmented embeddings in both directions,
leaving out (and reporting) pairs that cannot be scored; :func:`run_amore` does every
augmentation for one encoder and returns the rows of the paper's table.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from chemassay.data import chemassay_home
from chemassay.runtime.files import atomic_write_text, sha256_text
from chemassay.suites.robustness.augment import (
    ALGORITHM_VERSION,
    AMORE_AUGMENTATIONS,
    RANDOM_AUGMENTATIONS,
    STATUS_FAILED,
    STATUS_NOT_APPLICABLE,
    AugmentedRow,
    augment_many,
)
from chemassay.suites.robustness.datasets import MoleculeTable
from chemassay.suites.robustness.encoders import encode_cached
from chemassay.suites.robustness.retrieval import DEFAULT_KS, score_pair

AUGMENTED_COLUMNS = ("row", "id", "SMILES", "original", "status", "reason")


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
    """Augment every molecule of ``table`` with ``kind`` (identity-checked), cached on disk.

    The cache file is keyed by the SMILES checksum, the augmentation, the seed (for the
    random ones), the RDKit version (RDKit's writer output can change between versions)
    and :data:`ALGORITHM_VERSION`.
    """
    from rdkit import __version__ as rdkit_version

    seed_part = f"-seed{seed}" if kind in RANDOM_AUGMENTATIONS else ""
    key = sha256_text(f"{table.checksum()}|{kind}|{seed_part}|{rdkit_version}|{ALGORITHM_VERSION}")[:24]
    path = chemassay_home() / "cache" / "robustness" / "augmented" / f"{kind}{seed_part}-{key}.csv"
    if use_cache and path.is_file():
        rows = rows_from_csv(path.read_text(encoding="utf-8"))
        if len(rows) == len(table) and all(r.original == s for r, s in zip(rows, table.smiles, strict=True)):
            return rows
    rows = augment_many(table.smiles, kind, seed=seed, n_jobs=n_jobs)
    if use_cache:
        atomic_write_text(path, rows_to_csv(rows, table.ids))
    return rows


@dataclass
class PairScores:
    """Metrics of one original/augmented pair of embedding sets, per layer."""

    metrics: dict[str, float]
    per_layer: list[dict[str, float]]
    ranks: dict[str, np.ndarray]
    kept: np.ndarray
    skipped: list[dict] = field(default_factory=list)


def _select_rows(matrix, keep: np.ndarray):
    return matrix[keep]


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
        scores = score_pair(_select_rows(original, index), _select_rows(augmented, index), metric=metric,
                            ties=ties, backend=backend, ks=ks)
        per_layer.append(scores.metrics)
        ranks = scores.ranks
    return PairScores(per_layer[-1], per_layer, ranks, index)


def pair_skips(rows: Sequence[AugmentedRow], table: MoleculeTable, failures: dict[int, str]) -> tuple[np.ndarray, list[dict]]:
    """Which pairs can be scored, and a skipped entry (line, id, reason) for each that cannot."""
    keep = np.ones(len(rows), dtype=bool)
    skipped = []
    for row in rows:
        reason = None
        if row.status == STATUS_FAILED:
            reason = f"augmentation failed: {row.reason}"
        elif row.index in failures:
            reason = f"could not embed: {failures[row.index]}"
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


def string_statistics(originals: Sequence[str], augmented: Sequence[str]) -> dict[str, float]:
    """Mean SMILES length, mean Levenshtein ratio to the original, share of unchanged strings."""
    from rapidfuzz.distance import Levenshtein

    if not originals:
        return {"mean_length": float("nan"), "mean_levenshtein_ratio": float("nan"), "unchanged": float("nan")}
    ratios = [Levenshtein.normalized_similarity(a, b) for a, b in zip(originals, augmented, strict=True)]
    return {
        "mean_length": float(np.mean([len(s) for s in augmented])),
        "mean_levenshtein_ratio": float(np.mean(ratios)),
        "unchanged": float(np.mean([a == b for a, b in zip(originals, augmented, strict=True)])),
    }


def run_amore(
    table: MoleculeTable, encoder, *, augmentations: Sequence[str] = AMORE_AUGMENTATIONS, layers: str = "last",
    metric: str = "l2", ties: str = "index", backend: str = "auto", seed: int = 0, n_jobs: int = 1,
    use_cache: bool = True, ks: tuple[int, ...] = DEFAULT_KS,
) -> AmoreRun:
    """Every augmentation of ``table`` scored with ``encoder``: the paper's table rows.

    Rows an augmentation does not apply to (no ring for ``cycle_renumber``) stay in, as in
    AMORE, and are counted in ``not_applied``; failed rows and rows the encoder cannot
    embed are left out of both sides and listed in ``skipped``.
    """
    original = encode_cached(encoder, table.smiles, layers, use_cache=use_cache)
    table_rows = []
    metrics: dict[str, float] = {}
    per_layer: dict[str, list[dict[str, float]]] = {}
    skipped: list[dict] = []
    not_applied: dict[str, int] = {}
    n_scored: dict[str, int] = {}
    string_stats: dict[str, dict[str, float]] = {"original": string_statistics(table.smiles, table.smiles)}
    for kind in augmentations:
        rows = augmented_rows(table, kind, seed=seed, n_jobs=n_jobs, use_cache=use_cache)
        augmented_text = [row.augmented if row.augmented else row.original for row in rows]
        augmented = encode_cached(encoder, augmented_text, layers, use_cache=use_cache)
        failures = {**original.failures, **augmented.failures}
        keep, kind_skipped = pair_skips(rows, table, failures)
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
        table_rows.append({"augmentation": kind, "n": int(keep.sum()), "not_applied": not_applied[kind],
                           **{k: v for k, v in scores.metrics.items() if "tied" not in k}})
    return AmoreRun(table_rows, metrics, per_layer, skipped, not_applied, n_scored, string_stats)


def run_result(outcome: AmoreRun, encoder, *, dataset, inputs, config: dict, elapsed_s: float,
               malformed: Sequence[tuple[int, str]] = (), task: str = "amore"):
    """The :class:`~chemassay.report.Result` of :func:`run_amore` (used by ``run`` and the demo).

    Metrics are ``<augmentation>/<direction>_<metric>`` (e.g. ``canonical/o2a_acc@1``) and,
    when every layer was scored, ``<augmentation>/layer<L>/<direction>_<metric>``; extra
    fields: ``table`` (the paper's rows), ``not_applied``, ``strings`` and ``per_layer``.
    """
    from chemassay.report.result import Result, SkippedItem

    # Headline first (the demo summary shows the first scalars): Acc@1 of every augmentation.
    headline = {k: v for k, v in outcome.metrics.items() if k.endswith("/o2a_acc@1")}
    metrics = {**headline, **{k: v for k, v in outcome.metrics.items() if k not in headline}}
    extra: dict = {"table": outcome.table_rows, "not_applied": outcome.not_applied, "strings": outcome.string_stats}
    if any(len(layers) > 1 for layers in outcome.per_layer.values()):
        extra["per_layer"] = outcome.per_layer
        for kind, per_layer in outcome.per_layer.items():
            for layer, values in enumerate(per_layer):
                for key in ("o2a_acc@1", "a2o_acc@1", "o2a_mrr", "a2o_mrr"):
                    metrics[f"{kind}/layer{layer}/{key}"] = values[key]
    skipped = [SkippedItem(**s) for s in outcome.skipped]
    skipped += [SkippedItem(line=line, reason=f"malformed input row: {reason}") for line, reason in malformed]
    return Result(
        suite="robustness", task=task, metrics=metrics, n=max(outcome.n_scored.values(), default=0),
        skipped=skipped, dataset=dataset, inputs=inputs, config={**encoder.describe(), **config},
        elapsed_s=round(elapsed_s, 3), **extra,
    )


TABLE_COLUMNS = ("o2a_acc@1", "o2a_acc@5", "o2a_mrr", "a2o_acc@1", "a2o_acc@5", "a2o_mrr")


def markdown_table(rows: Sequence[dict], title: str = "") -> str:
    """The paper's Table 1/2 layout: one row per augmentation, Acc@1/Acc@5/MRR both ways (in %)."""
    header = "| augmentation | n | " + " | ".join(TABLE_COLUMNS) + " |"
    lines = ([f"**{title}**", ""] if title else []) + [header, "|" + " --- |" * (len(TABLE_COLUMNS) + 2)]
    for row in rows:
        cells = [f"{100 * row[c]:.1f}" if row.get(c) is not None and row[c] == row[c] else "-" for c in TABLE_COLUMNS]
        lines.append(f"| {row['augmentation']} | {row['n']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot_layers(per_layer: dict[str, list[dict[str, float]]], path, *, title: str = "", key: str = "o2a_acc@1") -> None:
    """Fig. 3 of the paper: ``key`` per hidden layer (0 = embeddings), one line per augmentation."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from chemassay.runtime.files import atomic_writer

    figure, axis = plt.subplots(figsize=(6.4, 4.0))
    for kind, layers in per_layer.items():
        axis.plot(range(len(layers)), [100 * layer[key] for layer in layers], marker="o", label=kind)
    from matplotlib.ticker import MaxNLocator

    axis.xaxis.set_major_locator(MaxNLocator(integer=True))
    axis.set_xlabel("layer (0 = embedding layer)")
    axis.set_ylabel(f"{key} (%)")
    axis.set_ylim(-2, 102)
    axis.grid(alpha=0.3)
    axis.legend()
    if title:
        axis.set_title(title)
    figure.tight_layout()
    with atomic_writer(path, "wb", encoding=None) as handle:
        figure.savefig(handle, format="png", dpi=120)
    plt.close(figure)
