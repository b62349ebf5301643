"""HMM (hmmlearn CategoricalHMM with an end symbol): EM raises the likelihood, training
checkpoints every EM iteration and resumes to the uncut parameters, seeded sampling."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("hmmlearn", reason="the 'hmm' extra (hmmlearn) is not installed")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import learned_helpers as helpers  # noqa: E402

from chemassay.contract.errors import UserInputError  # noqa: E402
from chemassay.models import check_model, load_model  # noqa: E402
from chemassay.suites.generation.baselines.hmm import HMMModel  # noqa: E402


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hmm") / "model"
    return helpers.train("hmm", folder), folder


def test_em_raises_the_likelihood(trained):
    generator, folder = trained
    history = generator.model.info["log_likelihood"]
    assert len(history) == 3 and all(b > a for a, b in zip(history, history[1:], strict=False))
    model = generator.model
    assert model.n_states == 4 and model.emissionprob.shape == (4, len(model.chars) + 1)
    assert np.allclose(model.transmat.sum(1), 1) and np.allclose(model.emissionprob.sum(1), 1)
    assert generator.info["train"]["train_limit"] == 100  # the preset's training-set size


def test_pieces_per_em_iteration_give_the_uncut_model(trained, tmp_path):
    _, folder = trained
    finished = []
    for _ in range(5):
        piece = helpers.train("hmm", tmp_path / "cut", stop_after_epochs=1)
        finished.append(piece.finished)
        if piece.finished:
            break
    assert finished == [False, False, True]
    uncut, cut = HMMModel.load(folder / "hmm.npz"), HMMModel.load(tmp_path / "cut" / "hmm.npz")
    assert np.array_equal(uncut.transmat, cut.transmat) and np.array_equal(uncut.emissionprob, cut.emissionprob)


def test_sampling_ends_at_the_end_symbol(trained):
    generator, folder = trained
    helpers.check_sampling(generator)
    samples = generator.sample(300, seed=0)
    assert any(len(s) < 100 for s in samples)  # molecules end by emitting the end symbol
    assert set("".join(samples)) <= set(generator.model.chars)
    assert check_model(f"hmm:{folder}", "generator").passed
    with pytest.raises(UserInputError, match="temperature 1 only"):
        load_model(f"hmm:{folder},temperature=0.5", "generator")


def test_a_damaged_model_file_is_a_clear_error(trained, tmp_path):
    _, folder = trained
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    (copy / "hmm.npz").write_bytes(b"PK\x03\x04 not really")
    with pytest.raises(UserInputError, match="not a chemassay HMM, or a damaged one"):
        load_model(f"hmm:{copy}", "generator")
