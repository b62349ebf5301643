"""Forward reaction templates: extraction from atom-mapped reactions and application.

A forward template says which atoms change in a reaction and how: its reactant side is a
SMARTS query (the changed atoms with their exact element, aromaticity, hydrogen count,
degree and charge; their mapped neighbours within ``radius`` bonds, element and
aromaticity only; and the whole leaving groups, unmapped), its product side gives the same
mapped atoms with their new bonds, hydrogen counts and charges. Applying a template to a
set of reactants (all molecules in one RDKit molecule, so the template may match across
molecules) runs ``RunReactants`` and returns the canonical product sets.

Written for chemassay (not derived from rdchiral): rdchiral 1.1 installs, but with current
RDKit it emits templates whose leaving-group atoms reuse map numbers of the reaction centre
(rdchiral issue #54), which breaks forward application; this module avoids that by
keeping leaving groups unmapped and numbering maps canonically itself.

The template string is canonical for a given reaction centre (RDKit fragment
canonicalization with the SMARTS labels as atom invariants), so equal centres found in
different reactions give the same string and can be counted and shared.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from rdkit import Chem
from rdkit.Chem import rdChemReactions

from chemassay.chem.molecules import InvalidSmiles, parse_smiles, rdkit_log_silenced
from chemassay.chem.reactions import InvalidReaction, parse_reaction
from chemassay.contract.errors import ChemassayError


class TemplateError(ValueError, ChemassayError):
    """No template can be extracted from a reaction (the reason says why)."""


_BOND_SMARTS = {
    Chem.BondType.SINGLE: "-",
    Chem.BondType.DOUBLE: "=",
    Chem.BondType.TRIPLE: "#",
    Chem.BondType.AROMATIC: ":",
}
_PRODUCT_ATOM = re.compile(r"\[#(\d+);([aA]);H(\d+);([+-]\d+):(\d+)\]")


@dataclass(frozen=True)
class ForwardTemplate:
    """A canonical forward template and how its reactant fragments group into molecules.

    ``smarts`` is ``reactant_query>>product_pattern``; ``fragment_molecules`` gives, for
    each dot-separated fragment of the reactant query in order, the index of the training
    reactant molecule it came from, so that application can require the same grouping
    (two fragments from one molecule must match inside one query molecule, fragments from
    different molecules in different ones).
    """

    smarts: str
    fragment_molecules: tuple[int, ...]

    @property
    def key(self) -> str:
        """Identity of the template: the SMARTS plus the fragment grouping."""
        grouping = ",".join(str(i) for i in self.fragment_molecules)
        return f"{self.smarts}|{grouping}"

    @classmethod
    def from_key(cls, key: str) -> ForwardTemplate:
        """Inverse of :attr:`key`."""
        smarts, _, grouping = key.rpartition("|")
        return cls(smarts, tuple(int(i) for i in grouping.split(",") if i))


def _element_query(atom: Chem.Atom) -> str:
    return f"#{atom.GetAtomicNum()};{'a' if atom.GetIsAromatic() else 'A'}"


def _charge(atom: Chem.Atom) -> str:
    return f"{atom.GetFormalCharge():+d}"


def _signature(atom: Chem.Atom, in_product: set[int]) -> tuple:
    """What must stay equal for an atom to count as unchanged (maps of neighbours)."""
    neighbours = []
    for bond in atom.GetBonds():
        other = bond.GetOtherAtom(atom)
        number = other.GetAtomMapNum()
        neighbours.append((number if number in in_product else 0, bond.GetBondType()))
    return (
        atom.GetAtomicNum(),
        atom.GetFormalCharge(),
        atom.GetTotalNumHs(),
        atom.GetIsAromatic(),
        tuple(sorted(neighbours, key=lambda item: (item[0], str(item[1])))),
    )


def _parse_side(smiles_list: list[str], role: str, text: str) -> Chem.Mol:
    if not smiles_list:
        raise TemplateError(f"reaction has no {role}")
    try:
        return parse_smiles(".".join(smiles_list))
    except InvalidSmiles as exc:
        raise TemplateError(f"{role}: {exc.reason} in {text[:80]!r}") from None


def extract_forward_template(mapped_reaction: str, *, radius: int = 1) -> ForwardTemplate:
    """Extract the forward template of an atom-mapped reaction SMILES.

    Every product atom must carry a map number that occurs once among the reactants
    (RXNMapper output and most curated sets satisfy this). Reactant molecules with no
    atom in the product are reagents and are left out. Raises :class:`TemplateError` when
    the maps are incomplete or inconsistent or when no atom changes.
    """
    try:
        reaction = parse_reaction(mapped_reaction)
    except InvalidReaction as exc:
        raise TemplateError(str(exc)) from None
    reactants = _parse_side(reaction.reactants + reaction.reagents, "reactants", mapped_reaction)
    products = _parse_side(reaction.products, "products", mapped_reaction)

    product_index: dict[int, int] = {}
    for atom in products.GetAtoms():
        number = atom.GetAtomMapNum()
        if not number:
            raise TemplateError("a product atom has no atom map number")
        if number in product_index:
            raise TemplateError(f"map number {number} occurs twice among the products")
        product_index[number] = atom.GetIdx()
    reactant_index: dict[int, int] = {}
    for atom in reactants.GetAtoms():
        number = atom.GetAtomMapNum()
        if number in product_index:
            if number in reactant_index:
                raise TemplateError(f"map number {number} occurs twice among the reactants")
            reactant_index[number] = atom.GetIdx()
    missing = set(product_index) - set(reactant_index)
    if missing:
        raise TemplateError(f"product map numbers {sorted(missing)[:5]} are absent from the reactants")
    in_product = set(product_index)

    fragment_of_atom = [0] * reactants.GetNumAtoms()
    for fragment_id, atoms in enumerate(Chem.GetMolFrags(reactants)):
        for index in atoms:
            fragment_of_atom[index] = fragment_id

    changed = {
        number
        for number, r_idx in reactant_index.items()
        if _signature(reactants.GetAtomWithIdx(r_idx), in_product)
        != _signature(products.GetAtomWithIdx(product_index[number]), in_product)
    }
    if not changed:
        raise TemplateError("no atom changes between reactants and products")

    # mapped atoms within `radius` bonds of a changed atom (through mapped atoms)
    template_maps = set(changed)
    frontier = {reactant_index[n] for n in changed}
    for _ in range(radius):
        following = set()
        for index in frontier:
            for neighbour in reactants.GetAtomWithIdx(index).GetNeighbors():
                number = neighbour.GetAtomMapNum()
                if number in in_product and number not in template_maps:
                    template_maps.add(number)
                    following.add(neighbour.GetIdx())
        frontier = following

    # leaving groups: atoms that do not reach the product, connected to a changed atom
    leaving: set[int] = set()
    stack = [
        neighbour.GetIdx()
        for n in changed
        for neighbour in reactants.GetAtomWithIdx(reactant_index[n]).GetNeighbors()
        if neighbour.GetAtomMapNum() not in in_product
    ]
    while stack:
        index = stack.pop()
        if index in leaving:
            continue
        leaving.add(index)
        for neighbour in reactants.GetAtomWithIdx(index).GetNeighbors():
            if neighbour.GetAtomMapNum() not in in_product and neighbour.GetIdx() not in leaving:
                stack.append(neighbour.GetIdx())

    mapped_atoms = sorted(reactant_index[n] for n in template_maps)
    reactant_atoms = sorted(set(mapped_atoms) | leaving)
    labels = {}
    for index in reactant_atoms:
        atom = reactants.GetAtomWithIdx(index)
        number = atom.GetAtomMapNum()
        if number in changed or index in leaving:
            labels[index] = (
                f"{_element_query(atom)};H{atom.GetTotalNumHs()};D{atom.GetDegree()};{_charge(atom)}"
            )
        else:
            labels[index] = _element_query(atom)

    reactant_smarts, output_order = _fragment_smarts(reactants, reactant_atoms, labels, {})
    canonical_map = {}
    for index in output_order:
        number = reactants.GetAtomWithIdx(index).GetAtomMapNum()
        if index not in leaving and number in template_maps:
            canonical_map[number] = len(canonical_map) + 1
    reactant_smarts, _ = _fragment_smarts(
        reactants, reactant_atoms, labels,
        {index: canonical_map[reactants.GetAtomWithIdx(index).GetAtomMapNum()] for index in mapped_atoms},
    )

    product_atoms = sorted(product_index[n] for n in template_maps)
    product_labels = {}
    for index in product_atoms:
        atom = products.GetAtomWithIdx(index)
        if atom.GetAtomMapNum() in changed:
            product_labels[index] = f"{_element_query(atom)};H{atom.GetTotalNumHs()};{_charge(atom)}"
        else:  # unchanged neighbours: RDKit would reset an unspecified charge to zero
            product_labels[index] = f"{_element_query(atom)};{_charge(atom)}"
    product_smarts, _ = _fragment_smarts(
        products, product_atoms, product_labels,
        {index: canonical_map[products.GetAtomWithIdx(index).GetAtomMapNum()] for index in product_atoms},
    )

    # which training molecule each reactant-query fragment came from, in output order
    fragment_molecules = _fragment_grouping(reactants, reactant_atoms, output_order, fragment_of_atom)
    return ForwardTemplate(f"{reactant_smarts}>>{product_smarts}", fragment_molecules)


def _fragment_smarts(
    mol: Chem.Mol, atoms: list[int], labels: dict[int, str], maps: dict[int, int]
) -> tuple[str, list[int]]:
    """Canonical SMARTS of the sub-graph ``atoms`` with the given labels and map numbers."""
    chosen = set(atoms)
    bond_symbols = []
    bonds = []
    for bond in mol.GetBonds():
        bond_symbols.append(_BOND_SMARTS.get(bond.GetBondType(), "~"))
        if bond.GetBeginAtomIdx() in chosen and bond.GetEndAtomIdx() in chosen:
            bonds.append(bond.GetIdx())
    symbols = ["[*]"] * mol.GetNumAtoms()
    for index in atoms:
        suffix = f":{maps[index]}" if index in maps else ""
        symbols[index] = f"[{labels[index]}{suffix}]"
    text = Chem.MolFragmentToSmiles(
        mol,
        atomsToUse=atoms,
        bondsToUse=bonds or None,
        atomSymbols=symbols,
        bondSymbols=bond_symbols,
        isomericSmiles=False,
        canonical=True,
        allBondsExplicit=True,
    )
    order = [int(i) for i in mol.GetProp("_smilesAtomOutputOrder").strip("[],").split(",") if i]
    return text, order


def _fragment_grouping(
    mol: Chem.Mol, atoms: list[int], output_order: list[int], fragment_of_atom: list[int]
) -> tuple[int, ...]:
    """For each query fragment (in SMARTS order) a small id of its source molecule."""
    chosen = set(atoms)
    seen_fragments: list[int] = []
    component_of: dict[int, int] = {}
    for start in output_order:
        if start in component_of:
            continue
        component = len(seen_fragments)
        seen_fragments.append(fragment_of_atom[start])
        stack = [start]
        while stack:
            index = stack.pop()
            if index in component_of:
                continue
            component_of[index] = component
            for neighbour in mol.GetAtomWithIdx(index).GetNeighbors():
                if neighbour.GetIdx() in chosen and neighbour.GetIdx() not in component_of:
                    stack.append(neighbour.GetIdx())
    renumber: dict[int, int] = {}
    return tuple(renumber.setdefault(f, len(renumber)) for f in seen_fragments)


@dataclass
class CompiledTemplate:
    """An RDKit reaction for a template plus what application needs to check and fix."""

    template: ForwardTemplate
    reaction: rdChemReactions.ChemicalReaction
    product_atoms: dict[int, tuple[int, bool, int, int]]  # map -> (Z, aromatic, H, charge)
    fragment_of_map: dict[int, int]


@lru_cache(maxsize=65536)
def compile_template(key: str) -> CompiledTemplate:
    """Build (and cache) the RDKit reaction of a template given by its :attr:`~ForwardTemplate.key`."""
    template = ForwardTemplate.from_key(key)
    reactant_text, _, product_text = template.smarts.partition(">>")
    query = Chem.MolFromSmarts(reactant_text)
    pattern = Chem.MolFromSmarts(product_text)
    if query is None or pattern is None:
        raise TemplateError(f"template SMARTS does not parse: {template.smarts[:80]!r}")
    reaction = rdChemReactions.ChemicalReaction()
    reaction.AddReactantTemplate(query)
    reaction.AddProductTemplate(pattern)
    with rdkit_log_silenced():
        reaction.Initialize()
    product_atoms = {
        int(number): (int(z), aromatic == "a", int(h), int(charge))
        for z, aromatic, h, charge, number in _PRODUCT_ATOM.findall(product_text)
    }
    fragment_of_map = {}
    for fragment_id, atoms in enumerate(Chem.GetMolFrags(query)):
        for index in atoms:
            number = query.GetAtomWithIdx(index).GetAtomMapNum()
            if number:
                fragment_of_map[number] = fragment_id
    return CompiledTemplate(template, reaction, product_atoms, fragment_of_map)


def reactants_mol(reactants: str | Iterable[str]) -> Chem.Mol:
    """All reactant (and reagent) molecules as one RDKit molecule, ready for templates."""
    text = reactants if isinstance(reactants, str) else ".".join(reactants)
    return parse_smiles(text, remove_atom_maps=True)


def apply_template(
    template: ForwardTemplate | str, reactants: Chem.Mol | str, *, max_matches: int = 200
) -> list[str]:
    """Canonical product sets (``"A.B"`` sorted by RDKit) of applying ``template`` to ``reactants``.

    ``reactants`` is one molecule holding every reactant (see :func:`reactants_mol`) or its
    SMILES. A match must group the template's fragments into molecules as in the training
    reaction. Outcomes that fail sanitization are dropped; duplicates are removed, first
    occurrence kept.
    """
    key = template.key if isinstance(template, ForwardTemplate) else template
    compiled = compile_template(key)
    mol = reactants if isinstance(reactants, Chem.Mol) else reactants_mol(reactants)
    molecule_of_atom = [0] * mol.GetNumAtoms()
    for molecule_id, atoms in enumerate(Chem.GetMolFrags(mol)):
        for index in atoms:
            molecule_of_atom[index] = molecule_id
    grouping = compiled.template.fragment_molecules
    outcomes: list[str] = []
    seen: set[str] = set()
    with rdkit_log_silenced():
        try:
            raw = compiled.reaction.RunReactants((mol,), max_matches)
        except RuntimeError:
            return []
        for (product,) in raw:
            smiles = _finish_product(product, compiled, molecule_of_atom, grouping)
            if smiles is not None and smiles not in seen:
                seen.add(smiles)
                outcomes.append(smiles)
    return outcomes


def _finish_product(product, compiled: CompiledTemplate, molecule_of_atom, grouping) -> str | None:
    fragment_molecule: dict[int, int] = {}
    for atom in product.GetAtoms():
        if not atom.HasProp("old_mapno"):
            continue
        number = atom.GetIntProp("old_mapno")
        fragment = compiled.fragment_of_map.get(number)
        if fragment is None:
            continue
        molecule = molecule_of_atom[atom.GetIntProp("react_atom_idx")]
        if fragment_molecule.setdefault(fragment, molecule) != molecule:
            return None
        spec = compiled.product_atoms.get(number)
        if spec is not None:
            _, aromatic, hydrogens, charge = spec
            atom.SetFormalCharge(charge)
            atom.SetNumExplicitHs(hydrogens)
            atom.SetNoImplicit(True)
            atom.SetIsAromatic(aromatic)
    # the molecule grouping of the fragments must equal the training reaction's
    relabel: dict[int, int] = {}
    observed = tuple(
        relabel.setdefault(fragment_molecule[f], len(relabel)) for f in range(len(grouping))
        if f in fragment_molecule
    )
    if observed != grouping:
        return None
    try:
        for atom in product.GetAtoms():
            if not atom.IsInRing() and atom.GetIsAromatic():
                return None
        Chem.SanitizeMol(product)
        return Chem.MolToSmiles(product)
    except Exception:  # RDKit raises several types for impossible valences/kekulé structures
        return None
