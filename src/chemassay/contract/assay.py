"""A suite's part in ``chemassay assay``: the types a suite's ``assay`` module declares its tasks
with. They live in the contract so that a suite never imports the assay that runs it
(:mod:`chemassay.assaying`, above the suites, runs them).

A suite subclasses :class:`SuiteAssay` and lists its headline benchmark settings as
:class:`AssayTask` objects; each task's ``run`` gets an :class:`AssayContext` and returns a
:class:`~chemassay.contract.result.Result`; its ``listing`` gives the :class:`TaskItems` that
``--limit`` chooses among (:func:`chemassay.report.subsets.task_subset`) and ``--dry-run``
counts. :func:`metric_text` writes one metric for a verdict line.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chemassay.contract.result import Result

__all__ = ["ENDPOINT_KINDS", "AssayContext", "AssayTask", "SuiteAssay", "TaskItems", "metric_text"]

ENDPOINT_KINDS = frozenset({"openai"})
"""Kinds whose models answer over the network: ``--dry-run`` counts their requests."""


@dataclass
class AssayContext:
    """What a task's ``run`` gets: the model, where to write, and the assay's options."""

    spec: str
    """The model spec to evaluate (``KIND:ARG[,key=value...]``)."""
    out_dir: Path
    """The suite's folder under the assay's output folder (predictions, built data, plots)."""
    quick: bool = False
    seed: int = 0
    n_jobs: int = 1
    model_context: dict[str, Any] = field(default_factory=dict)
    """Settings for loading the model (``base_url``...), as ``load_model`` takes them."""
    limit: int | None = None
    """At most this many items (``--limit N``, or the ``N`` that ``--precision`` chose): the
    task runs the seeded subset :func:`chemassay.report.subsets.task_subset` picks from its items (``None``: all)."""
    precision: float | None = None
    """The interval half-width ``--precision`` asked for (recorded with the subset)."""


@dataclass
class TaskItems:
    """The items a task asks a model, listed before it runs: ``--limit`` picks its subset among
    ``ids`` (stratified by ``strata``), and ``--dry-run`` builds the prompts of the chosen ones
    with the protocol (``prompt(items, options, settings)``) to count their tokens."""

    ids: list[str]
    """Item ids, as the result's ``item_ids`` will name them."""
    items: list[Any] = field(default_factory=list)
    """What the protocol is asked for each id, aligned with ``ids`` (empty: not listed)."""
    strata: list[str] | None = None
    """Each item's stratum (split, difficulty level, rewrite class...), aligned with ``ids``."""
    options: dict[str, Any] = field(default_factory=dict)
    """The protocol options the task asks with (``k``, ``seed``...)."""
    context: dict[str, Any] = field(default_factory=dict)
    """Model settings the task gives a text model (``encoding``, ``system``)."""
    texts: list[list[str]] | None = None
    """For an embeddings model: the strings embedded for each item (original and rewrites)."""
    method: str = "stratified"
    """How :func:`task_subset` chooses among ``ids``: ``stratified`` (seeded), or ``first`` (a
    generator's samples ``0..n-1``, which are not items to choose among)."""

    def chosen(self, ids: Sequence[str]) -> TaskItems:
        """The same listing restricted to ``ids`` (kept in this listing's order)."""
        wanted = set(ids)
        keep = [i for i, item_id in enumerate(self.ids) if item_id in wanted]

        def pick(values: list[Any] | None) -> list[Any] | None:
            return None if values is None else [values[i] for i in keep] if values else []

        return TaskItems(ids=[self.ids[i] for i in keep], items=pick(self.items) or [], strata=pick(self.strata),
                         options=dict(self.options), context=dict(self.context), texts=pick(self.texts),
                         method=self.method)


@dataclass(frozen=True)
class AssayTask:
    """One evaluation of a suite's assay: one headline setting of its paper."""

    key: str
    """Unique within the suite; the result is written to ``OUT/<suite>/<key>.json``."""
    title: str
    """What it reproduces, in words (``Table S2.2: document split, reactions of new patents``)."""
    protocol: str
    """The model protocol it asks."""
    dataset: str
    """The dataset it is scored on (a registered name)."""
    setting: Mapping[str, str]
    """The setting its result will carry (``Result.setting``)."""
    items: int
    """How many items it scores (for ``--dry-run``)."""
    run: Callable[[AssayContext], Result]
    """Prepare the data (cached), run the model, score, and return the result."""
    requests: int | None = None
    """Requests a model behind an endpoint receives (``None``: the same as ``items``)."""
    listing: Callable[[AssayContext], TaskItems] | None = None
    """The task's items before any subset, with what the model is asked for each (``--limit``
    chooses among them; ``--dry-run`` counts the tokens of their prompts). It may prepare data
    (cached) but asks no model."""
    headline: tuple[str, ...] = ()
    """The metric keys the verdict leads with; ``--precision H`` sizes the subset so that their
    95 % intervals are at most ``±H`` (for metrics that are means of values in [0, 1])."""

    @property
    def request_count(self) -> int:
        """Requests a model behind an endpoint receives for this task."""
        return self.items if self.requests is None else self.requests


class SuiteAssay:
    """A suite's part in ``chemassay assay`` (subclass it in the suite's ``assay`` module).

    ``baseline`` is the spec of the suite's built-in baseline (``chemassay demo`` and
    ``assay(model=None)`` run it); ``quick_note`` documents what ``--quick`` runs.
    """

    baseline: str | None = None
    quick_note: str = ""

    def tasks(self, protocols: set[str], *, quick: bool, spec: str, limit: int | None = None) -> list[AssayTask]:
        """The tasks for a model implementing ``protocols`` (a subset of the suite's); with
        ``limit`` each runs at most ``limit`` items (its ``items`` and ``requests`` say so, and
        its ``run`` takes the seeded subset :func:`chemassay.report.subsets.task_subset` picks with ``ctx.limit``)."""
        raise NotImplementedError

    def verdict(self, results: list[Result]) -> str:
        """One line summing up the suite's results (the headline numbers, with intervals)."""
        return ""


def metric_text(result: Result, key: str, *, label: str | None = None, percent: bool = False,
                digits: int | None = None) -> str:
    """``label value [low, high]`` of one metric of a result, for a verdict line (``label –``
    when the result has no finite value; the interval only when it has one). ``percent``
    prints a fraction as a percentage (``36.9 % [34.8, 39.1]``)."""
    name = "" if label == "" else f"{label or key} "
    value = result.metrics.get(key)
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        return f"{name}–"
    scale, places = (100.0, 1 if digits is None else digits) if percent else (1.0, 3 if digits is None else digits)
    unit = " %" if percent else ""
    text = f"{name}{scale * value:.{places}f}{unit}"
    interval = result.intervals.get(key)
    if interval is not None and interval.low is not None and interval.high is not None:
        text += f" [{scale * interval.low:.{places}f}, {scale * interval.high:.{places}f}]"
    return text
