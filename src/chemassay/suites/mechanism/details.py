"""The typed ``details`` of the mechanism suite's results (``Result.details``).

``evaluate`` results carry :class:`EvaluateDetails`: the breakdowns of oMeS (by difficulty
level, domain, gold mechanism length, step type and subtype), the alignment tag counts, the
error taxonomy of the paper's Fig. 6, the warnings a reader of the means must see, and one
:class:`ReactionRow` per scored gold reaction (the failure gallery draws them). ``verify``
results carry :class:`VerifyDetails`: every finding in the checked file. Reactions that
could not be scored as asked (no prediction, an answer that could not be parsed, a model
request that failed) are in ``Result.skipped`` with their reason, not here.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from chemassay.contract.result import ResultDetails


class _Closed(BaseModel):
    """A nested row: closed like the details themselves (a misspelt field is an error)."""

    model_config = ConfigDict(extra="forbid")


class GroupScores(_Closed):
    """Mean oMeS metrics of a group of reactions (a level, a domain, a mechanism length)."""

    n: int
    S_total: float
    S_partial: float
    V: float
    L: float


class StepAccuracy(_Closed):
    """How the gold steps of one step type (or subtype) were matched."""

    steps: int
    """Gold steps of this label."""
    match_rate: float
    """Share aligned as ``match`` (predicted type equals the gold type)."""
    exact_rate: float
    """Share matched with the exact gold intermediate."""
    partial_credit: float
    """Mean partial credit (Tanimoto ≥ tau) of these gold steps."""


class Step(_Closed):
    """One mechanism step as the gallery draws it."""

    type: str | None = None
    subtype: str | None = None
    smiles: str | None = None


class ReactionRow(_Closed):
    """One scored gold reaction: its scores, the alignment, both step lists."""

    reaction_id: str
    level: str | None = None
    status: str
    """``scored``, ``missing`` (no prediction: an empty mechanism) or ``unparsed`` (scored 0)."""
    n_gold: int
    n_pred: int
    S_total: float
    S_partial: float
    V: float
    L: float
    alignment: list[str] = Field(default_factory=list)
    """The scorer's trace-back tags: ``match``, ``type_mismatch``, ``skip_gold``, ``skip_pred``."""
    gold_steps: list[Step] = Field(default_factory=list)
    predicted_steps: list[Step] = Field(default_factory=list)
    weights: str | None = None
    """Where the gold step weights came from when not from the data file (``fitted``, ``paper``)."""
    repairs: dict[str, int] | None = None
    """Repairs the lenient parser made to read the answer, by kind."""
    reason: str | None = None
    """Why the answer could not be parsed (``unparsed`` rows)."""
    line: int | None = None
    """Line of the prediction row in the predictions file."""
    domain: str | None = None
    """``in-domain`` / ``out-of-domain`` (Table 16), when a domain pool was used."""


class ErrorGroup(_Closed):
    """One of the three groups of Fig. 6's error categories."""

    events: int
    share: float
    categories: list[str]


class ErrorTaxonomy(_Closed):
    """Error events by category (the paper's Fig. 6), see :mod:`.error_analysis`."""

    events: int
    counts: dict[str, int]
    share: dict[str, float]
    groups: dict[str, ErrorGroup]
    unparsed_reasons: dict[str, int] = Field(default_factory=dict)
    examples: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)
    """Up to three examples per category (reaction id and what was wrong: step, SMILES...)."""


class EvaluateDetails(ResultDetails):
    """What an oMeS ``evaluate`` result carries beside its metrics (see the module docstring)."""

    warnings: list[str] = Field(default_factory=list)
    """What a reader of the means must know (reactions without prediction, unparsed answers...)."""
    by_level: dict[str, GroupScores] = Field(default_factory=dict)
    """The paper's Table 3 columns: ``easy``, ``medium``, ``hard``."""
    by_domain: dict[str, GroupScores] = Field(default_factory=dict)
    """Table 16: ``in-domain`` / ``out-of-domain`` (empty without a domain pool)."""
    by_length: dict[str, GroupScores] = Field(default_factory=dict)
    """Fig. 7: by gold mechanism length (steps, as text)."""
    by_type: dict[str, StepAccuracy] = Field(default_factory=dict)
    """Fig. 8: by gold step type."""
    by_subtype: dict[str, StepAccuracy] = Field(default_factory=dict)
    alignment_tags: dict[str, int] = Field(default_factory=dict)
    error_taxonomy: ErrorTaxonomy | None = None
    reactions: list[ReactionRow] = Field(default_factory=list)
    """One row per scored gold reaction, in the order of ``item_ids``."""


class Problem(_Closed):
    """One finding of ``verify`` in an oMeBench file."""

    line: int | None = None
    reaction_id: str | None = None
    field: str
    kind: str
    severity: str
    """``error`` or ``warning``."""
    message: str


class VerifyDetails(ResultDetails):
    """What a ``verify`` result carries: every finding, in file order."""

    problems: list[Problem] = Field(default_factory=list)


__all__ = [
    "ErrorGroup", "ErrorTaxonomy", "EvaluateDetails", "GroupScores", "Problem", "ReactionRow", "Step",
    "StepAccuracy", "VerifyDetails",
]
