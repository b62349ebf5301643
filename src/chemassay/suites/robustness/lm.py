"""SMILES language models of the paper's three architecture families, trained here.

Hub checkpoints cannot be downloaded on an offline machine, so the suite trains its own
chemical language models, one per family the AMORE paper probes:

* ``encoder`` — a ``RobertaForMaskedLM`` trained with the masked-language-model objective
  (15 % of tokens; 80 % replaced by ``<mask>``, 10 % by a random token, 10 % kept), as
  ChemBERTa / ZINC-RoBERTa;
* ``decoder`` — a ``GPT2LMHeadModel`` trained as a causal (next-token) language model, as
  ZINC-GPT;
* ``encoder-decoder`` — a ``BartForConditionalGeneration`` trained as a denoiser (BART's
  text infilling: spans with Poisson(3) lengths covering 30 % of the tokens are each replaced
  by one ``<mask>``, and the decoder rebuilds the whole string), as BARTSmiles.

All three share one character-level tokenizer (``Cl``, ``Br`` and ``%nn`` kept whole; every
printable ASCII character in the vocabulary, so no SMILES is ever out of vocabulary) built
with the ``tokenizers`` library, and train through :func:`chemassay.models.training.fit`
(resumable pieces, seeded epochs, bf16 on a GPU). Corruption (masks, spans) is drawn in the
training step from a generator seeded by ``(seed, global step)``, so a run cut into pieces
gives the uncut run's weights. The folder written is a standard Hugging Face checkpoint
(``config.json``, ``model.safetensors``, tokenizer files), loadable as ``hf:DIR``, plus
``train_manifest.json`` (data, seed, configuration, losses, validation metrics, sha256 of
every file) and the training state in ``training/`` (``last.ckpt``, ``train_log.jsonl``).
"""

from __future__ import annotations

import json
import math
import string
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from chemassay.contract.errors import UserInputError, require
from chemassay.data.readers import read_smiles_file
from chemassay.models.hf_encoder import quiet_transformers
from chemassay.models.training import CHECKPOINT, LOG, TrainSettings, fit, load_module_state
from chemassay.runtime.files import atomic_write_text, plain_file_mode, sha256_file

SPECIAL_TOKENS = ("<s>", "<pad>", "</s>", "<unk>", "<mask>")
TOKEN_PATTERN = r"Cl|Br|%[0-9]{2}|."
FAMILIES = ("encoder", "decoder", "encoder-decoder")
TRAINING_FOLDER = "training"
VALIDATION_KEYS = {
    "encoder": ("mlm_loss", "masked_accuracy"),
    "decoder": ("clm_loss", "next_token_accuracy"),
    "encoder-decoder": ("denoising_loss", "reconstruction_accuracy"),
}
"""Per family: the name of its validation loss and of its token accuracy."""


def smiles_vocabulary() -> list[str]:
    """Special tokens, ``Cl``/``Br``/``%10``-``%99`` and every printable non-space ASCII character."""
    characters = [c for c in string.printable if not c.isspace()]
    return list(SPECIAL_TOKENS) + ["Cl", "Br"] + [f"%{n}" for n in range(10, 100)] + characters


def build_smiles_tokenizer(model_max_length: int = 512):
    """A ``PreTrainedTokenizerFast`` for SMILES: character level, ``<s> … </s>`` around each string."""
    tokenizers = require("tokenizers", "hf", "the SMILES tokenizer")
    transformers = require("transformers", "hf", "the SMILES tokenizer")
    from tokenizers import Regex, models, pre_tokenizers, processors

    vocabulary = {token: index for index, token in enumerate(smiles_vocabulary())}
    backend = tokenizers.Tokenizer(models.WordLevel(vocab=vocabulary, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Split(Regex(TOKEN_PATTERN), behavior="isolated")
    backend.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", vocabulary["<s>"]), ("</s>", vocabulary["</s>"])],
    )
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=backend, bos_token="<s>", eos_token="</s>", unk_token="<unk>", pad_token="<pad>",
        mask_token="<mask>", cls_token="<s>", sep_token="</s>", model_max_length=model_max_length,
    )


@dataclass
class LMConfig:
    """Family, size and training settings of a SMILES language model."""

    family: str = "encoder"
    layers: int = 4
    hidden: int = 128
    heads: int = 4
    intermediate: int = 512
    max_positions: int = 512
    n_train: int = 20000
    n_valid: int = 1000
    steps: int = 600
    steps_per_epoch: int = 100
    batch_size: int = 32
    learning_rate: float = 5e-4
    warmup_steps: int = 60
    mask_probability: float = 0.15
    """encoder: share of tokens masked; encoder-decoder: share of tokens covered by masked spans is 2x this."""
    train_max_length: int = 128
    seed: int = 0

    @property
    def epochs(self) -> int:
        """Epochs of ``steps_per_epoch`` steps that make up ``steps`` (the last one may be longer)."""
        return max(1, self.steps // self.steps_per_epoch)


def read_smiles_corpus(path: str | Path) -> list[str]:
    """SMILES of a corpus file: a MOSES-style CSV (``SMILES`` column) or one SMILES per line,
    optionally gzipped, read by :func:`chemassay.data.readers.read_smiles_file` (one-line
    errors for missing, binary or truncated files). Empty cells are left out: a corpus row
    without a SMILES has nothing to learn from."""
    smiles = [s for s in read_smiles_file(path).smiles if s]
    if not smiles:
        raise UserInputError(f"{path}: no SMILES to train on")
    return smiles


def sample_corpus(smiles: Sequence[str], n_train: int, n_valid: int, seed: int) -> tuple[list[str], list[str]]:
    """A seeded random subset: ``n_train`` training and ``n_valid`` validation SMILES (disjoint)."""
    if n_train + n_valid > len(smiles):
        raise UserInputError(f"asked for {n_train + n_valid} SMILES but the corpus has {len(smiles)}")
    order = np.random.default_rng(seed).permutation(len(smiles))[: n_train + n_valid]
    chosen = [smiles[i] for i in order]
    return chosen[:n_train], chosen[n_train:]


# -- corruption ----------------------------------------------------------------------------
def mask_tokens(torch, input_ids, special_mask, mask_id: int, vocab_size: int, probability: float, generator):
    """RoBERTa's masking: ``probability`` of the regular tokens become targets; of those 80 %
    are replaced by ``<mask>``, 10 % by a random regular token, 10 % kept. Returns the
    corrupted ids and the labels (``-100`` where not a target)."""
    labels = input_ids.clone()
    chance = torch.full(labels.shape, probability)
    chance.masked_fill_(special_mask, 0.0)
    masked = torch.bernoulli(chance, generator=generator).bool()
    labels[~masked] = -100
    replace = torch.bernoulli(torch.full(labels.shape, 0.8), generator=generator).bool() & masked
    corrupted = input_ids.clone()
    corrupted[replace] = mask_id
    randomise = torch.bernoulli(torch.full(labels.shape, 0.5), generator=generator).bool() & masked & ~replace
    random_ids = torch.randint(len(SPECIAL_TOKENS), vocab_size, labels.shape, generator=generator)
    corrupted[randomise] = random_ids[randomise]
    return corrupted, labels


def infill_spans(torch, input_ids, attention_mask, mask_id: int, pad_id: int, ratio: float, generator,
                 mean_span: float = 3.0):
    """BART's text infilling: in each sequence (special tokens ``<s>``/``</s>`` kept) spans of
    Poisson(``mean_span``) tokens (at least 1) are drawn until about ``ratio`` of the regular
    tokens are covered; each span becomes a single ``<mask>``. Returns padded ids and mask."""
    rows = []
    for ids, attention in zip(input_ids.tolist(), attention_mask.tolist(), strict=True):
        length = int(sum(attention))
        body = ids[1:length - 1]
        budget = int(round(ratio * len(body)))
        covered = [False] * len(body)
        starts: dict[int, int] = {}
        done, tries = 0, 0
        while done < budget and tries < 4 * len(body) + 4:
            tries += 1
            span = max(1, int(torch.poisson(torch.tensor([mean_span]), generator=generator).item()))
            start = int(torch.randint(0, max(1, len(body)), (1,), generator=generator).item())
            end = min(len(body), start + span)
            if any(covered[start:end]):
                continue
            for position in range(start, end):
                covered[position] = True
            starts[start] = end
            done += end - start
        out, position = [ids[0]], 0
        while position < len(body):
            if position in starts:
                out.append(mask_id)
                position = starts[position]
            else:
                out.append(body[position])
                position += 1
        out.append(ids[length - 1])
        rows.append(out)
    width = max(len(r) for r in rows)
    corrupted = torch.full((len(rows), width), pad_id, dtype=input_ids.dtype)
    mask = torch.zeros((len(rows), width), dtype=attention_mask.dtype)
    for index, row in enumerate(rows):
        corrupted[index, :len(row)] = torch.tensor(row, dtype=input_ids.dtype)
        mask[index, :len(row)] = 1
    return corrupted, mask


# -- the model ------------------------------------------------------------------------------
def build_model(config: LMConfig, tokenizer):
    """The untrained Hugging Face model of ``config.family`` over ``tokenizer``'s vocabulary."""
    transformers = require("transformers", "hf", "the SMILES language models")
    common = {"vocab_size": len(tokenizer), "pad_token_id": tokenizer.pad_token_id,
              "bos_token_id": tokenizer.bos_token_id, "eos_token_id": tokenizer.eos_token_id}
    if config.family == "encoder":
        model_config = transformers.RobertaConfig(
            hidden_size=config.hidden, num_hidden_layers=config.layers, num_attention_heads=config.heads,
            intermediate_size=config.intermediate, max_position_embeddings=config.max_positions + 2, type_vocab_size=1,
            **common,
        )
        return transformers.RobertaForMaskedLM(model_config)
    if config.family == "decoder":
        model_config = transformers.GPT2Config(
            n_embd=config.hidden, n_layer=config.layers, n_head=config.heads, n_inner=config.intermediate,
            n_positions=config.max_positions, **common,
        )
        return transformers.GPT2LMHeadModel(model_config)
    if config.family == "encoder-decoder":
        model_config = transformers.BartConfig(
            d_model=config.hidden, encoder_layers=config.layers, decoder_layers=config.layers,
            encoder_attention_heads=config.heads, decoder_attention_heads=config.heads,
            encoder_ffn_dim=config.intermediate, decoder_ffn_dim=config.intermediate,
            max_position_embeddings=config.max_positions, decoder_start_token_id=tokenizer.eos_token_id,
            forced_eos_token_id=tokenizer.eos_token_id, **common,
        )
        return transformers.BartForConditionalGeneration(model_config)
    raise UserInputError(f"unknown family {config.family!r}; choose one of {', '.join(FAMILIES)}")


def _lightning_module(config: LMConfig, tokenizer):
    pl = require("pytorch_lightning", "train", "training the SMILES language models")
    import torch

    class SmilesLM(pl.LightningModule):
        """One SMILES language model of any family, trained by :func:`fit`."""

        def __init__(self) -> None:
            super().__init__()
            self.model = build_model(config, tokenizer)
            self.family = config.family
            self.mask_id = tokenizer.mask_token_id
            self.pad_id = tokenizer.pad_token_id

        def corrupt(self, batch, generator):
            """Model inputs and labels of one batch for this family (corruption from ``generator``)."""
            ids, attention, special = batch["input_ids"], batch["attention_mask"], batch["special_mask"]
            if self.family == "encoder":
                corrupted, labels = mask_tokens(torch, ids, special, self.mask_id, len(tokenizer),
                                                config.mask_probability, generator)
                return {"input_ids": corrupted, "attention_mask": attention, "labels": labels}
            labels = ids.masked_fill(attention == 0, -100)
            if self.family == "decoder":
                return {"input_ids": ids, "attention_mask": attention, "labels": labels}
            corrupted, corrupted_mask = infill_spans(torch, ids, attention, self.mask_id, self.pad_id,
                                                     2 * config.mask_probability, generator)
            return {"input_ids": corrupted, "attention_mask": corrupted_mask, "labels": labels}

        def _step(self, batch, generator):
            inputs = {k: v.to(self.device) for k, v in self.corrupt(batch, generator).items()}
            output = self.model(**inputs)
            return output, inputs["labels"]

        def training_step(self, batch, batch_idx):
            generator = torch.Generator().manual_seed(config.seed * 1_000_003 + int(self.global_step))
            output, _ = self._step(batch, generator)
            self.log("loss", output.loss.detach(), prog_bar=True, on_step=True, on_epoch=True,
                     batch_size=len(batch["input_ids"]))
            return output.loss

        def validation_step(self, batch, batch_idx):
            generator = torch.Generator().manual_seed(config.seed * 1_000_003 + 7_777_777 + batch_idx)
            output, _ = self._step(batch, generator)
            self.log("val_loss", output.loss.detach(), on_epoch=True, batch_size=len(batch["input_ids"]))

        def configure_optimizers(self):
            optimizer = torch.optim.AdamW(self.parameters(), lr=config.learning_rate, weight_decay=0.01)
            total = config.epochs * config.steps_per_epoch

            def factor(step: int) -> float:
                # Linear warm-up, then linear decay to zero at the last step.
                if step < config.warmup_steps:
                    return (step + 1) / max(1, config.warmup_steps)
                return max(0.0, (total - step) / max(1, total - config.warmup_steps))

            schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, factor)
            return {"optimizer": optimizer, "lr_scheduler": {"scheduler": schedule, "interval": "step"}}

        def count_items(self, batch) -> int:
            return int(batch["attention_mask"].sum())

    return SmilesLM()


def make_collate(tokenizer, max_length: int):
    """Tokenize and pad a list of SMILES (no randomness: corruption happens in the step)."""

    def collate(texts: list[str]):
        encoded = tokenizer(list(texts), padding=True, truncation=True, max_length=max_length,
                            return_special_tokens_mask=True, return_tensors="pt")
        special = encoded["special_tokens_mask"].bool() | (encoded["attention_mask"] == 0)
        return {"input_ids": encoded["input_ids"], "attention_mask": encoded["attention_mask"], "special_mask": special}

    return collate


def evaluate_lm(module, tokenizer, texts: Sequence[str], config: LMConfig) -> dict[str, float]:
    """Validation loss, perplexity and token accuracy of a trained module on ``texts``
    (corruption seeded by ``seed + 1``; accuracy over the tokens the loss is taken on)."""
    import torch

    collate = make_collate(tokenizer, config.train_max_length)
    generator = torch.Generator().manual_seed(config.seed + 1)
    total_loss, total_tokens, correct = 0.0, 0, 0
    module.eval()
    with torch.no_grad():
        for start in range(0, len(texts), config.batch_size):
            batch = collate(list(texts[start:start + config.batch_size]))
            output, labels = module._step(batch, generator)
            logits = output.logits
            if config.family == "decoder":  # position t predicts token t + 1
                logits, labels = logits[:, :-1], labels[:, 1:]
            targets = labels != -100
            count = int(targets.sum())
            total_loss += float(output.loss) * count
            total_tokens += count
            correct += int(((logits.argmax(-1) == labels) & targets).sum())
    module.train()
    loss = total_loss / max(1, total_tokens)
    loss_key, accuracy_key = VALIDATION_KEYS[config.family]
    return {loss_key: loss, "perplexity": math.exp(min(loss, 50.0)), accuracy_key: correct / max(1, total_tokens)}


def train_smiles_lm(train: Sequence[str], valid: Sequence[str], out: str | Path, config: LMConfig,
                    *, device: str = "cpu", data_name: str = "", threads: int | None = None,
                    max_minutes: float | None = None, progress: bool | None = None,
                    stop_after_epochs: int | None = None) -> dict:
    """Train a SMILES language model of ``config.family`` on ``train`` into ``out``.

    Resumable: the training state is checkpointed in ``out/training`` at the end of every
    epoch; a run cut by ``max_minutes`` returns a manifest with ``finished: false`` and goes
    on when called again with the same arguments. When training is complete the Hugging
    Face checkpoint is written to ``out`` and the validation metrics are computed on
    ``valid``. Returns the manifest written to ``out/train_manifest.json``.
    """
    torch = require("torch", "hf", "training the SMILES language models")
    transformers = require("transformers", "hf", "training the SMILES language models")

    quiet_transformers()
    if config.family not in FAMILIES:
        raise UserInputError(f"unknown family {config.family!r}; choose one of {', '.join(FAMILIES)}")
    started, cpu_started = time.perf_counter(), time.process_time()
    tokenizer = build_smiles_tokenizer(config.max_positions)
    torch.manual_seed(config.seed)
    module = _lightning_module(config, tokenizer)
    target = Path(out)
    state = target / TRAINING_FOLDER
    settings = TrainSettings(
        seed=config.seed, max_epochs=config.epochs, steps_per_epoch=config.steps_per_epoch,
        batch_size=config.batch_size, max_minutes=max_minutes, stop_after_epochs=stop_after_epochs, patience=None,
        device=device, threads=threads, progress=progress, extra={"lm": asdict(config), "data": data_name},
    )
    lengths = [len(s) for s in train]
    outcome = fit(module, list(train), make_collate(tokenizer, config.train_max_length), state, settings,
                  val_dataset=list(valid) if valid else None, lengths=lengths)
    parameters = int(sum(p.numel() for p in module.model.parameters()))
    log = [json.loads(line) for line in (state / LOG).read_text(encoding="utf-8").splitlines() if line.strip()] \
        if (state / LOG).is_file() else []
    manifest = {
        "family": config.family, "data": data_name, "n_train": len(train), "n_valid": len(valid), "device": device,
        "config": asdict(config), "parameters": parameters, "finished": outcome.finished,
        "epochs_done": outcome.epochs_done, "global_step": outcome.global_step,
        "train_loss_first": log[0].get("loss_epoch") if log else None,
        "train_loss_last": log[-1].get("loss_epoch") if log else None,
        "val_loss_per_epoch": [row.get("val_loss") for row in log],
        "train_seconds": round(sum(row.get("elapsed_s", 0.0) for row in log), 1),
        "elapsed_s": round(time.perf_counter() - started, 1),
        "cpu_seconds_this_call": round(time.process_time() - cpu_started, 1), "validation": {},
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__},
    }
    if not outcome.finished:
        atomic_write_text(target / "train_manifest.json", json.dumps(manifest, indent=2) + "\n")
        return manifest
    load_module_state(module, state / CHECKPOINT)
    module.to("cpu")
    manifest["validation"] = evaluate_lm(module, tokenizer, list(valid), config) if valid else {}
    module.model.save_pretrained(target)
    tokenizer.save_pretrained(target)
    for written in target.glob("*.safetensors"):
        plain_file_mode(written)  # safetensors creates its files 0600
    manifest["files"] = {p.name: sha256_file(p) for p in sorted(target.iterdir())
                         if p.is_file() and p.name != "train_manifest.json"}
    atomic_write_text(target / "train_manifest.json", json.dumps(manifest, indent=2) + "\n")
    return manifest
