"""Molecular formulas and element counts.

Counts always include implicit hydrogens and the net formal charge (kept in
``ElementCounts.charge``, apart from the element counts), because mass-balance checks need
both. Formulas are written in the Hill order RDKit's ``CalcMolFormula`` uses: C first, then
H, then the other elements alphabetically; without carbon, H first and then the others
alphabetically (``H4B-``, ``H2O``, ``H3N``). The charge is appended as ``+``, ``-``, ``+2``,
``-3``... The one difference from ``CalcMolFormula``: it writes hydrogen chloride ``ClH``,
we write ``HCl`` like every other hydride.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
from rdkit import Chem

from chemassay.chem.molecules import parse_smiles

_PERIODIC = Chem.GetPeriodicTable()
ELEMENT_SYMBOLS = frozenset(_PERIODIC.GetElementSymbol(z) for z in range(1, 119))


class FormulaError(ValueError):
    """A formula string that cannot be read; the message names the position."""


class ElementCounts(Counter):
    """Element symbol → atom count, with the net formal charge in :attr:`charge`.

    Behaves as a ``collections.Counter`` of elements; equality also compares the charge.
    """

    def __init__(self, counts: Mapping[str, int] | None = None, charge: int = 0) -> None:
        super().__init__()
        if counts:
            for element, count in counts.items():
                if count:
                    self[element] = int(count)
        self.charge = int(charge)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ElementCounts):
            return dict(self.nonzero()) == dict(other.nonzero()) and self.charge == other.charge
        return NotImplemented

    def __hash__(self) -> int:  # pragma: no cover - counters are mutable; hash by content
        return hash((tuple(sorted(self.nonzero().items())), self.charge))

    def nonzero(self) -> dict[str, int]:
        """The elements with a non-zero count."""
        return {element: count for element, count in self.items() if count}

    def plus(self, other: ElementCounts, factor: int = 1) -> ElementCounts:
        """``self + factor * other`` (element-wise, charge included)."""
        result = ElementCounts(self, self.charge + factor * other.charge)
        for element, count in other.items():
            result[element] = result.get(element, 0) + factor * count
        return ElementCounts(result, result.charge)

    def scaled(self, factor: int) -> ElementCounts:
        """Every count and the charge multiplied by ``factor``."""
        return ElementCounts({e: c * factor for e, c in self.items()}, self.charge * factor)

    def __repr__(self) -> str:
        return f"ElementCounts({self.nonzero()!r}, charge={self.charge})"


def element_counts(mol: Chem.Mol | str) -> ElementCounts:
    """Element counts of a molecule (implicit and explicit hydrogens) and its net charge."""
    if isinstance(mol, str):
        mol = parse_smiles(mol)
    counts: dict[str, int] = {}
    charge = 0
    hydrogens = 0
    for atom in mol.GetAtoms():
        symbol = atom.GetSymbol()
        counts[symbol] = counts.get(symbol, 0) + 1
        hydrogens += atom.GetTotalNumHs()
        charge += atom.GetFormalCharge()
    if hydrogens:
        counts["H"] = counts.get("H", 0) + hydrogens
    return ElementCounts(counts, charge)


def multiset_counts(species: Iterable[tuple[ElementCounts, int]]) -> ElementCounts:
    """Element counts of a multiset given as ``(counts, multiplicity)`` pairs."""
    total = ElementCounts()
    for counts, multiplicity in species:
        total = total.plus(counts, multiplicity)
    return total


def hill_formula(counts: Mapping[str, int], charge: int | None = None) -> str:
    """Write element counts in Hill order with a charge suffix (``C2H3O2-``, ``O4S-2``)."""
    if charge is None:
        charge = getattr(counts, "charge", 0)
    present = {e: c for e, c in counts.items() if c}
    if any(c < 0 for c in present.values()):
        raise FormulaError(f"negative element count in {present}")
    order = [e for e in ("C", "H") if e in present]
    order += sorted(e for e in present if e not in ("C", "H"))
    text = "".join(e + (str(present[e]) if present[e] != 1 else "") for e in order)
    if charge:
        sign = "+" if charge > 0 else "-"
        text += sign + (str(abs(charge)) if abs(charge) != 1 else "")
    return text


def molecular_formula(mol: Chem.Mol | str) -> str:
    """Hill-order molecular formula of a molecule, implicit hydrogens and charge included."""
    counts = element_counts(mol)
    return hill_formula(counts, counts.charge)


_TOKEN = re.compile(r"([A-Z][a-z]?)(\d*)")
# Charges are written sign first (``+``, ``-2``), as RDKit writes them, or as repeated
# signs (``+++``). Digits before a trailing sign belong to the element: ``C2H3O2-`` is
# acetate (two oxygens, charge -1), so ``Fe3+`` reads as three Fe atoms with charge +1.
_CHARGE = re.compile(r"(?:([+-])(\d+)|(\++|-+))$")


MAX_FORMULA_LENGTH = 10_000
MAX_COUNT_DIGITS = 9
"""Counts, charges and coefficients have at most 9 digits (below 10**9): far above any real
molecule, and it keeps a pathological 5,000-digit number from reaching Python's int limit."""


def _check_digits(digits: str, what: str, text: str) -> None:
    if len(digits) > MAX_COUNT_DIGITS:
        raise FormulaError(f"{what} has {len(digits):,} digits (at most {MAX_COUNT_DIGITS}) in formula {text[:60]!r}")


def parse_formula(text: str) -> ElementCounts:
    """Parse a formula such as ``C8H8N2O4``, ``H4B-``, ``Na+``, ``O4S-2`` or ``Fe+3``.

    Elements may appear in any order and more than once (their counts add up). Unknown
    element symbols and stray characters raise :class:`FormulaError` naming the position.
    """
    if not isinstance(text, str) or not text.strip():
        raise FormulaError("empty formula")
    body = text.strip()
    if len(body) > MAX_FORMULA_LENGTH:
        raise FormulaError(f"formula too long: {len(body):,} characters (limit {MAX_FORMULA_LENGTH:,})")
    charge = 0
    match = _CHARGE.search(body)
    if match and match.start() > 0:
        sign, digits, repeated = match.groups()
        if sign:
            _check_digits(digits, "charge", text)
            charge = int(digits) * (1 if sign == "+" else -1)
        else:
            charge = len(repeated) * (1 if repeated[0] == "+" else -1)
        body = body[: match.start()]
    counts: dict[str, int] = {}
    position = 0
    for token in _TOKEN.finditer(body):
        if token.start() != position:
            raise FormulaError(
                f"unexpected character {body[position]!r} at position {position} in formula {text!r}"
            )
        symbol, digits = token.groups()
        if symbol not in ELEMENT_SYMBOLS:
            raise FormulaError(f"unknown element {symbol!r} at position {position} in formula {text!r}")
        if digits:
            _check_digits(digits, f"count of {symbol}", text)
        counts[symbol] = counts.get(symbol, 0) + (int(digits) if digits else 1)
        position = token.end()
    if position != len(body):
        raise FormulaError(
            f"unexpected character {body[position]!r} at position {position} in formula {text!r}"
        )
    if not counts:
        raise FormulaError(f"no element in formula {text!r}")
    return ElementCounts(counts, charge)


def normalize_formula(text: str) -> str:
    """Rewrite any parseable formula in canonical Hill order (``OH2`` → ``H2O``)."""
    counts = parse_formula(text)
    return hill_formula(counts, counts.charge)


def count_matrix(
    counts: Sequence[ElementCounts], elements: Sequence[str] | None = None, *, with_charge: bool = True
) -> tuple[np.ndarray, list[str]]:
    """Stack element counts into an integer matrix (one row per entry, one column per element).

    Returns the matrix and the column names (elements, then ``"charge"`` if requested).
    """
    if elements is None:
        elements = sorted({e for c in counts for e, n in c.items() if n})
    columns = list(elements) + (["charge"] if with_charge else [])
    matrix = np.zeros((len(counts), len(columns)), dtype=np.int64)
    index = {e: i for i, e in enumerate(columns)}
    for row, entry in enumerate(counts):
        for element, count in entry.items():
            if count:
                if element not in index:
                    raise KeyError(f"element {element!r} not among the columns {columns}")
                matrix[row, index[element]] = count
        if with_charge:
            matrix[row, -1] = entry.charge
    return matrix, columns
