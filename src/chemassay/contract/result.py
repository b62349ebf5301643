"""The result contract every evaluating command writes (``--out OUT.json``).

Fields (documented one by one in docs/core.md): ``suite``, ``task`` (the verb:
``evaluate``, ``balance``, ``retrieve``...), ``model`` (which model produced the outputs:
spec, display name, parameters, checksum), ``metrics`` (every key declared in a metric
card), ``n`` (items scored), ``skipped`` (items that could not be scored, each with a
reason), ``dataset`` (name + sha256), ``inputs`` (paths + sha256), ``config`` (the variant:
baseline, split, augmentation, options), ``versions`` (chemassay, rdkit, python),
``elapsed_s``, and the benchmark ``setting`` it was measured in (in the papers' own words:
``variant``, ``split``, ``protocol``...), which decides the published rows it stands beside.
The schema is closed: what is particular to a suite lives in ``details``, a typed model the
suite declares for each task (:attr:`chemassay.suites.Suite.details`); an undeclared field is
refused. :func:`make_result` fills timing, input hashes and model identity in one place.
"""

from __future__ import annotations

import json
import math
import os
import platform
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny, ValidationInfo, field_validator

from chemassay.contract.errors import UserInputError
from chemassay.contract.files import atomic_write_text, sha256_file
from chemassay.contract.hooks import check_result, details_class
from chemassay.contract.version import __version__

__all__ = [
    "DatasetRef", "InputRef", "Interval", "ModelRef", "RequestSummary", "Result", "ResultDetails",
    "SkippedItem", "SubsetRef", "Timer", "current_versions", "describe_validation_error", "input_ref",
    "make_result", "read_result",
]


class SkippedItem(BaseModel):
    """An item that could not be scored (or whose model request failed): where it was
    (line/row, item id or text, position) and why."""

    model_config = ConfigDict(extra="forbid")

    line: int | None = None
    item: str | None = None
    index: int | None = None
    """Position of the item in the input, when line numbers do not apply."""
    reason: str


class DatasetRef(BaseModel):
    """The dataset a result refers to."""

    model_config = ConfigDict(extra="forbid")

    name: str
    sha256: str | None = None


class ModelRef(BaseModel):
    """Which model produced what a result scores.

    ``spec`` is the model spec (``KIND:ARG[,key=value...]``; ``predictions:FILE`` for a
    scored file), ``name`` a display name, ``kind`` the registry kind, ``parameters`` the
    settings that determine its outputs, and ``checksum`` a sha256 that identifies it: of the
    checkpoint or the predictions file, or of the kind and parameters for a built-in
    baseline that has no file.
    """

    model_config = ConfigDict(extra="forbid")

    spec: str
    name: str
    kind: str
    parameters: dict[str, Any] = Field(default_factory=dict)
    checksum: str | None = None


class InputRef(BaseModel):
    """A file the command read, with its checksum."""

    model_config = ConfigDict(extra="forbid")

    path: str
    sha256: str | None = None


def current_versions() -> dict[str, str]:
    """Versions of chemassay, RDKit and Python (plus torch when it is already imported)."""
    import sys

    import rdkit

    versions = {"chemassay": __version__, "rdkit": rdkit.__version__, "python": platform.python_version()}
    if "torch" in sys.modules:
        versions["torch"] = sys.modules["torch"].__version__
    return versions


def input_ref(path: str | os.PathLike) -> InputRef:
    """An :class:`InputRef` for an existing file (checksum computed)."""
    return InputRef(path=str(path), sha256=sha256_file(path))


def _clean(value: Any) -> Any:
    """Make values JSON-safe: NaN/inf become ``None``, numpy scalars become Python numbers."""
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        try:
            value = value.item()
        except (ValueError, TypeError):
            pass  # not a scalar (e.g. an array): kept, _json_default converts it when written
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _json_default(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return _clean(value.tolist())
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    raise TypeError(f"cannot write {type(value).__name__} to a result file")


class Interval(BaseModel):
    """A confidence interval of one metric: bounds, level and how it was obtained."""

    model_config = ConfigDict(extra="forbid")

    low: float | None
    high: float | None
    level: float = 0.95
    method: str = "bootstrap"
    resamples: int | None = None
    seed: int | None = None


class RequestSummary(BaseModel):
    """What a run against a model behind an endpoint asked and what it cost.

    ``new`` answers came from the server in this run, ``cached`` from the response cache,
    ``failed`` requests failed for good (their items are in ``skipped`` with the reason;
    ``reasons`` counts them by reason); ``cut_off`` of them were answers cut off at the length
    limit (``finish_reason: length``; :attr:`cut_off_share` of the replies). ``prompt_tokens`` /
    ``completion_tokens`` sum the ``usage`` the server reported for this run's replies
    (``None``: it reported none), ``reasoning_tokens`` the part of the completion tokens spent
    reasoning (``usage.completion_tokens_details.reasoning_tokens``, where the server reports
    it); ``endpoints`` are the base URLs asked. ``unreadable`` answers came back but held nothing
    the protocol could read (no SMILES, no bag...): their items are scored as missing answers
    (a local text model without an endpoint reports only this count).
    """

    model_config = ConfigDict(extra="forbid")

    new: int = 0
    cached: int = 0
    failed: int = 0
    unreadable: int = 0
    reasons: dict[str, int] = Field(default_factory=dict)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None
    cut_off: int = 0
    endpoints: list[str] = Field(default_factory=list)

    @property
    def answered(self) -> int:
        """Requests answered, new or from the cache."""
        return self.new + self.cached

    @property
    def cut_off_share(self) -> float:
        """Share of this run's replies (whole answers and cut-off ones) cut off at the length limit."""
        replies = self.new + self.cut_off
        return self.cut_off / replies if replies else 0.0

    def line(self) -> str:
        """The one summary line: ``N answered: A new, C from cache, F failed`` (+ ``, U
        unreadable`` where some answers were, the answers cut off at the length limit, tokens,
        the most common failure).

        >>> RequestSummary(new=18, failed=2, cut_off=2, prompt_tokens=900, completion_tokens=5000,
        ...                reasoning_tokens=4100, reasons={"answer cut off (finish_reason=length)": 2}).line()
        '18 answered: 18 new, 0 from cache, 2 failed; 2 cut off at the length limit (10 % of the replies); tokens: 900 prompt + 5000 completion (4100 reasoning) (most common: answer cut off (finish_reason=length), 2x)'
        """
        if not (self.answered or self.failed or self.endpoints):  # a local model: only its unreadable answers
            return f"{self.unreadable} unreadable answers"
        text = f"{self.answered} answered: {self.new} new, {self.cached} from cache, {self.failed} failed"
        if self.unreadable:
            text += f", {self.unreadable} unreadable"
        if self.cut_off:
            text += f"; {self.cut_off} cut off at the length limit ({100 * self.cut_off_share:.0f} % of the replies)"
        if self.prompt_tokens is not None or self.completion_tokens is not None:
            text += f"; tokens: {self.prompt_tokens or 0} prompt + {self.completion_tokens or 0} completion"
            if self.reasoning_tokens is not None:
                text += f" ({self.reasoning_tokens} reasoning)"
        if self.failed and self.reasons:
            reason, count = next(iter(self.reasons.items()))
            text += f" (most common: {reason}, {count}x)"
        return text


class SubsetRef(BaseModel):
    """The seeded subset of a task's items a result was measured on (``assay --limit N`` or
    ``--precision H``; :mod:`chemassay.report.subsets`): every model asked with the same seed
    gets the same items, whose sorted ids hash to ``sha256``."""

    model_config = ConfigDict(extra="forbid")

    seed: int
    size: int
    """Items chosen (the result scores these, less any it had to skip)."""
    of: int
    """Items of the whole task the subset was drawn from."""
    sha256: str
    """sha256 of the chosen ids, sorted, one per line (:func:`~chemassay.report.subsets.subset_sha256`)."""
    limit: int
    """The most items asked for (``--limit``, or the number ``--precision`` chose)."""
    precision: float | None = None
    """The interval half-width ``--precision`` asked for, when it chose ``limit``."""
    strata: dict[str, int] = Field(default_factory=dict)
    """Chosen items per stratum (split, difficulty level, rewrite class...), where the task has strata."""
    method: str = "stratified"
    """``stratified`` (seeded, proportional per stratum) or ``first`` (the first ``size``: samples of a generator)."""

    @property
    def partial(self) -> bool:
        """Whether the subset leaves items of the task out (a result on every item is no subset)."""
        return self.size < self.of


class ResultDetails(BaseModel):
    """Base of every suite's typed details (``Result.details``): closed, so a misspelt or
    undeclared field is an error rather than a silently kept extra."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)


class Result(BaseModel):
    """One evaluation's result, written as JSON by every evaluating command."""

    model_config = ConfigDict(extra="forbid")

    suite: str
    task: str
    model: ModelRef | None = None
    metrics: dict[str, Any]
    n: int
    intervals: dict[str, Interval] = Field(default_factory=dict)
    """95 % intervals of metrics (``chemassay.report.intervals``), keyed like ``metrics``."""
    item_ids: list[str] | None = None
    """Ids of the scored items in order, so two results can be compared item by item."""
    item_scores: dict[str, list[float | None]] = Field(default_factory=dict)
    """Per-item values of each metric that is a mean over items (``metrics[key]`` is their
    mean; ``None`` marks an item the metric does not apply to), aligned with ``item_ids``."""
    skipped: list[SkippedItem] = Field(default_factory=list)
    dataset: DatasetRef | None = None
    setting: dict[str, str] = Field(default_factory=dict)
    """The benchmark setting in the papers' vocabulary (``variant``, ``split``, ``part``,
    ``protocol``, ``dataset``...): a published row stands beside this result only where its
    setting agrees. Empty: the result states no setting (it is shown apart from published rows)."""
    quick: bool = False
    """Measured on the documented quick subset of the benchmark (``assay --quick``): shown
    for a smoke test, never ranked against published rows."""
    subset: SubsetRef | None = None
    """The seeded subset of the task's items it was measured on (``assay --limit``/``--precision``):
    shown beside the papers' rows with its intervals, marked as a subset, never ranked."""
    inputs: list[InputRef] = Field(default_factory=list)
    config: dict[str, Any] = Field(default_factory=dict)
    versions: dict[str, str] = Field(default_factory=current_versions)
    elapsed_s: float = 0.0
    requests: RequestSummary | None = None
    """Requests to a model behind an endpoint: counts and tokens (``None``: no endpoint asked)."""
    details: SerializeAsAny[ResultDetails] | None = None
    """The suite's typed details of this task (breakdowns, per-item rows, files written)."""

    @field_validator("setting", mode="before")
    @classmethod
    def _setting_as_text(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {str(k): str(v) for k, v in value.items() if v is not None and v != ""}
        return value

    @field_validator("details", mode="before")
    @classmethod
    def _typed_details(cls, value: Any, info: ValidationInfo) -> Any:
        """Validate a ``details`` mapping with the class its suite declares for the task."""
        if value is None or isinstance(value, ResultDetails):
            return value
        suite_name, task = info.data.get("suite"), info.data.get("task")
        if not suite_name:
            raise ValueError(f"details given for unknown suite {suite_name!r}")
        return details_class(str(suite_name), str(task)).model_validate(value)

    def model_post_init(self, context: Any) -> None:
        """Every check the layers above installed (:func:`chemassay.contract.hooks.add_result_check`:
        with ``CHEMASSAY_STRICT_CARDS=1``, which the test suite sets, a result whose suite declares
        metric cards may carry no undeclared metric key)."""
        check_result(self)

    def to_json(self, indent: int = 2) -> str:
        """Serialize to JSON text (NaN/inf as ``null``)."""
        return json.dumps(
            _clean(self.model_dump()), indent=indent, allow_nan=False, default=_json_default
        )

    def write(self, path: str | os.PathLike) -> Path:
        """Write the result atomically to ``path`` and return the path."""
        target = Path(path)
        atomic_write_text(target, self.to_json() + "\n")
        return target

    def summary(self, max_metrics: int = 24) -> str:
        """A short human summary: task, counts and the scalar metrics."""
        lines = [f"{self.suite} / {self.task}: n={self.n}, skipped={len(self.skipped)}, {self.elapsed_s:.2f} s"]
        shown = 0
        for key, value in self.metrics.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                lines.append(f"  {key:<24} {value:.4f}" if isinstance(value, float) else f"  {key:<24} {value}")
                shown += 1
                if shown >= max_metrics:
                    break
        return "\n".join(lines)


def read_result(path: str | os.PathLike) -> Result:
    """Read a result JSON written by :meth:`Result.write`; clear error if it is not one.

    The error is one line naming the file and the first field that is wrong (and the
    chemassay version that wrote the file, when it is not this one).
    """
    from pydantic import ValidationError

    target = Path(path)
    if not target.is_file():
        raise UserInputError(f"{target}: no such result file")
    try:
        text = target.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UserInputError(f"{target}: not a chemassay result file (not UTF-8 text)") from None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserInputError(
            f"{target}: not a chemassay result file (invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    if not isinstance(raw, dict):
        raise UserInputError(f"{target}: not a chemassay result file (the top level is a {type(raw).__name__}, not an object)")
    try:
        return Result.model_validate(raw)
    except ValidationError as exc:
        raise UserInputError(f"{target}: not a chemassay result file ({describe_validation_error(exc, raw)})") from None


def describe_validation_error(exc: Any, raw: dict[str, Any]) -> str:
    """``field 'metrics': Field required`` for the first error of a pydantic validation, plus
    the chemassay version that wrote ``raw`` when it differs from this one."""
    error = exc.errors()[0]
    location = ".".join(str(part) for part in error.get("loc", ()))
    message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
    if not location and "metric keys" in message:
        location = "metrics"
    text = f"field '{location or '(top level)'}': {message}"
    versions = raw.get("versions")
    written_by = versions.get("chemassay") if isinstance(versions, dict) else None
    if written_by and written_by != __version__:
        text += f"; written by chemassay {written_by}, this is {__version__}"
    return text


def make_result(
    suite: str,
    task: str,
    *,
    metrics: dict[str, Any],
    n: int,
    model: ModelRef | None = None,
    inputs: Any = (),
    started: float | None = None,
    details: ResultDetails | None = None,
    run: Any = None,
    list_failures: bool = True,
    **fields: Any,
) -> Result:
    """The one way a suite builds its :class:`Result`: timing, input hashes and model identity
    are filled here, the rest is passed through (and checked: an undeclared field is an error).

    ``model`` is a :class:`ModelRef` or ``None`` (a model object is described with
    :func:`chemassay.models.identity.model_ref` first: the contract imports no layer above it); ``inputs``
    are paths (hashed) or :class:`InputRef`; ``started`` is a :func:`time.perf_counter` reading
    taken when the work began (``elapsed_s`` is measured from it unless given).

    ``run`` is the :class:`~chemassay.contract.Run` of the model (the run pipeline's): the
    model's identity and the request counts come from it unless given, every item it
    failed is added to ``skipped`` with its line (position + 1), the item and the reason
    (unless ``skipped`` lists it already with that reason, by that line or by its ``index``),
    and its unreadable answers are counted in ``requests.unreadable`` (a summary is made for a
    model without an endpoint that gave some). ``list_failures=False`` leaves the failed items
    to the suite, which lists them in its own terms (a test file's lines and ids; the pairs of
    rewrites a failed embedding leaves out).
    """
    if run is not None:
        model = run.model if model is None else model
        if run.requests is not None:
            fields.setdefault("requests", run.requests)
        unreadable = len(getattr(run, "unreadable", None) or {})
        requests = fields.get("requests")
        if isinstance(requests, dict):
            requests = RequestSummary.model_validate(requests)
        if requests is not None or unreadable:
            fields["requests"] = (requests or RequestSummary()).model_copy(update={"unreadable": unreadable})
    if run is not None and list_failures:
        given = fields.get("skipped") or []
        listed = {(entry.line, entry.reason) for entry in given}
        listed |= {(entry.index + 1, entry.reason) for entry in given if entry.index is not None}
        extra = [SkippedItem(line=index + 1, item=str(run.items[index])[:200], reason=reason)
                 for index, reason in run.failures.items() if (index + 1, reason) not in listed]
        if extra:
            fields["skipped"] = [*(fields.get("skipped") or []), *extra]
    if model is not None and not isinstance(model, ModelRef):
        raise TypeError(f"make_result takes the model as a ModelRef, not a {type(model).__name__}; "
                        "describe a model object with chemassay.models.identity.model_ref(model, spec) first")
    refs = []
    for item in inputs or ():
        if isinstance(item, InputRef):
            refs.append(item)
        elif isinstance(item, dict):
            refs.append(InputRef(**item))
        else:
            refs.append(input_ref(item) if Path(item).is_file() else InputRef(path=str(item)))
    if started is not None and "elapsed_s" not in fields:
        fields["elapsed_s"] = time.perf_counter() - started
    return Result(suite=suite, task=task, metrics=metrics, n=n, model=model, inputs=refs, details=details, **fields)


class Timer:
    """Context manager measuring wall time: ``with Timer() as t: ...; t.elapsed``."""

    def __enter__(self) -> Timer:
        self.start = time.perf_counter()
        self.elapsed = 0.0
        return self

    def __exit__(self, *exc: object) -> None:
        self.elapsed = time.perf_counter() - self.start
