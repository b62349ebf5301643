"""Molecules: parsing with explicit errors, canonical forms, InChIKeys, RDKit log control.

Every suite parses SMILES through :func:`parse_smiles` so that a failure always carries a
reason (syntax error, valence problem, kekulization failure...) instead of RDKit's ``None``
and a line on stderr.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from rdkit import Chem, rdBase

from chemassay.contract.errors import ChemassayError


class InvalidSmiles(ValueError, ChemassayError):
    """A SMILES string RDKit cannot turn into a valid molecule.

    ``smiles`` is the offending text and ``reason`` a short human explanation.
    """

    def __init__(self, smiles: str, reason: str) -> None:
        self.smiles = smiles
        self.reason = reason
        shown = smiles if len(smiles) <= 80 else smiles[:77] + "..."
        super().__init__(f"invalid SMILES {shown!r}: {reason}")


def _limit(name: str, default: int) -> int:
    value = os.environ.get(name, "")
    return int(value) if value.isdigit() and int(value) > 0 else default


MAX_SMILES_LENGTH = _limit("CHEMASSAY_MAX_SMILES_LENGTH", 10_000)
"""Longest SMILES (characters) chemassay parses; longer text is invalid ("too long").

RDKit's work on a chain grows faster than linearly (canonical SMILES of 10,000 atoms: ~1 s;
of 20,000: a segmentation fault in RDKit 2025), so one pathological line must be refused
before it is parsed. The largest molecule of the bundled sets has 1,135 characters
(ChEBI-20); set ``CHEMASSAY_MAX_SMILES_LENGTH`` to change the limit."""

MAX_ATOMS = _limit("CHEMASSAY_MAX_ATOMS", 2_000)
"""Most heavy atoms in a molecule chemassay accepts (``CHEMASSAY_MAX_ATOMS``); the largest
bundled molecule has 383."""

MAX_REACTION_LENGTH = _limit("CHEMASSAY_MAX_REACTION_LENGTH", 20_000)
"""Longest reaction SMILES (all molecules together) chemassay parses."""


def size_problem(smiles: str) -> str | None:
    """Why ``smiles`` is too large to parse safely (``None`` if it is within the limits)."""
    if len(smiles) > MAX_SMILES_LENGTH:
        return f"too long: {len(smiles):,} characters (limit {MAX_SMILES_LENGTH:,}; CHEMASSAY_MAX_SMILES_LENGTH)"
    return None


def atoms_problem(mol: Chem.Mol) -> str | None:
    """Why a parsed molecule is too large (``None`` if within :data:`MAX_ATOMS`)."""
    atoms = mol.GetNumHeavyAtoms()
    if atoms > MAX_ATOMS:
        return f"too many atoms: {atoms:,} heavy atoms (limit {MAX_ATOMS:,}; CHEMASSAY_MAX_ATOMS)"
    return None


def safe_mol_from_smiles(smiles: str, sanitize: bool = True) -> Chem.Mol | None:
    """``Chem.MolFromSmiles`` with the size limits: ``None`` for text RDKit cannot read *or*
    that exceeds them (for code that must reproduce a reference's exact parsing)."""
    if not isinstance(smiles, str) or size_problem(smiles):
        return None
    with rdkit_log_silenced():
        mol = Chem.MolFromSmiles(smiles, sanitize=sanitize)
    if mol is not None and atoms_problem(mol):
        return None
    return mol


@contextlib.contextmanager
def rdkit_log_silenced() -> Iterator[None]:
    """Silence RDKit's log messages (warnings and errors) inside the ``with`` block.

    Built on RDKit's ``BlockLogs``, which restores the previous log state on exit, so
    blocks nest correctly.
    """
    blocker = rdBase.BlockLogs()
    try:
        yield
    finally:
        del blocker


def parse_smiles(smiles: str, *, sanitize: bool = True, remove_atom_maps: bool = False) -> Chem.Mol:
    """Parse ``smiles`` into an RDKit molecule or raise :class:`InvalidSmiles` with a reason.

    The molecule is exactly what ``Chem.MolFromSmiles`` gives (sanitized, explicit hydrogen
    atoms removed as RDKit removes them). A failure is diagnosed in two stages (syntax,
    then sanitization) so the error says which failed, with RDKit's own message (e.g. an
    explicit valence that is too high). ``remove_atom_maps`` clears atom-map numbers.
    """
    if not isinstance(smiles, str):
        raise InvalidSmiles(str(smiles), f"expected a string, got {type(smiles).__name__}")
    text = smiles.strip()
    if not text:
        raise InvalidSmiles(smiles, "empty string")
    too_big = size_problem(text)
    if too_big:
        raise InvalidSmiles(smiles, too_big)
    if any(ch.isspace() for ch in text):
        raise InvalidSmiles(smiles, "contains whitespace")
    with rdkit_log_silenced():
        # The plain call is the fast path and gives exactly RDKit's default molecule
        # (sanitized, explicit [H] atoms removed where RDKit removes them). Only when it
        # fails is the text parsed again in two stages to find out why.
        mol = Chem.MolFromSmiles(text, sanitize=sanitize)
        if mol is None:
            raw = Chem.MolFromSmiles(text, sanitize=False)
            if raw is None:
                raise InvalidSmiles(smiles, "SMILES syntax error")
            try:
                Chem.SanitizeMol(raw)
            except Exception as exc:  # RDKit raises several unrelated exception types here
                raise InvalidSmiles(smiles, _sanitize_reason(exc)) from None
            raise InvalidSmiles(smiles, "RDKit could not build the molecule")
    too_many = atoms_problem(mol)
    if too_many:
        raise InvalidSmiles(smiles, too_many)
    if remove_atom_maps:
        strip_atom_maps(mol)
    return mol


def _sanitize_reason(exc: Exception) -> str:
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return message


def strip_atom_maps(mol: Chem.Mol) -> Chem.Mol:
    """Remove atom-map numbers from ``mol`` in place and return it."""
    for atom in mol.GetAtoms():
        if atom.GetAtomMapNum():
            atom.SetAtomMapNum(0)
    return mol


def mol_to_canonical(mol: Chem.Mol, *, stereo: bool = True, isotopes: bool | None = None) -> str:
    """Canonical SMILES of an already parsed molecule (RDKit canonicalization).

    ``stereo=False`` writes the molecule without stereochemistry; isotope labels go with it
    (RDKit's non-isomeric SMILES) unless ``isotopes=True``, which removes only the stereo
    (``Chem.RemoveStereochemistry`` on a copy) and keeps isotopes, as reaction-ood's
    stereo-agnostic accuracy needs. ``isotopes`` defaults to ``stereo``.
    """
    if stereo or not isotopes:
        return Chem.MolToSmiles(mol, isomericSmiles=stereo)
    flat = Chem.Mol(mol)
    Chem.RemoveStereochemistry(flat)
    return Chem.MolToSmiles(flat)


def canonical_smiles(
    smiles: str | Chem.Mol, *, stereo: bool = True, remove_atom_maps: bool = True, isotopes: bool | None = None
) -> str:
    """Canonical SMILES of ``smiles`` (text or molecule); raises :class:`InvalidSmiles`.

    ``stereo=False`` strips stereochemistry (tetrahedral and double-bond), and isotope labels
    with it unless ``isotopes=True`` (see :func:`mol_to_canonical`). Atom maps are
    removed by default because they change the canonical atom ranking and are not part of
    the molecule's identity; pass ``remove_atom_maps=False`` to keep them.
    """
    if isinstance(smiles, Chem.Mol):
        mol = Chem.Mol(smiles)
        if remove_atom_maps:
            strip_atom_maps(mol)
    else:
        mol = parse_smiles(smiles, remove_atom_maps=remove_atom_maps)
    return mol_to_canonical(mol, stereo=stereo, isotopes=isotopes)


def try_canonical(
    smiles: str, *, stereo: bool = True, remove_atom_maps: bool = True, isotopes: bool | None = None
) -> str | None:
    """Like :func:`canonical_smiles` but returns ``None`` instead of raising."""
    try:
        return canonical_smiles(smiles, stereo=stereo, remove_atom_maps=remove_atom_maps, isotopes=isotopes)
    except InvalidSmiles:
        return None


def inchikey(smiles: str | Chem.Mol) -> str:
    """Standard InChIKey of a molecule; raises :class:`InvalidSmiles` if it has none."""
    mol = smiles if isinstance(smiles, Chem.Mol) else parse_smiles(smiles)
    key = Chem.MolToInchiKey(mol)
    if not key:
        text = smiles if isinstance(smiles, str) else Chem.MolToSmiles(smiles)
        raise InvalidSmiles(text, "InChI generation failed")
    return key


def same_molecule(first: str, second: str) -> bool:
    """True when two SMILES denote the same molecule (equal InChIKeys and canonical SMILES).

    Canonical SMILES catches what InChI deliberately ignores (e.g. some tautomers are one
    InChI); InChIKey catches canonicalization corner cases. Invalid input gives ``False``.
    """
    try:
        a = parse_smiles(first)
        b = parse_smiles(second)
    except InvalidSmiles:
        return False
    return mol_to_canonical(a) == mol_to_canonical(b) and inchikey(a) == inchikey(b)


def heavy_atom_count(mol: Chem.Mol) -> int:
    """Number of non-hydrogen atoms (explicit hydrogens in the graph are not counted)."""
    return sum(1 for atom in mol.GetAtoms() if atom.GetAtomicNum() > 1)
