"""The reaction-ood suite's protocol: a reaction predictor (reactants → ranked products).

Everything a model kind needs to answer it: the Python method ``predict(reactants, k)``, the
prompt and the answer parser for text models (beam search for raw-prompted local models), the
predictions-file layout and the conformance checks. ChemAlgebra's Table 2 (the stoichiometry
suite) asks the same protocol by its name.

A chat model's answer is read as a chemist reads it (:func:`~chemassay.chem.answers.ranked_smiles`:
Markdown, JSON, reaction SMILES and equations included); an answer without any product SMILES
is unreadable. ``extract=strict`` keeps the papers' reading of bare lines.

>>> REACTION_PREDICTOR.parse("1. CC(=O)O\\n2) CCO", {"k": 1}, {})
['CC(=O)O']
>>> REACTION_PREDICTOR.parse("The product is **CCOC(C)=O** (ethyl acetate).", {"k": 1}, {})
['CCOC(C)=O']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from chemassay.chem.answers import ranked_smiles
from chemassay.contract import (
    Check,
    Protocol,
    Request,
    TextAsker,
    TextOutcome,
    Unreadable,
    answer_excerpt,
    strict_extraction,
)
from chemassay.data.readers import pick_column, read_records
from chemassay.models.check import str_list_problem

MICRO_REACTIONS = (
    ("CC(C)(C)OC(=O)N1CCC(CO)CC1.O=C(Cl)c1ccccc1", "CC(C)(C)OC(=O)N1CCC(COC(=O)c2ccccc2)CC1"),
    ("Brc1ccccc1.OB(O)c1ccccc1", "c1ccc(-c2ccccc2)cc1"),
    ("CC(=O)Cl.NCc1ccccc1", "CC(=O)NCc1ccccc1"),
)
"""Three textbook reactions (an acylation of an alcohol, a Suzuki coupling, an amide
formation) and their major products: the inputs of the conformance checks."""

DEFAULT_K = 10


def reactants_text(reactants: str | Sequence[str]) -> str:
    """Reactants as one dot-joined SMILES string."""
    return reactants if isinstance(reactants, str) else ".".join(reactants)


def reaction_prompt(reactants: str, k: int) -> str:
    """Ask for the ``k`` most likely products of a reaction, best first."""
    count = "the most likely product" if k == 1 else f"the {k} most likely products, best first,"
    return (
        "Predict the major product of this chemical reaction.\n"
        f"Reactants and reagents (SMILES, separated by '.'): {reactants}\n"
        f"Answer with {count} as SMILES, one per line (several product molecules of one answer joined by '.'), "
        "and nothing else."
    )


class ReactionPredictorProtocol(Protocol):
    """reactant SMILES → up to ``k`` ranked product SMILES per query."""

    name = "reaction-predictor"
    method = "predict"
    signature = "predict(reactants: list[str], k: int = 10) -> list[list[str]]"
    summary = "reactant SMILES -> k ranked product SMILES"
    answered_by = ("python", "predictions", "text", "translation")
    max_tokens = 1024
    missing: list[str] = []
    predictions_layout = ("a table with 'reactants' and 'prediction' columns, one row per candidate in rank order "
                          "(an optional 'rank' column orders them), or JSONL rows {\"reactants\": ..., "
                          "\"predictions\": [...]}")

    def option_names(self) -> tuple[str, ...]:
        return ("k",)

    def call(self, model: Any, items: Sequence[Any], options: Mapping[str, Any]) -> list[Any]:
        return model.predict([reactants_text(r) for r in items], int(options.get("k", DEFAULT_K)))

    def split(self, returned: Any, count: int, options: Mapping[str, Any]) -> list[Any]:
        k = int(options.get("k", DEFAULT_K))
        return [[str(p) for p in (answer or [])][:k] for answer in super().split(returned, count, options)]

    def key(self, item: Any) -> str | None:
        return reactants_text(item)

    def prompt(self, items: Sequence[Any], options: Mapping[str, Any], settings: Mapping[str, Any]) -> list[Request]:
        k = int(options.get("k", DEFAULT_K))
        return [Request(reaction_prompt(reactants_text(r), k)) for r in items]

    def parse(self, answer: str, options: Mapping[str, Any], settings: Mapping[str, Any]) -> list[str]:
        found = ranked_smiles(answer, int(options.get("k", DEFAULT_K)), strict=strict_extraction(settings))
        if not found and answer.strip():
            raise Unreadable(f"no product SMILES in the answer {answer_excerpt(answer)}")
        return found

    def answer_text(self, asker: TextAsker, items: Sequence[Any], options: Mapping[str, Any]) -> TextOutcome:
        if asker.prompting != "raw":
            return super().answer_text(asker, items, options)
        # a model trained on bare reactions: its ranked answers come from beam search
        k = int(options.get("k", DEFAULT_K))
        outputs, failures, unreadable = [], {}, {}
        for index, item in enumerate(items):
            try:
                found = asker.answer_ranked(reactants_text(item), k) or []
            except Exception as exc:  # noqa: BLE001 - one failing input must not stop the run
                failures[index] = f"generation failed: {exc}"
                found = []
            # beams are bare SMILES: read strictly, whatever the model's extract setting
            ranked = ranked_smiles("\n".join(found), k, strict=True) if found else []
            if found and not ranked and any(beam.strip() for beam in found):
                unreadable[index] = f"no beam is a SMILES (first: {answer_excerpt(found[0])})"
            outputs.append(ranked)
        return TextOutcome(outputs, failures, unreadable)

    def read_predictions(self, path: Path):
        rows = read_records(path)
        key = pick_column(rows, ("reactants", "input", "source"), path, "reactants")
        table: dict[str, list[tuple[float, int, str]]] = {}
        if rows and "predictions" in rows[0]:
            for order, row in enumerate(rows):
                values = row["predictions"]
                values = values if isinstance(values, list) else str(values).split("|")
                table.setdefault(str(row[key]), []).extend((rank, order, str(v)) for rank, v in enumerate(values))
        else:
            value = pick_column(rows, ("prediction", "product", "products"), path, "prediction")
            for order, row in enumerate(rows):
                rank = float(row["rank"]) if row.get("rank") not in (None, "") else float(order)
                table.setdefault(str(row[key]), []).append((rank, order, str(row[value])))

        def lookup(item: Any, options: Mapping[str, Any]) -> list[str]:
            return [smiles for _, _, smiles in sorted(table[reactants_text(item)])][: int(options.get("k", DEFAULT_K))]

        return self.lookup_answers(lookup, path)

    def describe_item(self, item: Any) -> str:
        return f"reactants {reactants_text(item)[:60]!r}"

    def checks(self) -> list[Check]:
        reactants = [r for r, _ in MICRO_REACTIONS]
        outputs: dict[str, Any] = {}

        def shape(model: Any) -> str | None:
            outputs["first"] = ranked = model.predict(reactants, k=3)
            if not isinstance(ranked, list) or len(ranked) != len(reactants):
                size = len(ranked) if isinstance(ranked, list) else "?"
                return f"expected {len(reactants)} ranked lists, got {type(ranked).__name__} of length {size}"
            for row in ranked:
                problem = str_list_problem(row)
                if problem:
                    return problem
                if len(row) > 3:
                    return f"k=3 but a list has {len(row)} predictions"
            return None

        def deterministic(model: Any) -> str | None:
            if "first" not in outputs:
                return "no first output to compare with"
            again = model.predict(reactants, k=3)
            return None if again == outputs["first"] else "the same inputs gave different predictions"

        def k_one(model: Any) -> str | None:
            ranked = model.predict(reactants[:1], k=1)
            ok = isinstance(ranked, list) and len(ranked) == 1 and len(ranked[0]) <= 1
            return None if ok else "k=1 gave more than one prediction"

        return [("returns up to k ranked SMILES per reaction", shape), ("deterministic for the same inputs", deterministic),
                ("k=1 gives at most one prediction", k_one)]


REACTION_PREDICTOR = ReactionPredictorProtocol()

PROTOCOLS = (REACTION_PREDICTOR,)
"""The protocols this suite defines."""
