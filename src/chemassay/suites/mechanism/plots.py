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


def plot_score_by_length(runs: Mapping[str, Mapping[str, Any]], path: str | os.PathLike) -> Path:
    """Mean S_total and S_partial against gold mechanism length, one line pair per run.

    ``runs`` maps a label to a summary's ``by_length`` mapping (length → metrics).
    """
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9, 4))
    for label, by_length in runs.items():
        lengths = sorted(int(n) for n in by_length)
        ax.plot(lengths, [by_length[str(n)]["S_total"] for n in lengths], marker="o", label=f"{label} S_total")
        ax.plot(lengths, [by_length[str(n)]["S_partial"] for n in lengths], marker="x", linestyle="--",
                label=f"{label} S_partial")
    ax.set_xlabel("gold mechanism length (steps)")
    ax.set_ylabel("mean score")
    ax.set_ylim(-0.02, 1.05)
    ax.set_title("oMeS against mechanism length")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.grid(alpha=0.3)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
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
