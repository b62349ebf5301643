"""Reaction SMILES: parsing, roles, atom maps, reagent detection, CXSMILES stripping.

A reaction SMILES is ``reactants>reagents>products`` (the middle field may be empty, as
in ``A.B>>C``). Each field is a ``.``-separated list of molecules. CXSMILES extensions
(`` |f:0.1,...|``) that some tools append after a space are removed before parsing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rdkit import Chem

from chemassay.chem.molecules import (
    MAX_REACTION_LENGTH,
    InvalidSmiles,
    canonical_smiles,
    heavy_atom_count,
    parse_smiles,
)
from chemassay.contract.errors import ChemassayError


class InvalidReaction(ValueError, ChemassayError):
    """A reaction SMILES that cannot be split into roles or whose molecules do not parse."""

    def __init__(self, text: str, reason: str) -> None:
        self.text = text
        self.reason = reason
        shown = text if len(text) <= 100 else text[:97] + "..."
        super().__init__(f"invalid reaction {shown!r}: {reason}")


_CXSMILES = re.compile(r"\s+\|.*\|\s*$")
_ATOM_MAP = re.compile(r"(\[[^\]:]*?):\d+\]")


def strip_cxsmiles(text: str) -> str:
    """Remove a trailing CXSMILES extension block (`` |...|``) and surrounding spaces."""
    return _CXSMILES.sub("", text).strip()


def remove_atom_maps_text(smiles: str) -> str:
    """Remove atom-map numbers from SMILES text without re-canonicalizing it.

    ``[CH3:1][OH:2]`` becomes ``[CH3][OH]``; use :func:`canonical_smiles` when a canonical
    form without brackets is wanted.
    """
    return _ATOM_MAP.sub(r"\1]", smiles)


@dataclass
class Reaction:
    """A reaction split into roles; each role is a list of molecule SMILES as written."""

    reactants: list[str]
    reagents: list[str] = field(default_factory=list)
    products: list[str] = field(default_factory=list)

    def to_smiles(self) -> str:
        """Write the reaction back as ``reactants>reagents>products``."""
        return ">".join(".".join(part) for part in (self.reactants, self.reagents, self.products))

    def canonical(self, *, stereo: bool = True, merge_reagents: bool = False) -> Reaction:
        """Reaction with every molecule canonicalized and atom maps removed.

        With ``merge_reagents`` the reagents join the reactants (as done by most reaction
        prediction benchmarks). Molecules inside a role are sorted so that equal reactions
        compare equal. Raises :class:`InvalidReaction` naming the first bad molecule.
        """
        def canon(items: list[str]) -> list[str]:
            out = []
            for smiles in items:
                try:
                    out.append(canonical_smiles(smiles, stereo=stereo))
                except InvalidSmiles as exc:
                    raise InvalidReaction(self.to_smiles(), str(exc)) from None
            return sorted(out)

        reactants = canon(self.reactants + (self.reagents if merge_reagents else []))
        reagents = [] if merge_reagents else canon(self.reagents)
        return Reaction(reactants, reagents, canon(self.products))

    def with_detected_reagents(self) -> Reaction:
        """Move reactants that contribute no heavy atom to the products into the reagents.

        See :func:`detect_reagents` for the rule.
        """
        mask = detect_reagents(self)
        reactants = [s for s, is_reagent in zip(self.reactants, mask, strict=True) if not is_reagent]
        moved = [s for s, is_reagent in zip(self.reactants, mask, strict=True) if is_reagent]
        return Reaction(reactants, self.reagents + moved, list(self.products))


def split_molecules(field_text: str) -> list[str]:
    """Split one role of a reaction SMILES into molecules (empty text gives ``[]``)."""
    return [part for part in field_text.split(".") if part]


def parse_reaction(text: str) -> Reaction:
    """Split a reaction SMILES into roles; raises :class:`InvalidReaction` on bad structure.

    Accepts ``A.B>C>D`` and ``A.B>>D``; strips a CXSMILES extension. Molecules are not
    parsed here (use :meth:`Reaction.canonical` or :func:`parse_reaction_mols`).
    """
    if not isinstance(text, str) or not text.strip():
        raise InvalidReaction(str(text), "empty reaction")

    if len(text) > MAX_REACTION_LENGTH:
        raise InvalidReaction(
            text[:200], f"too long: {len(text):,} characters (limit {MAX_REACTION_LENGTH:,}; CHEMASSAY_MAX_REACTION_LENGTH)"
        )
    body = strip_cxsmiles(text.strip())
    parts = body.split(">")
    if len(parts) != 3:
        raise InvalidReaction(
            text, f"expected 'reactants>reagents>products' (2 '>' signs), found {len(parts) - 1}"
        )
    reactants, reagents, products = (split_molecules(p) for p in parts)
    if any(ch.isspace() for ch in body):
        raise InvalidReaction(text, "whitespace inside the reaction SMILES")
    if not reactants and not reagents:
        raise InvalidReaction(text, "no reactants")
    return Reaction(reactants, reagents, products)


def parse_reaction_mols(text: str) -> tuple[list[Chem.Mol], list[Chem.Mol], list[Chem.Mol]]:
    """Parse every molecule of a reaction; raises :class:`InvalidReaction` with the reason."""
    reaction = parse_reaction(text)
    roles = []
    for role in (reaction.reactants, reaction.reagents, reaction.products):
        mols = []
        for smiles in role:
            try:
                mols.append(parse_smiles(smiles))
            except InvalidSmiles as exc:
                raise InvalidReaction(text, str(exc)) from None
        roles.append(mols)
    return roles[0], roles[1], roles[2]


def _map_numbers(mol: Chem.Mol) -> set[int]:
    return {atom.GetAtomMapNum() for atom in mol.GetAtoms() if atom.GetAtomMapNum()}


def detect_reagents(reaction: Reaction) -> list[bool]:
    """For each reactant, whether it contributes no heavy atom to the products.

    With atom maps on both sides, a reactant is a reagent when none of its mapped heavy
    atoms appears in a product. Without usable maps the rule is conservative: a reactant is
    a reagent when it also appears unchanged among the products, or when none of its heavy
    elements occurs in any product (it cannot have contributed an atom). Unparseable
    molecules raise :class:`InvalidReaction`.
    """
    try:
        reactant_mols = [parse_smiles(s) for s in reaction.reactants]
        product_mols = [parse_smiles(s) for s in reaction.products]
    except InvalidSmiles as exc:
        raise InvalidReaction(reaction.to_smiles(), str(exc)) from None
    product_maps: set[int] = set()
    for mol in product_mols:
        product_maps |= _map_numbers(mol)
    reactant_maps = [_map_numbers(mol) for mol in reactant_mols]
    if product_maps and any(reactant_maps):
        result = []
        for mol in reactant_mols:
            heavy_maps = {
                a.GetAtomMapNum() for a in mol.GetAtoms() if a.GetAtomMapNum() and a.GetAtomicNum() > 1
            }
            result.append(not (heavy_maps & product_maps))
        return result
    product_canon = {canonical_smiles(m) for m in product_mols}
    product_elements = {
        a.GetSymbol() for m in product_mols for a in m.GetAtoms() if a.GetAtomicNum() > 1
    }
    result = []
    for mol in reactant_mols:
        elements = {a.GetSymbol() for a in mol.GetAtoms() if a.GetAtomicNum() > 1}
        unchanged = canonical_smiles(mol) in product_canon
        result.append(unchanged or (heavy_atom_count(mol) > 0 and not (elements & product_elements)))
    return result


def remove_reaction_atom_maps(text: str) -> str:
    """Reaction SMILES with atom maps removed and every molecule canonicalized, roles kept."""
    return parse_reaction(text).canonical().to_smiles()
