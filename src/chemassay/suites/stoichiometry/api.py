"""The Python API of the stoichiometry suite (ChemAlgebra), re-exported as ``chemassay.stoichiometry``.

Scoring (the paper's metrics, Appendices B, E, F):

* :func:`evaluate` — predicted bags against true bags (lists of ``{n}X.{m}Y`` strings or
  files), or a live model run first (``model="algebraic:DIR"``, ``"openai:NAME,base_url=..."``
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

from chemassay.errors import UserInputError
from chemassay.report.result import DatasetRef, ModelRef, Result, SkippedItem, make_result

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
    from chemassay.data.readers import iter_lines

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
    from chemassay.suites.stoichiometry.variants import MANIFEST

    if path is None or not (path.parent / MANIFEST).is_file():
        return None
    from chemassay.suites.stoichiometry.scoring import encoding_for

    return encoding_for(path, None)


@dataclass
class PredictionRun:
    """What :func:`run_predictions` returns: the predicted ``bags`` (one per input, ``""``
    where the model gave nothing usable), ``failures`` (index → reason), the model's
    :class:`~chemassay.report.result.ModelRef`, the ``predict`` :class:`Result` (counts) and
    the model object itself."""

    bags: list[str]
    failures: dict[int, str]
    model: ModelRef
    result: Result
    predictor: Any = field(repr=False, default=None)


PROTOCOLS = ("bag-predictor", "reaction-predictor")
"""The model protocols this suite asks: a bag predictor (ChemAlgebra's variants, Table 4) or a
standard reaction predictor (its top-1 product SMILES scored as a bag: Table 2)."""


class ReactionPredictorBags:
    """A reaction predictor asked as a bag predictor (ChemAlgebra Table 2): each input line
    (plain SMILES of reactants and reagents, a molecule written once per copy) goes to
    ``predict(reactants, k=1)`` and its top-1 product SMILES is the predicted bag, every
    molecule counting once per copy; a query with no prediction gets an empty bag."""

    def __init__(self, predictor: Any) -> None:
        self.predictor = predictor
        self.failures: dict[int, str] = {}

    def predict_bags(self, sources: Sequence[str]) -> list[str]:
        """The top-1 product SMILES of each input (``""`` where the model gave none)."""
        ranked = self.predictor.predict(list(sources), 1)
        if not isinstance(ranked, list) or len(ranked) != len(sources):
            count = len(ranked) if isinstance(ranked, list) else type(ranked).__name__
            raise UserInputError(f"the reaction predictor returned {count} answers for {len(sources)} inputs; "
                                 "predict(reactants, k) must return one ranked list per input")
        self.failures = {int(i): str(r) for i, r in (getattr(self.predictor, "failures", None) or {}).items()}
        return [str(options[0]) if isinstance(options, (list, tuple)) and options else "" for options in ranked]


def run_predictions(model: Any, sources: Lines, *, encoding: str | None = None,
                    context: Mapping[str, Any] | None = None, protocol: str = "bag-predictor",
                    limit: int | None = None, lines: Sequence[int] | None = None) -> PredictionRun:
    """Run a bag predictor (or a reaction predictor) over input bags and count what happened.

    ``model`` is a spec string (``algebraic:DIR``, ``copy-coefficient:DIR,split=train``,
    ``openai:NAME,base_url=URL``, ``python:module:factory``...) or a model object;
    ``sources`` a list of input bags or a file of them (only its first ``limit`` lines with
    ``limit``, only the 1-based ``lines`` with ``lines``). With ``protocol="bag-predictor"`` (default) the model's ``predict_bags(sources)``
    answers; with ``"reaction-predictor"`` its ``predict(reactants, k=1)`` does and its top-1
    product SMILES is the bag (:class:`ReactionPredictorBags`, ChemAlgebra Table 2). The model
    gets ``context`` plus the input file's path (``source``, which the baselines' ``split=auto``
    reads) and the bag notation (``encoding``: given, else the manifest next to the input file).
    The result (task ``predict``) counts lines, failed inputs and, for the baselines, unknown
    and undetermined reactions; every failed input is listed in ``skipped`` with its reason.
    """
    from chemassay.models import model_ref, resolve_model
    from chemassay.models.request_stats import request_summary

    if protocol not in PROTOCOLS:
        raise UserInputError(f"protocol must be one of {', '.join(PROTOCOLS)}, got {protocol!r}")
    started = time.perf_counter()
    source_lines, source_name, source_path = _lines(sources, "source")
    if limit is not None:
        source_lines = source_lines[:_check_limit(limit)]
    numbers = _check_lines(lines, len(source_lines), source_name) if lines is not None else None
    if numbers is not None:
        source_lines = [source_lines[n - 1] for n in numbers]
    settings = dict(context or {})
    if source_path is not None:
        settings.setdefault("source", str(source_path))
    notation = encoding or _manifest_encoding(source_path)
    if notation:
        settings.setdefault("encoding", notation)
    predictor = resolve_model(model, protocol, settings)
    asked = ReactionPredictorBags(predictor) if protocol == "reaction-predictor" else predictor
    bags = asked.predict_bags(source_lines)
    ref = model_ref(predictor)
    if not isinstance(bags, list) or len(bags) != len(source_lines) or not all(isinstance(b, str) for b in bags):
        count = len(bags) if isinstance(bags, list) else type(bags).__name__
        raise UserInputError(
            f"model {ref.spec}: predict_bags returned {count} for {len(source_lines)} inputs; "
            "it must return one bag string per input"
        )
    failures = {int(i): str(r) for i, r in (getattr(asked, "failures", None) or {}).items()}
    failed = sorted(set(failures) | {i for i, bag in enumerate(bags) if not bag.strip()})
    metrics: dict[str, Any] = {"lines": len(bags), "failed": len(failed)}
    counts = getattr(predictor, "counts", None)
    if counts is not None and hasattr(counts, "unknown"):
        metrics.update(unknown_reactions=counts.unknown, undetermined=counts.undetermined,
                       unreadable_inputs=counts.unreadable, memorised_reactions=getattr(predictor, "memorised", None))
    result = make_result(
        "stoichiometry", "predict", metrics=metrics, n=len(bags), model=ref, started=started,
        inputs=[source_path] if source_path is not None else [],
        skipped=[SkippedItem(line=numbers[i] if numbers is not None else i + 1, item=source_lines[i][:200],
                             reason=failures.get(i, "empty prediction")) for i in failed],
        config={"encoding": getattr(predictor, "encoding", notation), "source": source_name,
                "train_split": getattr(predictor, "split_used", None), "protocol": protocol,
                **({"limit": limit} if limit is not None else {}),
                **({"lines": len(numbers)} if numbers is not None else {})},
        requests=request_summary(predictor),
    )
    return PredictionRun(bags, failures, ref, result, predictor)


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


def evaluate(
    predictions: Lines | None = None,
    targets: Lines | None = None,
    sources: Lines | None = None,
    *,
    model: Any = None,
    protocol: str = "bag-predictor",
    encoding: str | None = None,
    compat: str = "chemassay",
    rows: bool = True,
    bootstrap: int = 1000,
    seed: int = 0,
    limit: int | None = None,
    context: Mapping[str, Any] | None = None,
    predictions_out: str | os.PathLike | None = None,
    lines: Sequence[int] | None = None,
) -> Result:
    """Score predicted product bags against true bags with ChemAlgebra's metrics.

    ``predictions``, ``targets`` and ``sources`` are line-aligned lists of bag strings
    (``{n}X.{m}Y``, or plain ``X.X.Y`` where every molecule counts once) or paths of files with
    one bag per line. Instead of ``predictions`` a ``model`` (spec string or model object) may
    be given: it predicts from ``sources`` first (written to ``predictions_out`` if given), and
    requests it failed are scored as invalid with their reason; ``protocol`` says what it is
    asked: ``bag-predictor`` (``predict_bags``) or ``reaction-predictor`` (``predict``, its
    top-1 product SMILES scored as the bag, as ChemAlgebra's Table 2 scores standard
    predictors). Metrics: ``EM``, ``JAC``, ``F1``, ``mol_JAC``, ``mol_F1``, ``ACC``, ``ALO``,
    ``VAL``, and with sources the mass-balance diagnostics ``BAL``, ``DEF``, ``EXC``, ``DE``;
    each is a mean over samples with its per-sample values in ``item_scores`` and a seeded
    bootstrap interval (``bootstrap`` resamples, 0 for none). ``encoding`` is ``smiles`` or
    ``formula`` (default: the manifest next to the target file, else smiles);
    ``compat="reference"`` scores as the authors' notebook; ``limit`` scores only the first
    lines, ``lines`` only those 1-based lines (a seeded subset: ``chemassay assay --limit``; the
    item ids stay the files' line numbers). A target that does not parse is skipped with its line and reason; inputs with nothing
    to score raise :class:`~chemassay.errors.UserInputError`.

    When the target file sits in a folder written by ``build`` (or ``build-all``,
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
    ...                                 targets=f"{folder}/tgt-test_cross.txt")
    >>> result.metrics["EM"], result.model.kind, result.intervals["EM"].high
    (1.0, 'algebraic', 1.0)
    >>> result.dataset.name, result.setting
    ('uspto-15k', {'variant': 'smiles_t1_x1', 'split': 'test_cross'})
    >>> scratch.cleanup()
    """
    from chemassay.models.identity import in_memory_ref, predictions_ref
    from chemassay.suites.stoichiometry.scoring import (
        built_setting,
        encoding_for,
        evaluation_result,
        score_lines,
    )

    started = time.perf_counter()
    if targets is None:
        raise UserInputError("evaluate needs targets: the true product bags (a list or a file, one bag per line)")
    if (predictions is None) == (model is None):
        raise UserInputError("evaluate needs either predictions (bags or a file) or model= (a spec or a bag "
                             "predictor run on the sources), not both")
    if protocol not in PROTOCOLS:
        raise UserInputError(f"protocol must be one of {', '.join(PROTOCOLS)}, got {protocol!r}")
    target_lines, target_name, target_path = _lines(targets, "target")
    source_lines, source_name, source_path = _lines(sources, "source") if sources is not None else (None, "", None)
    if limit is not None and lines is not None:
        raise UserInputError("evaluate: give limit (the first lines) or lines (chosen lines), not both")
    if limit is not None:
        target_lines = target_lines[:_check_limit(limit)]
        source_lines = source_lines[:limit] if source_lines is not None else None
    numbers = _check_lines(lines, len(target_lines), target_name) if lines is not None else None
    if numbers is not None:
        if source_lines is not None and len(source_lines) != len(target_lines):
            raise UserInputError(f"{source_name} has {len(source_lines)} lines but {target_name} has "
                                 f"{len(target_lines)}: files must be line-aligned")
        target_lines = [target_lines[n - 1] for n in numbers]
        source_lines = [source_lines[n - 1] for n in numbers] if source_lines is not None else None
    notation = encoding_for(target_path, encoding)
    dataset, setting = built_setting(target_path)
    reasons: dict[int, str] = {}
    prediction_counts = None
    if model is not None:
        if sources is None:
            raise UserInputError("evaluate with a model needs sources: the input bags the model predicts from")
        _writable(predictions_out, "predictions file")
        run = run_predictions(model, source_path if source_path is not None else source_lines, encoding=notation,
                              context=context, protocol=protocol, limit=limit,
                              lines=numbers if source_path is not None else None)
        prediction_lines, reasons, model_field = run.bags, run.failures, run.model
        prediction_name, prediction_path = f"the predictions of {run.model.spec}", None
        prediction_counts = run.result.metrics
        if predictions_out is not None:
            from chemassay.runtime.files import atomic_write_text

            atomic_write_text(predictions_out, "".join(bag + "\n" for bag in prediction_lines))
    else:
        prediction_lines, prediction_name, prediction_path = _lines(predictions, "prediction")
        if limit is not None:
            if len(prediction_lines) != len(_lines(targets, "target")[0]):
                # the files must be aligned as a whole, not only in the lines scored
                raise UserInputError(f"{prediction_name} has {len(prediction_lines)} lines but {target_name} has "
                                     f"{len(_lines(targets, 'target')[0])}: prediction and target files must be "
                                     "line-aligned")
            prediction_lines = prediction_lines[:limit]
        if numbers is not None:
            total = len(_lines(targets, "target")[0])
            if len(prediction_lines) != total:
                raise UserInputError(f"{prediction_name} has {len(prediction_lines)} lines but {target_name} has "
                                     f"{total}: prediction and target files must be line-aligned")
            prediction_lines = [prediction_lines[n - 1] for n in numbers]
        model_field = (predictions_ref(prediction_path, encoding=notation) if prediction_path is not None
                       else in_memory_ref(prediction_lines, encoding=notation))
    report = score_lines(prediction_lines, target_lines, source_lines, encoding=notation, compat=compat,
                         reasons=reasons, names=(prediction_name, target_name, source_name),
                         check_format=model is None, numbers=numbers)
    config: dict[str, Any] = {"with_source": sources is not None}
    if limit is not None:
        config["limit"] = limit
    if numbers is not None:
        config["lines"] = len(numbers)
    result = evaluation_result(
        report, model=model_field, inputs=[p for p in (prediction_path, target_path, source_path) if p is not None],
        config=config, started=started, rows=rows, bootstrap=bootstrap, seed=seed, dataset=dataset, setting=setting,
        prediction_counts=prediction_counts, protocol=protocol if model is not None else None,
    )
    if model is not None:
        # failed requests: scored invalid like any missing answer, and listed with their reason
        result.requests = run.result.requests
        result.skipped += [item for item in run.result.skipped if item.reason.startswith("request failed")]
    return result


# --- data: balance, build, verify ----------------------------------------------------------------


def _rebalance_config(library, max_byproducts: int, encoding: str = "smiles", **extra):
    from chemassay.suites.stoichiometry.prepare import RebalanceConfig

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
    from chemassay.runtime.files import ensure_writable_dir
    from chemassay.suites.stoichiometry.data import resolve_source
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
    from chemassay.suites.stoichiometry.variants import VariantConfig

    try:
        return [VariantConfig(e, t, a, seed=seed, khat=khat, test_aug=test_aug)
                for e in encodings for t in tasks for a in augs]
    except ValueError as exc:
        raise UserInputError(str(exc)) from None


def _build_result(manifests: list[dict], folders: list[Path], source: Any, config: dict,
                  started: float) -> Result:
    from chemassay.suites.stoichiometry.details import BuildDetails

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
    from chemassay.runtime.files import ensure_writable_dir
    from chemassay.suites.stoichiometry.data import resolve_source, source_info
    from chemassay.suites.stoichiometry.prepare import process_source
    from chemassay.suites.stoichiometry.variants import build_variants

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
    from chemassay.suites.stoichiometry.variants import AUGMENTATIONS, ENCODINGS, TASKS

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
    from chemassay.runtime.files import ensure_writable_dir
    from chemassay.suites.stoichiometry.data import resolve_source, source_info
    from chemassay.suites.stoichiometry.prepare import process_source
    from chemassay.suites.stoichiometry.variants import write_uspto_t

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
    from chemassay.runtime.files import ensure_writable_dir
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
    from chemassay.suites.stoichiometry.variants import MANIFEST
    from chemassay.suites.stoichiometry.verify import verify_folder

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
    from chemassay.data.registry import load_dataset as registry_load

    options: dict[str, Any] = {"limit": limit} if limit is not None else {}
    return registry_load(name, part, **options)


def load_library(path: str | os.PathLike | None = None):
    """The by-product library used to re-balance reactions (default: the shipped one), validated;
    see :mod:`chemassay.suites.stoichiometry.library` for the JSON format."""
    from chemassay.suites.stoichiometry.library import load_library as load

    return load(path)
