"""Prediction tables, their alignment with a test table, and the evaluation with breakdowns.

The scoring rules (product-set matching, top-k) are in
:mod:`~chemassay.suites.reaction_ood.metrics`; this module reads the three prediction-table
layouts (:func:`parse_predictions`), joins them to the test reactions
(:func:`align_predictions`) and scores them with breakdowns by year and reaction class
(:func:`evaluate_predictions`). Nothing is dropped silently: prediction rows whose item was
already given (the same id in the wide layout, the same id and rank in the long layout) are
ignored and listed with their line numbers (**the first row counts**), test reactions without
predictions are wrong and listed, prediction ids absent from the test file are listed.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from chemassay.contract.errors import UserInputError
from chemassay.suites.reaction_ood.metrics import (
    MATCH_MODES,
    default_k_values,
    score_all,
    topk_accuracy,
    topk_hits,
)

__all__ = [
    "ID_CANDIDATES", "MATCH_MODES", "TRUTH_COLUMNS", "Evaluation", "Predictions", "align_predictions", "breakdown",
    "class_prefix", "default_k_values", "evaluate_predictions", "item_scores", "parse_predictions", "truth_products",
    "truth_reactants",
]

ID_CANDIDATES = ("id", "reaction_id", "source_row")
TRUTH_COLUMNS = ("products", "product", "rxn_smiles", "reaction", "rxn")


# ------------------------------------------------------------------------------------------
# Prediction files


@dataclass
class Predictions:
    """Ranked predictions per test item; ``ids`` is ``None`` when aligned by row order.

    ``problems`` lists rows that could not be read (``{"line", "reason"}``); ``duplicates``
    lists rows ignored because their item was given earlier in the file (``{"line", "item",
    "reason"}``): the first row of an item counts.
    """

    ranked: list[list[str]]
    ids: list[str] | None = None
    layout: str = "wide"
    problems: list[dict] = field(default_factory=list)
    duplicates: list[dict] = field(default_factory=list)


def _rank_columns(columns: Sequence[str]) -> list[str]:
    pattern = re.compile(r"^(?:pred(?:iction)?|top|product)[_-]?(\d+)$", re.IGNORECASE)
    found = []
    for column in columns:
        match = pattern.match(str(column))
        if match:
            found.append((int(match.group(1)), column))
    return [column for _, column in sorted(found)]


def _split_prediction_list(value) -> list[str]:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return []
    if isinstance(value, (list, tuple, np.ndarray)):
        return [str(v) for v in value]
    text = str(value).strip()
    if text.startswith('["') or text == "[]":
        try:
            loaded = json.loads(text)
        except json.JSONDecodeError:
            raise ValueError("predictions column holds malformed JSON") from None
        return [str(v) for v in loaded]
    return text.split()


def parse_predictions(
    frame: pd.DataFrame, *, source: str, id_column: str | None = None, n_best: int | None = None,
    first_line: int = 2,
) -> Predictions:
    """Ranked predictions from a prediction table in one of three layouts.

    * ``long``: one row per prediction with ``rank`` and ``prediction`` (or ``smiles`` /
      ``product``) columns, plus an id column; ranks need not be contiguous.
    * ``wide``: one row per test item with ``pred_1 ... pred_k`` (also ``prediction_1``,
      ``top1``...) columns, or one ``predictions`` column holding a JSON list or
      whitespace-separated SMILES.
    * ``n-best``: a single ``prediction`` column (e.g. a plain text file, one SMILES per line
      as written by OpenNMT) where each test item has ``n_best`` consecutive lines.

    ``first_line`` is the file line of the frame's first row (2 below a CSV header, 1 in a
    JSON-lines or text file), so that problems and duplicates name the line to look at. A
    duplicated item (wide: an id seen before; long: an id and rank seen before) is ignored and
    listed in ``duplicates``: the first row counts.
    """
    columns = [str(c) for c in frame.columns]
    if id_column is not None and id_column not in columns:
        raise UserInputError(f"{source}: no id column {id_column!r} (columns: {columns})")
    text_column = next((c for c in ("prediction", "smiles", "product", "pred") if c in columns), None)
    if "rank" in columns:
        if text_column is None:
            raise UserInputError(f"{source}: long layout needs a 'prediction' column next to 'rank'")
        key = id_column or next((c for c in ID_CANDIDATES if c in columns), None)
        if key is None:
            raise UserInputError(f"{source}: long layout needs an id column ({', '.join(ID_CANDIDATES)})")
        problems = []
        ranks = pd.to_numeric(frame["rank"], errors="coerce")
        bad = ranks.isna()
        for line in np.flatnonzero(bad.to_numpy())[:50]:
            problems.append({"line": int(line) + first_line,
                             "reason": f"rank {frame['rank'].iloc[line]!r} is not a number"})
        if bad.any():
            problems.append({"line": None, "reason": f"{int(bad.sum())} rows with a non-numeric rank ignored"})
        work = pd.DataFrame({"id": frame[key].astype(str).to_numpy(), "rank": ranks.to_numpy(),
                             "prediction": frame[text_column].to_numpy(),
                             "line": np.arange(len(frame), dtype=np.int64) + first_line})
        work = work[~bad.to_numpy()].sort_values(["id", "rank"], kind="stable")
        repeated = work.duplicated(["id", "rank"], keep="first").to_numpy()
        duplicates = [
            {"line": int(row.line), "item": row.id,
             "reason": f"id {row.id!r} rank {_rank_text(row.rank)} given again; the first row counts"}
            for row in work[repeated].sort_values("line").itertuples(index=False)
        ]
        work = work[~repeated]
        grouped = work.groupby("id", sort=False)["prediction"].apply(lambda s: [str(v) for v in s])
        return Predictions(list(grouped.values), list(grouped.index), "long", problems, duplicates)
    rank_columns = _rank_columns(columns)
    if rank_columns or "predictions" in columns:
        key = id_column or next((c for c in ID_CANDIDATES if c in columns), None)
        ranked: list[list[str]] = []
        problems = []
        for row_number, values in enumerate(frame.rename(columns=str).to_dict("records"), start=first_line):
            if rank_columns:
                items = [values.get(c) for c in rank_columns]
                preds = [str(v) for v in items if v is not None and str(v) != "" and str(v).lower() != "nan"]
            else:
                try:
                    preds = _split_prediction_list(values.get("predictions"))
                except ValueError as exc:
                    problems.append({"line": row_number, "reason": str(exc)})
                    preds = []
            ranked.append(preds)
        if not key:
            return Predictions(ranked, None, "wide", problems)
        ids = frame[key].astype(str).tolist()
        first_seen: dict[str, int] = {}
        kept_ranked: list[list[str]] = []
        kept_ids: list[str] = []
        duplicates = []
        for offset, (item_id, preds) in enumerate(zip(ids, ranked, strict=True)):
            if item_id in first_seen:
                duplicates.append({"line": offset + first_line, "item": item_id,
                                   "reason": f"id {item_id!r} given again (first on line {first_seen[item_id]}); "
                                             "the first row counts"})
                continue
            first_seen[item_id] = offset + first_line
            kept_ranked.append(preds)
            kept_ids.append(item_id)
        return Predictions(kept_ranked, kept_ids, "wide", problems, duplicates)
    if text_column is not None and len(columns) <= 2:
        if not n_best or n_best < 1:
            raise UserInputError(
                f"{source}: one prediction per line; pass --n-best N (predictions per test reaction)"
            )
        values = ["" if v is None else str(v) for v in frame[text_column].tolist()]
        if len(values) % n_best:
            raise UserInputError(
                f"{source}: {len(values)} lines is not a multiple of --n-best {n_best}"
            )
        ranked = [values[i:i + n_best] for i in range(0, len(values), n_best)]
        return Predictions([[v for v in r if v.strip()] for r in ranked], None, "n-best", [])
    raise UserInputError(
        f"{source}: cannot find predictions; expected 'rank'+'prediction' (long), 'pred_1'.. or "
        f"'predictions' (wide), or one prediction per line with --n-best (columns found: {columns})"
    )


def _rank_text(rank: float) -> str:
    return str(int(rank)) if float(rank).is_integer() else str(rank)


def truth_products(frame: pd.DataFrame, source: str) -> pd.Series:
    """The recorded products of each test reaction (``products`` column or from the reaction)."""
    columns = [str(c) for c in frame.columns]
    column = next((c for c in TRUTH_COLUMNS if c in columns), None)
    if column is None:
        raise UserInputError(f"{source}: needs a 'products' or 'rxn_smiles' column (columns: {columns})")
    values = frame[column].astype(str)
    if column in ("rxn_smiles", "reaction", "rxn"):
        return values.map(lambda text: text.split()[0].rsplit(">", 1)[-1] if ">" in text else "")
    return values


def truth_reactants(frame: pd.DataFrame, source: str) -> pd.Series:
    """The reactants (reagents merged) of each test reaction, for live models."""
    columns = [str(c) for c in frame.columns]
    if "reactants" in columns:
        return frame["reactants"].astype(str)
    column = next((c for c in ("rxn_smiles", "reaction", "rxn") if c in columns), None)
    if column is None:
        raise UserInputError(f"{source}: needs a 'reactants' or 'rxn_smiles' column (columns: {columns})")

    def reactants_of(text: str) -> str:
        parts = text.split()[0].split(">") if ">" in text else [""]
        return ".".join(p for p in parts[:2] if p) if len(parts) == 3 else ""

    return frame[column].astype(str).map(reactants_of)


# ------------------------------------------------------------------------------------------
# Evaluation of a prediction table against a test table


@dataclass
class Evaluation:
    """Everything ``evaluate`` reports: metrics, per-item table, breakdowns, problems."""

    metrics: dict[str, float | int]
    per_item: pd.DataFrame
    breakdowns: dict[str, list[dict]]
    skipped: list[dict]
    missing_ids: list[str]
    unmatched_prediction_ids: list[str]
    problems: list[dict]
    k_values: list[int]
    duplicates: list[dict] = field(default_factory=list)
    misses: list[dict] = field(default_factory=list)
    """Test reactions whose first prediction is wrong (at most :data:`MAX_MISSES`, in test
    order): ``id``, ``reactants`` (where the test table has them), ``target``, ``predictions``
    (the first five, as given) and ``rank`` (of the first correct one, ``None``: none)."""


MAX_MISSES = 200

def align_predictions(
    test: pd.DataFrame, predictions: Predictions, *, source: str, id_column: str | None = None,
    truth_source: str = "the test file",
) -> tuple[list[list[str] | None], list[str], list[str]]:
    """Predictions for each test row (``None`` when missing), test ids, unmatched prediction ids.

    ``source`` names the predictions and ``truth_source`` the test reactions in errors, so a
    message always blames the file that has the problem.
    """
    test_columns = [str(c) for c in test.columns]
    if predictions.ids is None:
        if len(predictions.ranked) != len(test):
            raise UserInputError(
                f"{source}: {len(predictions.ranked)} predicted items but {len(test)} test reactions in "
                f"{truth_source}; add an id column to both files (or keep the same order and count)"
            )
        ids = [str(i) for i in range(len(test))]
        return list(predictions.ranked), ids, []
    key = id_column or next((c for c in ID_CANDIDATES if c in test_columns), None)
    if key is None or key not in test_columns:
        wanted = repr(id_column) if id_column else f"one of {', '.join(ID_CANDIDATES)}"
        raise UserInputError(
            f"{truth_source}: no id column ({wanted}) to join the predictions of {source} on "
            f"(columns: {test_columns}); pass --id-column"
        )
    test_ids = test[key].astype(str).tolist()
    lookup: dict[str, list[str]] = {}
    for item_id, preds in zip(predictions.ids, predictions.ranked, strict=True):
        lookup.setdefault(item_id, preds)
    aligned = [lookup.get(i) for i in test_ids]
    unmatched = sorted(set(lookup) - set(test_ids))
    return aligned, test_ids, unmatched


def class_prefix(code, level: int) -> str | None:
    """The first ``level`` parts of a hierarchical class code (``3.1.2`` → ``3.1`` at level 2)."""
    if code is None or (isinstance(code, float) and math.isnan(code)):
        return None
    text = str(code).strip()
    if not text or text.lower() in ("nan", "none", "0"):
        return None
    parts = text.split(".")
    return ".".join(parts[:level]) if len(parts) >= level else None


def breakdown(per_item: pd.DataFrame, column: str, k_values: Sequence[int]) -> list[dict]:
    """Accuracy per value of ``column`` (rows without a value left out), sorted by value."""
    rows = []
    if column not in per_item.columns:
        return rows
    valid = per_item[per_item[column].notna() & (per_item[column].astype(str) != "")]
    for value, group in valid.groupby(column, sort=True):
        ranks = [None if pd.isna(r) else int(r) for r in group["rank"]]
        flat = [None if pd.isna(r) else int(r) for r in group["rank_stereo_agnostic"]]
        entry: dict = {"group": value.item() if hasattr(value, "item") else value, "n": int(len(group))}
        for k, acc in topk_accuracy(ranks, k_values).items():
            entry[f"top{k}_accuracy"] = acc
        entry["top1_accuracy_stereo_agnostic"] = topk_accuracy(flat, [1])[1]
        if "rank_regio_agnostic" in group.columns:
            regio = [None if pd.isna(r) else int(r) for r in group["rank_regio_agnostic"]]
            entry["top1_accuracy_regio_agnostic"] = topk_accuracy(regio, [1])[1]
        rows.append(entry)
    return sorted(rows, key=lambda entry: _natural_key(entry["group"]))


def _natural_key(value) -> tuple:
    """Sort class codes numerically part by part (``2`` before ``10``, ``1.2`` before ``1.10``)."""
    parts = str(value).split(".")
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts)


def evaluate_predictions(
    test: pd.DataFrame,
    predictions: Predictions,
    *,
    source: str = "predictions",
    max_k: int | None = None,
    match: str = "exact",
    id_column: str | None = None,
    group_by: Sequence[str] = (),
    n_jobs: int = 1,
    truth_source: str = "the test file",
    truth_first_line: int = 2,
) -> Evaluation:
    """Score ``predictions`` against the test table; see the module docstring for the rules.

    ``max_k`` truncates each item's list (default: the longest list given, at least 1).
    Breakdowns are made by ``year``, by class-code prefix at levels 1 and 2 (when a
    ``class_code`` column exists) and by every column in ``group_by``. ``source`` and
    ``truth_source`` name the two inputs in errors; ``truth_first_line`` is the file line of
    the test table's first row (for the line numbers of skipped reactions).
    """
    test_columns = [str(c) for c in test.columns]
    for column in group_by:
        if column not in test_columns:
            raise UserInputError(f"{truth_source}: no column {column!r} to group by (columns: {test_columns})")
    aligned, test_ids, unmatched = align_predictions(test, predictions, source=source, id_column=id_column,
                                                     truth_source=truth_source)
    longest = max((len(p) for p in aligned if p), default=1)
    max_k = max_k or max(1, longest)
    truths = truth_products(test, truth_source).tolist()
    lists = [(p or [])[:max_k] for p in aligned]
    scores = score_all(truths, lists, match=match, n_jobs=n_jobs)
    k_values = default_k_values(max_k)

    skipped = []
    records = []
    for row, (item_id, truth, preds, score) in enumerate(zip(test_ids, truths, aligned, scores, strict=True)):
        if isinstance(score, str):
            skipped.append({"line": row + truth_first_line, "item": item_id, "reason": score})
            continue
        records.append({
            "id": item_id, "row": row, "products": truth,
            "top1_prediction": (preds or [""])[0] if preds else "",
            "n_predictions": score.n_predictions, "missing": not preds,
            "rank": score.rank, "rank_stereo_agnostic": score.rank_stereo_agnostic,
            "rank_regio_agnostic": score.rank_regio_agnostic, "n_invalid": score.n_invalid, "top1_invalid": score.top1_invalid,
        })
    per_item = pd.DataFrame.from_records(
        records,
        columns=["id", "row", "products", "top1_prediction", "n_predictions", "missing", "rank",
                 "rank_stereo_agnostic", "rank_regio_agnostic", "n_invalid", "top1_invalid"],
    )
    per_item["rank"] = per_item["rank"].astype("Int64")
    per_item["rank_stereo_agnostic"] = per_item["rank_stereo_agnostic"].astype("Int64")
    per_item["rank_regio_agnostic"] = per_item["rank_regio_agnostic"].astype("Int64")
    rows = per_item["row"].to_numpy()
    if "year" in test_columns:
        per_item["year"] = pd.to_numeric(test["year"].iloc[rows], errors="coerce").astype("Int64").to_numpy()
    if "class_code" in test_columns:
        codes = test["class_code"].iloc[rows].tolist()
        per_item["class_code"] = codes
        per_item["class_level1"] = [class_prefix(c, 1) for c in codes]
        per_item["class_level2"] = [class_prefix(c, 2) for c in codes]
    for column in group_by:
        per_item[f"group_{column}"] = test[column].iloc[rows].astype(str).to_numpy()

    ranks = [None if pd.isna(r) else int(r) for r in per_item["rank"]]
    flat = [None if pd.isna(r) else int(r) for r in per_item["rank_stereo_agnostic"]]
    metrics: dict[str, float | int] = {}
    for k, acc in topk_accuracy(ranks, k_values).items():
        metrics[f"top{k}_accuracy"] = acc
    for k, acc in topk_accuracy(flat, k_values).items():
        metrics[f"top{k}_accuracy_stereo_agnostic"] = acc
    regio = [None if pd.isna(r) else int(r) for r in per_item["rank_regio_agnostic"]]
    for k, acc in topk_accuracy(regio, k_values).items():
        metrics[f"top{k}_accuracy_regio_agnostic"] = acc
    n = len(per_item)
    given = per_item[~per_item["missing"]]
    metrics["top1_invalid_rate"] = float(given["top1_invalid"].mean()) if len(given) else math.nan
    metrics["invalid_prediction_rate"] = (
        float(given["n_invalid"].sum() / given["n_predictions"].sum()) if given["n_predictions"].sum() else math.nan
    )
    metrics["n_missing_predictions"] = int(per_item["missing"].sum())
    metrics["mean_predictions_per_item"] = float(per_item["n_predictions"].mean()) if n else math.nan
    if predictions.duplicates:
        metrics["n_duplicate_predictions"] = len(predictions.duplicates)

    breakdowns: dict[str, list[dict]] = {}
    for column, name in (("year", "year"), ("class_level1", "class_level1"), ("class_level2", "class_level2")):
        if column in per_item.columns:
            breakdowns[name] = breakdown(per_item, column, k_values)
    for column in group_by:
        breakdowns[column] = breakdown(per_item, f"group_{column}", k_values)
    missing_ids = per_item.loc[per_item["missing"], "id"].tolist()
    return Evaluation(metrics, per_item, breakdowns, skipped, missing_ids, unmatched, predictions.problems, k_values,
                      list(predictions.duplicates), _misses(test, per_item, lists))


def _misses(test: pd.DataFrame, per_item: pd.DataFrame, lists: list[list[str]]) -> list[dict]:
    """The first :data:`MAX_MISSES` reactions whose top-1 prediction is wrong (for galleries)."""
    try:
        reactants = truth_reactants(test, "the test file").tolist()
    except UserInputError:
        reactants = None
    misses: list[dict] = []
    for item_id, row, products, rank in zip(per_item["id"], per_item["row"], per_item["products"], per_item["rank"],
                                           strict=True):
        if len(misses) >= MAX_MISSES:
            break
        rank = None if pd.isna(rank) else int(rank)
        if rank == 1 or not lists[row]:
            continue
        miss = {"id": str(item_id), "target": products, "predictions": list(lists[row][:5]), "rank": rank}
        if reactants is not None:
            miss["reactants"] = reactants[row]
        misses.append(miss)
    return misses


def item_scores(evaluation: Evaluation) -> dict[str, list[float | None]]:
    """Per scored test reaction, the value each mean-over-items metric averages.

    ``top{k}_accuracy``, ``top{k}_accuracy_stereo_agnostic`` and
    ``top{k}_accuracy_regio_agnostic``: 1.0 when a correct prediction
    is within the first k (the shared :func:`chemassay.report.ranking.hits_at_k`), else 0.0;
    ``top1_invalid_rate``: 1.0 when the first prediction is unreadable, ``None`` for a reaction
    without predictions (that metric leaves it out). Aligned with ``per_item`` rows.
    """
    per_item = evaluation.per_item
    ranks = [None if pd.isna(r) else int(r) for r in per_item["rank"]]
    flat = [None if pd.isna(r) else int(r) for r in per_item["rank_stereo_agnostic"]]
    scores: dict[str, list[float | None]] = {}
    for k in evaluation.k_values:
        scores[f"top{k}_accuracy"] = topk_hits(ranks, k)
    for k in evaluation.k_values:
        scores[f"top{k}_accuracy_stereo_agnostic"] = topk_hits(flat, k)
    if "rank_regio_agnostic" in per_item.columns:
        regio = [None if pd.isna(r) else int(r) for r in per_item["rank_regio_agnostic"]]
        for k in evaluation.k_values:
            scores[f"top{k}_accuracy_regio_agnostic"] = topk_hits(regio, k)
    scores["top1_invalid_rate"] = [
        None if missing else float(bool(invalid))
        for missing, invalid in zip(per_item["missing"], per_item["top1_invalid"], strict=True)
    ]
    return scores
