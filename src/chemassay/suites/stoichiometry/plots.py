"""Figures of the stoichiometry suite.

:func:`baselines_figure` draws one panel per test split (in / cross / out distribution) with a
group of bars per metric and one bar per model, each with its 95 % interval as a whisker when
one is given. Every bar carries its value as a label, so a score near zero (EM of a memorising
baseline on unseen reactions) is still read off the plot, and the legend sits below the
panels, where it cannot hide a bar. Its metrics share one direction (higher is better, as the
y label says): a metric where lower is better (``DEF``, ``EXC``, ``DE``) is refused rather than
drawn beside them.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from chemassay.report.cards import card_for
from chemassay.runtime.files import plain_file_mode

SPLITS = ("test_in", "test_cross", "test_out")
KEYS = ("EM", "JAC", "F1", "mol_F1")


Intervals = Mapping[tuple[str, str], Mapping[str, tuple[float, float] | None]]


def baselines_figure(scores: Mapping[tuple[str, str], Mapping[str, float | None]], title: str,
                     splits: Sequence[str] = SPLITS, keys: Sequence[str] = KEYS, intervals: Intervals | None = None):
    """The figure of ``scores[(model, split)][metric]``: panels by split, bars by model with
    ``intervals[(model, split)][metric] = (low, high)`` as whiskers, a value label on every bar
    and the legend outside the panels. Every metric in ``keys`` must be one where higher is better."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mixed = [key for key in keys if (card := card_for("stoichiometry", key)) is not None and card.direction != "higher"]
    if mixed:
        raise ValueError(f"baselines_figure draws metrics where higher is better; {mixed} are not")

    models = sorted({model for model, _ in scores})
    figure, axes = plt.subplots(1, len(splits), figsize=(12, 4.2), sharey=True, squeeze=False)
    width = 0.8 / max(1, len(models))
    for axis, split in zip(axes[0], splits, strict=True):
        for offset, model in enumerate(models):
            values = [scores[(model, split)].get(key) or 0.0 for key in keys]
            bounds = [((intervals or {}).get((model, split)) or {}).get(key) for key in keys]
            # whiskers: distance from the value to each end of its interval (none without one)
            whiskers = [[max(v - b[0], 0.0) if b else 0.0 for v, b in zip(values, bounds, strict=True)],
                        [max(b[1] - v, 0.0) if b else 0.0 for v, b in zip(values, bounds, strict=True)]]
            bars = axis.bar([i + offset * width for i in range(len(keys))], values, width, label=model,
                            yerr=whiskers if any(bounds) else None, capsize=2, error_kw={"elinewidth": 0.8})
            axis.bar_label(bars, labels=[_label(v) for v in values], padding=2, fontsize=6.5, rotation=90)
        axis.set_xticks([i + width * (len(models) - 1) / 2 for i in range(len(keys))], list(keys))
        axis.set_title(split)
        axis.set_ylim(0, 1.22)  # head room for the value labels above a bar of 1.0
        axis.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
    axes[0][0].set_ylabel("score (↑ higher is better)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="lower center", ncol=max(1, len(models)), fontsize=8, frameon=False)
    figure.suptitle(title)
    figure.tight_layout(rect=(0, 0.08, 1, 1))
    return figure


def _label(value: float) -> str:
    """Two decimals, or three significant digits for a small non-zero score (0.0016 is not 0.00)."""
    if value and abs(value) < 0.01:
        return f"{value:.2g}"
    return f"{value:.2f}"


def plot_baselines(scores: Mapping[tuple[str, str], Mapping[str, float | None]], path: str | Path,
                   title: str, intervals: Intervals | None = None) -> Path:
    """Write :func:`baselines_figure` to ``path`` (PNG) and return the path."""
    import matplotlib.pyplot as plt

    figure = baselines_figure(scores, title, intervals=intervals)
    target = Path(path)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".png", dir=target.parent)
    os.close(handle)
    try:
        figure.savefig(temporary, dpi=110, format="png")
        plain_file_mode(temporary)  # mkstemp makes it 0600; a picture is as readable as any file
        os.replace(temporary, target)
    finally:
        plt.close(figure)
        if os.path.exists(temporary):
            os.unlink(temporary)
    return target
