"""AAE (tiny configuration): reconstruction loss falls, autoencoder and discriminator steps
alternate, pieces give the uncut model, seeded sampling from the prior."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("pytorch_lightning", reason="the 'train' extra (pytorch-lightning) is not installed")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import learned_helpers as helpers  # noqa: E402

from chemassay.models import check_model  # noqa: E402


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    folder = tmp_path_factory.mktemp("aae") / "model"
    return helpers.train("aae", folder), folder


def test_reconstruction_falls_and_both_players_train(trained):
    generator, folder = trained
    log = helpers.epoch_log(folder)
    assert log[-1]["val_loss"] < helpers.untrained_val_loss("aae", folder) - 0.5
    assert {"adv", "disc", "loss"} <= set(log[-1])  # autoencoder and discriminator steps alternate
    assert generator.info["config"]["disc_layers"] == [16]


def test_pieces_give_the_uncut_model(trained, tmp_path):
    helpers.check_pieces("aae", trained[1], tmp_path)


def test_sampling(trained):
    generator, folder = trained
    helpers.check_sampling(generator)
    assert check_model(f"aae:{folder}", "generator").passed
