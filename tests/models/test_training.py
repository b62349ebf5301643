"""Resumable training: a run cut into pieces ends with exactly the weights of an uncut run."""

import json

import pytest

torch = pytest.importorskip("torch")
pl = pytest.importorskip("pytorch_lightning", reason="the 'train' extra (pytorch-lightning) is not installed")

from chemassay.contract.errors import UserInputError  # noqa: E402
from chemassay.models.training import TrainSettings, fit, load_module_state  # noqa: E402


class Tiny(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Dropout(0.3), torch.nn.Linear(16, 1))

    def training_step(self, batch, idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.net(x).squeeze(-1), y)
        self.log("loss", loss)
        return loss

    def validation_step(self, batch, idx):
        x, y = batch
        self.log("val_loss", torch.nn.functional.mse_loss(self.net(x).squeeze(-1), y))

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-2)

    def count_items(self, batch):
        return len(batch[0])


def _data():
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(100, 8, generator=generator)
    y = x.sum(1)
    return [(x[i], y[i]) for i in range(100)]


def _collate(items):
    return torch.stack([a for a, _ in items]), torch.stack([b for _, b in items])


def _run(out, **overrides):
    torch.manual_seed(123)
    module = Tiny()
    settings = TrainSettings(seed=1, max_epochs=4, steps_per_epoch=5, batch_size=16, patience=None, progress=False)
    for key, value in overrides.items():
        setattr(settings, key, value)
    data = _data()
    return module, fit(module, data, _collate, out, settings, val_dataset=data[:20])


def _weights(folder):
    return torch.load(folder / "last.ckpt", map_location="cpu", weights_only=False)["state_dict"]


def test_pieces_give_the_uncut_model(tmp_path):
    _, uncut = _run(tmp_path / "uncut")
    assert uncut.finished and uncut.epochs_done == 4 and uncut.global_step == 20
    outcomes = []
    for _ in range(6):
        _, outcome = _run(tmp_path / "cut", stop_after_epochs=1)
        outcomes.append(outcome.finished)
        if outcome.finished:
            break
    assert outcomes == [False, False, False, True]
    first, second = _weights(tmp_path / "uncut"), _weights(tmp_path / "cut")
    assert all(torch.equal(first[k], second[k]) for k in first)
    log = [json.loads(line) for line in (tmp_path / "cut" / "train_log.jsonl").read_text().splitlines()]
    assert [row["epoch"] for row in log] == [0, 1, 2, 3] and all("val_loss" in row for row in log)


def test_a_piece_cut_mid_epoch_replays_that_epoch(tmp_path):
    _run(tmp_path / "uncut")
    _, first = _run(tmp_path / "cut", max_minutes=0.0)  # stops after its first step, mid-epoch
    assert not first.finished and first.epochs_done == 0 and first.stopped_by == "time limit of this piece"
    _, second = _run(tmp_path / "cut")
    assert second.finished
    a, b = _weights(tmp_path / "uncut"), _weights(tmp_path / "cut")
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_resuming_with_other_settings_is_refused(tmp_path):
    _run(tmp_path / "run", stop_after_epochs=1)
    with pytest.raises(UserInputError, match="other settings \\(batch_size\\)"):
        _run(tmp_path / "run", batch_size=8)


def test_a_bad_checkpoint_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.ckpt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(UserInputError, match="not a usable checkpoint"):
        load_module_state(Tiny(), bad)


def test_training_in_a_log_shows_its_epochs_and_no_lightning_noise(tmp_path):
    """stderr is a pipe (a log file, CI): progress comes as lines ("epoch 2/2: ..."), counted
    from 1 to the number of epochs, and Lightning's banners, tips and warnings stay out."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "CHEMASSAY_PROGRESS_INTERVAL": "0", "CHEMASSAY_NO_STORE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "chemassay", "models", "train", "seq2seq", "--train", "uspto-15k", "--limit", "40",
         "--valid-limit", "8", "--config", "tiny", "--max-epochs", "2", "--steps-per-epoch", "3",
         "--out", str(tmp_path / "m"), "--threads", "1", "--device", "cpu"],
        capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "epoch 1/2: " in done.stderr and "epoch 2/2: 3/3 (100 %)" in done.stderr
    for noise in ("GPU available", "TPU available", "litlogger", "Tip", "limit_val_batches", "LeafSpec",
                  "Warning", "Epoch 1/"):
        assert noise not in done.stderr, done.stderr
