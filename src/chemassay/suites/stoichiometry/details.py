"""The typed ``details`` of the stoichiometry suite's results, one model per task.

``evaluate`` keeps its per-sample rows (the three bags and the scores of every scored line:
the alchemy gallery draws from them), the scoring counts and, for a live model, the counts of
its prediction run; ``balance`` keeps Table 1 per split, the element imbalances and the most
frequent explanations; ``build`` keeps the folders written and their manifests. Every item
that could not be scored is in ``Result.skipped``, never here.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from chemassay.contract.result import ResultDetails


class EvaluateRow(BaseModel):
    """One scored sample: its target line, whether the prediction parsed, its scores, the
    multilabel counts, its balance class against the input, and the three bags as written."""

    model_config = ConfigDict(extra="forbid")

    line: int
    valid: bool
    EM: float
    JAC: float
    F1: float
    mol_JAC: float
    mol_F1: float
    ACC: float
    ALO: float
    TP: int
    FP: int
    FN: int
    mol_TP: int
    mol_FP: int
    mol_FN: int
    balance: str | None = None
    """``BAL``, ``DEF``, ``EXC``, ``DE``, or ``None`` (no readable input bag, or no valid prediction)."""
    reason: str | None = None
    """Why the prediction is invalid (the parse error, or the failed request)."""
    prediction: str | None = None
    target: str | None = None
    source: str | None = None


class EvaluateBreakdown(BaseModel):
    """Counts behind the metrics: invalid predictions (and their reasons), balance classes."""

    model_config = ConfigDict(extra="forbid")

    encoding: str
    compat: str
    invalid_predictions: int
    invalid_reasons: dict[str, int]
    balance_checked: int
    balance_classes: dict[str, int]
    unreadable_sources: int


class PredictionCounts(BaseModel):
    """What a live model's prediction run counted (the ``predict`` task's metrics)."""

    model_config = ConfigDict(extra="forbid")

    lines: int
    failed: int
    unknown_reactions: int | None = None
    undetermined: int | None = None
    unreadable_inputs: int | None = None
    memorised_reactions: int | None = None


class EvaluateDetails(ResultDetails):
    """``evaluate``: per-sample rows (unless ``rows=False``), the breakdown, and the model run's counts."""

    breakdown: EvaluateBreakdown
    rows: list[EvaluateRow] | None = None
    prediction_counts: PredictionCounts | None = None
    protocol: str | None = None
    """The protocol the model was asked (``bag-predictor``, ``reaction-predictor``); ``None``
    for a predictions file."""


class BalanceRow(BaseModel):
    """Table 1 of one split (or of all): reactions read, one count per status, the usable ones
    (balanced + re-balanced) and the three percentages."""

    model_config = ConfigDict(extra="forbid")

    reactions: int
    balanced: int
    rebalanced: int
    ambiguous: int
    unexplained: int
    invalid: int
    usable: int
    balanced_pct: float | None
    rebalanced_pct: float | None
    usable_pct: float | None


class PaperTable1Row(BaseModel):
    """One split of the paper's Table 1 (USPTO-MIT): total count and percentages."""

    model_config = ConfigDict(extra="forbid")

    total: int
    balanced: float
    rebalanced: float
    usable: float


class BalanceDetails(ResultDetails):
    """``balance``: Table 1 per split, element imbalances, the most frequent explanations of
    re-balanced and unexplained reactions, and the paper's Table 1 beside them."""

    per_split: dict[str, BalanceRow]
    element_imbalance: dict[str, int]
    top_explanations: dict[str, int]
    top_unexplained: dict[str, int]
    paper_table_1_uspto_mit: dict[str, PaperTable1Row]


class BuildDetails(ResultDetails):
    """``build``: the dataset folders written and their manifests (as written next to the files)."""

    folders: list[str]
    manifests: list[dict[str, Any]]
