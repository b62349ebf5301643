"""Distribution-shift analysis: fingerprints, reagent removal, exact blocked kNN, the CLI."""

from __future__ import annotations

import csv
import gzip
import json

import numpy as np
import pandas as pd
import pytest

from chemassay.chem.reactions import Reaction, detect_reagents, parse_reaction
from chemassay.data import dataset_file
from chemassay.suites.reaction_ood.shift import (
    ShiftConfig,
    distribution_shift,
    knn_cosine_similarities,
    molecule_counts,
    reaction_vectors,
    split_reactants,
)


@pytest.fixture(scope="module")
def schneider_reactions() -> list[str]:
    path = dataset_file("schneider-50k", "schneider50k.csv.gz")
    with gzip.open(path, "rt", newline="") as handle:
        rows = [row["rxn"] for _, row in zip(range(700), csv.DictReader(handle), strict=False)]
    return rows


def brute_force(test: np.ndarray, train: np.ndarray, k: int) -> np.ndarray:
    a = test.astype(np.float64)
    b = train.astype(np.float64)
    na = np.linalg.norm(a, axis=1)
    nb = np.linalg.norm(b, axis=1)
    sims = (a @ b.T) / np.outer(np.where(na > 0, na, 1), np.where(nb > 0, nb, 1))
    return -np.sort(-sims, axis=1)[:, :k]


def test_reagents_removed_as_detect_reagents_does(schneider_reactions):
    for text in schneider_reactions[:150]:
        reaction = parse_reaction(text)
        candidates = Reaction(reaction.reactants + reaction.reagents, [], reaction.products)
        mask = detect_reagents(candidates)
        expected = [s for s, r in zip(candidates.reactants, mask, strict=True) if not r] or candidates.reactants
        assert split_reactants(text)[0] == expected


def test_atom_maps_decide_reagents_when_present():
    mapped = "[CH3:1][C:2](=[O:3])Cl.[NH2:4][CH3:5].CCN(CC)CC.ClCCl>>[CH3:1][C:2](=[O:3])[NH:4][CH3:5]"
    reactants, products = split_reactants(mapped)
    assert reactants == ["[CH3:1][C:2](=[O:3])Cl", "[NH2:4][CH3:5]"]
    # without maps triethylamine shares C and N with the product, so it stays; the salt goes
    plain, _ = split_reactants("CC(=O)Cl.CN.CCN(CC)CC.[Na+].[Cl-]>>CNC(C)=O")
    assert plain == ["CC(=O)Cl", "CN", "CCN(CC)CC"]


def test_difference_fingerprint_is_products_minus_reactants():
    config = ShiftConfig()
    vectors = reaction_vectors(["CC(=O)Cl.CN>>CNC(C)=O"], config=config)
    expected = np.zeros(config.n_bits, dtype=np.float32)
    reactant = np.zeros(config.n_bits, dtype=np.float32)
    for smiles, sign in (("CC(=O)Cl", -1), ("CN", -1), ("CNC(C)=O", 1)):
        bits, counts = molecule_counts(smiles)
        expected[bits] += sign * counts
        if sign < 0:
            reactant[bits] += counts
    assert np.array_equal(vectors.difference.toarray()[0], expected)
    assert np.array_equal(vectors.reactant.toarray()[0], reactant)


def test_unreadable_reactions_are_reported(schneider_reactions):
    vectors = reaction_vectors([schneider_reactions[0], "C1CC>>CC", "CCO"])
    assert vectors.ok.tolist() == [True, False, False]
    assert [p["row"] for p in vectors.problems] == [1, 2]


@pytest.mark.parametrize("space", ["reactant", "difference"])
def test_blocked_knn_equals_brute_force(schneider_reactions, space):
    config = ShiftConfig(k=5, test_block=37, train_block=101)
    train = reaction_vectors(schneider_reactions[:300], config=config)
    test = reaction_vectors(schneider_reactions[600:660], config=config)
    got = knn_cosine_similarities(test.space(space), train.space(space), config=config)
    expected = brute_force(test.space(space).toarray(), train.space(space).toarray(), 5)
    assert got.shape == (60, 5)
    assert np.abs(got - expected).max() < 1e-5
    parallel = knn_cosine_similarities(test.space(space), train.space(space), config=config, n_jobs=2)
    assert np.array_equal(parallel, got)


def test_identical_reaction_has_zero_distance_and_summaries(schneider_reactions):
    train = schneider_reactions[:200]
    result = distribution_shift(train, {"seen": train[:20], "new": schneider_reactions[300:340]},
                                config=ShiftConfig(k=1))
    assert np.allclose(result.distances["seen"]["reactant"], 0.0, atol=1e-6)
    assert result.summaries["seen/reactant"]["median"] == pytest.approx(0.0, abs=1e-6)
    assert result.summaries["new/reactant"]["median"] > 0.05
    assert result.summaries["new/difference"]["n"] == 40


def test_shift_cli_writes_result_and_plot(cli, tmp_path, schneider_reactions):
    train = tmp_path / "train.csv"
    test = tmp_path / "test.parquet"
    pd.DataFrame({"rxn_smiles": schneider_reactions[:300]}).to_csv(train, index=False)
    pd.DataFrame({"rxn_smiles": schneider_reactions[300:360] + ["C1CC>>C"]}).to_parquet(test)
    out = tmp_path / "shift.json"
    png = tmp_path / "shift.png"
    items = tmp_path / "items.csv"
    run = cli("reaction-ood", "shift", "--train", train, "--test", f"random={test}", "--out", out,
              "--plot", png, "--per-item", items, "--maps", "none")
    assert run.code == 0, run.stderr
    data = json.loads(out.read_text())
    assert data["task"] == "shift" and data["n"] == 60
    assert data["skipped"][0]["line"] == 62 and data["skipped"][0]["item"] == "random"
    assert 0 < data["metrics"]["random/reactant_median"] < 1
    summary = data["details"]["summaries"]["random/reactant"]
    assert summary["n"] == 60 and summary["q25"] <= summary["median"] <= summary["q75"]
    assert data["details"]["plot"] == str(png) and data["details"]["per_item"] == str(items)
    assert png.stat().st_size > 5000
    assert len(pd.read_csv(items)) == 61


def test_float32_path_for_counts_beyond_int8_and_cosine_of_zero_rows():
    import scipy.sparse as sp

    rng = np.random.default_rng(1)
    train = rng.integers(0, 3, size=(50, 128)).astype(np.float32)
    test = rng.integers(0, 3, size=(7, 128)).astype(np.float32)
    train[3, 5] = 200.0          # forces the float32 products
    test[2] = 0.0                # an empty fingerprint: distance 1 to everything
    config = ShiftConfig(n_bits=128, k=3, test_block=4, train_block=16)
    got = knn_cosine_similarities(sp.csr_matrix(test), sp.csr_matrix(train), config=config)
    assert np.abs(got - brute_force(test, train, 3)).max() < 1e-5
    assert np.all(got[2] == 0.0)
    with pytest.raises(Exception, match="unknown device"):
        knn_cosine_similarities(sp.csr_matrix(test), sp.csr_matrix(train), config=config, device="tpu")
