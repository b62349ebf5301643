import pytest
from rdkit import Chem

from chemassay.chem import (
    InvalidSmiles,
    canonical_smiles,
    inchikey,
    parse_smiles,
    rdkit_log_silenced,
    same_molecule,
    try_canonical,
)
from chemassay.chem.molecules import heavy_atom_count


def test_canonical_smiles_is_rdkit_canonical_and_order_independent():
    assert canonical_smiles("OCC") == canonical_smiles("C(O)C") == "CCO"
    assert canonical_smiles("c1ccccc1O") == Chem.MolToSmiles(Chem.MolFromSmiles("Oc1ccccc1"))


def test_stereo_kept_or_stripped():
    smiles = "C[C@H](N)C(=O)O"
    assert "@" in canonical_smiles(smiles)
    assert "@" not in canonical_smiles(smiles, stereo=False)
    assert canonical_smiles("C/C=C/C", stereo=False) == "CC=CC"


def test_atom_maps_removed_by_default_and_kept_on_request():
    mapped = "[CH3:1][CH2:2][OH:3]"
    assert canonical_smiles(mapped) == "CCO"
    assert ":1]" in canonical_smiles(mapped, remove_atom_maps=False)
    assert canonical_smiles(parse_smiles(mapped)) == "CCO"


@pytest.mark.parametrize(
    "bad, reason_part",
    [
        ("C1CC", "syntax"),
        ("C(C)(C)(C)(C)C", "valence"),
        ("", "empty"),
        ("CC O", "whitespace"),
        ("c1cccc1", "kekulize"),
    ],
)
def test_invalid_smiles_carry_a_reason(bad, reason_part):
    with pytest.raises(InvalidSmiles) as info:
        parse_smiles(bad)
    assert reason_part in info.value.reason.lower()
    assert info.value.smiles == bad
    assert try_canonical(bad) is None


def test_non_string_is_rejected():
    with pytest.raises(InvalidSmiles):
        parse_smiles(None)  # type: ignore[arg-type]


def test_inchikey_and_same_molecule():
    assert inchikey("CCO") == "LFQSCWFLJHTTHZ-UHFFFAOYSA-N"
    assert same_molecule("OCC", "C(C)O")
    assert not same_molecule("CCO", "COC")
    assert not same_molecule("CCO", "C1CC")


def test_log_silencing_is_a_context_manager(capfd):
    with rdkit_log_silenced():
        assert Chem.MolFromSmiles("C1CC") is None
    assert "SMILES Parse Error" not in capfd.readouterr().err


def test_heavy_atom_count_ignores_hydrogens():
    assert heavy_atom_count(parse_smiles("[H]OC([H])([H])[H]")) == 2


def test_explicit_hydrogen_atoms_are_removed_as_rdkit_does():
    assert canonical_smiles("[H]OC") == "CO" == Chem.MolToSmiles(Chem.MolFromSmiles("[H]OC"))
    assert same_molecule("[H]OC([H])([H])[H]", "CO")
    assert canonical_smiles("[H][H]") == "[H][H]"
    assert canonical_smiles("[H]/C(C)=C(/[H])C") == Chem.MolToSmiles(Chem.MolFromSmiles("[H]/C(C)=C(/[H])C"))
