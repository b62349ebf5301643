"""Fine-tuning a SMILES language model on a property (AMORE's Tables 12–20), as a property predictor.

``hf-finetune:DIR`` is a property-predictor kind: given the training split of a property
table (the ``downstream`` command supplies it; without one, the bundled solubility training
split, logS), it fine-tunes the checkpoint in ``DIR`` — its encoder (for an encoder–decoder
model) or the whole network (encoder-only, decoder-only) — with a linear head on the mean of
the last hidden state over the real tokens: one output per regression target (targets
standardised), or one logit per class of each classification target. Training runs through
:func:`chemassay.models.training.fit` (seeded, resumable) into the cache
(``$CHEMASSAY_HOME/cache/robustness/finetuned/<key>``, the key covering the checkpoint's
files, the training data and the settings), so a repeated ``downstream`` call reuses it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from chemassay.contract.errors import UserInputError, require
from chemassay.models.hf_encoder import checkpoint_digest, checkpoint_kind, quiet_transformers
from chemassay.models.spec import check_options, option_float, option_int
from chemassay.models.training import CHECKPOINT, TrainSettings, fit, load_module_state
from chemassay.runtime.cache import cache_root

FINETUNE_OPTIONS = {
    "epochs": "passes of steps_per_epoch steps (default 20)",
    "steps_per_epoch": "optimizer steps per epoch (default 32)",
    "lr": "learning rate (default 1e-4)",
    "batch_size": "molecules per step (default 32)",
    "seed": "random seed (default: the command's --seed)",
    "device": "cpu, cuda or auto",
    "threads": "CPU threads for torch (default: torch's choice)",
}


class FineTunedLM:
    """A language model with a property head, fine-tuned on a training split."""

    def __init__(self, folder: str | Path, task: str, n_outputs: list[int], *, epochs: int = 20,
                 steps_per_epoch: int = 32, learning_rate: float = 1e-4, batch_size: int = 32, seed: int = 0,
                 device: str = "cpu", threads: int | None = None) -> None:
        self.path = Path(folder)
        if not (self.path / "config.json").is_file():
            raise UserInputError(f"{self.path}: not a Hugging Face checkpoint folder (no config.json)")
        self.task = task
        self.n_outputs = n_outputs
        self.settings = {"epochs": epochs, "steps_per_epoch": steps_per_epoch, "learning_rate": learning_rate,
                         "batch_size": batch_size, "seed": seed}
        self.device = device
        self.threads = threads
        self.name = f"hf-finetune:{self.path.name}"
        self.failures: dict[int, str] = {}
        self.trained_on = ""
        self.mean = self.std = None
        self._module = None

    def describe(self) -> dict[str, Any]:
        """Settings and training data that determine the predictions."""
        return {"checkpoint": str(self.path), "task": self.task, **self.settings, "trained_on": self.trained_on}

    def _build(self):
        pl = require("pytorch_lightning", "train", "fine-tuning a language model")
        torch = require("torch", "hf", "fine-tuning a language model")
        transformers = require("transformers", "hf", "fine-tuning a language model")

        quiet_transformers()
        try:
            config = transformers.AutoConfig.from_pretrained(self.path, local_files_only=True)
            tokenizer = transformers.AutoTokenizer.from_pretrained(self.path, local_files_only=True)
            backbone = transformers.AutoModel.from_pretrained(self.path, local_files_only=True)
        except (OSError, ValueError, KeyError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise UserInputError(f"{self.path}: cannot load the checkpoint ({first})") from None
        if checkpoint_kind(config) == "encoder-decoder":
            backbone = backbone.get_encoder()
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token or tokenizer.unk_token
        hidden = getattr(config, "hidden_size", None) or getattr(config, "d_model", None) or config.n_embd
        settings, task, outputs = self.settings, self.task, self.n_outputs

        class PropertyLM(pl.LightningModule):
            def __init__(self) -> None:
                super().__init__()
                self.backbone = backbone
                self.head = torch.nn.Linear(hidden, sum(outputs))

            def forward(self, batch):
                states = self.backbone(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).last_hidden_state
                weights = batch["attention_mask"].to(states.dtype)[:, :, None]
                return self.head((states * weights).sum(1) / weights.sum(1))

            def _loss(self, batch):
                output = self(batch)
                if task == "regression":
                    return torch.nn.functional.mse_loss(output, batch["y"])
                losses, start = [], 0
                for j, size in enumerate(outputs):
                    losses.append(torch.nn.functional.cross_entropy(output[:, start:start + size], batch["y"][:, j]))
                    start += size
                return torch.stack(losses).mean()

            def training_step(self, batch, batch_idx):
                loss = self._loss(batch)
                self.log("loss", loss.detach(), on_step=True, on_epoch=True, batch_size=len(batch["y"]))
                return loss

            def validation_step(self, batch, batch_idx):
                self.log("val_loss", self._loss(batch).detach(), on_epoch=True, batch_size=len(batch["y"]))

            def configure_optimizers(self):
                return torch.optim.AdamW(self.parameters(), lr=settings["learning_rate"], weight_decay=0.01)

            def count_items(self, batch) -> int:
                return len(batch["y"])

        max_length = min(512, int(getattr(tokenizer, "model_max_length", 512) or 512))

        def collate(items):
            texts = [item[0] for item in items]
            encoded = tokenizer(texts, padding=True, truncation=True, max_length=max_length, return_tensors="pt")
            values = np.asarray([item[1] for item in items])
            y = torch.tensor(values, dtype=torch.float32 if task == "regression" else torch.long)
            return {"input_ids": encoded["input_ids"], "attention_mask": encoded["attention_mask"], "y": y}

        return PropertyLM(), collate, torch

    def fit(self, smiles: Sequence[str], targets: np.ndarray, folder: Path) -> FineTunedLM:
        """Fine-tune on ``smiles`` / ``targets`` ``(n, targets)`` into ``folder`` (resumes there)."""
        targets = np.asarray(targets)
        if self.task == "regression":
            self.mean, self.std = targets.mean(axis=0), targets.std(axis=0)
            self.std = np.where(self.std > 0, self.std, 1.0)
            scaled = (targets - self.mean) / self.std
        else:
            scaled = targets
        module, collate, torch = self._build()
        torch.manual_seed(self.settings["seed"])
        module.head.reset_parameters()
        items = [(s, row) for s, row in zip(smiles, scaled, strict=True)]
        order = np.random.default_rng(self.settings["seed"]).permutation(len(items))
        n_valid = max(1, len(items) // 10)
        valid = [items[i] for i in order[:n_valid]]
        train = [items[i] for i in order[n_valid:]]
        settings = TrainSettings(seed=self.settings["seed"], max_epochs=self.settings["epochs"],
                                 steps_per_epoch=self.settings["steps_per_epoch"], batch_size=self.settings["batch_size"],
                                 patience=None, device=self.device, threads=self.threads, progress=False)
        outcome = fit(module, train, collate, folder, settings, val_dataset=valid, lengths=[len(s) for s, _ in train])
        if not outcome.finished:
            raise UserInputError(f"{folder}: fine-tuning stopped before the end; run the command again to resume")
        load_module_state(module, folder / CHECKPOINT)
        self._module, self._collate, self._torch = module.cpu().eval(), collate, torch
        return self

    def predict_targets(self, smiles: Sequence[str]) -> list[np.ndarray]:
        """Per target: values ``(n,)`` (regression) or class probabilities ``(n, classes)``."""
        if self._module is None:
            raise UserInputError("the fine-tuned model has not been trained")
        torch = self._torch
        self.failures = {}
        outputs = []
        texts = list(smiles)
        with torch.no_grad():
            for start in range(0, len(texts), 64):
                chunk = texts[start:start + 64]
                dummy = [0.0] * len(self.n_outputs) if self.task == "regression" else [0] * len(self.n_outputs)
                batch = self._collate([(t, dummy) for t in chunk])
                outputs.append(self._module(batch).float().numpy())
        matrix = np.concatenate(outputs) if outputs else np.zeros((0, sum(self.n_outputs)))
        if self.task == "regression":
            values = matrix * self.std + self.mean
            return [values[:, j].astype(np.float64) for j in range(values.shape[1])]
        result, start = [], 0
        for size in self.n_outputs:
            logits = matrix[:, start:start + size]
            exp = np.exp(logits - logits.max(axis=1, keepdims=True))
            result.append((exp / exp.sum(axis=1, keepdims=True)).astype(np.float64))
            start += size
        return result

    def predict_properties(self, smiles: Sequence[str]) -> np.ndarray | list[np.ndarray]:
        """The property-predictor protocol (same shapes as the random forests)."""
        outputs = self.predict_targets(smiles)
        if self.task == "classification":
            return outputs[0] if len(outputs) == 1 else outputs
        return outputs[0] if len(outputs) == 1 else np.stack(outputs, axis=1)


def create_finetuned(spec, protocol: str, context: dict[str, Any]) -> FineTunedLM:
    """Factory of ``hf-finetune:DIR``: fine-tunes on the context's training split (see the module doc)."""
    check_options(spec, set(FINETUNE_OPTIONS))
    if not spec.arg:
        raise UserInputError("--model hf-finetune:DIR needs a checkpoint folder (e.g. one written by robustness train)")
    if context.get("train_smiles") is not None:
        smiles = list(context["train_smiles"])
        targets = np.asarray(context["train_targets"])
        task = context.get("task", "regression")
        trained_on = context.get("trained_on", "the command's training split")
    else:
        from chemassay.data.registry import load_dataset

        train = load_dataset("solubility-huuskonen", part="train")
        smiles, targets = train.smiles, np.asarray([[float(v)] for v in train.columns["logS"]])
        task, trained_on = "regression", "solubility-huuskonen/train (logS)"
    targets = targets[:, None] if targets.ndim == 1 else targets
    n_outputs = [1] * targets.shape[1] if task == "regression" else [int(targets[:, j].max()) + 1
                                                                      for j in range(targets.shape[1])]
    threads = spec.options.get("threads")
    model = FineTunedLM(
        spec.arg, task, n_outputs, epochs=option_int(spec, "epochs", 20, minimum=1),
        steps_per_epoch=option_int(spec, "steps_per_epoch", 32, minimum=1),
        learning_rate=option_float(spec, "lr", 1e-4), batch_size=option_int(spec, "batch_size", 32, minimum=1),
        seed=option_int(spec, "seed", int(context.get("seed", 0))),
        device=spec.options.get("device") or context.get("device") or "cpu",
        threads=int(threads) if threads else None,
    )
    model.trained_on = trained_on
    key = hashlib.sha256(json.dumps({
        "checkpoint": checkpoint_digest(model.path), "smiles": hashlib.sha256("\n".join(smiles).encode()).hexdigest(),
        "targets": hashlib.sha256(np.ascontiguousarray(targets, dtype=np.float64).tobytes()).hexdigest(),
        "task": task, **model.settings,
    }, sort_keys=True).encode()).hexdigest()[:24]
    return model.fit(smiles, targets, cache_root() / "robustness" / "finetuned" / key)
