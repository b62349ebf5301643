import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chemassay.chem import TokenizationError, tokenize_smiles
from chemassay.chem.tokenizer import detokenize
from chemassay.data import dataset_file
from chemassay.data.readers import read_table


def test_known_tokenization():
    assert tokenize_smiles("CC(=O)Oc1ccccc1C(=O)O")[:6] == ["C", "C", "(", "=", "O", ")"]
    assert tokenize_smiles("[NH4+].[Cl-]") == ["[NH4+]", ".", "[Cl-]"]
    assert tokenize_smiles("BrCCl") == ["Br", "C", "Cl"]


def test_two_digit_ring_closures_are_one_token():
    tokens = tokenize_smiles("C%10CC%10C%(123)CC%(123)")
    assert "%10" in tokens and "%(123)" in tokens
    assert tokens.count("%10") == 2


def test_reaction_arrows_tokenized():
    assert tokenize_smiles("CC>>C") == ["C", "C", ">", ">", "C"]


def test_untokenizable_text_raises_with_position():
    with pytest.raises(TokenizationError) as info:
        tokenize_smiles("CCq")
    assert info.value.position == 2


def test_round_trip_on_real_molecules():
    frame = read_table(dataset_file("amore-chebi20", "chebi20_original.tsv"), sep="\t")
    for smiles in frame["SMILES"].head(1000):
        assert detokenize(tokenize_smiles(smiles)) == smiles


ATOMS = ["C", "c", "N", "n", "O", "o", "S", "Cl", "Br", "F", "I", "B", "[NH4+]", "[C@@H]", "[2H]", "*"]
BONDS = ["", "=", "#", "/", "\\", "-", ":"]
RINGS = ["1", "2", "%10", "%99", "%(100)"]


@settings(max_examples=200)
@given(st.lists(st.one_of(st.sampled_from(ATOMS), st.sampled_from(BONDS), st.sampled_from(RINGS),
                          st.sampled_from(["(", ")", ".", ">"])), min_size=1, max_size=40))
def test_tokenizer_round_trip_is_loss_free(pieces):
    text = "".join(pieces)
    assert detokenize(tokenize_smiles(text)) == text
