"""Pictures of a scoring run: score against mechanism length (the paper's Fig. 7) and
accuracy by step type (Fig. 8). Matplotlib with the Agg backend, PNG files."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
LINESTYLES = ("-", "--", "-.", ":")


def score_by_length_figure(runs: Mapping[str, Mapping[str, Any]]):
    """The figure of :func:`plot_score_by_length` (for callers that want to adjust it).

    S_total and S_partial get a panel each (S_partial ≥ S_total, and for a perfect run
    they are equal, so on one panel one line hid the other). Within a panel every run has
    its own marker and line style and is shifted sideways by a small, distinct offset, so
    runs with equal values stay visible side by side.
    """
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    count = max(1, len(runs))
    width = 0.5 / count if count > 1 else 0.0
    for position, (label, by_length) in enumerate(runs.items()):
        lengths = sorted(int(n) for n in by_length)
        shift = (position - (count - 1) / 2) * width
        xs = [n + shift for n in lengths]
        style = {"marker": MARKERS[position % len(MARKERS)], "linestyle": LINESTYLES[position % len(LINESTYLES)],
                 "markersize": 5, "alpha": 0.9, "label": label}
        for ax, metric in zip(axes, ("S_total", "S_partial"), strict=True):
            ax.plot(xs, [by_length[str(n)][metric] for n in lengths], **style)
    for ax, metric in zip(axes, ("S_total", "S_partial"), strict=True):
        ax.set_title(f"{metric} against mechanism length")
        ax.set_xlabel("gold mechanism length (steps)")
        ax.set_ylim(-0.04, 1.08)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("mean score")
    axes[1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    return fig


def plot_score_by_length(runs: Mapping[str, Mapping[str, Any]], path: str | os.PathLike) -> Path:
    """Mean S_total and S_partial against gold mechanism length (the paper's Fig. 7), one
    line per run in each of two panels (see :func:`score_by_length_figure`).

    ``runs`` maps a label to a result's ``by_length`` mapping (length → metrics).
    """
    plt = _pyplot()
    fig = score_by_length_figure(runs)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(target, dpi=120)
    plt.close(fig)
    return target


def plot_accuracy_by_type(runs: Mapping[str, Mapping[str, Any]], path: str | os.PathLike) -> Path:
    """Share of gold steps aligned as ``match``, by step type, one bar group per run."""
    plt = _pyplot()
    types = []
    for by_type in runs.values():
        for kind in by_type:
            if kind not in types:
                types.append(kind)
    fig, ax = plt.subplots(figsize=(max(7, len(types) * 0.7), 4))
    width = 0.8 / max(1, len(runs))
    for offset, (label, by_type) in enumerate(runs.items()):
        xs = [i + offset * width for i in range(len(types))]
        ax.bar(xs, [by_type.get(kind, {}).get("match_rate", 0.0) for kind in types], width=width, label=label)
    ax.set_xticks([i + width * (len(runs) - 1) / 2 for i in range(len(types))])
    ax.set_xticklabels(types, rotation=40, ha="right", fontsize=8)
    ax.set_ylabel("gold steps matched (type accuracy)")
    ax.set_ylim(0, 1.05)
    ax.set_title("Step-type accuracy")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(target, dpi=120)
    plt.close(fig)
    return target
