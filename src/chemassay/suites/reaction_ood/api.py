"""The reaction-ood suite's Python API, re-exported as :mod:`chemassay.reaction_ood`.

Scoring: :func:`evaluate` (ranked predictions, or a live model, against the recorded
products: top-k accuracy, stereo-agnostic accuracy, breakdowns by year and class) and
:func:`iterate` (two-round evaluation). Models: :func:`predict`, :func:`predict_file`,
:func:`train` (the template-kNN baseline). Data: :func:`load_dataset`, :func:`clean`,
:func:`clean_reactions`, :func:`split`, :func:`verify`, and :func:`shift` (distance of test
reactions to the training set, Fig. 6). The CLI (``chemassay reaction-ood ...``) and the demo
call these functions; each command's ``--out`` JSON is the :class:`~chemassay.contract.result.Result`
returned here.

A model is a spec string (``template-knn:MODEL.npz``, ``openai:NAME,base_url=URL``,
``python:MODULE:CALLABLE``, ``predictions:FILE``...; see ``chemassay models list``) or any
object with ``predict(reactants, k) -> list[list[str]]``.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from chemassay.contract import Options, Run
from chemassay.contract.errors import UserInputError
from chemassay.contract.result import (
    DatasetRef,
    InputRef,
    ModelRef,
    Result,
    SkippedItem,
    input_ref,
    make_result,
)
from chemassay.data.registry import load_dataset as registry_load
from chemassay.models import in_memory_ref, predictions_ref, run
from chemassay.report.intervals import attach_intervals
from chemassay.runtime.files import ensure_writable, need_file, sha256_file
from chemassay.suites.reaction_ood.atom_mapping import mapped_reactions_for
from chemassay.suites.reaction_ood.clean import CleanConfig
from chemassay.suites.reaction_ood.clean import clean_reactions as clean_frame
from chemassay.suites.reaction_ood.data import reaction_input, registered_reaction_dataset
from chemassay.suites.reaction_ood.details import (
    CleanDetails,
    EvaluateDetails,
    IterateDetails,
    VerifyDetails,
)
from chemassay.suites.reaction_ood.evaluation import (
    ID_CANDIDATES,
    Predictions,
    parse_predictions,
    truth_products,
    truth_reactants,
)
from chemassay.suites.reaction_ood.iterate import iterated_evaluation
from chemassay.suites.reaction_ood.shift import (
    ShiftConfig,
    distribution_shift,
    reactions_with_maps,
    shift_result,
)
from chemassay.suites.reaction_ood.split_files import split_file, split_frame_to_dir
from chemassay.suites.reaction_ood.splits import split_definition
from chemassay.suites.reaction_ood.tables import first_data_line, read_table, write_table
from chemassay.suites.reaction_ood.template_knn import BaselineConfig, TemplateKnnModel
from chemassay.suites.reaction_ood.verify import results_as_dicts, verify_split_dir

if TYPE_CHECKING:
    from chemassay.contract.result import RequestSummary
    from chemassay.suites.reaction_ood.clean import CleanReport
    from chemassay.suites.reaction_ood.template_knn import TemplateKnnModel

__all__ = [
    "PredictionRun", "clean", "clean_reactions", "evaluate", "iterate", "load_dataset", "predict", "predict_file",
    "shift", "split", "train", "verify",
]

SUITE = "reaction-ood"
PROTOCOL = "reaction-predictor"
MAX_LISTED = 200
"""Longest list of ids or problems a result carries (the counts are always complete)."""
DEFAULT_MODEL_K = 10

PathLike = str | os.PathLike


# ------------------------------------------------------------------------------------------
# Inputs


@dataclass
class _Table:
    """A test (or training) table with what names it in messages and results."""

    frame: pd.DataFrame
    source: str
    path: Path | None = None
    first_line: int = 2


def _is_path(value: Any) -> bool:
    return isinstance(value, (str, os.PathLike))


HELD_OUT_NAMES: dict[frozenset[str], str] = {
    frozenset({"3.1"}): "all-suzuki",
    frozenset({"3.1.6", "3.1.2"}): "chloro-suzuki",
    # Schneider 50k has no 3.1.2 reaction: holding out 3.1.6 holds out every chloro Suzuki
    frozenset({"3.1.6"}): "chloro-suzuki",
    frozenset({"3.1.8", "3.1.4"}): "triflyloxy-suzuki",
    frozenset({"3.2"}): "heck",
    frozenset({"3.7.14", "3.7.15", "3.7.17", "3.7.19"}): "grignard-ester",
}
"""Held-out class prefixes of a reaction-type split → the paper's name of the held-out type
(Table S2.4's ``held_out`` setting); other prefixes are named by their codes (``1.2.4``)."""


def held_out_name(prefixes: Sequence[str]) -> str:
    """The paper's name of a held-out reaction type (``["3.1"]`` → ``all-suzuki``), else its
    class codes joined with ``+``."""
    codes = [str(p) for p in prefixes]
    return HELD_OUT_NAMES.get(frozenset(codes)) or "+".join(sorted(codes))


def split_setting(kind: str | None, config: Mapping[str, Any] | None, part: str | None) -> dict[str, str]:
    """The benchmark setting of a split part in the paper's vocabulary (``Result.setting``):
    ``split`` (the kind: ``random``, ``document``, ``author``, ``time``, ``reaction-type``,
    ``bespoke``), ``part`` (``test``, ``test_ood``, ``test_2004``...) and, for a
    reaction-type split, ``held_out`` (:func:`held_out_name`)."""
    setting: dict[str, str] = {}
    if kind:
        setting["split"] = str(kind)
    if part:
        setting["part"] = str(part)
    held_out = (config or {}).get("held_out")
    if kind == "reaction-type" and isinstance(held_out, list) and held_out:
        setting["held_out"] = held_out_name(held_out)
    return setting


def _part_name(path: Path) -> str:
    name = path.name
    for suffix in (".parquet", ".csv.gz", ".tsv.gz", ".csv", ".tsv", ".jsonl", ".json"):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def _split_manifest(path: Path) -> dict[str, Any] | None:
    """The manifest of the split folder holding ``path`` (``None``: not in a split folder)."""
    manifest = path.parent / "manifest.json"
    if not manifest.is_file():
        return None
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (ValueError, OSError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) else None


def _dataset_ref(path: Path, dataset: str | None = None) -> tuple[DatasetRef, dict[str, str]]:
    """The dataset a test file comes from and the setting it is part of.

    A part of a split folder is named by its manifest: the registered dataset its cleaned
    input was made from (``schneider-50k``; recorded by ``clean``), else the cleaned file's
    name; its setting is the split's kind, the part and, for a reaction-type split, the
    held-out type. ``dataset`` overrides the name. The checksum is the test file's.
    """
    data = _split_manifest(path)
    name = path.name
    setting: dict[str, str] = {}
    if data is not None:
        source = data.get("input") if isinstance(data.get("input"), dict) else {}
        if source.get("dataset"):
            name = str(source["dataset"])
        elif source.get("path"):
            name = Path(str(source["path"])).name
        config = data.get("config") if isinstance(data.get("config"), dict) else {}
        setting = split_setting(data.get("kind"), config, _part_name(path))
    return DatasetRef(name=dataset or name, sha256=sha256_file(path)), setting


def _read_table(value: Any, what: str, *, reactants: Sequence[str] | None = None) -> _Table:
    """A table from a path, a DataFrame, or a list of product (or reaction) SMILES."""
    if _is_path(value):
        path = need_file(value, what)
        return _Table(read_table(path, what=what), str(path), path, first_data_line(path))
    if isinstance(value, pd.DataFrame):
        return _Table(value.reset_index(drop=True), f"the {what} table")
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        texts = ["" if v is None else str(v) for v in value]
        column = "rxn_smiles" if texts and all(">" in t for t in texts) else "products"
        frame = pd.DataFrame({column: texts})
        if reactants is not None:
            if len(reactants) != len(texts):
                raise UserInputError(f"{len(reactants)} reactants for {len(texts)} {what} items; give one per item")
            frame["reactants"] = [str(r) for r in reactants]
        # an in-memory list has no lines: "line" is the 1-based position
        return _Table(frame, f"the {what} list", None, 1)
    raise UserInputError(f"{what}: expected a file path, a DataFrame or a list of SMILES, got {type(value).__name__}")


def _table_dataset(table: _Table, dataset: str | None = None) -> tuple[DatasetRef, dict[str, str]]:
    if table.path is not None:
        return _dataset_ref(table.path, dataset)
    return DatasetRef(name=dataset or f"in-memory ({len(table.frame)} reactions)"), {}


def _skipped(entries: Sequence[dict], prefix: str = "") -> list[SkippedItem]:
    """Skipped items from ``{"line", "item", "reason"}`` entries (``prefix`` starts each reason)."""
    return [SkippedItem(line=e.get("line"), item=None if e.get("item") is None else str(e.get("item")),
                        reason=f"{prefix}{e.get('reason')}") for e in entries]


def _capped(items: list[SkippedItem], more: str) -> list[SkippedItem]:
    """At most :data:`MAX_LISTED` items, then one entry saying how many more there are (the
    result's counts stay complete)."""
    if len(items) <= MAX_LISTED:
        return items
    rest = len(items) - MAX_LISTED
    return [*items[:MAX_LISTED], SkippedItem(reason=f"{rest:,} more {more} (not listed)")]


def _check_writable(path: PathLike | None, what: str) -> Path | None:
    return None if path is None else ensure_writable(path, what)


def _check_k(k: int | None) -> None:
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise UserInputError(f"k must be a whole number of at least 1, got {k!r}")


def _refuse_limit(options: Options, command: str) -> None:
    """``limit`` is a common option these commands do not take: refused, not ignored (a result
    on fewer reactions than were given would not say so)."""
    if options.limit is not None:
        raise UserInputError(f"reaction-ood {command} takes no limit: it scores every test reaction given "
                             "(pass fewer reactions instead)")


def _model_run(model: Any, queries: Sequence[str], k: int, options: Options) -> Run:
    """``k`` ranked products per query from ``model`` (a spec or an object) through the run
    pipeline (:func:`chemassay.models.run`: loading, de-duplication, the response cache with
    ``options.cache``, failures with reasons, request counts, identity)."""
    return run(model, PROTOCOL, list(queries), {"k": k}, context={"n_jobs": options.n_jobs, **dict(options.context)},
               cache=options.cache)


def _queries(table: _Table, reactants: Sequence[str] | None) -> list[str]:
    """What a model is asked: ``reactants`` when given (one per test reaction), else the test
    table's reactants (its ``reactants`` column, or the left side of ``rxn_smiles``)."""
    if reactants is None:
        return truth_reactants(table.frame, table.source).tolist()
    if len(reactants) != len(table.frame):
        raise UserInputError(f"{len(reactants)} reactants for {len(table.frame)} test reactions")
    return list(reactants)


@dataclass
class _Given:
    """Ranked predictions to score, where they came from, and what names them in the result."""

    parsed: Any
    source: str
    ref: ModelRef | None
    label: str
    path: Path | None = None


def _given_predictions(predictions: Any, id_column: str | None, n_best: int | None) -> _Given:
    """Predictions handed in, scored as they are: a file, a table, ranked lists or a mapping
    id → ranked list (:func:`evaluate` lists the layouts)."""
    if _is_path(predictions):
        from chemassay.runtime.files import need_file

        path = need_file(predictions, "prediction")
        parsed = parse_predictions(read_table(path, what="prediction"), source=str(path), id_column=id_column,
                                   n_best=n_best, first_line=first_data_line(path))
        return _Given(parsed, str(path), predictions_ref(path), path.name.split(".")[0], path)
    if isinstance(predictions, pd.DataFrame):
        parsed = parse_predictions(predictions.reset_index(drop=True), source="the prediction table",
                                   id_column=id_column, n_best=n_best)
        ref = in_memory_ref(predictions.astype(str).to_dict("records"), name="in-memory prediction table")
        return _Given(parsed, "the prediction table", ref, "in-memory")
    if isinstance(predictions, Mapping):
        ids = [str(key) for key in predictions]
        ranked = [_ranked_list(value) for value in predictions.values()]
        return _Given(Predictions(ranked, ids, "in-memory"), "the predictions",
                      in_memory_ref(dict(zip(ids, ranked, strict=True))), "in-memory")
    if isinstance(predictions, Sequence) and not isinstance(predictions, (str, bytes)):
        ranked = [_ranked_list(value) for value in predictions]
        return _Given(Predictions(ranked, None, "in-memory"), "the predictions", in_memory_ref(ranked), "in-memory")
    raise UserInputError(
        f"predictions: expected a file path, a DataFrame, a list of ranked lists or a mapping, "
        f"got {type(predictions).__name__}"
    )


def _evaluation_metrics(evaluation: Any, done: Run | None) -> dict[str, Any]:
    """The scored metrics, the model's failed requests (a live model) and the prediction ids
    absent from the test reactions (when there are any)."""
    metrics = dict(evaluation.metrics)
    if done is not None:
        metrics["n_model_failures"] = len(done.failures)
    if evaluation.unmatched_prediction_ids:
        metrics["n_unmatched_prediction_ids"] = len(evaluation.unmatched_prediction_ids)
    return metrics


# ------------------------------------------------------------------------------------------
# Scoring


def evaluate(
    predictions: PathLike | pd.DataFrame | Sequence[Sequence[str] | str] | Mapping[str, Sequence[str]] | None = None,
    reference: PathLike | pd.DataFrame | Sequence[str] | None = None,
    *,
    k: int | None = None,
    model: Any = None,
    reactants: Sequence[str] | None = None,
    match: str = "exact",
    id_column: str | None = None,
    n_best: int | None = None,
    group_by: Sequence[str] = (),
    label: str | None = None,
    dataset: str | None = None,
    setting: Mapping[str, Any] | None = None,
    seed: int | None = None,
    bootstrap: int | None = None,
    n_jobs: int | None = None,
    cache: bool | None = None,
    out: PathLike | None = None,
    context: Mapping[str, Any] | None = None,
    options: Options | None = None,
) -> Result:
    """Top-k accuracy of ranked reaction predictions against the recorded products.

    ``predictions`` is a prediction file (CSV/TSV/Parquet/JSONL, long or wide layout, or
    text with ``n_best`` lines per reaction), a DataFrame in one of those layouts, a list with
    one ranked list of product SMILES (or one SMILES) per test reaction in ``reference``'s
    order, or a mapping id → ranked list. ``reference`` (the test reactions) is a test file or
    DataFrame (``products`` or ``rxn_smiles`` column; an ``id`` column joins predictions by id;
    ``year`` and ``class_code`` give breakdowns), or a list of recorded product SMILES (or
    reaction SMILES). Instead of predictions, ``model`` (a spec such as
    ``template-knn:model.npz`` or ``openai:NAME,base_url=URL``, or an object with
    ``predict(reactants, k)``) is first run on the test reactants (``reference``'s
    ``reactants``/``rxn_smiles`` column, or ``reactants``) through
    :func:`chemassay.models.run` (identical reactions asked once; ``cache`` turns on its
    response cache; ``context`` holds the settings a spec is loaded with), asked for ``k``
    (default 10) products each; its failed requests count as wrong. ``k`` (top-k) cuts every
    list to its first k (default: the longest given) and sets the k reported (1, 2, 3, 5, 10
    ... up to k). ``match`` is ``exact`` (product multisets equal) or ``subset``. Metrics are
    described by the suite's metric cards; ``item_scores`` hold each test reaction's top-k
    hits and ``intervals`` their seeded bootstrap intervals (``bootstrap`` resamples, 0 for
    none; ``seed``). ``out`` writes every reaction's ranks to a table. The common options
    (``seed``, ``bootstrap``, ``n_jobs``, ``cache``, ``out``, ``context``) may come as one
    ``options`` object (:class:`~chemassay.contract.Options`); ``limit`` is refused (every
    test reaction given is scored).

    Nothing fails silently: ``skipped`` lists, each with its line, item and reason, the test
    reactions whose recorded products RDKit cannot read (left out of ``n``), those a live model
    failed on and those the given predictions have nothing for (scored as wrong; a live
    model's empty answer is an answer, counted in ``n_missing_predictions``), and the
    prediction rows that were not used: unreadable, repeating an item given before (wide: same
    id; long: same id and rank; the first one counts) or naming an id absent from the test
    reactions (at most 200 of a kind are listed; the ``n_...`` metrics count them all). ``details``
    (:class:`~chemassay.suites.reaction_ood.details.EvaluateDetails`) holds the breakdowns by
    year and class and the wrong top-1 predictions.

    The result's ``setting`` says which benchmark setting the test reactions are (the split's
    kind and the part, read from the split folder's ``manifest.json`` when ``reference`` is a
    part of one; ``setting`` adds or overrides keys) and ``dataset`` names the data they come from
    (the registered dataset the split was made from, else the file; ``dataset`` overrides it).

    >>> from chemassay.reaction_ood import evaluate
    >>> result = evaluate([["CC(=O)NC", "CCO"], ["CCO", "CCOC(C)=O"]], ["CNC(C)=O", "CCOC(C)=O"], k=2)
    >>> result.metrics["top1_accuracy"], result.metrics["top2_accuracy"]
    (0.5, 1.0)
    >>> result.item_scores["top1_accuracy"]
    [1.0, 0.0]

    On the bundled dataSetA (683 USPTO reactions), the recorded products as the only
    prediction are all correct; the 5 reactions whose recorded products RDKit cannot read
    are skipped with their line and reason, not dropped silently:

    >>> import chemassay
    >>> reactions = chemassay.load_dataset("schneider-dataseta")
    >>> products = [r.split(">")[-1] for r in reactions["rxn_smiles"]]
    >>> result = evaluate([[p] for p in products], reactions, bootstrap=0)
    >>> result.n, len(result.skipped), result.metrics["top1_accuracy"]
    (678, 5, 1.0)
    """
    from chemassay.suites.reaction_ood.evaluation import (
        Predictions,
        evaluate_predictions,
        item_scores,
    )

    options = Options.merged(options, seed=seed, bootstrap=bootstrap, n_jobs=n_jobs, cache=cache, out=out,
                             context=context)
    _refuse_limit(options, "evaluate")
    started = time.perf_counter()
    _check_k(k)
    if reference is None:
        raise UserInputError("evaluate needs the test reactions (reference=...): a test file, a DataFrame or a list")
    if (predictions is None) == (model is None):
        raise UserInputError("give either predictions or a model to run (model=SPEC), not both" if model is not None
                             else "give the predictions to score, or a model to run (model=SPEC)")
    _check_writable(options.out, "per-item table")
    table = _read_table(reference, "test", reactants=reactants)
    done: Run | None = None
    max_k = k
    if model is not None:
        max_k = k or DEFAULT_MODEL_K
        done = _model_run(model, _queries(table, reactants), max_k, options)
        # the test table's own ids name the items (stable across subsets and reorderings), else positions
        given = _Given(Predictions(done.outputs, _own_ids(table.frame, id_column), "model"), "the model's predictions",
                       None, done.model.name)
    else:
        given = _given_predictions(predictions, id_column, n_best)

    evaluation = evaluate_predictions(
        table.frame, given.parsed, source=given.source, max_k=max_k, match=match, id_column=id_column,
        group_by=group_by, n_jobs=options.n_jobs, truth_source=table.source, truth_first_line=table.first_line,
    )
    if options.out is not None:
        write_table(evaluation.per_item, options.out)
    dataset_ref, manifest_setting = _table_dataset(table, dataset)
    result = make_result(
        SUITE, "evaluate", model=given.ref, run=done, list_failures=False, started=started,
        metrics=_evaluation_metrics(evaluation, done), n=len(evaluation.per_item),
        inputs=[path for path in (given.path, table.path) if path is not None],
        item_ids=[str(i) for i in evaluation.per_item["id"]], item_scores=item_scores(evaluation),
        skipped=_evaluation_skipped(evaluation, done.failures if done is not None else {}, table.first_line,
                                    live=done is not None),
        dataset=dataset_ref, setting={**manifest_setting, **dict(setting or {})},
        config={"k": max(evaluation.k_values), "k_values": evaluation.k_values, "match": match,
                "id_column": id_column, "n_best": n_best, "group_by": list(group_by), "layout": given.parsed.layout,
                "label": label or given.label},
        details=EvaluateDetails(breakdowns=evaluation.breakdowns, items=evaluation.misses,
                                per_item=str(options.out) if options.out is not None else None),
    )
    return attach_intervals(result, resamples=options.bootstrap, seed=options.seed)


def _own_ids(frame: pd.DataFrame, id_column: str | None) -> list[str] | None:
    """The test table's id column (``id_column``, else the first of ``id``, ``reaction_id``,
    ``source_row``) as text, when it names every row once; else ``None`` (rows by position)."""
    columns = [str(c) for c in frame.columns]
    key = id_column if id_column in columns else next((c for c in ID_CANDIDATES if c in columns), None)
    if key is None:
        return None
    ids = frame[key].astype(str).tolist()
    return ids if len(set(ids)) == len(ids) else None


def _evaluation_skipped(evaluation: Any, failures: Mapping[int, str], first_line: int, *,
                        live: bool) -> list[SkippedItem]:
    """Every test reaction or prediction row that failed, with its reason (see :func:`evaluate`).

    A live model's empty answer is an answer (it predicts nothing; ``n_missing_predictions``
    counts it), not a failed item: only its failed requests are listed. Predictions handed
    in (a file, a table, lists) that give nothing for a test reaction are listed.
    """
    per_item = evaluation.per_item
    ids_by_row = dict(zip(per_item["row"].tolist(), per_item["id"].astype(str).tolist(), strict=True))
    skipped = _skipped(evaluation.skipped)
    skipped += _capped([
        SkippedItem(line=row + first_line, item=ids_by_row.get(row, str(row)), index=row,
                    reason=f"the model failed ({reason}); scored as wrong")
        for row, reason in sorted(failures.items())
    ], "test reactions the model failed on")
    missing = per_item.loc[per_item["missing"], ["row", "id"]]
    skipped += _capped([
        SkippedItem(line=int(row) + first_line, item=str(item_id), index=int(row),
                    reason="no prediction for this test reaction; scored as wrong")
        for row, item_id in missing.itertuples(index=False) if not live
    ], "test reactions without predictions")
    skipped += _capped(_skipped(evaluation.problems, "prediction file: "), "unreadable prediction rows")
    skipped += _capped(_skipped(evaluation.duplicates, "prediction file: "), "repeated prediction rows")
    skipped += _capped([
        SkippedItem(item=item_id, reason="prediction file: id not among the test reactions; ignored")
        for item_id in evaluation.unmatched_prediction_ids
    ], "prediction ids not among the test reactions")
    return skipped


def _ranked_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    return [str(v) for v in value]


def iterate(
    model: Any,
    reference: PathLike | pd.DataFrame,
    *,
    k: int = 5,
    rounds: int = 2,
    feed: str = "append",
    reactants: Sequence[str] | None = None,
    n_jobs: int | None = None,
    cache: bool | None = None,
    out: PathLike | None = None,
    context: Mapping[str, Any] | None = None,
    options: Options | None = None,
) -> Result:
    """Two-round (iterated) evaluation of a live model: round-1 top-1 products fed back.

    Round r+1 gets the original reactants plus the round-r top-1 prediction
    (``feed="append"``) or the prediction alone (``feed="alone"``); every round is scored
    against the recorded products of ``reference`` (a test file or table with ``reactants``
    or ``rxn_smiles`` and ``products``). Bradshaw et al. used it for Grignard double additions.
    The model runs through :func:`chemassay.models.run` (``cache``: its response cache);
    ``out`` writes every round's predictions (``row, round, rank, prediction``). The common
    options may come as one ``options`` object (:class:`~chemassay.contract.Options`).
    """
    options = Options.merged(options, n_jobs=n_jobs, cache=cache, out=out, context=context)
    _refuse_limit(options, "iterate")
    started = time.perf_counter()
    _check_k(k)
    _check_writable(options.out, "predictions table")
    table = _read_table(reference, "test", reactants=reactants)
    queries = _queries(table, reactants)
    truths = truth_products(table.frame, table.source).tolist()
    outcome = iterated_evaluation(model, queries, truths, k=k, rounds=rounds, feed=feed,
                                  context={"n_jobs": options.n_jobs, **dict(options.context)}, cache=options.cache)
    skipped = _skipped([{"line": i + table.first_line, "reason": s}
                        for i, s in enumerate(outcome.scores[0]) if isinstance(s, str)])
    skipped += _capped([
        SkippedItem(line=f["index"] + table.first_line, index=f["index"],
                    reason=f"round {f['round']}: the model failed ({f['reason']}); scored as wrong")
        for f in outcome.failures
    ], "failed model requests")
    if options.out is not None:
        rows = [(i, r + 1, rank, p) for r, ranked in enumerate(outcome.predictions)
                for i, preds in enumerate(ranked) for rank, p in enumerate(preds, start=1)]
        write_table(pd.DataFrame(rows, columns=["row", "round", "rank", "prediction"]), options.out)
    dataset_ref, setting = _table_dataset(table)
    return make_result(
        SUITE, "iterate", run=outcome.run, list_failures=False, metrics=outcome.metrics, started=started,
        n=len(truths) - sum(isinstance(s, str) for s in outcome.scores[0]), skipped=skipped, dataset=dataset_ref,
        setting=setting, inputs=[table.path] if table.path is not None else [],
        config={"k": k, "rounds": rounds, "feed": feed},
        details=IterateDetails(predictions=str(options.out) if options.out is not None else None),
    )


# ------------------------------------------------------------------------------------------
# Models


def predict(
    model: Any,
    reactants: PathLike | pd.DataFrame | Sequence[str],
    k: int = DEFAULT_MODEL_K,
    *,
    n_jobs: int = 1,
    context: Mapping[str, Any] | None = None,
) -> list[list[str]]:
    """Up to ``k`` ranked product SMILES per reaction from a live model.

    ``model`` is a spec string or an object with ``predict(reactants, k)``; ``reactants`` a
    list of reactant SMILES (reagents merged, ``.``-joined) or a test file/table (its
    ``reactants`` column, or the left side of ``rxn_smiles``). It runs through
    :func:`chemassay.models.run` (identical reactions are asked once); a failed request gives
    an empty list.
    """
    _check_k(k)
    if _is_path(reactants) or isinstance(reactants, pd.DataFrame):
        queries = _queries(_read_table(reactants, "test"), None)
    else:
        queries = [str(r) for r in reactants]
    return _model_run(model, queries, k, Options(n_jobs=n_jobs, context=dict(context or {}))).outputs


@dataclass
class PredictionRun:
    """What :func:`predict_file` did: the file written, counts, the model and its failures."""

    out: Path
    n_reactions: int
    n_predictions: int
    model: ModelRef
    failures: list[dict] = field(default_factory=list)
    elapsed_s: float = 0.0
    requests: RequestSummary | None = None
    """Requests to a model behind an endpoint (``None`` for other models)."""


def predict_file(
    model: Any,
    test: PathLike | pd.DataFrame,
    out: PathLike,
    *,
    k: int = DEFAULT_MODEL_K,
    id_column: str | None = None,
    n_jobs: int = 1,
    context: Mapping[str, Any] | None = None,
) -> PredictionRun:
    """Run a live model on a test table and write its ranked predictions (long layout).

    The table written has ``id, rank, prediction`` (ids from ``id_column``, else the test's
    ``id``/``reaction_id``/``source_row`` column, else the row number) and is what
    :func:`evaluate` reads back. Reactions the model failed on have no rows (they are scored
    as missing) and are listed in the returned :class:`PredictionRun`, whose model, request
    counts and time are the run's (:func:`chemassay.models.run`).
    """
    from chemassay.suites.reaction_ood.tables import table_kind, write_table

    _check_k(k)
    target = _check_writable(out, "predictions table")
    table_kind(target)  # an unknown extension fails before the model runs
    table = _read_table(test, "test")
    queries = _queries(table, None)
    columns = [str(c) for c in table.frame.columns]
    if id_column is not None and id_column not in columns:
        raise UserInputError(f"{table.source}: no id column {id_column!r} (columns: {columns})")
    key = id_column or next((c for c in ID_CANDIDATES if c in columns), None)
    ids = table.frame[key].astype(str).tolist() if key else [str(i) for i in range(len(table.frame))]
    done = _model_run(model, queries, k, Options(n_jobs=n_jobs, context=dict(context or {})))
    rows = [(item_id, rank, smiles) for item_id, preds in zip(ids, done.outputs, strict=True)
            for rank, smiles in enumerate(preds, start=1)]
    write_table(pd.DataFrame(rows, columns=["id", "rank", "prediction"]), target)
    listed = [{"line": index + table.first_line, "item": ids[index], "reason": reason}
              for index, reason in done.failures.items()]
    return PredictionRun(target, len(ids), len(rows), done.model, listed, done.elapsed_s, done.requests)


def train(
    reactions: PathLike | pd.DataFrame,
    out: PathLike | None = None,
    *,
    maps: str = "auto",
    n_neighbors: int = 50,
    template_radius: int = 1,
    n_jobs: int = 1,
) -> TemplateKnnModel:
    """Train the template-kNN baseline on atom-mapped training reactions; save it to ``out``.

    ``reactions`` is a training part (file or table); atom maps come from ``maps`` (``auto``:
    a ``mapped_rxn_smiles`` column, maps in the reactions, or the shipped Schneider 50k
    mapping; ``schneider``, ``none`` or a mapping file). Returns the
    :class:`~chemassay.suites.reaction_ood.template_knn.TemplateKnnModel`, whose
    ``training_report`` counts reactions without maps or templates. Load it back with the
    spec ``template-knn:OUT``.
    """
    target = _check_writable(out, "model file")
    table = _read_table(reactions, "training")
    mapped, source = mapped_reactions_for(table.frame, maps)
    usable = [m for m in mapped if m is not None]
    if not usable:
        raise UserInputError(
            f"{table.source}: no training reaction has atom maps ({source}); run 'reaction-ood map' first"
        )
    config = BaselineConfig(template_radius=template_radius, n_neighbors=n_neighbors)
    model = TemplateKnnModel.train(usable, config=config, n_jobs=n_jobs)
    model.training_report["n_without_maps"] = len(mapped) - len(usable)
    model.training_report["maps"] = source
    model.n_jobs = n_jobs
    if target is not None:
        from chemassay.models.spec import ModelSpec

        model.save(target)
        model.path = target
        model.spec = ModelSpec("template-knn", str(target))
    return model


# ------------------------------------------------------------------------------------------
# Data


def load_dataset(name: str = "schneider-50k", part: str | None = None, **options: Any) -> pd.DataFrame:
    """A registered reaction set (``schneider-50k``, ``schneider-dataseta``) in the standard
    columns, through the dataset registry (the same as ``chemassay.load_dataset(name)``)."""
    return registry_load(name, part, **options)


def clean_reactions(frame: pd.DataFrame, **settings: Any) -> tuple[pd.DataFrame, CleanReport]:
    """Clean an in-memory reaction table: ``(clean_frame, report)`` (Section S1.1).

    ``settings`` are those of :class:`~chemassay.suites.reaction_ood.clean.CleanConfig`
    (``max_tokens``, ``dedup``, ``remove_isotopes``...) plus ``n_jobs``.
    """
    from chemassay.suites.reaction_ood.clean import clean_reactions as run

    n_jobs = int(settings.pop("n_jobs", 1))
    return run(frame, CleanConfig(**settings), n_jobs=n_jobs, show_progress=False)


def clean(
    reactions: PathLike | pd.DataFrame,
    out: PathLike,
    *,
    fmt: str = "auto",
    max_tokens: int = 800,
    dedup: str = "paper",
    keep_isotopes: bool = False,
    n_jobs: int = 1,
    scheduler: str | None = None,
    chunk_rows: int = 100_000,
    show_progress: bool | None = None,
) -> Result:
    """Standardize, filter (the paper's six rules) and deduplicate reactions into ``out``.

    ``reactions`` is a reaction file (CSV/TSV/Parquet table, ``.rsmi``, the Schneider CSV,
    Pistachio JSON lines), a registered dataset name (``schneider-50k``) or a DataFrame;
    ``out`` a ``.parquet`` or ``.csv`` file. Files are streamed in chunks of ``chunk_rows``
    (bounded memory). Returns the cleaning report (task ``clean``): the count per rule,
    unparsable reactions listed in ``skipped`` with their row and reason.
    """
    from chemassay.suites.reaction_ood.clean import (
        CleanConfig,
        clean_file,
        config_dict,
        write_table,
    )

    started = time.perf_counter()
    config = CleanConfig(max_tokens=max_tokens, dedup=dedup, remove_isotopes=not keep_isotopes)
    target = Path(out)
    if target.suffix.lower() not in (".parquet", ".csv"):
        raise UserInputError(f"{target}: the cleaned table must end in .parquet (compact, typed) or .csv")
    _check_writable(target, "cleaned table")
    inputs: list[InputRef] = []
    if isinstance(reactions, pd.DataFrame):
        dataset_name = reactions.attrs.get("dataset")
        cleaned, report = clean_frame(reactions, config, n_jobs=n_jobs, scheduler=scheduler,
                                      show_progress=show_progress)
        write_table([cleaned], target, dataset=dataset_name)
    else:
        path, dataset_fmt = reaction_input(reactions)
        fmt = dataset_fmt if fmt == "auto" else fmt
        inputs.append(input_ref(path))
        # the bundled file, wherever it was copied, is the registered dataset
        dataset_name = registered_reaction_dataset(inputs[0].sha256)
        report = clean_file(path, target, config, fmt=fmt, n_jobs=n_jobs, scheduler=scheduler,
                            chunk_rows=chunk_rows, show_progress=show_progress, dataset=dataset_name)
    counts = report.counts()
    skipped = [SkippedItem(line=p["row"], reason=p["reason"]) for p in report.problems]
    skipped += _capped([SkippedItem(line=p.get("row"), reason=f"unreadable cell: {p.get('reason')}")
                        for p in report.read_problems], "unreadable cells")
    return make_result(
        SUITE, "clean", metrics=counts, n=counts["rows_out"], started=started, skipped=skipped, inputs=inputs,
        dataset=DatasetRef(name=dataset_name, sha256=inputs[0].sha256 if inputs else None) if dataset_name else None,
        config={**config_dict(config), "format": fmt, "n_jobs": n_jobs},
        details=CleanDetails(output=str(target)),
    )


def _split_config(config: PathLike | Mapping[str, Any] | None) -> tuple[dict, str | None]:
    """A split definition from a JSON file, a shipped definition's name, or a dict."""
    if config is None:
        return {}, None
    if isinstance(config, Mapping):
        data = dict(config)
        return data, data.get("kind")
    path = Path(config)
    if not path.exists() and path.suffix == "" and "/" not in str(config):
        data = split_definition(str(config))
        return data, data.get("kind")
    need_file(path, "split config")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise UserInputError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise UserInputError(f"{path}: a split config must be a JSON object")
    return data, data.get("kind")


def _check_split_folder(out: Path, overwrite: bool) -> None:
    """Fail before any work when the split folder cannot be written (no side effects)."""
    if out.exists() and not out.is_dir():
        raise UserInputError(f"{out}: exists and is not a folder")
    if (out / "manifest.json").exists() and not overwrite:
        raise UserInputError(f"{out}: already holds a split (manifest.json); pass --overwrite or choose another folder")
    probe = out
    while not probe.exists():
        probe = probe.parent
    if not os.access(probe, os.W_OK | os.X_OK):
        raise UserInputError(f"cannot write the split folder {out}: {probe} is not writable")


def split(
    cleaned: PathLike | pd.DataFrame,
    out: PathLike,
    *,
    kind: str | None = None,
    config: PathLike | Mapping[str, Any] | None = None,
    seed: int | None = None,
    overwrite: bool = False,
) -> dict:
    """Split a cleaned table into ``out`` (one Parquet file per part and ``manifest.json``).

    ``config`` is a split definition (a JSON file, a dict, or the name of a shipped one such
    as ``schneider_document``; see ``reaction-ood split-defs``); ``kind`` (random, document,
    author, time, reaction-type, bespoke) defaults to the config's; ``seed`` to the config's,
    else 0. The same input, config and seed give byte-identical files. Returns the manifest.
    """
    data, config_kind = _split_config(config)
    chosen = kind or config_kind
    if chosen is None:
        raise UserInputError("give the split kind with --kind (or a \"kind\" in the config)")
    if kind and config_kind and kind != config_kind:
        raise UserInputError(f"--kind {kind} contradicts \"kind\": {config_kind!r} in {config}")
    if seed is None:
        seed = data.get("seed", 0)
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise UserInputError(f"{config}: 'seed' must be a whole number, got {seed!r}")
    target = Path(out)
    _check_split_folder(target, overwrite)
    if isinstance(cleaned, pd.DataFrame):
        return split_frame_to_dir(cleaned, target, chosen, data, seed, overwrite=overwrite)
    return split_file(need_file(cleaned, "cleaned reaction"), target, chosen, data, seed, overwrite=overwrite)


def verify(directory: PathLike) -> Result:
    """Prove a split folder's guarantees (files match the manifest; no shared reaction,
    document, author, year or class leak between the parts its kind keeps apart).

    The result (task ``verify``) counts checks, passed and failed; ``checks`` lists each with
    its violations and examples.
    """
    started = time.perf_counter()
    manifest, results = verify_split_dir(directory)
    failed = [r for r in results if not r.passed]
    return make_result(
        SUITE, "verify",
        metrics={"checks": len(results), "passed": len(results) - len(failed), "failed": len(failed)},
        n=len(results), started=started,
        config={"kind": manifest["kind"], "split_config": manifest["config"], "seed": manifest.get("seed")},
        inputs=[Path(directory) / "manifest.json"],
        details=VerifyDetails(checks=results_as_dicts(results)),
    )


def shift(
    train: PathLike | pd.DataFrame | Sequence[str],
    test: Mapping[str, PathLike | pd.DataFrame | Sequence[str]] | PathLike | pd.DataFrame,
    *,
    neighbours: int = 5,
    maps: str = "auto",
    device: str = "cpu",
    n_jobs: int = 1,
    per_item: PathLike | None = None,
    plot: PathLike | None = None,
) -> Result:
    """Distance of test reactions to the training set (Section 2.5, Fig. 6).

    For every test reaction, the mean cosine distance to its ``neighbours`` (5) nearest
    training reactions in reactant space and in reaction-difference space (Morgan count
    fingerprints, radius 2, 2048 bits, reagents removed: by atom maps where ``maps`` finds
    them, else by the element/identity rule). ``test`` maps a name to each test set (or is
    one set); sets are files, tables or lists of reaction SMILES. ``per_item`` writes every
    distance, ``plot`` the histograms. Metrics: ``{set}/{space}_median`` and ``_mean``.
    """
    started = time.perf_counter()
    _check_k(neighbours)
    _check_writable(per_item, "per-item table")
    _check_writable(plot, "plot")
    if not isinstance(test, Mapping):
        name = Path(test).name.split(".")[0] if _is_path(test) else "test"
        test = {name: test}
    if not test:
        raise UserInputError("shift needs at least one test set")

    def load(value: Any, what: str) -> tuple[list[str], str, _Table | None]:
        if isinstance(value, Sequence) and not isinstance(value, (str, bytes)) and not _is_path(value):
            return [str(v) for v in value], "as given", None
        table = _read_table(value, what)
        reactions, note = reactions_with_maps(table.frame, maps)
        return reactions, note, table

    train_reactions, train_note, train_table = load(train, "training")
    notes = {"train": train_note}
    test_reactions: dict[str, list[str]] = {}
    tables: dict[str, _Table | None] = {}
    for name, value in test.items():
        test_reactions[name], notes[name], tables[name] = load(value, "test")
    config = ShiftConfig(k=neighbours)
    outcome = distribution_shift(train_reactions, test_reactions, config=config, n_jobs=n_jobs, device=device)
    if plot is not None:
        from chemassay.suites.reaction_ood.plots import plot_shift_histograms

        plot_shift_histograms(outcome.distances, plot, k=neighbours)
    if per_item is not None:
        frames = [pd.DataFrame({"split": name, "row": np.arange(len(d["reactant"])),
                                "reactant_distance": d["reactant"], "difference_distance": d["difference"]})
                  for name, d in outcome.distances.items()]
        write_table(pd.concat(frames, ignore_index=True), per_item)
    inputs = [t.path for t in (train_table, *tables.values()) if t is not None and t.path is not None]
    if train_table is not None:
        dataset, train_setting = _table_dataset(train_table)
    else:
        dataset, train_setting = DatasetRef(name="in-memory training set"), {}
    lines = {name: (t.first_line if t is not None else 1) for name, t in tables.items()}
    lines["train"] = train_table.first_line if train_table is not None else 1
    return shift_result(
        outcome, config=config, dataset=dataset, inputs=inputs, started=started,
        extra_config={"maps": maps, "device": device, "reagent_removal": notes},
        first_lines=lines, plot=str(plot) if plot is not None else None,
        per_item=str(per_item) if per_item is not None else None,
        # the training part names the split the distances describe (the part is the test sets')
        setting={key: value for key, value in train_setting.items() if key != "part"},
    )
