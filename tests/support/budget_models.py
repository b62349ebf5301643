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


class HalfInvariant:
    """An encoder invariant to every rewrite for about half of the molecules and blind for the
    rest: a molecule whose canonical SMILES hashes to an even number is embedded from that
    canonical SMILES (every rewrite of it gets the same vector), every other molecule to one
    shared vector (all tied: only the first of them is found first). Retrieval Acc@1 comes out
    near 0.5, where a proportion's interval is widest."""

    name = "half-invariant"

    def encode(self, smiles: Sequence[str], layers: str = "last"):
        import hashlib

        import numpy as np
        from rdkit import Chem

        vectors = []
        for text in smiles:
            molecule = Chem.MolFromSmiles(text)
            canonical = Chem.MolToSmiles(molecule) if molecule is not None else text
            digest = hashlib.sha256(canonical.encode()).digest()
            if digest[0] % 2:
                vectors.append(np.ones(64))
                continue
            vectors.append(np.random.default_rng(int.from_bytes(digest[:8], "little")).standard_normal(64))
        return np.asarray(vectors)
