"""A small RoBERTa-style masked language model of SMILES, trained here, saved for ``hf:DIR``.

Hub checkpoints cannot be downloaded on an offline machine, so the suite trains its own
chemical language model: a character-level tokenizer (``Cl``, ``Br`` and ``%nn`` kept
whole; every printable ASCII character in the vocabulary, so no SMILES is ever out of
vocabulary) built with the ``tokenizers`` library, and a ``RobertaForMaskedLM`` trained
with the standard masked-language-model objective (15 % of tokens; 80 % replaced by
``<mask>``, 10 % by a random token, 10 % kept). The folder written is a standard Hugging
Face checkpoint (``config.json``, ``model.safetensors``, tokenizer files) plus
``train_manifest.json`` (data, seed, configuration, losses, sha256 of every file).
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

from chemassay.errors import UserInputError, require
from chemassay.runtime.files import atomic_write_text, sha256_file
from chemassay.runtime.progress import progress_task

SPECIAL_TOKENS = ("<s>", "<pad>", "</s>", "<unk>", "<mask>")
TOKEN_PATTERN = r"Cl|Br|%[0-9]{2}|."


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
    """Size and training settings of the SMILES masked language model."""

    layers: int = 4
    hidden: int = 128
    heads: int = 4
    intermediate: int = 512
    max_positions: int = 512
    n_train: int = 20000
    n_valid: int = 1000
    steps: int = 600
    batch_size: int = 32
    learning_rate: float = 5e-4
    warmup_steps: int = 100
    mask_probability: float = 0.15
    train_max_length: int = 128
    seed: int = 0


def read_smiles_corpus(path: str | Path) -> list[str]:
    """SMILES of a corpus file: a MOSES-style CSV (``SMILES`` column) or one SMILES per line,
    optionally gzipped, read by :func:`chemassay.data.readers.read_smiles_file` (one-line
    errors for missing, binary or truncated files). Empty cells are left out: a corpus row
    without a SMILES has nothing to learn from."""
    from chemassay.data.readers import read_smiles_file

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


def _mask_tokens(torch, input_ids, special_mask, tokenizer, probability: float, generator):
    labels = input_ids.clone()
    chance = torch.full(labels.shape, probability)
    chance.masked_fill_(special_mask, 0.0)
    masked = torch.bernoulli(chance, generator=generator).bool()
    labels[~masked] = -100
    replace = torch.bernoulli(torch.full(labels.shape, 0.8), generator=generator).bool() & masked
    input_ids = input_ids.clone()
    input_ids[replace] = tokenizer.mask_token_id
    randomise = torch.bernoulli(torch.full(labels.shape, 0.5), generator=generator).bool() & masked & ~replace
    first_regular = len(SPECIAL_TOKENS)
    random_ids = torch.randint(first_regular, len(tokenizer), labels.shape, generator=generator)
    input_ids[randomise] = random_ids[randomise]
    return input_ids, labels


def _batch(tokenizer, texts: Sequence[str], max_length: int):
    return tokenizer(list(texts), padding=True, truncation=True, max_length=max_length,
                     return_special_tokens_mask=True, return_tensors="pt")


def _evaluate(torch, model, tokenizer, texts, config: LMConfig, device: str) -> dict[str, float]:
    generator = torch.Generator().manual_seed(config.seed + 1)
    total_loss, total_tokens, correct = 0.0, 0, 0
    model.eval()
    with torch.no_grad():
        for start in range(0, len(texts), config.batch_size):
            encoded = _batch(tokenizer, texts[start:start + config.batch_size], config.train_max_length)
            special = encoded["special_tokens_mask"].bool() | (encoded["attention_mask"] == 0)
            inputs, labels = _mask_tokens(torch, encoded["input_ids"], special, tokenizer, config.mask_probability, generator)
            output = model(input_ids=inputs.to(device), attention_mask=encoded["attention_mask"].to(device),
                           labels=labels.to(device))
            count = int((labels != -100).sum())
            total_loss += float(output.loss.detach()) * count
            total_tokens += count
            predicted = output.logits.argmax(-1).cpu()
            correct += int(((predicted == labels) & (labels != -100)).sum())
    model.train()
    loss = total_loss / max(1, total_tokens)
    return {"mlm_loss": loss, "perplexity": math.exp(min(loss, 50.0)), "masked_accuracy": correct / max(1, total_tokens)}


def train_smiles_lm(train: Sequence[str], valid: Sequence[str], out: str | Path, config: LMConfig,
                    *, device: str = "cpu", data_name: str = "") -> dict:
    """Train the masked LM on ``train``, evaluate on ``valid``, save a checkpoint in ``out``.

    Returns the manifest written to ``out/train_manifest.json``.
    """
    torch = require("torch", "hf", "training the SMILES language model")
    transformers = require("transformers", "hf", "training the SMILES language model")
    from chemassay.models.hf_encoder import quiet_transformers

    quiet_transformers()
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise UserInputError(f"--device {device}: CUDA is not available on this machine (use --device cpu)")
    started = time.perf_counter()
    torch.manual_seed(config.seed)
    tokenizer = build_smiles_tokenizer(config.max_positions)
    model_config = transformers.RobertaConfig(
        vocab_size=len(tokenizer), hidden_size=config.hidden, num_hidden_layers=config.layers,
        num_attention_heads=config.heads, intermediate_size=config.intermediate,
        max_position_embeddings=config.max_positions + 2, pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id, type_vocab_size=1,
    )
    model = transformers.RobertaForMaskedLM(model_config).to(device)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=0.01)
    def learning_rate_factor(step: int) -> float:
        # Linear warm-up, then linear decay to zero at the last step.
        if step < config.warmup_steps:
            return (step + 1) / max(1, config.warmup_steps)
        return max(0.0, (config.steps - step) / max(1, config.steps - config.warmup_steps))

    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, learning_rate_factor)
    generator = torch.Generator().manual_seed(config.seed)
    rng = np.random.default_rng(config.seed)
    losses: list[float] = []
    order = rng.permutation(len(train))
    position = 0
    with progress_task("train SMILES LM", config.steps) as advance:
        for _step in range(config.steps):
            if position + config.batch_size > len(order):
                order = rng.permutation(len(train))
                position = 0
            texts = [train[i] for i in order[position:position + config.batch_size]]
            position += config.batch_size
            encoded = _batch(tokenizer, texts, config.train_max_length)
            special = encoded["special_tokens_mask"].bool() | (encoded["attention_mask"] == 0)
            inputs, labels = _mask_tokens(torch, encoded["input_ids"], special, tokenizer, config.mask_probability, generator)
            output = model(input_ids=inputs.to(device), attention_mask=encoded["attention_mask"].to(device),
                           labels=labels.to(device))
            output.loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad(set_to_none=True)
            losses.append(float(output.loss.detach()))
            advance(1)
    validation = _evaluate(torch, model, tokenizer, list(valid), config, device) if valid else {}
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    model.cpu().save_pretrained(target)
    tokenizer.save_pretrained(target)
    files = {p.name: sha256_file(p) for p in sorted(target.iterdir()) if p.is_file() and p.name != "train_manifest.json"}
    window = max(1, len(losses) // 20)
    manifest = {
        "data": data_name, "n_train": len(train), "n_valid": len(valid), "device": device,
        "config": asdict(config), "parameters": int(sum(p.numel() for p in model.parameters())),
        "train_loss_first": float(np.mean(losses[:window])) if losses else None,
        "train_loss_last": float(np.mean(losses[-window:])) if losses else None,
        "validation": validation, "elapsed_s": round(time.perf_counter() - started, 1), "files": files,
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__},
    }
    atomic_write_text(target / "train_manifest.json", json.dumps(manifest, indent=2) + "\n")
    return manifest
