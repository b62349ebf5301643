"""The algebra of ChemAlgebra's two reference baselines: ``copy-coefficient`` and an exact
``algebraic`` solver (registered as bag-predictor model kinds in :mod:`.baselines`).

Both need to know which molecules take part in the reaction. They learn it by memorising the
training pairs (``src-train.txt``/``tgt-train.txt``): every pair gives the reaction's species
set ``U``, its reagents ``G`` (species with the same coefficient on both sides; the only
species whose net change is zero) and the direction of change ``nu`` (target minus source
coefficients divided by their gcd, which is ``k_hat * (m_P - m_R)`` in T2 and
``k * (m_P - m_R)`` in T1). A test input is matched by its set of species: the pair with
exactly that input set, else the smallest memorised reaction whose species include all of
the input's. With ``oracle`` targets the species of the target line are used instead of the
memory (coefficients are never read): the algebra-only upper bound.

``algebraic``: the integer null space of the element matrix (elements and charge by species,
reagents fixed) gives the reaction vector; when it is one-dimensional its smallest integer
vector ``nu`` is used (oriented like the memorised direction, or so that target-only species
are produced), else the memorised direction. The reaction then runs as far as the input
allows: ``t = min(x_s // -nu_s)`` over consumed species, and no further than any reagent's
coefficient ``x_g`` (in T2 ``k_hat`` is the minimum of every coefficient drawn, reagents
included); prediction ``x + t nu`` (reagents unchanged). This is exact for T1 (``t = k``) and
for T2 whenever ``k_hat`` was drawn by a consumed species or a reagent of multiplicity 1; when
a product drew it, that product is absent from the input and no input feature tells ``k_hat``.

``copy-coefficient`` (the T1 shortcut): every product and reagent gets the input's most
common coefficient (the smallest on ties).

An input whose reaction is unknown is predicted unchanged (no reaction), so every output line
is a balanced, valid bag; unreadable input lines give an empty line (scored invalid).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from math import gcd
from pathlib import Path

from chemassay.contract.errors import UserInputError
from chemassay.data.readers import iter_lines
from chemassay.suites.stoichiometry.metrics import BagError, BagReader, ParsedBag
from chemassay.suites.stoichiometry.species import Species

BASELINES = ("copy-coefficient", "algebraic")


def integer_null_space(matrix: list[list[int]]) -> list[list[int]]:
    """Basis of the null space of an integer matrix, each vector scaled to coprime integers.

    Exact (fractions, reduced row echelon form). ``matrix`` has one row per equation and one
    column per unknown; an empty matrix of ``n`` columns has the identity as basis.
    """
    rows = [[Fraction(v) for v in row] for row in matrix]
    columns = len(rows[0]) if rows else 0
    pivots: list[int] = []
    rank = 0
    for column in range(columns):
        pivot = next((r for r in range(rank, len(rows)) if rows[r][column] != 0), None)
        if pivot is None:
            continue
        rows[rank], rows[pivot] = rows[pivot], rows[rank]
        lead = rows[rank][column]
        rows[rank] = [v / lead for v in rows[rank]]
        for r in range(len(rows)):
            if r != rank and rows[r][column] != 0:
                factor = rows[r][column]
                rows[r] = [a - factor * b for a, b in zip(rows[r], rows[rank], strict=True)]
        pivots.append(column)
        rank += 1
        if rank == len(rows):
            break
    free = [c for c in range(columns) if c not in pivots]
    basis = []
    for free_column in free:
        vector = [Fraction(0)] * columns
        vector[free_column] = Fraction(1)
        for row, pivot_column in enumerate(pivots):
            vector[pivot_column] = -rows[row][free_column]
        denominator = 1
        for value in vector:
            denominator = denominator * value.denominator // gcd(denominator, value.denominator)
        integers = [int(value * denominator) for value in vector]
        divisor = 0
        for value in integers:
            divisor = gcd(divisor, abs(value))
        basis.append([v // divisor for v in integers] if divisor else integers)
    return basis


def primitive(vector: list[int]) -> list[int]:
    """``vector`` divided by the gcd of its entries."""
    divisor = 0
    for value in vector:
        divisor = gcd(divisor, abs(value))
    return [v // divisor for v in vector] if divisor else list(vector)


@dataclass(frozen=True)
class MemorizedReaction:
    """What a training pair teaches: species, reagents and the direction of change."""

    species: tuple[str, ...]
    reagents: frozenset[str]
    direction: tuple[int, ...]

    def produced(self) -> set[str]:
        return {s for s, d in zip(self.species, self.direction, strict=True) if d > 0}


class ReactionMemory:
    """Training reactions keyed by the set of input species (module doc)."""

    def __init__(self) -> None:
        self.entries: list[MemorizedReaction] = []
        self.by_input: dict[frozenset[str], int] = {}
        self.by_species: dict[str, set[int]] = {}
        self._seen: dict[tuple, int] = {}

    def add(self, source: dict[str, int], target: dict[str, int]) -> None:
        """Memorise one training pair."""
        universe = tuple(sorted(source.keys() | target.keys()))
        reagents = frozenset(s for s in universe if source.get(s, 0) == target.get(s, 0))
        direction = tuple(primitive([target.get(s, 0) - source.get(s, 0) for s in universe]))
        key = (universe, direction)
        number = self._seen.get(key)
        if number is None:
            number = self._seen[key] = len(self.entries)
            self.entries.append(MemorizedReaction(universe, reagents, direction))
            for species in universe:
                self.by_species.setdefault(species, set()).add(number)
        self.by_input.setdefault(frozenset(source), number)

    def lookup(self, inputs: set[str]) -> MemorizedReaction | None:
        """The memorised reaction for an input species set, or None."""
        number = self.by_input.get(frozenset(inputs))
        if number is not None:
            return self.entries[number]
        candidates: set[int] | None = None
        for species in inputs:
            found = self.by_species.get(species)
            if not found:
                return None
            candidates = set(found) if candidates is None else candidates & found
            if not candidates:
                return None
        if not candidates:
            return None
        best = min(candidates, key=lambda n: (len(self.entries[n].species), n))
        return self.entries[best]


def _vector(species: Species) -> dict[str, int]:
    vector = dict(species.counts)
    if species.charge:
        vector["__charge__"] = species.charge
    return vector


def reaction_direction(
    universe: list[str], fixed: set[str], species: dict[str, Species], hint: dict[str, int] | None,
    produced: set[str], consumed: set[str],
) -> dict[str, int] | None:
    """The reaction vector over ``universe`` (``nu``; zero for fixed species), or None.

    Integer null space of the element matrix of the free species; one-dimensional: its
    primitive vector, oriented by ``hint`` (a memorised direction), else so that ``produced``
    species grow and ``consumed`` ones shrink; otherwise ``hint`` if it balances; else None.
    """
    free = [s for s in universe if s not in fixed]
    if not free:
        return None
    vectors = [_vector(species[s]) for s in free]
    elements = sorted({e for v in vectors for e in v})
    matrix = [[v.get(e, 0) for v in vectors] for e in elements]
    basis = integer_null_space(matrix)
    if len(basis) == 1:
        nu = dict(zip(free, basis[0], strict=True))
        if hint:
            sign = 1 if sum(nu[s] * hint.get(s, 0) for s in free) >= 0 else -1
        else:
            score = sum(nu[s] for s in produced if s in nu) - sum(nu[s] for s in consumed if s in nu)
            sign = 1 if score >= 0 else -1
        return {s: sign * v for s, v in nu.items()}
    if hint and all(sum(vectors[i].get(e, 0) * hint.get(s, 0) for i, s in enumerate(free)) == 0 for e in elements):
        return {s: hint.get(s, 0) for s in free}
    return None


def run_reaction(inputs: dict[str, int], nu: dict[str, int], bound: int | None = None) -> dict[str, int]:
    """``inputs + t * nu`` with the largest ``t`` keeping every coefficient non-negative and at
    most ``bound``."""
    consumed = [(s, -v) for s, v in nu.items() if v < 0]
    if not consumed:
        return dict(inputs)
    extent = min(inputs.get(s, 0) // need for s, need in consumed)
    if bound is not None:
        extent = min(extent, bound)
    result = dict(inputs)
    for s, v in nu.items():
        result[s] = result.get(s, 0) + extent * v
    return {s: c for s, c in result.items() if c > 0}


def copy_coefficient(inputs: dict[str, int], products: set[str], reagents: set[str]) -> dict[str, int]:
    """Every product and reagent with the input's most common coefficient (smallest on ties)."""
    counts = Counter(inputs.values())
    best = max(counts.values())
    k = min(c for c, n in counts.items() if n == best)
    return {s: k for s in sorted(products | reagents)}


def format_bag(bag: dict[str, int]) -> str:
    """``{n}X.{m}Y`` in the given order."""
    return ".".join(f"{{{c}}}{s}" for s, c in bag.items() if c > 0)


@dataclass
class PredictionReport:
    """Counts of a prediction run."""

    lines: int = 0
    unknown: int = 0
    undetermined: int = 0
    unreadable: int = 0


def load_memory(train_dir: Path, split: str, reader: BagReader) -> ReactionMemory:
    """Memorise ``src-<split>.txt``/``tgt-<split>.txt`` of a dataset folder."""
    src, tgt = train_dir / f"src-{split}.txt", train_dir / f"tgt-{split}.txt"
    for path in (src, tgt):
        if not path.is_file():
            raise UserInputError(f"{path}: no such training file (is {train_dir} a folder written by 'build'?)")
    memory = ReactionMemory()
    for (number, src_line), (_, tgt_line) in zip(iter_lines(src), iter_lines(tgt), strict=False):
        try:
            source, target = reader.parse(src_line, "src"), reader.parse(tgt_line, "tgt")
        except BagError as exc:
            raise UserInputError(f"{src} / {tgt} line {number}: {exc}") from None
        memory.add(source.coefficients, target.coefficients)
    return memory


def predict_lines(
    baseline: str, source_lines: list[str], reader: BagReader, *, memory: ReactionMemory | None = None,
    oracle_lines: list[str] | None = None,
) -> tuple[list[str], PredictionReport]:
    """Predict a target bag for every source line (module doc)."""
    if baseline not in BASELINES:
        raise UserInputError(f"unknown baseline {baseline!r}; choose one of {', '.join(BASELINES)}")
    if memory is None and oracle_lines is None:
        raise ValueError("predict_lines needs a memory or oracle target lines")
    report = PredictionReport()
    outputs: list[str] = []
    cache: dict[tuple, dict[str, int] | None] = {}
    for index, line in enumerate(source_lines):
        report.lines += 1
        try:
            source = reader.parse(line, "src")
        except BagError:
            report.unreadable += 1
            outputs.append("")
            continue
        inputs = source.coefficients
        known = dict(source.species)
        if oracle_lines is not None:
            try:
                oracle = reader.parse(oracle_lines[index], "tgt")
            except BagError:
                oracle = ParsedBag({}, {})
            known.update(oracle.species)
            universe = sorted(inputs.keys() | oracle.coefficients.keys())
            fixed: set[str] = set()
            hint = None
            produced = set(oracle.coefficients) - set(inputs)
            consumed = set(inputs) - set(oracle.coefficients)
        else:
            entry = memory.lookup(set(inputs)) if memory else None
            if entry is None:
                report.unknown += 1
                outputs.append(format_bag(inputs))
                continue
            universe = list(entry.species)
            fixed = set(entry.reagents)
            hint = dict(zip(entry.species, entry.direction, strict=True))
            produced = entry.produced()
            consumed = {s for s, d in hint.items() if d < 0}
            for species in universe:
                if species not in known:
                    known[species] = reader.table.get(species)
        key = (tuple(universe), tuple(sorted(fixed)), tuple(sorted((hint or {}).items())),
               tuple(sorted(produced)), tuple(sorted(consumed)))
        if key not in cache:
            cache[key] = reaction_direction(universe, fixed, known, hint, produced, consumed)
        nu = cache[key]
        if nu is None:
            report.undetermined += 1
            outputs.append(format_bag(inputs))
            continue
        reagents = {s for s in universe if s in inputs and nu.get(s, 0) == 0}
        if baseline == "algebraic":
            predicted = run_reaction(inputs, nu, min((inputs[s] for s in reagents), default=None))
        else:
            predicted = copy_coefficient(inputs, {s for s, v in nu.items() if v > 0}, reagents)
        outputs.append(format_bag(predicted))
    return outputs, report
