"""The Python API of the stoichiometry suite (ChemAlgebra), re-exported as ``chemassay.stoichiometry``.

Scoring (the paper's metrics, Appendices B, E, F):

* :func:`evaluate` — predicted bags against the reference (true bags: lists of ``{n}X.{m}Y``
  strings or files), or a live model run first (``model="algebraic:DIR"``, ``"openai:NAME,base_url=..."``
  or any object with ``predict_bags``); returns the :class:`~chemassay.Result` the CLI writes.
* :func:`predict` / :func:`run_predictions` — run a bag predictor over input bags.

Data (USPTO-BAL and the ChemAlgebra datasets):

* :func:`balance` — classify and re-balance reactions (paper Table 1);
* :func:`build`, :func:`build_all`, :func:`build_uspto_t`, :func:`build_table2` — write ChemAlgebra
  / USPTO-T datasets and Table 2's four test sets;
* :func:`verify` — check a built folder; :func:`load_dataset`, :func:`load_library`.

>>> from chemassay import stoichiometry
>>> result = stoichiometry.balance("uspto-15k", splits=["test"], limit=40)
>>> result.metrics["reactions"], result.metrics["rebalanced"]
(40, 35)
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chemassay.contract import Options, Run
from chemassay.contract.errors import UserInputError
from chemassay.contract.result import DatasetRef, ModelRef, Result, SkippedItem, make_result
from chemassay.data.readers import iter_lines
from chemassay.data.registry import load_dataset as registry_load
from chemassay.models import get_protocol, resolve_model
from chemassay.models import run as run_model
from chemassay.models.identity import in_memory_ref, predictions_ref
from chemassay.runtime.files import ensure_writable_dir
from chemassay.runtime.progress import progress_task
from chemassay.suites.stoichiometry.data import resolve_source
from chemassay.suites.stoichiometry.details import BuildDetails
from chemassay.suites.stoichiometry.library import load_library as load
from chemassay.suites.stoichiometry.prepare import RebalanceConfig
from chemassay.suites.stoichiometry.protocol import BAG_PREDICTOR, LINE_BY_LINE
from chemassay.suites.stoichiometry.scoring import encoding_for
from chemassay.suites.stoichiometry.variants import (
    AUGMENTATIONS,
    ENCODINGS,
    MANIFEST,
    TASKS,
    VariantConfig,
    build_variants,
    write_uspto_t,
)
from chemassay.suites.stoichiometry.verify import verify_folder

__all__ = [
    "PredictionRun",
    "balance",
    "build",
    "build_all",
    "build_table2",
    "build_uspto_t",
    "evaluate",
    "load_dataset",
    "load_library",
    "predict",
    "run_predictions",
    "verify",
]

Lines = Sequence[str] | str | os.PathLike
"""Bag lines: a list of strings, or the path of a file with one bag per line."""


def _lines(value: Lines, what: str) -> tuple[list[str], str, Path | None]:
    """The lines of a list or a file, a name for messages, and the file's path (if one)."""
    if isinstance(value, (str, os.PathLike)):
        path = Path(value)
        if not path.exists():
            raise UserInputError(f"{path}: no such {what} file (pass a list of bag strings for in-memory {what}s)")
        if path.is_dir():
            raise UserInputError(f"{path}: is a directory, expected a {what} file with one bag per line")
        return [line for _, line in iter_lines(path)], str(path), path
    if isinstance(value, bytes):
        raise UserInputError(f"{what}s: expected a list of bag strings or a file path, got bytes")
    lines = list(value)
    bad = next((type(item).__name__ for item in lines if not isinstance(item, str)), None)
    if bad:
        raise UserInputError(f"{what}s: expected bag strings, got {bad}")
    return lines, f"{what}s (a list of {len(lines)})", None


def _writable(path: str | os.PathLike | None, what: str) -> None:
    """Fail before any work when an output file cannot be written."""
    if path is not None:
        from chemassay.runtime.files import ensure_writable

        ensure_writable(path, what)


def _manifest_encoding(path: Path | None) -> str | None:
    """The encoding of the manifest next to ``path``, or None when there is none."""
    if path is None or not (path.parent / MANIFEST).is_file():
        return None

    return encoding_for(path, None)


@dataclass
class PredictionRun:
    """What :func:`run_predictions` returns: the predicted ``bags`` (one per input, ``""``
    where the model gave nothing usable), ``failures`` (index → reason), the model's
    :class:`~chemassay.contract.result.ModelRef`, the ``predict`` :class:`Result` (counts), the
    model object itself and the :class:`~chemassay.contract.Run` of the run pipeline."""

    bags: list[str]
    failures: dict[int, str]
    model: ModelRef
    result: Result
    predictor: Any = field(repr=False, default=None)
    run: Run | None = field(repr=False, default=None)


PROTOCOLS = ("bag-predictor", "reaction-predictor")
"""The model protocols this suite asks: a bag predictor (ChemAlgebra's variants, Table 4) or a
standard reaction predictor (its top-1 product SMILES scored as a bag: Table 2)."""


def _check_protocol(protocol: str) -> None:
    if protocol not in PROTOCOLS:
        raise UserInputError(f"protocol must be one of {', '.join(PROTOCOLS)}, got {protocol!r}")


def _model_settings(context: Mapping[str, Any] | None, source_path: Path | None, notation: str | None) -> dict:
    """What the model kind gets when a spec is loaded: ``context``, plus the input file's path
    (``source``, which the baselines' ``split=auto`` reads) and the bag notation (``encoding``)."""
    settings = dict(context or {})
    if source_path is not None:
        settings.setdefault("source", str(source_path))
    if notation:
        settings.setdefault("encoding", notation)
    return settings


def _ask_model(model: Any, protocol: str, lines: list[str], settings: dict, *, cache: bool, progress: bool) -> Run:
    """Run ``model`` over the input lines through the run pipeline (:func:`chemassay.models.run`).

    A bag predictor is asked each distinct line once (every line at its place for a model that
    is ``line_aligned``, as the baselines are); a reaction predictor (the protocol of that name,
    found by name) is asked for its top-1 product (``k=1``)."""
    predictor = resolve_model(model, protocol, settings)
    asked = get_protocol(protocol)
    if asked is BAG_PREDICTOR and getattr(predictor, "line_aligned", False):
        asked = LINE_BY_LINE
    label = model if isinstance(model, str) else type(predictor).__name__
    with progress_task(f"asking {label}", len(lines), disable=not progress) as advance:
        done = run_model(predictor, asked, lines, {"k": 1} if protocol == "reaction-predictor" else {},
                         context=settings, cache=cache)
        advance(len(lines))
    return done


def _bags(done: Run, protocol: str) -> list[str]:
    """One bag string per input: a bag predictor's answers, or a reaction predictor's top-1
    product SMILES (every molecule once per copy; ``""`` where it gave none)."""
    if protocol == "reaction-predictor":
        return [str(ranked[0]) if ranked else "" for ranked in done.outputs]
    bad = next((type(bag).__name__ for bag in done.outputs if not isinstance(bag, str)), None)
    if bad is not None:
        raise UserInputError(f"model {done.model.spec}: predict_bags returned a {bad} among its answers; "
                             "it must return one bag string per input")
    return list(done.outputs)


def _baseline_counts(predictor: Any) -> dict[str, Any]:
    """The baselines' own counts of the run (unknown and undetermined reactions...), else nothing."""
    counts = getattr(predictor, "counts", None)
    if counts is None or not hasattr(counts, "unknown"):
        return {}
    return {"unknown_reactions": counts.unknown, "undetermined": counts.undetermined,
            "unreadable_inputs": counts.unreadable, "memorised_reactions": getattr(predictor, "memorised", None)}


def run_predictions(model: Any, sources: Lines, *, encoding: str | None = None,
                    context: Mapping[str, Any] | None = None, protocol: str = "bag-predictor",
                    limit: int | None = None, cache: bool = False, progress: bool = False,
                    lines: Sequence[int] | None = None) -> PredictionRun:
    """Run a bag predictor (or a reaction predictor) over input bags and count what happened.

    ``model`` is a spec string (``algebraic:DIR``, ``copy-coefficient:DIR,split=train``,
    ``openai:NAME,base_url=URL``, ``python:module:factory``...) or a model object;
    ``sources`` a list of input bags or a file of them (only its first ``limit`` lines with
    ``limit``, only the 1-based ``lines`` with ``lines``). With ``protocol="bag-predictor"`` (default) the model's ``predict_bags(sources)``
    answers; with ``"reaction-predictor"`` its ``predict(reactants, k=1)`` does and its top-1
    product SMILES is the bag (ChemAlgebra Table 2). The model runs through the run pipeline
    (:func:`chemassay.models.run`: identical inputs asked once, ``cache`` for the response
    cache, failed inputs kept with their reason; ``progress`` reports it). The model gets
    ``context`` plus the input file's path (``source``, which the baselines' ``split=auto``
    reads) and the bag notation (``encoding``: given, else the manifest next to the input file).
    The result (task ``predict``) counts lines, failed inputs and, for the baselines, unknown
    and undetermined reactions; every failed input is listed in ``skipped`` with its reason.
    """
    _check_protocol(protocol)
    started = time.perf_counter()
    source_lines, source_name, source_path = _lines(sources, "source")
    if limit is not None:
        source_lines = source_lines[:_check_limit(limit)]
    numbers = _check_lines(lines, len(source_lines), source_name) if lines is not None else None
    if numbers is not None:
        source_lines = [source_lines[n - 1] for n in numbers]
    notation = encoding or _manifest_encoding(source_path)
    done = _ask_model(model, protocol, source_lines, _model_settings(context, source_path, notation), cache=cache,
                      progress=progress)
    bags, predictor = _bags(done, protocol), done.model_object
    failed = sorted(set(done.failures) | {i for i, bag in enumerate(bags) if not bag.strip()})
    result = make_result(
        "stoichiometry", "predict", metrics={"lines": len(bags), "failed": len(failed), **_baseline_counts(predictor)},
        n=len(bags), run=done, started=started, inputs=[source_path] if source_path is not None else [],
        skipped=[SkippedItem(line=numbers[i] if numbers is not None else i + 1, item=source_lines[i][:200],
                             reason=done.failures.get(i, "empty prediction")) for i in failed],
        config={"encoding": getattr(predictor, "encoding", notation), "source": source_name,
                "train_split": getattr(predictor, "split_used", None), "protocol": protocol,
                **({"limit": limit} if limit is not None else {}),
                **({"lines": len(numbers)} if numbers is not None else {})},
    )
    return PredictionRun(bags, dict(done.failures), done.model, result, predictor, done)


def _check_lines(lines: Sequence[int], count: int, name: str) -> list[int]:
    """``lines`` (1-based line numbers of a file of ``count`` lines) sorted, each once."""
    numbers = sorted({int(n) for n in lines})
    if not numbers:
        raise UserInputError(f"{name}: no lines chosen to score")
    if numbers[0] < 1 or numbers[-1] > count:
        raise UserInputError(f"{name}: has {count} lines; line {numbers[0] if numbers[0] < 1 else numbers[-1]} "
                             "cannot be chosen")
    return numbers


def _check_limit(limit: int) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise UserInputError(f"limit must be a positive whole number of lines, got {limit!r}")
    return limit


def predict(model: Any, sources: Lines, *, encoding: str | None = None,
            context: Mapping[str, Any] | None = None) -> list[str]:
    """The product bags a model predicts for input bags (one string per input; see
    :func:`run_predictions` for the arguments and for the run's counts).

    >>> from chemassay.stoichiometry import predict
    >>> from chemassay.models import from_callable
    >>> echo = from_callable(lambda sources: [s.split(".")[-1] for s in sources], "bag-predictor")
    >>> predict(echo, ["{1}O=C=O.{4}[H][H]"])
    ['{4}[H][H]']
    """
    return run_predictions(model, sources, encoding=encoding, context=context).bags


@dataclass
class _Bags:
    """Line-aligned bags to score (predictions or the reference) with a name for messages,
    the file they came from and, for given predictions, their identity."""

    lines: list[str]
    name: str
    path: Path | None
    ref: ModelRef | None = None


@dataclass
class _Reference:
    """The true bags, the optional input bags, their notation and the built dataset they
    belong to (see :func:`chemassay.suites.stoichiometry.scoring.built_setting`)."""

    targets: _Bags
    sources: _Bags | None
    encoding: str
    dataset: DatasetRef | None
    setting: dict[str, str]
    numbers: list[int] | None = None
    """The 1-based file lines chosen with ``lines=`` (``None``: every line, or the first ``limit``)."""


def _check_inputs(predictions: Lines | None, reference: Lines | None, sources: Lines | None, model: Any,
                  protocol: str, out: Any) -> None:
    if reference is None:
        raise UserInputError("evaluate needs reference: the true product bags (a list or a file, one bag per line)")
    if (predictions is None) == (model is None):
        raise UserInputError("evaluate needs either predictions (bags or a file) or model= (a spec or a bag "
                             "predictor run on the sources), not both")
    _check_protocol(protocol)
    if model is not None and sources is None:
        raise UserInputError("evaluate with a model needs sources: the input bags the model predicts from")
    if model is None and out is not None:
        raise UserInputError("out= keeps a model's predicted bags; give model= (predictions are already written)")


def _load_reference(reference: Lines, sources: Lines | None, limit: int | None, encoding: str | None,
                    lines: Sequence[int] | None = None) -> _Reference:
    """The reference (and source) bags, their first ``limit`` lines with ``limit``, only the
    1-based ``lines`` with ``lines``."""
    from chemassay.suites.stoichiometry.scoring import built_setting, encoding_for

    if limit is not None and lines is not None:
        raise UserInputError("evaluate: give limit (the first lines) or lines (chosen lines), not both")
    targets = _Bags(*_lines(reference, "target"))
    given = _Bags(*_lines(sources, "source")) if sources is not None else None
    if limit is not None:
        targets.lines = targets.lines[:_check_limit(limit)]
        if given is not None:
            given.lines = given.lines[:limit]
    numbers = _check_lines(lines, len(targets.lines), targets.name) if lines is not None else None
    if numbers is not None:
        if given is not None and len(given.lines) != len(targets.lines):
            raise UserInputError(f"{given.name} has {len(given.lines)} lines but {targets.name} has "
                                 f"{len(targets.lines)}: files must be line-aligned")
        targets.lines = [targets.lines[n - 1] for n in numbers]
        if given is not None:
            given.lines = [given.lines[n - 1] for n in numbers]
    return _Reference(targets, given, encoding_for(targets.path, encoding), *built_setting(targets.path),
                      numbers=numbers)


def _given_predictions(predictions: Lines, reference: Lines, limit: int | None, notation: str,
                       numbers: list[int] | None = None) -> _Bags:
    """Predicted bags handed over (a list or a file), scored as they are (only the 1-based
    lines ``numbers`` when given)."""
    given = _Bags(*_lines(predictions, "prediction"))
    if numbers is not None:
        target_lines, target_name, _ = _lines(reference, "target")
        if len(given.lines) != len(target_lines):
            raise UserInputError(f"{given.name} has {len(given.lines)} lines but {target_name} has "
                                 f"{len(target_lines)}: prediction and target files must be line-aligned")
        given.lines = [given.lines[n - 1] for n in numbers]
    if limit is not None:
        target_lines, target_name, _ = _lines(reference, "target")
        if len(given.lines) != len(target_lines):
            # the files must be aligned as a whole, not only in the lines scored
            raise UserInputError(f"{given.name} has {len(given.lines)} lines but {target_name} has "
                                 f"{len(target_lines)}: prediction and target files must be line-aligned")
        given.lines = given.lines[:limit]
    given.ref = (predictions_ref(given.path, encoding=notation) if given.path is not None
                 else in_memory_ref(given.lines, encoding=notation))
    return given


def _model_predictions(model: Any, truth: _Reference, protocol: str, options: Options) -> PredictionRun:
    """Run the model on the reference's sources (written to ``options.out`` when given)."""
    _writable(options.out, "predictions file")
    # a file is read again (its path goes to the model) and cut the same way; given lines are already cut
    from_file = truth.sources.path is not None
    sources = truth.sources.path if from_file else truth.sources.lines
    context = {"n_jobs": options.n_jobs, **dict(options.context)}
    done = run_predictions(model, sources, encoding=truth.encoding, context=context, protocol=protocol,
                           limit=options.limit, cache=options.cache, progress=options.progress,
                           lines=truth.numbers if from_file else None)
    if options.out is not None:
        from chemassay.runtime.files import atomic_write_text

        atomic_write_text(options.out, "".join(bag + "\n" for bag in done.bags))
    return done


def evaluate(
    predictions: Lines | None = None,
    reference: Lines | None = None,
    sources: Lines | None = None,
    *,
    model: Any = None,
    protocol: str = "bag-predictor",
    encoding: str | None = None,
    compat: str = "chemassay",
    rows: bool = True,
    seed: int | None = None,
    bootstrap: int | None = None,
    limit: int | None = None,
    n_jobs: int | None = None,
    cache: bool | None = None,
    progress: bool | None = None,
    out: str | os.PathLike | None = None,
    context: Mapping[str, Any] | None = None,
    options: Options | None = None,
    lines: Sequence[int] | None = None,
) -> Result:
    """Score predicted product bags against true bags with ChemAlgebra's metrics.

    ``predictions``, ``reference`` (the true bags) and ``sources`` are line-aligned lists of bag
    strings (``{n}X.{m}Y``, or plain ``X.X.Y`` where every molecule counts once) or paths of
    files with one bag per line. Instead of ``predictions`` a ``model`` (spec string or model
    object) may be given: it predicts from ``sources`` first through the run pipeline
    (:func:`run_predictions`; its bags are written to ``out`` if given), and inputs it failed
    are scored as invalid and listed in ``skipped`` with their reason; ``protocol`` says what it
    is asked: ``bag-predictor`` (``predict_bags``) or ``reaction-predictor`` (``predict``, its
    top-1 product SMILES scored as the bag, as ChemAlgebra's Table 2 scores standard
    predictors). Metrics: ``EM``, ``JAC``, ``F1``, ``mol_JAC``, ``mol_F1``, ``ACC``, ``ALO``,
    ``VAL``, and with sources the mass-balance diagnostics ``BAL``, ``DEF``, ``EXC``, ``DE``;
    each is a mean over samples with its per-sample values in ``item_scores`` and a seeded
    bootstrap interval (``bootstrap`` resamples, 0 for none, seeded by ``seed``). ``encoding``
    is ``smiles`` or ``formula`` (default: the manifest next to the reference file, else
    smiles); ``compat="reference"`` scores as the authors' notebook; ``limit`` scores only the
    first lines, ``lines`` only those 1-based lines (a seeded subset: ``chemassay assay
    --limit``; the item ids stay the files' line numbers). A target that does not parse is skipped with its line and reason; inputs with
    nothing to score raise :class:`~chemassay.contract.errors.UserInputError`.

    The common options (``seed``, ``bootstrap``, ``limit``, ``n_jobs``, ``cache``,
    ``progress``, ``out``, ``context``) may also come as one
    :class:`~chemassay.contract.Options` (``options=``); keyword arguments given override it.
    ``cache`` answers inputs asked before from the run pipeline's response cache, ``context``
    goes to the model kind when a spec is loaded (with ``n_jobs``), ``progress`` reports the
    model run.

    When the reference file sits in a folder written by ``build`` (or ``build-all``,
    ``build-uspto-t``, ``build-table2``), the result records the dataset it was built from
    (``dataset.name``, e.g. ``uspto-15k``) and its setting in the words of the paper's tables:
    ``setting = {"variant": "formula_t1_x1", "split": "test_in"}`` (see
    :func:`chemassay.suites.stoichiometry.scoring.built_setting`). ``result.details`` holds the
    per-sample ``rows`` (the three bags and the scores of every scored line; ``rows=False``
    leaves them out), the ``breakdown`` counts and, with a model, its ``prediction_counts``.

    The Sabatier reaction (paper Eq. 3): one exact prediction, one that loses an oxygen.

    >>> from chemassay import stoichiometry
    >>> result = stoichiometry.evaluate(["{1}C.{2}O", "{1}C.{1}O"], ["{1}C.{2}O", "{1}C.{2}O"],
    ...                                 sources=["{1}O=C=O.{4}[H][H]"] * 2, bootstrap=0)
    >>> result.metrics["EM"], result.metrics["BAL"], result.metrics["DEF"], result.n
    (0.5, 0.5, 0.5, 2)
    >>> result.details.rows[1].balance, result.details.rows[1].prediction
    ('DEF', '{1}C.{1}O')

    The algebraic baseline on a ChemAlgebra dataset built from the bundled USPTO-15K:

    >>> import tempfile
    >>> scratch = tempfile.TemporaryDirectory()
    >>> folder = f"{scratch.name}/t1"
    >>> _ = stoichiometry.build("uspto-15k", folder, task="t1", limit=30)
    >>> result = stoichiometry.evaluate(model=f"algebraic:{folder}", sources=f"{folder}/src-test_cross.txt",
    ...                                 reference=f"{folder}/tgt-test_cross.txt")
    >>> result.metrics["EM"], result.model.kind, result.intervals["EM"].high
    (1.0, 'algebraic', 1.0)
    >>> result.dataset.name, result.setting
    ('uspto-15k', {'variant': 'smiles_t1_x1', 'split': 'test_cross'})
    >>> scratch.cleanup()
    """
    from chemassay.suites.stoichiometry.scoring import evaluation_result, score_lines

    options = Options.merged(options, seed=seed, bootstrap=bootstrap, limit=limit, n_jobs=n_jobs, cache=cache,
                             progress=progress, out=out, context=context)
    started = time.perf_counter()
    _check_inputs(predictions, reference, sources, model, protocol, options.out)
    truth = _load_reference(reference, sources, options.limit, encoding, lines)
    done = None
    if model is not None:
        done = _model_predictions(model, truth, protocol, options)
        predicted = _Bags(done.bags, f"the predictions of {done.model.spec}", None)
    else:
        predicted = _given_predictions(predictions, reference, options.limit, truth.encoding, truth.numbers)
    source_lines, source_name = (truth.sources.lines, truth.sources.name) if truth.sources else (None, "")
    report = score_lines(predicted.lines, truth.targets.lines, source_lines, encoding=truth.encoding, compat=compat,
                         reasons=done.failures if done else {}, names=(predicted.name, truth.targets.name, source_name),
                         check_format=model is None, numbers=truth.numbers)
    config: dict[str, Any] = {"with_source": sources is not None}
    if options.limit is not None:
        config["limit"] = options.limit
    if truth.numbers is not None:
        config["lines"] = len(truth.numbers)
    inputs = [predicted.path, truth.targets.path, truth.sources.path if truth.sources else None]
    return evaluation_result(
        report, model=predicted.ref, run=done.run if done else None, inputs=[p for p in inputs if p is not None],
        config=config, started=started, rows=rows, bootstrap=options.bootstrap, seed=options.seed,
        dataset=truth.dataset, setting=truth.setting, prediction_counts=done.result.metrics if done else None,
        protocol=protocol if model is not None else None,
    )


# --- data: balance, build, verify ----------------------------------------------------------------


def _rebalance_config(library, max_byproducts: int, encoding: str = "smiles", **extra):
    if not 1 <= max_byproducts <= 6:
        raise UserInputError(f"--max-byproducts must be between 1 and 6, got {max_byproducts}")
    if encoding not in ("smiles", "formula"):
        raise UserInputError(f"--encoding must be 'smiles' or 'formula', got {encoding!r}")
    return RebalanceConfig(str(library) if library else None, max_byproducts, encoding, **extra)


def balance(
    reactions: Any,
    *,
    library: str | os.PathLike | None = None,
    max_byproducts: int = 6,
    encoding: str = "smiles",
    splits: Sequence[str] | None = None,
    limit: int | None = None,
    rebalance: bool = True,
    method: str = "library",
    n_jobs: int = 1,
    details: str | os.PathLike | None = None,
    balanced_out: str | os.PathLike | None = None,
) -> Result:
    """Classify every reaction as balanced or not and re-balance it with by-products (USPTO-BAL,
    paper Table 1).

    ``reactions`` is a dataset name (``uspto-15k``, ``uspto-mit``), a folder of
    train/valid/test files, a reaction file, a list of reaction lines or a dict
    ``{split: lines}``. Each reaction is ``balanced``, ``rebalanced`` (exactly one smallest set of
    at most ``max_byproducts`` molecules of the by-product ``library`` explains the imbalance),
    ``ambiguous``, ``unexplained`` or ``invalid`` (listed in ``skipped``); ``method="reference"``
    uses the authors' left-over-molecule procedure instead. ``details`` writes one TSV row per
    reaction, ``balanced_out`` a folder of the balanced reactions. The result (task ``balance``)
    has the counts, the three percentages, per-split rows and the paper's Table 1.

    >>> from chemassay.stoichiometry import balance
    >>> balance(["CC(=O)Cl.CN>>CC(=O)NC", "CCO>>CCO"]).metrics["rebalanced"]
    1
    """
    from chemassay.suites.stoichiometry.prepare import (
        balance_result,
        check_readable,
        process_source,
        write_balanced,
        write_details,
    )

    started = time.perf_counter()
    if method not in ("library", "reference"):
        raise UserInputError(f"--method must be 'library' or 'reference', got {method!r}")
    _writable(details, "details file")
    if balanced_out is not None:
        ensure_writable_dir(balanced_out, "balanced-reactions folder")
    config = _rebalance_config(library, max_byproducts, encoding, rebalance=rebalance, method=method)
    resolved = resolve_source(reactions)
    processed = process_source(resolved, config, splits=list(splits) if splits else None, limit=limit, n_jobs=n_jobs)
    check_readable(processed, resolved)
    if details is not None:
        write_details(processed, details)
    if balanced_out is not None:
        write_balanced(processed, balanced_out)
    return balance_result(processed, resolved, limit=limit, started=started)


def _variant_configs(encodings: Iterable[str], tasks: Iterable[str], augs: Iterable[int], seed: int, khat: str,
                     test_aug: int) -> list:
    try:
        return [VariantConfig(e, t, a, seed=seed, khat=khat, test_aug=test_aug)
                for e in encodings for t in tasks for a in augs]
    except ValueError as exc:
        raise UserInputError(str(exc)) from None


def _build_result(manifests: list[dict], folders: list[Path], source: Any, config: dict,
                  started: float) -> Result:
    line_pairs = sum(v["lines"] for m in manifests for k, v in m["files"].items() if k.startswith("src-"))
    metrics: dict[str, Any] = {"datasets": len(manifests), "line_pairs": line_pairs}
    used = manifests[0].get("used_reactions") if manifests else None
    if used:
        metrics.update({f"{split}_reactions": used[split] for split in ("train", "valid", "test")})
    return make_result(
        "stoichiometry", "build", metrics=metrics, n=line_pairs, started=started, inputs=source.input_refs(),
        dataset=DatasetRef(name=source.dataset) if source.dataset else None,
        config={"source": source.name, **config},
        details=BuildDetails(folders=[str(f) for f in folders], manifests=manifests),
    )


def _build_variants(reactions: Any, configs: list, folders: list[Path], library, max_byproducts: int,
                    limit: int | None, n_jobs: int, started: float, config: dict) -> Result:
    from chemassay.suites.stoichiometry.data import resolve_source, source_info
    from chemassay.suites.stoichiometry.prepare import process_source

    for folder in folders:
        ensure_writable_dir(folder, "dataset folder")
    resolved = resolve_source(reactions)
    for split in ("train", "valid", "test"):
        resolved.split(split)
    processed = process_source(resolved, _rebalance_config(library, max_byproducts), limit=limit, n_jobs=n_jobs)
    if not processed.usable("train"):
        raise UserInputError(f"{resolved.name}: no balanced or re-balanced training reaction to build from")
    manifests = build_variants(processed, configs, folders, source_info=source_info(resolved), n_jobs=n_jobs)
    return _build_result(manifests, folders, resolved, config, started)


def build(
    reactions: Any,
    out: str | os.PathLike,
    *,
    encoding: str = "smiles",
    task: str = "t1",
    aug: int = 1,
    seed: int = 0,
    khat: str = "min",
    test_aug: int = 1,
    library: str | os.PathLike | None = None,
    max_byproducts: int = 6,
    limit: int | None = None,
    n_jobs: int = 1,
) -> Result:
    """Build one ChemAlgebra dataset in folder ``out``: ``src-``/``tgt-`` files of train, valid,
    test_in, test_out and the ``_cross`` splits, with ``manifest.json``; every line is checked to
    balance.

    ``reactions`` needs train, valid and test splits (a dataset name, a folder, a zip or a dict
    of reaction lines); they are re-balanced first (``library``, ``max_byproducts``).
    ``encoding`` smiles/formula, ``task`` t1/t2, ``aug`` augmentations per training reaction,
    ``khat`` the T2 extent rule (``min`` or ``reference``), ``seed`` every random draw. The
    result (task ``build``) counts the datasets and line pairs written and the reactions used;
    its ``manifests`` field holds the manifests.
    """
    started = time.perf_counter()
    configs = _variant_configs([encoding], [task], [aug], seed, khat, test_aug)
    return _build_variants(reactions, configs, [Path(out)], library, max_byproducts, limit, n_jobs, started,
                           {"variants": [configs[0].name], "seed": seed, "khat": khat, "test_aug": test_aug,
                            "limit": limit})


def build_all(
    reactions: Any,
    out: str | os.PathLike,
    *,
    seed: int = 0,
    khat: str = "min",
    test_aug: int = 1,
    library: str | os.PathLike | None = None,
    max_byproducts: int = 6,
    limit: int | None = None,
    n_jobs: int = 1,
) -> Result:
    """Build the eight ChemAlgebra datasets (smiles/formula × t1/t2 × x1/x5) under ``out``, one
    sub-folder each (``smiles_t1_x1``...), re-balancing once; arguments as :func:`build`."""
    started = time.perf_counter()
    configs = _variant_configs(ENCODINGS, TASKS, AUGMENTATIONS, seed, khat, test_aug)
    folders = [Path(out) / config.name for config in configs]
    return _build_variants(reactions, configs, folders, library, max_byproducts, limit, n_jobs, started,
                           {"variants": [c.name for c in configs], "seed": seed, "khat": khat,
                            "test_aug": test_aug, "limit": limit})


def build_uspto_t(reactions: Any, out: str | os.PathLike, *, kind: str, seed: int = 0, limit: int | None = None,
                  n_jobs: int = 1) -> Result:
    """Build USPTO-T1 (``kind="t1"``: every molecule doubled) or USPTO-T2 (``"t2"``: one
    reactant copied to both sides) in folder ``out`` (paper Section 3): plain SMILES with
    duplicated molecules, for standard reaction predictors; every valid reaction is used."""
    from chemassay.suites.stoichiometry.data import resolve_source, source_info
    from chemassay.suites.stoichiometry.prepare import process_source

    if kind not in ("t1", "t2"):
        raise UserInputError(f"--kind must be 't1' or 't2', got {kind!r}")
    started = time.perf_counter()
    ensure_writable_dir(out, "dataset folder")
    resolved = resolve_source(reactions)
    processed = process_source(resolved, _rebalance_config(None, 6, rebalance=False, keep_original=True),
                               limit=limit, n_jobs=n_jobs)
    manifest = write_uspto_t(processed, kind, Path(out), seed=seed, source_info=source_info(resolved))
    return _build_result([manifest], [Path(out)], resolved, {"variants": [f"uspto-{kind}"], "seed": seed, "limit": limit},
                         started)


def build_table2(reactions: Any, out: str | os.PathLike, *, seed: int = 0, splits: Sequence[str] | None = ("test",),
                 library: str | os.PathLike | None = None, max_byproducts: int = 6, limit: int | None = None,
                 n_jobs: int = 1) -> Result:
    """Build ChemAlgebra Table 2's four test sets for standard reaction predictors under
    ``out``, one sub-folder each named as the paper's tables name them: ``uspto`` (every valid
    reaction as read), ``uspto-bal`` (balanced and re-balanced reactions, by-products added),
    ``uspto-t1`` and ``uspto-t2`` (:func:`build_uspto_t`); plain SMILES, a manifest each.
    The reactions are read and re-balanced once (``library``, ``max_byproducts``); ``splits``
    (default: the test split only; ``None``: every split) and ``limit`` choose them.
    ``evaluate`` on their ``tgt-test.txt`` records ``setting = {"variant": "uspto-bal",
    "split": "test"}`` and so on."""
    from chemassay.suites.stoichiometry.data import resolve_source, source_info
    from chemassay.suites.stoichiometry.prepare import process_source
    from chemassay.suites.stoichiometry.variants import (
        TABLE2_KINDS,
        write_uspto_plain,
        write_uspto_t,
    )

    started = time.perf_counter()
    root = Path(out)
    folders = [root / kind for kind in TABLE2_KINDS]
    for folder in folders:
        ensure_writable_dir(folder, "dataset folder")
    resolved = resolve_source(reactions)
    chosen = list(splits) if splits else None
    for split in chosen or ():
        resolved.split(split)
    config = _rebalance_config(library, max_byproducts, keep_original=True)
    processed = process_source(resolved, config, splits=chosen, limit=limit, n_jobs=n_jobs)
    info = source_info(resolved)
    manifests = [write_uspto_plain(processed, kind, folder, source_info=info) for kind, folder in
                 zip(TABLE2_KINDS[:2], folders[:2], strict=True)]
    manifests += [write_uspto_t(processed, kind, folder, seed=seed, source_info=info) for kind, folder in
                  (("t1", folders[2]), ("t2", folders[3]))]
    return _build_result(manifests, folders, resolved, {"variants": list(TABLE2_KINDS), "seed": seed,
                                                        "splits": chosen, "limit": limit}, started)


def verify(folder: str | os.PathLike, *, n_jobs: int = 1) -> Result:
    """Check a dataset folder written by :func:`build` (or :func:`build_uspto_t`): files, line
    counts and sha256 against its manifest, and that every ChemAlgebra line pair balances. The
    result (task ``verify``) has ``ok``, the counts, and each problem in ``skipped``."""
    target = Path(folder)
    if not target.is_dir():
        raise UserInputError(f"{target}: no such dataset folder")
    started = time.perf_counter()
    report = verify_folder(target, n_jobs=n_jobs)
    source = report.manifest.get("source") if isinstance(report.manifest.get("source"), dict) else {}
    return make_result(
        "stoichiometry", "verify",
        metrics={"ok": report.ok, "files_checked": report.files_checked, "pairs_checked": report.pairs_checked,
                 "problems": len(report.problems)},
        n=report.pairs_checked, started=started, inputs=[target / MANIFEST],
        skipped=[SkippedItem(line=p["line"], item=p["file"], reason=p["reason"]) for p in report.problems],
        dataset=DatasetRef(name=source["dataset"]) if source.get("dataset") else None,
        config={"folder": str(target), "kind": report.manifest.get("kind"), "variant": report.manifest.get("variant")},
    )


def load_dataset(name: str = "uspto-15k", part: str | None = None, *, limit: int | None = None
                 ) -> list[str] | dict[str, list[str]]:
    """The reaction lines of a registered dataset of this suite (``uspto-15k``, ``uspto-mit``
    or an alias): one split with ``part`` (``train``/``valid``/``test``), else a dict of all;
    the same as ``chemassay.load_dataset(name, part=part)``.

    >>> from chemassay.stoichiometry import load_dataset
    >>> len(load_dataset("uspto-15k", part="test"))
    3000
    """
    options: dict[str, Any] = {"limit": limit} if limit is not None else {}
    return registry_load(name, part, **options)


def load_library(path: str | os.PathLike | None = None):
    """The by-product library used to re-balance reactions (default: the shipped one), validated;
    see :mod:`chemassay.suites.stoichiometry.library` for the JSON format."""
    return load(path)
