"""Leakage audit: has the model seen the test items in its training data?

The strongest pattern-matching is having seen the test item. :func:`leakage` checks every
test item of every suite's headline tasks (each suite declares them: see
:mod:`chemassay.leaks.testsets`) against training files of molecules or reactions, for exact
duplicates (InChIKey with and without stereo; order-independent reaction keys, and products
alone for tasks that ask for products), near duplicates (highest Tanimoto to any training item,
as a distribution and counted at a threshold) and, for generative tasks, shared Bemis-Murcko
scaffolds; it writes ``OUT/leakage.json``. :func:`clean_ids` gives a task's items with no exact
or near duplicate. See ``docs/leakage.md``.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from chemassay.contract.errors import UserInputError
from chemassay.leaks.audit import DEFAULT_THRESHOLD, audit, write_report
from chemassay.leaks.keys import MOLECULE, REACTION, kind_of, reaction_key
from chemassay.leaks.testsets import TestSet, ids_sha256, suite_test_sets
from chemassay.leaks.training import CHUNK_LINES, check_files


def leakage(train: str | os.PathLike | Sequence[str | os.PathLike], *, suites: Sequence[str] | None = None,
            tasks: Sequence[str] | None = None, sets: Sequence[TestSet] | None = None, column: str | None = None,
            threshold: float = DEFAULT_THRESHOLD, near: bool = True, quick: bool = False, n_jobs: int = 1,
            scheduler: str | None = None, chunk_lines: int | None = None, out: str | os.PathLike | None = None,
            progress: Callable[[str], None] | None = None) -> dict:
    """Audit the headline test sets of ``suites`` (default: every suite that declares some)
    against the training file(s) ``train``; returns the report and, with ``out``, writes
    ``OUT/leakage.json``.

    ``sets`` audits these :class:`TestSet` objects instead of the suites' own; ``tasks`` keeps
    the tasks with these names. ``threshold`` is the Tanimoto at or above which a nearest
    training item is a near duplicate (default 0.7, see docs/leakage.md); ``near=False`` checks
    exact duplicates only (no fingerprints: faster). ``quick`` takes each suite's small subset.
    ``n_jobs`` worker processes or a Dask ``scheduler`` run the training chunks of
    ``chunk_lines`` lines (default 50,000). Unreadable training lines are counted and listed
    with their line numbers; a missing or empty file or a missing column raises
    :class:`~chemassay.contract.errors.UserInputError`.
    """
    paths = [train] if isinstance(train, (str, os.PathLike)) else list(train)
    check_files(paths, column)  # a bad file fails before the test sets are loaded
    chosen = list(sets) if sets is not None else suite_test_sets(suites, quick=quick, n_jobs=n_jobs)
    if tasks:
        wanted = set(tasks)
        unknown = wanted - {s.task for s in chosen}
        if unknown:
            raise UserInputError(f"unknown task(s) {sorted(unknown)}; tasks: {sorted({s.task for s in chosen})}")
        chosen = [s for s in chosen if s.task in wanted]
    report = audit(chosen, paths, column=column, threshold=threshold, near=near, n_jobs=n_jobs,
                   scheduler=scheduler, chunk_lines=chunk_lines or CHUNK_LINES, progress=progress)
    if out is not None:
        write_report(report, out)
    return report


def read_report(path: str | os.PathLike) -> dict:
    """A ``leakage.json`` (or the folder holding it, or a ``.json.gz``) as a dict."""
    target = Path(path)
    if target.is_dir():
        target = target / "leakage.json"
    if not target.is_file():
        raise UserInputError(f"{target}: no leakage report (run chemassay leakage --out DIR first)")
    opener = gzip.open if target.name.endswith(".gz") else open
    with opener(target, "rt", encoding="utf-8") as handle:
        return json.load(handle)


def clean_ids(report: dict | str | os.PathLike, suite: str, task: str, ids: Sequence[str] | None = None) -> list[str]:
    """The ids of ``suite``/``task`` with no exact or near duplicate in the audited training
    data, in the task's order.

    ``ids`` is the task's full id list (default: the suite's declared test set, loaded again);
    its sha256 must be the one the report recorded, so a clean subset is never taken from
    another version of the test set.
    """
    data = report if isinstance(report, dict) else read_report(report)
    entry = next((t for t in data.get("tasks", []) if t["suite"] == suite and t["task"] == task), None)
    if entry is None:
        known = sorted(f"{t['suite']}/{t['task']}" for t in data.get("tasks", []))
        raise UserInputError(f"the leakage report has no task {suite}/{task}; it has {known}")
    if ids is None:
        declared = [s for s in suite_test_sets([suite]) if s.task == task]
        if not declared:
            raise UserInputError(f"suite {suite!r} declares no test set {task!r}")
        ids = declared[0].ids
    ids = list(ids)
    if ids_sha256(ids) != entry["ids_sha256"]:
        raise UserInputError(f"{suite}/{task}: these {len(ids):,} ids are not the ones the report audited "
                             f"({entry['n']:,} ids, sha256 {entry['ids_sha256'][:12]}...)")
    leaked = {item for group in entry["leaked_ids"].values() for item in group}
    return [item for item in ids if item not in leaked]


__all__ = ["DEFAULT_THRESHOLD", "MOLECULE", "REACTION", "TestSet", "clean_ids", "ids_sha256", "kind_of", "leakage",
           "reaction_key", "read_report", "suite_test_sets"]
