"""The stoichiometry suite's protocol: a bag predictor (ChemAlgebra's task).

A bag predictor reads a reactant bag in ChemAlgebra's ``{n}X.{m}Y`` notation (``X``, ``Y``:
SMILES or molecular formulas, ``n``, ``m``: stoichiometric coefficients) and answers the
product bag in the same notation. This module holds everything a model kind needs to answer
it: the Python method, the prompt and answer parser for text models, the predictions-file
layout and the conformance checks.

>>> BAG_PREDICTOR.parse("Products: {2}O.{1}CCO", {}, {})
'{2}O.{1}CCO'
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from chemassay.chem.answers import candidate_lines
from chemassay.contract import Check, Protocol, Request
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


def parse_bag_answer(text: str) -> str:
    """The bag of an answer: the last line in ``{n}X`` notation, else the first non-empty line."""
    lines = candidate_lines(text)
    with_coefficients = [line for line in lines if _COEFF.search(line)]
    if with_coefficients:
        line = with_coefficients[-1]
        start = _COEFF.search(line).start()
        return line[start:].split()[0].rstrip(".,;") if " " in line[start:] else line[start:].rstrip(",;")
    return lines[0].split()[0] if lines else ""


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
        return parse_bag_answer(answer)

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
