"""``check_model``: run a protocol's own conformance checks on a model.

A model that passes returns outputs of the promised shapes and types for every input, gives
the same outputs for the same inputs (and, for generators, the same sample for the same
seed), and fails with a clear error on bad arguments. Which checks, on which small textbook
inputs, is the protocol's business (:meth:`chemassay.contract.Protocol.checks`, in each
suite's ``protocol.py``); this module runs them and reports.

::

    >>> from chemassay.models import check_model
    >>> report = check_model("fingerprint", "encoder")
    >>> report.passed
    True
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from chemassay.contract import Protocol
from chemassay.contract.errors import ChemassayError
from chemassay.models.protocols import get_protocol
from chemassay.models.registry import resolve_model


@dataclass
class Check:
    """One contract check: its name, whether it passed and what was seen."""

    name: str
    passed: bool
    message: str = ""


@dataclass
class CheckReport:
    """Every check run for one model and protocol."""

    model: str
    protocol: str
    checks: list[Check] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """Whether every check passed."""
        return bool(self.checks) and all(c.passed for c in self.checks)

    def failures(self) -> list[Check]:
        """The checks that failed."""
        return [c for c in self.checks if not c.passed]

    def summary(self) -> str:
        """One line per check."""
        lines = [f"{self.model} as {self.protocol}: {'PASS' if self.passed else 'FAIL'}"]
        lines += [f"  [{'ok' if c.passed else 'FAIL'}] {c.name}" + (f": {c.message}" if c.message else "") for c in self.checks]
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"model": self.model, "protocol": self.protocol, "passed": self.passed,
                "checks": [{"name": c.name, "passed": c.passed, "message": c.message} for c in self.checks]}


def _run(report: CheckReport, name: str, test: Callable[[], str | None]) -> None:
    try:
        problem = test()
    except (ChemassayError, ValueError, TypeError, RuntimeError, KeyError, IndexError, AttributeError) as exc:
        report.checks.append(Check(name, False, f"raised {type(exc).__name__}: {str(exc)[:200]}"))
        return
    report.checks.append(Check(name, problem is None, problem or ""))


def str_list_problem(value: Any, length: int | None = None) -> str | None:
    """What is wrong with ``value`` as a list of strings (of ``length`` items), or ``None``."""
    if not isinstance(value, list):
        return f"expected a list, got {type(value).__name__}"
    if length is not None and len(value) != length:
        return f"expected {length} items, got {len(value)}"
    wrong = [type(v).__name__ for v in value if not isinstance(v, str)]
    return f"items must be strings, got {wrong[0]}" if wrong else None


def check_model(model: Any, protocol: str | Protocol, context: dict[str, Any] | None = None) -> CheckReport:
    """Run ``protocol``'s checks on ``model`` (an object or a spec string); never raises
    for a failing model: the report says what failed (a spec that cannot be loaded is one
    failed check)."""
    found = get_protocol(protocol)
    label = model if isinstance(model, str) else getattr(model, "name", type(model).__name__)
    report = CheckReport(str(label), found.name)
    try:
        loaded = resolve_model(model, found.name, context)
    except ChemassayError as exc:
        report.checks.append(Check("loads", False, str(exc)))
        return report
    report.checks.append(Check("loads", True))
    for name, test in found.checks():
        _run(report, name, lambda test=test: test(loaded))
    return report
