"""The typed ``details`` of each reaction-ood result (``Result.details``), one model per task.

What a reaction-ood command reports beyond the fields every result has: the breakdowns and
the wrong top-1 predictions of ``evaluate`` (the gallery's rows), the files a command wrote,
the guarantees ``verify`` checked, the distance summaries of ``shift``. Items that could not be
scored, or failed, are never here: they are the result's ``skipped`` entries, each with its
line, item and reason.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from chemassay.contract.result import ResultDetails

BreakdownRow = dict[str, str | int | float | None]
"""One group of a breakdown: ``group`` (a year, a class prefix, a value of a ``--group-by``
column), ``n`` (test reactions in it) and its accuracies under the result's metric keys
(``top1_accuracy``, ``top5_accuracy``, ``top1_accuracy_stereo_agnostic``...)."""


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid")


class WrongPrediction(_Row):
    """A test reaction whose first prediction is wrong (a row of the failure gallery)."""

    id: str
    """The test reaction's id (or row number when predictions are aligned by order)."""
    target: str
    """Its recorded products."""
    predictions: list[str]
    """The first five predictions, as given."""
    rank: int | None = None
    """Rank of the first correct prediction (``None``: none is correct)."""
    reactants: str | None = None
    """Its reactants, where the test table has them."""


class EvaluateDetails(ResultDetails):
    """Details of an ``evaluate`` result."""

    breakdowns: dict[str, list[BreakdownRow]] = Field(default_factory=dict)
    """Accuracy per ``year``, per class prefix (``class_level1``, ``class_level2``) and per
    ``--group-by`` column, each a list of groups in natural order."""
    items: list[WrongPrediction] = Field(default_factory=list)
    """The first 200 test reactions (in test order) whose top-1 prediction is wrong."""
    per_item: str | None = None
    """The per-reaction table written (``out=``; ``--per-item``), if any."""


class IterateDetails(ResultDetails):
    """Details of an ``iterate`` (two-round) result."""

    predictions: str | None = None
    """The table of every round's predictions written (``out=``; ``--predictions``), if any."""


class CleanDetails(ResultDetails):
    """Details of a ``clean`` result."""

    output: str
    """The cleaned table written."""


class Check(_Row):
    """One guarantee of a split folder and whether it holds."""

    check: str
    """Its kind (``file``, ``disjoint``...)."""
    description: str
    passed: bool
    violations: int = 0
    examples: list[str] = Field(default_factory=list)
    """At most five examples of violations."""


class VerifyDetails(ResultDetails):
    """Details of a ``verify`` result."""

    checks: list[Check] = Field(default_factory=list)


class DistanceSummary(_Row):
    """The distribution of one test set's distances in one space."""

    n: int
    """Test reactions with a distance (those that could be fingerprinted)."""
    median: float | None = None
    mean: float | None = None
    q25: float | None = None
    q75: float | None = None


class ShiftDetails(ResultDetails):
    """Details of a ``shift`` (distribution-shift) result."""

    summaries: dict[str, DistanceSummary] = Field(default_factory=dict)
    """``{set}/{space}`` → the distances' n, median, mean and quartiles."""
    plot: str | None = None
    """The histogram picture written (``plot=``), if any."""
    per_item: str | None = None
    """The per-reaction distance table written (``per_item=``), if any."""


def breakdowns_of(result: object) -> dict[str, list[BreakdownRow]]:
    """The breakdowns of an ``evaluate`` result (``{}`` for any other result)."""
    details = getattr(result, "details", None)
    return dict(details.breakdowns) if isinstance(details, EvaluateDetails) else {}
