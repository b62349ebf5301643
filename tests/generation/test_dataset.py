"""MOSES through the dataset registry, and SMILES sets (moses, moses:PART, files, lists)."""

from __future__ import annotations

from pathlib import Path

import pytest

import chemassay
from chemassay.contract.errors import UserInputError
from chemassay.data import locate
from chemassay.suites.generation.data import load_moses, moses_part, parse_moses_name, smiles_set

DATA = Path(__file__).resolve().parents[1] / "data" / "generation"
MOSES_FETCHED = locate("moses", "train.csv.gz") is not None


def test_part_names_come_from_the_registry():
    assert moses_part("test_scaffolds") == "test_scaffolds"
    with pytest.raises(UserInputError, match="parts: train, test, test_scaffolds"):
        moses_part("valid")
    with pytest.raises(UserInputError, match="no part 'scaffolds'"):
        chemassay.load_dataset("moses", part="scaffolds")


def test_smiles_set_from_a_file():
    resolved = smiles_set(DATA / "moses_train_2000.txt", limit=5)
    assert resolved.label == "moses_train_2000.txt" and resolved.sha256 and resolved.lines == [2, 3, 4, 5, 6]
    assert resolved.smiles[0] == "CCCS(=O)c1ccc2[nH]c(=NC(=O)OC)[nH]c2c1" and len(resolved.smiles) == 5


def test_an_empty_table_cell_is_kept_as_an_invalid_smiles(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("id,SMILES\n1,CCO\n2,\n")
    resolved = smiles_set(table)
    assert resolved.smiles == ["CCO", ""] and resolved.lines == [2, 3]


def test_lists_pass_through():
    assert smiles_set(["CCO", "CCN"]).smiles == ["CCO", "CCN"]
    assert smiles_set(["CCO", "CCN"], limit=1).label == "list of 1 SMILES"


@pytest.mark.skipif(not MOSES_FETCHED, reason="MOSES not fetched (chemassay data fetch moses)")
def test_moses_splits_through_the_registry():
    head = (DATA / "moses_train_2000.txt").read_text().split()[1:]
    assert load_moses(part="train", limit=2000, download=False) == head
    test_head = load_moses(part="test", limit=3)
    assert load_moses(part="test_scaffolds")[:5] == load_moses(part="test_scaffolds", limit=5)
    assert chemassay.load_dataset("moses", part="test", limit=3) == test_head
    assert chemassay.generation.load_dataset(part="test", limit=3) == test_head
    resolved = smiles_set("moses:test", limit=3)
    assert resolved.label == "moses:test" and resolved.smiles == test_head
    assert resolved.sha256 == chemassay.data.get_spec("moses").file("test.csv.gz").sha256
    assert parse_moses_name("moses") == "" and parse_moses_name("moses:train") == "train"
    assert parse_moses_name("my_moses.txt") is None
