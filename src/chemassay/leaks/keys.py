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

**The InChIKey filter.** The InChIKey is the dearest part of keying a training molecule, and
almost no training molecule matches a test molecule. Two molecules with the same InChIKey first
block have the same InChI main layer: the same heavy atoms (the formula) joined the same way (the
connection table), whatever their bond orders, charges, protons, tautomeric hydrogens, isotopes or
stereo. So a training molecule's InChIKey is computed only when its *element graph* (heavy atoms
labelled by element, bonds without order) can equal a test molecule's: :func:`graph_key`, a
Morgan count fingerprint (radius 2) whose atom invariants are the atomic numbers alone and whose
bonds carry no type or stereo, is a function of the element graph that does not depend on atom
order, so equal graphs give equal keys (unequal graphs may collide: that only costs an InChIKey).
Where standard InChI's connection table is not RDKit's heavy-atom graph the filter is bypassed
and the InChIKey always computed: a training molecule is filtered only when its SMILES holds
nothing but C, N, O, F, P, S, Cl, Br and I atoms, without isotopes or hydrogen atoms
(:func:`filterable_atoms`), so metals (whose bonds standard InChI disconnects), ``[2H]``,
``[13C]``, ``[H]``, boron, ``*`` and every other element take the full path. A test molecule's
graph key is taken with its hydrogen atoms (``[2H]`` included) removed; one of other elements
needs none (no filtered training molecule has its formula).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
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
    graphs: list[int | None] = field(default_factory=list)
    """Test molecules only (``graphs=True``): each molecule's :func:`graph_key` (``None`` when
    it holds an element no filtered training molecule holds, or is unreadable)."""
    graphs_unsafe: bool = False
    """Whether some test molecule's graph cannot be vouched for (a hydrogen atom bonded to two
    atoms): the filter is then off."""


FILTERED_ELEMENTS = {"C": 6, "c": 6, "N": 7, "n": 7, "O": 8, "o": 8, "F": 9, "P": 15, "p": 15, "S": 16, "s": 16,
                     "Cl": 17, "Br": 35, "I": 53}
"""The atoms a filtered training molecule may hold (SMILES symbol: atomic number)."""
_FILTERED_NUMBERS = frozenset(FILTERED_ELEMENTS.values())
_PLAIN_BRACKET = re.compile(r"\[(?:Cl|Br|[CNOPSFIcnops])@{0,2}(?:H\d?)?(?:[+-]{1,2}\d?)?(?::\d+)?\]")
"""A bracket atom of those elements without isotope (charge, hydrogen count, tetrahedral stereo
and atom map allowed)."""
_OTHER_ATOM = re.compile(r"[\[*b]|B(?!r)")
_ATOM_SYMBOL = re.compile(r"Cl|Br|[CNOPSFIcnops]")


def filterable_atoms(text: str) -> list[int] | None:
    """The atomic numbers of a SMILES's atoms in the order written (RDKit's atom order), or
    ``None`` when the molecule must bypass the InChIKey filter: any atom other than C, N, O, F,
    P, S, Cl, Br, I, an isotope, a hydrogen atom, ``*``, or a bracket atom not plainly one of
    those (see the module docstring)."""
    rest = _PLAIN_BRACKET.sub("", text) if "[" in text else text
    if _OTHER_ATOM.search(rest):
        return None
    return [FILTERED_ELEMENTS[symbol] for symbol in _ATOM_SYMBOL.findall(text)]


@lru_cache(maxsize=1)
def _graph_generator():
    return rdFingerprintGenerator.GetMorganGenerator(
        radius=2, includeChirality=False,
        bondInvariantsGenerator=rdFingerprintGenerator.GetMorganBondInvGen(useBondTypes=False))


def graph_key(mol: Chem.Mol, atomic_numbers: Sequence[int]) -> int:
    """A key of the element graph of ``mol`` (atoms labelled by ``atomic_numbers``, bonds without
    order, type or stereo): isomorphic graphs give the same key (a 64-bit hash of the Morgan
    counts; a collision of different graphs only lets an InChIKey be computed)."""
    counts = _graph_generator().GetSparseCountFingerprint(mol, customAtomInvariants=list(atomic_numbers))
    return hash((len(atomic_numbers), tuple(sorted(counts.GetNonzeroElements().items()))))


def heavy_graph_key(mol: Chem.Mol, text: str | None = None) -> tuple[int | None, bool]:
    """``(graph key, vouched)`` of a test molecule: the key of its heavy-atom graph (hydrogen atoms,
    isotopic or not, removed, as InChI counts them apart from the connection table); ``None`` when
    it holds an element a filtered training molecule cannot hold. ``vouched`` is false for a
    hydrogen atom bonded to two atoms (the filter is then off). ``text``, the molecule's SMILES,
    gives the key as a training molecule's when it may be filtered (faster, the same key)."""
    atoms = filterable_atoms(text) if text is not None else None
    if atoms is not None and len(atoms) == mol.GetNumAtoms():
        return graph_key(mol, atoms), True
    numbers = [atom.GetAtomicNum() for atom in mol.GetAtoms()]
    if any(number not in _FILTERED_NUMBERS for number in numbers if number != 1):
        return None, True
    if 1 in numbers:
        if any(atom.GetDegree() > 1 for atom in mol.GetAtoms() if atom.GetAtomicNum() == 1):
            return None, False
        heavy = Chem.RWMol(mol)
        for index in sorted((i for i, number in enumerate(numbers) if number == 1), reverse=True):
            heavy.RemoveAtom(index)
        mol = heavy.GetMol()
        numbers = [number for number in numbers if number != 1]
    if not numbers:
        return None, True
    return graph_key(mol, numbers), True


def scaffold_of(mol: Chem.Mol) -> str:
    """Canonical SMILES of the Bemis-Murcko scaffold (``""`` for an acyclic molecule)."""
    try:
        return Chem.MolToSmiles(MurckoScaffold.GetScaffoldForMol(mol))
    except Exception:  # RDKit raises assorted types on odd valences; no scaffold then
        return ""


def molecule_keys(texts: Sequence[str], *, scaffolds: bool = False, fingerprints: bool = True,
                  candidates: frozenset[int] | None = None, graphs: bool = False) -> Keyed:
    """Keys (and Morgan fingerprints) of molecule SMILES; unreadable ones are reported. Each
    molecule is dropped once keyed and fingerprinted (a chunk never holds its RDKit molecules).

    ``candidates`` (the test molecules' graph keys) turns the InChIKey filter on: a molecule that
    may be filtered (:func:`filterable_atoms`) and whose :func:`graph_key` is not among them gets
    no InChIKey (its keys stay ``None``; it is readable). ``graphs`` (the test side) records each
    molecule's :func:`heavy_graph_key`."""
    names = MOLECULE_KEYS + ((SCAFFOLD,) if scaffolds else ())
    keys: dict[str, list[str | None]] = {name: [None] * len(texts) for name in names}
    ok = np.zeros(len(texts), dtype=bool)
    errors: dict[int, str] = {}
    generator = _morgan_generator(MORGAN_RADIUS, N_BITS, False) if fingerprints else None
    packed = np.zeros((len(texts), N_BITS // 64), dtype=np.uint64)
    graph_keys: list[int | None] = [None] * len(texts) if graphs else []
    unsafe = False
    with rdkit_log_silenced():
        for i, text in enumerate(texts):
            try:
                mol = parse_smiles(text, remove_atom_maps=":" in text)
                key = None
                if candidates is not None:
                    atoms = filterable_atoms(text)
                    if atoms is None or len(atoms) != mol.GetNumAtoms() or graph_key(mol, atoms) in candidates:
                        key = Chem.MolToInchiKey(mol)
                else:
                    key = Chem.MolToInchiKey(mol)
            except InvalidSmiles as exc:
                errors[i] = exc.reason
                continue
            except Exception as exc:  # InChI generation failures
                errors[i] = f"InChI failed: {exc}"
                continue
            if key is not None:
                if not key:
                    errors[i] = "no InChIKey (InChI generation failed)"
                    continue
                keys["inchikey"][i] = key
                keys["skeleton"][i] = key.split("-")[0]
            if graphs:
                graph_keys[i], vouched = heavy_graph_key(mol, text)
                unsafe = unsafe or not vouched
            if scaffolds:
                keys[SCAFFOLD][i] = scaffold_of(mol)
            if generator is not None:
                packed[i] = pack_bits(generator.GetFingerprintAsNumPy(mol))[0]
            ok[i] = True
    return Keyed(MOLECULE, keys, packed, ok, errors, graph_keys, unsafe)


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


def keyed(kind: str, texts: Sequence[str], *, scaffolds: bool = False, fingerprints: bool = True,
          candidates: frozenset[int] | None = None, graphs: bool = False) -> Keyed:
    """:func:`molecule_keys` (with the InChIKey filter's ``candidates`` and ``graphs``) or
    :func:`reaction_keys` by ``kind``."""
    if kind == MOLECULE:
        return molecule_keys(texts, scaffolds=scaffolds, fingerprints=fingerprints, candidates=candidates,
                             graphs=graphs)
    return reaction_keys(texts, fingerprints=fingerprints)
