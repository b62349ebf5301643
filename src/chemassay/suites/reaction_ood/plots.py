"""The suite's figures (matplotlib, Agg backend, PNG): the paper's Figs. 2/4, 3 and 6.

* :func:`plot_split_bars` — top-k accuracy per split as grouped bars (Figs. 2 and 4).
* :func:`plot_accuracy_by_year` — accuracy per test year, one line per training cutoff (Fig. 3).
* :func:`plot_shift_histograms` — distance-to-training histograms per split with medians (Fig. 6).
"""

from __future__ import annotations

import io
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from chemassay.runtime.files import atomic_write_bytes


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def _save(fig, out: str | os.PathLike) -> Path:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=130, bbox_inches="tight")
    _pyplot().close(fig)
    target = Path(out)
    atomic_write_bytes(target, buffer.getvalue())
    return target


def plot_split_bars(
    results: Mapping[str, Mapping[str, float]],
    out: str | os.PathLike,
    *,
    metrics: Sequence[str] = ("top1_accuracy", "top5_accuracy"),
    title: str = "Top-k accuracy per split",
) -> Path:
    """Grouped bars: one group per split (dict order), one bar per metric present."""
    plt = _pyplot()
    labels = list(results)
    shown = [m for m in metrics if any(m in results[label] for label in labels)]
    fig, ax = plt.subplots(figsize=(max(4.0, 1.4 * len(labels) + 1.5), 3.6))
    width = 0.8 / max(1, len(shown))
    positions = np.arange(len(labels))
    for i, metric in enumerate(shown):
        values = [results[label].get(metric, np.nan) for label in labels]
        values = [np.nan if v is None else 100.0 * float(v) for v in values]
        bars = ax.bar(positions + (i - (len(shown) - 1) / 2) * width, values, width, label=metric.replace("_", " "))
        for bar, value in zip(bars, values, strict=True):
            if np.isfinite(value):
                ax.annotate(f"{value:.1f}", (bar.get_x() + bar.get_width() / 2, value), ha="center",
                            va="bottom", fontsize=7, xytext=(0, 1), textcoords="offset points")
    ax.set_xticks(positions, labels, rotation=20 if len(labels) > 4 else 0, ha="right" if len(labels) > 4 else "center")
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(0, 105)
    ax.set_title(title)
    ax.legend(fontsize=8, frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    return _save(fig, out)


def plot_accuracy_by_year(
    lines: Mapping[str, Sequence[tuple[int, float, int]]],
    out: str | os.PathLike,
    *,
    cutoffs: Mapping[str, int] | None = None,
    metric_label: str = "top-1 accuracy (%)",
    min_n: int = 1,
    title: str = "Accuracy per test year, one line per training cutoff",
) -> Path:
    """One line per model (training cutoff): accuracy against test year.

    ``lines[label]`` holds ``(year, accuracy, n)`` triples; points with fewer than ``min_n``
    test reactions are left out. ``cutoffs[label]`` draws a dotted marker at the cutoff year
    in the line's colour.
    """
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for label, points in lines.items():
        kept = sorted((y, a) for y, a, n in points if n >= min_n and a is not None and np.isfinite(a))
        if not kept:
            continue
        years, accuracies = zip(*kept, strict=True)
        (line,) = ax.plot(years, [100.0 * a for a in accuracies], marker="o", markersize=3, label=label)
        if cutoffs and label in cutoffs:
            ax.axvline(cutoffs[label] + 0.5, color=line.get_color(), linestyle=":", linewidth=1)
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("test year")
    ax.set_ylabel(metric_label)
    ax.set_title(title)
    ax.legend(fontsize=8, frameon=False, title="trained up to", title_fontsize=8)
    ax.spines[["top", "right"]].set_visible(False)
    return _save(fig, out)


def plot_shift_histograms(
    distances: Mapping[str, Mapping[str, np.ndarray]],
    out: str | os.PathLike,
    *,
    k: int = 5,
    bins: int = 40,
) -> Path:
    """Histograms of the mean distance to the ``k`` nearest training reactions, per split,
    one panel per space, with each split's median as a dashed line."""
    plt = _pyplot()
    spaces = [("reactant", "reactant fingerprints"), ("difference", "reaction difference fingerprints")]
    fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.4), sharey=False)
    for ax, (space, label) in zip(axes, spaces, strict=True):
        edges = np.linspace(0.0, 1.0, bins + 1)
        for split, per_space in distances.items():
            values = np.asarray(per_space.get(space, []), dtype=float)
            values = values[np.isfinite(values)]
            if values.size == 0:
                continue
            weights = np.full(values.size, 1.0 / values.size)
            (_, _, patches) = ax.hist(values, bins=edges, weights=weights, histtype="step", linewidth=1.4,
                                      label=f"{split} (median {np.median(values):.3f})")
            ax.axvline(np.median(values), color=patches[0].get_edgecolor(), linestyle="--", linewidth=1)
        ax.set_xlabel(f"mean cosine distance to {k} nearest training reactions")
        ax.set_ylabel("fraction of test reactions")
        ax.set_title(label, fontsize=10)
        ax.legend(fontsize=7, frameon=False)
        ax.spines[["top", "right"]].set_visible(False)
    return _save(fig, out)
