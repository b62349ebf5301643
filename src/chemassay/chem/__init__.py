"""RDKit-backed chemistry primitives shared by every suite."""

from chemassay.chem.bags import Bag, BagParseError, element_balance, is_balanced, parse_bag
from chemassay.chem.fingerprints import (
    morgan_count_fingerprints,
    morgan_fingerprint,
    morgan_fingerprints,
    pack_bits,
    popcount,
    unpack_bits,
)
from chemassay.chem.formula import (
    ElementCounts,
    FormulaError,
    element_counts,
    hill_formula,
    molecular_formula,
    normalize_formula,
    parse_formula,
)
from chemassay.chem.molecules import (
    MAX_ATOMS,
    MAX_SMILES_LENGTH,
    InvalidSmiles,
    canonical_smiles,
    inchikey,
    parse_smiles,
    rdkit_log_silenced,
    safe_mol_from_smiles,
    same_molecule,
    size_problem,
    try_canonical,
)
from chemassay.chem.reactions import (
    InvalidReaction,
    Reaction,
    detect_reagents,
    parse_reaction,
    remove_atom_maps_text,
    strip_cxsmiles,
)
from chemassay.chem.similarity import (
    intersection_counts,
    max_tanimoto,
    tanimoto_blocks,
    tanimoto_matrix,
    tanimoto_one_to_many,
)
from chemassay.chem.tokenizer import TokenizationError, tokenize_smiles

__all__ = [
    "MAX_ATOMS", "MAX_SMILES_LENGTH", "safe_mol_from_smiles", "size_problem",
    "Bag", "BagParseError", "ElementCounts", "FormulaError", "InvalidReaction",
    "InvalidSmiles", "Reaction", "TokenizationError", "canonical_smiles", "detect_reagents",
    "element_balance", "element_counts", "hill_formula", "inchikey", "intersection_counts",
    "is_balanced", "max_tanimoto", "molecular_formula", "morgan_count_fingerprints",
    "morgan_fingerprint", "morgan_fingerprints", "normalize_formula", "pack_bits",
    "parse_bag", "parse_formula", "parse_reaction", "parse_smiles", "popcount",
    "rdkit_log_silenced", "remove_atom_maps_text", "same_molecule", "strip_cxsmiles",
    "tanimoto_blocks", "tanimoto_matrix", "tanimoto_one_to_many", "tokenize_smiles",
    "try_canonical", "unpack_bits",
]
