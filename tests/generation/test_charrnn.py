"""CharRNN (tiny configuration): loss falls, pieces give the uncut model, seeded sampling,
the model kind, and the one-line errors of the learned kinds (shown on CharRNN)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("pytorch_lightning", reason="the 'train' extra (pytorch-lightning) is not installed")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import learned_helpers as helpers  # noqa: E402

from chemassay.contract.errors import UserInputError  # noqa: E402
from chemassay.models import check_model, load_model, model_ref  # noqa: E402


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    folder = tmp_path_factory.mktemp("charrnn") / "model"
    return helpers.train("charrnn", folder), folder


def test_loss_falls_and_the_run_is_recorded(trained):
    generator, folder = trained
    log = helpers.epoch_log(folder)
    assert [row["epoch"] for row in log] == [0, 1]
    assert log[-1]["val_loss"] < helpers.untrained_val_loss("charrnn", folder) - 0.5
    assert all(row["items_per_s"] > 0 for row in log)
    info = generator.info
    assert info["finished"] and info["epochs_done"] == 2 and info["size"] == "tiny"
    assert info["config"]["hidden"] == 32 and info["train"]["n_train"] == 300 and info["train"]["n_val"] == 32


def test_pieces_give_the_uncut_model(trained, tmp_path):
    helpers.check_pieces("charrnn", trained[1], tmp_path)


def test_sampling_is_seeded_and_the_kind_passes_the_contract(trained):
    generator, folder = trained
    helpers.check_sampling(generator)
    loaded = load_model(f"charrnn:{folder}", "generator")
    assert loaded.sample(25, seed=2) == generator.sample(25, seed=2)
    other = load_model(f"charrnn:{folder},batch=7", "generator")
    assert other.sample(25, seed=2) == other.sample(25, seed=2)
    report = check_model(f"charrnn:{folder}", "generator")
    assert report.passed, report.summary()
    ref = model_ref(loaded)
    assert ref.kind == "charrnn" and ref.parameters["hidden"] == 32 and len(ref.checksum) == 64
    greedy = load_model(f"charrnn:{folder},temperature=0", "generator")
    assert len(set(greedy.sample(5, seed=1))) == 1  # greedy decoding ignores the seed


def test_a_changed_run_is_refused_and_training_options_are_not_sampling_options(trained, tmp_path):
    _, folder = trained
    with pytest.raises(UserInputError, match="other settings \\(config\\)"):
        helpers.train("charrnn", folder, options="hidden=48")
    with pytest.raises(UserInputError, match="training options"):
        load_model(f"charrnn:{folder},size=cpu", "generator")
    with pytest.raises(UserInputError, match="unknown option 'hiden'"):
        helpers.train("charrnn", tmp_path / "typo", options="hiden=48")
    with pytest.raises(UserInputError, match="no trained CharRNN model there"):
        load_model(f"charrnn:{tmp_path / 'missing'}", "generator")


def test_another_kind_or_damaged_weights_are_one_line_exit_2(cli, trained, tmp_path):
    _, folder = trained
    out = tmp_path / "s.txt"
    wrong = cli("generation", "predict", "--model", f"vae:{folder}", "--n", "5", "--out", out)
    assert wrong.code == 2 and "holds a CharRNN model, not a VAE one" in wrong.stderr
    assert f"--model charrnn:{folder}" in wrong.stderr and len(wrong.stderr.strip().splitlines()) == 1
    ngram = tmp_path / "ngram.npz"
    import chemassay.generation as generation

    generation.train(f"ngram:{ngram}", helpers.train_smiles(50))
    wrong = cli("generation", "predict", "--model", f"charrnn:{ngram}", "--n", "5", "--out", out)
    assert wrong.code == 2 and "use --model ngram:" in wrong.stderr
    wrong = cli("generation", "predict", "--model", f"ngram:{folder}", "--n", "5", "--out", out)
    assert wrong.code == 2 and f"holds a charrnn model: use --model charrnn:{folder}" in wrong.stderr
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(folder, broken)
    data = (broken / "last.ckpt").read_bytes()
    (broken / "last.ckpt").write_bytes(data[: len(data) // 3])
    outcome = cli("generation", "predict", "--model", f"charrnn:{broken}", "--n", "5", "--out", out)
    assert outcome.code == 2 and "not a usable checkpoint" in outcome.stderr, outcome.stderr
    assert len(outcome.stderr.strip().splitlines()) == 1 and "Traceback" not in outcome.stderr
    (broken / "model.json").write_text("{not json")
    outcome = cli("generation", "predict", "--model", f"charrnn:{broken}", "--n", "5", "--out", out)
    assert outcome.code == 2 and "damaged" in outcome.stderr and len(outcome.stderr.strip().splitlines()) == 1
    assert not out.exists()


@pytest.mark.parametrize("n", ["0", "-2"])
def test_n_below_one_exits_2(cli, trained, tmp_path, n):
    _, folder = trained
    outcome = cli("generation", "predict", "--model", f"charrnn:{folder}", "--n", n, "--out", tmp_path / "s.txt")
    assert outcome.code == 2 and "--n must be" in outcome.stderr


def test_cli_train_resumes_and_predict_writes_seeded_samples(cli, tmp_path):
    source = tmp_path / "train.txt"
    source.write_text("\n".join(helpers.train_smiles()) + "\n")
    folder = tmp_path / "cli-model"
    first = cli("generation", "train", "--model", f"charrnn:{folder},size=tiny,epochs=1", "--train", source,
                "--seed", "3", "--threads", "1", "--device", "cpu")
    assert first.code == 0, first.stderr
    assert "1 epochs done (finished)" in first.stdout and f"--model charrnn:{folder}" in first.stdout
    again = cli("generation", "train", "--model", f"charrnn:{folder},size=tiny,epochs=1", "--train", source,
                "--seed", "3", "--threads", "1", "--device", "cpu")
    assert again.code == 0 and "finished" in again.stdout
    other_seed = cli("generation", "train", "--model", f"charrnn:{folder},size=tiny,epochs=1", "--train", source,
                     "--seed", "4")
    assert other_seed.code == 2 and "other settings (seed)" in other_seed.stderr
    outs = [tmp_path / "a.txt", tmp_path / "b.txt"]
    for out in outs:
        assert cli("generation", "predict", "--model", f"charrnn:{folder}", "--n", "30", "--seed", "5",
                   "--out", out).code == 0
    assert outs[0].read_text() == outs[1].read_text() and len(outs[0].read_text().splitlines()) == 30


def test_paper_presets_are_the_moses_settings():
    # The GPU commands in docs/generation.md train these (size=paper); pinned against the MOSES
    # paper (appendix C) and the reference code's defaults.
    from chemassay.suites.generation.baselines.learned import training_plan

    charrnn = training_plan("charrnn", {"size": "paper"})
    assert charrnn["config"] == {"hidden": 768, "layers": 3, "dropout": 0.2, "lr": 1e-3, "lr_step": 10,
                                 "lr_gamma": 0.5}
    assert charrnn["training"]["epochs"] == 80 and charrnn["training"]["batch_size"] == 64
    assert charrnn["training"]["steps"] is None  # one pass over the training set per epoch
    vae = training_plan("vae", {"size": "paper"})
    assert (vae["config"]["dec_layers"], vae["config"]["dec_hidden"], vae["config"]["latent"]) == (3, 512, 128)
    assert vae["config"]["kl_epochs"] == vae["training"]["epochs"] == 100 and vae["training"]["grad_clip"] == 50
    aae = training_plan("aae", {"size": "paper"})
    assert (aae["config"]["enc_hidden"], aae["config"]["dec_layers"], aae["config"]["disc_layers"]) == (512, 2,
                                                                                                      [640, 256])
    assert (aae["training"]["epochs"], aae["training"]["batch_size"], aae["config"]["lr_step"]) == (120, 512, 20)
    gan = training_plan("latentgan", {"size": "paper"})
    assert (gan["config"]["enc_layers"], gan["config"]["dec_layers"], gan["config"]["latent"]) == (2, 4, 512)
    assert (gan["training"]["gan_epochs"], gan["config"]["n_critic"], gan["config"]["gp"]) == (2000, 5, 10.0)
    hmm = training_plan("hmm", {"size": "paper"})
    assert hmm["config"]["states"] == 200 and hmm["training"]["iterations"] == 100
    assert hmm["training"]["limit"] == 100_000
    assert training_plan("charrnn", {"size": "paper", "hidden": "512"})["config"]["hidden"] == 512
