"""Size limits of the chemistry core: pathological input is refused with a reason, at once."""

import time

import pytest

from chemassay.chem import (
    BagParseError,
    FormulaError,
    InvalidReaction,
    InvalidSmiles,
    parse_bag,
    parse_formula,
    parse_reaction,
    parse_smiles,
)
from chemassay.chem.molecules import safe_mol_from_smiles


def test_a_one_megabyte_smiles_is_refused_at_once():
    started = time.perf_counter()
    with pytest.raises(InvalidSmiles, match="too long: 1,000,000 characters"):
        parse_smiles("C" * 1_000_000)
    with pytest.raises(InvalidReaction, match="too long"):
        parse_reaction("C" * 1_000_000 + ">>C")
    assert safe_mol_from_smiles("C" * 30_000) is None  # RDKit itself segfaults on a 20,000-atom chain
    assert time.perf_counter() - started < 1.0


def test_too_many_atoms_and_a_large_real_molecule_still_parses():
    with pytest.raises(InvalidSmiles, match="too many atoms: 9,000"):
        parse_smiles("C" * 9_000)
    assert parse_smiles("C" * 1_500).GetNumHeavyAtoms() == 1_500


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: parse_bag("{" + "9" * 5000 + "}CCO"), BagParseError),
        (lambda: parse_formula("C" + "9" * 5000), FormulaError),
        (lambda: parse_formula("Na+" + "9" * 5000), FormulaError),
    ],
)
def test_five_thousand_digit_numbers_get_the_parsers_own_error(call, error):
    with pytest.raises(error, match="digits"):
        call()
