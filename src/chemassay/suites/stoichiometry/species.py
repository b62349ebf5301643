"""Species: one molecule's canonical SMILES, Hill formula and element counts, parsed once.

Every command of the suite meets the same molecules again and again (reagents in every
reaction, the same reactant in five augmentations), so molecules are parsed through a
:class:`SpeciesTable` that caches by the text as written (and by the text with atom maps
stripped, so a molecule written with other map numbers in the same atom order parses once).
"""

from __future__ import annotations

from dataclasses import dataclass

from rdkit.Chem.rdMolDescriptors import CalcMolFormula

from chemassay.chem.formula import FormulaError, hill_formula, parse_formula
from chemassay.chem.molecules import InvalidSmiles, mol_to_canonical, parse_smiles
from chemassay.chem.reactions import remove_atom_maps_text


@dataclass(frozen=True, slots=True)
class Species:
    """One molecule: canonical SMILES, Hill formula, element counts (sorted), net charge."""

    smiles: str
    formula: str
    counts: tuple[tuple[str, int], ...]
    charge: int


def species_from_smiles(smiles: str) -> Species:
    """Parse one molecule (atom maps allowed) into a :class:`Species`; raises InvalidSmiles.

    Element counts come from RDKit's ``CalcMolFormula`` (implicit hydrogens and charge
    included, isotopes counted as their element), read back with ``parse_formula``: the same
    counts as :func:`chemassay.chem.formula.element_counts`, without a Python loop over atoms.
    """
    text = remove_atom_maps_text(smiles) if ":" in smiles else smiles
    mol = parse_smiles(text)
    try:
        counts = parse_formula(CalcMolFormula(mol))
    except FormulaError as exc:
        raise InvalidSmiles(smiles, f"no element formula ({exc})") from None
    ordered = tuple(sorted(counts.nonzero().items()))
    return Species(
        smiles=mol_to_canonical(mol),
        formula=hill_formula(counts, counts.charge),
        counts=ordered,
        charge=counts.charge,
    )


def species_from_formula(formula: str) -> Species:
    """A formula-only species (``smiles`` empty); raises FormulaError."""
    counts = parse_formula(formula)
    ordered = tuple(sorted(counts.nonzero().items()))
    return Species(
        smiles="",
        formula=hill_formula(counts, counts.charge),
        counts=ordered,
        charge=counts.charge,
    )


class SpeciesTable:
    """Cache from written molecule text to :class:`Species` (or the reason it is invalid).

    ``encoding`` says how texts are read: ``smiles`` (atom maps stripped before lookup, so
    the same molecule written with different map numbers in the same atom order parses once)
    or ``formula``.
    """

    def __init__(self, encoding: str = "smiles", max_size: int = 2_000_000) -> None:
        if encoding not in ("smiles", "formula"):
            raise ValueError(f"unknown encoding {encoding!r} (use 'smiles' or 'formula')")
        self.encoding = encoding
        self.max_size = max_size
        self._cache: dict[str, Species | str] = {}
        self.parsed = 0

    def __len__(self) -> int:
        return len(self._cache)

    def get(self, text: str) -> Species:
        """The species for ``text``; raises InvalidSmiles/FormulaError (cached) when invalid."""
        found = self._cache.get(text)
        if found is None:
            key = remove_atom_maps_text(text) if self.encoding == "smiles" and ":" in text else text
            found = self._cache.get(key)
            if found is None:
                self.parsed += 1
                try:
                    found = species_from_smiles(key) if self.encoding == "smiles" else species_from_formula(key)
                except (InvalidSmiles, FormulaError, ValueError) as exc:
                    found = str(exc)
            if len(self._cache) >= self.max_size:
                self._cache.clear()
            self._cache[key] = found
            self._cache[text] = found
        if isinstance(found, str):
            if self.encoding == "smiles":
                raise InvalidSmiles(text, found.split(": ", 1)[-1])
            raise FormulaError(found)
        return found
