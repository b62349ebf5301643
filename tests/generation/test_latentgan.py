"""LatentGAN (tiny configuration): the heteroencoder learns, the WGAN-GP trains on its codes,
pieces give the uncut model (both stages), later seeds reuse a heteroencoder, seeded sampling."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("pytorch_lightning", reason="the 'train' extra (pytorch-lightning) is not installed")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import learned_helpers as helpers  # noqa: E402

from chemassay.models import check_model, load_model  # noqa: E402


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    folder = tmp_path_factory.mktemp("latentgan") / "model"
    return helpers.train("latentgan", folder), folder


def test_both_stages_train(trained):
    generator, folder = trained
    autoencoder_log = helpers.epoch_log(folder / "autoencoder")
    gan_log = helpers.epoch_log(folder / "gan")
    assert len(autoencoder_log) == 2 and len(gan_log) == 2
    assert autoencoder_log[-1]["val_loss"] < autoencoder_log[0]["val_loss"]
    assert {"critic", "loss"} <= set(gan_log[-1])
    codes = __import__("numpy").load(folder / "latents.npy")
    assert codes.shape == (64, 8)  # gan_train=64 molecules, 8-dimensional codes
    assert generator.info["autoencoder_finished"] and generator.info["finished"]


def test_randomized_inputs_are_the_same_molecule():
    from rdkit import Chem

    from chemassay.suites.generation.baselines.learned import _randomized

    smiles = helpers.train_smiles(20)
    randomized = _randomized(smiles, seed=0)
    assert randomized == _randomized(smiles, seed=0) and randomized != smiles
    assert [Chem.CanonSmiles(s) for s in randomized] == [Chem.CanonSmiles(s) for s in smiles]


def test_pieces_give_the_uncut_model(trained, tmp_path):
    uncut, folder = trained
    pieces = []
    for _ in range(6):
        piece = helpers.train("latentgan", tmp_path / "cut", stop_after_epochs=1)
        pieces.append(piece.finished)
        if piece.finished:
            break
    # 2 heteroencoder epochs, then 2 GAN epochs: the piece that ends the first stage starts the second.
    assert pieces == [False, False, True]
    for stage in ("autoencoder", "gan"):
        assert helpers.same_weights(folder / stage / "last.ckpt", tmp_path / "cut" / stage / "last.ckpt")
    assert uncut.sample(10, seed=1) == piece.sample(10, seed=1)


def test_a_later_seed_reuses_the_heteroencoder(trained, tmp_path):
    _, folder = trained
    second = helpers.train("latentgan", tmp_path / "s1", seed=1, options=f"autoencoder={folder}")
    assert second.finished
    assert helpers.same_weights(folder / "autoencoder" / "last.ckpt", tmp_path / "s1" / "autoencoder" / "last.ckpt")
    assert not helpers.same_weights(folder / "gan" / "last.ckpt", tmp_path / "s1" / "gan" / "last.ckpt")
    info = json.loads((tmp_path / "s1" / "model.json").read_text())
    assert info["autoencoder_from"] == str(folder.resolve()) and info["seed"] == 1


def test_sampling_is_greedy_decoding_of_generated_codes(trained):
    generator, folder = trained
    assert generator.sampling["temperature"] == 0.0
    assert generator.sample(30, seed=2) == generator.sample(30, seed=2)
    # (a two-epoch GAN decodes most codes greedily to the same string; drawn characters differ by seed)
    helpers.check_sampling(load_model(f"latentgan:{folder},temperature=1", "generator"))
    assert check_model(f"latentgan:{folder}", "generator").passed
