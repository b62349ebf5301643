"""What the layers above hand down to the contract, which imports nothing of chemassay.

A :class:`~chemassay.contract.result.Result` validates its ``details`` with the class its suite
declares for the task; the suite registry (:mod:`chemassay.suites`, imported by ``import
chemassay``) installs how that class is found (:func:`set_details_lookup`). Checks every
result must pass are added with :func:`add_result_check` (:mod:`chemassay.report.cards` adds
the metric-card check that ``CHEMASSAY_STRICT_CARDS=1`` turns on).

>>> from types import SimpleNamespace
>>> seen = []
>>> check = add_result_check(lambda result: seen.append(result.task))
>>> check_result(SimpleNamespace(suite="toy", task="evaluate", metrics={}))
>>> seen
['evaluate']
>>> remove_result_check(check)
>>> check_result(SimpleNamespace(suite="toy", task="train", metrics={})); seen
['evaluate']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

DetailsLookup = Callable[[str, str], Any]
"""``(suite, task) -> details class``: raises ``ValueError`` naming what is unknown."""
ResultCheck = Callable[[Any], None]
"""Called with every validated result; raises ``ValueError`` to refuse it."""

_lookup: list[DetailsLookup] = []
_checks: list[ResultCheck] = []

__all__ = ["DetailsLookup", "ResultCheck", "add_result_check", "check_result", "details_class", "remove_result_check",
           "set_details_lookup"]


def set_details_lookup(lookup: DetailsLookup) -> None:
    """Install how a result finds the details class of ``(suite, task)`` (the registry's)."""
    _lookup[:] = [lookup]


def details_class(suite: str, task: str) -> Any:
    """The details class ``suite`` declares for ``task`` (``ValueError`` when there is none)."""
    if not _lookup:
        raise ValueError(f"details given for suite {suite!r}, but no suite registry is loaded")
    return _lookup[0](suite, task)


def add_result_check(check: ResultCheck) -> ResultCheck:
    """Run ``check`` on every result validated from now on; returns it (for removal)."""
    if check not in _checks:
        _checks.append(check)
    return check


def remove_result_check(check: ResultCheck) -> None:
    """Stop running ``check``."""
    if check in _checks:
        _checks.remove(check)


def check_result(result: Any) -> None:
    """Run every installed check on ``result``."""
    for check in list(_checks):
        check(result)
