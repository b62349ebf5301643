"""Hand-checked values of the single MOSES metrics on tiny sets."""

import math
from collections import Counter

import numpy as np
import pytest
from rdkit import Chem, DataStructs
from rdkit.Chem import rdFingerprintGenerator

from chemassay.chem.similarity import tanimoto_matrix
from chemassay.suites.generation.descriptors import (
    canonicalize,
    fingerprint_matrix,
    packed_fingerprint,
)
from chemassay.suites.generation.metrics import (
    count_cosine_similarity,
    fraction_unique,
    fraction_valid,
    internal_diversities,
    internal_diversity,
    nearest_neighbour_similarity,
    novelty,
    property_distance,
)


def fingerprints(smiles):
    return fingerprint_matrix([packed_fingerprint(Chem.MolFromSmiles(s)) for s in smiles])


def test_intdiv_of_benzene_and_toluene_by_hand():
    # Morgan r=2/1024 bits: benzene sets 3 bits, toluene 11, all 3 of benzene's are shared,
    # so T = 3/11. Over the 4 ordered pairs (two self-pairs with T = 1):
    # IntDiv = 1 - (1 + 1 + 2 * 3/11) / 4 = 4/11 and IntDiv2 = 1 - sqrt((1 + (3/11)^2) / 2).
    generator = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=1024)
    benzene = generator.GetFingerprint(Chem.MolFromSmiles("c1ccccc1"))
    toluene = generator.GetFingerprint(Chem.MolFromSmiles("Cc1ccccc1"))
    assert (benzene.GetNumOnBits(), toluene.GetNumOnBits()) == (3, 11)
    assert DataStructs.TanimotoSimilarity(benzene, toluene) == 3 / 11
    fps = fingerprints(["c1ccccc1", "Cc1ccccc1"])
    intdiv, intdiv2 = internal_diversities(fps)
    assert intdiv == pytest.approx(4 / 11, abs=1e-15)
    assert intdiv2 == pytest.approx(1 - math.sqrt(65) / 11, abs=1e-15)
    assert internal_diversity(fps, p=1) == pytest.approx(4 / 11, abs=1e-15)
    assert internal_diversity(fps, p=2) == pytest.approx(1 - math.sqrt(65) / 11, abs=1e-15)


def test_intdiv_weights_equal_expanded_duplicates():
    smiles = ["CCO", "CCN", "c1ccccc1", "CC(=O)O", "c1ccncc1"]
    fps = fingerprints(smiles)
    weights = np.array([3, 1, 2, 1, 4])
    expanded = np.repeat(fps, weights, axis=0)
    matrix = tanimoto_matrix(expanded, expanded)
    expected_p1 = 1 - matrix.mean()
    expected_p2 = 1 - np.mean(np.sqrt((matrix**2).mean(axis=1)))
    got = internal_diversities(fps, weights)
    assert got[0] == pytest.approx(expected_p1, abs=1e-14)
    assert got[1] == pytest.approx(expected_p2, abs=1e-14)


def test_intdiv_blocks_cover_every_pair(monkeypatch):
    from chemassay.suites.generation import metrics

    rng = np.random.default_rng(1)
    fps = np.packbits(rng.random((50, 1024)) < 0.05, axis=1, bitorder="little").view("<u8")
    whole = internal_diversities(fps)
    monkeypatch.setattr(metrics, "_BLOCK", 7)  # many blocks, mirrored ones included
    assert internal_diversities(fps) == pytest.approx(whole, abs=1e-14)


def test_snn_by_hand_and_with_duplicates():
    # ethanol vs ethylamine: 6 bits each, 3 shared -> T = 1/3; ethanol vs itself -> 1.
    gen = fingerprints(["CCO", "CCN"])
    ref = fingerprints(["CCO", "CCO"])
    assert nearest_neighbour_similarity(gen, np.array([1.0, 1.0]), ref) == pytest.approx((1 + 1 / 3) / 2)
    assert nearest_neighbour_similarity(gen, np.array([3.0, 1.0]), ref) == pytest.approx((3 + 1 / 3) / 4)


def test_snn_two_empty_fingerprints_count_as_identical_like_moses():
    empty = np.zeros((1, 16), dtype=np.uint64)
    other = fingerprints(["CCO"])
    assert nearest_neighbour_similarity(empty, np.array([1.0]), np.vstack([other, empty])) == 1.0
    assert nearest_neighbour_similarity(empty, np.array([1.0]), other) == 0.0


def test_cosine_on_known_counts():
    assert count_cosine_similarity(Counter(a=3, b=4), Counter(a=3, b=4)) == pytest.approx(1.0)
    assert count_cosine_similarity(Counter(a=1), Counter(b=1)) == 0.0
    assert count_cosine_similarity(Counter(a=1, b=1), Counter(a=5)) == pytest.approx(1 / math.sqrt(2))
    assert count_cosine_similarity(Counter(a=3, b=4), Counter(a=4, b=3)) == pytest.approx(24 / 25)
    assert math.isnan(count_cosine_similarity(Counter(), Counter(a=1)))
    assert math.isnan(count_cosine_similarity(Counter(a=1), Counter()))


def test_cosine_where_the_reference_int64_arithmetic_overflows():
    # Fragment counts of the size MOSES meets: the test set's most common BRICS fragment
    # occurs 126,225 times; a 30,000-molecule sample has ~20,000 of it. The reference
    # multiplies the squared norms as int64, which wraps around here.
    reference = Counter({"[5*]N[5*]": 126225, "[1*]C([6*])=O": 75983, "[4*]C[8*]": 46207, "[3*]OC": 40619})
    generated = Counter({"[5*]N[5*]": 21000, "[1*]C([6*])=O": 13000, "[4*]C[8*]": 8000, "[3*]OC": 7000, "x": 300})
    uu = sum(v * v for v in reference.values())
    vv = sum(v * v for v in generated.values())
    uv = sum(reference[k] * generated.get(k, 0) for k in reference)
    assert uu * vv > np.iinfo(np.int64).max  # the product the reference forms in int64
    with np.errstate(over="ignore"):
        wrapped = np.int64(uu) * np.int64(vv)
    assert int(wrapped) != uu * vv
    exact = uv / math.sqrt(uu * vv)  # Python integers: no overflow
    assert 0.99 < exact < 1.0
    assert count_cosine_similarity(reference, generated) == pytest.approx(exact, abs=1e-12)


def test_unique_at_k_edge_cases():
    assert fraction_unique(["A", "B", "A", "C"], 4) == (0.75, None)
    assert fraction_unique(["A", "B", "A", "C"], 2) == (1.0, None)  # only the first k count
    assert fraction_unique(["A", "A", "B"], None) == (2 / 3, None)
    value, warning = fraction_unique(["A", "A", "B"], 10)  # fewer than k: divide by 3, warn
    assert value == pytest.approx(2 / 3) and "unique@10" in warning
    value, warning = fraction_unique([], 1000)
    assert math.isnan(value) and warning is not None
    assert fraction_unique(["A"] * 1000, 1000) == (0.001, None)


def test_valid_novelty_and_wasserstein():
    assert fraction_valid([True, False, True, True]) == 0.75
    assert math.isnan(fraction_valid([]))
    assert novelty(["A", "B", "B", "C"], frozenset({"A"})) == pytest.approx(2 / 3)
    assert math.isnan(novelty([], frozenset()))
    # W1 between {0, 1} and {1, 2}: shift every point by one.
    assert property_distance(np.array([0.0, 1.0]), np.array([1.0, 2.0])) == pytest.approx(1.0)


def test_canonicalize_follows_rdkit_molfromsmiles():
    assert canonicalize("OCC") == "CCO"
    assert canonicalize("") is None
    assert canonicalize("C1CC") is None
    assert canonicalize("C(C)(C)(C)(C)C") is None  # pentavalent carbon
    # a chirality tag on a non-stereocentre is cleaned by MolFromSmiles, as MOSES sees it
    assert canonicalize("C[C@H](C)O") == "CC(C)O"


def test_sorted_strings_membership_is_exact(tmp_path, monkeypatch):
    from chemassay.suites.generation.metrics import SortedStrings, training_set

    table = SortedStrings.from_strings(["CCO", "c1ccccc1", "CCN", "CCO"])
    assert len(table) == 3
    probe = ["CCO", "CC", "CCOC", "c1ccccc1", "", "N" * 50, "CCN"]
    assert table.contains(probe).tolist() == [True, False, False, True, False, False, True]
    assert novelty(["CCO", "CCC", "CCC"], table) == pytest.approx(0.5)
    monkeypatch.setenv("CHEMASSAY_HOME", str(tmp_path / "home"))
    train_file = tmp_path / "train.txt"
    train_file.write_text("SMILES\nCCO\nCCN\n")
    first = training_set(str(train_file))
    assert (tmp_path / "home" / "cache" / "generation" / "train-sets").is_dir()
    assert first.contains(["CCN", "CCC"]).tolist() == [True, False]


def test_intdiv_block_sums_numpy_and_torch_agree():
    torch = pytest.importorskip("torch")
    from chemassay.suites.generation.metrics import _block_power_sums_numpy, _block_power_sums_torch

    rng = np.random.default_rng(3)
    common = rng.integers(0, 20, size=(30, 40)).astype(np.int32)
    a = rng.integers(20, 40, size=30).astype(np.float64)
    b = rng.integers(20, 40, size=40).astype(np.float64)
    a[0], b[0], common[0, 0] = 0, 0, 0  # an empty pair counts 1
    wa, wb = rng.random(30), rng.random(40)
    plain = _block_power_sums_numpy(common, a, b, wa, wb, (1, 2), True)
    fast = _block_power_sums_torch(torch, common, a, b, wa, wb, (1, 2), True)
    for p in (1, 2):
        assert np.allclose(plain[p][0], fast[p][0], rtol=1e-14) and np.allclose(plain[p][1], fast[p][1], rtol=1e-14)
