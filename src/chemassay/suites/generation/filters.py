"""The MOSES dataset-construction filters, usable on any set of molecules.

MOSES kept a ZINC molecule only if it passed every one of these checks (the reference code
is ``moses.metrics.utils.mol_passes_filters``, which also defines the ``Filters`` metric):

``ring_size``
    no ring of 8 or more atoms. The paper says "cycles longer than 8 atoms"; the reference
    code tests ``len(ring) >= 8`` on RDKit's ring perception, so 8-membered rings are
    removed too. We follow the code (``max_ring_size=7``), which is what built the data set.
``charge``
    no atom with a non-zero formal charge.
``atoms``
    only the elements C, N, S, O, F, Cl, Br and H.
``mcf`` / ``pains``
    no match of the 22 medicinal-chemistry filters (``data/mcf.csv``) or of the 480 PAINS
    patterns (``data/wehi_pains.csv``), matched on the molecule with explicit hydrogens
    (several patterns name hydrogens). The reference tests both lists as one; we report
    them separately.
``roundtrip``
    the non-isomeric canonical SMILES is non-empty and parses again.

A molecule that does not parse fails ``parse``. Checks run in the reference order
(parse, ring size, charge, atoms, MCF, PAINS, roundtrip); a molecule's *first* failure is
the filter that removed it, while :attr:`FilterVerdict.failures` lists every filter it fails.
"""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
from rdkit import Chem, DataStructs

from chemassay.chem.molecules import InvalidSmiles, parse_smiles, safe_mol_from_smiles
from chemassay.runtime.parallel import Failure, parallel_map

DATA_DIR = Path(__file__).resolve().parent / "data"
ALLOWED_ATOMS: frozenset[str] = frozenset({"C", "N", "S", "O", "F", "Cl", "Br", "H"})
MAX_RING_SIZE = 7
PATTERN_FP_BITS = 2048
FILTER_NAMES: tuple[str, ...] = ("parse", "ring_size", "charge", "atoms", "mcf", "pains", "roundtrip")


def parse_like_moses(smiles: str) -> Chem.Mol:
    """Parse SMILES exactly as MOSES does (RDKit ``MolFromSmiles``, explicit H removed).

    RDKit's own parse decides (through the core's
    :func:`~chemassay.chem.safe_mol_from_smiles`, which refuses SMILES over the size limits
    before RDKit works on them), and :func:`~chemassay.chem.parse_smiles` only supplies the
    reason when it fails. Raises :class:`~chemassay.chem.molecules.InvalidSmiles`.
    """
    if isinstance(smiles, str) and smiles.strip() and not any(ch.isspace() for ch in smiles.strip()):
        mol = safe_mol_from_smiles(smiles.strip())
        if mol is not None:
            return mol
    parse_smiles(smiles)
    raise InvalidSmiles(str(smiles), "RDKit could not parse it")


@dataclass(frozen=True)
class StructuralAlert:
    """One substructure filter: its name, SMARTS, source list (``MCF``/``PAINS``) and pattern."""

    name: str
    smarts: str
    source: str
    pattern: Chem.Mol = field(compare=False, repr=False)


def _read_alert_file(path: Path, source: str, has_header: bool) -> list[StructuralAlert]:
    alerts = []
    with open(path, encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    if has_header:
        header = [cell.strip() for cell in rows[0]]
        smarts_at, name_at = header.index("smarts"), header.index("names")
        rows = rows[1:]
    else:
        smarts_at, name_at = 0, 1
    for row in rows:
        if not row:
            continue
        smarts = row[smarts_at].strip()
        name = row[name_at].strip()
        pattern = Chem.MolFromSmarts(smarts)
        if pattern is None:  # the shipped files all parse; a broken edit must not pass silently
            raise ValueError(f"{path}: SMARTS of {name!r} does not parse")
        alerts.append(StructuralAlert(name, smarts, source, pattern))
    return alerts


@lru_cache(maxsize=1)
def structural_alerts() -> tuple[StructuralAlert, ...]:
    """The MOSES alerts: 22 MCF patterns then 480 PAINS patterns, as shipped with MOSES."""
    mcf = _read_alert_file(DATA_DIR / "mcf.csv", "MCF", has_header=True)
    pains = _read_alert_file(DATA_DIR / "wehi_pains.csv", "PAINS", has_header=False)
    return tuple(mcf + pains)


def largest_ring_size(mol: Chem.Mol) -> int:
    """Atom count of the largest ring in RDKit's ring perception (0 for acyclic molecules)."""
    rings = mol.GetRingInfo().AtomRings()
    return max((len(ring) for ring in rings), default=0)


def has_no_large_rings(mol: Chem.Mol, max_ring_size: int = MAX_RING_SIZE) -> bool:
    """True when every ring has at most ``max_ring_size`` atoms (MOSES: 7)."""
    return largest_ring_size(mol) <= max_ring_size


def has_no_charged_atoms(mol: Chem.Mol) -> bool:
    """True when no atom carries a formal charge."""
    return all(atom.GetFormalCharge() == 0 for atom in mol.GetAtoms())


def has_only_allowed_atoms(mol: Chem.Mol, allowed: Iterable[str] = ALLOWED_ATOMS) -> bool:
    """True when every atom's element symbol is in ``allowed`` (MOSES: C N S O F Cl Br H)."""
    allowed_set = set(allowed)
    return all(atom.GetSymbol() in allowed_set for atom in mol.GetAtoms())


class _AlertScreen:
    """Pattern-fingerprint pre-screen of the alerts: a pattern whose fingerprint bits are not
    all set in the molecule's cannot match, so only the few remaining ones are matched.

    RDKit builds query fingerprints conservatively (query features it cannot encode set no
    bit), the screen RDKit's own substructure library relies on; the tests compare screened
    and unscreened matching on real molecules with many alert hits.
    """

    def __init__(self, alerts: tuple[StructuralAlert, ...]) -> None:
        self.alerts = alerts
        self.query_words = np.stack([_pattern_words(alert.pattern) for alert in alerts])

    def candidates(self, with_hydrogens: Chem.Mol) -> np.ndarray:
        """Indices of the alerts that may match (all that do are among them)."""
        words = _pattern_words(with_hydrogens)
        return np.flatnonzero(~np.any(self.query_words & ~words, axis=1))


def _pattern_words(mol: Chem.Mol) -> np.ndarray:
    dense = np.zeros(PATTERN_FP_BITS, dtype=np.uint8)
    DataStructs.ConvertToNumpyArray(Chem.PatternFingerprint(mol, fpSize=PATTERN_FP_BITS), dense)
    return np.packbits(dense)


@lru_cache(maxsize=1)
def _alert_screen() -> _AlertScreen:
    return _AlertScreen(structural_alerts())


def _matching_alert_indices(with_hydrogens: Chem.Mol, *, screen: bool, first_only: bool) -> list[int]:
    alerts = structural_alerts()
    order = _alert_screen().candidates(with_hydrogens) if screen else range(len(alerts))
    found = []
    for index in order:
        if with_hydrogens.HasSubstructMatch(alerts[index].pattern):
            found.append(int(index))
            if first_only:
                break
    return found


def matching_alerts(
    mol: Chem.Mol, source: str | None = None, *, screen: bool = True
) -> list[StructuralAlert]:
    """The structural alerts (``source``: ``"MCF"``, ``"PAINS"`` or both) that ``mol`` matches.

    Matching is done on a copy with explicit hydrogens, as in MOSES. ``screen=False`` skips
    the pattern-fingerprint pre-screen (same answer, several times slower).
    """
    with_hydrogens = Chem.AddHs(mol)
    alerts = structural_alerts()
    return [
        alerts[index]
        for index in _matching_alert_indices(with_hydrogens, screen=screen, first_only=False)
        if source is None or alerts[index].source == source
    ]


def survives_roundtrip(mol: Chem.Mol) -> bool:
    """True when the non-isomeric canonical SMILES is non-empty and parses again."""
    text = Chem.MolToSmiles(mol, isomericSmiles=False)
    if not text:
        return False
    return safe_mol_from_smiles(text) is not None


@dataclass(frozen=True)
class FilterVerdict:
    """Outcome of the MOSES filters for one molecule.

    ``failures`` lists every filter the molecule fails (in the reference order), ``alerts``
    the names of the MCF/PAINS patterns it matches, ``reason`` a parse error if any.
    """

    failures: tuple[str, ...] = ()
    alerts: tuple[str, ...] = ()
    reason: str = ""

    @property
    def passed(self) -> bool:
        return not self.failures

    @property
    def first_failure(self) -> str | None:
        """The filter that removes the molecule when the checks run in order."""
        return self.failures[0] if self.failures else None


def filter_verdict(
    molecule: str | Chem.Mol,
    *,
    allowed: Iterable[str] = ALLOWED_ATOMS,
    max_ring_size: int = MAX_RING_SIZE,
    screen: bool = True,
) -> FilterVerdict:
    """Run every MOSES filter on one molecule (SMILES or RDKit molecule); never raises."""
    if isinstance(molecule, Chem.Mol):
        mol = molecule
    else:
        try:
            mol = parse_like_moses(molecule)
        except InvalidSmiles as exc:
            return FilterVerdict(("parse",), (), exc.reason)
    failures = []
    if not has_no_large_rings(mol, max_ring_size):
        failures.append("ring_size")
    if not has_no_charged_atoms(mol):
        failures.append("charge")
    if not has_only_allowed_atoms(mol, allowed):
        failures.append("atoms")
    alerts = matching_alerts(mol, screen=screen)
    sources = {alert.source for alert in alerts}
    if "MCF" in sources:
        failures.append("mcf")
    if "PAINS" in sources:
        failures.append("pains")
    if not survives_roundtrip(mol):
        failures.append("roundtrip")
    return FilterVerdict(tuple(failures), tuple(alert.name for alert in alerts))


def passes_filters(
    molecule: str | Chem.Mol,
    *,
    allowed: Iterable[str] = ALLOWED_ATOMS,
    max_ring_size: int = MAX_RING_SIZE,
    screen: bool = True,
) -> bool:
    """True when the molecule passes every MOSES filter (``mol_passes_filters`` of MOSES).

    Unparseable SMILES do not pass. Stops at the first failing check, so it is cheaper
    than :func:`filter_verdict` on molecules that fail early.
    """
    if isinstance(molecule, Chem.Mol):
        mol = molecule
    else:
        try:
            mol = parse_like_moses(molecule)
        except InvalidSmiles:
            return False
    if not (
        has_no_large_rings(mol, max_ring_size)
        and has_no_charged_atoms(mol)
        and has_only_allowed_atoms(mol, allowed)
    ):
        return False
    if _matching_alert_indices(Chem.AddHs(mol), screen=screen, first_only=True):
        return False
    return survives_roundtrip(mol)


@dataclass
class FilterSummary:
    """Filter outcome of a molecule set.

    ``kept`` holds the indices of passing molecules; ``verdicts`` one verdict per input;
    ``removed_by`` counts molecules by their first failing filter (these add up to the
    number removed), ``failing`` counts every molecule failing each filter, and
    ``alert_hits`` the molecules matching each MCF/PAINS pattern.
    """

    verdicts: list[FilterVerdict]
    kept: list[int]
    removed_by: dict[str, int]
    failing: dict[str, int]
    alert_hits: dict[str, int]

    @property
    def n_input(self) -> int:
        return len(self.verdicts)

    @property
    def n_removed(self) -> int:
        return self.n_input - len(self.kept)


def _verdict_task(args: tuple[str, tuple[str, ...], int, bool]) -> FilterVerdict:
    smiles, allowed, max_ring_size, screen = args
    return filter_verdict(smiles, allowed=allowed, max_ring_size=max_ring_size, screen=screen)


def filter_molecules(
    smiles: Sequence[str],
    *,
    allowed: Iterable[str] = ALLOWED_ATOMS,
    max_ring_size: int = MAX_RING_SIZE,
    screen: bool = True,
    n_jobs: int = 1,
    show_progress: bool | None = None,
) -> FilterSummary:
    """Apply the MOSES filters to every SMILES and count what each filter removes."""
    allowed_tuple = tuple(sorted(set(allowed)))
    tasks = [(s, allowed_tuple, max_ring_size, screen) for s in smiles]
    results = parallel_map(
        _verdict_task, tasks, n_jobs=n_jobs, description="filtering", show_progress=show_progress
    )
    verdicts: list[FilterVerdict] = []
    for result in results:
        if isinstance(result, Failure):  # an RDKit crash on one molecule counts as unparseable
            verdicts.append(FilterVerdict(("parse",), (), f"{result.error_type}: {result.message}"))
        else:
            verdicts.append(result)
    removed_by = dict.fromkeys(FILTER_NAMES, 0)
    failing = dict.fromkeys(FILTER_NAMES, 0)
    alert_hits: Counter[str] = Counter()
    kept = []
    for index, verdict in enumerate(verdicts):
        if verdict.passed:
            kept.append(index)
            continue
        removed_by[verdict.first_failure] += 1
        for name in verdict.failures:
            failing[name] += 1
        alert_hits.update(verdict.alerts)
    return FilterSummary(verdicts, kept, removed_by, failing, dict(alert_hits.most_common()))
