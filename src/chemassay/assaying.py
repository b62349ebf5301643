"""``chemassay assay``: one model through every suite it can answer, one scorecard.

Each suite declares its part in its ``assay`` module (``Suite.assay``): a :class:`SuiteAssay`
that lists the suite's headline benchmark settings as :class:`AssayTask` objects (the settings
the paper's tables report), prepares their data itself (cached), says which subset ``--quick``
runs, and sums its results up in a one-line verdict. This module only orchestrates:

1. for every selected suite, the protocols the model implements among those the suite asks
   (a suite the model cannot answer is skipped with one line naming the missing protocol);
2. the suite's tasks for those protocols (``--dry-run`` prints them: items and, for a model
   behind an endpoint, the requests it would send);
3. each task in turn (with ``limit``/``precision``, on a seeded subset of at most ``N`` of its
   items, the same for every model: :func:`task_subset`), its result written to
   ``OUT/<suite>/<task>.json``; a task whose result is already there for the same model, mode
   and subset is not run again, so an assay that was killed
   resumes where it stopped (and the response cache answers the requests already answered
   inside an unfinished task); a task that fails is recorded and the others go on;
4. one verdict line per suite, and the scorecard of everything under ``OUT``
   (``index.html``, ``index.md``) with each suite's verdict, failures and skips.

With ``train_data`` (``--train-data FILE``) the leakage audit (:func:`chemassay.leakage`) runs
first on the declared test sets of the suites being assayed (their quick subsets with
``quick``) and writes ``OUT/leakage.json``; after the tasks every headline metric is computed
again on the clean subset (the items with no exact or near duplicate in the training data,
:mod:`chemassay.report.leakage`), written beside the full-set value to
``OUT/leakage-clean.json``; each suite's verdict says how many test items the model may have
seen, and the scorecard has a leakage section.

The model is one spec for every suite (``openai:NAME,base_url=URL``, ``python:mod:obj``...), a
mapping ``{suite: spec}``, or ``None``: each suite's built-in baseline (``SuiteAssay.baseline``),
which is what ``chemassay demo`` runs.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import time
import traceback
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chemassay.contract.assay import (
    AssayContext,
    AssayTask,
    SuiteAssay,
)
from chemassay.contract.errors import UserInputError
from chemassay.contract.result import Result, read_result
from chemassay.models.python_kind import object_spec
from chemassay.models.registry import get_kind
from chemassay.models.spec import ModelSpec, parse_spec
from chemassay.report.scorecard import build_scorecard, write_report
from chemassay.runtime.files import atomic_write_text
from chemassay.runtime.progress import info, warn

MANIFEST = "assay.json"
@dataclass
class TaskOutcome:
    """What became of one task."""

    suite: str
    task: str
    title: str
    status: str
    """``done`` (run now), ``resumed`` (result found from an earlier run), ``failed``."""
    path: str | None = None
    message: str = ""
    elapsed_s: float = 0.0
    subset: dict[str, Any] | None = None
    """The seeded subset its result was measured on (``Result.subset``), when one was asked."""
    requests: dict[str, Any] | None = None
    """What its result says a model behind an endpoint was asked: answers, failures and the
    tokens the server reported (``Result.requests``)."""


@dataclass
class SuiteOutcome:
    """What became of one suite: its tasks, its verdict, or why it was skipped."""

    suite: str
    spec: str | None
    protocols: list[str] = field(default_factory=list)
    tasks: list[TaskOutcome] = field(default_factory=list)
    verdict: str = ""
    skipped: str = ""

    @property
    def failed(self) -> bool:
        """Whether any of its tasks failed."""
        return any(task.status == "failed" for task in self.tasks)


@dataclass
class AssayReport:
    """The whole assay: per-suite outcomes, the results, and where the scorecard is."""

    out: Path
    model: str | dict[str, str] | None
    quick: bool
    suites: list[SuiteOutcome]
    results: list[Result] = field(default_factory=list)
    scorecard: Path | None = None
    elapsed_s: float = 0.0
    limit: int | None = None
    """At most this many items per task (``--limit``, or the number ``--precision`` chose)."""
    precision: float | None = None
    seed: int = 0
    price: Any = None
    """The :class:`~chemassay.budget.Price` the manifest costs the reported tokens at."""
    leakage: dict[str, Any] | None = None
    """The leakage audit of the training data (``train_data``): the report ``OUT/leakage.json`` holds."""
    clean: list[dict[str, Any]] = field(default_factory=list)
    """Each task's headline metrics on the full test set and on the clean subset
    (:func:`chemassay.report.leakage.clean_row`), as ``OUT/leakage-clean.json`` holds them."""

    @property
    def failed(self) -> bool:
        """Whether any task of any suite failed."""
        return any(suite.failed for suite in self.suites)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (written as ``OUT/assay.json``): with ``--limit``/``--precision`` the
        subset asked, and the tokens the server reported (summed from the results'
        ``requests``) with their cost at ``price``."""
        from chemassay.budget import spent

        return {
            "model": self.model, "quick": self.quick, "elapsed_s": round(self.elapsed_s, 3),
            "limit": self.limit, "precision": self.precision, "seed": self.seed,
            "scorecard": str(self.scorecard) if self.scorecard else None,
            "suites": [{"suite": s.suite, "spec": s.spec, "protocols": s.protocols, "verdict": s.verdict,
                        "skipped": s.skipped,
                        "tasks": [t.__dict__ for t in s.tasks]} for s in self.suites],
            "spent": spent([t.requests for s in self.suites for t in s.tasks], self.price),
            "leakage": None if self.leakage is None else {
                "report": str(self.out / "leakage.json"), "clean": str(self.out / "leakage-clean.json"),
                "training": [{"path": r.get("path"), "sha256": r.get("sha256")} for r in self.leakage.get("training", [])],
                "tasks": [{k: t.get(k) for k in ("suite", "task", "n", "exact", "near", "leaked", "clean", "threshold")}
                          for t in self.leakage.get("tasks", [])]},
        }


@dataclass(frozen=True)
class PlannedTask:
    """A task of the plan ``--dry-run`` prints."""

    suite: str
    spec: str
    task: AssayTask


def _spec_for(suite: Any, model: str | Mapping[str, str] | None, assay_def: SuiteAssay) -> str | None:
    if model is None:
        return assay_def.baseline
    if isinstance(model, Mapping):
        return model.get(suite.name) or model.get(suite.alias)
    return model


def implemented_protocols(spec: str, asked: Sequence[str], context: Mapping[str, Any] | None = None) -> list[str]:
    """The protocols among ``asked`` that the model ``spec`` names implements.

    A kind that declares its protocols answers from the registry; a kind that serves any
    protocol (``python:``) is loaded once to see which protocol methods the object has: a
    spec that cannot load (a module, an attribute, a factory that raises) or an object with
    none of the protocols' methods is a :class:`UserInputError` saying what is missing, not a
    skip.
    """

    parsed = parse_spec(spec)
    kind = get_kind(parsed.kind)
    if "python" in kind.capabilities:  # a Python object answers only if it has the method
        from chemassay.models.python_kind import python_protocols

        return [p for p in python_protocols(parsed) if p in asked and kind.implements(p)]
    return [protocol for protocol in asked if kind.implements(protocol)]


def _suites(selected: Sequence[str] | None) -> list[Any]:
    from chemassay.suites import all_suites, get_suite

    if not selected:
        return all_suites()
    chosen = {get_suite(name).name for name in selected}
    return [suite for suite in all_suites() if suite.name in chosen]


def _tasks_of(assay_def: SuiteAssay, suite: str, protocols: set[str], quick: bool, spec: str,
              limit: int | None) -> list[AssayTask]:
    """The suite's tasks, with ``limit`` when one is asked (a suite whose ``tasks`` takes no
    ``limit`` cannot run a subset: a clear error rather than a full run)."""
    if limit is None:
        return assay_def.tasks(protocols, quick=quick, spec=spec)

    if "limit" not in inspect.signature(assay_def.tasks).parameters:
        raise UserInputError(f"suite {suite}: its assay takes no limit, so --limit/--precision cannot run it on a "
                             "subset; leave it out with --suites")
    return assay_def.tasks(protocols, quick=quick, spec=spec, limit=limit)


def subset_size(limit: int | None = None, precision: float | None = None, *, quick: bool = False) -> int | None:
    """The most items per task: ``limit``, or the items ``precision`` needs (a proportion's 95 %
    interval at most ``±precision`` at ``p = 0.5``: :func:`~chemassay.report.subsets.items_for_precision`);
    ``None`` for neither. Both, either with ``quick``, or a value out of range: a one-line error."""
    if limit is not None and precision is not None:
        raise UserInputError("--limit and --precision both choose how many items each task runs: give one")
    if quick and (limit is not None or precision is not None):
        raise UserInputError("--quick runs its own documented subsets: leave out --limit/--precision, or --quick")
    if limit is not None:
        if limit < 1:
            raise UserInputError(f"--limit {limit}: must be at least 1")
        return int(limit)
    if precision is not None:
        from chemassay.report.subsets import items_for_precision

        if not 0 < precision < 0.5:
            raise UserInputError(f"--precision {precision}: the half-width of a 95 % interval of a proportion, "
                                 "between 0 and 0.5 (0.05: ±5 points)")
        return items_for_precision(precision)
    return None


def _plan(model: str | Mapping[str, str] | None, suites: Sequence[str] | None, quick: bool,
          context: Mapping[str, Any], limit: int | None = None
          ) -> tuple[list[SuiteOutcome], dict[str, tuple[Any, list[AssayTask]]]]:
    outcomes: list[SuiteOutcome] = []
    plans: dict[str, tuple[Any, list[AssayTask]]] = {}
    answers: dict[str, list[str]] = {}  # spec -> every protocol it implements (a python: model loads once)
    for suite in _suites(suites):
        assay_def = suite.load("assay")
        spec = _spec_for(suite, model, assay_def or SuiteAssay())
        if spec is None:
            what = "no model given for it" if isinstance(model, Mapping) else "it has no built-in baseline"
            outcomes.append(SuiteOutcome(suite.name, None, skipped=f"{suite.name}: {what}"))
            continue
        if spec not in answers:
            from chemassay.models.protocols import all_protocols

            answers[spec] = implemented_protocols(spec, list(all_protocols()), context)
        protocols = [protocol for protocol in suite.protocols if protocol in answers[spec]]
        if not protocols:
            has = ", ".join(answers[spec]) or "none"
            outcomes.append(SuiteOutcome(
                suite.name, spec, skipped=f"{suite.name} asks for {' or '.join(suite.protocols)}; "
                                          f"{spec} implements {has}"))
            continue
        if assay_def is None:
            outcomes.append(SuiteOutcome(suite.name, spec, skipped=f"{suite.name} declares no assay"))
            continue
        tasks = _tasks_of(assay_def, suite.name, set(protocols), quick, spec, limit)
        keys = [task.key for task in tasks]
        if len(set(keys)) != len(keys):
            raise ValueError(f"suite {suite.name}: assay task keys repeat: {keys}")
        outcomes.append(SuiteOutcome(suite.name, spec, protocols=protocols))
        plans[suite.name] = (assay_def, tasks)
    return outcomes, plans


@contextlib.contextmanager
def _named(model: Any) -> Iterator[str | dict[str, str] | None]:
    """``model`` with every model object (or function) replaced by a ``python:`` spec that names
    it while the ``with`` block runs (:func:`~chemassay.models.python_kind.object_spec`), so an
    object runs through the same tasks as a spec: ``assay(Retro())`` as ``evaluate(Retro())``."""
    def one(value: Any, stack: contextlib.ExitStack) -> str:
        if isinstance(value, ModelSpec):
            return value.text
        return value if isinstance(value, str) else stack.enter_context(object_spec(value))

    with contextlib.ExitStack() as stack:
        if model is None:
            yield None
        elif isinstance(model, Mapping):
            yield {suite: one(value, stack) for suite, value in model.items()}
        else:
            yield one(model, stack)


def plan(model: Any = None, *, suites: Sequence[str] | None = None, quick: bool = False,
         base_url: str | None = None, limit: int | None = None,
         precision: float | None = None) -> tuple[list[SuiteOutcome], list[PlannedTask]]:
    """What :func:`assay` would run: per-suite outcomes (skips) and the planned tasks (with
    ``limit``/``precision``: their items and requests on the subset). ``model`` as :func:`assay`
    takes it."""
    context = {"base_url": base_url} if base_url else {}
    size = subset_size(limit, precision, quick=quick)
    with _named(model) as named:
        outcomes, plans = _plan(named, suites, quick, context, size)
    planned = [PlannedTask(outcome.suite, outcome.spec or "", task)
               for outcome in outcomes if outcome.suite in plans for task in plans[outcome.suite][1]]
    return outcomes, planned


def _finished(path: Path, spec: str, quick: bool, setting: Mapping[str, str], limit: int | None = None,
              seed: int = 0) -> Result | None:
    """The result at ``path`` if an earlier run of the same model, mode, setting and subset
    (the same ``limit`` and seed; none) finished it."""
    if not path.is_file():
        return None
    try:
        result = read_result(path)
    except UserInputError:
        return None
    if result.model is None or result.quick != quick:
        return None

    if result.model.spec not in {spec, parse_spec(spec).text}:
        return None
    if any(result.setting.get(key) != str(value) for key, value in setting.items()):
        return None
    subset = result.subset
    if (subset is None) != (limit is None):
        return None
    if subset is not None and (subset.limit != limit or subset.seed != seed):
        return None
    return result


def _recorded(result: Result) -> dict[str, Any]:
    """What the manifest keeps of a task's result: its subset and its request counts."""
    return {"subset": result.subset.model_dump() if result.subset is not None else None,
            "requests": result.requests.model_dump() if result.requests is not None else None}


def _write_manifest(report: AssayReport) -> None:
    atomic_write_text(report.out / MANIFEST, json.dumps(report.as_dict(), indent=2, default=str) + "\n")


def assay(model: Any = None, *, suites: Sequence[str] | None = None,
          out: str | os.PathLike = "assay", quick: bool = False, seed: int = 0, n_jobs: int = 1,
          base_url: str | None = None, scorecard: bool = True,
          title: str | None = None, limit: int | None = None, precision: float | None = None,
          price: Any = None, train_data: str | os.PathLike | Sequence[str | os.PathLike] | None = None,
          train_column: str | None = None, leak_threshold: float | None = None,
          leak_near: bool = True) -> AssayReport:
    """Run ``model`` through every suite (of ``suites``) whose protocol it implements.

    ``model`` is a spec (``openai:NAME,base_url=URL``, ``python:MODULE:NAME``...), a model
    object or a plain function (as every suite's ``evaluate`` takes them; results name it
    ``python:MODULE:CLASS``), a mapping ``{suite: spec or object}``, or ``None`` (each suite's
    built-in baseline). A model that cannot load, or has none of the protocols' methods, is a
    :class:`~chemassay.contract.errors.UserInputError` before anything runs.

    Returns an :class:`AssayReport`; writes each result under ``out/<suite>/``, the manifest
    ``out/assay.json`` and the scorecard ``out/index.html`` (see the module docstring).

    ``limit=N`` runs every task on a seeded subset of at most ``N`` of its items, stratified
    where the suite has strata, the same for every model with the same ``seed``
    (``Result.subset`` records it); ``precision=H`` chooses ``N`` so that a proportion's 95 %
    interval is at most ``±H`` in the worst case (385 items for 0.05). ``price`` (a
    :class:`~chemassay.budget.Price` or ``"in=X,out=Y"``, US$ per million tokens) costs the
    tokens the server reported in the manifest.

    ``train_data`` (a training file of SMILES or reaction SMILES, or several: as
    :func:`chemassay.leakage` reads them, ``train_column`` naming a table's column) runs the
    leakage audit of the assayed suites' test sets (near duplicates at Tanimoto ``leak_threshold``,
    default 0.7; ``leak_near=False``: exact duplicates only) and reports every headline metric
    also on the clean subset (see the module docstring and docs/leakage.md).

    The stoichiometry suite's built-in baseline on the ``--quick`` subset (a suite whose protocols
    the model does not implement is skipped, saying so):

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as out:
    ...     report = assay(suites=["stoichiometry"], out=out, quick=True, scorecard=False)
    ...     copy = assay("copy-coefficient", suites=["generation"], out=out, scorecard=False)
    >>> stoichiometry = report.suites[0]
    >>> stoichiometry.spec, [(task.task, task.status) for task in stoichiometry.tasks]
    ('copy-coefficient', [('formula_t1_x1-test_in', 'done'), ('formula_t1_x1-test_cross', 'done'),
                          ('formula_t1_x1-test_out', 'done')])
    >>> stoichiometry.verdict
    'EM in 0.0 % [0.0, 8.8] · cross 72.5 % [57.2, 83.9] · out 0.0 % [0.0, 8.8] (1 variant)'
    >>> copy.suites[0].skipped
    'generation asks for generator; copy-coefficient implements bag-predictor'
    """
    with _named(model) as named:
        return _assay(named, suites=suites, out=out, quick=quick, seed=seed, n_jobs=n_jobs, base_url=base_url,
                      scorecard=scorecard, title=title, limit=limit, precision=precision, price=price,
                      leak=leak_options(train_data, train_column, leak_threshold, leak_near))


def _out_folder(out: str | os.PathLike) -> Path:
    """The assay's output folder; a path that exists and is not a folder is a one-line error
    (the assay writes a folder: each suite's results, assay.json, index.html)."""
    target = Path(out)
    if target.exists() and not target.is_dir():
        raise UserInputError(f"--out {target}: is a file; the assay's output must be a folder (it holds each "
                             "suite's results, assay.json and the scorecard index.html): give a new or existing folder")
    return target


def _assay(model: str | Mapping[str, str] | None, *, suites: Sequence[str] | None, out: str | os.PathLike,
           quick: bool, seed: int, n_jobs: int, base_url: str | None, scorecard: bool, title: str | None,
           limit: int | None, precision: float | None, price: Any,
           leak: dict[str, Any] | None = None) -> AssayReport:
    from chemassay.budget import as_price

    started = time.perf_counter()
    size = subset_size(limit, precision, quick=quick)
    price = as_price(price)
    target = _out_folder(out)
    context: dict[str, Any] = {"base_url": base_url} if base_url else {}
    outcomes, plans = _plan(model, suites, quick, context, size)
    target.mkdir(parents=True, exist_ok=True)
    report = AssayReport(out=target, model=dict(model) if isinstance(model, Mapping) else model, quick=quick,
                         suites=outcomes, limit=size, precision=precision, seed=seed, price=price)
    for outcome in outcomes:
        if outcome.skipped:
            info(f"[assay] skipped {outcome.skipped}")
    audited: list[Any] = []
    keyed: list[tuple[str, Result]] = []  # each result with its task's key (the name its audit has)
    if leak is not None:
        report.leakage, audited = _leakage_audit(leak, [o.suite for o in outcomes if o.suite in plans], target,
                                                 quick, n_jobs)
    for outcome in outcomes:
        if outcome.suite not in plans:
            continue
        assay_def, tasks = plans[outcome.suite]
        suite_dir = target / outcome.suite
        suite_dir.mkdir(parents=True, exist_ok=True)
        suite_results: list[Result] = []
        for task in tasks:
            path = suite_dir / f"{task.key}.json"
            earlier = _finished(path, outcome.spec or "", quick, task.setting, size, seed)
            if earlier is not None:
                info(f"[assay] {outcome.suite} · {task.title}: done earlier ({path})")
                outcome.tasks.append(TaskOutcome(outcome.suite, task.key, task.title, "resumed", str(path),
                                                 **_recorded(earlier)))
                suite_results.append(earlier)
                keyed.append((task.key, earlier))
                continue
            info(f"[assay] {outcome.suite} · {task.title} ({task.items:,} items) ...")
            task_started = time.perf_counter()
            # out_dir: where a model keeps what a rerun resumes (a Batch API's batch ids)
            ctx = AssayContext(spec=outcome.spec or "", out_dir=suite_dir, quick=quick, seed=seed, n_jobs=n_jobs,
                               model_context={**context, "out_dir": str(target)}, limit=size, precision=precision)
            try:
                result = task.run(ctx)
                if quick and not result.quick:
                    result = result.model_copy(update={"quick": True})
                if size is not None and result.subset is None:
                    raise RuntimeError(f"the task ran without recording its subset (--limit {size}): its suite's "
                                       "assay must choose its items with task_subset(ctx, ...)")
                result.write(path)
            except (KeyboardInterrupt, SystemExit):
                _write_manifest(report)
                raise
            except Exception as exc:  # noqa: BLE001 - one task failing must not stop the others
                message = f"{type(exc).__name__}: {exc}"
                warn(f"[assay] {outcome.suite} · {task.title} failed: {message}")
                outcome.tasks.append(TaskOutcome(outcome.suite, task.key, task.title, "failed", None,
                                                 message + "\n" + traceback.format_exc(limit=4),
                                                 time.perf_counter() - task_started))
                continue
            from chemassay.report.store import store_result

            store_result(result, path)
            outcome.tasks.append(TaskOutcome(outcome.suite, task.key, task.title, "done", str(path), "",
                                             time.perf_counter() - task_started, **_recorded(result)))
            suite_results.append(result)
            keyed.append((task.key, result))
        report.results.extend(suite_results)
        if suite_results:
            try:
                outcome.verdict = assay_def.verdict(suite_results)
            except Exception as exc:  # noqa: BLE001 - a verdict bug must not lose the results
                outcome.verdict = f"(no verdict: {type(exc).__name__}: {exc})"
        if size is not None and outcome.verdict and any(r.subset is not None and r.subset.partial
                                                        for r in suite_results):
            outcome.verdict += f" (seeded subsets of at most {size:,} items, seed {seed})"
        failed = sum(task.status == "failed" for task in outcome.tasks)
        line = outcome.verdict or "no result"
        if failed:
            line += f" ({failed} of {len(outcome.tasks)} tasks failed)"
        info(f"[assay] {outcome.suite}: {line}")
        _write_manifest(report)
    if report.leakage is not None:
        _clean_subsets(report, plans, audited, keyed)
    report.elapsed_s = time.perf_counter() - started
    if scorecard:
        report.scorecard = write_assay_scorecard(report, title=title)
    _write_manifest(report)
    return report


def results_under(folder: Path) -> list[Result]:
    """Every result file under ``folder`` (other JSON files are passed over)."""
    found = []
    for path in sorted(folder.rglob("*.json")):
        if path.name == MANIFEST or path.name.endswith(".manifest.json") or path.name == "manifest.json":
            continue
        try:
            result = read_result(path)
        except UserInputError:
            continue
        object.__setattr__(result, "_source", str(path))
        found.append(result)
    return found


def write_assay_scorecard(report: AssayReport, *, title: str | None = None) -> Path:
    """The scorecard of every result under the assay's folder, with the verdicts, failures and
    skips of this run; returns the HTML path."""
    results = results_under(report.out)
    name = title or (f"chemassay assay: {report.model}" if isinstance(report.model, str) else "chemassay assay")
    view = None
    if report.leakage is not None:
        from chemassay.report.leakage import LeakageView

        view = LeakageView(report=report.leakage, rows=report.clean, source=str(report.out / "leakage.json"))
    card = build_scorecard(results, title=name, leakage=view)
    card.assay = report
    html, _markdown = write_report(card, report.out)
    return html


LEAK_STAMP = "leakage-stamp.json"


def leak_options(train_data: Any, column: str | None, threshold: float | None, near: bool) -> dict[str, Any] | None:
    """The leakage audit's settings (``train``, ``column``, ``threshold``, ``near``), checked:
    ``None`` without ``train_data``; a missing training file, a threshold outside (0, 1], or a
    column or threshold without training data is a one-line :class:`UserInputError`."""
    if train_data is None:
        if column is not None or threshold is not None:
            raise UserInputError("--train-column/--leak-threshold belong to a leakage audit: give --train-data FILE too")
        return None
    from chemassay.leaks import DEFAULT_THRESHOLD

    paths = [train_data] if isinstance(train_data, (str, os.PathLike)) else list(train_data)
    if not paths:
        raise UserInputError("--train-data: no training file given")
    for path in paths:
        if not Path(path).is_file():
            raise UserInputError(f"--train-data {path}: no such file")
    threshold = DEFAULT_THRESHOLD if threshold is None else float(threshold)
    if not 0 < threshold <= 1:
        raise UserInputError(f"--leak-threshold {threshold}: a Tanimoto similarity, above 0 and at most 1")
    return {"train": [str(p) for p in paths], "column": column, "threshold": threshold, "near": bool(near)}


def _leakage_audit(leak: dict[str, Any], suites: list[str], out: Path, quick: bool,
                   n_jobs: int) -> tuple[dict[str, Any], list[Any]]:
    """The audit of the assayed suites' test sets against the training files (``OUT/leakage.json``),
    reused when an earlier run of the same assay audited the same files (by sha256) with the same
    settings; returns the report and the audited test sets."""
    from chemassay.leaks import leakage, read_report, suite_test_sets
    from chemassay.runtime.files import sha256_file
    from chemassay.suites import get_suite

    declaring = [name for name in suites if get_suite(name).leakage]
    sets = suite_test_sets(declaring, quick=quick, n_jobs=n_jobs) if declaring else []
    stamp = {**leak, "train": [{"path": p, "sha256": sha256_file(p)} for p in leak["train"]], "quick": quick,
             "suites": declaring}
    stamp_path, report_path = out / LEAK_STAMP, out / "leakage.json"
    if stamp_path.is_file() and report_path.is_file():
        # an unreadable stamp or report from an earlier run is no reason to stop: audit afresh
        with contextlib.suppress(ValueError, UserInputError):
            if json.loads(stamp_path.read_text(encoding="utf-8")) == stamp:
                info(f"[assay] leakage audit: done earlier ({report_path})")
                return read_report(report_path), sets
    if not sets:
        warn("[assay] leakage audit: none of the assayed suites declares test sets; nothing audited")
        report: dict[str, Any] = {"training": [], "tasks": [], "note": "no assayed suite declares test sets"}
        atomic_write_text(report_path, json.dumps(report, indent=2) + "\n")
        return report, sets
    info(f"[assay] leakage audit: {len(sets)} test sets against {', '.join(leak['train'])} ...")
    report = leakage(leak["train"], sets=sets, column=leak["column"], threshold=leak["threshold"], near=leak["near"],
                     n_jobs=n_jobs, out=out, progress=info)
    atomic_write_text(stamp_path, json.dumps(stamp, indent=2) + "\n")
    return report, sets


def _clean_subsets(report: AssayReport, plans: Mapping[str, tuple[Any, list[AssayTask]]], audited: list[Any],
                   keyed: list[tuple[str, Result]]) -> None:
    """Every result's headline metrics on the clean subset (``OUT/leakage-clean.json``), and the
    'may have seen' part of each suite's verdict."""
    from chemassay.report.leakage import clean_rows, seen_line, write_clean

    headline = {(suite, task.key): task.headline for suite, (_def, tasks) in plans.items() for task in tasks}
    test_ids = {(s.suite, s.task): s.ids for s in audited}
    report.clean = clean_rows(keyed, report.leakage, headline=headline, test_ids=test_ids)
    write_clean(report.clean, report.out)
    for outcome in report.suites:
        seen = seen_line(report.leakage, outcome.suite)
        if seen and not outcome.skipped:
            outcome.verdict = f"{outcome.verdict}; {seen}" if outcome.verdict else seen
    for row in report.clean:
        for metric in row["metrics"][:1]:
            if metric.get("clean") is not None or row.get("scored_clean") is not None:
                info(f"[assay] {row['suite']} · {row['task']}: {metric['key']} {_fraction(metric['full'])} full, "
                     f"{_fraction(metric['clean'])} on the {row.get('scored_clean', 0):,} clean items")


def _fraction(value: Any) -> str:
    return "–" if not isinstance(value, (int, float)) else f"{value:.3f}"
