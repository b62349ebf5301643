"""MOSES-style scaffold split on real MOSES molecules: disjoint scaffolds, seeds, manifest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chemassay.contract.errors import UserInputError
from chemassay.runtime.files import sha256_file
from chemassay.suites.generation.split import murcko_scaffold, scaffold_split, write_split

DATA = Path(__file__).resolve().parents[1] / "data" / "generation"


@pytest.fixture(scope="module")
def molecules() -> list[str]:
    lines = (DATA / "moses_train_2000.txt").read_text().split()
    return lines[1:301]


def test_murcko_scaffold_hand_checked():
    assert murcko_scaffold("CC(=O)Nc1ccccc1") == "c1ccccc1"
    # RDKit's Murcko scaffold keeps atoms double-bonded to the linker (the amide C=O).
    assert murcko_scaffold("CCc1ccc(C(=O)NCc2ccccc2)cn1") == "O=C(NCc1ccccc1)c1cccnc1"
    assert murcko_scaffold("CCCO") == ""


def test_split_holds_out_whole_scaffolds(molecules):
    split = scaffold_split(molecules, test_fraction=0.1, scaffold_test_fraction=0.1, seed=3)
    parts = [split.train, split.test, split.test_scaffolds]
    assert sum(map(len, parts)) == len(molecules)
    assert not (set(split.train) & set(split.test)) and not (set(split.train) & set(split.test_scaffolds))
    held = set(split.held_out_scaffolds)
    assert {split.scaffolds[i] for i in split.test_scaffolds} == held
    assert not held & {split.scaffolds[i] for i in split.train + split.test}
    assert len(split.test) == 30
    # Whole scaffolds are held out until 10 % is reached: the last one may overshoot.
    largest_group = max(
        sum(1 for i in split.test_scaffolds if split.scaffolds[i] == s) for s in held
    )
    assert 30 <= len(split.test_scaffolds) < 30 + largest_group
    again = scaffold_split(molecules, test_fraction=0.1, scaffold_test_fraction=0.1, seed=3)
    assert again.test_scaffolds == split.test_scaffolds and again.test == split.test
    other = scaffold_split(molecules, test_fraction=0.1, scaffold_test_fraction=0.1, seed=4)
    assert other.test != split.test


def test_invalid_and_duplicates_are_reported():
    smiles = ["CCO", "c1ccccc1CC", "not_smiles", "OCC", "c1ccccc1CCN"]
    split = scaffold_split(smiles, test_fraction=0.0, scaffold_test_fraction=0.0)
    reasons = {item["index"]: item["reason"] for item in split.skipped}
    assert reasons[2].startswith("invalid SMILES")
    assert reasons[3] == "duplicate of input 0"
    assert split.train == [0, 1, 4]
    kept = scaffold_split(smiles, test_fraction=0.0, scaffold_test_fraction=0.0, deduplicate=False)
    assert kept.train == [0, 1, 3, 4]


def test_bad_fractions():
    with pytest.raises(UserInputError):
        scaffold_split(["CCO"], test_fraction=0.6, scaffold_test_fraction=0.5)
    with pytest.raises(UserInputError):
        scaffold_split(["CCO"], test_fraction=-0.1)


def test_write_split_manifest(tmp_path, molecules):
    split = scaffold_split(molecules[:100], seed=1)
    manifest_path = write_split(split, molecules[:100], tmp_path, input_path=DATA / "moses_train_2000.txt")
    manifest = json.loads(manifest_path.read_text())
    assert manifest["sizes"] == split.sizes and manifest["seed"] == 1
    for name, entry in manifest["files"].items():
        assert sha256_file(tmp_path / name) == entry["sha256"]
    rows = (tmp_path / "test_scaffolds.csv").read_text().splitlines()
    assert rows[0] == "SMILES" and len(rows) == 1 + len(split.test_scaffolds)
