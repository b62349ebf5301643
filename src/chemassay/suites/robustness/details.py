"""The typed ``Result.details`` of the robustness suite, one model per task.

* :class:`EvaluateDetails` — AMORE retrieval (``evaluate``): the paper's table rows, the
  per-layer metrics, string statistics, rewrites that did not apply, retrieval misses for the
  failure gallery, identity mismatches of a given pair and warnings;
* :class:`DownstreamDetails` — a property model on the original and rewritten test sets;
* :class:`TrainDetails` — a training run (SMILES language model or graph network);
* :class:`CaptionsDetails` — captioning metrics per rewrite.

Tables whose columns depend on the run (the cut-offs ``k``, a regression or a classification
task) are lists of ``column → value`` rows; records of a fixed shape are nested models. Items
that could not be scored are never kept here: they are ``Result.skipped``.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from chemassay.contract.result import ResultDetails

TableRow = dict[str, str | int | float | None]
"""One row of a metric table: ``augmentation``, ``n`` and the row's values (``None``: not
defined, e.g. a correlation over constant values)."""

PAIR = "pair"
"""The key of per-rewrite fields when one given pair (two embedding sets, or an original and
an augmented file) was scored rather than a dataset's augmentations."""


class RetrievalMiss(BaseModel):
    """A molecule whose rewritten string is not retrieved first from its original (o2a, last
    layer): the two strings side by side for the failure gallery."""

    model_config = ConfigDict(extra="forbid")

    augmentation: str
    id: str
    original: str
    augmented: str
    rank: int
    """1-based rank of the true match among the rewritten strings."""
    retrieved: str | None = None
    """The string retrieved first instead, when recorded."""


class IdentityMismatch(BaseModel):
    """A row of a given original/augmented pair whose two SMILES are not the same molecule."""

    model_config = ConfigDict(extra="forbid")

    line: int
    id: str


class EvaluateDetails(ResultDetails):
    """What AMORE retrieval (``evaluate``) records besides its metrics."""

    table: list[TableRow] | None = None
    """The paper's Tables 1–2 layout, one row per augmentation (``augmentation``, ``n``,
    ``not_applied`` and the last layer's ``<direction>_<metric>`` values); ``None`` for one
    given pair."""
    per_layer: dict[str, list[dict[str, float | None]]] | None = None
    """Augmentation (or ``pair``) → the metrics of every layer (layer 0 = embeddings), when
    several layers were scored."""
    not_applied: dict[str, int] = Field(default_factory=dict)
    """Augmentation (or ``pair``) → rows it had nothing to rewrite in (kept, as in AMORE)."""
    strings: dict[str, dict[str, float | None]] = Field(default_factory=dict)
    """Augmentation (``original``, or ``pair``) → the paper's string analysis (Table 11):
    mean/std length, Levenshtein ratio, normalized similarity, share unchanged."""
    truncated: list[int] = Field(default_factory=list)
    """Rows whose input the encoder truncated (its maximum length)."""
    misses: list[RetrievalMiss] = Field(default_factory=list)
    """Up to 20 misses per augmentation, for the failure gallery."""
    identity_mismatches: list[IdentityMismatch] | None = None
    """For a given pair with the identity check on: rows that are not the same molecule."""
    warnings: list[str] = Field(default_factory=list)
    """Things that change how the numbers must be read (shown on the console too)."""


class DownstreamDetails(ResultDetails):
    """What ``downstream`` records besides its metrics."""

    table: list[TableRow] = Field(default_factory=list)
    """One row per test set (``original`` first, then each augmentation): ``n``,
    ``not_applied``, the task's metrics and their drops (``rmse``/``rmse_drop``, or
    ``accuracy``/``roc_auc`` and drops), ``mean_length``, ``levenshtein_ratio``,
    ``normalized_similarity`` and ``spearman_levenshtein_vs_error_change``."""
    classes: list[list[str]] = Field(default_factory=list)
    """Per classification target, its class labels in index order (empty for regression)."""


class TrainDetails(ResultDetails):
    """A training run (``train``, ``train_gnn``): where the checkpoint is and how far it got."""

    checkpoint: str
    family: str
    """``encoder``, ``decoder``, ``encoder-decoder`` (language models) or ``gnn``."""
    parameters: int | None = None
    """Trainable parameters."""
    n_train: int
    """Training molecules."""
    finished: bool
    """False after a piece cut short by ``max_minutes``: run again to resume."""
    epochs_done: int
    train_seconds: float
    """Seconds spent training, summed over every piece."""


class CaptionsDetails(ResultDetails):
    """What ``captions`` records besides its metrics."""

    table: list[TableRow] = Field(default_factory=list)
    """The paper's Tables 3 and 11 columns, one row per rewrite."""
    warnings: list[str] = Field(default_factory=list)


__all__ = [
    "PAIR", "CaptionsDetails", "DownstreamDetails", "EvaluateDetails", "IdentityMismatch", "RetrievalMiss",
    "TableRow", "TrainDetails",
]
