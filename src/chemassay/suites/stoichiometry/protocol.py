"""The stoichiometry suite's protocol: a bag predictor (ChemAlgebra's task).

A bag predictor reads a reactant bag in ChemAlgebra's ``{n}X.{m}Y`` notation (``X``, ``Y``:
SMILES or molecular formulas, ``n``, ``m``: stoichiometric coefficients) and answers the
product bag in the same notation. This module holds everything a model kind needs to answer
it: the Python method, the prompt and answer parser for text models, the predictions-file
layout and the conformance checks.

A text model's answer is read as a chemist reads it (:func:`read_bag_answer`): the bag in
``{n}X`` notation (Markdown unwrapped), else the product side of a balanced equation written
with formulas or SMILES (``2 H2 + O2 -> 2 H2O``), else a bag without coefficients; an answer
with none of them is unreadable. ``extract=strict`` keeps the papers' reading.

>>> BAG_PREDICTOR.parse("Products: {2}O.{1}CCO", {}, {})
'{2}O.{1}CCO'
>>> BAG_PREDICTOR.parse("The balanced products are **{2}O**.", {}, {})
'{2}O'
>>> BAG_PREDICTOR.parse("2 H2 + O2 -> 2 H2O", {}, {"encoding": "formula"})
'{2}H2O'
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from chemassay.chem.answers import (
    AnswerLine,
    answer_field,
    answer_lines,
    candidate_lines,
    clean_word,
    json_answer,
    product_side,
    smiles_words,
)
from chemassay.chem.bags import BagParseError, canonical_species, parse_bag
from chemassay.chem.formula import FormulaError
from chemassay.chem.molecules import InvalidSmiles
from chemassay.contract import (
    Check,
    Protocol,
    Request,
    Unreadable,
    answer_excerpt,
    strict_extraction,
)
from chemassay.data.readers import pick_column, read_records
from chemassay.models.check import str_list_problem

_COEFF = re.compile(r"\{\d+\}")

MICRO_BAGS = ("{1}CC(=O)Cl.{1}NCc1ccccc1", "{2}O=O.{1}C=C", "{1}CCO.{1}CC(=O)O")
"""Three reactant bags in ChemAlgebra notation (an amide formation, an oxidation, an
esterification): the inputs of the conformance checks."""


def bag_prompt(source: str, encoding: str = "smiles") -> str:
    """Ask for the products, with coefficients, of a ChemAlgebra reactant bag."""
    species = "SMILES string" if encoding == "smiles" else "molecular formula"
    return (
        "Complete this chemical reaction so that it is balanced.\n"
        f"Notation: every species is written {{n}}X, where n is its stoichiometric coefficient and X its {species}; "
        "species are joined by '.'.\n"
        f"Reactants: {source}\n"
        "Answer with the products in the same notation, on one line, and nothing else."
    )


def _parse_bag_strict(text: str) -> str:
    lines = candidate_lines(text)
    with_coefficients = [line for line in lines if _COEFF.search(line)]
    if with_coefficients:
        line = with_coefficients[-1]
        start = _COEFF.search(line).start()
        return line[start:].split()[0].rstrip(".,;") if " " in line[start:] else line[start:].rstrip(",;")
    return lines[0].split()[0] if lines else ""


_TERM = re.compile(r"(?:\{(\d+)\}|(\d+)\s*)?(\S+)")
_STATE = re.compile(r"\((?:g|l|s|aq)\)$")
_PLUS = re.compile(r"\s+\+\s+")
_CONNECTORS = {"+", "and", "&"}
_BAG_KEYS = ("products", "product", "product_bag", "bag", "answer", "result", "output", "prediction")
_SPECIES_KEYS = ("species", "smiles", "formula", "molecule", "product", "name")
_COUNT_KEYS = ("coefficient", "coeff", "n", "count", "stoichiometry", "amount")


def _species_problem(species: str, encoding: str) -> str | None:
    """Why ``species`` is not a species of the bag's encoding (``None``: it is)."""
    try:
        canonical_species(species, encoding)  # type: ignore[arg-type]
    except (InvalidSmiles, FormulaError, ValueError):
        return f"{species!r} is not a valid {'SMILES' if encoding == 'smiles' else 'formula'}"
    return None


def equation_bag(side: str, encoding: str = "smiles") -> tuple[str | None, str | None]:
    """One side of an equation (``2 H2O + O2``, coefficients optional, states such as ``(g)``
    dropped) in ``{n}X`` notation, or ``None`` and why not; only the last species may be
    followed by words (``2 H2O (water)``)."""
    terms = _PLUS.split(side.strip())
    pieces = []
    for position, term in enumerate(terms):
        term = term.strip()
        match = _TERM.match(term)
        if not match or (term[match.end():].strip() and position < len(terms) - 1):
            return None, f"{term!r} is not a species with its coefficient"
        coefficient = int(match.group(1) or match.group(2) or "1")
        species = _STATE.sub("", clean_word(match.group(3)))
        problem = "coefficient 0" if coefficient == 0 else _species_problem(species, encoding)
        if problem:
            return None, problem
        pieces.append(f"{{{coefficient}}}{species}")
    return ".".join(pieces), None


def _notation_bag(text: str) -> str | None:
    """The bag in ``{n}X`` notation that starts at the first ``{n}`` of ``text``, species joined
    by ``.`` (or written apart with ``+``, ``and`` or commas)."""
    match = _COEFF.search(text)
    if match is None:
        return None
    words = text[match.start():].split()
    pieces = [words[0]]
    position = 1
    while position < len(words):
        word = words[position]
        if pieces[-1].endswith(",") and _COEFF.match(word):
            pieces.append(word)
            position += 1
        elif word.lower() in _CONNECTORS and position + 1 < len(words) and _COEFF.match(words[position + 1]):
            pieces.append(words[position + 1])
            position += 2
        else:
            break
    return ".".join(piece.rstrip(".,;:!?").strip("'\"") for piece in pieces)


def _plain_bag(word: str, encoding: str) -> str | None:
    """``word`` if it is a bag without coefficients (``CCO.O``, ``H2O``) of the encoding."""
    try:
        parse_bag(word, encoding)  # type: ignore[arg-type]
    except (BagParseError, ValueError):
        return None
    return word


def _json_bag(value, encoding: str) -> str | None:
    """The bag a JSON answer gives: a text (read as an answer), a list of species (``{2}O``,
    ``2 H2O``, ``{"species": ..., "coefficient": ...}``) or an object of species → coefficient."""
    def counts(item) -> bool:
        return isinstance(item, dict) and bool(item) and all(
            isinstance(n, int) and not isinstance(n, bool) for n in item.values())

    if not counts(value):
        value = answer_field(value, _BAG_KEYS)
    if isinstance(value, str):
        return _read_lines(answer_lines(value), encoding)[0]
    if counts(value):
        value = [{"species": species, "coefficient": count} for species, count in value.items()]
    if not isinstance(value, list) or not value:
        return None
    pieces = []
    for item in value:
        if isinstance(item, dict):
            fields = {str(k).lower(): v for k, v in item.items()}
            species = next((fields[k] for k in _SPECIES_KEYS if isinstance(fields.get(k), str)), None)
            count = next((fields[k] for k in _COUNT_KEYS if k in fields), 1)
            if species is None or not isinstance(count, int) or isinstance(count, bool) or count < 1:
                return None
            pieces.append(f"{{{count}}}{species.strip()}")
        elif isinstance(item, str) and _COEFF.match(item.strip()):
            pieces.append(item.strip())
        elif isinstance(item, str):
            bag, _ = equation_bag(item, encoding)
            if bag is None:
                return None
            pieces.append(bag)
        else:
            return None
    return ".".join(pieces)


def _read_lines(lines: list[AnswerLine], encoding: str) -> tuple[str | None, str | None]:
    """The bag of an answer's lines (see :func:`read_bag_answer`), or ``None`` and why not."""
    notation, equation, plain, prose = None, None, None, None
    why = None
    for line in lines:
        side = product_side(line.text)
        text = side if side is not None else line.text
        found = _notation_bag(text)
        if found:
            notation = found
            continue
        if side is not None:
            bag, problem = equation_bag(side, encoding)
            if bag:
                equation = bag
            else:
                why = f"the equation {answer_excerpt(line.text, 60)} does not read as a product bag: {problem}"
            continue
        words = [clean_word(word) for word in line.text.split()]
        if len(words) == 1 or line.marked:
            plain = _plain_bag(words[0], encoding) or plain
        mentioned = next((w for w in smiles_words(words) if _plain_bag(w, encoding)), None)
        prose = mentioned or prose
    bag = notation or equation or plain or prose
    return (bag, None) if bag else (None, why)


def read_bag_answer(text: str, encoding: str = "smiles", *, strict: bool = False) -> str:
    """The product bag of a text model's answer, in ``{n}X`` notation.

    Lenient (the default): a JSON answer's bag (``{"products": "{2}O"}``, a list of species);
    else the last line in ``{n}X`` notation (Markdown unwrapped; after an arrow, the product
    side); else the product side of the last balanced equation (``2 H2 + O2 -> 2 H2O``, with
    ``->``, ``→``, ``⟶``, ``=>`` or `` = ``), each species with its coefficient and valid in
    the bag's ``encoding``; else the last line that is a bag without coefficients; else the
    last bag mentioned in prose. Raises :class:`~chemassay.contract.Unreadable` saying why
    when there is none. Strict: the last line with ``{n}`` coefficients, else the first word
    of the first line (never unreadable).
    """
    if strict:
        return _parse_bag_strict(text)
    value = json_answer(text)
    if value is not None:
        bag = _json_bag(value, encoding)
        if bag:
            return bag
    bag, why = _read_lines(answer_lines(text), encoding)
    if bag:
        return bag
    raise Unreadable(why or f"no product bag in the answer {answer_excerpt(text)}")


def parse_bag_answer(text: str, encoding: str = "smiles", *, strict: bool = False) -> str:
    """:func:`read_bag_answer`, with ``""`` (no bag) for an answer it cannot read."""
    try:
        return read_bag_answer(text, encoding, strict=strict)
    except Unreadable:
        return ""


class BagPredictorProtocol(Protocol):
    """reactant bag (``{n}X.{m}Y``) → product bag."""

    name = "bag-predictor"
    method = "predict_bags"
    signature = "predict_bags(sources: list[str]) -> list[str]"
    summary = "reactant bag ({n}X.{m}Y) -> product bag"
    answered_by = ("python", "predictions", "text", "translation")
    max_tokens = 256
    missing = ""
    predictions_layout = "a table or JSONL with 'source' and 'prediction' columns"

    def prompt(self, items: Sequence[str], options: Mapping[str, Any], settings: Mapping[str, Any]) -> list[Request]:
        encoding = settings.get("encoding") or "smiles"
        return [Request(bag_prompt(source, encoding)) for source in items]

    def parse(self, answer: str, options: Mapping[str, Any], settings: Mapping[str, Any]) -> str:
        if not answer.strip():
            return self.missing
        return read_bag_answer(answer, settings.get("encoding") or "smiles", strict=strict_extraction(settings))

    def read_predictions(self, path: Path):
        rows = read_records(path)
        key = pick_column(rows, ("source", "src", "input"), path, "source")
        value = pick_column(rows, ("prediction", "target", "output"), path, "prediction")
        table = {str(row[key]): str(row[value]) for row in rows}
        return self.lookup_answers(lambda source, options: table[source], path)

    def describe_item(self, item: Any) -> str:
        return f"source {str(item)[:60]!r}"

    def checks(self) -> list[Check]:
        outputs: dict[str, Any] = {}

        def shape(model: Any) -> str | None:
            outputs["first"] = model.predict_bags(list(MICRO_BAGS))
            return str_list_problem(outputs["first"], len(MICRO_BAGS))

        def deterministic(model: Any) -> str | None:
            if "first" not in outputs:
                return "no first output to compare with"
            return None if model.predict_bags(list(MICRO_BAGS)) == outputs["first"] else "the same inputs gave different bags"

        return [("returns one bag string per input", shape), ("deterministic for the same inputs", deterministic)]


BAG_PREDICTOR = BagPredictorProtocol()


class LineByLineBagPredictor(BagPredictorProtocol):
    """The bag predictor asked for every input line at its place, identical lines included: for
    a model that reads another file line-aligned with its inputs (the baselines' ``oracle=``
    target file) or counts per input line (the baselines' unknown reactions). Such a model says
    so with ``line_aligned = True``; other models are asked each distinct input once."""

    def key(self, item: Any) -> str | None:
        return None


LINE_BY_LINE = LineByLineBagPredictor()

PROTOCOLS = (BAG_PREDICTOR,)
"""The protocols this suite defines (it also asks the reaction-ood suite's reaction predictor,
by name, for ChemAlgebra's Table 2)."""
