"""The typed ``details`` of the generation suite's results (``Result.details``).

``evaluate`` results carry :class:`EvaluateDetails`: how many strings were read, valid and
unique, the warnings a reader of the metrics must see, the reference sets compared against,
where the time went, the IntDiv estimate on a large run, the chunks of a streamed run and the
property-distribution picture. ``filter`` results carry :class:`FilterDetails` (the files
written and the structural alerts matched), ``split`` results :class:`SplitDetails` (the
folder and its manifest). Strings that are not valid molecules are in ``Result.skipped``, with
their line and reason, not here.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from chemassay.contract.result import ResultDetails


class _Closed(BaseModel):
    """A nested record: closed like the details themselves (a misspelt field is an error)."""

    model_config = ConfigDict(extra="forbid")


class Counts(_Closed):
    """The generated strings of an ``evaluate`` run."""

    input: int
    """Strings read (valid or not; an empty answer counts)."""
    valid: int
    """Strings RDKit parses into a molecule."""
    invalid: int
    unique_valid: int
    """Distinct valid molecules (canonical SMILES)."""


class ReferenceSet(_Closed):
    """A reference set the samples were compared against (test, scaffold test)."""

    name: str
    source: str
    """``published`` (the MOSES authors' statistics), ``computed`` (from SMILES here) or a file."""
    sha256: str | None = None
    n_molecules: int | None = None
    n_invalid: int | None = None


class Bounds(_Closed):
    """An estimated value with its 95 % interval."""

    value: float
    low: float
    high: float


class IntDivEstimate(_Closed):
    """How IntDiv was estimated on a run too large to compare every pair on one CPU."""

    method: str
    rows: int
    """Molecules drawn (with their multiplicities), each compared with every molecule."""
    seed: int
    IntDiv: Bounds
    IntDiv2: Bounds


class Estimates(_Closed):
    """Metrics that were estimated rather than computed exactly (``config["intdiv"]`` says so too)."""

    IntDiv: IntDivEstimate | None = None


class EvaluateDetails(ResultDetails):
    """What a MOSES ``evaluate`` result carries beside its metrics (see the module docstring)."""

    counts: Counts
    warnings: list[str] = Field(default_factory=list)
    """What changes how the metrics read: failed model requests, unique@k for fewer than k
    valid molecules, an estimated IntDiv..."""
    references: dict[str, ReferenceSet] = Field(default_factory=dict)
    """``Test`` and ``TestSF`` (when scored) by label."""
    timings_s: dict[str, float] = Field(default_factory=dict)
    """Wall seconds per stage (references, parse, describe, fcd, snn, ...)."""
    estimates: Estimates | None = None
    chunks: int | None = None
    """Chunks the samples were streamed in."""
    resumed_chunks: int = 0
    """Chunks read back from ``work_dir`` (an interrupted run resumed)."""
    plot: str | None = None
    """The property-distribution PNG written for this result (``plot=``)."""


class FilterOutput(_Closed):
    """The files a ``filter`` run wrote."""

    kept: str | None = None
    sha256: str | None = None
    """Of the kept-molecules file."""
    rejected: str | None = None
    """The CSV of the removed molecules (line, smiles, filter, failures, alerts)."""


class FilterDetails(ResultDetails):
    """What a ``filter`` result carries: the files written and the alerts matched."""

    output: FilterOutput = Field(default_factory=FilterOutput)
    alert_hits: dict[str, int] = Field(default_factory=dict)
    """Molecules matching each MCF / PAINS structural alert, by alert name."""


class SplitOutput(_Closed):
    """Where a ``split`` run wrote the split."""

    folder: str
    manifest: str


class SplitDetails(ResultDetails):
    """What a ``split`` result carries: the folder written and its manifest."""

    output: SplitOutput


__all__ = [
    "Bounds", "Counts", "Estimates", "EvaluateDetails", "FilterDetails", "FilterOutput", "IntDivEstimate",
    "ReferenceSet", "SplitDetails", "SplitOutput",
]
