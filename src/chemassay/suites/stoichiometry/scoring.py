"""Scoring prediction files against target files (``chemassay stoichiometry score``)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from chemassay.data.readers import iter_lines
from chemassay.errors import UserInputError
from chemassay.suites.stoichiometry.metrics import (
    BagError,
    BagReader,
    ParsedBag,
    SampleScore,
    aggregate,
    score_sample,
    score_sample_reference,
)
from chemassay.suites.stoichiometry.variants import MANIFEST


@dataclass
class ScoreReport:
    """Everything ``score`` computed: metrics, per-sample scores, skipped targets, counts."""

    metrics: dict[str, float | None]
    samples: list[SampleScore]
    skipped: list[dict] = field(default_factory=list)
    breakdown: dict = field(default_factory=dict)


def _read(path: Path, what: str) -> list[str]:
    if not path.is_file():
        raise UserInputError(f"{path}: no such {what} file")
    return [line for _, line in iter_lines(path)]


def encoding_for(target: Path, encoding: str | None) -> str:
    """The bag encoding: given, else the ``manifest.json`` next to the target, else SMILES."""
    if encoding:
        if encoding not in ("smiles", "formula"):
            raise UserInputError(f"--encoding must be 'smiles' or 'formula', got {encoding!r}")
        return encoding
    manifest = target.parent / MANIFEST
    if manifest.is_file():
        try:
            return json.loads(manifest.read_text(encoding="utf-8"))["config"]["encoding"]
        except (ValueError, KeyError, TypeError):
            raise UserInputError(f"{manifest}: unreadable manifest; pass --encoding") from None
    return "smiles"


def score_files(
    predictions: Path, targets: Path, sources: Path | None = None, *, encoding: str | None = None,
    compat: str = "chemassay", reader: BagReader | None = None,
) -> ScoreReport:
    """Score line-aligned prediction/target (and optional source) files.

    Lines that differ in number are an error naming both files. A target line that does not
    parse is skipped with its line number and reason (it cannot be scored); a prediction line
    that does not parse scores 0 and counts as invalid; a source line that does not parse
    leaves its sample without balance diagnostics. A ``reader`` of the same encoding may be
    passed to share its species cache across calls.
    """
    if compat not in ("chemassay", "reference"):
        raise UserInputError(f"--compat must be 'chemassay' or 'reference', got {compat!r}")
    encoding = encoding_for(targets, encoding)
    pred_lines = _read(predictions, "prediction")
    tgt_lines = _read(targets, "target")
    src_lines = _read(sources, "source") if sources is not None else None
    if len(pred_lines) != len(tgt_lines):
        raise UserInputError(
            f"{predictions} has {len(pred_lines)} lines but {targets} has {len(tgt_lines)}: "
            "prediction and target files must be line-aligned"
        )
    if src_lines is not None and len(src_lines) != len(tgt_lines):
        raise UserInputError(
            f"{sources} has {len(src_lines)} lines but {targets} has {len(tgt_lines)}: files must be line-aligned"
        )
    if reader is None or reader.encoding != encoding:
        reader = BagReader(encoding)
    samples: list[SampleScore] = []
    skipped: list[dict] = []
    invalid_reasons: Counter = Counter()
    source_errors = 0
    for index, (pred_line, tgt_line) in enumerate(zip(pred_lines, tgt_lines, strict=True)):
        number = index + 1
        try:
            target = reader.parse(tgt_line, "tgt")
        except BagError as exc:
            skipped.append({"line": number, "item": tgt_line[:200], "reason": f"target: {exc}"})
            continue
        source: ParsedBag | None = None
        if src_lines is not None:
            try:
                source = reader.parse(src_lines[index], "src")
            except BagError:
                source_errors += 1
        predicted: ParsedBag | None
        reason = ""
        try:
            predicted = reader.parse(pred_line, "pred")
        except BagError as exc:
            predicted, reason = None, str(exc)
            invalid_reasons[reason.split(":")[0]] += 1
        if compat == "reference":
            samples.append(score_sample_reference(number, pred_line, tgt_line, reader, predicted, target, source, reason))
        else:
            samples.append(score_sample(number, predicted, target, source, reason))
    balance = Counter(s.balance for s in samples if s.balance is not None)
    breakdown = {
        "encoding": encoding,
        "compat": compat,
        "invalid_predictions": sum(not s.valid for s in samples),
        "invalid_reasons": dict(invalid_reasons.most_common(20)),
        "balance_checked": sum(balance.values()),
        "balance_classes": dict(sorted(balance.items())),
        "unreadable_sources": source_errors,
    }
    return ScoreReport(aggregate(samples), samples, skipped, breakdown)
