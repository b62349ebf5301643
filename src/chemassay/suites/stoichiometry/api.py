"""The Python API of the stoichiometry suite (ChemAlgebra), re-exported as ``chemassay.stoichiometry``.

Scoring (the paper's metrics, Appendices B, E, F):

* :func:`evaluate` — predicted bags against true bags (lists of ``{n}X.{m}Y`` strings or
  files), or a live model run first (``model="algebraic:DIR"``, ``"openai:NAME,base_url=..."``
  or any object with ``predict_bags``); returns the :class:`~chemassay.Result` the CLI writes.
* :func:`predict` / :func:`run_predictions` — run a bag predictor over input bags.

Data (USPTO-BAL and the ChemAlgebra datasets):

* :func:`balance` — classify and re-balance reactions (paper Table 1);
* :func:`build`, :func:`build_all`, :func:`build_uspto_t` — write ChemAlgebra / USPTO-T datasets;
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
from chemassay.report.result import ModelRef, Result, SkippedItem, input_ref

__all__ = [
    "PredictionRun",
    "balance",
    "build",
    "build_all",
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


def run_predictions(model: Any, sources: Lines, *, encoding: str | None = None,
                    context: Mapping[str, Any] | None = None) -> PredictionRun:
    """Run a bag predictor over input bags and count what happened.

    ``model`` is a spec string (``algebraic:DIR``, ``copy-coefficient:DIR,split=train``,
    ``openai:NAME,base_url=URL``, ``python:module:factory``...) or an object with
    ``predict_bags(sources)``; ``sources`` a list of input bags or a file of them. The model
    gets ``context`` plus the input file's path (``source``, which the baselines' ``split=auto``
    reads) and the bag notation (``encoding``: given, else the manifest next to the input file).
    The result (task ``predict``) counts lines, failed inputs and, for the baselines, unknown
    and undetermined reactions; every failed input is listed in ``skipped`` with its reason.
    """
    from chemassay.models import model_ref, resolve_model
    from chemassay.models.request_stats import request_summary

    started = time.perf_counter()
    source_lines, source_name, source_path = _lines(sources, "source")
    settings = dict(context or {})
    if source_path is not None:
        settings.setdefault("source", str(source_path))
    notation = encoding or _manifest_encoding(source_path)
    if notation:
        settings.setdefault("encoding", notation)
    predictor = resolve_model(model, "bag-predictor", settings)
    bags = predictor.predict_bags(source_lines)
    ref = model_ref(predictor)
    if not isinstance(bags, list) or len(bags) != len(source_lines) or not all(isinstance(b, str) for b in bags):
        count = len(bags) if isinstance(bags, list) else type(bags).__name__
        raise UserInputError(
            f"model {ref.spec}: predict_bags returned {count} for {len(source_lines)} inputs; "
            "it must return one bag string per input"
        )
    failures = {int(i): str(r) for i, r in (getattr(predictor, "failures", None) or {}).items()}
    failed = sorted(set(failures) | {i for i, bag in enumerate(bags) if not bag.strip()})
    metrics: dict[str, Any] = {"lines": len(bags), "failed": len(failed)}
    counts = getattr(predictor, "counts", None)
    if counts is not None and hasattr(counts, "unknown"):
        metrics.update(unknown_reactions=counts.unknown, undetermined=counts.undetermined,
                       unreadable_inputs=counts.unreadable, memorised_reactions=getattr(predictor, "memorised", None))
    result = Result(
        suite="stoichiometry", task="predict", model=ref, metrics=metrics, n=len(bags),
        skipped=[SkippedItem(line=i + 1, item=source_lines[i][:200], reason=failures.get(i, "empty prediction"))
                 for i in failed],
        inputs=[input_ref(source_path)] if source_path is not None else [],
        config={"encoding": getattr(predictor, "encoding", notation), "source": source_name,
                "train_split": getattr(predictor, "split_used", None)},
        elapsed_s=time.perf_counter() - started, requests=request_summary(predictor),
    )
    return PredictionRun(bags, failures, ref, result, predictor)


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
    encoding: str | None = None,
    compat: str = "chemassay",
    rows: bool = True,
    bootstrap: int = 1000,
    seed: int = 0,
    context: Mapping[str, Any] | None = None,
    predictions_out: str | os.PathLike | None = None,
) -> Result:
    """Score predicted product bags against true bags with ChemAlgebra's metrics.

    ``predictions``, ``targets`` and ``sources`` are line-aligned lists of bag strings
    (``{n}X.{m}Y``, or plain ``X.X.Y`` where every molecule counts once) or paths of files with
    one bag per line. Instead of ``predictions`` a ``model`` (spec string or bag predictor)
    may be given: it predicts from ``sources`` first (written to ``predictions_out`` if given),
    and requests it failed are scored as invalid with their reason. Metrics: ``EM``, ``JAC``,
    ``F1``, ``mol_JAC``, ``mol_F1``, ``ACC``, ``ALO``, ``VAL``, and with sources the
    mass-balance diagnostics ``BAL``, ``DEF``, ``EXC``, ``DE``; each is a mean over samples with
    its per-sample values in ``item_scores`` and a seeded bootstrap interval (``bootstrap``
    resamples, 0 for none). ``encoding`` is ``smiles`` or ``formula`` (default: the manifest next
    to the target file, else smiles); ``compat="reference"`` scores as the authors' notebook.
    A target that does not parse is skipped with its line and reason; inputs with nothing to
    score raise :class:`~chemassay.errors.UserInputError`.

    The Sabatier reaction (paper Eq. 3): one exact prediction, one that loses an oxygen.

    >>> from chemassay import stoichiometry
    >>> result = stoichiometry.evaluate(["{1}C.{2}O", "{1}C.{1}O"], ["{1}C.{2}O", "{1}C.{2}O"],
    ...                                 sources=["{1}O=C=O.{4}[H][H]"] * 2, bootstrap=0)
    >>> result.metrics["EM"], result.metrics["BAL"], result.metrics["DEF"], result.n
    (0.5, 0.5, 0.5, 2)

    The algebraic baseline on a ChemAlgebra dataset built from the bundled USPTO-15K:

    >>> import tempfile
    >>> folder = tempfile.mkdtemp() + "/t1"
    >>> _ = stoichiometry.build("uspto-15k", folder, task="t1", limit=30)
    >>> result = stoichiometry.evaluate(model=f"algebraic:{folder}", sources=f"{folder}/src-test_cross.txt",
    ...                                 targets=f"{folder}/tgt-test_cross.txt")
    >>> result.metrics["EM"], result.model.kind, result.intervals["EM"].high
    (1.0, 'algebraic', 1.0)
    """
    from chemassay.models.identity import in_memory_ref, predictions_ref
    from chemassay.suites.stoichiometry.scoring import encoding_for, evaluation_result, score_lines

    started = time.perf_counter()
    if targets is None:
        raise UserInputError("evaluate needs targets: the true product bags (a list or a file, one bag per line)")
    if (predictions is None) == (model is None):
        raise UserInputError("evaluate needs either predictions (bags or a file) or model= (a spec or a bag "
                             "predictor run on the sources), not both")
    target_lines, target_name, target_path = _lines(targets, "target")
    source_lines, source_name, source_path = _lines(sources, "source") if sources is not None else (None, "", None)
    notation = encoding_for(target_path, encoding)
    extra: dict[str, Any] = {}
    reasons: dict[int, str] = {}
    if model is not None:
        if sources is None:
            raise UserInputError("evaluate with a model needs sources: the input bags the model predicts from")
        _writable(predictions_out, "predictions file")
        run = run_predictions(model, source_path if source_path is not None else source_lines, encoding=notation,
                              context=context)
        prediction_lines, reasons, model_field = run.bags, run.failures, run.model
        prediction_name, prediction_path = f"the predictions of {run.model.spec}", None
        extra["prediction_counts"] = run.result.metrics
        if predictions_out is not None:
            from chemassay.runtime.files import atomic_write_text

            atomic_write_text(predictions_out, "".join(bag + "\n" for bag in prediction_lines))
    else:
        prediction_lines, prediction_name, prediction_path = _lines(predictions, "prediction")
        model_field = (predictions_ref(prediction_path, encoding=notation) if prediction_path is not None
                       else in_memory_ref(prediction_lines, encoding=notation))
    report = score_lines(prediction_lines, target_lines, source_lines, encoding=notation, compat=compat,
                         reasons=reasons, names=(prediction_name, target_name, source_name),
                         check_format=model is None)
    inputs = [input_ref(p) for p in (prediction_path, target_path, source_path) if p is not None]
    result = evaluation_result(
        report, model=model_field, inputs=inputs, config={"with_source": sources is not None},
        elapsed_s=time.perf_counter() - started, rows=rows, bootstrap=bootstrap, seed=seed, extra=extra,
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
    return balance_result(processed, resolved, limit=limit, elapsed_s=time.perf_counter() - started)


def _variant_configs(encodings: Iterable[str], tasks: Iterable[str], augs: Iterable[int], seed: int, khat: str,
                     test_aug: int) -> list:
    from chemassay.suites.stoichiometry.variants import VariantConfig

    try:
        return [VariantConfig(e, t, a, seed=seed, khat=khat, test_aug=test_aug)
                for e in encodings for t in tasks for a in augs]
    except ValueError as exc:
        raise UserInputError(str(exc)) from None


def _build_result(manifests: list[dict], folders: list[Path], source_name: str, config: dict,
                  elapsed_s: float) -> Result:
    line_pairs = sum(v["lines"] for m in manifests for k, v in m["files"].items() if k.startswith("src-"))
    metrics: dict[str, Any] = {"datasets": len(manifests), "line_pairs": line_pairs}
    used = manifests[0].get("used_reactions") if manifests else None
    if used:
        metrics.update({f"{split}_reactions": used[split] for split in ("train", "valid", "test")})
    return Result(
        suite="stoichiometry", task="build", metrics=metrics, n=line_pairs,
        config={"source": source_name, **config}, elapsed_s=elapsed_s,
        folders=[str(f) for f in folders], manifests=manifests,
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
    return _build_result(manifests, folders, resolved.name, config, time.perf_counter() - started)


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
    return _build_result([manifest], [Path(out)], resolved.name,
                         {"variants": [f"uspto-{kind}"], "seed": seed, "limit": limit}, time.perf_counter() - started)


def verify(folder: str | os.PathLike, *, n_jobs: int = 1) -> Result:
    """Check a dataset folder written by :func:`build` (or :func:`build_uspto_t`): files, line
    counts and sha256 against its manifest, and that every ChemAlgebra line pair balances. The
    result (task ``verify``) has ``ok``, the counts, and each problem in ``skipped``."""
    from chemassay.suites.stoichiometry.verify import verify_folder

    target = Path(folder)
    if not target.is_dir():
        raise UserInputError(f"{target}: no such dataset folder")
    started = time.perf_counter()
    report = verify_folder(target, n_jobs=n_jobs)
    return Result(
        suite="stoichiometry", task="verify",
        metrics={"ok": report.ok, "files_checked": report.files_checked, "pairs_checked": report.pairs_checked,
                 "problems": len(report.problems)},
        n=report.pairs_checked,
        skipped=[SkippedItem(line=p["line"], item=p["file"], reason=p["reason"]) for p in report.problems],
        config={"folder": str(target), "kind": report.manifest.get("kind"), "variant": report.manifest.get("variant")},
        elapsed_s=time.perf_counter() - started,
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
