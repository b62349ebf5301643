"""Embeddings from a local Hugging Face checkpoint: encoder-only, encoder–decoder, decoder-only.

:class:`HFEncoder` loads a checkpoint folder (``config.json``, weights, tokenizer files)
with ``transformers`` and turns SMILES (or any text) into one vector per string and per
hidden layer by **mean pooling over the real tokens**: padding is excluded through the
attention mask and special tokens (``<s>``, ``</s>``, ``[CLS]``...) through the
tokenizer's special-tokens mask (``pooling="mean-all"`` keeps special tokens, which is
what AMORE's code does, as it runs one string at a time without padding). Layer 0 is the
embedding layer, so a model with L layers yields L + 1 matrices with ``layers="all"``.

Architectures: an encoder-only model (BERT, RoBERTa...) and a decoder-only model (GPT-2,
Llama...) are run as they are; an encoder–decoder model (T5, BART...) gives its encoder
states (``part="encoder"``, the default) or its decoder states with the input ids fed to
the decoder too (``part="decoder"``, as AMORE does). A hub id ``ORG/NAME`` is resolved to
its snapshot in the Hugging Face cache (downloaded first where there is internet; see
:func:`resolve_checkpoint`). A GGUF file (``model.gguf``, or a folder and ``gguf_file``) is
read as the text kind reads it (:func:`~chemassay.models.hf_text.load_checkpoint`: the same
de-quantized decoder, loaded once for both), and its hidden states are pooled the same way.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from chemassay.contract.errors import UserInputError, require
from chemassay.models.training import torch_device
from chemassay.runtime.progress import progress_task

POOLINGS = ("mean", "mean-all")
PARTS = ("auto", "encoder", "decoder")
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".h5", ".msgpack")


def checkpoint_kind(config) -> str:
    """``encoder-decoder``, ``decoder-only`` or ``encoder-only`` for a transformers config."""
    if getattr(config, "is_encoder_decoder", False):
        return "encoder-decoder"
    architectures = getattr(config, "architectures", None) or []
    if getattr(config, "is_decoder", False) or any(
        name.endswith("ForCausalLM") or name.endswith("LMHeadModel") for name in architectures
    ):
        return "decoder-only"
    if getattr(config, "model_type", "") in {"gpt2", "gpt_neo", "gptj", "llama", "mistral", "qwen2", "phi", "opt"}:
        return "decoder-only"
    return "encoder-only"


def checkpoint_digest(path: str | os.PathLike) -> str:
    """sha256 over a checkpoint folder's config, tokenizer and weight files (name + content)."""
    folder = Path(path)
    digest = hashlib.sha256()
    for file in sorted(p for p in folder.rglob("*") if p.is_file()):
        relevant = file.suffix in _WEIGHT_SUFFIXES or file.suffix in {".json", ".txt", ".model"}
        if not relevant:
            continue
        digest.update(str(file.relative_to(folder)).encode())
        with open(file, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


HUB_PATTERNS = ("*.json", "*.txt", "*.model", "*.safetensors", "tokenizer*", "*.tiktoken")


def is_hub_id(text: str) -> bool:
    """``ORG/NAME`` that is not an existing local path (a Hugging Face hub repository id)."""
    parts = str(text).split("/")
    return (len(parts) == 2 and all(parts) and not str(text).startswith((".", "~", "/"))
            and not Path(text).expanduser().exists())


def resolve_checkpoint(path: str | os.PathLike) -> Path:
    """The local folder of a checkpoint: ``path`` itself, or for a hub id ``ORG/NAME`` its
    snapshot in the Hugging Face cache (``$HF_HOME/hub``), downloaded first where there is
    internet (config, tokenizer and safetensors weights; ``pytorch_model.bin`` only when the
    repository has no safetensors). Offline (``HF_HUB_OFFLINE=1``, or no network) a cached
    snapshot is used. A folder that is not a checkpoint, or an id that can be neither found
    nor fetched, is a one-line error."""
    text = str(path)
    if is_hub_id(text):
        hub = require("huggingface_hub", "hf", "hub checkpoints")
        # Read the environment now (huggingface_hub reads it once, at import).
        offline = os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}
        cache = os.environ.get("HF_HUB_CACHE") or str(
            Path(os.environ.get("HF_HOME", Path.home() / ".cache" / "huggingface")).expanduser() / "hub")
        options = {"repo_id": text, "cache_dir": cache, "local_files_only": offline}
        try:
            folder = Path(hub.snapshot_download(allow_patterns=list(HUB_PATTERNS), **options))
            if not any(folder.glob("*.safetensors")):
                folder = Path(hub.snapshot_download(allow_patterns=[*HUB_PATTERNS, "*.bin"], **options))
        except Exception as exc:  # the hub client raises many types (offline, 401, 404, timeouts)
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise UserInputError(
                f"hf:{text}: cannot get this hub checkpoint ({type(exc).__name__}: {first[:160]}); with no internet, "
                "download it elsewhere into $HF_HOME/hub or pass a local folder"
            ) from None
    else:
        folder = Path(path).expanduser()
    if not folder.is_dir() or not (folder / "config.json").is_file():
        raise UserInputError(
            f"{folder}: not a Hugging Face checkpoint folder (expected config.json, weights and tokenizer files)"
        )
    return folder


def quiet_transformers() -> None:
    """Silence transformers' load reports and file progress bars (chemassay shows its own)."""
    transformers = require("transformers", "hf", "Hugging Face models")
    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()


class HFEncoder:
    """Mean-pooled hidden states of a local Hugging Face checkpoint (see the module doc).

    ``device`` is ``cpu``, ``cuda``, ``cuda:N`` or ``auto``; ``batch_size`` strings are run
    together (sorted by length to limit padding); ``max_length`` caps the tokens per string
    (default: the tokenizer's or model's limit). After :meth:`encode`, ``truncated`` lists
    the indices of inputs that were cut to ``max_length``.
    """

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        device: str = "cpu",
        batch_size: int = 32,
        pooling: str = "mean",
        part: str = "auto",
        max_length: int | None = None,
        gguf_file: str | None = None,
    ) -> None:
        requested = str(path)
        self.gguf_file = None
        if gguf_file is not None or str(path).lower().endswith(".gguf"):
            from chemassay.models.hf_text import checkpoint_location

            folder, self.gguf_file = checkpoint_location(path, gguf_file)
        else:
            folder = resolve_checkpoint(path)
        if pooling not in POOLINGS:
            raise UserInputError(f"unknown pooling {pooling!r}; choose one of {', '.join(POOLINGS)}")
        if part not in PARTS:
            raise UserInputError(f"unknown part {part!r}; choose one of {', '.join(PARTS)}")
        self.path = folder / self.gguf_file if self.gguf_file else folder
        self.device_name = device
        self.batch_size = max(1, int(batch_size))
        self.pooling = pooling
        self.requested_part = part
        self.requested_max_length = max_length
        self.name = f"hf:{requested}"
        self.truncated: list[int] = []
        self._model = None
        self._tokenizer = None
        self._torch = None
        if self.gguf_file:
            self.model_type = "gguf"  # the architecture is in the file; reading it takes as long as loading
        else:
            config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
            self.model_type = config.get("model_type", "")

    # -- loading -----------------------------------------------------------------------
    def _load(self) -> None:
        if self._model is not None:
            return
        torch = require("torch", "hf", "Hugging Face encoders")
        transformers = require("transformers", "hf", "Hugging Face encoders")
        quiet_transformers()

        device = torch_device(self.device_name)
        try:
            if self.gguf_file:
                from chemassay.models.hf_text import load_checkpoint

                # the causal model itself: its outputs hold the hidden states of every layer
                tokenizer, model, _ = load_checkpoint(self.path.parent, self.gguf_file, str(device))
                config = model.config
            else:
                config = transformers.AutoConfig.from_pretrained(self.path, local_files_only=True)
                tokenizer = transformers.AutoTokenizer.from_pretrained(self.path, local_files_only=True)
                model = transformers.AutoModel.from_pretrained(self.path, local_files_only=True)
        except (OSError, ValueError, KeyError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise UserInputError(f"{self.path}: cannot load the checkpoint ({first})") from None
        self.kind = checkpoint_kind(config)
        if self.requested_part == "decoder" and self.kind != "encoder-decoder":
            raise UserInputError(f"{self.path}: --part decoder needs an encoder-decoder model, this is {self.kind}")
        self.part = self.requested_part if self.requested_part != "auto" else (
            "encoder" if self.kind == "encoder-decoder" else "model"
        )
        if tokenizer.pad_token is None:
            # Decoder-only tokenizers often have no pad token; any id works because padded
            # positions are masked out of attention and pooling.
            tokenizer.pad_token = tokenizer.eos_token or tokenizer.unk_token
        if tokenizer.pad_token is None:
            self.batch_size = 1
        tokenizer.padding_side = "right"
        model.to(device)
        model.eval()
        self.device = device
        self._torch = torch
        self._model = model
        self._tokenizer = tokenizer
        self.max_length = self.requested_max_length or self._default_max_length(config, tokenizer)

    @staticmethod
    def _default_max_length(config, tokenizer) -> int | None:
        limit = getattr(tokenizer, "model_max_length", None)
        if isinstance(limit, int) and 0 < limit < 1_000_000:
            return limit
        positions = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)
        if isinstance(positions, int) and positions > 0:
            # RoBERTa-style position ids start after the padding index.
            offset = 2 if getattr(config, "model_type", "") in {"roberta", "xlm-roberta", "camembert"} else 0
            return positions - offset
        return None

    def describe(self) -> dict:
        """Settings that determine the embeddings (used in cache keys and results)."""
        return {
            "encoder": "hf", "path": str(self.path), "pooling": self.pooling, "part": self.requested_part,
            "max_length": self.requested_max_length, "model_type": self.model_type,
        }

    def checksum(self) -> str:
        """sha256 of the checkpoint files (of a GGUF, the file): the model's identity in results."""
        return self._digest()

    def _digest(self) -> str:
        if self.gguf_file:
            from chemassay.runtime.files import sha256_file

            return sha256_file(self.path)
        return checkpoint_digest(self.path)

    def cache_key(self) -> str:
        """A key that changes whenever the checkpoint or an embedding-relevant setting does."""
        settings = json.dumps({k: v for k, v in self.describe().items() if k != "path"}, sort_keys=True)
        return hashlib.sha256((self._digest() + settings).encode()).hexdigest()[:24]

    # -- encoding ----------------------------------------------------------------------
    def n_layers(self) -> int:
        """Number of hidden-state matrices ``layers='all'`` returns (embeddings + layers)."""
        self._load()
        config = self._model.config
        if self.part == "decoder":
            count = getattr(config, "num_decoder_layers", None) or getattr(config, "decoder_layers", None)
        else:
            count = (getattr(config, "num_hidden_layers", None) or getattr(config, "num_layers", None)
                     or getattr(config, "encoder_layers", None) or getattr(config, "n_layer", None))
        return int(count) + 1

    def _forward(self, input_ids, attention_mask):
        model = self._model
        if self.part == "encoder":
            output = model.get_encoder()(input_ids=input_ids, attention_mask=attention_mask,
                                         output_hidden_states=True, return_dict=True)
            return output.hidden_states
        if self.part == "decoder":
            output = model(input_ids=input_ids, attention_mask=attention_mask, decoder_input_ids=input_ids,
                           decoder_attention_mask=attention_mask, output_hidden_states=True, return_dict=True)
            return output.decoder_hidden_states
        output = model(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True, return_dict=True)
        return output.hidden_states

    def embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        """One pooled vector of the last layer per text (the ``embeddings`` capability)."""
        return list(self.encode(texts, layers="last"))

    def encode(self, smiles: Sequence[str], layers: str = "last") -> np.ndarray | list[np.ndarray]:
        """Embeddings ``(n, d)`` of the last layer, or with ``layers='all'`` a list of them,
        one per hidden layer starting with the embedding layer (float32)."""
        if layers not in ("last", "all"):
            raise UserInputError(f"--layers must be 'last' or 'all', got {layers!r}")
        self._load()
        torch = self._torch
        texts = list(smiles)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        pooled: list[list[np.ndarray]] | None = None
        results: list[np.ndarray] = []
        self.truncated = []
        with torch.no_grad(), progress_task(f"embed {self.path.name}", len(texts)) as advance:
            for start in range(0, len(order), self.batch_size):
                batch_index = order[start:start + self.batch_size]
                batch_text = [texts[i] for i in batch_index]
                encoded = self._tokenizer(
                    batch_text, padding=True, truncation=self.max_length is not None,
                    max_length=self.max_length, return_special_tokens_mask=True, return_tensors="pt",
                )
                if self.max_length is not None:
                    full = self._tokenizer(batch_text, add_special_tokens=True, truncation=False)["input_ids"]
                    self.truncated += [i for i, ids in zip(batch_index, full, strict=True) if len(ids) > self.max_length]
                input_ids = encoded["input_ids"].to(self.device)
                attention = encoded["attention_mask"].to(self.device)
                keep = attention.clone()
                if self.pooling == "mean":
                    real = attention * (1 - encoded["special_tokens_mask"].to(self.device))
                    # A string made only of special tokens falls back to all its tokens.
                    empty = real.sum(dim=1) == 0
                    keep = torch.where(empty[:, None], attention, real)
                states = self._forward(input_ids, attention)
                chosen = states if layers == "all" else states[-1:]
                weights = keep.to(chosen[0].dtype)[:, :, None]
                means = [((s * weights).sum(dim=1) / weights.sum(dim=1)).float().cpu().numpy() for s in chosen]
                if pooled is None:
                    pooled = [[] for _ in means]
                for slot, matrix in zip(pooled, means, strict=True):
                    slot.append(matrix)
                advance(len(batch_index))
        inverse = np.argsort(np.asarray(order, dtype=np.int64))
        for slot in pooled or []:
            results.append(np.ascontiguousarray(np.concatenate(slot, axis=0)[inverse], dtype=np.float32))
        if not results:
            return np.zeros((0, 0), dtype=np.float32) if layers == "last" else []
        return results[0] if layers == "last" else results
