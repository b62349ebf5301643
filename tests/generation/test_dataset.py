"""MOSES split loaders and SMILES-set specs."""

from __future__ import annotations

from pathlib import Path

import pytest

from chemassay.data import locate
from chemassay.errors import UserInputError
from chemassay.suites.generation.dataset import load_moses_split, load_smiles_set, moses_split_name

DATA = Path(__file__).resolve().parents[1] / "data" / "generation"


def test_split_names():
    assert moses_split_name("train") == "train"
    assert moses_split_name("TestSF") == "test_scaffolds"
    assert moses_split_name("scaffold-test") == "test_scaffolds"
    with pytest.raises(UserInputError, match="unknown MOSES split"):
        moses_split_name("valid")


def test_smiles_set_from_a_file():
    smiles, described = load_smiles_set(DATA / "moses_train_2000.txt", limit=5)
    assert described.endswith("moses_train_2000.txt")
    assert smiles[0] == "CCCS(=O)c1ccc2[nH]c(=NC(=O)OC)[nH]c2c1" and len(smiles) == 5


def test_unusable_file_rows_are_an_error(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("id,SMILES\n1,CCO\n2,\n")
    with pytest.raises(UserInputError, match="line 3"):
        load_smiles_set(table)


@pytest.mark.skipif(locate("moses", "train.csv.gz") is None, reason="MOSES not fetched (chemassay data fetch moses)")
def test_moses_train_split_matches_the_shipped_head():
    head = (DATA / "moses_train_2000.txt").read_text().split()[1:]
    assert load_moses_split("train", limit=2000, download=False) == head
    smiles, described = load_smiles_set("moses", limit=3)
    assert described == "moses:train" and smiles == head[:3]
