"""The mechanism suite's protocol: a mechanism predictor (reaction → list of steps, oMeBench's task).

A record is a dict with at least ``reaction_id``, ``reactants`` and ``products`` (SMILES); the
suite adds ``prompt`` (the paper's prompt, the text an instruction-following model answers) and
``conditions``. A model answers with raw text (the suite parses it as the paper does) or with a
parsed list of steps. Everything a model kind needs is here: the method, the prompt (the
record's own, else a default) for text models, the predictions-file layout and the checks.

>>> MECHANISM_PREDICTOR.prompt([{"reaction_id": "r1", "prompt": "Explain."}], {}, {})[0].prompt
'Explain.'
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from chemassay.contract import Check, Protocol, Request, TextAsker, TextOutcome
from chemassay.data.readers import pick_column, read_records

MICRO_MECHANISM = {
    "reaction_id": "check-1",
    "reactants": "CC(=O)Cl.NCc1ccccc1",
    "products": "CC(=O)NCc1ccccc1.Cl",
    "conditions": "",
}
"""One mechanism record (an amide formation): the input of the conformance checks."""


def mechanism_prompt(record: Mapping[str, Any]) -> str:
    """The default mechanism prompt (the suite passes the paper's prompt in ``record['prompt']``)."""
    reactants = record.get("reactants", "")
    products = record.get("products", "")
    conditions = record.get("conditions") or ""
    if isinstance(reactants, (list, tuple)):
        reactants = ".".join(reactants)
    if isinstance(products, (list, tuple)):
        products = ".".join(products)
    return (
        "Give the step-by-step mechanism of this organic reaction.\n"
        f"Reactants: {reactants}\nProducts: {products}\n"
        + (f"Conditions: {conditions}\n" if conditions else "")
        + 'Answer with JSON: {"mechanism": [{"step": 1, "type": "<step type>", '
        '"intermediate": "<SMILES after this step>"}, ...]}'
    )


def record_prompt(record: Mapping[str, Any]) -> str:
    """The text a model is asked for one record: its own ``prompt``, else the default."""
    return record.get("prompt") or mechanism_prompt(record)


class MechanismPredictorProtocol(Protocol):
    """reaction records → raw model text (or parsed step lists) per reaction."""

    name = "mechanism-predictor"
    method = "predict_mechanisms"
    signature = "predict_mechanisms(reactions: list[dict]) -> list[str | list[dict]]"
    summary = "reaction -> list of mechanism steps"
    answered_by = ("python", "predictions", "text")
    # oMe-Gold's longest mechanism written in the asked JSON form is 582 tokens (SmolLM2's
    # tokenizer; the median 163, the 99th percentile 396): 2,048 leaves 3.5 times that
    max_tokens = 2048
    missing = ""
    predictions_layout = 'JSONL rows {"reaction_id": ..., "response": ...}'

    def key(self, item: Any) -> str | None:
        return json.dumps(item, sort_keys=True, default=str) if isinstance(item, Mapping) else None

    def prompt(self, items: Sequence[Any], options: Mapping[str, Any], settings: Mapping[str, Any]) -> list[Request]:
        return [Request(record_prompt(record)) for record in items]

    def parse(self, answer: str, options: Mapping[str, Any], settings: Mapping[str, Any]) -> str:
        return answer  # the suite parses the steps as the paper does

    def answer_text(self, asker: TextAsker, items: Sequence[Any], options: Mapping[str, Any]) -> TextOutcome:
        # a record is no text: raw-prompted models (no chat template) get the same prompt
        return self._collect(asker.ask(self.prompt(items, options, asker.settings)))

    def read_predictions(self, path: Path):
        rows = read_records(path)
        pick_column(rows, ("reaction_id",), path, "reaction_id")
        table = {str(r["reaction_id"]): r.get("response", r.get("mechanism", "")) for r in rows}

        def lookup(record: Mapping[str, Any], options: Mapping[str, Any]) -> Any:
            value = table[str(record.get("reaction_id"))]
            return value if isinstance(value, (str, list)) else json.dumps(value)

        return self.lookup_answers(lookup, path)

    def describe_item(self, item: Any) -> str:
        return f"reaction {item.get('reaction_id') if isinstance(item, Mapping) else item}"

    def checks(self) -> list[Check]:
        def shape(model: Any) -> str | None:
            answers = model.predict_mechanisms([dict(MICRO_MECHANISM)])
            if not isinstance(answers, list) or len(answers) != 1:
                return f"expected one answer, got {answers!r}"[:200]
            if not isinstance(answers[0], (str, list)):
                return f"an answer must be text or a list of steps, got {type(answers[0]).__name__}"
            return None

        return [("returns one answer per reaction", shape)]


MECHANISM_PREDICTOR = MechanismPredictorProtocol()

PROTOCOLS = (MECHANISM_PREDICTOR,)
"""The protocols this suite defines."""
