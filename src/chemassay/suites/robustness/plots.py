"""Plots of the robustness suite, both retrieval directions in each.

* :func:`plot_layers` — the paper's Fig. 3: Acc@1 per hidden layer, one colour per
  augmentation, original→augmented solid and augmented→original dashed;
* :func:`plot_accuracy` — Acc@1 per augmentation and encoder, one row of panels per
  direction and one column per dataset (the demo's figure).

Each returns the labels it drew (so callers and tests can see what is on the figure) and
writes a PNG atomically.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import numpy as np

from chemassay.runtime.files import atomic_writer

DIRECTION_NAMES = {"o2a": "original→augmented", "a2o": "augmented→original"}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(figure, path: str | os.PathLike, dpi: int) -> None:
    with atomic_writer(path, "wb", encoding=None) as handle:
        figure.savefig(handle, format="png", dpi=dpi)


def plot_layers(per_layer: Mapping[str, Sequence[Mapping[str, float]]], path: str | os.PathLike, *,
                title: str = "", metric: str = "acc@1") -> list[str]:
    """Fig. 3 of the paper: ``metric`` per hidden layer (0 = embeddings) for every
    augmentation, both directions (``o2a`` solid, ``a2o`` dashed); returns the legend labels."""
    plt = _pyplot()
    from matplotlib.ticker import MaxNLocator

    figure, axis = plt.subplots(figsize=(7.0, 4.4))
    labels = []
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for index, (kind, layers) in enumerate(per_layer.items()):
        colour = colours[index % len(colours)]
        for direction, style in (("o2a", "-"), ("a2o", "--")):
            values = [100 * layer[f"{direction}_{metric}"] for layer in layers]
            label = f"{kind} {DIRECTION_NAMES[direction]}"
            axis.plot(range(len(layers)), values, style, marker="o" if direction == "o2a" else "s",
                      color=colour, label=label, markersize=4)
            labels.append(label)
    axis.xaxis.set_major_locator(MaxNLocator(integer=True))
    axis.set_xlabel("layer (0 = embedding layer)")
    axis.set_ylabel(f"{metric} (%)")
    axis.set_ylim(-2, 102)
    axis.grid(alpha=0.3)
    axis.legend(fontsize="small", ncol=2)
    if title:
        axis.set_title(title)
    figure.tight_layout()
    _save(figure, path, 120)
    plt.close(figure)
    return labels


def plot_accuracy(results: Mapping[str, Mapping[str, Sequence[Mapping]]], path: str | os.PathLike,
                  metric: str = "acc@1") -> list[str]:
    """Bars of ``metric`` per augmentation: ``results[dataset][encoder]`` is the table rows
    of one run (``augmentation`` plus ``o2a_<metric>``/``a2o_<metric>``). One row of panels
    per direction, one column per dataset; returns the panel titles."""
    plt = _pyplot()
    datasets = list(results)
    figure, axes = plt.subplots(2, len(datasets), figsize=(5.2 * len(datasets), 7.2), sharey=True, squeeze=False)
    titles = []
    for column, dataset in enumerate(datasets):
        by_encoder = results[dataset]
        kinds = [row["augmentation"] for row in next(iter(by_encoder.values()))]
        width = 0.8 / max(1, len(by_encoder))
        for row_index, direction in enumerate(("o2a", "a2o")):
            axis = axes[row_index][column]
            for offset, (encoder, rows) in enumerate(by_encoder.items()):
                positions = np.arange(len(rows)) + offset * width
                heights = [100 * (r.get(f"{direction}_{metric}") or 0.0) for r in rows]
                bars = axis.bar(positions, heights, width=width, label=encoder)
                axis.bar_label(bars, labels=[f"{h:.0f}" for h in heights], fontsize=7, padding=1)
            axis.set_xticks(np.arange(len(kinds)) + 0.4 - width / 2)
            axis.set_xticklabels(kinds, rotation=30, ha="right")
            title = f"AMORE {dataset}: {DIRECTION_NAMES[direction]} {metric}"
            axis.set_title(title, fontsize="medium")
            titles.append(title)
            axis.set_ylim(0, 119)
            axis.grid(axis="y", alpha=0.3)
            if column == 0:
                axis.set_ylabel(f"{metric} (%)")
    first = next(iter(results.values()))
    axes[0][0].legend(loc="upper center", ncol=len(first), frameon=False)
    figure.tight_layout()
    _save(figure, path, 110)
    plt.close(figure)
    return titles
