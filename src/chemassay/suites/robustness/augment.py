"""SMILES augmentations that keep the molecule: AMORE's four, all-ring renumbering, random atom order.

Every augmentation is a function ``SMILES -> SMILES`` (the random ones take a seed). They
are *identity transformations*: the output must denote the same molecule as the input, and
:func:`augment_many` checks that for every row (canonical SMILES and InChIKey equality).
A molecule an augmentation cannot be applied to (``cycle_renumber`` on a molecule without
rings) or whose output is not the same molecule is reported with a status and a reason;
nothing is dropped silently.

``canonical``, ``explicit_h`` and ``kekulize`` call RDKit's writer exactly as AMORE does
(``MolToSmiles`` with default options, ``allHsExplicit=True`` and ``kekuleSmiles=True``).
``cycle_renumber`` is our own: it relabels every ring-closure bond with a seeded random
label that is not open at that point of the string, so it can never join the wrong atoms
(the AMORE files have 6 ChEBI-20 rows where a label was reused while still open).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from rdkit import Chem

from chemassay.chem.molecules import InvalidSmiles, inchikey, mol_to_canonical, parse_smiles
from chemassay.chem.tokenizer import tokenize_smiles
from chemassay.contract.errors import ChemassayError, UserInputError
from chemassay.runtime.parallel import Failure, parallel_map

AUGMENTATIONS: tuple[str, ...] = (
    "canonical", "explicit_h", "kekulize", "cycle_renumber", "randomized", "cycle_renumber_amore",
)
"""Names accepted by ``--kind``: ``canonical``, ``explicit_h``, ``kekulize``,
``cycle_renumber_amore`` (AMORE's four: the renumbering is restricted to the rings AMORE's code
renumbers), ``cycle_renumber`` (every ring, a harder test) and ``randomized`` (random atom order)."""

AMORE_AUGMENTATIONS: tuple[str, ...] = ("canonical", "explicit_h", "kekulize", "cycle_renumber")
DEFAULT_AUGMENTATIONS: tuple[str, ...] = (*AMORE_AUGMENTATIONS, "randomized")
"""What ``evaluate`` and ``downstream`` run by default: AMORE's first three, ``cycle_renumber``
(every ring; the paper's "cycle" is ``cycle_renumber_amore``) and a random atom order."""
RANDOM_AUGMENTATIONS: frozenset[str] = frozenset({"cycle_renumber", "randomized", "cycle_renumber_amore"})

ALGORITHM_VERSION = "2"
"""Bumped whenever an augmentation's output changes; part of the augmentation cache key."""

STATUS_OK = "ok"
STATUS_NOT_APPLICABLE = "not_applicable"
STATUS_FAILED = "failed"


class NotApplicable(ChemassayError):
    """The augmentation has nothing to change in this molecule (e.g. no ring to renumber)."""


def canonical(smiles: str) -> str:
    """RDKit canonical SMILES (``MolToSmiles`` with its defaults, stereo kept), through the
    chemistry core (:func:`chemassay.chem.molecules.mol_to_canonical`)."""
    return mol_to_canonical(parse_smiles(smiles))


def explicit_h(smiles: str) -> str:
    """Every atom in brackets with its hydrogens written out: ``CCO`` → ``[CH3][CH2][OH]``."""
    return Chem.MolToSmiles(parse_smiles(smiles), allHsExplicit=True)


def kekulize(smiles: str) -> str:
    """Kekulé form: aromatic rings written with alternating single/double bonds, no lower case."""
    return Chem.MolToSmiles(parse_smiles(smiles), kekuleSmiles=True)


def _seed_for(smiles: str, seed: int) -> int:
    # A per-molecule seed derived from (seed, text) keeps each row reproducible on its own,
    # independent of the row order or of how rows are split across worker processes.
    digest = hashlib.sha256(f"{seed}\x00{smiles}".encode()).digest()
    return int.from_bytes(digest[:4], "little")


def randomized(smiles: str, seed: int = 0) -> str:
    """A random valid atom order, reproducible for a given seed.

    The atoms are renumbered with a seeded random permutation and the molecule is written
    without canonicalization, so the depth-first walk starts at a random atom and takes
    branches in a random order (RDKit's own random-SMILES generator is not reproducible
    call to call).
    """
    mol = parse_smiles(smiles)
    rng = random.Random(_seed_for(smiles, seed))
    order = list(range(mol.GetNumAtoms()))
    rng.shuffle(order)
    shuffled = Chem.RenumberAtoms(mol, order)
    return Chem.MolToSmiles(shuffled, canonical=False)


def _ring_label(token: str) -> int | None:
    if token.isdigit():
        return int(token)
    if token.startswith("%("):
        return int(token[2:-1])
    if token.startswith("%"):
        return int(token[1:])
    return None


def _format_label(label: int) -> str:
    if label < 10:
        return str(label)
    if label < 100:
        return f"%{label}"
    return f"%({label})"


def ring_closure_labels(smiles: str) -> list[int]:
    """The ring-closure labels of ``smiles`` in the order they occur (brackets excluded)."""
    return [label for token in tokenize_smiles(smiles) if (label := _ring_label(token)) is not None]


def _adjacent_ring_bonds(tokens: list[str]) -> set[int]:
    """Token positions of ring bonds whose opening and closing labels follow each other
    in the sequence of ring-closure labels (no other label in between)."""
    positions = [i for i, token in enumerate(tokens) if _ring_label(token) is not None]
    open_at: dict[int, int] = {}
    adjacent: set[int] = set()
    for order, position in enumerate(positions):
        label = _ring_label(tokens[position])
        if label in open_at:
            opened = open_at.pop(label)
            if order > 0 and positions[order - 1] == opened:
                adjacent.update((opened, position))
        else:
            open_at[label] = position
    return adjacent


def cycle_renumber(smiles: str, seed: int = 0, *, only_adjacent: bool = False) -> str:
    """Replace every ring-closure label with another valid one chosen at random.

    The string is walked token by token. When a ring bond opens, it gets a label drawn
    (with a generator seeded by ``seed`` and the input text) from 1-9 minus the labels
    open at that point, preferring a label different from the original one; when it
    closes, it gets the same label and the label becomes free again. Because a label is
    never handed out while it is open, the ring bonds connect exactly the atoms they
    connected before; every other character (bond symbols such as ``=`` or ``\\``, atoms,
    brackets) is kept as it is. Two-digit labels (``%10``) are used only when nine rings
    are open at once. Raises :class:`NotApplicable` for a SMILES without ring closures.

    ``only_adjacent=True`` renumbers only the ring bonds AMORE's ``cycleRenumering``
    renumbers (those whose opening and closing labels are consecutive among the string's
    ring-closure labels, e.g. both ``1`` in ``c1ccccc1`` but not in ``C1CC2CC1C2``) and keeps
    the others; the new labels still avoid every open label, unlike AMORE's.
    """
    tokens = tokenize_smiles(smiles)
    if not any(_ring_label(token) is not None for token in tokens):
        raise NotApplicable("no ring-closure digits to renumber")
    renumbered = _adjacent_ring_bonds(tokens) if only_adjacent else None
    if renumbered is not None and not renumbered:
        raise NotApplicable("no ring whose two labels are adjacent (AMORE's renumbering scope)")
    rng = random.Random(_seed_for(smiles, seed))
    open_labels: dict[int, int] = {}
    out: list[str] = []
    for position, token in enumerate(tokens):
        label = _ring_label(token)
        if label is None:
            out.append(token)
            continue
        if label in open_labels:
            out.append(_format_label(open_labels.pop(label)))
            continue
        taken = set(open_labels.values())
        if renumbered is not None and position not in renumbered:
            open_labels[label] = label
            out.append(token)
            continue
        choices = [c for c in range(1, 10) if c not in taken and c != label]
        if not choices:
            choices = [c for c in range(1, 10) if c not in taken]
        if not choices:
            choices = [c for c in range(10, 100) if c not in taken and c != label]
        new_label = rng.choice(choices)
        open_labels[label] = new_label
        out.append(_format_label(new_label))
    if open_labels:
        raise InvalidSmiles(smiles, f"unclosed ring bond(s) {sorted(open_labels)}")
    return "".join(out)


def cycle_renumber_amore(smiles: str, seed: int = 0) -> str:
    """:func:`cycle_renumber` restricted to AMORE's scope (``only_adjacent=True``)."""
    return cycle_renumber(smiles, seed, only_adjacent=True)


AUGMENTERS: dict[str, Callable[..., str]] = {
    "cycle_renumber_amore": cycle_renumber_amore,
    "canonical": canonical,
    "explicit_h": explicit_h,
    "kekulize": kekulize,
    "cycle_renumber": cycle_renumber,
    "randomized": randomized,
}


def check_kind(kind: str) -> str:
    """Return ``kind`` if it is a known augmentation, else raise a user error listing them."""
    if kind not in AUGMENTERS:
        raise UserInputError(f"unknown augmentation {kind!r}; choose one of {', '.join(AUGMENTATIONS)}")
    return kind


def augment(smiles: str, kind: str, seed: int = 0) -> str:
    """Apply augmentation ``kind`` to one SMILES (``seed`` is used by the random ones)."""
    function = AUGMENTERS[check_kind(kind)]
    if kind in RANDOM_AUGMENTATIONS:
        return function(smiles, seed)
    return function(smiles)


@dataclass(frozen=True)
class MoleculeIdentity:
    """What two SMILES must share to be the same molecule: canonical SMILES and InChIKey."""

    canonical: str
    inchikey: str


def molecule_identity(smiles: str, *, use_inchikey: bool = True) -> MoleculeIdentity:
    """Canonical SMILES and (unless ``use_inchikey=False``) standard InChIKey of ``smiles``."""
    mol = parse_smiles(smiles)
    return MoleculeIdentity(mol_to_canonical(mol), inchikey(mol) if use_inchikey else "")


@dataclass(frozen=True)
class AugmentedRow:
    """One augmented molecule: its status (ok / not_applicable / failed), text and reason."""

    index: int
    original: str
    augmented: str
    status: str
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.status == STATUS_OK


def _augment_row(item: tuple[int, str], kind: str, seed: int, use_inchikey: bool) -> AugmentedRow:
    index, smiles = item
    try:
        before = molecule_identity(smiles, use_inchikey=use_inchikey)
    except InvalidSmiles as exc:
        return AugmentedRow(index, smiles, "", STATUS_FAILED, f"original: {exc.reason}")
    try:
        text = augment(smiles, kind, seed)
    except NotApplicable as exc:
        return AugmentedRow(index, smiles, smiles, STATUS_NOT_APPLICABLE, str(exc))
    except InvalidSmiles as exc:
        return AugmentedRow(index, smiles, "", STATUS_FAILED, exc.reason)
    try:
        after = molecule_identity(text, use_inchikey=use_inchikey)
    except InvalidSmiles as exc:
        return AugmentedRow(index, smiles, text, STATUS_FAILED, f"output does not parse: {exc.reason}")
    if after.canonical != before.canonical:
        return AugmentedRow(index, smiles, text, STATUS_FAILED, "output is a different molecule (canonical SMILES differ)")
    if after.inchikey != before.inchikey:
        return AugmentedRow(index, smiles, text, STATUS_FAILED, "output is a different molecule (InChIKeys differ)")
    return AugmentedRow(index, smiles, text, STATUS_OK)


def augment_many(
    smiles: Sequence[str],
    kind: str,
    *,
    seed: int = 0,
    n_jobs: int = 1,
    use_inchikey: bool = True,
    show_progress: bool | None = None,
) -> list[AugmentedRow]:
    """Augment every SMILES and check each output is the same molecule as its input.

    Returns one :class:`AugmentedRow` per input, in order. Rows with status
    ``not_applicable`` carry the original text unchanged (the AMORE files keep such rows
    as they are); rows with status ``failed`` carry the reason (unparsable input, or an
    output that is a different molecule) and must not be scored as augmentations.
    """
    check_kind(kind)
    worker = partial(_augment_row, kind=kind, seed=seed, use_inchikey=use_inchikey)
    results = parallel_map(
        worker, list(enumerate(smiles)), n_jobs=n_jobs, description=f"augment {kind}",
        show_progress=show_progress,
    )
    rows: list[AugmentedRow] = []
    for index, result in enumerate(results):
        if isinstance(result, Failure):
            rows.append(AugmentedRow(index, smiles[index], "", STATUS_FAILED, str(result)))
        else:
            rows.append(result)
    return rows
