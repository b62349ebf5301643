"""Stoichiometric bags: the ChemAlgebra notation ``{3}CCO.{2}O`` and ``{1}CO2.{4}H2``.

A :class:`Bag` maps each species (a canonical SMILES or a normalized Hill formula) to a
positive integer coefficient. It keeps the order in which species were first written,
which matters when datasets are written back out, but compares as a multiset.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Literal

from chemassay.chem.formula import ElementCounts, FormulaError, element_counts, parse_formula
from chemassay.chem.formula import hill_formula as _hill
from chemassay.chem.molecules import MAX_REACTION_LENGTH, InvalidSmiles, canonical_smiles
from chemassay.contract.errors import ChemassayError

Encoding = Literal["smiles", "formula"]


class BagParseError(ValueError, ChemassayError):
    """Malformed bag text; ``position`` is the 0-based character index of the problem."""

    def __init__(self, text: str, position: int, reason: str) -> None:
        self.text = text
        self.position = position
        self.reason = reason
        super().__init__(f"{reason} at position {position} in bag {text!r}")


def canonical_species(species: str, encoding: Encoding = "smiles") -> str:
    """Canonical form of one species: canonical SMILES, or the Hill-order formula."""
    if encoding == "smiles":
        return canonical_smiles(species)
    if encoding == "formula":
        counts = parse_formula(species)
        return _hill(counts, counts.charge)
    raise ValueError(f"unknown bag encoding {encoding!r} (use 'smiles' or 'formula')")


class Bag(Mapping[str, int]):
    """A multiset of chemical species with positive integer coefficients.

    ``encoding`` says whether the species are SMILES or formulas. Species are canonicalized
    on construction unless ``canonical=False`` (when the caller already did it).
    """

    __slots__ = ("_items", "encoding")

    def __init__(
        self,
        items: Mapping[str, int] | Iterable[tuple[str, int]] = (),
        encoding: Encoding = "smiles",
        *,
        canonical: bool = True,
    ) -> None:
        self.encoding: Encoding = encoding
        self._items: dict[str, int] = {}
        pairs = items.items() if isinstance(items, Mapping) else items
        for species, coefficient in pairs:
            if not isinstance(coefficient, int) or isinstance(coefficient, bool):
                raise TypeError(f"coefficient of {species!r} must be an int, got {coefficient!r}")
            if coefficient < 0:
                raise ValueError(f"negative coefficient {coefficient} for {species!r}")
            if coefficient == 0:
                continue
            key = canonical_species(species, encoding) if canonical else species
            self._items[key] = self._items.get(key, 0) + coefficient

    @classmethod
    def from_species(cls, species: Iterable[str], encoding: Encoding = "smiles") -> Bag:
        """Bag from a list of species with repeats (``["CCO", "CCO", "O"]`` → ``{2}CCO.{1}O``)."""
        return cls(((s, 1) for s in species), encoding)

    # Mapping protocol -----------------------------------------------------------------
    def __getitem__(self, species: str) -> int:
        return self._items[species]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Bag):
            return self._items == other._items
        if isinstance(other, Mapping):
            return self._items == dict(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(frozenset(self._items.items()))

    def __repr__(self) -> str:
        return f"Bag({self.format()!r}, encoding={self.encoding!r})"

    # Arithmetic -------------------------------------------------------------------------
    def _check(self, other: Bag) -> None:
        if not isinstance(other, Bag):
            raise TypeError(f"expected a Bag, got {type(other).__name__}")
        if other.encoding != self.encoding:
            raise ValueError(f"cannot combine a {self.encoding} bag with a {other.encoding} bag")

    def __add__(self, other: Bag) -> Bag:
        self._check(other)
        merged = dict(self._items)
        for species, coefficient in other._items.items():
            merged[species] = merged.get(species, 0) + coefficient
        return Bag(merged, self.encoding, canonical=False)

    def __sub__(self, other: Bag) -> Bag:
        """Multiset difference: coefficients subtract and stop at zero (like ``Counter``)."""
        self._check(other)
        left = {
            s: c - other._items.get(s, 0) for s, c in self._items.items() if c > other._items.get(s, 0)
        }
        return Bag(left, self.encoding, canonical=False)

    def __mul__(self, factor: int) -> Bag:
        return self.scale(factor)

    __rmul__ = __mul__

    def scale(self, factor: int) -> Bag:
        """Every coefficient multiplied by a positive integer ``factor``."""
        if not isinstance(factor, int) or factor < 1:
            raise ValueError(f"scale factor must be a positive integer, got {factor!r}")
        return Bag({s: c * factor for s, c in self._items.items()}, self.encoding, canonical=False)

    def intersection(self, other: Bag) -> Bag:
        """Species in both bags with the smaller coefficient (multiset intersection)."""
        self._check(other)
        common = {
            s: min(c, other._items[s]) for s, c in self._items.items() if s in other._items
        }
        return Bag(common, self.encoding, canonical=False)

    def total(self) -> int:
        """Sum of the coefficients (the number of molecules in the bag)."""
        return sum(self._items.values())

    def species_list(self) -> list[str]:
        """Species repeated by their coefficient, in bag order (``{2}A.{1}B`` → A, A, B)."""
        return [s for s, c in self._items.items() for _ in range(c)]

    # Chemistry --------------------------------------------------------------------------
    def element_counts(self) -> ElementCounts:
        """Total element counts and net charge of the bag (coefficients applied)."""
        total = ElementCounts()
        for species, coefficient in self._items.items():
            total = total.plus(species_counts(species, self.encoding), coefficient)
        return total

    # Text -------------------------------------------------------------------------------
    def format(self, *, explicit_ones: bool = True) -> str:
        """Write the bag as ``{n}X.{m}Y`` (``{1}`` kept unless ``explicit_ones=False``)."""
        parts = []
        for species, coefficient in self._items.items():
            if coefficient == 1 and not explicit_ones:
                parts.append(species)
            else:
                parts.append(f"{{{coefficient}}}{species}")
        return ".".join(parts)

    __str__ = format


_species_cache: dict[tuple[str, str], ElementCounts] = {}


def species_counts(species: str, encoding: Encoding = "smiles") -> ElementCounts:
    """Element counts of one species (cached; species are usually few and repeated)."""
    key = (species, encoding)
    cached = _species_cache.get(key)
    if cached is None:
        cached = element_counts(species) if encoding == "smiles" else parse_formula(species)
        if len(_species_cache) > 200_000:
            _species_cache.clear()
        _species_cache[key] = cached
    return cached


_COEFF = re.compile(r"\{(\d+)\}")


def parse_bag(text: str, encoding: Encoding = "smiles", *, canonical: bool = True) -> Bag:
    """Parse ``{3}CCO.{2}O`` (or plain ``CCO.CCO.O``, every coefficient 1) into a :class:`Bag`.

    A species without ``{n}`` counts once; repeated species add up. Raises
    :class:`BagParseError` naming the position of the first problem (unclosed brace, zero or
    missing coefficient, empty species, species that is not valid SMILES/formula).
    """
    if not isinstance(text, str):
        raise BagParseError(str(text), 0, "expected text")
    stripped = text.strip()
    if not stripped:
        raise BagParseError(text, 0, "empty bag")

    if len(stripped) > MAX_REACTION_LENGTH:
        raise BagParseError(text[:200], 0, f"bag too long: {len(stripped):,} characters (limit {MAX_REACTION_LENGTH:,})")
    offset = len(text) - len(text.lstrip())
    pairs: list[tuple[str, int]] = []
    position = 0
    for chunk in stripped.split("."):
        start = offset + position
        coefficient = 1
        body = chunk
        if chunk.startswith("{"):
            match = _COEFF.match(chunk)
            if not match:
                close = chunk.find("}")
                reason = "unclosed '{'" if close < 0 else "coefficient is not a positive integer"
                raise BagParseError(text, start, reason)
            from chemassay.chem.formula import MAX_COUNT_DIGITS

            if len(match.group(1)) > MAX_COUNT_DIGITS:
                raise BagParseError(text[:200], start + 1, f"coefficient has {len(match.group(1)):,} digits (at most {MAX_COUNT_DIGITS})")
            coefficient = int(match.group(1))
            if coefficient == 0:
                raise BagParseError(text, start + 1, "coefficient 0")
            body = chunk[match.end():]
        elif "{" in chunk or "}" in chunk:
            brace = chunk.find("{") if "{" in chunk else chunk.find("}")
            raise BagParseError(text, start + brace, "coefficient must come before the species")
        if not body:
            raise BagParseError(text, start, "empty species")
        if canonical:
            try:
                species = canonical_species(body, encoding)
            except (InvalidSmiles, FormulaError) as exc:
                species_start = start + (len(chunk) - len(body))
                raise BagParseError(text, species_start, f"bad species {body!r} ({exc})") from None
        else:
            species = body
        pairs.append((species, coefficient))
        position += len(chunk) + 1
    return Bag(pairs, encoding, canonical=False)


def element_balance(left: Bag, right: Bag) -> dict[str, int]:
    """Per-element ``left - right`` atom counts (``"charge"`` included) for unequal entries.

    An empty result means the two sides balance.
    """
    a = left.element_counts()
    b = right.element_counts()
    delta = {e: a.get(e, 0) - b.get(e, 0) for e in set(a) | set(b)}
    delta = {e: d for e, d in sorted(delta.items()) if d}
    if a.charge != b.charge:
        delta["charge"] = a.charge - b.charge
    return delta


def is_balanced(left: Bag, right: Bag) -> bool:
    """True when both sides have the same atoms of every element and the same charge."""
    return not element_balance(left, right)
