"""Uncertainty: seeded percentile-bootstrap intervals of metrics that are means over items.

A suite stores the per-item values of each such metric in ``Result.item_scores`` (the
metric is their mean); :func:`attach_intervals` resamples the items with replacement
``resamples`` times (one seeded generator, so the same input and seed give the same
interval) and stores the 2.5th and 97.5th percentiles of the resampled means in
``Result.intervals``. ``None`` in a per-item list marks an item the metric does not apply to;
those are left out of that metric (the resampling is over the same item indices for every
metric, so metrics of one result stay paired).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np

from chemassay.contract.result import Interval, Result

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 0


def bootstrap_means(values: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Mean of ``values[idx]`` for each row of ``indices``, skipping NaN entries."""
    sampled = values[indices]
    # A resample that drew only items the metric does not apply to has no mean (NaN): expected.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(sampled, axis=1)


def percentile_interval(values: Sequence[float | None], *, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                        level: float = 0.95, chunk: int = 100) -> tuple[float, float]:
    """The percentile-bootstrap interval of the mean of ``values`` (``None``/NaN ignored)."""
    array = np.asarray([np.nan if v is None else float(v) for v in values], dtype=np.float64)
    if array.size == 0 or np.all(np.isnan(array)):
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    means = np.empty(resamples, dtype=np.float64)
    for start in range(0, resamples, chunk):
        size = min(chunk, resamples - start)
        means[start:start + size] = bootstrap_means(array, rng.integers(0, array.size, size=(size, array.size)))
    alpha = (1.0 - level) / 2.0
    low, high = np.nanquantile(means, [alpha, 1.0 - alpha])
    return float(low), float(high)


def attach_intervals(result: Result, *, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                     level: float = 0.95) -> Result:
    """Fill ``result.intervals`` for every metric with per-item scores; returns ``result``.

    ``resamples=0`` turns intervals off (nothing is added).
    """
    if resamples <= 0:
        return result
    for key, values in result.item_scores.items():
        low, high = percentile_interval(values, resamples=resamples, seed=seed, level=level)
        result.intervals[key] = Interval(
            low=None if math.isnan(low) else low, high=None if math.isnan(high) else high,
            level=level, method="bootstrap", resamples=resamples, seed=seed,
        )
    return result
