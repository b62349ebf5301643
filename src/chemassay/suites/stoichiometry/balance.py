"""Mass balance of reactions and re-balancing with a by-product library (ChemAlgebra's USPTO-BAL).

A reaction is *balanced* when its reactants and products hold the same atoms of every
element (implicit hydrogens included) and the same net charge; reagents sit on both sides
and cancel. When it is not, the atoms missing from one side may be explained by small
molecules from a :class:`~chemassay.suites.stoichiometry.library.ByproductLibrary`: released
by-products added to the products (HCl, H2O, CO2...) or consumed co-reactants added to the
reactants (H2O in a hydrolysis, H2 in a reduction).

Re-balancing is an integer problem. With ``d`` the element vector reactants − products, find
non-negative integers ``x`` (by-products) and ``y`` (co-reactants) with
``sum_i x_i v_i − sum_i y_i v_i = d`` using as few molecules as possible (``sum x + sum y``
minimal, at most ``max_byproducts``). The search is exact: all signed combinations of up to
three library entries are tabulated once per library (keyed by a packed integer code of their
element vector), and combinations of ``T`` molecules are found by meeting two tables in the
middle, for ``T = 1, 2, ...`` until the first ``T`` with a solution. The reaction is
*re-balanced* when exactly one combination has that minimal size, *ambiguous* when several
do (e.g. 2 MeOH versus EtOH + H2O for C2H8O2), and *unexplained* when none exists within the
limit, an element is missing from the library, or the charges differ (library entries are
neutral).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import combinations_with_replacement

from chemassay.chem.molecules import mol_to_canonical, safe_mol_from_smiles
from chemassay.suites.stoichiometry.library import ByproductLibrary

_FIELD = 12  # bits per element in the solver's codes; bounds checked in ByproductSolver
TABLE_SIZE = 3

BALANCED = "balanced"
REBALANCED = "rebalanced"
AMBIGUOUS = "ambiguous"
UNEXPLAINED = "unexplained"
INVALID = "invalid"
STATUSES = (BALANCED, REBALANCED, AMBIGUOUS, UNEXPLAINED, INVALID)


@dataclass(frozen=True)
class Addition:
    """``count`` molecules of library entry ``entry`` added to ``side`` (products/reactants)."""

    entry: int
    side: str
    count: int


@dataclass(frozen=True)
class Explanation:
    """How an element imbalance is explained: status, the unique additions, or why not."""

    status: str
    additions: tuple[Addition, ...] = ()
    alternatives: tuple[tuple[Addition, ...], ...] = ()
    reason: str = ""

    def describe(self, library: ByproductLibrary) -> str:
        """Human text such as ``products + 2 water, reactants + 3 hydrogen``."""
        def text(additions: tuple[Addition, ...]) -> str:
            return ", ".join(
                f"{a.side} + {a.count} {library.entries[a.entry].name}" for a in additions
            )

        if self.status == REBALANCED:
            return text(self.additions)
        if self.status == AMBIGUOUS:
            return " | ".join(text(alt) for alt in self.alternatives)
        return self.reason


class ByproductSolver:
    """Exact minimum-size explanations of element imbalances by a by-product library.

    Results are cached per imbalance, so a dataset's many reactions with the same missing
    atoms (HCl, H2O...) are solved once. ``max_byproducts`` bounds the number of molecules
    added (1 to 6).
    """

    def __init__(self, library: ByproductLibrary, max_byproducts: int = 6) -> None:
        if not 1 <= max_byproducts <= 2 * TABLE_SIZE:
            raise ValueError(f"max_byproducts must be between 1 and {2 * TABLE_SIZE}, got {max_byproducts}")
        self.library = library
        self.max_byproducts = max_byproducts
        self.elements = sorted({e for entry in library.entries for e, _ in entry.counts})
        self._index = {e: i for i, e in enumerate(self.elements)}
        # options: (entry index, side, signed vector); by-products enter d with +v, co-reactants with -v
        self.options: list[tuple[int, str, tuple[int, ...]]] = []
        for number, entry in enumerate(library.entries):
            vector = [0] * len(self.elements)
            for element, count in entry.counts:
                vector[self._index[element]] = count
            for side in entry.sides:
                sign = 1 if side == "products" else -1
                self.options.append((number, side, tuple(sign * v for v in vector)))
        self._bound = [
            max_byproducts * max((abs(o[2][i]) for o in self.options), default=0)
            for i in range(len(self.elements))
        ]
        if max(self._bound, default=0) >= 1 << (_FIELD - 2):
            raise ValueError("by-product library molecules are too large for the solver's codes")
        self._codes = [self._code(o[2]) for o in self.options]
        self._tables = self._build_tables(min(TABLE_SIZE, max_byproducts))
        self._cache: dict[tuple, Explanation] = {}

    @staticmethod
    def _code(vector: tuple[int, ...] | list[int]) -> int:
        code = 0
        for position, value in enumerate(vector):
            if value:
                code += value << (_FIELD * position)
        return code

    def _build_tables(self, size: int) -> list[dict[int, list[tuple[int, ...]]]]:
        tables: list[dict[int, list[tuple[int, ...]]]] = [{0: [()]}]
        for k in range(1, size + 1):
            table: dict[int, list[tuple[int, ...]]] = {}
            for combo in combinations_with_replacement(range(len(self.options)), k):
                entries = {}
                conflict = False
                for option in combo:
                    number, side, _ = self.options[option]
                    if entries.setdefault(number, side) != side:
                        conflict = True
                        break
                if conflict:
                    continue
                code = sum(self._codes[o] for o in combo)
                table.setdefault(code, []).append(combo)
            tables.append(table)
        return tables

    def explain(self, delta: Mapping[str, int], charge: int = 0) -> Explanation:
        """Explain ``delta`` (element counts reactants − products, non-zero entries) and charge."""
        key = (tuple(sorted((e, c) for e, c in delta.items() if c)), charge)
        cached = self._cache.get(key)
        if cached is None:
            cached = self._solve(dict(key[0]), charge)
            self._cache[key] = cached
        return cached

    def _solve(self, delta: dict[str, int], charge: int) -> Explanation:
        if not delta and not charge:
            return Explanation(BALANCED)
        if charge:
            return Explanation(UNEXPLAINED, reason=f"net charge differs by {charge:+d}")
        missing = sorted(e for e in delta if e not in self._index)
        if missing:
            return Explanation(UNEXPLAINED, reason=f"element(s) {', '.join(missing)} not in the by-product library")
        vector = [0] * len(self.elements)
        for element, count in delta.items():
            position = self._index[element]
            if abs(count) > self._bound[position]:
                return Explanation(
                    UNEXPLAINED, reason=f"{abs(count)} {element} atoms: more than {self.max_byproducts} by-products could hold"
                )
            vector[position] = count
        target = self._code(vector)
        for total in range(1, self.max_byproducts + 1):
            found = self._combinations_of_size(target, total)
            if found:
                solutions = sorted(found)
                if len(solutions) == 1:
                    return Explanation(REBALANCED, additions=self._additions(solutions[0]))
                return Explanation(
                    AMBIGUOUS,
                    alternatives=tuple(self._additions(s) for s in solutions[:5]),
                    reason=f"{len(solutions)} explanations with {total} molecule(s)",
                )
        return Explanation(UNEXPLAINED, reason=f"no combination of at most {self.max_byproducts} by-products")

    def _combinations_of_size(self, target: int, total: int) -> set[tuple[int, ...]]:
        found: set[tuple[int, ...]] = set()
        size = len(self._tables) - 1
        for small in range(0, min(total, size) + 1):
            large = total - small
            if large > size or large < small:
                continue
            big_table = self._tables[large]
            for code, combos in self._tables[small].items():
                matches = big_table.get(target - code)
                if not matches:
                    continue
                for first in combos:
                    for second in matches:
                        merged = tuple(sorted(first + second))
                        if self._consistent(merged):
                            found.add(merged)
        return found

    def _consistent(self, combo: tuple[int, ...]) -> bool:
        sides: dict[int, str] = {}
        for option in combo:
            number, side, _ = self.options[option]
            if sides.setdefault(number, side) != side:
                return False
        return True

    def _additions(self, combo: tuple[int, ...]) -> tuple[Addition, ...]:
        counted = Counter(combo)
        return tuple(
            Addition(self.options[o][0], self.options[o][1], n) for o, n in sorted(counted.items())
        )


# --- the authors' procedure, for comparison (balance --method reference) ------------------------


def _charged_symbol(atom) -> str:
    symbol = atom.GetSymbol()
    charge = atom.GetFormalCharge()
    if charge == 1:
        return symbol + "+"
    if charge == -1:
        return symbol + "-"
    if charge > 1:
        return f"{symbol}+{charge}"
    if charge < -1:
        return f"{symbol}-{-charge}"
    return symbol


_ATOM_LISTS: dict[str, list[str]] = {}


def reference_atoms(smiles: str) -> list[str]:
    """Atoms of a molecule as the authors' notebook counts them: hydrogens made explicit
    (appended after the heavy atoms), each symbol carrying its formal charge (``N+``, ``O-``)."""
    found = _ATOM_LISTS.get(smiles)
    if found is None:
        from rdkit import Chem

        from chemassay.chem.molecules import parse_smiles

        mol = Chem.AddHs(parse_smiles(smiles))
        found = _ATOM_LISTS[smiles] = [_charged_symbol(atom) for atom in mol.GetAtoms()]
        if len(_ATOM_LISTS) > 500_000:
            _ATOM_LISTS.clear()
    return found


def reference_leftover(symbols: list[str]) -> str | None:
    """The single molecule the authors add for left-over atoms: every atom written as a
    bracket atom, in order, bonded in a chain (``[Cl][H]`` is HCl); None when that is not a
    valid molecule (``[O][H][H]`` gives hydrogen two bonds)."""
    mol = safe_mol_from_smiles("[" + "][".join(symbols) + "]")
    return mol_to_canonical(mol) if mol is not None else None


def reference_rebalance(reactants: list[str], products: list[str]) -> tuple[str, list[str], list[str]]:
    """The authors' re-balancing of one reaction (canonical SMILES in, in their order).

    Returns ``(status, added_to_products, added_to_reactants)`` with status ``balanced``,
    ``rebalanced`` (one left-over molecule per unbalanced side) or ``unexplained`` (a
    left-over chain that is not a valid molecule).
    """
    left: Counter = Counter()
    right: Counter = Counter()
    for smiles in reactants:
        left.update(reference_atoms(smiles))
    for smiles in products:
        right.update(reference_atoms(smiles))
    if left == right:
        return BALANCED, [], []
    added: list[list[str]] = []
    for remaining in (left - right, right - left):
        if not remaining:
            added.append([])
            continue
        molecule = reference_leftover(list(remaining.elements()))
        if molecule is None:
            return UNEXPLAINED, [], []
        added.append([molecule])
    return REBALANCED, added[0], added[1]
