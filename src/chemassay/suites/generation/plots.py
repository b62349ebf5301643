"""Pictures for the generation metrics: property distributions of generated vs test molecules."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from scipy.stats import gaussian_kde

from chemassay.runtime.files import atomic_writer

PROPERTY_LABELS = {
    "logP": "logP (Crippen)",
    "SA": "SA score",
    "QED": "QED",
    "weight": "molecular weight (Da)",
}


def _density(values: np.ndarray, grid: np.ndarray) -> np.ndarray | None:
    values = values[np.isfinite(values)]
    if values.size < 2 or np.ptp(values) == 0:
        return None
    return gaussian_kde(values)(grid)


def axis_range(*samples: np.ndarray, tail: float = 0.5) -> tuple[float, float] | None:
    """The x range of a density panel: from the lowest ``tail``-th to the highest
    ``100 - tail``-th percentile **of each sample on its own**, widened by three kernel
    bandwidths of that sample, plus 5 % padding.

    Percentiles of the pooled values would let the larger sample decide: against the
    176,074 MOSES test molecules the tail of a few thousand generated ones falls outside the
    pooled 99.5th percentile and was cut off. The bandwidths matter for a small sample (a
    quick run's few hundred molecules): its kernel density reaches well past its extreme
    values and was cut at the axis. ``None`` when no sample has a finite value.
    """
    lows, highs = [], []
    for values in samples:
        finite = np.asarray(values, dtype=np.float64)
        finite = finite[np.isfinite(finite)]
        if finite.size:
            low, high = np.percentile(finite, [tail, 100.0 - tail])
            if finite.size >= 2 and np.ptp(finite) > 0:
                # scipy's gaussian_kde: Scott's factor n^(-1/5) times the sample's std
                bandwidth = float(np.std(finite, ddof=1)) * finite.size ** (-0.2)
                low, high = low - 3.0 * bandwidth, high + 3.0 * bandwidth
            lows.append(low)
            highs.append(high)
    if not lows:
        return None
    low, high = min(lows), max(highs)
    pad = 0.05 * (high - low or 1.0)
    return float(low - pad), float(high + pad)


def plot_property_distributions(
    generated: dict[str, np.ndarray],
    reference: dict[str, np.ndarray],
    path: str | os.PathLike,
    *,
    distances: dict[str, float] | None = None,
    reference_label: str = "MOSES test",
    generated_label: str = "generated",
) -> Path:
    """Kernel density estimates of logP, SA, QED and weight, generated vs reference (PNG).

    Each panel's title carries the Wasserstein-1 distance when ``distances`` gives it; its x
    range covers both samples (:func:`axis_range`). Writes the PNG atomically and returns its
    path.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(2, 2, figsize=(10, 7))
    for axis, name in zip(axes.ravel(), PROPERTY_LABELS, strict=True):
        ref = np.asarray(reference.get(name, []), dtype=np.float64)
        gen = np.asarray(generated.get(name, []), dtype=np.float64)
        span = axis_range(ref, gen)
        if span is not None:
            grid = np.linspace(span[0], span[1], 400)
            for values, label, style in ((ref, reference_label, "-"), (gen, generated_label, "--")):
                density = _density(values, grid)
                if density is not None:
                    axis.plot(grid, density, style, label=f"{label} (n={values.size})")
            axis.set_xlim(*span)
        title = PROPERTY_LABELS[name]
        if distances and name in distances and np.isfinite(distances[name]):
            title += f"   W1 = {distances[name]:.4g}"
        axis.set_title(title)
        axis.set_ylabel("density")
        axis.legend(fontsize=8)
    figure.suptitle("Property distributions: generated vs reference (kernel density)")
    figure.tight_layout()
    target = Path(path)
    with atomic_writer(target, "wb", encoding=None) as handle:
        figure.savefig(handle, format="png", dpi=110)
    plt.close(figure)
    return target
