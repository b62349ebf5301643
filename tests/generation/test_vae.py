"""VAE (tiny configuration): loss falls, the KL weight anneals, pieces give the uncut model,
seeded sampling from the prior."""

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
    folder = tmp_path_factory.mktemp("vae") / "model"
    return helpers.train("vae", folder), folder


def test_loss_falls_and_the_kl_weight_follows_the_run(trained):
    generator, folder = trained
    log = helpers.epoch_log(folder)
    assert log[-1]["val_loss"] < helpers.untrained_val_loss("vae", folder) - 0.5
    config = generator.info["config"]
    assert config["kl_epochs"] == 2 and config["kl_w_end"] == 0.05  # reference default: 0 -> 0.05 over the run
    module = generator.model
    assert module.kl_weight() == pytest.approx(0.0)  # epoch 0 of a loaded model


def test_pieces_give_the_uncut_model(trained, tmp_path):
    helpers.check_pieces("vae", trained[1], tmp_path)


def test_sampling(trained):
    generator, folder = trained
    helpers.check_sampling(generator)
    assert check_model(f"vae:{folder}", "generator").passed
