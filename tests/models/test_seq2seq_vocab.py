"""Tokenizers and vocabularies of the seq2seq model: loss-free, digit-level coefficients,
fixed alphabets, unknown symbols, determinism; SMILES augmentation."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chemassay.models.seq2seq_data import augment_pairs, random_smiles, reaction_pair
from chemassay.models.vocab import UnknownSymbol, Vocabulary, guess_tokenizer, tokenize


def test_bag_tokens_write_coefficients_digit_by_digit():
    assert tokenize("{12}CCO.{3}Cl", "bag") == ["{", "1", "2", "}", "C", "C", "O", ".", "{", "3", "}", "Cl"]
    assert tokenize("{1}c1ccccc1", "bag")[:4] == ["{", "1", "}", "c"]


def test_formula_tokens():
    assert tokenize("{1}CO2.{4}H2>>{1}CH4", "formula") == [
        "{", "1", "}", "C", "O", "2", ".", "{", "4", "}", "H", "2", ">", ">", "{", "1", "}", "C", "H", "4"]
    assert tokenize("{2}C2H3O2-.{1}HCl.{1}O4S-2", "formula")[3:9] == ["C", "2", "H", "3", "O", "2"]
    assert "Cl" in tokenize("{1}HCl", "formula") and "Na" in tokenize("{1}ClNa", "formula")
    with pytest.raises(UnknownSymbol, match="not a formula text"):
        tokenize("{1}c1ccccc1", "formula")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["CCO", "c1ccccc1", "O=C=O", "[Na+]", "Cl", "C%12CC%12"]), min_size=1, max_size=4),
       st.lists(st.integers(1, 120), min_size=4, max_size=4))
def test_bag_tokenization_is_loss_free(species, coefficients):
    text = ".".join(f"{{{c}}}{s}" for c, s in zip(coefficients, species, strict=False))
    assert "".join(tokenize(text, "bag")) == text


def test_vocabulary_is_deterministic_and_holds_every_digit():
    texts = ["{1}CCO.{2}O", "{3}CC(=O)O", "{1}CCO"]
    first, second = Vocabulary.build(texts, "bag"), Vocabulary.build(list(texts), "bag")
    assert first.tokens == second.tokens
    assert first.tokens[:4] == ["<pad>", "<s>", "</s>", "<unk>"]
    assert all(d in first.index for d in "0123456789")  # {7} is readable though training drew 1-3
    ids = first.encode("{7}CCO")
    assert first.decode(ids) == "{7}CCO" and ids[-1] == first.eos_id
    assert Vocabulary.from_dict(first.as_dict()).tokens == first.tokens


def test_unknown_symbols_raise_or_become_unk():
    vocab = Vocabulary.build(["CCO", "CCN"], "smiles")
    with pytest.raises(UnknownSymbol, match="'Br'"):
        vocab.encode("CCBr")
    assert vocab.encode("CCBr", unknown="unk")[2] == vocab.unk_id
    assert vocab.decode(vocab.encode("CCBr", unknown="unk")) == "CC<unk>"
    with pytest.raises(UnknownSymbol, match="not a smiles text"):
        vocab.encode("CC O")


def test_guess_tokenizer():
    assert guess_tokenizer(["{1}CCO.{2}O", "{1}c1ccccc1"]) == "bag"
    assert guess_tokenizer(["{1}CO2.{4}H2", "{2}H2O"]) == "formula"
    assert guess_tokenizer(["CCO.CC(=O)Cl", "c1ccccc1"]) == "smiles"
    assert guess_tokenizer(["step 1: attack", "step 2"]) == "char"


def test_reaction_pairs_merge_reagents_and_drop_maps():
    pair = reaction_pair("[CH3:1][C:2](=[O:3])Cl.[NH2:4]C>ClCCl>[CH3:1][C:2](=[O:3])[NH:4]C edits")
    assert pair == ("CC(=O)Cl.CN.ClCCl", "CNC(C)=O")
    assert reaction_pair("CCO>>") is None and reaction_pair("not a reaction") is None


def test_randomized_smiles_are_the_same_molecules_and_seeded():
    from chemassay.chem import canonical_smiles

    text = "CC(=O)Oc1ccccc1C(=O)O.OCC"
    rng = np.random.default_rng(3)
    variants = {random_smiles(text, np.random.default_rng([0, i])) for i in range(8)}
    assert len(variants) > 1
    for variant in variants:
        assert sorted(canonical_smiles(m) for m in variant.split(".")) == sorted(
            canonical_smiles(m) for m in text.split("."))
    assert random_smiles(text, rng) == random_smiles(text, np.random.default_rng(3))
    pairs = [("CCO.CC(=O)Cl", "CCOC(C)=O"), ("{2}CCO.{1}O", "{2}CCO.{1}O")]
    augmented = augment_pairs(pairs[:1], 2, "smiles", seed=0)
    assert len(augmented) == 3 and augmented[0] == pairs[0] and {t for _, t in augmented} == {"CCOC(C)=O"}
    assert augmented == augment_pairs(pairs[:1], 2, "smiles", seed=0)
    bag = augment_pairs(pairs[1:], 1, "bag", seed=0)[1][0]
    assert sorted(bag.split(".")) == ["{1}O", "{2}OCC"] or sorted(e[:3] for e in bag.split(".")) == ["{1}", "{2}"]
    assert augment_pairs(pairs[1:], 3, "formula", seed=0) == pairs[1:]
