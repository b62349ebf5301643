"""Resumable, deterministic training of chemassay's learned models, on PyTorch Lightning.

Every learned reference model (sequence-to-sequence reaction models, the MOSES generators,
the SMILES language models, the graph network) trains through :func:`fit`, so they all get:

* **pieces**: a run can be cut at any time (``max_minutes`` per piece, a preemptible GPU
  job ending, Ctrl-C, a cluster time limit) and resumed by running the same command again;
* **the same model as an uncut run**: training proceeds in *epochs* of a fixed number of
  optimizer steps (``steps_per_epoch``; the data stream is a deterministic function of the
  seed: pass ``p`` of the data is ``permutation(seed, p)``, and epoch ``e`` takes its
  batches ``e·S … (e+1)·S − 1`` from that stream); every random generator is re-seeded from
  ``(seed, epoch)`` at the start of each epoch; a checkpoint is written atomically at the end
  of every epoch (after validation). A piece that stops mid-epoch resumes from the last
  epoch checkpoint and replays that epoch exactly, so cut and uncut runs end with identical
  weights;
* early stopping on the validation loss (its state is in the checkpoint), mixed precision
  on a GPU (bf16 where supported), a progress bar with the loss and tokens (or molecules) per
  second, and a ``train_log.jsonl`` of every epoch's losses and timings.

A model is a :class:`lightning.LightningModule` (``pytorch_lightning``) whose
``training_step`` returns the loss and logs nothing else it needs; ``count_items(batch)``
(optional) gives the tokens or molecules in a batch for the throughput figure. Data is a
map-style dataset plus a ``collate`` function.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import pickle
import random
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from chemassay.contract.errors import UserInputError, require
from chemassay.runtime.progress import progress_task

CHECKPOINT = "last.ckpt"
LOG = "train_log.jsonl"


@dataclass
class TrainSettings:
    """How to train (the model's own hyper-parameters live in its config)."""

    seed: int = 0
    max_epochs: int = 20
    steps_per_epoch: int = 200
    batch_size: int = 32
    max_minutes: float | None = None
    """Length of this piece; the run stops at the next step after it and can be resumed."""
    stop_after_epochs: int | None = None
    """End this piece after this many more epochs (a deterministic cut, for tests and scripts)."""
    patience: int | None = 5
    """Stop when the validation loss has not improved for this many epochs (``None``: never)."""
    device: str = "auto"
    precision: str = "auto"
    """``32-true``, ``bf16-mixed``, ``16-mixed`` or ``auto`` (bf16 on a GPU that has it, else 32)."""
    threads: int | None = None
    """CPU threads for torch (``None``: torch's default)."""
    grad_clip: float | None = 1.0
    progress: bool | None = None
    """Show the progress bar (``None``: when stderr is a terminal)."""
    val_batches: int | None = None
    """Validation batches per epoch (``None``: the whole validation set)."""
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (recorded in the checkpoint folder)."""
        return asdict(self)


@dataclass
class TrainOutcome:
    """What a call of :func:`fit` did."""

    finished: bool
    """True when training is complete (max epochs or early stopping); False when this piece
    ended early and the same call should be made again to continue."""
    epochs_done: int
    global_step: int
    best_val_loss: float | None
    stopped_by: str
    elapsed_s: float
    checkpoint: Path


class _EpochSetter:
    def __init__(self, owner: EpochBatchSampler) -> None:
        self.owner = owner

    def set_epoch(self, epoch: int) -> None:
        self.owner.set_epoch(epoch)


class EpochBatchSampler:
    """Batches of dataset indices for epoch ``e``: steps ``e·S … (e+1)·S − 1`` of the endless
    stream of seeded permutations (see the module docstring). ``set_epoch`` is called by
    Lightning before each epoch. ``lengths`` (optional) groups similar lengths within windows
    of 50 batches to reduce padding, deterministically."""

    def __init__(self, n: int, batch_size: int, steps_per_epoch: int, seed: int,
                 lengths: Sequence[int] | None = None, drop_last: bool = True) -> None:
        if n < 1:
            raise UserInputError("no training examples")
        self.n = n
        self.batch_size = min(batch_size, n)
        self.steps = steps_per_epoch
        self.seed = seed
        self.lengths = None if lengths is None else np.asarray(lengths)
        self.epoch = 0
        self._per_pass = n // self.batch_size if drop_last else math.ceil(n / self.batch_size)
        # Lightning calls ``set_epoch`` on ``loader.batch_sampler.sampler`` before each epoch.
        self.sampler = _EpochSetter(self)

    def set_epoch(self, epoch: int) -> None:
        self.epoch = int(epoch)

    def _pass_batches(self, pass_index: int) -> list[np.ndarray]:
        # One pass's batches are computed once (a permutation of a large set costs 0.1 s+).
        cached = getattr(self, "_cached_pass", None)
        if cached is not None and cached[0] == pass_index:
            return cached[1]
        batches = self._compute_pass(pass_index)
        self._cached_pass = (pass_index, batches)
        return batches

    def _compute_pass(self, pass_index: int) -> list[np.ndarray]:
        rng = np.random.default_rng([self.seed, pass_index])
        order = rng.permutation(self.n)
        if self.lengths is not None:
            window = self.batch_size * 50
            chunks = [order[i:i + window] for i in range(0, len(order), window)]
            order = np.concatenate([c[np.argsort(self.lengths[c], kind="stable")] for c in chunks])
        batches = [order[i * self.batch_size:(i + 1) * self.batch_size] for i in range(self._per_pass)]
        rng.shuffle(batches)
        return batches

    def __iter__(self):
        start = self.epoch * self.steps
        for step in range(start, start + self.steps):
            pass_index, within = divmod(step, self._per_pass)
            yield self._pass_batches(pass_index)[within].tolist()

    def __len__(self) -> int:
        return self.steps


def seed_everything_for(seed: int, epoch: int) -> None:
    """Seed Python, NumPy and torch from ``(seed, epoch)`` (the start of every epoch)."""
    import torch

    value = (seed * 1_000_003 + epoch) % (2**31 - 1)
    random.seed(value)
    np.random.seed(value)
    torch.manual_seed(value)


def _callbacks(settings: TrainSettings, out: Path, started: float):
    pl = require("pytorch_lightning", "train", "training chemassay's models")

    class EpochControl(pl.Callback):
        """Seeds each epoch, writes the epoch checkpoint and log, cuts pieces."""

        def __init__(self) -> None:
            self.epochs_this_piece = 0
            self.epoch_started = time.perf_counter()
            self.items = 0
            self.stopped_by = "finished"

        def on_train_batch_start(self, trainer, module, batch, batch_idx) -> None:
            # Seeded at the first batch (not at on_train_epoch_start, which Lightning skips for
            # the first epoch after resuming from an end-of-epoch checkpoint), after the data
            # loader has drawn whatever it draws, so dropout depends only on (seed, epoch).
            if batch_idx == 0:
                seed_everything_for(settings.seed, trainer.current_epoch)
                self.epoch_started = time.perf_counter()
                self.items = 0

        def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx) -> None:
            counter = getattr(module, "count_items", None)
            if callable(counter):
                self.items += int(counter(batch))
                elapsed = max(time.perf_counter() - self.epoch_started, 1e-9)
                module.log("items/s", self.items / elapsed, prog_bar=True, on_step=True, on_epoch=False)
            if settings.max_minutes is not None and time.perf_counter() - started > settings.max_minutes * 60:
                self.stopped_by = "time limit of this piece"
                trainer.should_stop = True

        def on_train_epoch_end(self, trainer, module) -> None:
            metrics = {k: float(v) for k, v in trainer.callback_metrics.items() if hasattr(v, "item") and v.numel() == 1}
            if trainer.should_stop and self.stopped_by == "time limit of this piece":
                return  # cut mid-epoch: keep the previous epoch checkpoint, this epoch is replayed
            self.epochs_this_piece += 1
            tmp = out / (CHECKPOINT + ".tmp")
            trainer.save_checkpoint(tmp)
            os.replace(tmp, out / CHECKPOINT)
            record = {"epoch": trainer.current_epoch, "global_step": trainer.global_step,
                      "elapsed_s": round(time.perf_counter() - self.epoch_started, 3),
                      "items_per_s": round(self.items / max(time.perf_counter() - self.epoch_started, 1e-9), 1),
                      **{k: round(v, 6) for k, v in metrics.items()}}
            with open(out / LOG, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(record) + "\n")
            if settings.stop_after_epochs is not None and self.epochs_this_piece >= settings.stop_after_epochs:
                self.stopped_by = "stop_after_epochs"
                trainer.should_stop = True

    class EpochProgress(pl.Callback):
        """Each epoch's steps through chemassay's progress renderer ("epoch 2/6"; a live bar on
        a terminal, a line every few seconds in a log), instead of Lightning's own bar."""

        def __init__(self) -> None:
            self.task = None
            self.advance = None

        def on_train_epoch_start(self, trainer, module) -> None:
            self._close()
            if settings.progress is False:
                return
            total = trainer.num_training_batches if isinstance(trainer.num_training_batches, int) else None
            self.task = progress_task(f"epoch {trainer.current_epoch + 1}/{settings.max_epochs}", total)
            self.advance = self.task.__enter__()

        def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx) -> None:
            if self.advance is not None:
                self.advance(1)

        def on_train_epoch_end(self, trainer, module) -> None:
            self._close()

        def on_exception(self, trainer, module, exception) -> None:
            self._close()

        def _close(self) -> None:
            if self.task is not None:
                task, self.task, self.advance = self.task, None, None
                task.__exit__(None, None, None)

    control = EpochControl()
    callbacks = [control, EpochProgress()]
    if settings.patience is not None:
        callbacks.append(pl.callbacks.EarlyStopping(monitor="val_loss", mode="min", patience=settings.patience,
                                                    check_on_train_epoch_end=False))
    return control, callbacks


def _precision(settings: TrainSettings, accelerator: str) -> str:
    if settings.precision != "auto":
        return settings.precision
    if accelerator == "gpu":
        import torch

        return "bf16-mixed" if torch.cuda.is_bf16_supported() else "16-mixed"
    return "32-true"


def torch_device(device: str) -> str:
    """The torch device for ``auto``/``cpu``/``cuda``/``cuda:N``: a GPU asked for where there is
    none, or an unknown name, is one :class:`UserInputError`."""
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise UserInputError(f"--device {device}: CUDA is not available on this machine (use --device cpu)")
        return device
    if device != "cpu":
        raise UserInputError(f"unknown device {device!r}; use cpu, cuda, cuda:N or auto")
    return "cpu"


def resolve_device(device: str) -> str:
    """``cpu`` or ``gpu`` (Lightning's accelerator name) for ``auto``/``cpu``/``cuda``."""
    return "gpu" if torch_device(device).startswith("cuda") else "cpu"


def fit(
    module,
    train_dataset,
    collate: Callable[[list], Any],
    out: str | os.PathLike,
    settings: TrainSettings,
    *,
    val_dataset=None,
    lengths: Sequence[int] | None = None,
) -> TrainOutcome:
    """Train ``module`` (a LightningModule) into ``out``, resuming from ``out/last.ckpt``.

    Call it again with the same arguments after a piece ended (``finished`` False) to go on;
    a finished run returns at once. ``lengths`` (per training example) groups batches by
    length. The folder receives ``last.ckpt``, ``train_log.jsonl`` and ``train_settings.json``.
    """
    pl = require("pytorch_lightning", "train", "training chemassay's models")
    import torch
    from torch.utils.data import DataLoader

    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    settings_file = target / "train_settings.json"
    recorded = settings.as_dict()
    comparable = {k: v for k, v in recorded.items() if k not in {"max_minutes", "stop_after_epochs", "progress", "device",
                                                                  "threads"}}
    if settings_file.is_file() and (target / CHECKPOINT).is_file():
        before = json.loads(settings_file.read_text(encoding="utf-8"))
        before_cmp = {k: v for k, v in before.items() if k in comparable}
        if before_cmp != comparable:
            changed = sorted(k for k in comparable if before_cmp.get(k) != comparable[k])
            raise UserInputError(
                f"{target}: holds a run with other settings ({', '.join(changed)}); resume with the same settings "
                "or train into another folder"
            )
    settings_file.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    if settings.threads:
        torch.set_num_threads(settings.threads)
    accelerator = resolve_device(settings.device)
    sampler = EpochBatchSampler(len(train_dataset), settings.batch_size, settings.steps_per_epoch, settings.seed, lengths)
    train_loader = DataLoader(train_dataset, batch_sampler=sampler, collate_fn=collate)
    val_loader = None
    if val_dataset is not None and len(val_dataset):
        val_loader = DataLoader(val_dataset, batch_size=settings.batch_size, shuffle=False, collate_fn=collate)
    started = time.perf_counter()
    control, callbacks = _callbacks(settings, target, started)
    checkpoint = target / CHECKPOINT
    with _quiet_lightning():
        # built inside the quiet block: Lightning announces the devices and gives tips here
        trainer = pl.Trainer(
            accelerator=accelerator, devices=1, precision=_precision(settings, accelerator),
            max_epochs=settings.max_epochs, callbacks=callbacks, enable_checkpointing=False, logger=False,
            enable_progress_bar=False, enable_model_summary=False, deterministic=True,
            gradient_clip_val=settings.grad_clip, num_sanity_val_steps=0,
            limit_val_batches=settings.val_batches if settings.val_batches is not None else 1.0,
            default_root_dir=str(target), use_distributed_sampler=False,
        )
        trainer.fit(module, train_dataloaders=train_loader, val_dataloaders=val_loader,
                    ckpt_path=str(checkpoint) if checkpoint.is_file() else None)
    epochs_done = _epochs_logged(target)
    early = any(getattr(c, "stopped_epoch", 0) for c in callbacks if isinstance(c, pl.callbacks.EarlyStopping))
    finished = control.stopped_by == "finished" or bool(early) or epochs_done >= settings.max_epochs
    best = _best_val(target)
    return TrainOutcome(
        finished=finished, epochs_done=epochs_done, global_step=int(trainer.global_step), best_val_loss=best,
        stopped_by="early stopping" if early else control.stopped_by, elapsed_s=time.perf_counter() - started,
        checkpoint=checkpoint,
    )


def _epochs_logged(folder: Path) -> int:
    log = folder / LOG
    if not log.is_file():
        return 0
    return len({json.loads(line)["epoch"] for line in log.read_text(encoding="utf-8").splitlines() if line.strip()})


def _best_val(folder: Path) -> float | None:
    log = folder / LOG
    if not log.is_file():
        return None
    values = [json.loads(line).get("val_loss") for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]
    values = [v for v in values if isinstance(v, (int, float))]
    return min(values) if values else None


@contextlib.contextmanager
def _quiet_lightning():
    """Silence Lightning's banner lines (GPU available, the logger tip, the validation-batch
    note) and its deprecation noise; chemassay prints its own progress."""
    names = ("pytorch_lightning", "lightning.pytorch", "lightning_fabric", "lightning", "pytorch_lightning.utilities.rank_zero",
             "lightning.pytorch.utilities.rank_zero", "lightning.fabric.utilities.rank_zero")
    levels = {name: logging.getLogger(name).level for name in names}
    for name in names:
        logging.getLogger(name).setLevel(logging.ERROR)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*does not have many workers.*")
        warnings.filterwarnings("ignore", message=".*You're resuming from a checkpoint that ended before the epoch ended.*")
        warnings.filterwarnings("ignore", category=UserWarning, module="pytorch_lightning")
        warnings.filterwarnings("ignore", category=DeprecationWarning, module="pytorch_lightning")
        warnings.filterwarnings("ignore", category=DeprecationWarning, module="lightning")
        warnings.filterwarnings("ignore", message=".*isinstance\\(treespec, LeafSpec\\).*")
        try:
            yield
        finally:
            for name, level in levels.items():
                logging.getLogger(name).setLevel(level)


def load_module_state(module, checkpoint: str | os.PathLike):
    """Load a training checkpoint's weights into ``module`` (clear error for a bad file)."""
    import torch

    path = Path(checkpoint)
    if not path.is_file():
        raise UserInputError(f"{path}: no such checkpoint")
    try:
        state = torch.load(path, map_location="cpu", weights_only=False)
        module.load_state_dict(state["state_dict"])
    except (RuntimeError, KeyError, EOFError, OSError, ValueError, TypeError, pickle.UnpicklingError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UserInputError(f"{path}: not a usable checkpoint of this model ({first[:200]})") from None
    return module
