"""What an item is compared by: exact keys and fingerprints of molecules and reactions.

A *molecule* is compared by its standard InChIKey (``inchikey``: stereo, isotopes and charge
included) and by the InChIKey's first block (``skeleton``: the connectivity layer, which
leaves out stereochemistry and isotopes), optionally by its Bemis-Murcko scaffold
(canonical SMILES of the ring systems and linkers; acyclic molecules have none), and for near
duplicates by a Morgan fingerprint (radius 2, 2,048 bits, RDKit's generator).

A *reaction* is compared by an order-independent key of its canonical molecules
(``reaction``): every molecule of the reactant and reagent fields and of the products is
canonicalized with atom maps removed; a left-hand molecule that also appears unchanged among
the products, or that shares no heavy element with any product, is a reagent or agent and is
dropped (the same rule whether a data set writes it left of the first ``>`` or between the two);
the rest is written as the sorted set of reactants ``>>`` the sorted set of products, so
molecule order, atom maps, agents, reagents and stoichiometric repeats do not change the key.
``products`` (the sorted set of products alone) is the key of what a reaction predictor is
asked for. Near duplicates use a structural reaction fingerprint: the Morgan bits (radius 2,
1,024) of the kept reactants ORed together, then those of the products (2,048 bits in all), so
the same reaction with a close analogue of one substrate is near. (DRFP, the difference
fingerprint, cost 30-170 ms per cleaned USPTO reaction here, in its shingling: too slow for
tens of thousands of training reactions per split; the structural one costs the molecules'
Morgan fingerprints, kept per molecule.)

Lines are told apart by their text: one with a ``>`` is a reaction, any other a molecule.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from rdkit import Chem
from rdkit.Chem import rdFingerprintGenerator
from rdkit.Chem.Scaffolds import MurckoScaffold

from chemassay.chem.fingerprints import _morgan_generator, pack_bits
from chemassay.chem.molecules import (
    InvalidSmiles,
    mol_to_canonical,
    parse_smiles,
    rdkit_log_silenced,
)
from chemassay.chem.reactions import InvalidReaction, parse_reaction

MOLECULE = "molecule"
REACTION = "reaction"
KINDS = (MOLECULE, REACTION)
N_BITS = 2048
MORGAN_RADIUS = 2
MOLECULE_KEYS = ("inchikey", "skeleton")
"""Exact keys of a molecule: the full standard InChIKey and its first block."""
REACTION_KEYS = ("reaction", "products")
"""Exact keys of a reaction (see the module docstring)."""
SCAFFOLD = "scaffold"
MOLECULE_FINGERPRINT = f"Morgan radius {MORGAN_RADIUS}, {N_BITS} bits (RDKit), Tanimoto"
REACTION_FINGERPRINT = (f"structural: Morgan radius {MORGAN_RADIUS}, {N_BITS // 2} bits of the reactants (OR) then "
                        f"{N_BITS // 2} of the products (OR), Tanimoto")


def kind_of(text: str) -> str:
    """``reaction`` when ``text`` holds a ``>`` (reaction SMILES), else ``molecule``."""
    return REACTION if ">" in text else MOLECULE


@dataclass
class Keyed:
    """The keys and packed fingerprints of a list of items of one kind; ``ok[i]`` is whether
    item ``i`` was readable (its keys are ``None`` otherwise) and ``errors`` names why not."""

    kind: str
    keys: dict[str, list[str | None]]
    fingerprints: np.ndarray
    ok: np.ndarray
    errors: dict[int, str]


def scaffold_of(mol: Chem.Mol) -> str:
    """Canonical SMILES of the Bemis-Murcko scaffold (``""`` for an acyclic molecule)."""
    try:
        return Chem.MolToSmiles(MurckoScaffold.GetScaffoldForMol(mol))
    except Exception:  # RDKit raises assorted types on odd valences; no scaffold then
        return ""


def molecule_keys(texts: Sequence[str], *, scaffolds: bool = False, fingerprints: bool = True) -> Keyed:
    """Keys (and Morgan fingerprints) of molecule SMILES; unreadable ones are reported. Each
    molecule is dropped once keyed and fingerprinted (a chunk never holds its RDKit molecules)."""
    names = MOLECULE_KEYS + ((SCAFFOLD,) if scaffolds else ())
    keys: dict[str, list[str | None]] = {name: [None] * len(texts) for name in names}
    ok = np.zeros(len(texts), dtype=bool)
    errors: dict[int, str] = {}
    generator = _morgan_generator(MORGAN_RADIUS, N_BITS, False) if fingerprints else None
    packed = np.zeros((len(texts), N_BITS // 64), dtype=np.uint64)
    with rdkit_log_silenced():
        for i, text in enumerate(texts):
            try:
                mol = parse_smiles(text, remove_atom_maps=True)
                key = Chem.MolToInchiKey(mol)
            except InvalidSmiles as exc:
                errors[i] = exc.reason
                continue
            except Exception as exc:  # InChI generation failures
                errors[i] = f"InChI failed: {exc}"
                continue
            if not key:
                errors[i] = "no InChIKey (InChI generation failed)"
                continue
            keys["inchikey"][i] = key
            keys["skeleton"][i] = key.split("-")[0]
            if scaffolds:
                keys[SCAFFOLD][i] = scaffold_of(mol)
            if generator is not None:
                packed[i] = pack_bits(generator.GetFingerprintAsNumPy(mol))[0]
            ok[i] = True
    return Keyed(MOLECULE, keys, packed, ok, errors)


@lru_cache(maxsize=200_000)
def _molecule_info(text: str) -> tuple[str, frozenset[int], bytes]:
    """Canonical SMILES (atom maps removed), heavy elements and the packed 1,024-bit Morgan
    fingerprint of one molecule of a reaction; kept per text, since reagents and solvents recur
    in thousands of reactions. Raises :class:`InvalidSmiles`.

    The canonical SMILES is written, read and written again: RDKit can write a ring's relative
    stereo (a 1,4-disubstituted cyclohexane) as ``@``/``@`` or ``@@``/``@@`` depending on the
    input atom order (atom maps, random SMILES); the second pass writes both alike."""
    mol = parse_smiles(text, remove_atom_maps=True)
    first = mol_to_canonical(mol)
    again = Chem.MolFromSmiles(first)
    canonical = Chem.MolToSmiles(again) if again is not None else first
    elements = frozenset(atom.GetAtomicNum() for atom in mol.GetAtoms() if atom.GetAtomicNum() > 1)
    bits = _morgan_generator_half().GetFingerprintAsNumPy(again if again is not None else mol)
    return canonical, elements, pack_bits(bits)[0].tobytes()


@lru_cache(maxsize=1)
def _morgan_generator_half():
    return rdFingerprintGenerator.GetMorganGenerator(radius=MORGAN_RADIUS, fpSize=N_BITS // 2)


def _side(smiles: Sequence[str], text: str) -> dict[str, tuple[frozenset[int], bytes]]:
    out = {}
    for item in smiles:
        try:
            canonical, elements, bits = _molecule_info(item)
        except InvalidSmiles as exc:
            raise InvalidReaction(text, str(exc)) from None
        out[canonical] = (elements, bits)
    return out


def _union(bits: Sequence[bytes]) -> np.ndarray:
    words = np.zeros(N_BITS // 128, dtype=np.uint64)
    for item in bits:
        words |= np.frombuffer(item, dtype=np.uint64)
    return words


def reaction_key(text: str) -> tuple[str, str, np.ndarray]:
    """``(reaction key, products key, packed reaction fingerprint)`` of a reaction SMILES (see
    the module docstring); raises :class:`InvalidReaction`."""
    reaction = parse_reaction(text)
    left = _side(reaction.reactants + reaction.reagents, text)
    products = _side(reaction.products, text)
    if not products:
        raise InvalidReaction(text, "no products")
    product_elements: set[int] = set().union(*(elements for elements, _ in products.values()))
    reactants = sorted(m for m, (elements, _) in left.items() if m not in products and elements & product_elements)
    products_key = ".".join(sorted(products))
    fingerprint = np.concatenate([_union([left[m][1] for m in reactants]), _union([b for _, b in products.values()])])
    return f"{'.'.join(reactants)}>>{products_key}", products_key, fingerprint


def reaction_keys(texts: Sequence[str], *, fingerprints: bool = True) -> Keyed:
    """Keys and structural reaction fingerprints of reaction SMILES; unreadable ones are reported."""
    keys: dict[str, list[str | None]] = {name: [None] * len(texts) for name in REACTION_KEYS}
    ok = np.zeros(len(texts), dtype=bool)
    errors: dict[int, str] = {}
    packed = np.zeros((len(texts), N_BITS // 64), dtype=np.uint64)
    with rdkit_log_silenced():
        for i, text in enumerate(texts):
            try:
                key, products, fingerprint = reaction_key(text)
            except InvalidReaction as exc:
                errors[i] = exc.reason
                continue
            keys["reaction"][i] = key
            keys["products"][i] = products
            if fingerprints:
                packed[i] = fingerprint
            ok[i] = True
    return Keyed(REACTION, keys, packed, ok, errors)


def keyed(kind: str, texts: Sequence[str], *, scaffolds: bool = False, fingerprints: bool = True) -> Keyed:
    """:func:`molecule_keys` or :func:`reaction_keys` by ``kind``."""
    if kind == MOLECULE:
        return molecule_keys(texts, scaffolds=scaffolds, fingerprints=fingerprints)
    return reaction_keys(texts, fingerprints=fingerprints)
