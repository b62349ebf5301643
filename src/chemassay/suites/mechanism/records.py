"""Reading oMeBench files: a JSON array of reactions (oMe_Gold.json, oMe_Template.json) or
JSON Lines (one reaction per line, as oMe_Silver.jsonl and ``chemassay mechanism expand``).

Every record keeps the line it starts on, so problems can be reported where they are.
A line that is not a JSON object is returned as :class:`Malformed` (never dropped), and a
file that is neither format is a :class:`~chemassay.contract.errors.UserInputError`.

:class:`Reaction` and :class:`Step` are the typed view the scorer and baselines use;
:func:`to_reaction` builds one from a raw record, raising :class:`RecordError` with the
field at fault when the record cannot be used.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chemassay.contract.errors import UserInputError
from chemassay.data.readers import open_text

LEVELS = ("easy", "medium", "hard")
TOO_DEEP = "JSON nested too deeply to read (more levels than Python's recursion limit)"


@dataclass(frozen=True)
class SourceRecord:
    """One reaction object as read: 1-based line where it starts, position, raw data."""

    line: int
    index: int
    data: dict[str, Any]


@dataclass(frozen=True)
class Malformed:
    """A line (or array element) that is not a JSON object, with the reason."""

    line: int
    reason: str


@dataclass
class RecordFile:
    """What :func:`read_records` found in a file."""

    path: Path
    format: str
    records: list[SourceRecord] = field(default_factory=list)
    malformed: list[Malformed] = field(default_factory=list)


def _array_with_lines(text: str, path: Path) -> RecordFile:
    """Decode a JSON array element by element to know the line each element starts on."""
    decoder = json.JSONDecoder()
    out = RecordFile(path, "json")
    position = text.index("[") + 1
    line = text.count("\n", 0, position) + 1
    index = 0
    length = len(text)
    while True:
        start = position
        while position < length and text[position] in " \t\r\n,":
            position += 1
        line += text.count("\n", start, position)
        if position >= length:
            raise UserInputError(f"{path}: the JSON array is not closed (truncated file?)")
        if text[position] == "]":
            return out
        try:
            value, end = decoder.raw_decode(text, position)
        except json.JSONDecodeError as exc:
            raise UserInputError(f"{path}: invalid JSON at line {exc.lineno}: {exc.msg}") from None
        except RecursionError:
            raise UserInputError(f"{path}: array element {index} (line {line}) is {TOO_DEEP}") from None
        if isinstance(value, dict):
            out.records.append(SourceRecord(line, index, value))
        else:
            out.malformed.append(Malformed(line, f"array element {index} is a {type(value).__name__}, not an object"))
        index += 1
        line += text.count("\n", position, end)
        position = end


def read_records(path: str | os.PathLike) -> RecordFile:
    """Read an oMeBench JSON array or JSONL file into :class:`SourceRecord` objects.

    The format is sniffed from the content, not the suffix: a file starting with ``[`` is a
    JSON array; anything else is read line by line as JSON Lines (a single JSON object
    spread over several lines is also accepted). Blank lines are ignored. Files are read
    with :func:`chemassay.data.readers.open_text`: gzip is decompressed, and a binary,
    non-UTF-8 or truncated gzip file is a one-line :class:`UserInputError` naming it.
    """
    target = Path(path)
    with open_text(target) as handle:
        text = handle.read()
    stripped = text.lstrip("\ufeff \t\r\n")
    if not stripped:
        raise UserInputError(f"{target}: the file is empty; expected oMeBench JSON or JSON Lines")
    if stripped.startswith("["):
        return _array_with_lines(text, target)
    out = RecordFile(target, "jsonl")
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            out.malformed.append(Malformed(number, f"not valid JSON ({exc.msg} at column {exc.colno})"))
            continue
        except RecursionError:
            out.malformed.append(Malformed(number, TOO_DEEP))
            continue
        if isinstance(value, dict):
            out.records.append(SourceRecord(number, len(out.records), value))
        else:
            out.malformed.append(Malformed(number, f"a JSON {type(value).__name__}, not an object"))
    if not out.records and out.malformed:
        try:
            whole = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            whole = None
        if isinstance(whole, dict):
            return RecordFile(target, "json", [SourceRecord(1, 0, whole)], [])
        first = out.malformed[0]
        raise UserInputError(
            f"{target}: not oMeBench JSON or JSON Lines (line {first.line}: {first.reason}); "
            "expected a JSON array of reactions or one JSON object per line"
        )
    return out


@dataclass(frozen=True)
class Step:
    """One mechanism step: label, intermediate and (optional) weight."""

    step: int | None
    type: str | None
    subtype: str | None
    intermediate_smiles: str
    step_weight: float | None = None
    rationale: str | None = None


@dataclass(frozen=True)
class Reaction:
    """An oMeBench reaction with its gold mechanism."""

    reaction_id: str
    level: str | None
    name: str | None
    reactants: tuple[str, ...]
    products: tuple[str, ...]
    conditions: str
    steps: tuple[Step, ...]
    description: str | None = None
    line: int | None = None

    @property
    def reaction_smiles(self) -> str:
        """``reactants>>products`` (molecules joined with ``.``), as DRFP wants it."""
        return ".".join(self.reactants) + ">>" + ".".join(self.products)

    def to_record(self, *, weights: bool = True) -> dict[str, Any]:
        """The oMeBench JSON object of this reaction (steps keep their optional fields)."""
        steps = []
        for step in self.steps:
            item: dict[str, Any] = {
                "step": step.step,
                "type": step.type,
                "subtype": step.subtype,
                "intermediate_smiles": step.intermediate_smiles,
            }
            if weights and step.step_weight is not None:
                item["step_weight"] = step.step_weight
            if step.rationale is not None:
                item["rationale"] = step.rationale
            steps.append(item)
        record: dict[str, Any] = {
            "reaction_id": self.reaction_id,
            "level": self.level,
            "name": self.name,
            "reactants_smiles": list(self.reactants),
            "products_smiles": list(self.products),
            "conditions": self.conditions,
            "mechanism_step_nums": len(self.steps),
            "mechanism": steps,
        }
        if self.description is not None:
            record["description"] = self.description
        return record


class RecordError(ValueError):
    """A record that cannot be turned into a :class:`Reaction`: ``field`` says where."""

    def __init__(self, field_name: str, message: str) -> None:
        self.field = field_name
        super().__init__(f"{field_name}: {message}")


def _smiles_list(value: Any, field_name: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise RecordError(field_name, "expected a list of SMILES strings")
    return tuple(value)


def _weight(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RecordError(where, f"step_weight must be a number, got {value!r}")
    return float(value)


def to_reaction(record: Mapping[str, Any], line: int | None = None) -> Reaction:
    """Build a :class:`Reaction` from an oMeBench record; :class:`RecordError` if unusable.

    Only what scoring needs is required: ``reaction_id``, and a ``mechanism`` list whose
    steps are objects with a string ``intermediate_smiles``. Labels may be missing (the
    validator reports them); an ``intermediate`` key is accepted for
    ``intermediate_smiles``, as in the oMeBench README's example.
    """
    reaction_id = record.get("reaction_id")
    if not isinstance(reaction_id, (str, int)) or isinstance(reaction_id, bool) or str(reaction_id) == "":
        raise RecordError("reaction_id", "missing or not a string")
    mechanism = record.get("mechanism")
    if not isinstance(mechanism, list):
        raise RecordError("mechanism", "missing or not a list of steps")
    steps = []
    for position, raw in enumerate(mechanism, start=1):
        where = f"mechanism[{position}]"
        if not isinstance(raw, Mapping):
            raise RecordError(where, "step is not an object")
        smiles = raw.get("intermediate_smiles", raw.get("intermediate"))
        if not isinstance(smiles, str):
            raise RecordError(f"{where}.intermediate_smiles", "missing or not a string")
        number = raw.get("step")
        steps.append(
            Step(
                step=number if isinstance(number, int) and not isinstance(number, bool) else None,
                type=raw.get("type") if isinstance(raw.get("type"), str) else None,
                subtype=raw.get("subtype") if isinstance(raw.get("subtype"), str) else None,
                intermediate_smiles=smiles,
                step_weight=_weight(raw.get("step_weight"), f"{where}.step_weight"),
                rationale=raw.get("rationale") if isinstance(raw.get("rationale"), str) else None,
            )
        )
    level = record.get("level")
    return Reaction(
        reaction_id=str(reaction_id),
        level=level if isinstance(level, str) else None,
        name=record.get("name") if isinstance(record.get("name"), str) else None,
        reactants=_smiles_list(record.get("reactants_smiles", []), "reactants_smiles"),
        products=_smiles_list(record.get("products_smiles", []), "products_smiles"),
        conditions=str(record.get("conditions") or ""),
        steps=tuple(steps),
        description=record.get("description") if isinstance(record.get("description"), str) else None,
        line=line,
    )


@dataclass
class ReactionSet:
    """Reactions loaded from a file, plus the records that could not be used (with why)."""

    path: Path
    reactions: list[Reaction]
    rejected: list[dict[str, Any]]

    def by_id(self) -> dict[str, Reaction]:
        return {reaction.reaction_id: reaction for reaction in self.reactions}


def load_reactions(path: str | os.PathLike) -> ReactionSet:
    """Load every usable reaction of an oMeBench file; unusable records go to ``rejected``.

    Duplicate ``reaction_id`` values keep the first occurrence and reject the others.
    Raises :class:`UserInputError` when no record at all is usable.
    """
    found = read_records(path)
    reactions: list[Reaction] = []
    rejected: list[dict[str, Any]] = [
        {"line": bad.line, "item": None, "reason": bad.reason} for bad in found.malformed
    ]
    seen: set[str] = set()
    for source in found.records:
        try:
            reaction = to_reaction(source.data, source.line)
        except RecordError as exc:
            rid = source.data.get("reaction_id")
            rejected.append({"line": source.line, "item": None if rid is None else str(rid), "reason": str(exc)})
            continue
        if reaction.reaction_id in seen:
            rejected.append({"line": source.line, "item": reaction.reaction_id, "reason": "duplicate reaction_id"})
            continue
        seen.add(reaction.reaction_id)
        reactions.append(reaction)
    if not reactions:
        detail = f" (first problem: line {rejected[0]['line']}: {rejected[0]['reason']})" if rejected else ""
        raise UserInputError(f"{found.path}: no usable oMeBench reaction{detail}")
    return ReactionSet(found.path, reactions, rejected)
