"""Uncertainty: the 95 % interval of every metric that is a mean over items, one method per metric.

A suite stores the per-item values of each such metric in ``Result.item_scores`` (the
metric is their mean); :func:`attach_intervals` stores an interval of each in
``Result.intervals``. Which interval a metric gets is declared once, on its metric card
(``MetricCard.interval``):

* ``wilson`` — a **proportion** (every per-item value is 0 or 1: exact match, top-k accuracy,
  Acc@k, validity fractions...): the Wilson score interval of ``k`` successes in ``n`` items.
  Unlike a bootstrap it is never zero-wide: 0 of 40 gives ``[0, 8.8 %]``, 50 of 50
  ``[92.9 %, 100 %]``; and its half-width is at most ``z / (2 √(n + z²))``, the bound
  ``assay --precision`` sizes subsets by (:func:`chemassay.report.subsets.items_for_precision`).
* ``bootstrap`` — any other mean over items (Jaccard, F1, MRR, oMeS scores, Tanimoto
  similarities...): the seeded **percentile bootstrap** (``resamples`` resamples of the items
  with replacement, one seeded generator: the same input and seed give the same interval;
  the 2.5th and 97.5th percentiles of the resampled means). When every item has the same value
  the bootstrap has nothing to resample and would print a zero-wide interval; then, for a metric
  bounded on both sides (its card's ``range``) at one of its bounds (``V = 1`` on every item), the
  interval is the Wilson interval of ``n`` of ``n`` (or 0 of ``n``) scaled to the range — the
  widest interval any bounded variable with that sample can need, since a 0/1 variable is the
  most spread of them; method ``wilson (every item at a bound)``) — and otherwise no interval is stored (``low``/``high`` ``None``, method
  ``none (every item equal)``): a zero-wide interval is never stored.

A metric without a card (or a card saying ``none``/``bootstrap-molecules``) gets the
bootstrap. ``None`` in a per-item list marks an item the metric does not apply to; those are
left out of that metric (the bootstrap resamples the same item indices for every metric, so
metrics of one result stay paired). Results written before Wilson intervals carry percentile
bootstrap intervals for every metric (their ``Interval.method`` says ``bootstrap``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np

from chemassay.contract.result import Interval, Result
from chemassay.report.cards import card_for

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 0
WILSON = "wilson"
BOOTSTRAP = "bootstrap"
DEGENERATE = "none (every item equal)"
AT_BOUND = "wilson (every item at a bound)"


def bootstrap_means(values: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Mean of ``values[idx]`` for each row of ``indices``, skipping NaN entries."""
    sampled = values[indices]
    # A resample that drew only items the metric does not apply to has no mean (NaN): expected.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(sampled, axis=1)


def _as_array(values: Sequence[float | None]) -> np.ndarray:
    return np.asarray([np.nan if v is None else float(v) for v in values], dtype=np.float64)


def percentile_interval(values: Sequence[float | None], *, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                        level: float = 0.95, chunk: int = 100) -> tuple[float, float]:
    """The percentile-bootstrap interval of the mean of ``values`` (``None``/NaN ignored)."""
    array = _as_array(values)
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


def wilson_interval(successes: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of ``successes`` of ``n`` (NaN, NaN without items).

    >>> [round(x, 4) for x in wilson_interval(0, 40)], [round(x, 4) for x in wilson_interval(50, 50)]
    ([0.0, 0.0876], [0.9287, 1.0])
    """
    if n <= 0:
        return math.nan, math.nan
    if not 0 <= successes <= n:
        raise ValueError(f"{successes} successes of {n} items")
    z = NormalDist().inv_cdf(0.5 + level / 2)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    # at 0 or n successes one end is exactly 0 or 1 (rounding would leave 1e-17)
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


def proportion_interval(values: Sequence[float | None], level: float = 0.95) -> tuple[float, float]:
    """The Wilson interval of the mean of 0/1 ``values`` (``None``/NaN ignored); a value other
    than 0 or 1 is an error (the metric is not a proportion)."""
    array = _as_array(values)
    array = array[~np.isnan(array)]
    if array.size and not np.isin(array, (0.0, 1.0)).all():
        odd = array[~np.isin(array, (0.0, 1.0))][0]
        raise ValueError(f"a proportion's per-item values are 0 or 1, got {odd:g}")
    return wilson_interval(int(array.sum()), int(array.size), level)


def _card(suite: str | None, key: str):
    if suite is None:
        return None

    try:
        return card_for(suite, key)
    except KeyError:  # an unknown suite (a result read from elsewhere)
        return None


def interval_method(suite: str | None, key: str) -> str:
    """``wilson`` or ``bootstrap``: how :func:`attach_intervals` bounds ``key`` (its card's
    ``interval``; ``bootstrap`` without a card)."""
    card = _card(suite, key)
    return WILSON if card is not None and card.interval == WILSON else BOOTSTRAP


def metric_interval(values: Sequence[float | None], *, suite: str | None = None, key: str = "",
                    method: str | None = None, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                    level: float = 0.95) -> Interval:
    """The interval of one metric's per-item ``values`` by the method its card declares (or
    ``method``): see the module docstring.

    >>> metric_interval([0] * 40, method="wilson").high > 0.08
    True
    >>> box = metric_interval([1.0] * 50, suite="mechanism", key="V")  # bootstrap metric, every item at 1
    >>> box.method, round(box.low, 4), box.high
    ('wilson (every item at a bound)', 0.9287, 1.0)
    """
    card = _card(suite, key)
    if method is None:
        method = WILSON if card is not None and card.interval == WILSON else BOOTSTRAP
    array = _as_array(values)
    present = array[~np.isnan(array)]
    if present.size == 0:
        return Interval(low=None, high=None, level=level, method=method)
    if method == WILSON:
        low, high = proportion_interval(present.tolist(), level)
        return Interval(low=low, high=high, level=level, method=WILSON)
    if present.size > 0 and np.all(present == present[0]):
        lower, upper = card.range if card is not None else (None, None)
        value = float(present[0])
        if lower is not None and upper is not None and upper > lower and value in (lower, upper):
            low, high = wilson_interval(int(present.size) if value == upper else 0, int(present.size), level)
            return Interval(low=lower + (upper - lower) * low, high=lower + (upper - lower) * high, level=level,
                            method=AT_BOUND)
        return Interval(low=None, high=None, level=level, method=DEGENERATE)
    low, high = percentile_interval(values, resamples=resamples, seed=seed, level=level)
    return Interval(low=None if math.isnan(low) else low, high=None if math.isnan(high) else high,
                    level=level, method=BOOTSTRAP, resamples=resamples, seed=seed)


def attach_intervals(result: Result, *, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                     level: float = 0.95) -> Result:
    """Fill ``result.intervals`` for every metric with per-item scores; returns ``result``.

    ``resamples=0`` turns intervals off (nothing is added, Wilson intervals included).
    """
    if resamples <= 0:
        return result
    for key, values in result.item_scores.items():
        result.intervals[key] = metric_interval(values, suite=result.suite, key=key, resamples=resamples, seed=seed,
                                                level=level)
    return result
