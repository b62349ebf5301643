"""Metrics on the clean subset: each task's headline metric over the test items the model has
not seen (no exact or near duplicate in its training data), beside the full-set value.

``chemassay assay --train-data FILE`` runs the leakage audit (:func:`chemassay.leakage`) on the
suites it assays and writes ``OUT/leakage.json``; this module then takes every result's
per-item scores (``Result.item_scores``, aligned with ``Result.item_ids``), keeps the items
whose ids the audit found clean, and recomputes each headline metric as their mean, with the
interval its metric card declares (Wilson for proportions, the seeded bootstrap otherwise:
:func:`~chemassay.report.intervals.metric_interval`). The clean value is a
:class:`~chemassay.contract.result.Result` of its own, on a subset whose ``method`` is
``clean`` (:func:`clean_result`); the rows of every task, full beside clean, are written to
``OUT/leakage-clean.json`` (:data:`CLEAN_FILE`) and shown in the scorecard's leakage section.

A task with no per-item test scores (a generator's distribution metrics compare generated
molecules with the test set as a whole), or whose items are not among the audited test sets,
gets one line saying so and no number.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chemassay.contract.errors import UserInputError
from chemassay.contract.result import Result, SubsetRef
from chemassay.report.intervals import DEFAULT_RESAMPLES, DEFAULT_SEED, metric_interval
from chemassay.report.subsets import subset_sha256
from chemassay.runtime.files import atomic_write_text

LEAKAGE_FILE = "leakage.json"
CLEAN_FILE = "leakage-clean.json"
NO_ITEMS = ("no per-item test scores: its metrics describe the outputs as a whole (a generator's samples against "
            "the test set), so there is no clean-subset value")


def leaked_of(entry: Mapping[str, Any]) -> set[str]:
    """Every id the audit found in the training data (exact, stereo, products or near)."""
    return {str(item) for group in entry.get("leaked_ids", {}).values() for item in group}


def seen_counts(entry: Mapping[str, Any]) -> tuple[int, int, int]:
    """``(exact, near, n)`` of one task: items with an exact key match (InChIKey with or
    without stereo, reaction key, products), items only near one, and all items."""
    leaked = int(entry.get("leaked", 0))
    near = int(entry.get("near") or 0)
    return leaked - near, near, int(entry.get("n", 0))


def seen_line(report: Mapping[str, Any], suite: str) -> str:
    """``may have seen L of N test items (E exact + M near, Tanimoto ≥ T)`` summed over the
    suite's audited tasks ('' when none was audited)."""
    entries = [t for t in report.get("tasks", []) if t.get("suite") == suite]
    if not entries:
        return ""
    exact = near = n = 0
    for entry in entries:
        e, m, k = seen_counts(entry)
        exact, near, n = exact + e, near + m, n + k
    thresholds = sorted({float(t["threshold"]) for t in entries if t.get("near") is not None})
    at = f", Tanimoto ≥ {thresholds[0]:g}" if len(thresholds) == 1 else ""
    where = f" in {len(entries)} test sets" if len(entries) > 1 else ""
    near_text = f" + {near:,} near{at}" if thresholds else "; near duplicates not checked"
    return f"may have seen {exact + near:,} of {n:,} test items{where} ({exact:,} exact{near_text})"


def clean_result(result: Result, clean: set[str], keys: Sequence[str], *, resamples: int = DEFAULT_RESAMPLES,
                 seed: int = DEFAULT_SEED) -> Result:
    """``result`` restricted to the items whose ids are in ``clean``: ``keys`` (metrics with
    per-item scores) recomputed as the mean over those items, with their intervals; the subset
    is recorded (``method="clean"``, ``of`` the items the full result scored)."""
    ids = [str(i) for i in result.item_ids or []]
    keep = [i for i, item in enumerate(ids) if item in clean]
    chosen = [ids[i] for i in keep]
    scores = {key: [result.item_scores[key][i] for i in keep] for key in keys}
    metrics: dict[str, Any] = {}
    intervals = {}
    for key, values in scores.items():
        present = [float(v) for v in values if v is not None and math.isfinite(float(v))]
        metrics[key] = sum(present) / len(present) if present else None
        if present:
            intervals[key] = metric_interval(values, suite=result.suite, key=key, resamples=resamples, seed=seed)
    subset = SubsetRef(seed=result.subset.seed if result.subset else 0, size=len(chosen), of=len(ids),
                       sha256=subset_sha256(chosen), limit=len(chosen), strata={}, method="clean")
    return result.model_copy(update={"metrics": metrics, "intervals": intervals, "item_ids": chosen,
                                     "item_scores": scores, "n": len(chosen), "subset": subset, "skipped": [],
                                     "details": None})


def _interval(result: Result, key: str) -> list[float | None]:
    box = result.intervals.get(key)
    return [box.low, box.high] if box is not None else [None, None]


def task_key(result: Result) -> str:
    """The name of the assay task a result belongs to, as its suite's audit names the test set:
    the stem of the file it was read from (``OUT/<suite>/<task>.json``), else ``result.task``."""
    from chemassay.report.load import source_of

    source = source_of(result)
    return Path(source).stem if source else result.task


def clean_row(result: Result, report: Mapping[str, Any], *, task: str | None = None,
              keys: Sequence[str] | None = None, test_ids: Sequence[str] | None = None,
              resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """One task's row (``task``: the assay task's key, default :func:`task_key`): its audit counts and, for each headline metric (``keys``, default every
    metric with per-item scores), the full-set value and interval beside the clean-subset ones;
    or a ``note`` saying why there is no clean value.

    ``test_ids`` is the task's whole test set as audited: its sha256 must be the report's, and
    every scored id must be one of them (else a :class:`UserInputError`: the audit was of other
    items). Without it the scored ids are matched to the audit by name (``ids_checked``
    false)."""
    from chemassay.report.intervals import attach_intervals

    suite, task = result.suite.replace("_", "-"), task or task_key(result)
    row: dict[str, Any] = {"suite": suite, "task": task, "n_scored": result.n, "metrics": [], "note": ""}
    entry = next((t for t in report.get("tasks", []) if t.get("suite") == suite and t.get("task") == task), None)
    if entry is None:
        audited = sorted(t["task"] for t in report.get("tasks", []) if t.get("suite") == suite)
        row["note"] = (NO_ITEMS if not result.item_scores or not result.item_ids
                       else f"not an audited test set (the suite's: {', '.join(audited) or 'none'}): its per-item "
                            "scores are of other items (a generator's samples, or a variant the audit leaves out), "
                            "so there is no clean-subset value")
        return row
    exact, near, n = seen_counts(entry)
    row.update({"n": n, "exact": exact, "near": entry.get("near"), "leaked": exact + near, "clean": n - exact - near,
                "threshold": entry.get("threshold")})
    wanted = [k for k in (keys if keys is not None else list(result.item_scores)) if k in result.metrics]
    with_items = [k for k in wanted if k in result.item_scores]
    if not result.item_ids or not with_items:
        row["note"] = NO_ITEMS
        return row
    scored = [str(i) for i in result.item_ids]
    if test_ids is not None:
        from chemassay.leaks import ids_sha256

        test_ids = [str(i) for i in test_ids]
        if ids_sha256(test_ids) != entry["ids_sha256"]:
            raise UserInputError(f"{suite}/{task}: the leakage report audited other test items "
                                 f"(sha256 {entry['ids_sha256'][:12]}...) than the task's {len(test_ids):,}")
        unknown = set(scored) - set(test_ids)
        if unknown:
            raise UserInputError(f"{suite}/{task}: {len(unknown):,} scored items are not in the audited test set "
                                 f"(e.g. {sorted(unknown)[0]!r})")
    clean = set(scored) - leaked_of(entry)
    full = attach_intervals(result.model_copy(update={"intervals": {}}), resamples=resamples, seed=seed) \
        if any(k not in result.intervals for k in with_items) else result
    subset = clean_result(result, clean, with_items, resamples=resamples, seed=seed)
    row.update({"ids_checked": test_ids is not None, "scored_clean": subset.n,
                "scored_seen": len(scored) - subset.n})
    for key in wanted:
        if key not in result.item_scores:
            row["metrics"].append({"key": key, "full": result.metrics.get(key), "full_interval": _interval(full, key),
                                   "clean": None, "clean_interval": [None, None],
                                   "note": "no per-item scores"})
            continue
        row["metrics"].append({"key": key, "full": result.metrics.get(key), "full_interval": _interval(full, key),
                               "clean": subset.metrics.get(key), "clean_interval": _interval(subset, key)})
    if subset.n == 0:
        row["note"] = "every scored item was seen in training: no clean item to score"
    row["result"] = json.loads(subset.to_json())
    return row


@dataclass
class LeakageView:
    """What the scorecard shows of a leakage audit: the report and the clean-subset rows."""

    report: dict[str, Any]
    rows: list[dict[str, Any]] = field(default_factory=list)
    source: str = ""

    def seen(self, suite: str) -> str:
        """The suite's 'may have seen' line (see :func:`seen_line`)."""
        return seen_line(self.report, suite)


def clean_rows(results: Sequence[Result | tuple[str, Result]], report: Mapping[str, Any], *,
               headline: Mapping[tuple[str, str], Sequence[str]] | None = None,
               test_ids: Mapping[tuple[str, str], Sequence[str]] | None = None,
               resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> list[dict[str, Any]]:
    """:func:`clean_row` of every result, or ``(task key, result)`` pair (subset results of the
    clean kind left out), looked up by ``(suite, task key)`` in ``headline`` (the metric keys)
    and ``test_ids`` (the audited ids)."""
    rows = []
    for member in results:
        key, result = member if isinstance(member, tuple) else (task_key(member), member)
        if result.subset is not None and result.subset.method == "clean":
            continue
        name = (result.suite.replace("_", "-"), key)
        keys = (headline or {}).get(name) or None
        try:
            rows.append(clean_row(result, report, task=key, keys=keys, test_ids=(test_ids or {}).get(name),
                                  resamples=resamples, seed=seed))
        except UserInputError as exc:  # one task audited on other items must not lose the others' rows
            rows.append({"suite": name[0], "task": key, "n_scored": result.n, "metrics": [],
                         "note": f"not compared: {exc}"})
    return rows


def write_clean(rows: list[dict[str, Any]], out: str | os.PathLike) -> Path:
    """Write the rows as ``OUT/leakage-clean.json``; returns the path."""
    target = Path(out) / CLEAN_FILE
    atomic_write_text(target, json.dumps({"leakage": LEAKAGE_FILE, "tasks": rows}, indent=2, allow_nan=False) + "\n")
    return target


def load_view(folder: str | os.PathLike, results: Sequence[Result] = ()) -> LeakageView | None:
    """The leakage audit in ``folder`` (``leakage.json``) with its clean rows
    (``leakage-clean.json``, or computed now from ``results`` by id), or ``None`` where the
    folder holds no audit."""
    from chemassay.leaks import read_report

    root = Path(folder)
    if not (root / LEAKAGE_FILE).is_file():
        return None
    report = read_report(root / LEAKAGE_FILE)
    clean_path = root / CLEAN_FILE
    if clean_path.is_file():
        try:
            rows = json.loads(clean_path.read_text(encoding="utf-8"))["tasks"]
        except (ValueError, KeyError, TypeError) as exc:
            raise UserInputError(f"{clean_path}: not a clean-subset file ({exc})") from None
    else:
        rows = clean_rows(results, report)
    return LeakageView(report=report, rows=rows, source=str(root / LEAKAGE_FILE))


__all__ = ["CLEAN_FILE", "LEAKAGE_FILE", "LeakageView", "clean_result", "clean_row", "clean_rows", "leaked_of",
           "load_view", "seen_counts", "seen_line", "write_clean"]
