"""A reaction predictor that only remembers: the products of the training reactions whose
reactants it is asked for, and nothing for any other reaction (the floor of a clean subset)."""

from __future__ import annotations

from pathlib import Path

from rdkit import Chem, RDLogger

RDLogger.DisableLog("rdApp.*")


def reactant_key(reactants: str) -> str | None:
    """The reactants as a sorted set of canonical SMILES (atom maps removed); None if unreadable."""
    parts = []
    for smiles in reactants.split("."):
        mol = Chem.MolFromSmiles(smiles)
        if mol is None:
            return None
        for atom in mol.GetAtoms():
            atom.SetAtomMapNum(0)
        parts.append(Chem.MolToSmiles(mol))
    return ".".join(sorted(parts))


class Memoriser:
    """``predict(reactants, k)``: the remembered products of these reactants, else no answer."""

    def __init__(self, train: str) -> None:
        self.table: dict[str, list[str]] = {}
        for line in Path(train).read_text(encoding="utf-8").splitlines():
            parts = line.strip().split(">")
            if len(parts) != 3:
                continue
            left, _agents, products = parts
            key = reactant_key(left)
            if key is not None:
                self.table.setdefault(key, []).append(products)
        self.name = "memoriser"

    def predict(self, reactants: list[str], k: int = 5) -> list[list[str]]:
        return [self.table.get(reactant_key(r) or "", [])[:k] for r in reactants]
