"""ChemNet input encoding and the padding shortcut of the FCD activations."""

from pathlib import Path

import numpy as np
import pytest

from chemassay.data.readers import read_smiles_file
from chemassay.suites.generation.chemnet import (
    INPUT_LENGTH,
    chemnet_activations,
    chemnet_tokens,
    frechet_distance,
)

pytest.importorskip("fcd_torch", reason="FCD needs the torch extra")

DATA = Path(__file__).resolve().parents[1] / "data" / "generation"


def test_tokens_follow_the_fcd_encoding():
    symbols = {"C": 0, "Cl": 5, "Br": 8, "c": 29, "(": 13, ")": 14, "=": 25, "X": 33, ".": 34, "O": 2, "1": 17}
    assert chemnet_tokens("CCl") == [0, 5, 34]
    assert chemnet_tokens("c1ccccc1Br") == [29, 17, 29, 29, 29, 29, 29, 17, 8, 34]
    assert chemnet_tokens("C(=O)Z") == [0, 13, 25, 2, 14, symbols["X"], 34]
    assert chemnet_tokens("CC.O") == [0, 0, 34]  # reading stops at the first dot
    assert len(chemnet_tokens("C" * 500)) == INPUT_LENGTH  # cut to 349 symbols + end mark


def test_padding_shortcut_equals_the_plain_network():
    smiles = read_smiles_file(DATA / "moses_test_300.txt").smiles[:30] + ["C" * 200, "CCO"]
    plain = chemnet_activations(smiles, skip_padding=False, batch_size=16, show_progress=False)
    fast = chemnet_activations(smiles, skip_padding=True, batch_size=16, show_progress=False)
    assert plain.shape == (32, 512)
    assert np.abs(plain - fast).max() < 1e-5


def test_frechet_distance_of_identical_and_shifted_gaussians():
    rng = np.random.default_rng(0)
    sample = rng.normal(size=(400, 8))
    mu, sigma = sample.mean(0), np.cov(sample.T)
    assert frechet_distance(mu, sigma, mu, sigma) == pytest.approx(0.0, abs=1e-9)
    # shifting the mean by d adds |d|^2
    assert frechet_distance(mu, sigma, mu + 0.5, sigma) == pytest.approx(8 * 0.25, abs=1e-9)
    # N(0, I) vs N(0, 4I) in 8 dimensions: 8 * (1 + 4 - 2 * 2) = 8
    assert frechet_distance(np.zeros(8), np.eye(8), np.zeros(8), 4 * np.eye(8)) == pytest.approx(8.0)
