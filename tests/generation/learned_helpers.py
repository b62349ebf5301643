"""Shared checks of the learned generators' tests (tiny configurations, a few steps each)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data" / "generation"


def train_smiles(n: int = 300) -> list[str]:
    from chemassay.data.readers import read_smiles_file

    return read_smiles_file(DATA / "moses_train_2000.txt").smiles[:n]


def train(kind: str, folder: Path, *, seed: int = 0, stop_after_epochs: int | None = None, options: str = ""):
    """Train the tiny configuration of ``kind`` into ``folder`` (one piece)."""
    from chemassay.suites.generation.baselines.learned import RunControls, train_spec

    run = RunControls(seed=seed, device="cpu", threads=1, stop_after_epochs=stop_after_epochs, show_progress=False)
    spec = f"{kind}:{folder},size=tiny" + (f",{options}" if options else "")
    return train_spec(spec, train_smiles(), run=run)


def weights(path: Path) -> dict:
    import torch

    return torch.load(path, map_location="cpu", weights_only=False)["state_dict"]


def same_weights(first: Path, second: Path) -> bool:
    import torch

    a, b = weights(first), weights(second)
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def epoch_log(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "train_log.jsonl").read_text().splitlines() if line.strip()]


def untrained_val_loss(kind: str, folder: Path) -> float:
    """The validation loss of the untrained model (same configuration, same seed) on the run's
    held-out molecules, computed the way training logs ``val_loss``."""
    import torch

    from chemassay.suites.generation.baselines import learned
    from chemassay.suites.generation.baselines.neural import CharVocab, held_out_split, pad_collate

    info = learned.read_info(folder)
    vocab = CharVocab(info["vocab"])
    _, val = held_out_split(train_smiles(), info["training"]["val"])
    torch.manual_seed(0)
    module = learned._module_for(kind, info, vocab).eval()
    batch = pad_collate(vocab.pad)([vocab.encode(s) for s in val])
    with torch.no_grad():
        if kind == "vae":
            return float(sum(module._losses(batch)[1:]))  # KL weight is 0 in the first epoch
        if kind == "aae":
            return float(module._reconstruction(*batch, module.encode(*batch)))
        return float(module._loss(batch))


def check_pieces(kind: str, uncut_folder: Path, tmp_path: Path, epochs: int = 2) -> None:
    """A run cut into one-epoch pieces ends with the weights of the uncut run in ``uncut_folder``
    (trained by :func:`train` with the same settings)."""
    from chemassay.models import load_model

    uncut = load_model(f"{kind}:{uncut_folder}", "generator")
    outcomes = []
    for _ in range(epochs + 2):
        piece = train(kind, tmp_path / "cut", stop_after_epochs=1)
        outcomes.append(piece.finished)
        if piece.finished:
            break
    assert outcomes == [False] * (epochs - 1) + [True]
    assert same_weights(uncut_folder / "last.ckpt", tmp_path / "cut" / "last.ckpt")
    assert uncut.sample(12, seed=4) == piece.sample(12, seed=4)


def check_sampling(generator) -> None:
    from chemassay.contract.errors import UserInputError

    first = generator.sample(40, seed=7)
    assert len(first) == 40 and all(isinstance(s, str) for s in first)
    assert generator.sample(40, seed=7) == first
    assert generator.sample(40, seed=8) != first
    assert generator.sample(0, seed=7) == []
    with pytest.raises(UserInputError):
        generator.sample(-1, seed=7)
    assert all(len(s) <= 100 for s in first)
