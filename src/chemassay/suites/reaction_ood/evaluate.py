"""Top-k accuracy of reaction predictions, with breakdowns by year and reaction class.

A prediction is correct when its *product set* equals the recorded one: the prediction text
is canonicalized by RDKit as a whole, split on ``.``, each molecule canonicalized again and
counted, and the multiset compared with the truth's (the order-invariant accuracy of the
reference code, ``rxn_lm.eval_utils.clean_pred_func(put_in_frozen_set=True)``). Top-k
accuracy is the fraction of test reactions whose first correct prediction has rank <= k
(``mean(cumsum(correct) > 0)`` over ranks, as in the reference). Predictions that RDKit
cannot read are wrong; reactions without predictions are wrong and counted.

The stereo-agnostic variant removes all stereochemistry (tetrahedral and double-bond) from
both sides before comparing; isotopes and charges are kept. The ``subset`` match mode counts
a prediction as correct when every predicted molecule is among the recorded products, for
models that predict only the major product of reactions recorded with by-products.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import pandas as pd
from rdkit import Chem

from chemassay.chem.molecules import rdkit_log_silenced
from chemassay.errors import UserInputError
from chemassay.runtime.parallel import Failure, parallel_map

ProductSet = frozenset[tuple[str, int]]
MATCH_MODES = ("exact", "subset")
ID_CANDIDATES = ("id", "reaction_id", "source_row")
TRUTH_COLUMNS = ("products", "product", "rxn_smiles", "reaction", "rxn")


@lru_cache(maxsize=1_000_000)
def _canonical_fragment(smiles: str, stereo: bool) -> str | None:
    with rdkit_log_silenced():
        mol = Chem.MolFromSmiles(smiles)
    if mol is None:
        return None
    for atom in mol.GetAtoms():
        atom.SetAtomMapNum(0)
    if not stereo:
        Chem.RemoveStereochemistry(mol)
    return Chem.MolToSmiles(mol)


@lru_cache(maxsize=1_000_000)
def product_set(smiles: str, stereo: bool = True) -> ProductSet | None:
    """The canonical product multiset of a (possibly multi-molecule) SMILES, or ``None``.

    ``None`` means RDKit cannot read the text (or it is empty). With ``stereo=False`` all
    stereochemistry is removed first. Atom maps never matter.
    """
    if not isinstance(smiles, str):
        return None
    text = smiles.strip()
    if not text or any(ch.isspace() for ch in text):
        return None
    whole = _canonical_fragment(text, stereo)
    if whole is None:
        return None
    pieces = []
    for piece in whole.split("."):
        canonical = _canonical_fragment(piece, stereo)
        if canonical is None:  # a canonical fragment RDKit cannot read back: keep it as written
            canonical = piece
        pieces.append(canonical)
    return frozenset(Counter(pieces).items())


def is_match(predicted: ProductSet | None, truth: ProductSet | None, match: str = "exact") -> bool:
    """Whether a predicted product set counts as correct for ``truth`` under ``match``."""
    if predicted is None or truth is None:
        return False
    if match == "exact":
        return predicted == truth
    if match == "subset":
        truth_counts = dict(truth)
        return bool(predicted) and all(truth_counts.get(s, 0) >= c for s, c in predicted)
    raise UserInputError(f"unknown match mode {match!r}; use one of {', '.join(MATCH_MODES)}")


@dataclass(frozen=True)
class ItemScore:
    """How one test reaction was scored: 1-based rank of the first correct prediction."""

    rank: int | None
    rank_stereo_agnostic: int | None
    n_predictions: int
    n_invalid: int
    top1_invalid: bool


def score_item(truth: str, predictions: Sequence[str], match: str = "exact") -> ItemScore:
    """Score one test reaction's ranked ``predictions`` against its recorded products ``truth``.

    Raises ``ValueError`` when ``truth`` itself cannot be read (the caller reports it).
    """
    truth_set = product_set(truth, True)
    truth_flat = product_set(truth, False)
    if truth_set is None or truth_flat is None:
        raise ValueError(f"recorded products {str(truth)[:80]!r} cannot be read by RDKit")
    rank = rank_flat = None
    invalid = 0
    top1_invalid = False
    for position, prediction in enumerate(predictions, start=1):
        predicted = product_set(prediction, True)
        if predicted is None:
            invalid += 1
            top1_invalid = top1_invalid or position == 1
            continue
        if rank is None and is_match(predicted, truth_set, match):
            rank = position
        if rank_flat is None and is_match(product_set(prediction, False), truth_flat, match):
            rank_flat = position
    return ItemScore(rank, rank_flat, len(predictions), invalid, top1_invalid)


def _score_chunk(args: tuple[list[str], list[list[str]], str]) -> list[ItemScore | str]:
    truths, predictions, match = args
    out: list[ItemScore | str] = []
    for truth, preds in zip(truths, predictions, strict=True):
        try:
            out.append(score_item(truth, preds, match))
        except ValueError as exc:
            out.append(str(exc))
    return out


def score_all(
    truths: Sequence[str], predictions: Sequence[Sequence[str]], *, match: str = "exact", n_jobs: int = 1,
    chunk: int = 2000,
) -> list[ItemScore | str]:
    """Score every test reaction; an unreadable truth gives its reason (a string) instead."""
    if match not in MATCH_MODES:
        raise UserInputError(f"unknown match mode {match!r}; use one of {', '.join(MATCH_MODES)}")
    tasks = [
        (list(truths[i:i + chunk]), [list(p) for p in predictions[i:i + chunk]], match)
        for i in range(0, len(truths), chunk)
    ]
    results = parallel_map(_score_chunk, tasks, n_jobs=n_jobs, chunk_size=1, description="scoring")
    flat: list[ItemScore | str] = []
    for part in results:
        if isinstance(part, Failure):
            raise RuntimeError(f"scoring failed: {part}")
        flat.extend(part)
    return flat


def topk_accuracy(ranks: Sequence[int | None], k_values: Sequence[int]) -> dict[int, float]:
    """Fraction of items whose first correct rank is <= k, for each k (NaN for no items)."""
    values = np.array([r if r is not None else np.iinfo(np.int64).max for r in ranks], dtype=np.int64)
    if values.size == 0:
        return {k: math.nan for k in k_values}
    return {k: float(np.mean(values <= k)) for k in k_values}


# ------------------------------------------------------------------------------------------
# Prediction files


@dataclass
class Predictions:
    """Ranked predictions per test item; ``ids`` is ``None`` when aligned by row order."""

    ranked: list[list[str]]
    ids: list[str] | None = None
    layout: str = "wide"
    problems: list[dict] = field(default_factory=list)


def _rank_columns(columns: Sequence[str]) -> list[str]:
    import re

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
) -> Predictions:
    """Ranked predictions from a prediction table in one of three layouts.

    * ``long``: one row per prediction with ``rank`` and ``prediction`` (or ``smiles`` /
      ``product``) columns, plus an id column; ranks need not be contiguous.
    * ``wide``: one row per test item with ``pred_1 ... pred_k`` (also ``prediction_1``,
      ``top1``...) columns, or one ``predictions`` column holding a JSON list or
      whitespace-separated SMILES.
    * ``n-best``: a single ``prediction`` column (e.g. a plain text file, one SMILES per line
      as written by OpenNMT) where each test item has ``n_best`` consecutive lines.
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
            problems.append({"line": int(line) + 2, "reason": f"rank {frame['rank'].iloc[line]!r} is not a number"})
        if bad.any():
            problems.append({"line": None, "reason": f"{int(bad.sum())} rows with a non-numeric rank ignored"})
        work = pd.DataFrame({"id": frame[key].astype(str), "rank": ranks, "prediction": frame[text_column]})
        work = work[~bad].sort_values(["id", "rank"], kind="stable")
        grouped = work.groupby("id", sort=False)["prediction"].apply(lambda s: [str(v) for v in s])
        return Predictions(list(grouped.values), list(grouped.index), "long", problems)
    rank_columns = _rank_columns(columns)
    if rank_columns or "predictions" in columns:
        key = id_column or next((c for c in ID_CANDIDATES if c in columns), None)
        ranked: list[list[str]] = []
        problems = []
        for row_number, values in enumerate(frame.rename(columns=str).to_dict("records"), start=2):
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
        ids = frame[key].astype(str).tolist() if key else None
        return Predictions(ranked, ids, "wide", problems)
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


def align_predictions(
    test: pd.DataFrame, predictions: Predictions, *, source: str, id_column: str | None = None
) -> tuple[list[list[str] | None], list[str], list[str]]:
    """Predictions for each test row (``None`` when missing), test ids, unmatched prediction ids."""
    test_columns = [str(c) for c in test.columns]
    if predictions.ids is None:
        if len(predictions.ranked) != len(test):
            raise UserInputError(
                f"{source}: {len(predictions.ranked)} predicted items but {len(test)} test reactions; "
                "add an id column to both files (or keep the same order and count)"
            )
        ids = [str(i) for i in range(len(test))]
        return list(predictions.ranked), ids, []
    key = id_column or next((c for c in ID_CANDIDATES if c in test_columns), None)
    if key is None or key not in test_columns:
        raise UserInputError(
            f"{source}: predictions carry ids but the test file has no id column "
            f"({', '.join(ID_CANDIDATES)}); pass --id-column"
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
        rows.append(entry)
    return sorted(rows, key=lambda entry: _natural_key(entry["group"]))


def _natural_key(value) -> tuple:
    """Sort class codes numerically part by part (``2`` before ``10``, ``1.2`` before ``1.10``)."""
    parts = str(value).split(".")
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts)


def default_k_values(max_k: int) -> list[int]:
    """The k reported: 1, 2, 3, 5, 10 ... up to ``max_k`` (and ``max_k`` itself)."""
    chosen = [k for k in (1, 2, 3, 5, 10, 20, 50) if k <= max_k]
    if max_k not in chosen:
        chosen.append(max_k)
    return chosen


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
) -> Evaluation:
    """Score ``predictions`` against the test table; see the module docstring for the rules.

    ``max_k`` truncates each item's list (default: the longest list given, at least 1).
    Breakdowns are made by ``year``, by class-code prefix at levels 1 and 2 (when a
    ``class_code`` column exists) and by every column in ``group_by``.
    """
    aligned, test_ids, unmatched = align_predictions(test, predictions, source=source, id_column=id_column)
    longest = max((len(p) for p in aligned if p), default=1)
    max_k = max_k or max(1, longest)
    truths = truth_products(test, source).tolist()
    lists = [(p or [])[:max_k] for p in aligned]
    scores = score_all(truths, lists, match=match, n_jobs=n_jobs)
    k_values = default_k_values(max_k)

    skipped = []
    records = []
    for row, (item_id, truth, preds, score) in enumerate(zip(test_ids, truths, aligned, scores, strict=True)):
        if isinstance(score, str):
            skipped.append({"line": row + 2, "item": item_id, "reason": score})
            continue
        records.append({
            "id": item_id, "row": row, "products": truth,
            "top1_prediction": (preds or [""])[0] if preds else "",
            "n_predictions": score.n_predictions, "missing": not preds,
            "rank": score.rank, "rank_stereo_agnostic": score.rank_stereo_agnostic,
            "n_invalid": score.n_invalid, "top1_invalid": score.top1_invalid,
        })
    per_item = pd.DataFrame.from_records(
        records,
        columns=["id", "row", "products", "top1_prediction", "n_predictions", "missing", "rank",
                 "rank_stereo_agnostic", "n_invalid", "top1_invalid"],
    )
    per_item["rank"] = per_item["rank"].astype("Int64")
    per_item["rank_stereo_agnostic"] = per_item["rank_stereo_agnostic"].astype("Int64")
    test_columns = [str(c) for c in test.columns]
    rows = per_item["row"].to_numpy()
    if "year" in test_columns:
        per_item["year"] = pd.to_numeric(test["year"].iloc[rows], errors="coerce").astype("Int64").to_numpy()
    if "class_code" in test_columns:
        codes = test["class_code"].iloc[rows].tolist()
        per_item["class_code"] = codes
        per_item["class_level1"] = [class_prefix(c, 1) for c in codes]
        per_item["class_level2"] = [class_prefix(c, 2) for c in codes]
    for column in group_by:
        if column not in test_columns:
            raise UserInputError(f"{source}: --group-by column {column!r} is not in the test file")
        per_item[f"group_{column}"] = test[column].iloc[rows].astype(str).to_numpy()

    ranks = [None if pd.isna(r) else int(r) for r in per_item["rank"]]
    flat = [None if pd.isna(r) else int(r) for r in per_item["rank_stereo_agnostic"]]
    metrics: dict[str, float | int] = {}
    for k, acc in topk_accuracy(ranks, k_values).items():
        metrics[f"top{k}_accuracy"] = acc
    for k, acc in topk_accuracy(flat, k_values).items():
        metrics[f"top{k}_accuracy_stereo_agnostic"] = acc
    n = len(per_item)
    given = per_item[~per_item["missing"]]
    metrics["top1_invalid_rate"] = float(given["top1_invalid"].mean()) if len(given) else math.nan
    metrics["invalid_prediction_rate"] = (
        float(given["n_invalid"].sum() / given["n_predictions"].sum()) if given["n_predictions"].sum() else math.nan
    )
    metrics["n_missing_predictions"] = int(per_item["missing"].sum())
    metrics["mean_predictions_per_item"] = float(per_item["n_predictions"].mean()) if n else math.nan

    breakdowns: dict[str, list[dict]] = {}
    for column, name in (("year", "year"), ("class_level1", "class_level1"), ("class_level2", "class_level2")):
        if column in per_item.columns:
            breakdowns[name] = breakdown(per_item, column, k_values)
    for column in group_by:
        breakdowns[column] = breakdown(per_item, f"group_{column}", k_values)
    missing_ids = per_item.loc[per_item["missing"], "id"].tolist()
    return Evaluation(metrics, per_item, breakdowns, skipped, missing_ids, unmatched, predictions.problems, k_values)
