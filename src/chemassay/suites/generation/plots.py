"""Pictures for the generation metrics: property distributions of generated vs test molecules."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from chemassay.runtime.files import atomic_writer

PROPERTY_LABELS = {
    "logP": "logP (Crippen)",
    "SA": "SA score",
    "QED": "QED",
    "weight": "molecular weight (Da)",
}


def _density(values: np.ndarray, grid: np.ndarray) -> np.ndarray | None:
    from scipy.stats import gaussian_kde

    values = values[np.isfinite(values)]
    if values.size < 2 or np.ptp(values) == 0:
        return None
    return gaussian_kde(values)(grid)


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

    Each panel's title carries the Wasserstein-1 distance when ``distances`` gives it.
    Writes the PNG atomically and returns its path.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(2, 2, figsize=(10, 7))
    for axis, name in zip(axes.ravel(), PROPERTY_LABELS, strict=True):
        ref = np.asarray(reference.get(name, []), dtype=np.float64)
        gen = np.asarray(generated.get(name, []), dtype=np.float64)
        both = np.concatenate([ref, gen])
        both = both[np.isfinite(both)]
        if both.size:
            low, high = np.percentile(both, [0.5, 99.5])
            pad = 0.05 * (high - low or 1.0)
            grid = np.linspace(low - pad, high + pad, 400)
            for values, label, style in ((ref, reference_label, "-"), (gen, generated_label, "--")):
                density = _density(values, grid)
                if density is not None:
                    axis.plot(grid, density, style, label=f"{label} (n={values.size})")
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
