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


def _metrics_and_intervals(value: object) -> tuple[Mapping[str, float], Mapping[str, tuple[float, float]]]:
    """The metrics of a result (or of a plain mapping) and the 95 % intervals it carries."""
    metrics = getattr(value, "metrics", None)
    if metrics is None:
        return value, {}  # type: ignore[return-value]
    intervals = {key: (interval.low, interval.high) for key, interval in (getattr(value, "intervals", None) or {}).items()
                 if interval.low is not None and interval.high is not None}
    return metrics, intervals


def plot_split_bars(
    results: Mapping[str, object],
    out: str | os.PathLike,
    *,
    metrics: Sequence[str] = ("top1_accuracy", "top5_accuracy"),
    title: str = "Top-k accuracy per split",
) -> Path:
    """Grouped bars: one group per split (dict order), one bar per metric present.

    ``results[label]`` is an ``evaluate`` :class:`~chemassay.contract.result.Result`, whose 95 %
    intervals are drawn as whiskers, or a plain mapping of metrics (bars only). The x label
    says what the whiskers are, or that there are none.
    """
    plt = _pyplot()
    labels = list(results)
    unpacked = {label: _metrics_and_intervals(results[label]) for label in labels}
    shown = [m for m in metrics if any(m in unpacked[label][0] for label in labels)]
    fig, ax = plt.subplots(figsize=(max(4.0, 1.4 * len(labels) + 1.5), 3.6))
    width = 0.8 / max(1, len(shown))
    positions = np.arange(len(labels))
    with_intervals = False
    for i, metric in enumerate(shown):
        values = [unpacked[label][0].get(metric, np.nan) for label in labels]
        values = [np.nan if v is None else 100.0 * float(v) for v in values]
        bounds = [unpacked[label][1].get(metric) for label in labels]
        lower = [value - 100.0 * b[0] if b and np.isfinite(value) else 0.0 for value, b in zip(values, bounds, strict=True)]
        upper = [100.0 * b[1] - value if b and np.isfinite(value) else 0.0 for value, b in zip(values, bounds, strict=True)]
        has = any(b is not None for b in bounds)
        with_intervals = with_intervals or has
        bars = ax.bar(positions + (i - (len(shown) - 1) / 2) * width, values, width, label=metric.replace("_", " "),
                      yerr=np.array([lower, upper]) if has else None, capsize=2 if has else 0,
                      error_kw={"elinewidth": 0.9, "ecolor": "#333333"})
        for bar, value, top in zip(bars, values, upper, strict=True):
            if np.isfinite(value):
                ax.annotate(f"{value:.1f}", (bar.get_x() + bar.get_width() / 2, value + top), ha="center",
                            va="bottom", fontsize=7, xytext=(0, 1), textcoords="offset points")
    ax.set_xticks(positions, labels, rotation=20 if len(labels) > 4 else 0, ha="right" if len(labels) > 4 else "center")
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(0, 108)
    ax.set_title(title)
    ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.spines[["top", "right"]].set_visible(False)
    note = ("test set (whiskers: the results' 95 % intervals over its reactions)" if with_intervals
            else "test set (no intervals: the results carry none)")
    ax.set_xlabel(note, fontsize=7, color="#555555")
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
        # below the axes: inside, the legend would hide the histograms it names
        ax.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(0.0, -0.2))
        ax.spines[["top", "right"]].set_visible(False)
    return _save(fig, out)
