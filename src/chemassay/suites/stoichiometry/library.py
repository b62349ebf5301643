"""The by-product library used to re-balance reactions (a JSON file; the default ships here).

Format (``byproducts.json``)::

    {"name": "...", "version": 1, "description": "...",
     "byproducts": [{"name": "water", "smiles": "O", "sides": ["products", "reactants"]}, ...]}

``smiles`` may hold several dot-separated molecules (a salt written as its ions,
``[Na+].[Cl-]``): they are added together, as one library entry. ``sides`` says where an
entry may be added: ``products`` (a released by-product) and/or ``reactants`` (a consumed
co-reactant); it defaults to ``["products"]``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from chemassay.chem.molecules import InvalidSmiles
from chemassay.contract.errors import UserInputError
from chemassay.runtime.files import sha256_file
from chemassay.suites.stoichiometry.species import Species, species_from_smiles

SIDES = ("products", "reactants")


def default_library_path() -> Path:
    """Path of the by-product library shipped with chemassay."""
    return Path(str(resources.files("chemassay.suites.stoichiometry") / "byproducts.json"))


@dataclass(frozen=True)
class Byproduct:
    """One library entry: its molecules, where it may be added, and its total element counts."""

    name: str
    smiles: str
    molecules: tuple[Species, ...]
    sides: tuple[str, ...]
    counts: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class ByproductLibrary:
    """A validated by-product library and where it came from (path and sha256)."""

    name: str
    entries: tuple[Byproduct, ...]
    path: str
    sha256: str

    def describe(self) -> dict:
        """JSON-ready description (for manifests and result files)."""
        return {"name": self.name, "path": self.path, "sha256": self.sha256, "entries": len(self.entries)}


def load_library(path: str | os.PathLike | None = None) -> ByproductLibrary:
    """Read and validate a by-product library (default: the shipped one).

    Every problem is a :class:`UserInputError` naming the file and the entry: unreadable
    JSON, a missing field, invalid SMILES, an unknown side, a duplicate or a charged entry
    (a charged by-product could balance charge with nothing to show for it).
    """
    target = Path(path) if path is not None else default_library_path()
    if not target.is_file():
        raise UserInputError(f"{target}: no such by-product library file")
    try:
        data = json.loads(target.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise UserInputError(f"{target}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    raw_entries = data.get("byproducts") if isinstance(data, dict) else None
    if not isinstance(raw_entries, list) or not raw_entries:
        raise UserInputError(f"{target}: expected an object with a non-empty 'byproducts' list")
    entries: list[Byproduct] = []
    seen: dict[tuple, str] = {}
    for position, raw in enumerate(raw_entries, start=1):
        where = f"{target}: by-product #{position}"
        if not isinstance(raw, dict) or not isinstance(raw.get("smiles"), str):
            raise UserInputError(f"{where}: needs a 'smiles' string")
        name = str(raw.get("name") or raw["smiles"])
        sides = raw.get("sides", ["products"])
        if not isinstance(sides, list) or not sides or any(side not in SIDES for side in sides):
            raise UserInputError(f"{where} ({name}): 'sides' must be a non-empty list of {list(SIDES)}")
        try:
            molecules = tuple(species_from_smiles(part) for part in raw["smiles"].split("."))
        except (InvalidSmiles, ValueError) as exc:
            raise UserInputError(f"{where} ({name}): {exc}") from None
        totals: dict[str, int] = {}
        for molecule in molecules:
            for element, count in molecule.counts:
                totals[element] = totals.get(element, 0) + count
        charge = sum(m.charge for m in molecules)
        if charge:
            raise UserInputError(f"{where} ({name}): net charge {charge:+d}; by-products must be neutral")
        key = tuple(sorted(m.smiles for m in molecules))
        if key in seen:
            raise UserInputError(f"{where} ({name}): same molecules as {seen[key]!r}")
        seen[key] = name
        entries.append(
            Byproduct(
                name=name,
                smiles=".".join(m.smiles for m in molecules),
                molecules=molecules,
                sides=tuple(side for side in SIDES if side in sides),
                counts=tuple(sorted(totals.items())),
            )
        )
    return ByproductLibrary(
        name=str(data.get("name", target.stem)),
        entries=tuple(entries),
        path=str(target),
        sha256=sha256_file(target),
    )
