"""Per-molecule quantities behind the MOSES metrics, computed in one pass per molecule.

MOSES (``moses.metrics``) parses a generated SMILES, writes its canonical SMILES, and then
parses that canonical SMILES again: every metric after ``valid`` works on the molecule
re-read from its canonical form. This module reproduces that pipeline and, for each
distinct canonical SMILES, computes everything the metrics need in one go, so a molecule
is parsed once per stage and never again:

* the canonical SMILES of the re-read molecule (what ``unique@k``, ``Novelty`` and the
  ChemNet input of FCD use),
* the Morgan fingerprint (radius 2, 1024 bits) packed into 128 bytes (SNN, IntDiv),
* Crippen logP, SA score, QED and molecular weight (the Wasserstein metrics),
* whether it passes the MOSES filters (``Filters``),
* its BRICS fragments (``Frag``) and Bemis-Murcko scaffold with at least two rings
  (``Scaf``).

The functions here take and return plain Python values so they can run in worker
processes (:func:`chemassay.runtime.parallel_map`).
"""

from __future__ import annotations

import csv
import gzip
import math
import pickle
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from rdkit import Chem, RDConfig
from rdkit.Chem import (
    QED,
    Crippen,
    Descriptors,
    MolSurf,
    rdFingerprintGenerator,
    rdMolDescriptors,
    rdqueries,
)
from rdkit.Chem.Scaffolds import MurckoScaffold

from chemassay.chem.molecules import (
    InvalidSmiles,
    parse_smiles,
    rdkit_log_silenced,
    safe_mol_from_smiles,
)
from chemassay.contract.errors import UserInputError

MORGAN_RADIUS = 2
MORGAN_BITS = 1024
MIN_SCAFFOLD_RINGS = 2
DATA_DIR = Path(__file__).resolve().parent / "data"
# Pattern fingerprints used to screen the MCF/PAINS SMARTS (see ``_screened_alerts``).
PATTERN_FP_BITS = 2048


def moses_mol(smiles: str) -> Chem.Mol | None:
    """Parse like MOSES's ``get_mol``: empty text and unparsable SMILES give ``None``.

    RDKit's ``MolFromSmiles`` (which sanitizes and cleans up stereochemistry) through the
    core's :func:`~chemassay.chem.safe_mol_from_smiles`, so a SMILES over the core's size
    limits (characters, heavy atoms) is refused before RDKit works on it; then a second
    sanitization as in the reference. RDKit errors become ``None``.
    """
    if not smiles:
        return None
    mol = safe_mol_from_smiles(smiles)
    if mol is None:
        return None
    with rdkit_log_silenced():
        try:
            Chem.SanitizeMol(mol)
        except Exception:  # RDKit raises several exception types from sanitization
            return None
    return mol


def invalid_reason(smiles: str) -> str:
    """A short human reason why ``smiles`` is not a valid molecule (for the report)."""
    if not smiles:
        return "empty string"
    try:
        parse_smiles(smiles)
    except InvalidSmiles as exc:
        return exc.reason
    return "RDKit could not sanitize the molecule"


def canonicalize(smiles: str) -> str | None:
    """MOSES's ``canonic_smiles``: canonical SMILES of a valid SMILES, else ``None``."""
    mol = moses_mol(smiles)
    if mol is None:
        return None
    return Chem.MolToSmiles(mol)


# ---------------------------------------------------------------- SA score (Ertl & Schuffenhauer)


def _sa_fragment_scores_path() -> Path:
    return Path(RDConfig.RDContribDir) / "SA_Score" / "fpscores.pkl.gz"


@lru_cache(maxsize=1)
def sa_fragment_scores() -> dict[int, float]:
    """Fragment contributions of the SA score, keyed by Morgan (radius 2) environment id.

    The table is the one published with the method (``fpscores.pkl.gz``, computed by Ertl &
    Schuffenhauer from PubChem) as RDKit ships it in ``Contrib/SA_Score``; MOSES ships the
    same file byte for byte. Each record is ``[score, id, id, ...]``.
    """
    path = _sa_fragment_scores_path()
    if not path.is_file():
        raise UserInputError(
            f"{path}: RDKit's SA score fragment table is missing; install an RDKit build that "
            "includes Contrib (the PyPI 'rdkit' wheel does)"
        )
    with gzip.open(path, "rb") as handle:
        records = pickle.load(handle)
    table: dict[int, float] = {}
    for record in records:
        score = float(record[0])
        for env_id in record[1:]:
            table[env_id] = score
    return table


@lru_cache(maxsize=1)
def _sa_generator():
    return rdFingerprintGenerator.GetMorganGenerator(radius=2)


def sa_score(mol: Chem.Mol) -> float:
    """Synthetic accessibility score (1 easy .. 10 hard), Ertl & Schuffenhauer 2009.

    ``score1`` is the mean fragment contribution over the molecule's radius-2 Morgan
    environments (weighted by their counts; unknown environments score -4); ``score2``
    subtracts complexity penalties (size, stereocentres, spiro and bridgehead atoms,
    macrocycles: any ring larger than 8 counts once as ``log10 2``); ``score3`` is the
    fingerprint-density correction of version 1.1. The raw sum is rescaled from
    ``[-4, 2.5]`` to ``[10, 1]`` with the published smoothing above 8, as in RDKit's
    Contrib implementation used by MOSES.
    """
    table = sa_fragment_scores()
    environments = _sa_generator().GetSparseCountFingerprint(mol).GetNonzeroElements()
    total_count = 0
    fragment_sum = 0.0
    for env_id, count in environments.items():
        total_count += count
        fragment_sum += table.get(env_id, -4.0) * count
    fragment_score = fragment_sum / total_count

    n_atoms = mol.GetNumAtoms()
    n_chiral = len(Chem.FindMolChiralCenters(mol, includeUnassigned=True))
    n_bridgeheads = rdMolDescriptors.CalcNumBridgeheadAtoms(mol)
    n_spiro = rdMolDescriptors.CalcNumSpiroAtoms(mol)
    has_macrocycle = any(len(ring) > 8 for ring in mol.GetRingInfo().AtomRings())
    complexity = (
        -(n_atoms**1.005 - n_atoms)
        - math.log10(n_chiral + 1)
        - math.log10(n_spiro + 1)
        - math.log10(n_bridgeheads + 1)
        - (math.log10(2) if has_macrocycle else 0.0)
    )
    density = 0.0
    if n_atoms > len(environments):
        density = math.log(float(n_atoms) / len(environments)) * 0.5

    raw = fragment_score + complexity + density
    low, high = -4.0, 2.5
    scaled = 11.0 - (raw - low + 1) / (high - low) * 9.0
    if scaled > 8.0:
        scaled = 8.0 + math.log(scaled + 1.0 - 9.0)
    return min(10.0, max(1.0, scaled))


# ---------------------------------------------------------------- atom checks


@lru_cache(maxsize=1)
def _atom_queries() -> dict:
    """Query atoms for the per-atom checks, matched in one RDKit call per molecule.

    (Iterating ``mol.GetAtoms()`` from Python cost ~0.5 ms per molecule.) ``disallowed``
    matches any element outside C N S O F Cl Br H (dummy atoms included), as the MOSES
    test on element symbols does.
    """
    disallowed = None
    for number in (6, 7, 16, 8, 9, 17, 35, 1):  # C N S O F Cl Br H, MOSES's allowed elements
        query = rdqueries.AtomNumEqualsQueryAtom(number, negate=True)
        if disallowed is None:
            disallowed = query
        else:
            disallowed.ExpandQuery(query)  # AND: none of the allowed elements
    return {
        "hydrogen": rdqueries.AtomNumEqualsQueryAtom(1),
        "charged": rdqueries.FormalChargeEqualsQueryAtom(0, negate=True),
        "disallowed": disallowed,
    }


def has_atom(mol: Chem.Mol, kind: str) -> bool:
    """Whether ``mol`` has a ``hydrogen``, ``charged`` or ``disallowed`` (element) atom."""
    return len(mol.GetAtomsMatchingQuery(_atom_queries()[kind])) > 0


# ---------------------------------------------------------------- QED


def qed_score(mol: Chem.Mol, logp: float | None = None) -> float:
    """RDKit's QED (``rdkit.Chem.QED.qed``, mean weights), computed with two shortcuts.

    QED's eight properties are RDKit's own (molecular weight, Crippen logP, acceptor SMARTS
    matches, donors, TPSA, strict rotatable bonds, aromatic rings, structural alerts) on the
    molecule without explicit hydrogens; RDKit's ``qed`` then maps them through its
    desirability functions. Here ``RemoveHs`` is skipped when the molecule has no hydrogen
    atoms (it would return an identical copy) and a logP already computed for the same
    molecule is reused. The value is identical to ``QED.qed(mol)`` (checked in the tests).
    """
    heavy = Chem.RemoveHs(mol) if has_atom(mol, "hydrogen") else mol
    if logp is None or heavy is not mol:
        logp = Crippen.MolLogP(heavy)
    acceptors = sum(
        len(heavy.GetSubstructMatches(pattern)) for pattern in QED.Acceptors if heavy.HasSubstructMatch(pattern)
    )
    properties = QED.QEDproperties(
        MW=rdMolDescriptors._CalcMolWt(heavy),
        ALOGP=logp,
        HBA=acceptors,
        HBD=rdMolDescriptors.CalcNumHBD(heavy),
        PSA=MolSurf.TPSA(heavy),
        ROTB=rdMolDescriptors.CalcNumRotatableBonds(heavy, rdMolDescriptors.NumRotatableBondsOptions.Strict),
        AROM=len(Chem.GetSSSR(Chem.DeleteSubstructs(Chem.Mol(heavy), QED.AliphaticRings))),
        ALERTS=sum(1 for alert in QED.StructuralAlerts if heavy.HasSubstructMatch(alert)),
    )
    return QED.qed(mol, qedProperties=properties)


# ---------------------------------------------------------------- MOSES filters


@lru_cache(maxsize=1)
def filter_patterns() -> tuple[list[str], list[Chem.Mol]]:
    """The 22 MCF and 479 PAINS SMARTS of MOSES (``data/mcf.csv``, ``data/wehi_pains.csv``)."""
    smarts: list[str] = []
    with open(DATA_DIR / "mcf.csv", encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    column = [cell.strip() for cell in rows[0]].index("smarts")
    smarts.extend(row[column].strip() for row in rows[1:] if row)
    with open(DATA_DIR / "wehi_pains.csv", encoding="utf-8", newline="") as handle:
        smarts.extend(row[0].strip() for row in csv.reader(handle) if row)
    patterns = []
    for text in smarts:
        pattern = Chem.MolFromSmarts(text)
        if pattern is None:
            raise ValueError(f"filter SMARTS does not parse: {text}")
        patterns.append(pattern)
    return smarts, patterns


def _pack_bitvect(fp) -> np.ndarray:
    bits = np.frombuffer(fp.ToBitString().encode("ascii"), dtype=np.uint8) - ord("0")
    return np.packbits(bits, bitorder="little").view("<u8")


@lru_cache(maxsize=1)
def _screened_alerts() -> tuple[list[Chem.Mol], np.ndarray]:
    """Filter patterns with their pattern fingerprints packed into a ``(n, words)`` array.

    A molecule can only contain a substructure whose pattern-fingerprint bits are all set
    in the molecule's own pattern fingerprint (RDKit's substructure screen); patterns that
    fail this necessary condition are skipped without running the (slow) matcher.
    """
    _, patterns = filter_patterns()
    packed = np.stack([_pack_bitvect(Chem.PatternFingerprint(p, PATTERN_FP_BITS)) for p in patterns])
    return patterns, packed


def matches_any_alert(mol_with_hydrogens: Chem.Mol, *, screen: bool = True) -> bool:
    """True when the molecule (explicit hydrogens added) matches an MCF or PAINS SMARTS.

    With ``screen`` (the default) patterns are first screened with pattern fingerprints;
    the answer is the same as matching every pattern, only faster (checked in the tests
    on real molecules that do and do not match).
    """
    if not screen:
        _, patterns = filter_patterns()
        return any(mol_with_hydrogens.HasSubstructMatch(p) for p in patterns)
    patterns, packed = _screened_alerts()
    mol_bits = _pack_bitvect(Chem.PatternFingerprint(mol_with_hydrogens, PATTERN_FP_BITS))
    candidates = np.flatnonzero(~np.any(packed & ~mol_bits, axis=1))
    return any(mol_with_hydrogens.HasSubstructMatch(patterns[i]) for i in candidates)


def passes_moses_filters(
    mol: Chem.Mol, *, screen: bool = True, parses: str | None = None, with_hydrogens: Chem.Mol | None = None
) -> bool:
    """MOSES's ``mol_passes_filters``: the test behind the ``Filters`` metric.

    A molecule passes when it has no ring of 8 or more atoms, no charged atom, only the
    elements C N S O F Cl Br H, no MCF or PAINS match (on the molecule with explicit
    hydrogens), and its non-isomeric canonical SMILES is non-empty and parses again.
    ``parses`` may name a SMILES already known to parse (the one ``mol`` was read from):
    when the non-isomeric SMILES equals it, it is not parsed a second time. ``with_hydrogens``
    may give ``Chem.AddHs(mol)`` when the caller already made it.
    """
    rings = mol.GetRingInfo()
    if rings.NumRings() and any(len(ring) >= 8 for ring in rings.AtomRings()):
        return False
    if has_atom(mol, "charged") or has_atom(mol, "disallowed"):
        return False
    if matches_any_alert(Chem.AddHs(mol) if with_hydrogens is None else with_hydrogens, screen=screen):
        return False
    smiles = Chem.MolToSmiles(mol, isomericSmiles=False)
    if not smiles:
        return False
    if parses is not None and smiles == parses:
        return True
    return safe_mol_from_smiles(smiles) is not None


# ---------------------------------------------------------------- fragments and scaffolds


def brics_fragments(mol: Chem.Mol) -> list[str]:
    """SMILES of the pieces left after cutting every BRICS bond (with dummy-atom labels)."""
    return Chem.MolToSmiles(Chem.FragmentOnBRICSBonds(mol)).split(".")


def murcko_scaffold(mol: Chem.Mol, min_rings: int = MIN_SCAFFOLD_RINGS) -> str | None:
    """Canonical SMILES of the Bemis-Murcko scaffold, or ``None`` when it has fewer than
    ``min_rings`` rings (MOSES counts only scaffolds with at least two rings)."""
    try:
        scaffold = MurckoScaffold.GetScaffoldForMol(mol)
    except (ValueError, RuntimeError):
        return None
    n_rings = scaffold.GetRingInfo().NumRings()
    text = Chem.MolToSmiles(scaffold)
    if not text or n_rings < min_rings:
        return None
    return text


# ---------------------------------------------------------------- all at once


@lru_cache(maxsize=1)
def _fingerprint_generator():
    return rdFingerprintGenerator.GetMorganGenerator(radius=MORGAN_RADIUS, fpSize=MORGAN_BITS)


def packed_fingerprint(mol: Chem.Mol) -> bytes:
    """Morgan radius-2, 1024-bit fingerprint as 128 little-endian bytes (bit i = RDKit bit i)."""
    bits = _fingerprint_generator().GetFingerprintAsNumPy(mol)
    return np.packbits(bits, bitorder="little").tobytes()


@dataclass(frozen=True)
class MoleculeDescriptors:
    """What the MOSES metrics need to know about one molecule.

    ``canonical`` is the canonical SMILES of the molecule re-read from its canonical SMILES
    (MOSES's ``canonic_smiles`` of a canonical SMILES); ``fingerprint`` is 128 packed bytes.
    """

    canonical: str
    fingerprint: bytes
    logp: float
    sa: float
    qed: float
    weight: float
    passes_filters: bool | None
    fragments: tuple[str, ...]
    scaffold: str | None


def describe_mol(
    mol: Chem.Mol, *, filters: bool = True, screen: bool = True, source: str | None = None
) -> MoleculeDescriptors:
    """Every per-molecule quantity of the MOSES metrics for an RDKit molecule.

    ``filters=False`` skips the MOSES filter test (``passes_filters`` is then ``None``);
    reference sets do not need it. ``source`` is the SMILES ``mol`` was parsed from, if any.
    """
    with rdkit_log_silenced():
        # Crippen.MolLogP adds hydrogens itself; the filters need the same molecule with
        # hydrogens, so it is made once (the value is identical, checked in the tests).
        with_hydrogens = Chem.AddHs(mol)
        logp = rdMolDescriptors.CalcCrippenDescriptors(with_hydrogens, includeHs=False)[0]
        return MoleculeDescriptors(
            canonical=Chem.MolToSmiles(mol),
            fingerprint=packed_fingerprint(mol),
            logp=logp,
            sa=sa_score(mol),
            qed=qed_score(mol, logp),
            weight=Descriptors.MolWt(mol),
            passes_filters=(
                passes_moses_filters(mol, screen=screen, parses=source, with_hydrogens=with_hydrogens)
                if filters else None
            ),
            fragments=tuple(brics_fragments(mol)),
            scaffold=murcko_scaffold(mol),
        )


def describe_smiles(smiles: str, filters: bool = True) -> MoleculeDescriptors:
    """:func:`describe_mol` of the molecule parsed from ``smiles`` (as MOSES parses it).

    Raises :class:`~chemassay.chem.molecules.InvalidSmiles` when it does not parse.
    """
    mol = moses_mol(smiles)
    if mol is None:
        raise InvalidSmiles(smiles, "RDKit cannot parse it")
    return describe_mol(mol, filters=filters, source=smiles)


def fingerprint_matrix(fingerprints: list[bytes]) -> np.ndarray:
    """Stack packed 128-byte fingerprints into a ``(n, 16)`` ``uint64`` array."""
    if not fingerprints:
        return np.zeros((0, MORGAN_BITS // 64), dtype=np.uint64)
    return np.frombuffer(b"".join(fingerprints), dtype="<u8").reshape(len(fingerprints), -1).copy()

