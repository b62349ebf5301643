"""Reading reactions into roles, checking their mass balance and re-balancing them.

Roles. Molecules in the middle field of ``reactants>reagents>products`` are reagents. A
molecule of the first field is a *reactant* when it contributes atoms to the product, decided
in this order: (1) a reaction-edits field (USPTO-15K, USPTO-MIT) names atom-map numbers of
the atoms whose bonds or hydrogens change; a molecule holding one of them is a reactant; (2)
otherwise, with atom maps on both sides, a molecule whose mapped heavy atoms reach the
product; (3) otherwise the conservative rule of
:func:`chemassay.chem.reactions.detect_reagents`. The other molecules of the first field are
reagents. Reagents are copied to both sides, as ChemAlgebra does, so they never affect the
balance.

Each input line becomes an :class:`Outcome`: its status (``balanced``, ``rebalanced``,
``ambiguous``, ``unexplained`` or ``invalid``), the element imbalance before re-balancing,
a reason, and for the first two statuses the :class:`BalancedReaction` (species as
canonical SMILES with their multiplicities; co-reactants join the reactants, by-products the
products). Lines are processed in parallel chunks; each worker parses every distinct molecule
text once and solves every distinct imbalance once.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from chemassay.chem.formula import MAX_COUNT_DIGITS, FormulaError
from chemassay.chem.molecules import InvalidSmiles, try_canonical
from chemassay.chem.reactions import InvalidReaction, Reaction, detect_reagents, strip_cxsmiles
from chemassay.contract.errors import UserInputError
from chemassay.contract.result import DatasetRef, SkippedItem, make_result
from chemassay.runtime.files import atomic_writer
from chemassay.runtime.parallel import Failure, parallel_map
from chemassay.suites.stoichiometry.balance import (
    BALANCED,
    INVALID,
    REBALANCED,
    STATUSES,
    UNEXPLAINED,
    ByproductSolver,
    reference_rebalance,
)
from chemassay.suites.stoichiometry.data import ReactionSource
from chemassay.suites.stoichiometry.details import BalanceDetails
from chemassay.suites.stoichiometry.library import ByproductLibrary, load_library
from chemassay.suites.stoichiometry.metrics import PAPER_TABLE_1
from chemassay.suites.stoichiometry.species import Species, SpeciesTable

_MAPPED_ATOM = re.compile(r"\[([^\]]+?):(\d+)\]")
_MAP_NUMBER = re.compile(r":(\d+)\]")
_SYMBOL = re.compile(r"^\d*([A-Z][a-z]?|[a-z][a-z]?)")
_COEFFICIENT = re.compile(r"^\{(\d+)\}")
CHUNK_SIZE = 2000

Side = tuple[tuple[str, int], ...]


@dataclass(frozen=True, slots=True)
class BalancedReaction:
    """A reaction by roles: ``(species key, multiplicity)`` per role, in first-seen order.

    Keys are canonical SMILES (formulas for formula-bag input). Outcomes hold it balanced
    (``reaction``) and, when asked, as read (``original``).
    """

    reactants: Side
    reagents: Side
    products: Side

    def species(self) -> list[str]:
        """Every species key once, reactants first, then reagents, then products."""
        seen: dict[str, None] = {}
        for side in (self.reactants, self.reagents, self.products):
            for key, _ in side:
                seen.setdefault(key, None)
        return list(seen)


@dataclass(slots=True)
class Outcome:
    """What happened to one input reaction (see module doc)."""

    split: str
    line: int
    status: str
    reason: str = ""
    delta: str = ""
    elements: tuple[str, ...] = ()
    roles: str = ""
    reaction: BalancedReaction | None = None
    original: BalancedReaction | None = None


@dataclass(frozen=True)
class RebalanceConfig:
    """Settings of the balance check shared by every worker (picklable)."""

    library_path: str | None = None
    max_byproducts: int = 6
    encoding: str = "smiles"
    rebalance: bool = True
    keep_original: bool = False
    method: str = "library"


@dataclass
class ProcessedSource:
    """All outcomes of a source, per split, and every species they mention."""

    outcomes: dict[str, list[Outcome]]
    species: dict[str, Species]
    library: ByproductLibrary
    config: RebalanceConfig
    failures: list[str] = field(default_factory=list)

    def counts(self, split: str | None = None) -> dict[str, int]:
        """Number of reactions per status (all splits, or one)."""
        selected = self.outcomes.values() if split is None else [self.outcomes.get(split, [])]
        tally = Counter(o.status for group in selected for o in group)
        return {status: tally.get(status, 0) for status in STATUSES}

    def usable(self, split: str) -> list[BalancedReaction]:
        """The balanced and re-balanced reactions of a split, in input order."""
        return [o.reaction for o in self.outcomes.get(split, []) if o.reaction is not None]

    def as_read(self, split: str) -> list[BalancedReaction]:
        """Every valid reaction of a split with its roles as read (needs ``keep_original``)."""
        return [o.original for o in self.outcomes.get(split, []) if o.original is not None]


_STATE: dict[tuple, tuple[dict[str, SpeciesTable], ByproductSolver]] = {}


def _state(config: RebalanceConfig) -> tuple[dict[str, SpeciesTable], ByproductSolver]:
    key = (config.library_path, config.max_byproducts)
    found = _STATE.get(key)
    if found is None:
        solver = ByproductSolver(load_library(config.library_path), config.max_byproducts)
        found = ({"smiles": SpeciesTable("smiles"), "formula": SpeciesTable("formula")}, solver)
        _STATE[key] = found
    return found


def edit_atoms(edits: str | None) -> set[int]:
    """Atom-map numbers named by a reaction-edits field (``29;;29-30-2.0;29-30-3.0``, ``15-6;6-8``)."""
    atoms: set[int] = set()
    if not edits:
        return atoms
    for item in re.split(r"[;,]", edits):
        for part in item.split("-")[:2]:
            if part.isdigit():
                atoms.add(int(part))
    return atoms


def _map_numbers(text: str) -> set[int]:
    """Every atom-map number of a molecule text."""
    return {int(n) for n in _MAP_NUMBER.findall(text)}


def _heavy_map_numbers(text: str) -> set[int]:
    """Atom-map numbers of the heavy (non-hydrogen) atoms of a molecule text."""
    heavy: set[int] = set()
    for body, number in _MAPPED_ATOM.findall(text):
        symbol = _SYMBOL.match(body)
        if symbol and symbol.group(1) != "H":
            heavy.add(int(number))
    return heavy


def assign_roles(reaction: Reaction, edits: str | None) -> tuple[list[str], list[str], str]:
    """Split the first field of ``reaction`` into reactants and reagents; see module doc.

    Returns ``(reactants, reagents, method)``; reagents of the middle field are included.
    When every rule calls every molecule a reagent, molecules found unchanged among the
    products are the reactants (a salt freed to its base).
    Raises :class:`InvalidReaction` when no molecule contributes atoms to the product.
    """
    candidates = reaction.reactants
    edited = edit_atoms(edits)
    keep: list[bool] = []
    if edited:
        keep = [bool(_map_numbers(text) & edited) for text in candidates]
    method = "edits"
    if not any(keep):
        product_maps: set[int] = set()
        for text in reaction.products:
            product_maps |= _map_numbers(text)
        keep = [bool(_heavy_map_numbers(text) & product_maps) for text in candidates] if product_maps else []
        method = "maps"
    if not any(keep):
        method = "heuristic"
        keep = [not is_reagent for is_reagent in detect_reagents(reaction)]
    if not any(keep):
        # every molecule looks like a reagent, e.g. a salt freed to its base (the product is
        # a first-field molecule unchanged): that molecule is the reactant
        products = {try_canonical(text) for text in reaction.products}
        keep = [try_canonical(text) in products for text in candidates]
        method = "unchanged"
    if not any(keep):
        raise InvalidReaction(reaction.to_smiles(), "no reactant contributes atoms to the product")
    reactants = [t for t, k in zip(candidates, keep, strict=True) if k]
    reagents = [t for t, k in zip(candidates, keep, strict=True) if not k] + list(reaction.reagents)
    return reactants, reagents, method


def _bag_side(text: str, table: SpeciesTable) -> list[tuple[Species, int]]:
    items = []
    for chunk in text.split("."):
        if not chunk:
            continue
        match = _COEFFICIENT.match(chunk)
        if match and len(match.group(1)) > MAX_COUNT_DIGITS:
            raise InvalidReaction(text[:200], f"coefficient of {chunk[:20]!r}... has {len(match.group(1)):,} digits "
                                              f"(at most {MAX_COUNT_DIGITS})")
        coefficient = int(match.group(1)) if match else 1
        body = chunk[match.end():] if match else chunk
        if coefficient < 1 or not body:
            raise InvalidReaction(text, f"bad bag item {chunk!r}")
        items.append((table.get(body), coefficient))
    return items


def _side(items: list[tuple[Species, int]], key: str) -> Side:
    counted: dict[str, int] = {}
    for species, multiplicity in items:
        name = species.smiles if key == "smiles" else species.formula
        counted[name] = counted.get(name, 0) + multiplicity
    return tuple(counted.items())


def _delta(left: list[tuple[Species, int]], right: list[tuple[Species, int]]) -> tuple[dict[str, int], int]:
    delta: Counter = Counter()
    charge = 0
    for species, multiplicity in left:
        for element, count in species.counts:
            delta[element] += multiplicity * count
        charge += multiplicity * species.charge
    for species, multiplicity in right:
        for element, count in species.counts:
            delta[element] -= multiplicity * count
        charge -= multiplicity * species.charge
    return {e: c for e, c in delta.items() if c}, charge


def delta_text(delta: dict[str, int], charge: int) -> str:
    """Imbalance as text: ``Cl+1 H+1`` (reactants minus products), ``charge-1`` last."""
    parts = [f"{e}{c:+d}" for e, c in sorted(delta.items())]
    if charge:
        parts.append(f"charge{charge:+d}")
    return " ".join(parts)


def _split_reaction(text: str) -> Reaction:
    # the text holds no whitespace (it is one token of the line), so the checks of
    # chemassay.chem.reactions.parse_reaction reduce to the field count
    fields = text.split(">")
    if len(fields) != 3:
        raise InvalidReaction(text, f"expected 'reactants>reagents>products' (2 '>' signs), found {len(fields) - 1}")
    reactants, reagents, products = ([m for m in f.split(".") if m] for f in fields)
    if not reactants and not reagents:
        raise InvalidReaction(text, "no reactants")
    return Reaction(reactants, reagents, products)


def process_line(split: str, line: int, text: str, config: RebalanceConfig) -> tuple[Outcome, list[Species]]:
    """Roles, balance check and re-balancing of one input line (see module doc)."""
    tables, solver = _state(config)
    parts = strip_cxsmiles(text).split()
    reaction_text = parts[0] if parts else ""
    edits = parts[1] if len(parts) > 1 else None
    try:
        if "{" in reaction_text:
            key = config.encoding
            table = tables[key]
            fields = reaction_text.split(">")
            if len(fields) not in (2, 3):
                raise InvalidReaction(reaction_text, "expected 'LEFT>>RIGHT' or 'LEFT>REAGENTS>RIGHT'")
            left = _bag_side(fields[0], table)
            reagents = _bag_side(fields[1], table) if len(fields) == 3 else []
            right = _bag_side(fields[-1], table)
            method = "bags"
        else:
            key = "smiles"
            table = tables[key]
            reaction = _split_reaction(reaction_text)
            if not reaction.products:
                raise InvalidReaction(reaction_text, "no products")
            reactant_texts, reagent_texts, method = assign_roles(reaction, edits)
            left = [(table.get(t), 1) for t in reactant_texts]
            reagents = [(table.get(t), 1) for t in reagent_texts]
            right = [(table.get(t), 1) for t in reaction.products]
        if not right:
            raise InvalidReaction(reaction_text, "no products")
    except (InvalidReaction, InvalidSmiles, FormulaError) as exc:
        return Outcome(split, line, INVALID, reason=str(exc)), []
    delta, charge = _delta(left, right)
    used = [s for s, _ in left + reagents + right]
    outcome = Outcome(split, line, BALANCED, delta=delta_text(delta, charge), roles=method,
                      elements=tuple(sorted(delta)) + (("charge",) if charge else ()))
    if config.keep_original:
        outcome.original = BalancedReaction(_side(left, key), _side(reagents, key), _side(right, key))
    if config.method == "reference" and key == "smiles" and config.rebalance:
        return _reference_outcome(outcome, left, reagents, right, tables["smiles"], used), used
    if delta or charge:
        explanation = solver.explain(delta, charge) if config.rebalance else None
        if explanation is None:
            outcome.status = "unexplained"
            outcome.reason = "re-balancing disabled"
            return outcome, used
        outcome.status = explanation.status
        outcome.reason = explanation.describe(solver.library)
        if explanation.status != REBALANCED:
            return outcome, used
        for addition in explanation.additions:
            entry = solver.library.entries[addition.entry]
            added = [(molecule, addition.count) for molecule in entry.molecules]
            (right if addition.side == "products" else left).extend(added)
            used.extend(entry.molecules)
    outcome.reaction = BalancedReaction(_side(left, key), _side(reagents, key), _side(right, key))
    return outcome, used


def _reference_outcome(outcome: Outcome, left, reagents, right, table: SpeciesTable, used: list[Species]) -> Outcome:
    """Balance status and re-balanced reaction by the authors' procedure (see balance.py)."""
    reactant_smiles = [s.smiles for s, m in left for _ in range(m)]
    product_smiles = [s.smiles for s, m in right for _ in range(m)]
    status, to_products, to_reactants = reference_rebalance(reactant_smiles, product_smiles)
    outcome.status = status
    if status == UNEXPLAINED:
        outcome.reason = "left-over atoms do not form a valid molecule"
        return outcome
    if status == REBALANCED:
        outcome.reason = "left-over molecule(s): " + ", ".join(
            [f"products + {m}" for m in to_products] + [f"reactants + {m}" for m in to_reactants])
        right = right + [(table.get(m), 1) for m in to_products]
        left = left + [(table.get(m), 1) for m in to_reactants]
        used.extend(table.get(m) for m in to_products + to_reactants)
    outcome.reaction = BalancedReaction(_side(left, "smiles"), _side(reagents, "smiles"), _side(right, "smiles"))
    return outcome


def _process_chunk(chunk: list[tuple[str, int, str]], config: RebalanceConfig) -> tuple[list[Outcome], dict[str, Species]]:
    outcomes = []
    species: dict[str, Species] = {}
    for split, line, text in chunk:
        outcome, used = process_line(split, line, text, config)
        outcomes.append(outcome)
        for item in used:
            species.setdefault(item.smiles or item.formula, item)
    return outcomes, species


def process_source(
    source: ReactionSource,
    config: RebalanceConfig,
    *,
    splits: list[str] | None = None,
    limit: int | None = None,
    n_jobs: int = 1,
    repeat: int = 1,
) -> ProcessedSource:
    """Process every line of the selected splits (first ``limit`` lines of each if given).

    ``repeat`` processes each split's lines that many times over (the benchmark's synthetic
    large set); outcomes keep the original line numbers.
    """
    library = load_library(config.library_path)
    items: list[tuple[str, int, str]] = []
    wanted = [f for f in source.files if splits is None or f.split in splits]
    for split_file in wanted:
        lines = []
        for number, text in split_file.lines():
            lines.append((split_file.split, number, text))
            if limit is not None and len(lines) >= limit:
                break
        items.extend(lines * repeat)
    chunks = [items[i:i + CHUNK_SIZE] for i in range(0, len(items), CHUNK_SIZE)]
    results = parallel_map(
        partial(_process_chunk, config=config), chunks, n_jobs=n_jobs, chunk_size=1,
        description="balancing reactions",
    )
    outcomes: dict[str, list[Outcome]] = {f.split: [] for f in wanted}
    species: dict[str, Species] = {}
    failures = []
    for chunk, result in zip(chunks, results, strict=True):
        if isinstance(result, Failure):
            # a bug, not bad input: keep every line of the chunk, marked invalid with the error
            failures.append(str(result))
            for split, line, _ in chunk:
                outcomes[split].append(Outcome(split, line, INVALID, reason=f"internal error: {result}"))
            continue
        chunk_outcomes, chunk_species = result
        for outcome in chunk_outcomes:
            outcomes[outcome.split].append(outcome)
        for key, value in chunk_species.items():
            species.setdefault(key, value)
    return ProcessedSource(outcomes, species, library, config, failures)


# --- the result of a balance run (``chemassay.stoichiometry.balance`` and the demo) ----------


def balance_rows(processed: ProcessedSource) -> tuple[dict, dict]:
    """Table-1 counts and percentages overall and per split: ``reactions`` (every line read),
    one count per status, ``usable`` (balanced + re-balanced) and the three percentages."""
    def row(counts: dict[str, int]) -> dict:
        total = sum(counts.values())
        usable = counts[BALANCED] + counts[REBALANCED]
        return {
            "reactions": total, **counts, "usable": usable,
            "balanced_pct": 100 * counts[BALANCED] / total if total else None,
            "rebalanced_pct": 100 * counts[REBALANCED] / total if total else None,
            "usable_pct": 100 * usable / total if total else None,
        }

    return row(processed.counts()), {split: row(processed.counts(split)) for split in processed.outcomes}


BALANCE_METRICS = ("reactions", BALANCED, REBALANCED, "ambiguous", UNEXPLAINED, INVALID,
                   "balanced_pct", "rebalanced_pct", "usable_pct")


def check_readable(processed: ProcessedSource, source: ReactionSource) -> None:
    """Refuse a source with nothing to balance: no reaction line at all, or no valid one."""
    outcomes = [o for group in processed.outcomes.values() for o in group]
    where = ", ".join(f.describe() for f in source.files if f.split in processed.outcomes) or source.name
    if not outcomes:
        raise UserInputError(
            f"{where}: no reaction lines (every line is blank or a # comment); give one reaction per line "
            "(reactants>reagents>products SMILES, optionally followed by its edits, or {n}X bags LEFT>>RIGHT)"
        )
    if all(o.status == INVALID for o in outcomes):
        first = outcomes[0]
        raise UserInputError(
            f"{where}: none of its {len(outcomes)} lines is a reaction (line {first.line}: {first.reason}); give one "
            "reaction per line (reactants>reagents>products SMILES, or {n}X bags LEFT>>RIGHT), not JSON or CSV"
        )


def balance_result(processed: ProcessedSource, source: ReactionSource, *, limit: int | None = None,
                   started: float | None = None):
    """The ``balance`` result of a processed source: Table-1 metrics (keys
    :data:`BALANCE_METRICS`), invalid lines as ``skipped``, and in its details the per-split
    rows, element imbalances, the most frequent explanations and the paper's Table 1 beside
    them. Balancing one split only states it as the setting (``split``), in the vocabulary of
    the paper's Table 1; ``started`` is the :func:`time.perf_counter` reading the work began at."""
    overall, per_split = balance_rows(processed)
    outcomes = [o for group in processed.outcomes.values() for o in group]
    element_counts = Counter(e for o in outcomes if o.status != INVALID for e in o.elements)
    explanations = Counter(o.reason for o in outcomes if o.status == REBALANCED)
    unexplained = Counter(o.reason for o in outcomes if o.status == UNEXPLAINED)
    config = processed.config
    splits = list(processed.outcomes)
    details = BalanceDetails(
        per_split=per_split, element_imbalance=dict(element_counts.most_common()),
        top_explanations=dict(explanations.most_common(30)), top_unexplained=dict(unexplained.most_common(15)),
        paper_table_1_uspto_mit=PAPER_TABLE_1,
    )
    return make_result(
        "stoichiometry", "balance", metrics={key: overall[key] for key in BALANCE_METRICS},
        n=overall["reactions"] - overall[INVALID], started=started, inputs=source.input_refs(), details=details,
        skipped=[SkippedItem(line=o.line, item=o.split, reason=o.reason) for o in outcomes if o.status == INVALID],
        dataset=DatasetRef(name=source.dataset) if source.dataset else None,
        setting={"split": splits[0]} if len(splits) == 1 and splits[0] in ("train", "valid", "test") else {},
        config={"library": processed.library.describe(), "max_byproducts": config.max_byproducts,
                "encoding": config.encoding, "rebalance": config.rebalance, "method": config.method,
                "splits": splits, "limit": limit},
    )


def write_details(processed: ProcessedSource, path) -> None:
    """One TSV row per reaction: split, line, status, imbalance, how roles were found, reason."""
    with atomic_writer(path) as handle:
        handle.write("split\tline\tstatus\timbalance\troles\treason\n")
        for outcomes in processed.outcomes.values():
            for o in outcomes:
                handle.write(f"{o.split}\t{o.line}\t{o.status}\t{o.delta}\t{o.roles}\t{o.reason}\n")


def write_balanced(processed: ProcessedSource, folder) -> None:
    """The balanced and re-balanced reactions (USPTO-BAL), one ``<split>.txt`` of
    ``reactants>reagents>products`` per split (each species repeated by its multiplicity)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for split, outcomes in processed.outcomes.items():
        with atomic_writer(folder / f"{split}.txt") as handle:
            for outcome in outcomes:
                reaction = outcome.reaction
                if reaction is None:
                    continue
                fields = [
                    ".".join(key for key, m in side for _ in range(m))
                    for side in (reaction.reactants, reaction.reagents, reaction.products)
                ]
                handle.write(">".join(fields) + "\n")
