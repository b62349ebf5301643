"""Is the difference between two models real? Paired tests on the same items.

:func:`compare` takes two results of the same suite, task and dataset that were scored on
the same items (``item_ids``) and, for every metric both carry per-item values of
(``item_scores``), reports

* the difference of the means (A − B) with a **paired percentile-bootstrap interval**: the
  items are resampled with replacement (one seeded generator, the same resampled items for
  both models and every metric) and the mean difference is recomputed;
* a bootstrap p-value for "no difference" (the share of resampled differences at least as
  far from the observed one as the observed one is from zero), with a Holm adjustment across
  the metrics compared;
* for accuracies (every per-item value 0 or 1) **McNemar's exact test**: of the items where
  the two models disagree, how many each got right, against a fair coin (two-sided binomial).

The verdict ("A better", "B better", "no difference shown") follows McNemar's p (below
``1 − level``) for 0/1 metrics and the bootstrap interval (excluding 0) for the others.

It refuses, with one line saying why, two results that cannot be paired: different suites or
tasks, different datasets (their sha256, or their names when no checksum was recorded), or
different items.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from chemassay.contract.errors import UserInputError
from chemassay.contract.result import Result
from chemassay.report.cards import direction_of
from chemassay.report.load import source_of

DEFAULT_RESAMPLES = 2000
CHUNK = 500


class IncomparableResults(UserInputError):
    """Two results that cannot be compared item by item (the message says why)."""


@dataclass
class MetricComparison:
    """The paired comparison of one metric."""

    key: str
    direction: str
    """``higher``, ``lower`` or ``none`` (from the metric card)."""
    n: int
    """Items where both results have a value."""
    mean_a: float
    mean_b: float
    difference: float
    """``mean_a - mean_b`` over the paired items."""
    low: float
    high: float
    """The bootstrap interval of the difference."""
    p_value: float
    """Bootstrap p-value of "no difference"."""
    p_holm: float = math.nan
    """``p_value`` after Holm's adjustment over the metrics compared."""
    mcnemar: dict[str, float] | None = None
    """For 0/1 metrics: ``a_only`` (items A got right and B wrong), ``b_only``, ``p_value``."""
    verdict: str = ""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (NaN as ``None``)."""
        return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in asdict(self).items()}


@dataclass
class Comparison:
    """Everything :func:`compare` found."""

    a: str
    b: str
    suite: str
    task: str
    dataset: str | None
    items: int
    resamples: int
    seed: int
    level: float
    metrics: list[MetricComparison] = field(default_factory=list)
    not_compared: dict[str, str] = field(default_factory=dict)
    """Metrics left out, with the reason (only one result has per-item values...)."""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (``chemassay compare --json``)."""
        return {"a": self.a, "b": self.b, "suite": self.suite, "task": self.task, "dataset": self.dataset,
                "items": self.items, "resamples": self.resamples, "seed": self.seed, "level": self.level,
                "metrics": [m.as_dict() for m in self.metrics], "not_compared": self.not_compared}

    def summary(self) -> str:
        """A plain-text table, one metric a line."""
        lines = [f"{self.suite} / {self.task}: A = {self.a}  vs  B = {self.b}",
                 f"{self.items} paired items; {self.level:.0%} paired-bootstrap intervals of A - B "
                 f"({self.resamples} resamples, seed {self.seed})", ""]
        header = f"{'metric':<28} {'A':>9} {'B':>9} {'A - B':>9} {'interval':>21} {'p':>8} {'p Holm':>8} {'McNemar p':>10}  verdict"
        lines.append(header)
        for m in self.metrics:
            mcnemar = f"{m.mcnemar['p_value']:.3g}" if m.mcnemar else "-"
            lines.append(
                f"{m.key:<28} {m.mean_a:>9.4f} {m.mean_b:>9.4f} {m.difference:>+9.4f} "
                f"{f'[{m.low:+.4f}, {m.high:+.4f}]':>21} {m.p_value:>8.3g} {m.p_holm:>8.3g} {mcnemar:>10}  {m.verdict}"
            )
        for key, reason in self.not_compared.items():
            lines.append(f"{key:<28} not compared: {reason}")
        return "\n".join(lines)


def _label(result: Result, fallback: str) -> str:
    if result.model is not None:
        return result.model.name
    source = source_of(result)
    return source or fallback


def check_comparable(a: Result, b: Result) -> None:
    """Raise :class:`IncomparableResults` unless ``a`` and ``b`` can be paired item by item."""
    name_a = source_of(a) or "A"
    name_b = source_of(b) or "B"
    if (a.suite, a.task) != (b.suite, b.task):
        raise IncomparableResults(
            f"cannot compare {name_a} ({a.suite} / {a.task}) with {name_b} ({b.suite} / {b.task}): different suites or tasks"
        )
    if a.dataset is not None and b.dataset is not None:
        sha_a, sha_b = a.dataset.sha256, b.dataset.sha256
        if sha_a and sha_b and sha_a != sha_b:
            raise IncomparableResults(
                f"cannot compare {name_a} with {name_b}: different datasets "
                f"({a.dataset.name} sha256 {sha_a[:12]}… vs {b.dataset.name} sha256 {sha_b[:12]}…)"
            )
        if not (sha_a and sha_b) and a.dataset.name != b.dataset.name:
            raise IncomparableResults(
                f"cannot compare {name_a} with {name_b}: different datasets ({a.dataset.name!r} vs {b.dataset.name!r})"
            )
    elif (a.dataset is None) != (b.dataset is None):
        raise IncomparableResults(f"cannot compare {name_a} with {name_b}: only one of them names its dataset")
    for name, result in ((name_a, a), (name_b, b)):
        if not result.item_ids or not result.item_scores:
            raise IncomparableResults(
                f"cannot compare: {name} has no per-item scores (item_ids / item_scores); "
                "re-run the evaluation with this chemassay version"
            )
    ids_a, ids_b = set(a.item_ids or ()), set(b.item_ids or ())
    if ids_a != ids_b:
        only_a, only_b = sorted(ids_a - ids_b), sorted(ids_b - ids_a)
        example = (only_a or only_b)[0]
        raise IncomparableResults(
            f"cannot compare {name_a} with {name_b}: different items ({len(only_a)} only in A, "
            f"{len(only_b)} only in B, e.g. {example!r})"
        )


def _holm(p_values: list[float]) -> list[float]:
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [math.nan] * len(p_values)
    running = 0.0
    m = len(p_values)
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts: twice the binomial tail
    ``P(X <= min(a_only, b_only))`` for ``X ~ Binomial(a_only + b_only, 1/2)``, at most 1
    (exact integer arithmetic; no SciPy import on the command line's path)."""
    total = a_only + b_only
    if total == 0:
        return 1.0
    smaller = min(a_only, b_only)
    if 2 * smaller == total:
        return 1.0
    tail = sum(math.comb(total, i) for i in range(smaller + 1))
    return min(1.0, 2 * tail / (1 << total))


def _bootstrap(values_a: np.ndarray, values_b: np.ndarray, present: np.ndarray, *, resamples: int, seed: int
               ) -> tuple[np.ndarray, np.ndarray]:
    """Resampled mean differences for every metric at once (columns), from one generator.

    Resampling item indices is the same as drawing a count per item; with counts ``C``
    (resamples × items) the resampled mean of metric ``j`` is ``C @ (d * m) / C @ m`` where
    ``m`` marks the items both results scored, so every metric shares the resampled items
    and one matrix product does the work.
    """
    n_items, n_metrics = values_a.shape
    diff = np.where(present, values_a - values_b, 0.0)
    mask = present.astype(np.float64)
    rng = np.random.default_rng(seed)
    means = np.empty((resamples, n_metrics), dtype=np.float64)
    for start in range(0, resamples, CHUNK):
        size = min(CHUNK, resamples - start)
        indices = rng.integers(0, n_items, size=(size, n_items), dtype=np.int64)
        offsets = (np.arange(size, dtype=np.int64) * n_items)[:, None]
        counts = np.bincount((indices + offsets).ravel(), minlength=size * n_items)
        counts = counts.reshape(size, n_items).astype(np.float64)
        numerator = counts @ diff
        denominator = counts @ mask
        with np.errstate(invalid="ignore", divide="ignore"):
            means[start:start + size] = numerator / denominator
    observed = (diff.sum(axis=0) / np.maximum(mask.sum(axis=0), 1.0))
    return means, observed


def compare(a: Result, b: Result, *, resamples: int = DEFAULT_RESAMPLES, seed: int = 0, level: float = 0.95,
            metrics: list[str] | None = None) -> Comparison:
    """Paired comparison of two results on the same items (see the module docstring).

    >>> from chemassay.contract.result import Result
    >>> ids = [f"r{i}" for i in range(6)]
    >>> a = Result(suite="reaction-ood", task="evaluate", metrics={"top1_accuracy": 5 / 6}, n=6, item_ids=ids,
    ...            item_scores={"top1_accuracy": [1, 1, 1, 1, 1, 0]})
    >>> b = Result(suite="reaction-ood", task="evaluate", metrics={"top1_accuracy": 2 / 6}, n=6, item_ids=ids,
    ...            item_scores={"top1_accuracy": [1, 0, 0, 1, 0, 0]})
    >>> row = compare(a, b, resamples=2000).metrics[0]
    >>> round(row.difference, 3), row.mcnemar["a_only"], row.mcnemar["b_only"], round(row.mcnemar["p_value"], 3)
    (0.5, 3, 0, 0.25)
    """
    if resamples < 1:
        raise UserInputError(f"--resamples must be at least 1, got {resamples}")
    if not 0 < level < 1:
        raise UserInputError(f"--level must be between 0 and 1, got {level}")
    check_comparable(a, b)

    ids = list(a.item_ids or ())
    position_b = {item: i for i, item in enumerate(b.item_ids or ())}
    order_b = np.asarray([position_b[item] for item in ids], dtype=np.int64)
    shared = [k for k in a.item_scores if k in b.item_scores]
    not_compared = {k: "only A has per-item values" for k in a.item_scores if k not in b.item_scores}
    not_compared.update({k: "only B has per-item values" for k in b.item_scores if k not in a.item_scores})
    if metrics:
        unknown = [k for k in metrics if k not in shared]
        if unknown:
            raise UserInputError(f"metric {unknown[0]!r} has no per-item values in both results; "
                                 f"comparable: {', '.join(shared) or 'none'}")
        shared = [k for k in shared if k in metrics]
        not_compared = {}
    if not shared:
        raise IncomparableResults("cannot compare: the two results have no per-item metric in common")

    def column(values: list[float | None]) -> np.ndarray:
        return np.asarray([np.nan if v is None else float(v) for v in values], dtype=np.float64)

    values_a = np.column_stack([column(a.item_scores[k]) for k in shared])
    values_b = np.column_stack([column(b.item_scores[k]) for k in shared])[order_b]
    present = ~np.isnan(values_a) & ~np.isnan(values_b)
    usable = present.any(axis=0)
    for j, key in enumerate(shared):
        if not usable[j]:
            not_compared[key] = "no item has a value in both results"
    keep = [j for j in range(len(shared)) if usable[j]]
    if not keep:
        raise IncomparableResults("cannot compare: no item has a value of the same metric in both results")
    shared = [shared[j] for j in keep]
    values_a, values_b, present = values_a[:, keep], values_b[:, keep], present[:, keep]
    boot, observed = _bootstrap(np.nan_to_num(values_a), np.nan_to_num(values_b), present, resamples=resamples, seed=seed)
    alpha = (1.0 - level) / 2.0
    rows: list[MetricComparison] = []
    for j, key in enumerate(shared):
        mask = present[:, j]
        column_a, column_b = values_a[mask, j], values_b[mask, j]
        resampled = boot[:, j][~np.isnan(boot[:, j])]
        low, high = (np.quantile(resampled, [alpha, 1 - alpha]) if resampled.size else (math.nan, math.nan))
        difference = float(observed[j])
        extreme = np.count_nonzero(np.abs(resampled - difference) >= abs(difference) - 1e-15)
        p_value = float((1 + extreme) / (1 + resampled.size)) if difference != 0 else 1.0
        binary = bool(np.isin(column_a, (0.0, 1.0)).all() and np.isin(column_b, (0.0, 1.0)).all())
        mcnemar = None
        if binary:
            a_only = int(np.count_nonzero((column_a == 1) & (column_b == 0)))
            b_only = int(np.count_nonzero((column_a == 0) & (column_b == 1)))
            mcnemar = {"a_only": a_only, "b_only": b_only, "p_value": mcnemar_exact(a_only, b_only)}
        rows.append(MetricComparison(
            key=key, direction=direction_of(a.suite, key), n=int(mask.sum()),
            mean_a=float(column_a.mean()), mean_b=float(column_b.mean()), difference=difference,
            low=float(low), high=float(high), p_value=p_value, mcnemar=mcnemar,
        ))
    for row, adjusted in zip(rows, _holm([r.p_value for r in rows]), strict=True):
        row.p_holm = adjusted
        row.verdict = _verdict(row, level)
    dataset = a.dataset.name if a.dataset else None
    return Comparison(a=_label(a, "A"), b=_label(b, "B"), suite=a.suite, task=a.task, dataset=dataset, items=len(ids),
                      resamples=resamples, seed=seed, level=level, metrics=rows, not_compared=not_compared)


def _verdict(row: MetricComparison, level: float = 0.95) -> str:
    """The verdict on one metric: for a 0/1 metric McNemar's exact test decides (the test to
    quote for accuracies: with few discordant items the bootstrap is optimistic), otherwise the
    bootstrap interval of the difference (does it exclude 0?)."""
    if row.mcnemar is not None:
        if row.mcnemar["p_value"] >= 1.0 - level or row.difference == 0:
            return "no difference shown"
    elif math.isnan(row.low) or (row.low <= 0 <= row.high):
        return "no difference shown"
    a_higher = row.difference > 0
    if row.direction == "higher":
        return "A better" if a_higher else "B better"
    if row.direction == "lower":
        return "B better" if a_higher else "A better"
    return "A higher" if a_higher else "B higher"
