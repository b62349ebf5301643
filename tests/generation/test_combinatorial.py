"""Combinatorial BRICS baseline: fragments, joins, reference samples, valid joins."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from rdkit import Chem

from chemassay.contract.errors import UserInputError
from chemassay.suites.generation.baselines.combinatorial import (
    CombinatorialGenerator,
    attachment_points,
    brics_fragments,
    join_at,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "generation"


def _moses_train() -> list[str]:
    """The first 2,000 MOSES train SMILES (the file's first line is the SMILES header)."""
    lines = (DATA / "moses_train_2000.txt").read_text().split()
    assert lines[0] == "SMILES"
    return lines[1:]


@pytest.fixture(scope="module")
def trained() -> CombinatorialGenerator:
    return CombinatorialGenerator.fit(_moses_train(), n_jobs=2)


def test_brics_fragments_hand_checked():
    # Ethyl benzoate: ester C(=O)-O and O-CH2 bonds and the ring-carbonyl bond are BRICS bonds.
    assert brics_fragments("CCOC(=O)c1ccccc1") == ["[1*]C([6*])=O", "[16*]c1ccccc1", "[3*]O[3*]", "[4*]CC"]
    assert brics_fragments("CC(=O)Nc1ccccc1") == ["[1*]C(C)=O", "[16*]c1ccccc1", "[5*]N[5*]"]
    assert brics_fragments("CCCC") == ["CCCC"]


def test_join_removes_both_attachment_points():
    methyl = Chem.MolFromSmiles("[1*]C")
    hydroxyl = Chem.MolFromSmiles("[3*]O")
    joined = join_at(methyl, hydroxyl, attachment_points(methyl)[0], attachment_points(hydroxyl)[0])
    assert Chem.MolToSmiles(joined) == "CO"


def test_fit_counts(trained):
    assert trained.info["n_train"] == 2000 and trained.info["n_invalid"] == 0
    assert len(trained.fragments) == len(set(trained.fragments))
    assert sum(trained.size_counts) == 2000
    assert trained.fragment_counts.sum() == sum(
        v * c for v, c in zip(trained.size_values, trained.size_counts, strict=True)
    )
    # Counts are occurrences over all molecules, in first-seen order.
    first = _moses_train()[:50]
    expected = Counter(fragment for s in first for fragment in brics_fragments(s))
    small = CombinatorialGenerator.fit(first, chunk_size=7)
    assert dict(zip(small.fragments, small.fragment_counts.tolist(), strict=True)) == expected
    assert small.fragments == list(expected)


def test_moses_join_equals_the_reference(trained):
    # Reference file: molsets 0.3.1 CombinatorialGenerator().fit(moses_train_2000);
    # [generate_one(i) for i in 1..20].
    expected = (DATA / "reference_combinatorial_seeds1-20.txt").read_text().splitlines()
    assert [trained.sample_one(i, "moses") for i in range(1, 21)] == expected
    # sample(n, seed) uses per-sample seeds seed*n + i: seed 0 starts at 0.
    assert trained.sample(5, seed=0, join="moses") == [trained.sample_one(i, "moses") for i in range(5)]


def test_brics_join_equals_the_reference_that_made_the_paper_row(trained):
    # Reference file: the MOSES repository's CombinatorialGenerator after its April 2020 change
    # "combinatorial generator updated to do only valid fragment combination" (the version that
    # produced the paper's combinatorial row), fit on moses_train_2000; [generate_one(i) for i in 0..19].
    expected = (DATA / "reference_combinatorial_brics_seeds0-19.txt").read_text().splitlines()
    assert [trained.sample_one(i, "brics") for i in range(20)] == expected
    assert trained.sample(20, seed=0) == expected  # brics is the default join
    # Joins follow RDKit's BRICS rules, so the BRICS fragments of a sample are training fragments.
    fragments = set(trained.fragments)
    for sample in expected[:10]:
        assert set(brics_fragments(sample)) <= fragments, sample


def test_brics_rules_are_rdkits():
    from chemassay.suites.generation.baselines.combinatorial import brics_connection_rules

    partners, pairs = brics_connection_rules()
    assert (1, 3) in pairs and (3, 1) in pairs and (7, 7) in pairs and (16, 16) in pairs
    assert (1, 1) not in pairs and (4, 4) not in pairs
    assert partners[7] == 1 << 7


def test_valid_join_gives_valid_molecules(trained):
    samples = trained.sample(60, seed=2, join="valid")
    assert all(Chem.MolFromSmiles(s) is not None for s in samples)
    assert all("*" not in s for s in samples)
    assert samples == trained.sample(60, seed=2, join="valid")
    assert len(set(samples)) > 50
    assert trained.sample(6, seed=2, n_jobs=2, join="valid") == trained.sample(6, seed=2, join="valid")


def test_single_fragment_molecules():
    model = CombinatorialGenerator.fit(["CCCC", "CCCCC"])
    assert model.size_values == [1]
    assert set(model.sample(10, seed=0)) <= {"CCCC", "CCCCC"}


def test_persistence_and_errors(tmp_path, trained):
    path = trained.save(tmp_path / "comb.json.gz")
    loaded = CombinatorialGenerator.load(path)
    assert loaded.fragments == trained.fragments
    assert loaded.sample(5, seed=1) == trained.sample(5, seed=1)
    with pytest.raises(UserInputError, match="join mode"):
        trained.sample(1, join="anything")
    (tmp_path / "bad.json.gz").write_bytes(b"nope")
    with pytest.raises(UserInputError, match="not a chemassay combinatorial model"):
        CombinatorialGenerator.load(tmp_path / "bad.json.gz")
    model = CombinatorialGenerator.fit(["CCO", "not a smiles"])
    assert model.info["n_invalid"] == 1
