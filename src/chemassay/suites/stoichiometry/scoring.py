"""Scoring predicted bags against true bags, and the ``evaluate`` result built from the scores.

:func:`score_lines` scores line-aligned lists of bag lines; :func:`score_files` reads them from
files first (through :mod:`chemassay.data.readers`: binary, non-UTF-8 and truncated gzip files
are one-line errors). Input with nothing to score is a :class:`UserInputError` naming the input
and the fix: two empty inputs, a target input of which no line is a bag (every line skipped, e.g.
JSON lines or a CSV table), or a prediction input that is JSON lines or a CSV table.
:func:`evaluation_result` turns a :class:`ScoreReport` into the :class:`Result` that
``chemassay.stoichiometry.evaluate`` returns and ``chemassay stoichiometry evaluate`` writes.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chemassay.contract import Run
from chemassay.contract.errors import UserInputError
from chemassay.contract.result import (
    DatasetRef,
    InputRef,
    ModelRef,
    Result,
    SkippedItem,
    make_result,
)
from chemassay.data.readers import iter_lines
from chemassay.report.intervals import attach_intervals
from chemassay.suites.stoichiometry.details import EvaluateDetails
from chemassay.suites.stoichiometry.metrics import (
    BagError,
    BagReader,
    ParsedBag,
    SampleScore,
    aggregate,
    item_scores,
    score_sample,
    score_sample_reference,
)
from chemassay.suites.stoichiometry.variants import MANIFEST, SPLIT_PLAN

COMPAT_MODES = ("chemassay", "reference")
# A comma never occurs in a SMILES or formula bag, and ``{`` is always followed by a digit:
# lines like these are JSON or a CSV table, not bags.
_TABULAR = re.compile(r'^\s*\[?\s*\{\s*["\']|,')


@dataclass
class ScoreReport:
    """Everything scoring computed: metrics, per-sample scores, skipped targets, counts."""

    metrics: dict[str, float | None]
    samples: list[SampleScore]
    skipped: list[dict] = field(default_factory=list)
    breakdown: dict = field(default_factory=dict)


def _read(path: Path, what: str) -> list[str]:
    if not path.is_file():
        raise UserInputError(f"{path}: no such {what} file")
    return [line for _, line in iter_lines(path)]


def encoding_for(target: Path | None, encoding: str | None) -> str:
    """The bag encoding: given, else the ``manifest.json`` next to the target, else SMILES."""
    if encoding:
        if encoding not in ("smiles", "formula"):
            raise UserInputError(f"--encoding must be 'smiles' or 'formula', got {encoding!r}")
        return encoding
    if target is None:
        return "smiles"
    manifest = Path(target).parent / MANIFEST
    if manifest.is_file():
        try:
            return json.loads(manifest.read_text(encoding="utf-8"))["config"]["encoding"]
        except (ValueError, KeyError, TypeError):
            raise UserInputError(f"{manifest}: unreadable manifest; pass --encoding") from None
    return "smiles"


def looks_tabular(lines: Sequence[str]) -> bool:
    """Whether every non-blank line looks like JSON or a CSV row (never a bag)."""
    filled = [line for line in lines if line.strip()]
    return bool(filled) and all(_TABULAR.search(line) for line in filled)


def _check_scoreable(pred_lines: Sequence[str], tgt_lines: Sequence[str], names: tuple[str, str],
                     check_format: bool) -> None:
    prediction_name, target_name = names
    if not pred_lines and not tgt_lines:
        raise UserInputError(
            f"{prediction_name} and {target_name} hold no lines: nothing to score; give one bag per line "
            "({n}X.{m}Y notation or plain SMILES), predictions line-aligned with targets"
        )
    if len(pred_lines) != len(tgt_lines):
        raise UserInputError(
            f"{prediction_name} has {len(pred_lines)} lines but {target_name} has {len(tgt_lines)}: "
            "prediction and target files must be line-aligned"
        )
    if check_format and looks_tabular(pred_lines):
        raise UserInputError(
            f"{prediction_name}: looks like JSON lines or a CSV table, not one bag per line "
            f"(line 1: {pred_lines[0][:60]!r}); write one predicted bag per line ({{n}}X.{{m}}Y notation "
            f"or plain SMILES), line-aligned with {target_name}"
        )


def score_lines(
    pred_lines: Sequence[str], tgt_lines: Sequence[str], src_lines: Sequence[str] | None = None, *,
    encoding: str = "smiles", compat: str = "chemassay", reader: BagReader | None = None,
    reasons: Mapping[int, str] | None = None, names: tuple[str, str, str] = ("predictions", "targets", "sources"),
    check_format: bool = True, numbers: Sequence[int] | None = None,
) -> ScoreReport:
    """Score line-aligned prediction/target (and optional source) bag lines.

    A target line that does not parse is skipped with its line number and reason (it cannot be
    scored); a prediction line that does not parse scores 0 and counts as invalid (with the
    reason in ``reasons`` for its 0-based index when given: a failed model request); a source
    line that does not parse leaves its sample without balance diagnostics. ``names`` name the
    three inputs in error messages; ``check_format=False`` scores predictions that look like
    JSON or CSV (a live model's answers) instead of refusing them. A ``reader`` of the same encoding may be passed to share
    its species cache across calls. ``numbers`` are the file line numbers of the given lines
    (when they are a selection of a file's lines; default 1, 2, ...).
    """
    if compat not in COMPAT_MODES:
        raise UserInputError(f"--compat must be 'chemassay' or 'reference', got {compat!r}")
    prediction_name, target_name, source_name = names
    _check_scoreable(pred_lines, tgt_lines, (prediction_name, target_name), check_format)
    if src_lines is not None and len(src_lines) != len(tgt_lines):
        raise UserInputError(
            f"{source_name} has {len(src_lines)} lines but {target_name} has {len(tgt_lines)}: files must be line-aligned"
        )
    if reader is None or reader.encoding != encoding:
        reader = BagReader(encoding)
    reasons = reasons or {}
    samples: list[SampleScore] = []
    skipped: list[dict] = []
    invalid_reasons: Counter = Counter()
    source_errors: list[tuple[int, str]] = []
    for index, (pred_line, tgt_line) in enumerate(zip(pred_lines, tgt_lines, strict=True)):
        number = numbers[index] if numbers is not None else index + 1
        try:
            target = reader.parse(tgt_line, "tgt")
        except BagError as exc:
            skipped.append({"line": number, "item": tgt_line[:200], "reason": f"target: {exc}"})
            continue
        source: ParsedBag | None = None
        if src_lines is not None:
            try:
                source = reader.parse(src_lines[index], "src")
            except BagError as exc:
                source_errors.append((number, str(exc)))
        predicted: ParsedBag | None
        reason = ""
        try:
            predicted = reader.parse(pred_line, "pred")
        except BagError as exc:
            predicted, reason = None, reasons.get(index) or str(exc)
            invalid_reasons[reason.split(":")[0]] += 1
        if compat == "reference":
            sample = score_sample_reference(number, pred_line, tgt_line, reader, predicted, target, source, reason)
        else:
            sample = score_sample(number, predicted, target, source, reason)
        sample.texts = (pred_line.strip(), tgt_line.strip(), src_lines[index].strip() if src_lines is not None else None)
        samples.append(sample)
    if not samples:
        first = skipped[0]
        hint = ", not JSON lines or a CSV table" if looks_tabular(tgt_lines) else ""
        raise UserInputError(
            f"{target_name}: none of its {len(tgt_lines)} lines is a readable bag (line {first['line']}: "
            f"{first['reason']}); give one true bag per line ({{n}}X.{{m}}Y notation or plain SMILES){hint}"
        )
    if src_lines is not None and len(source_errors) == len(samples):
        line, message = source_errors[0]
        raise UserInputError(
            f"{source_name}: none of its lines is a readable bag (line {line}: {message}); give one input bag "
            "per line, line-aligned with the targets, or leave the sources out"
        )
    balance = Counter(s.balance for s in samples if s.balance is not None)
    breakdown = {
        "encoding": encoding,
        "compat": compat,
        "invalid_predictions": sum(not s.valid for s in samples),
        "invalid_reasons": dict(invalid_reasons.most_common(20)),
        "balance_checked": sum(balance.values()),
        "balance_classes": dict(sorted(balance.items())),
        "unreadable_sources": len(source_errors),
    }
    return ScoreReport(aggregate(samples), samples, skipped, breakdown)


def score_files(
    predictions: Path, targets: Path, sources: Path | None = None, *, encoding: str | None = None,
    compat: str = "chemassay", reader: BagReader | None = None,
) -> ScoreReport:
    """Score line-aligned prediction/target (and optional source) files (see :func:`score_lines`);
    the encoding defaults to the manifest next to the target file, else SMILES."""
    if compat not in COMPAT_MODES:
        raise UserInputError(f"--compat must be 'chemassay' or 'reference', got {compat!r}")
    encoding = encoding_for(targets, encoding)
    pred_lines = _read(Path(predictions), "prediction")
    tgt_lines = _read(Path(targets), "target")
    src_lines = _read(Path(sources), "source") if sources is not None else None
    return score_lines(pred_lines, tgt_lines, src_lines, encoding=encoding, compat=compat, reader=reader,
                       names=(str(predictions), str(targets), str(sources)))


def evaluation_result(
    report: ScoreReport, *, model: ModelRef | None, inputs: list[InputRef], config: dict, started: float | None = None,
    rows: bool = True, bootstrap: int = 1000, seed: int = 0, dataset: DatasetRef | None = None,
    setting: Mapping[str, str] | None = None, prediction_counts: Mapping[str, Any] | None = None,
    protocol: str | None = None, run: Run | None = None,
) -> Result:
    """The ``evaluate`` result of a score report: metrics, per-item scores with their ids (the
    1-based target line) and seeded bootstrap intervals (``bootstrap`` resamples; 0: none),
    skipped targets, the model (``model``, or the identity, request counts and failed inputs of
    the model's ``run``), the dataset and setting it was measured in, and its
    :class:`~chemassay.suites.stoichiometry.details.EvaluateDetails` (per-sample ``rows`` unless
    ``rows=False``, the ``breakdown`` counts, the model run's ``prediction_counts``)."""
    details = EvaluateDetails(
        breakdown=report.breakdown, rows=[s.row() for s in report.samples] if rows else None,
        prediction_counts=dict(prediction_counts) if prediction_counts is not None else None, protocol=protocol,
    )
    result = make_result(
        "stoichiometry", "evaluate", metrics=report.metrics, n=len(report.samples), model=model, run=run, inputs=inputs,
        started=started, details=details, item_ids=[str(s.line) for s in report.samples],
        item_scores=item_scores(report.samples), skipped=[SkippedItem(**item) for item in report.skipped],
        dataset=dataset, setting=dict(setting or {}),
        config={"encoding": report.breakdown["encoding"], "compat": report.breakdown["compat"], **config},
    )
    return attach_intervals(result, resamples=bootstrap, seed=seed)


def built_setting(target: Path | None) -> tuple[DatasetRef | None, dict[str, str]]:
    """The dataset and setting of a target file that sits in a folder written by ``build``,
    ``build-all``, ``build-uspto-t`` or ``build-table2``, read from the folder's manifest.

    The setting is in the vocabulary of ChemAlgebra's published tables: ``variant`` (a
    ChemAlgebra variant such as ``formula_t1_x1``, or ``uspto``, ``uspto-bal``, ``uspto-t1``,
    ``uspto-t2`` for Table 2's test sets) and ``split`` (``test_in``, ``test_cross``,
    ``test_out``; ``test`` for Table 2's), the split read from the file name ``tgt-<split>.txt``.
    The dataset is the registered dataset the folder was built from (``uspto-15k``), with the
    sha256 of the source file the split was drawn from. A target outside a built folder (or
    in memory) states neither: ``(None, {})``.
    """
    if target is None:
        return None, {}
    manifest_path = Path(target).parent / MANIFEST
    if not manifest_path.is_file():
        return None, {}
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        raise UserInputError(f"{manifest_path}: unreadable manifest (not valid JSON); rebuild the folder") from None
    if not isinstance(manifest, dict):
        return None, {}
    kind = manifest.get("kind")
    variant = manifest.get("variant") if kind == "chemalgebra" else kind
    setting: dict[str, str] = {}
    if isinstance(variant, str) and variant:
        setting["variant"] = variant
    name = Path(target).name
    split = None
    if name.startswith("tgt-") and name.endswith(".txt"):
        split = name[len("tgt-"):-len(".txt")]
        setting["split"] = split
    source = manifest.get("source") if isinstance(manifest.get("source"), dict) else {}
    dataset_name = source.get("dataset")
    if not isinstance(dataset_name, str) or not dataset_name:
        return None, setting
    drawn_from = SPLIT_PLAN[split][0] if kind == "chemalgebra" and split in SPLIT_PLAN else split
    digest = next((f.get("sha256") for f in source.get("files", []) if isinstance(f, dict)
                   and f.get("split") == drawn_from), None)
    return DatasetRef(name=dataset_name, sha256=digest), setting
