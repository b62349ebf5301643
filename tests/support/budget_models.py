"""Small ``python:`` models for the assay's subset tests; each records what it was asked, so a
test sees that the items a result names are the items the model answered."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class CopyReactants:
    """A bag predictor that answers each input bag with itself (pattern-matching at its plainest)."""

    name = "copy-reactants"
    asked: list[str] = []

    def predict_bags(self, sources: Sequence[str]) -> list[str]:
        CopyReactants.asked.extend(sources)
        return list(sources)


class WaterEverywhere:
    """A bag predictor that answers every input with one molecule of water."""

    name = "water-everywhere"
    asked: list[str] = []

    def predict_bags(self, sources: Sequence[str]) -> list[str]:
        WaterEverywhere.asked.extend(sources)
        return ["{1}O" for _ in sources]


class NoSteps:
    """A mechanism predictor that never proposes a step."""

    name = "no-steps"
    asked: list[str] = []

    def predict_mechanisms(self, records: Sequence[dict[str, Any]]) -> list[str]:
        NoSteps.asked.extend(str(record["reaction_id"]) for record in records)
        return ["I do not know." for _ in records]


class ProductOnly:
    """A mechanism predictor whose one step jumps to the products."""

    name = "product-only"
    asked: list[str] = []

    def predict_mechanisms(self, records: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
        ProductOnly.asked.extend(str(record["reaction_id"]) for record in records)
        return [[{"subtype": "addition", "intermediate_smiles": ".".join(record.get("products_smiles") or [])}]
                for record in records]
