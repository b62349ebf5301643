"""Validating oMeBench files: every problem, with its reaction id, line and field.

Checks (``kind`` of each :class:`Problem`):

``malformed``            a line / array element that is not a JSON object
``missing_field``        reaction_id, reactants_smiles, products_smiles, mechanism, or a
                         step's type / subtype / intermediate_smiles absent or mistyped
``duplicate_id``         a reaction_id seen before
``unknown_level``        level not easy / medium / hard (a warning)
``invalid_smiles``       a SMILES RDKit cannot parse (with RDKit's reason)
``unknown_type``         a type outside the taxonomy
``unknown_subtype``      a subtype outside the taxonomy
``type_mismatch``        a known subtype filed under another type
``step_numbering``       steps not numbered 1, 2, ..., n in order (gaps, repeats, start)
``step_count``           mechanism_step_nums differs from the number of steps (a warning)
``weight_invalid``       a step_weight that is not a non-negative number
``weights_partial``      some steps have a weight and others not
``weights_sum``          the weights of a reaction do not sum to 1 (tolerance 1e-6)

R-group placeholders ``[*:i]`` of templates are valid SMILES (dummy atoms) and pass.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chemassay.chem.molecules import InvalidSmiles, parse_smiles
from chemassay.suites.mechanism.records import LEVELS, read_records
from chemassay.suites.mechanism.taxonomy import SUBTYPE_TO_TYPE, TYPES

WEIGHT_TOLERANCE = 1e-6
WARNING_KINDS = frozenset({"unknown_level", "step_count"})


@dataclass(frozen=True)
class Problem:
    """One validation finding."""

    line: int | None
    reaction_id: str | None
    field: str
    kind: str
    message: str

    @property
    def severity(self) -> str:
        return "warning" if self.kind in WARNING_KINDS else "error"

    def as_dict(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "reaction_id": self.reaction_id,
            "field": self.field,
            "kind": self.kind,
            "severity": self.severity,
            "message": self.message,
        }


def _smiles_problem(smiles: Any, field_name: str, line: int, rid: str | None) -> Problem | None:
    if not isinstance(smiles, str):
        return Problem(line, rid, field_name, "missing_field", f"expected a SMILES string, got {type(smiles).__name__}")
    try:
        parse_smiles(smiles)
    except InvalidSmiles as exc:
        return Problem(line, rid, field_name, "invalid_smiles", f"{smiles!r}: {exc.reason}")
    return None


def validate_record(data: Mapping[str, Any], line: int) -> list[Problem]:
    """All problems of one reaction record (the duplicate-id check needs the whole file)."""
    problems: list[Problem] = []
    raw_id = data.get("reaction_id")
    rid = str(raw_id) if isinstance(raw_id, (str, int)) and not isinstance(raw_id, bool) else None

    def add(field_name: str, kind: str, message: str) -> None:
        problems.append(Problem(line, rid, field_name, kind, message))

    if rid is None or rid == "":
        add("reaction_id", "missing_field", "missing or not a string")
    level = data.get("level")
    if level not in LEVELS:
        add("level", "unknown_level", f"{level!r} is not one of {', '.join(LEVELS)}")
    for key in ("reactants_smiles", "products_smiles"):
        value = data.get(key)
        if not isinstance(value, list) or not value:
            add(key, "missing_field", "expected a non-empty list of SMILES")
            continue
        for index, smiles in enumerate(value):
            found = _smiles_problem(smiles, f"{key}[{index}]", line, rid)
            if found:
                problems.append(found)
    mechanism = data.get("mechanism")
    if not isinstance(mechanism, list) or not mechanism:
        add("mechanism", "missing_field", "expected a non-empty list of steps")
        return problems
    declared = data.get("mechanism_step_nums")
    if declared is not None and declared != len(mechanism):
        add("mechanism_step_nums", "step_count", f"says {declared!r} but the mechanism has {len(mechanism)} steps")

    numbers: list[Any] = []
    weights: list[Any] = []
    for position, step in enumerate(mechanism, start=1):
        where = f"mechanism[{position}]"
        if not isinstance(step, Mapping):
            add(where, "missing_field", "step is not an object")
            numbers.append(None)
            weights.append(None)
            continue
        numbers.append(step.get("step"))
        kind = step.get("type")
        subtype = step.get("subtype")
        if not isinstance(kind, str):
            add(f"{where}.type", "missing_field", "missing or not a string")
        elif kind not in TYPES:
            add(f"{where}.type", "unknown_type", f"{kind!r} is not a type of the taxonomy")
        if not isinstance(subtype, str):
            add(f"{where}.subtype", "missing_field", "missing or not a string")
        elif subtype not in SUBTYPE_TO_TYPE:
            add(f"{where}.subtype", "unknown_subtype", f"{subtype!r} is not a subtype of the taxonomy")
        elif isinstance(kind, str) and kind in TYPES and SUBTYPE_TO_TYPE[subtype] != kind:
            add(
                f"{where}.subtype",
                "type_mismatch",
                f"{subtype!r} belongs to type {SUBTYPE_TO_TYPE[subtype]!r}, not {kind!r}",
            )
        smiles_key = "intermediate_smiles" if "intermediate_smiles" in step else "intermediate"
        found = _smiles_problem(step.get(smiles_key), f"{where}.intermediate_smiles", line, rid)
        if found:
            problems.append(found)
        weight = step.get("step_weight")
        weights.append(weight)
        if weight is not None and (
            isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight) or weight < 0
        ):
            add(f"{where}.step_weight", "weight_invalid", f"{weight!r} is not a non-negative number")

    expected = list(range(1, len(mechanism) + 1))
    if numbers != expected:
        detail = _numbering_detail(numbers)
        add("mechanism[].step", "step_numbering", detail)

    present = [w for w in weights if w is not None]
    if present and len(present) < len(weights):
        add("mechanism[].step_weight", "weights_partial", f"{len(present)} of {len(weights)} steps have a weight")
    elif present and all(isinstance(w, (int, float)) and not isinstance(w, bool) for w in present):
        total = math.fsum(present)
        if abs(total - 1.0) > WEIGHT_TOLERANCE:
            add("mechanism[].step_weight", "weights_sum", f"weights sum to {total:.6g}, not 1")
    return problems


def _numbering_detail(numbers: list[Any]) -> str:
    if any(not isinstance(n, int) or isinstance(n, bool) for n in numbers):
        return f"step numbers must be integers, got {numbers!r}"
    counts = Counter(numbers)
    repeated = sorted(n for n, c in counts.items() if c > 1)
    gaps = sorted(set(range(1, max(numbers) + 1)) - set(numbers)) if numbers else []
    parts = []
    if numbers and numbers[0] != 1:
        parts.append(f"starts at {numbers[0]}")
    if gaps:
        parts.append(f"missing {gaps}")
    if repeated:
        parts.append(f"repeated {repeated}")
    if not parts:
        parts.append(f"out of order: {numbers}")
    return "steps " + ", ".join(parts)


@dataclass
class ValidationReport:
    """Problems of a file and what was looked at."""

    n_reactions: int
    n_steps: int
    problems: list[Problem]

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]

    def counts(self) -> dict[str, int]:
        return dict(sorted(Counter(p.kind for p in self.problems).items()))


def validate_file(path: str | os.PathLike) -> ValidationReport:
    """Validate every record of an oMeBench JSON / JSONL file."""
    found = read_records(path)
    problems = [Problem(bad.line, None, "(record)", "malformed", bad.reason) for bad in found.malformed]
    seen: dict[str, int] = {}
    n_steps = 0
    for source in found.records:
        problems.extend(validate_record(source.data, source.line))
        mechanism = source.data.get("mechanism")
        n_steps += len(mechanism) if isinstance(mechanism, list) else 0
        rid = source.data.get("reaction_id")
        if isinstance(rid, (str, int)) and not isinstance(rid, bool):
            key = str(rid)
            if key in seen:
                problems.append(
                    Problem(source.line, key, "reaction_id", "duplicate_id", f"already used at line {seen[key]}")
                )
            else:
                seen[key] = source.line
    problems.sort(key=lambda p: (p.line or 0,))
    return ValidationReport(len(found.records), n_steps, problems)
