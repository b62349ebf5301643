"""Reading result files for reports and comparisons, with a check of what the schema alone
cannot catch (a hand-edited file, one from another chemassay version).

:func:`load_result` reads one file through :func:`~chemassay.contract.result.read_result`
(which names the first wrong field) and then checks the contract's invariants:

* every metric is a number (or ``null``);
* ``item_scores`` lists are as long as ``item_ids``, and hold numbers or ``null``;
* every interval belongs to a metric and has ``low <= high``;
* ``n`` is not negative.

Any violation is one :class:`~chemassay.contract.errors.UserInputError` line naming the file and
the field, e.g. ``a.json: field 'item_scores.EM': 99 values for 100 item_ids``.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable
from pathlib import Path

from chemassay.contract.errors import UserInputError
from chemassay.contract.result import Result, read_result


def _is_number(value: object) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))


def result_problems(result: Result) -> list[str]:
    """Contract violations of a result, each ``field 'NAME': what is wrong`` (empty if none)."""
    from chemassay.suites import find_suite, suite_names

    problems: list[str] = []
    known = suite_names()
    if find_suite(result.suite) is None:
        problems.append(f"field 'suite': unknown suite {result.suite!r} (suites: {', '.join(known)})")
    if not result.task.strip():
        problems.append("field 'task': empty")
    if result.n < 0:
        problems.append(f"field 'n': negative ({result.n})")
    for key, value in result.metrics.items():
        if not _is_number(value) and not isinstance(value, bool):
            problems.append(f"field 'metrics.{key}': expected a number or null, got {type(value).__name__}")
    ids = result.item_ids
    if ids is not None and len(set(ids)) != len(ids):
        problems.append(f"field 'item_ids': {len(ids) - len(set(ids))} duplicated ids")
    for key, values in result.item_scores.items():
        if ids is not None and len(values) != len(ids):
            problems.append(f"field 'item_scores.{key}': {len(values)} values for {len(ids)} item_ids")
        bad = next((v for v in values if not _is_number(v) or (isinstance(v, float) and math.isinf(v))), "ok")
        if bad != "ok":
            problems.append(f"field 'item_scores.{key}': holds {bad!r}, expected numbers or null")
    if result.item_scores and ids is None:
        problems.append("field 'item_ids': missing although item_scores are given")
    for key, interval in result.intervals.items():
        if key not in result.metrics:
            problems.append(f"field 'intervals.{key}': no metric of that name")
        elif interval.low is not None and interval.high is not None and interval.low > interval.high:
            problems.append(f"field 'intervals.{key}': low {interval.low} is above high {interval.high}")
    return problems


def load_result(path: str | os.PathLike) -> Result:
    """Read and check one result file; the :class:`Result` remembers where it came from
    (``result.source``)."""
    result = read_result(path)
    problems = result_problems(result)
    if problems:
        raise UserInputError(f"{path}: not a usable chemassay result ({problems[0]})")
    object.__setattr__(result, "_source", str(path))
    return result


def source_of(result: Result) -> str | None:
    """The file a result was loaded from (``None`` for one built in memory)."""
    return getattr(result, "_source", None)


def expand_paths(paths: Iterable[str | os.PathLike]) -> list[Path]:
    """Result files named directly or found (``*.json``, recursively) in named folders.

    Manifests and other JSON files in a folder that are not results are skipped there
    (only when a folder is named; a file named directly must be a result).
    """
    found: list[Path] = []
    for entry in paths:
        path = Path(entry)
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*.json") if not p.name.endswith(".manifest.json")))
        else:
            found.append(path)
    return found


def load_results(paths: Iterable[str | os.PathLike]) -> list[Result]:
    """Load result files and folders of result files (see :func:`expand_paths`).

    In a folder, a JSON file without the result fields (``suite``, ``task``, ``metrics``)
    is skipped; a file that has them but breaks the contract is an error.
    """
    results = []
    named = {Path(p) for p in paths if not Path(p).is_dir()}
    for path in expand_paths(paths):
        if path not in named:
            try:
                head = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError):
                head = None
            if not isinstance(head, dict) or not {"suite", "task", "metrics"} <= set(head):
                continue
        results.append(load_result(path))
    return results
