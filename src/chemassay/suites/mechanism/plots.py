"""Pictures of a scoring run: score against mechanism length (the paper's Fig. 7),
accuracy by step type (Fig. 8) and oMeS by difficulty level (Table 3's columns).
Matplotlib with the Agg backend: PNG files (``--plots``, the demo) or SVG text (the
report's charts, :mod:`.report`).

Every chart says what each axis is and how many items stand behind each value (reactions
per length, gold steps per type, reactions per level), and a value of zero is drawn as a
visible mark with its number, so that it is not mistaken for a missing bar.
"""

from __future__ import annotations

import io
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
ZERO = 1e-12
"""Values at or below this are drawn as zero marks."""


def _plain(entry: Any) -> dict[str, Any]:
    """A breakdown entry as a dict (a typed details row or a dict read from JSON)."""
    if hasattr(entry, "model_dump"):
        return entry.model_dump()
    return dict(entry) if isinstance(entry, Mapping) else {}


def _runs(runs: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    return {label: {str(key): _plain(entry) for key, entry in (breakdown or {}).items()}
            for label, breakdown in runs.items()}


def _counts_label(counts: list[Any]) -> str:
    """``n=40`` when every run counts the same, else ``n=40/38``."""
    distinct = [c for i, c in enumerate(counts) if c is not None and c not in counts[:i]]
    return "n=" + "/".join(str(c) for c in distinct) if distinct else "n=?"


def score_by_length_figure(runs: Mapping[str, Mapping[str, Any]]):
    """The figure of :func:`plot_score_by_length` (for callers that want to adjust it).

    S_total and S_partial get a panel each (S_partial ≥ S_total, and for a perfect run
    they are equal, so on one panel one line hid the other). Within a panel every run has
    its own marker and line style and is shifted sideways by a small, distinct offset, so
    runs with equal values stay visible side by side. Each length's tick says how many
    reactions have a gold mechanism of that length (a mean over 2 reactions is noisy).
    """
    plt = _pyplot()
    data = _runs(runs)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.3), sharey=True)
    count = max(1, len(data))
    width = 0.5 / count if count > 1 else 0.0
    lengths = sorted({int(n) for by_length in data.values() for n in by_length})
    for position, (label, by_length) in enumerate(data.items()):
        own = sorted(int(n) for n in by_length)
        shift = (position - (count - 1) / 2) * width
        style = {"marker": MARKERS[position % len(MARKERS)], "linestyle": LINESTYLES[position % len(LINESTYLES)],
                 "markersize": 5, "alpha": 0.9, "label": label}
        for ax, metric in zip(axes, ("S_total", "S_partial"), strict=True):
            ax.plot([n + shift for n in own], [by_length[str(n)].get(metric) for n in own], **style)
    ticks = [f"{n}\n{_counts_label([data[label].get(str(n), {}).get('n') for label in data])}" for n in lengths]
    for ax, metric in zip(axes, ("S_total", "S_partial"), strict=True):
        ax.set_title(f"{metric} against mechanism length")
        ax.set_xlabel("gold mechanism length (steps); n = reactions of that length")
        ax.set_xticks(lengths)
        ax.set_xticklabels(ticks, fontsize=7)
        ax.set_ylim(-0.04, 1.08)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("mean score over the reactions")
    if len(data) > 1:
        axes[1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    return fig


def _grouped_bars(ax, categories: list[str], data: dict[str, dict[str, dict[str, Any]]], metric: str) -> None:
    """Bars of ``metric`` per category and run; a zero is a mark with ``0``, an absent value a ``–``."""
    width = 0.8 / max(1, len(data))
    for offset, (label, breakdown) in enumerate(data.items()):
        xs = [i + (offset - (len(data) - 1) / 2) * width for i in range(len(categories))]
        values = [breakdown.get(c, {}).get(metric) for c in categories]
        bars = ax.bar(xs, [v if v is not None else 0.0 for v in values], width=width * 0.95, label=label)
        color = bars.patches[0].get_facecolor() if bars.patches else None
        for x, value in zip(xs, values, strict=True):
            if value is None:
                ax.text(x, 0.01, "–", ha="center", va="bottom", fontsize=7, color="#666")
            elif value <= ZERO:
                ax.plot([x - width * 0.45, x + width * 0.45], [0.0, 0.0], color=color, linewidth=3,
                        solid_capstyle="butt", clip_on=False)
                ax.text(x, 0.012, "0", ha="center", va="bottom", fontsize=7, color=color)
    ax.set_xticks(range(len(categories)))


def _categories(data: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Every category (step type, level...) of the runs, in the order first seen."""
    return list(dict.fromkeys(category for by_category in data.values() for category in by_category))


def accuracy_by_type_figure(runs: Mapping[str, Mapping[str, Any]]):
    """The figure of :func:`plot_accuracy_by_type` (see there)."""
    plt = _pyplot()
    data = _runs(runs)
    types = _categories(data)
    fig, ax = plt.subplots(figsize=(max(7.5, len(types) * 0.8), 4.6))
    _grouped_bars(ax, types, data, "match_rate")
    labels = [f"{kind}\n({_counts_label([data[label].get(kind, {}).get('steps') for label in data])})" for kind in types]
    ax.set_xticklabels(labels, rotation=40, ha="right", fontsize=7)
    ax.set_xlabel("gold step type (n = gold steps of that type)")
    ax.set_ylabel("gold steps matched (type accuracy)")
    ax.set_ylim(0, 1.05)
    ax.set_title("Step-type accuracy")
    if len(data) > 1:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    return fig


def oms_by_level_figure(runs: Mapping[str, Mapping[str, Any]]):
    """oMeS-total per difficulty level (Table 3's columns), one bar per run and level."""
    plt = _pyplot()
    data = _runs(runs)
    levels = _categories(data)
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    _grouped_bars(ax, levels, data, "S_total")
    labels = [f"{level}\n{_counts_label([data[label].get(level, {}).get('n') for label in data])}" for level in levels]
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_xlabel("difficulty level of the reaction (n = reactions)")
    ax.set_ylabel("oMeS-total (mean)")
    ax.set_ylim(0, 1.05)
    ax.set_title("oMeS-total by difficulty")
    if len(data) > 1:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    return fig


def _save(fig, path: str | os.PathLike) -> Path:
    plt = _pyplot()
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(target, dpi=120)
    plt.close(fig)
    return target


def figure_svg(fig) -> str:
    """The SVG text of a figure (text kept as text, so it stays small and searchable), closed after."""
    import matplotlib

    plt = _pyplot()
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "chemassay"}):
        fig.savefig(buffer, format="svg")
    plt.close(fig)
    text = buffer.getvalue()
    return text[text.index("<svg"):]


def plot_score_by_length(runs: Mapping[str, Mapping[str, Any]], path: str | os.PathLike) -> Path:
    """Mean S_total and S_partial against gold mechanism length (the paper's Fig. 7), one
    line per run in each of two panels (see :func:`score_by_length_figure`).

    ``runs`` maps a label to a result's ``details.by_length`` (length → ``n`` and metrics).
    """
    return _save(score_by_length_figure(runs), path)


def plot_accuracy_by_type(runs: Mapping[str, Mapping[str, Any]], path: str | os.PathLike) -> Path:
    """Share of gold steps aligned as ``match``, by gold step type, one bar per run
    (``runs``: label → a result's ``details.by_type``); each type's label gives its number
    of gold steps, and a zero share is drawn as a mark with ``0``."""
    return _save(accuracy_by_type_figure(runs), path)
