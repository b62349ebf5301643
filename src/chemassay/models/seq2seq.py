"""chemassay's sequence-to-sequence Transformer: a BART encoder–decoder with its own vocabulary.

The model is Hugging Face's ``BartForConditionalGeneration`` built from a
:class:`Seq2SeqConfig` (no pretraining, no byte-pair encoding: the vocabulary comes from the
training texts through :mod:`chemassay.models.vocab`), trained with
:func:`chemassay.models.training.fit` (resumable pieces that end with the uncut run's
weights, early stopping on the validation loss, bf16 on a GPU, a progress bar with the loss
and tokens/s). It takes any ``(source, target)`` text pairs: reactants → products
(reaction-ood), bags → bags (ChemAlgebra), or anything else a caller tokenizes.

Three configurations (:data:`CONFIGS`):

* ``tiny`` — for tests: a few thousand parameters, trains in seconds;
* ``small`` — for CPUs: 3+3 layers, d = 128, 4 heads, feed-forward 512 (1.5 M
  parameters), 5,000 steps of 32 pairs (one torch thread each, two runs side by side on two
  cores: 33 minutes on USPTO-15K; one run with two threads alone: 22 minutes, docs/stoichiometry.md). Built to learn in that budget: layer norm
  before each block (``mbart``), fixed sinusoidal positions, a copy head
  (:mod:`chemassay.models.seq2seq_copy`), reactant molecules largest first and products
  written to continue a reactant's SMILES (``target_root="aligned"``). Without these four the
  same network, trained as long, predicted 0.2 % of USPTO-15K's test products
  (docs/stoichiometry.md);
* ``paper`` — ChemAlgebra's Appendix D: 6+6 layers, 8 heads, d = 512, feed-forward 512,
  batch 64, Adam at 1e-5 halved after 1,000 steps without validation improvement, stopped
  after 5,000, label smoothing 0.1 (a point of the grid of Bradshaw et al.'s Table S1.1).

A trained model is a folder: ``seq2seq.json`` (format, configuration, vocabulary, training
summary, sha256 of the weights) and ``model.safetensors``; the training run's ``last.ckpt``,
``train_log.jsonl`` and ``train_settings.json`` sit beside them. :func:`load_seq2seq` checks
the folder and gives a one-line error naming the file for anything missing, corrupted or
incompatible.

Decoding (:meth:`Seq2SeqModel.generate`): greedy (ChemAlgebra's Appendix D) or beam search,
returning every beam; :class:`Seq2SeqPredictor` adds canonical de-duplication of the beams
for reaction prediction and is what the ``seq2seq:DIR`` model kind loads. An input holding a
symbol the vocabulary lacks (or longer than the model's positions) fails alone: it gets an
empty prediction, its reason in ``failures``, and the run goes on.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from chemassay.chem import try_canonical
from chemassay.contract.errors import UserInputError, require
from chemassay.models.catalog import SEQ2SEQ_OPTIONS
from chemassay.models.hf_encoder import quiet_transformers
from chemassay.models.seq2seq_data import (
    arrange_pairs,
    augment_pairs,
    default_valid,
    read_pairs,
    tokenizer_for,
)
from chemassay.models.spec import check_options, option_int
from chemassay.models.training import (
    CHECKPOINT,
    TrainSettings,
    fit,
    load_module_state,
    torch_device,
)
from chemassay.models.vocab import UnknownSymbol, Vocabulary, guess_tokenizer
from chemassay.runtime.files import atomic_write_text, ensure_writable_dir

FORMAT = "chemassay-seq2seq/1"
MODEL_JSON = "seq2seq.json"
WEIGHTS = "model.safetensors"
RUN_JSON = "seq2seq_run.json"


@dataclass(frozen=True)
class Seq2SeqConfig:
    """The architecture and optimisation of one model (the training loop's settings, such as
    epochs and steps, are :class:`~chemassay.models.training.TrainSettings`)."""

    name: str
    d_model: int
    encoder_layers: int
    decoder_layers: int
    attention_heads: int
    ffn_dim: int
    dropout: float = 0.1
    max_positions: int = 512
    """Longest source or target in tokens (learned position embeddings)."""
    label_smoothing: float = 0.1
    optimizer: str = "adamw"
    """``adam`` or ``adamw``."""
    lr: float = 1e-3
    weight_decay: float = 0.0
    warmup_steps: int = 0
    schedule: str = "cosine"
    """``cosine`` (warm-up, then cosine decay to ``min_lr_ratio`` over the planned steps) or
    ``plateau`` (warm-up, then halve on validation plateaus: ChemAlgebra's schedule)."""
    min_lr_ratio: float = 0.05
    plateau_patience: int = 1
    """Epochs without validation improvement before the learning rate is halved (``plateau``)."""
    batch_size: int = 64
    steps_per_epoch: int = 500
    max_epochs: int = 20
    patience: int | None = 5
    architecture: str = "bart"
    """``bart`` (Hugging Face BART: layer norm after each residual block, as Bradshaw et al.'s
    model) or ``mbart`` (the same encoder-decoder with layer norm before each block and at the
    end of each stack, as the Molecular Transformer's OpenNMT layers; trains faster early)."""
    positions: str = "learned"
    """``learned`` (BART's trained position embeddings) or ``sinusoidal`` (fixed sine/cosine
    positions of the original Transformer and the Molecular Transformer: with scaled token
    embeddings the position signal is as strong as the token signal from the first step, and
    the model learns to copy reactant atoms into the product much sooner)."""
    copy: bool = False
    """Add a copy (pointer-generator) head: the output distribution mixes the vocabulary with an
    attention over the source tokens (:mod:`chemassay.models.seq2seq_copy`)."""
    source_order: str = "as-given"
    """``as-given`` or ``largest-first``: the molecules of a SMILES source sorted by heavy atoms,
    largest first (ties by text), in training and at prediction alike."""
    target_root: str = "canonical"
    """``canonical`` or ``aligned``: training products written from the atom that continues the
    longest stretch of a source molecule's SMILES (the same molecule, another starting atom;
    root alignment as in R-SMILES), so the product reads as an edited copy of the source.
    Predictions are canonicalized, so this only changes what the model is taught to write."""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Seq2SeqConfig:
        """The config :meth:`as_dict` wrote (unknown keys are an error)."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown config keys {unknown}")
        return cls(**data)


CONFIGS: dict[str, Seq2SeqConfig] = {
    "tiny": Seq2SeqConfig("tiny", d_model=32, encoder_layers=1, decoder_layers=1, attention_heads=2, ffn_dim=64,
                          dropout=0.1, max_positions=256, lr=3e-3, warmup_steps=5, batch_size=16, steps_per_epoch=10,
                          max_epochs=4, patience=None),
    "small": Seq2SeqConfig("small", d_model=128, encoder_layers=3, decoder_layers=3, attention_heads=4, ffn_dim=512,
                           dropout=0.1, max_positions=512, lr=2e-3, warmup_steps=300, batch_size=32,
                           steps_per_epoch=500, max_epochs=10, patience=None, architecture="mbart",
                           positions="sinusoidal", copy=True, source_order="largest-first", target_root="aligned"),
    "paper": Seq2SeqConfig("paper", d_model=512, encoder_layers=6, decoder_layers=6, attention_heads=8, ffn_dim=512,
                           dropout=0.1, max_positions=512, label_smoothing=0.1, optimizer="adam", lr=1e-5,
                           warmup_steps=0, schedule="plateau", plateau_patience=1, batch_size=64,
                           steps_per_epoch=1000, max_epochs=500, patience=5),
}
"""The named configurations (see the module docstring)."""


def get_config(config: str | Seq2SeqConfig, **overrides: Any) -> Seq2SeqConfig:
    """A named config (``tiny``, ``small``, ``paper``) or the one given, with ``overrides``
    (``lr=3e-4``, ``max_epochs=10``...; ``None`` values are ignored)."""
    if isinstance(config, str):
        if config not in CONFIGS:
            raise UserInputError(f"unknown seq2seq config {config!r}; choose one of {', '.join(CONFIGS)}")
        config = CONFIGS[config]
    changes = {k: v for k, v in overrides.items() if v is not None}
    known = {f.name for f in fields(Seq2SeqConfig)}
    unknown = sorted(set(changes) - known)
    if unknown:
        raise UserInputError(f"unknown seq2seq config setting(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    return replace(config, **changes) if changes else config


def parse_settings(items: Sequence[str]) -> dict[str, Any]:
    """Config overrides written ``KEY=VALUE`` (``copy=false``, ``lr=5e-4``, ``patience=none``),
    each value read as its setting's type; one line naming the item for anything else."""
    known = {f.name for f in fields(Seq2SeqConfig)} - {"name"}
    reference = CONFIGS["small"]
    settings: dict[str, Any] = {}
    for item in items:
        key, sep, text = str(item).partition("=")
        key, text = key.strip(), text.strip()
        if not sep or key not in known:
            raise UserInputError(f"--set {item!r}: expected KEY=VALUE with KEY one of {', '.join(sorted(known))}")
        default = getattr(reference, key)
        try:
            if text.lower() == "none" and key == "patience":
                value: Any = None
            elif isinstance(default, bool):
                value = _truthy(text)
            elif isinstance(default, int) or key == "patience":
                value = int(text)
            elif isinstance(default, float):
                value = float(text)
            else:
                value = text
        except (UserInputError, ValueError):
            raise UserInputError(f"--set {item!r}: {text!r} is not a valid {type(default).__name__}") from None
        settings[key] = value
    return settings


ARCHITECTURES = ("bart", "mbart")
POSITIONS = ("learned", "sinusoidal")
SOURCE_ORDERS = ("as-given", "largest-first")
TARGET_ROOTS = ("canonical", "aligned")


def sinusoid_table(positions: int, dim: int):
    """The Transformer's sine/cosine position table, ``positions × dim`` (sines in the even,
    cosines in the odd columns)."""
    import torch

    position = torch.arange(positions, dtype=torch.float32)[:, None]
    rate = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(10000.0) / dim))
    table = torch.zeros(positions, dim)
    table[:, 0::2] = torch.sin(position * rate)
    table[:, 1::2] = torch.cos(position * rate[:dim // 2])
    return table


def check_config(config: Seq2SeqConfig) -> None:
    """One line for a setting outside its choices."""
    for name, value, choices in (("architecture", config.architecture, ARCHITECTURES),
                                 ("positions", config.positions, POSITIONS),
                                 ("source_order", config.source_order, SOURCE_ORDERS),
                                 ("target_root", config.target_root, TARGET_ROOTS)):
        if value not in choices:
            raise UserInputError(f"unknown seq2seq {name} {value!r}; use {' or '.join(choices)}")


def _bart_config(config: Seq2SeqConfig, vocab: Vocabulary):
    transformers = require("transformers", "hf", "the seq2seq model")
    check_config(config)
    kind = transformers.BartConfig if config.architecture == "bart" else transformers.MBartConfig
    return kind(
        vocab_size=len(vocab), d_model=config.d_model, encoder_layers=config.encoder_layers,
        decoder_layers=config.decoder_layers, encoder_attention_heads=config.attention_heads,
        decoder_attention_heads=config.attention_heads, encoder_ffn_dim=config.ffn_dim,
        decoder_ffn_dim=config.ffn_dim, dropout=config.dropout, attention_dropout=0.0, activation_dropout=0.0,
        max_position_embeddings=config.max_positions, pad_token_id=vocab.pad_id, bos_token_id=vocab.bos_id,
        eos_token_id=vocab.eos_id, decoder_start_token_id=vocab.bos_id, forced_eos_token_id=None,
        forced_bos_token_id=None, scale_embedding=True, tie_word_embeddings=True,
    )


def build_bart(config: Seq2SeqConfig, vocab: Vocabulary):
    """A freshly initialised ``BartForConditionalGeneration`` for ``config`` and ``vocab``
    (seeded by the caller's torch seed)."""
    transformers = require("transformers", "hf", "the seq2seq model")
    import torch

    quiet_transformers()  # its deprecation notes about its own cache arguments are not the user's to act on
    check_config(config)
    settings = _bart_config(config, vocab)
    if config.copy:
        from chemassay.models.seq2seq_copy import copy_class

        kind = copy_class(config.architecture)
    else:
        kind = transformers.MBartForConditionalGeneration if config.architecture == "mbart" else \
            transformers.BartForConditionalGeneration
    model = kind(settings)
    if config.positions == "sinusoidal":
        for stack in (model.model.encoder, model.model.decoder):
            table = stack.embed_positions.weight
            offset = getattr(stack.embed_positions, "offset", 0)
            with torch.no_grad():
                table.zero_()
                table[offset:] = sinusoid_table(table.shape[0] - offset, table.shape[1])
            table.requires_grad_(False)
    return model


def count_parameters(model) -> int:
    """Distinct trainable parameters (tied embeddings counted once)."""
    seen, total = set(), 0
    for parameter in model.parameters():
        if id(parameter) not in seen and parameter.requires_grad:
            seen.add(id(parameter))
            total += parameter.numel()
    return total


# ------------------------------------------------------------------------------------------
# Data


class PairDataset:
    """Tokenized ``(source ids, target ids)`` pairs (a map-style dataset for :func:`fit`)."""

    def __init__(self, encoded: Sequence[tuple[list[int], list[int]]]) -> None:
        self.items = list(encoded)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> tuple[list[int], list[int]]:
        return self.items[index]

    def lengths(self) -> list[int]:
        """Source plus target length of every pair (for length-grouped batches)."""
        return [len(s) + len(t) for s, t in self.items]


def collate_pairs(items: Sequence[tuple[list[int], list[int]]], pad_id: int = 0, bos_id: int = 1) -> dict[str, Any]:
    """Pad a batch: ``input_ids``/``attention_mask`` for the encoder, ``decoder_input_ids``
    (``<s>`` + target), ``decoder_attention_mask`` and ``labels`` (target + ``</s>``, padding
    ``-100``). Target ids already end with ``</s>``."""
    import torch

    n = len(items)
    source_length = max(len(s) for s, _ in items)
    target_length = max(len(t) for _, t in items)
    input_ids = torch.full((n, source_length), pad_id, dtype=torch.long)
    attention = torch.zeros((n, source_length), dtype=torch.long)
    decoder_input = torch.full((n, target_length), pad_id, dtype=torch.long)
    decoder_attention = torch.zeros((n, target_length), dtype=torch.long)
    labels = torch.full((n, target_length), -100, dtype=torch.long)
    for row, (source, target) in enumerate(items):
        input_ids[row, :len(source)] = torch.tensor(source, dtype=torch.long)
        attention[row, :len(source)] = 1
        shifted = [bos_id, *target[:-1]]
        decoder_input[row, :len(shifted)] = torch.tensor(shifted, dtype=torch.long)
        decoder_attention[row, :len(shifted)] = 1
        labels[row, :len(target)] = torch.tensor(target, dtype=torch.long)
    return {"input_ids": input_ids, "attention_mask": attention, "decoder_input_ids": decoder_input,
            "decoder_attention_mask": decoder_attention, "labels": labels}


@dataclass
class EncodedPairs:
    """Pairs turned into ids, with the ones left out and why."""

    dataset: PairDataset
    dropped: dict[str, int] = field(default_factory=dict)
    examples: list[str] = field(default_factory=list)


def encode_pairs(pairs: Sequence[tuple[str, str]], vocab: Vocabulary, max_positions: int, *,
                 unknown: str = "error") -> EncodedPairs:
    """Encode pairs; pairs longer than ``max_positions`` tokens (or, with ``unknown="error"``,
    holding an unknown symbol) are left out and counted."""
    encoded, dropped, examples = [], {}, []
    for index, (source, target) in enumerate(pairs):
        try:
            source_ids = vocab.encode(source, unknown=unknown)
            target_ids = vocab.encode(target, unknown=unknown)
        except UnknownSymbol as exc:
            dropped["unknown symbol"] = dropped.get("unknown symbol", 0) + 1
            if len(examples) < 5:
                examples.append(f"pair {index + 1}: {exc}")
            continue
        if len(source_ids) > max_positions or len(target_ids) > max_positions:
            dropped["too long"] = dropped.get("too long", 0) + 1
            if len(examples) < 5:
                examples.append(f"pair {index + 1}: {max(len(source_ids), len(target_ids))} tokens > {max_positions}")
            continue
        encoded.append((source_ids, target_ids))
    return EncodedPairs(PairDataset(encoded), dropped, examples)


# ------------------------------------------------------------------------------------------
# The Lightning module


def _lightning():
    return require("pytorch_lightning", "train", "training chemassay's models")


def make_module(config: Seq2SeqConfig, vocab: Vocabulary, total_steps: int | None = None):
    """The LightningModule that trains a BART model for ``config`` and ``vocab``.

    ``total_steps`` (epochs × steps per epoch) sets the length of the cosine schedule.
    """
    pl = _lightning()
    import torch

    class Seq2SeqModule(pl.LightningModule):
        """BART with label-smoothed cross-entropy, a warm-up and a cosine or plateau schedule
        (its state lives in buffers, so a resumed run continues it exactly)."""

        def __init__(self) -> None:
            super().__init__()
            self.config = config
            self.vocab = vocab
            self.total_steps = total_steps or config.max_epochs * config.steps_per_epoch
            self.model = build_bart(config, vocab)
            self.register_buffer("lr_scale", torch.ones((), dtype=torch.float64))
            self.register_buffer("best_val", torch.full((), math.inf, dtype=torch.float64))
            self.register_buffer("bad_epochs", torch.zeros((), dtype=torch.long))
            self._val_sum = 0.0
            self._val_tokens = 0
            self._val_correct = 0

        def _loss(self, batch):
            out = self.model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                             decoder_input_ids=batch["decoder_input_ids"],
                             decoder_attention_mask=batch["decoder_attention_mask"])
            logits = out.logits.float()
            labels = batch["labels"]
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), labels.reshape(-1),
                                                     ignore_index=-100, label_smoothing=config.label_smoothing)
            return loss, logits, labels

        def training_step(self, batch, batch_idx):
            loss, _, _ = self._loss(batch)
            self.log("loss", loss, prog_bar=True, on_step=True, on_epoch=True, batch_size=len(batch["labels"]))
            return loss

        def validation_step(self, batch, batch_idx):
            loss, logits, labels = self._loss(batch)
            mask = labels != -100
            tokens = int(mask.sum())
            self._val_sum += float(loss) * tokens
            self._val_tokens += tokens
            self._val_correct += int(((logits.argmax(-1) == labels) & mask).sum())

        def on_validation_epoch_start(self) -> None:
            self._val_sum, self._val_tokens, self._val_correct = 0.0, 0, 0

        def on_validation_epoch_end(self) -> None:
            if not self._val_tokens:
                return
            value = self._val_sum / self._val_tokens
            self.log("val_loss", value, prog_bar=True)
            self.log("val_token_acc", self._val_correct / self._val_tokens)
            if self.trainer is not None and self.trainer.sanity_checking:
                return
            if value < float(self.best_val) - 1e-6:
                self.best_val.fill_(value)
                self.bad_epochs.zero_()
            else:
                self.bad_epochs += 1
                if config.schedule == "plateau" and int(self.bad_epochs) % max(config.plateau_patience, 1) == 0:
                    self.lr_scale *= 0.5

        def current_lr(self) -> float:
            """The learning rate of the next optimizer step."""
            step = int(self.trainer.global_step) if self.trainer is not None else 0
            factor = 1.0
            if config.warmup_steps and step < config.warmup_steps:
                factor = (step + 1) / config.warmup_steps
            elif config.schedule == "cosine":
                span = max(self.total_steps - config.warmup_steps, 1)
                progress = min(max(step - config.warmup_steps, 0) / span, 1.0)
                factor = config.min_lr_ratio + (1 - config.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * progress))
            return config.lr * factor * float(self.lr_scale)

        def on_before_optimizer_step(self, optimizer) -> None:
            lr = self.current_lr()
            for group in optimizer.param_groups:
                group["lr"] = lr

        def configure_optimizers(self):
            kind = torch.optim.AdamW if config.optimizer == "adamw" else torch.optim.Adam
            return kind(self.model.parameters(), lr=config.lr, betas=(0.9, 0.98), eps=1e-9,
                        weight_decay=config.weight_decay)

        def count_items(self, batch) -> int:
            """Tokens in a batch (source and target): the ``items/s`` of the progress bar."""
            return int(batch["attention_mask"].sum()) + int(batch["decoder_attention_mask"].sum())

    return Seq2SeqModule()


# ------------------------------------------------------------------------------------------
# Training


@dataclass
class Seq2SeqTrainReport:
    """What :func:`train_seq2seq` did (this piece), and where the model is."""

    out: Path
    finished: bool
    epochs_done: int
    global_step: int
    best_val_loss: float | None
    stopped_by: str
    elapsed_s: float
    train_pairs: int
    valid_pairs: int
    dropped: dict[str, int]
    parameters: int
    vocab_size: int
    tokens_per_s: float | None


def _pairs_sha256(pairs: Sequence[tuple[str, str]]) -> str:
    digest = hashlib.sha256()
    for source, target in pairs:
        digest.update(source.encode("utf-8") + b"\t" + target.encode("utf-8") + b"\n")
    return digest.hexdigest()


def sha256_of(path: Path) -> str:
    """sha256 of a file, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _tokens_per_s(out: Path) -> float | None:
    log = out / "train_log.jsonl"
    if not log.is_file():
        return None
    rates = [json.loads(line).get("items_per_s") for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]
    rates = [r for r in rates if isinstance(r, (int, float)) and r > 0]
    return float(np.median(rates)) if rates else None


def train_seq2seq(
    pairs: Sequence[tuple[str, str]],
    out: str | os.PathLike,
    *,
    config: str | Seq2SeqConfig = "small",
    valid: Sequence[tuple[str, str]] | None = None,
    tokenizer: str | None = None,
    seed: int = 0,
    augment: int = 0,
    max_minutes: float | None = None,
    stop_after_epochs: int | None = None,
    device: str = "auto",
    precision: str = "auto",
    threads: int | None = None,
    progress: bool | None = None,
    max_epochs: int | None = None,
    steps_per_epoch: int | None = None,
    batch_size: int | None = None,
    overrides: dict[str, Any] | None = None,
    metadata: dict[str, Any] | None = None,
) -> Seq2SeqTrainReport:
    """Train (or resume training) a seq2seq model on ``(source, target)`` pairs into ``out``.

    ``tokenizer`` is ``smiles``, ``bag``, ``formula`` or ``char`` (default: guessed from the
    texts); the vocabulary is built from the training pairs (sources and targets share it)
    plus the tokenizer's fixed alphabet. ``augment`` adds that many randomized-SMILES copies
    of every training source. ``valid`` pairs give the validation loss (early stopping and
    the plateau schedule; symbols unseen in training become ``<unk>`` there). Calling again
    with the same arguments resumes an unfinished run (``max_minutes`` per piece); the
    model folder (``seq2seq.json`` + ``model.safetensors``) is written after every piece.
    ``overrides`` change other config settings (``{"lr": 5e-4, "architecture": "mbart"}``);
    ``metadata`` (task, data names...) is recorded in ``seq2seq.json``.
    """
    chosen = get_config(config, max_epochs=max_epochs, steps_per_epoch=steps_per_epoch, batch_size=batch_size,
                        **dict(overrides or {}))

    target = ensure_writable_dir(out, "model folder")
    pairs = [(str(s), str(t)) for s, t in pairs]
    if not pairs:
        raise UserInputError("no training pairs")
    tokenizer = tokenizer or guess_tokenizer([s for s, _ in pairs[:100]] + [t for _, t in pairs[:100]])
    data_hash = _pairs_sha256(pairs)
    run_file = target / RUN_JSON
    if run_file.is_file() and (target / CHECKPOINT).is_file():
        try:
            before = json.loads(run_file.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            raise UserInputError(f"{run_file}: unreadable; train into another folder") from None
        try:
            before_config = Seq2SeqConfig.from_dict(before.get("config") or {}).as_dict()
        except (TypeError, ValueError):
            before_config = before.get("config")
        before = {**before, "config": before_config}
        mismatched = [key for key, value in (("train_sha256", data_hash), ("config", chosen.as_dict()),
                                             ("tokenizer", tokenizer), ("augment", augment), ("seed", seed))
                      if before.get(key) != value]
        if mismatched:
            raise UserInputError(f"{target}: holds a seq2seq run with other {', '.join(mismatched)}; resume with the "
                                 "same data and settings or train into another folder")
        vocab = Vocabulary.from_dict(before["vocab"])
    else:
        vocab = Vocabulary.build([s for s, _ in pairs] + [t for _, t in pairs], tokenizer)
    training = arrange_pairs(augment_pairs(pairs, augment, tokenizer, seed), source_order=chosen.source_order,
                             target_root=chosen.target_root, tokenizer=tokenizer)
    encoded = encode_pairs(training, vocab, chosen.max_positions)
    if not len(encoded.dataset):
        raise UserInputError(f"no usable training pairs ({encoded.dropped}; e.g. {'; '.join(encoded.examples[:2])})")
    valid_set = None
    if valid:
        arranged = arrange_pairs([(str(s), str(t)) for s, t in valid], source_order=chosen.source_order,
                                 target_root=chosen.target_root, tokenizer=tokenizer)
        valid_set = encode_pairs(arranged, vocab, chosen.max_positions, unknown="unk").dataset
    run = {"format": FORMAT, "train_sha256": data_hash, "config": chosen.as_dict(), "tokenizer": tokenizer,
           "augment": augment, "seed": seed, "vocab": vocab.as_dict(), "train_pairs": len(pairs),
           "train_examples": len(encoded.dataset), "valid_pairs": len(valid_set) if valid_set else 0,
           "dropped": encoded.dropped, "metadata": metadata or {}}

    atomic_write_text(run_file, json.dumps(run, indent=1) + "\n")

    import torch

    torch.manual_seed(seed)
    if threads:
        torch.set_num_threads(threads)
    module = make_module(chosen, vocab)
    checkpoint = target / CHECKPOINT
    if checkpoint.is_file():
        load_module_state(make_module(chosen, vocab), checkpoint)  # a foreign or broken file: one clear line
    settings = TrainSettings(
        seed=seed, max_epochs=chosen.max_epochs, steps_per_epoch=chosen.steps_per_epoch,
        batch_size=chosen.batch_size, max_minutes=max_minutes, stop_after_epochs=stop_after_epochs,
        patience=chosen.patience if valid_set else None, device=device, precision=precision, threads=threads,
        progress=progress, extra={"model": "seq2seq", "config": chosen.name},
    )
    started = time.perf_counter()
    outcome = fit(module, encoded.dataset, lambda batch: collate_pairs(batch, vocab.pad_id, vocab.bos_id), target,
                  settings, val_dataset=valid_set, lengths=encoded.dataset.lengths())
    if checkpoint.is_file():
        load_module_state(module, checkpoint)
        max_target = max(len(t) for _, t in encoded.dataset.items)
        export_model(module.model, chosen, vocab, target, run_info={
            **{k: run[k] for k in ("train_sha256", "tokenizer", "augment", "seed", "train_pairs", "train_examples",
                                   "valid_pairs", "dropped", "metadata")},
            "finished": outcome.finished, "epochs_done": outcome.epochs_done, "global_step": outcome.global_step,
            "best_val_loss": outcome.best_val_loss, "stopped_by": outcome.stopped_by,
            "max_target_tokens": max_target, "tokens_per_s": _tokens_per_s(target),
        })
    return Seq2SeqTrainReport(
        out=target, finished=outcome.finished, epochs_done=outcome.epochs_done, global_step=outcome.global_step,
        best_val_loss=outcome.best_val_loss, stopped_by=outcome.stopped_by, elapsed_s=time.perf_counter() - started,
        train_pairs=len(pairs), valid_pairs=len(valid_set) if valid_set else 0, dropped=encoded.dropped,
        parameters=count_parameters(module.model), vocab_size=len(vocab), tokens_per_s=_tokens_per_s(target),
    )


def train_from_source(
    train: str | os.PathLike,
    out: str | os.PathLike,
    *,
    task: str = "reactions",
    valid: str | os.PathLike | None = None,
    split: str = "train",
    limit: int | None = None,
    valid_limit: int | None = 2000,
    tokenizer: str | None = None,
    **options: Any,
) -> Seq2SeqTrainReport:
    """:func:`train_seq2seq` on pairs read from files or a registered dataset (what ``chemassay
    models train seq2seq`` runs): ``train`` and ``valid`` as :func:`~chemassay.models.
    seq2seq_data.read_pairs` reads them for ``task`` (validation defaults to the ``valid`` part
    or files beside the training ones), the first ``limit`` training pairs and the first
    ``valid_limit`` validation pairs; ``options`` go to :func:`train_seq2seq`."""
    train_set = read_pairs(train, task, split=split, limit=limit)
    if not train_set.pairs:
        raise UserInputError(f"{train_set.name}: no readable training pairs ({len(train_set.problems)} unreadable)")
    pairs = train_set.pairs
    if valid is not None:
        valid_set = read_pairs(valid, task, split="valid", limit=valid_limit)
    else:
        found = default_valid(train, split)
        valid_set = read_pairs(found[0], task, split=found[1], limit=valid_limit) if found is not None else None
    valid_pairs = valid_set.pairs if valid_set else None
    metadata = {"task": task, "train": str(train), "split": split, "limit": limit,
                "valid": valid_set.name if valid_set else None, "unreadable_train_rows": len(train_set.problems),
                "encoding": train_set.encoding, **dict(options.pop("metadata", None) or {})}
    return train_seq2seq(pairs, out, valid=valid_pairs, tokenizer=tokenizer or tokenizer_for(task, train_set),
                         metadata=metadata, **options)


def export_model(model, config: Seq2SeqConfig, vocab: Vocabulary, out: str | os.PathLike, *,
                 run_info: dict[str, Any] | None = None) -> Path:
    """Write ``model.safetensors`` and ``seq2seq.json`` (with the weights' sha256) into ``out``,
    atomically; returns the folder."""
    from safetensors.torch import save_model

    from chemassay.runtime.files import atomic_write_text, plain_file_mode

    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    temporary = target / (WEIGHTS + ".tmp")
    save_model(model, str(temporary))
    plain_file_mode(temporary)  # safetensors creates its file 0600
    os.replace(temporary, target / WEIGHTS)
    record = {"format": FORMAT, "config": config.as_dict(), "vocab": vocab.as_dict(),
              "weights": WEIGHTS, "weights_sha256": sha256_of(target / WEIGHTS),
              "parameters": count_parameters(model), "training": run_info or {}}
    atomic_write_text(target / MODEL_JSON, json.dumps(record, indent=1) + "\n")
    return target


# ------------------------------------------------------------------------------------------
# Loading and decoding


@dataclass
class Generated:
    """Decoded outputs of one source: texts best first, with their scores (log-probabilities;
    for beam search, HF's length-normalised beam scores), or the reason it failed."""

    texts: list[str]
    scores: list[float]
    error: str | None = None


class Seq2SeqModel:
    """A trained model loaded from its folder: decoding and hidden states.

    A ``tiny`` model trained for two steps (a real one trains for minutes: see the module
    docstring), loaded back and asked for its two best products by beam search:

    >>> import tempfile
    >>> pairs = [("CC(=O)Cl.OCC", "CCOC(C)=O"), ("CC(=O)Cl.OC", "COC(C)=O"), ("CC(=O)Cl.N", "CC(N)=O")] * 4
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     report = train_seq2seq(pairs, folder, config="tiny", max_epochs=1, steps_per_epoch=2, progress=False)
    ...     model = load_seq2seq(folder)
    >>> report.finished, model.config.name, len(model.generate(["CC(=O)Cl.OCC"], beam=2, max_new_tokens=8)[0].texts)
    (True, 'tiny', 2)
    """

    def __init__(self, folder: Path, record: dict[str, Any], model, vocab: Vocabulary, config: Seq2SeqConfig,
                 device: str = "cpu") -> None:
        self.folder = folder
        self.record = record
        self.model = model
        self.vocab = vocab
        self.config = config
        self.device = device
        self.training_info = record.get("training", {})

    @property
    def tokenizer(self) -> str:
        """The tokenizer the vocabulary was built with."""
        return self.vocab.tokenizer

    @property
    def task(self) -> str | None:
        """``reactions``, ``bags`` or ``pairs`` (what the training command recorded)."""
        return (self.training_info.get("metadata") or {}).get("task")

    def checksum(self) -> str:
        """sha256 of the weights (as recorded and verified at load)."""
        return str(self.record["weights_sha256"])

    def _encode(self, texts: Sequence[str]) -> tuple[list[list[int] | None], dict[int, str]]:
        encoded: list[list[int] | None] = []
        failures: dict[int, str] = {}
        for index, text in enumerate(texts):
            try:
                ids = self.vocab.encode(str(text))
            except UnknownSymbol as exc:
                encoded.append(None)
                failures[index] = str(exc)
                continue
            if len(ids) > self.config.max_positions:
                encoded.append(None)
                failures[index] = f"input of {len(ids)} tokens is longer than the model's {self.config.max_positions}"
                continue
            encoded.append(ids)
        return encoded, failures

    def _batches(self, encoded: Sequence[list[int] | None], batch_size: int):
        order = sorted((i for i, ids in enumerate(encoded) if ids is not None), key=lambda i: len(encoded[i]))
        for start in range(0, len(order), batch_size):
            yield order[start:start + batch_size]

    def _tensors(self, rows: Sequence[list[int]]):
        import torch

        length = max(len(r) for r in rows)
        ids = torch.full((len(rows), length), self.vocab.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), length), dtype=torch.long)
        for i, row in enumerate(rows):
            ids[i, :len(row)] = torch.tensor(row, dtype=torch.long)
            mask[i, :len(row)] = 1
        return ids.to(self.device), mask.to(self.device)

    def generate(self, sources: Sequence[str], *, beam: int = 1, n_best: int | None = None,
                 batch_size: int = 32, max_new_tokens: int | None = None,
                 length_penalty: float = 1.0) -> list[Generated]:
        """Decode every source: greedy (``beam=1``) or beam search keeping ``n_best`` (default
        ``beam``) hypotheses, best first. A source the vocabulary cannot encode gets no texts
        and its ``error``; the others are decoded in length-sorted batches (the output does
        not depend on the batch a source lands in beyond floating-point rounding)."""
        import torch
        from transformers import GenerationConfig

        if beam < 1:
            raise UserInputError(f"beam must be at least 1, got {beam}")
        n_best = beam if n_best is None else min(n_best, beam)
        encoded, failures = self._encode(sources)
        limit = max_new_tokens or min(self.config.max_positions,
                                      int(self.training_info.get("max_target_tokens") or self.config.max_positions) * 2)
        generation = GenerationConfig(
            num_beams=beam, num_return_sequences=n_best, do_sample=False, max_new_tokens=limit,
            decoder_start_token_id=self.vocab.bos_id, bos_token_id=self.vocab.bos_id, eos_token_id=self.vocab.eos_id,
            pad_token_id=self.vocab.pad_id, early_stopping=True if beam > 1 else False,
            length_penalty=length_penalty, output_scores=True, return_dict_in_generate=True,
            no_repeat_ngram_size=0, forced_eos_token_id=None, forced_bos_token_id=None,
        )
        outputs: list[Generated] = [Generated([], [], failures.get(i)) for i in range(len(sources))]
        self.model.eval()
        with torch.inference_mode():
            for rows in self._batches(encoded, batch_size):
                ids, mask = self._tensors([encoded[i] for i in rows])
                extra = {"source_ids": ids} if self.config.copy else {}
                result = self.model.generate(input_ids=ids, attention_mask=mask, generation_config=generation, **extra)
                sequences = result.sequences.cpu().numpy()
                if beam > 1:
                    scores = result.sequences_scores.float().cpu().numpy()
                else:
                    steps = self.model.compute_transition_scores(result.sequences, result.scores, normalize_logits=True)
                    scores = steps.float().cpu().numpy().sum(axis=1)
                for j, index in enumerate(rows):
                    block = range(j * n_best, (j + 1) * n_best)
                    outputs[index] = Generated([self.vocab.decode(sequences[b]) for b in block],
                                               [float(scores[b]) for b in block])
        return outputs

    def hidden_states(self, sources: Sequence[str], *, targets: Sequence[str] | None = None, part: str = "encoder",
                      layers: str = "all", pooling: str = "mean", batch_size: int = 32) -> list[Any]:
        """Hidden states of every layer for each source, as a list (one entry per layer,
        embeddings first, as Hugging Face orders them; only the last with ``layers="last"``).

        ``part="encoder"`` reads the encoder over the source; ``part="decoder"`` the decoder
        teacher-forced with ``targets`` (``<s>`` + target). ``pooling="mean"`` averages over
        the real tokens (``</s>`` included, padding excluded) giving ``(n, d)`` arrays;
        ``"first"`` takes the first position; ``"none"`` returns, per layer, a list of
        ``(tokens, d)`` arrays. Texts the vocabulary cannot encode raise :class:`UnknownSymbol`
        naming their position (a probe needs every item).
        """
        import torch

        if part not in ("encoder", "decoder"):
            raise UserInputError(f"part must be 'encoder' or 'decoder', got {part!r}")
        if pooling not in ("mean", "first", "none"):
            raise UserInputError(f"pooling must be mean, first or none, got {pooling!r}")
        if part == "decoder" and (targets is None or len(targets) != len(sources)):
            raise UserInputError("the decoder's states need one target per source (targets=...)")
        encoded, failures = self._encode(sources)
        if failures:
            index, reason = next(iter(sorted(failures.items())))
            raise UnknownSymbol(f"source {index + 1}: {reason}")
        decoded: list[list[int]] = []
        if part == "decoder":
            target_ids, target_failures = self._encode(targets)
            if target_failures:
                index, reason = next(iter(sorted(target_failures.items())))
                raise UnknownSymbol(f"target {index + 1}: {reason}")
            decoded = [[self.vocab.bos_id, *t[:-1]] for t in target_ids]
        per_layer: list[list[Any]] | None = None
        self.model.eval()
        with torch.inference_mode():
            for start in range(0, len(encoded), batch_size):
                rows = list(range(start, min(start + batch_size, len(encoded))))
                ids, mask = self._tensors([encoded[i] for i in rows])
                if part == "encoder":
                    out = self.model.model.encoder(input_ids=ids, attention_mask=mask, output_hidden_states=True)
                    states, state_mask = out.hidden_states, mask
                else:
                    dec_ids, dec_mask = self._tensors([decoded[i] for i in rows])
                    out = self.model.model(input_ids=ids, attention_mask=mask, decoder_input_ids=dec_ids,
                                           decoder_attention_mask=dec_mask, output_hidden_states=True)
                    states, state_mask = out.decoder_hidden_states, dec_mask
                chosen = states if layers == "all" else states[-1:]
                if per_layer is None:
                    per_layer = [[] for _ in chosen]
                weights = state_mask.unsqueeze(-1).float()
                for layer, tensor in enumerate(chosen):
                    tensor = tensor.float()
                    if pooling == "mean":
                        pooled = (tensor * weights).sum(1) / weights.sum(1).clamp(min=1)
                        per_layer[layer].append(pooled.cpu().numpy())
                    elif pooling == "first":
                        per_layer[layer].append(tensor[:, 0].cpu().numpy())
                    else:
                        lengths = state_mask.sum(1).tolist()
                        per_layer[layer].extend(tensor[i, :int(n)].cpu().numpy() for i, n in enumerate(lengths))
        if per_layer is None:
            width = self.config.d_model
            count = (self.config.encoder_layers if part == "encoder" else self.config.decoder_layers) + 1
            empty = np.zeros((0, width), dtype=np.float32) if pooling != "none" else []
            return [empty for _ in range(count if layers == "all" else 1)]
        if pooling == "none":
            return per_layer
        return [np.concatenate(chunks, axis=0) for chunks in per_layer]


def _fail(path: Path, reason: str) -> UserInputError:
    return UserInputError(f"{path}: {reason}")


def load_seq2seq(folder: str | os.PathLike, *, device: str = "cpu", threads: int | None = None) -> Seq2SeqModel:
    """The model in ``folder`` (written by :func:`train_seq2seq` or ``chemassay models train
    seq2seq``). Anything wrong gives one line naming the file: a missing folder or file,
    another kind of file, a format this version cannot read, weights whose sha256 differs
    from the record (corrupted or replaced), or weights that do not fit the recorded
    architecture."""
    require("transformers", "hf", "the seq2seq model")
    import torch

    path = Path(folder)
    if not path.exists():
        raise _fail(path, "no such seq2seq model folder (train one with 'chemassay models train seq2seq')")
    if not path.is_dir():
        raise _fail(path, "not a seq2seq model folder (seq2seq:DIR takes the folder written by "
                          "'chemassay models train seq2seq')")
    record_file = path / MODEL_JSON
    if not record_file.is_file():
        raise _fail(record_file, "missing: this folder holds no trained seq2seq model (train one with "
                                 "'chemassay models train seq2seq --out DIR')")
    try:
        record = json.loads(record_file.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise _fail(record_file, f"not a seq2seq model record ({str(exc).splitlines()[0][:120]})") from None
    if not isinstance(record, dict) or not str(record.get("format", "")).startswith("chemassay-seq2seq/"):
        raise _fail(record_file, "not a chemassay seq2seq model record (no 'chemassay-seq2seq' format)")
    if record["format"] != FORMAT:
        raise _fail(record_file, f"format {record['format']} is not readable by this chemassay ({FORMAT}); "
                                 "upgrade chemassay or retrain")
    try:
        config = Seq2SeqConfig.from_dict(record["config"])
        vocab = Vocabulary.from_dict(record["vocab"])
    except (KeyError, TypeError, ValueError) as exc:
        raise _fail(record_file, f"incompatible seq2seq model record ({str(exc)[:160]})") from None
    weights = path / str(record.get("weights", WEIGHTS))
    if not weights.is_file():
        raise _fail(weights, "missing (the weights of the model described in seq2seq.json)")
    if sha256_of(weights) != record.get("weights_sha256"):
        raise _fail(weights, "checksum mismatch with seq2seq.json: the file is corrupted or was replaced; "
                             "restore it or retrain")
    if threads:
        torch.set_num_threads(threads)
    model = build_bart(config, vocab)
    from safetensors.torch import load_model

    try:
        missing, unexpected = load_model(model, str(weights), strict=False)
    except (RuntimeError, OSError, ValueError) as exc:
        raise _fail(weights, f"incompatible with seq2seq.json ({str(exc).strip().splitlines()[0][:160]})") from None
    real_missing = [m for m in missing if not m.endswith("embed_tokens.weight") and m != "lm_head.weight"]
    if real_missing or unexpected:
        raise _fail(weights, f"incompatible with seq2seq.json (missing {real_missing[:3]}, unexpected {unexpected[:3]})")
    resolved = _device(device)
    model.to(resolved)
    model.eval()
    return Seq2SeqModel(path, record, model, vocab, config, resolved)


def _device(device: str) -> str:
    return torch_device(device)


# ------------------------------------------------------------------------------------------
# The model kind


class Seq2SeqPredictor:
    """A trained seq2seq model as a reaction predictor (``predict``: beam search, canonical
    de-duplication) and a bag predictor (``predict_bags``: greedy decoding, as ChemAlgebra's
    Appendix D). ``failures`` holds, after each call, the inputs that got no prediction and
    why (an unknown symbol, an input too long)."""

    def __init__(self, model: Seq2SeqModel, *, beam: int | None = None, decode: str | None = None,
                 batch_size: int = 32, max_new_tokens: int | None = None, invalid: str = "keep",
                 canonicalize: bool | None = None) -> None:
        if decode not in (None, "greedy", "beam"):
            raise UserInputError(f"decode must be greedy or beam, got {decode!r}")
        if invalid not in ("keep", "drop"):
            raise UserInputError(f"invalid must be keep or drop, got {invalid!r}")
        self.model = model
        self.beam = beam
        self.decode = decode
        self.batch_size = batch_size
        self.max_new_tokens = max_new_tokens
        self.invalid = invalid
        self.canonicalize = (model.task == "reactions") if canonicalize is None else canonicalize
        self.failures: dict[int, str] = {}
        self.name = f"seq2seq ({model.config.name}, {model.folder.name})"

    def describe(self) -> dict[str, Any]:
        """What determines the predictions."""
        return {"folder": str(self.model.folder), "config": self.model.config.name, "beam": self.beam,
                "decode": self.decode, "invalid": self.invalid, "canonicalize": self.canonicalize,
                "tokenizer": self.model.tokenizer, "task": self.model.task}

    def checksum(self) -> str:
        """sha256 of the weights."""
        return self.model.checksum()

    def _prepare(self, texts: Sequence[str]) -> list[str]:
        prepared = [str(t).replace(" ", "").strip() for t in texts]
        if self.canonicalize:
            from chemassay.chem import try_canonical

            out = []
            for text in prepared:
                parts = [try_canonical(m) for m in text.split(".") if m]
                out.append(".".join(parts) if parts and all(p is not None for p in parts) else text)
            prepared = out
        order = self.model.config.source_order
        if order != "as-given" and self.model.tokenizer == "smiles":
            from chemassay.models.seq2seq_data import order_molecules

            prepared = [order_molecules(text, order) for text in prepared]
        return prepared

    def predict(self, reactants: Sequence[str], k: int = 10) -> list[list[str]]:
        """Up to ``k`` distinct products per query, best first: beam search of width
        ``max(beam, k)``, each beam canonicalized, duplicates removed (beams that are not valid
        SMILES are kept as written, or dropped with ``invalid=drop``)."""
        queries = self._prepare(reactants)
        greedy = self.decode == "greedy"
        width = 1 if greedy else max(self.beam or 5, k)
        outputs = self.model.generate(queries, beam=width, batch_size=self.batch_size,
                                      max_new_tokens=self.max_new_tokens)
        self.failures = {i: o.error for i, o in enumerate(outputs) if o.error}
        ranked: list[list[str]] = []
        for output in outputs:
            seen: set[str] = set()
            row: list[str] = []
            for text in output.texts:
                canonical = try_canonical(text) if text else None
                if canonical is None and self.invalid == "drop":
                    continue
                key = canonical if canonical is not None else text
                if not key or key in seen:
                    continue
                seen.add(key)
                row.append(key)
                if len(row) >= k:
                    break
            ranked.append(row)
        return ranked

    def predict_bags(self, sources: Sequence[str]) -> list[str]:
        """The decoded product bag of every source: greedy unless ``decode=beam`` (then the best
        beam); an empty string for a source that failed (see ``failures``)."""
        queries = self._prepare(sources)
        width = (self.beam or 5) if self.decode == "beam" else 1
        outputs = self.model.generate(queries, beam=width, n_best=1, batch_size=self.batch_size,
                                      max_new_tokens=self.max_new_tokens)
        self.failures = {i: o.error for i, o in enumerate(outputs) if o.error}
        return [o.texts[0] if o.texts else "" for o in outputs]


def _truthy(value: str) -> bool:
    if value.lower() in ("1", "true", "yes", "on"):
        return True
    if value.lower() in ("0", "false", "no", "off"):
        return False
    raise UserInputError(f"expected true or false, got {value!r}")


def create_seq2seq(spec, protocol: str, context: dict[str, Any]) -> Seq2SeqPredictor:
    """Factory of the ``seq2seq`` kind (``factory(spec, protocol, context)``)."""
    check_options(spec, set(SEQ2SEQ_OPTIONS))
    options = spec.options
    device = options.get("device") or context.get("device") or "cpu"
    model = load_seq2seq(spec.arg, device=device, threads=option_int(spec, "threads", None, minimum=1))
    canonicalize = _truthy(options["canonicalize"]) if "canonicalize" in options else None
    return Seq2SeqPredictor(
        model, beam=option_int(spec, "beam", None, minimum=1), decode=options.get("decode"),
        batch_size=option_int(spec, "batch_size", 32, minimum=1),
        max_new_tokens=option_int(spec, "max_new_tokens", None, minimum=1),
        invalid=options.get("invalid", "keep"), canonicalize=canonicalize,
    )
