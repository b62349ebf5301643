"""Figures of the stoichiometry suite.

:func:`baselines_figure` draws one panel per test split (in / cross / out distribution) with a
group of bars per metric and one bar per model. Every bar carries its value as a label, so a
score near zero (EM of a memorising baseline on unseen reactions) is still read off the plot,
and the legend sits below the panels, where it cannot hide a bar.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

SPLITS = ("test_in", "test_cross", "test_out")
KEYS = ("EM", "JAC", "F1", "mol_F1")


def baselines_figure(scores: Mapping[tuple[str, str], Mapping[str, float | None]], title: str,
                     splits: Sequence[str] = SPLITS, keys: Sequence[str] = KEYS):
    """The figure of ``scores[(model, split)][metric]``: panels by split, bars by model, a value
    label on every bar and the legend outside the panels."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = sorted({model for model, _ in scores})
    figure, axes = plt.subplots(1, len(splits), figsize=(12, 4.2), sharey=True, squeeze=False)
    width = 0.8 / max(1, len(models))
    for axis, split in zip(axes[0], splits, strict=True):
        for offset, model in enumerate(models):
            values = [scores[(model, split)].get(key) or 0.0 for key in keys]
            bars = axis.bar([i + offset * width for i in range(len(keys))], values, width, label=model)
            axis.bar_label(bars, labels=[_label(v) for v in values], padding=2, fontsize=6.5, rotation=90)
        axis.set_xticks([i + width * (len(models) - 1) / 2 for i in range(len(keys))], list(keys))
        axis.set_title(split)
        axis.set_ylim(0, 1.22)  # head room for the value labels above a bar of 1.0
        axis.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
    axes[0][0].set_ylabel("score")
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
                   title: str) -> Path:
    """Write :func:`baselines_figure` to ``path`` (PNG) and return the path."""
    import os
    import tempfile

    import matplotlib.pyplot as plt

    figure = baselines_figure(scores, title)
    target = Path(path)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".png", dir=target.parent)
    os.close(handle)
    try:
        figure.savefig(temporary, dpi=110, format="png")
        os.replace(temporary, target)
    finally:
        plt.close(figure)
        if os.path.exists(temporary):
            os.unlink(temporary)
    return target
