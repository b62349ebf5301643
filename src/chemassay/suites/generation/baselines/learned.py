"""The learned MOSES generators as model kinds: CharRNN, VAE, AAE, LatentGAN and the HMM.

A trained model is a **folder** (``--model charrnn:DIR``):

* ``model.json`` — ``{"format": "chemassay.generation.learned/1", "kind": ..., "size": ...,
  "config": {model hyper-parameters}, "training": {epochs, steps, batch...}, "vocab": [...],
  "train": {what it was trained on}, "finished": bool, ...}``;
* the weights: ``last.ckpt`` (CharRNN, VAE, AAE: the resumable training checkpoint of
  :func:`chemassay.models.training.fit`), ``autoencoder/last.ckpt`` + ``gan/last.ckpt`` +
  ``latents.npy`` (LatentGAN), ``hmm.npz`` (HMM); ``train_log.jsonl`` and
  ``train_settings.json`` beside them.

``chemassay generation train --model KIND:DIR[,size=cpu][,key=value...]`` creates the
folder or resumes the run it holds (same settings: a run cut into pieces ends with the
model an uncut run gives). ``size`` picks a preset (``tiny`` for tests, ``cpu`` for the
reduced configurations trained here, ``paper`` for the MOSES sizes, the default); any model
hyper-parameter of the preset (``hidden=512``...) and the training lengths (``epochs``,
``steps``, ``batch_size``, ``val``...) can be set as options.

Sampling options (``--model charrnn:DIR,temperature=1,max_len=100,batch=512,device=cpu``)
change how a trained model is sampled, not the model.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from rdkit import Chem

from chemassay.chem.molecules import rdkit_log_silenced
from chemassay.contract.errors import UserInputError
from chemassay.models.spec import ModelSpec, check_options, option_float, option_int, parse_spec
from chemassay.models.training import TrainSettings, fit, load_module_state
from chemassay.runtime.files import atomic_write_text, ensure_writable_dir
from chemassay.runtime.progress import info, progress_task
from chemassay.suites.generation.baselines.hmm import STATE_FILE, HMMConfig, HMMModel, train_hmm
from chemassay.suites.generation.baselines.kinds import _train_source
from chemassay.suites.generation.baselines.neural import CharVocab, pad_collate, sample_smiles

KINDS = ("charrnn", "vae", "aae", "latentgan", "hmm")
FORMAT = "chemassay.generation.learned/1"
INFO_FILE = "model.json"
SIZES = ("tiny", "cpu", "paper")
SAMPLING_OPTIONS = {"max_len", "temperature", "batch", "device"}
_LABEL = {"charrnn": "CharRNN", "vae": "VAE", "aae": "AAE", "latentgan": "LatentGAN", "hmm": "HMM"}

# Training lengths: epochs of `steps` optimizer steps (None: one pass over the training set).
# LatentGAN has a second stage (`gan_*`); the HMM trains by EM (`iterations`).
PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    "charrnn": {
        "paper": {"model": {"hidden": 768, "layers": 3, "dropout": 0.2, "lr": 1e-3, "lr_step": 10, "lr_gamma": 0.5},
                  "training": {"epochs": 80, "steps": None, "batch_size": 64, "val": 2000, "grad_clip": None}},
        "cpu": {"model": {"hidden": 256, "layers": 2, "dropout": 0.2, "lr": 1e-3, "lr_step": 2, "lr_gamma": 0.5},
                "training": {"epochs": 6, "steps": 250, "batch_size": 64, "val": 1000, "grad_clip": None}},
        "tiny": {"model": {"hidden": 32, "layers": 1, "dropout": 0.0, "lr": 1e-2, "lr_step": 10, "lr_gamma": 0.5},
                 "training": {"epochs": 2, "steps": 6, "batch_size": 16, "val": 32, "grad_clip": None}},
    },
    "vae": {
        "paper": {"model": {"enc_hidden": 256, "enc_layers": 1, "enc_bidirectional": False, "enc_dropout": 0.5,
                            "dec_hidden": 512, "dec_layers": 3, "dec_dropout": 0.0, "latent": 128, "lr": 3e-4,
                            "kl_w_start": 0.0, "kl_w_end": 0.05},
                  "training": {"epochs": 100, "steps": None, "batch_size": 512, "val": 2000, "grad_clip": 50.0}},
        "cpu": {"model": {"enc_hidden": 256, "enc_layers": 1, "enc_bidirectional": False, "enc_dropout": 0.5,
                          "dec_hidden": 256, "dec_layers": 2, "dec_dropout": 0.0, "latent": 128, "lr": 1e-3,
                          "kl_w_start": 0.0, "kl_w_end": 0.05},
                "training": {"epochs": 6, "steps": 100, "batch_size": 128, "val": 1000, "grad_clip": 50.0}},
        "tiny": {"model": {"enc_hidden": 16, "enc_layers": 1, "dec_hidden": 32, "dec_layers": 1, "latent": 8,
                           "lr": 1e-2},
                 "training": {"epochs": 2, "steps": 6, "batch_size": 16, "val": 32, "grad_clip": 50.0}},
    },
    "aae": {
        "paper": {"model": {"embedding": 32, "enc_hidden": 512, "enc_layers": 1, "enc_bidirectional": True,
                            "dec_hidden": 512, "dec_layers": 2, "latent": 128, "disc_layers": [640, 256],
                            "lr": 1e-3, "lr_step": 20, "lr_gamma": 0.5},
                  "training": {"epochs": 120, "steps": None, "batch_size": 512, "val": 2000, "grad_clip": None}},
        "cpu": {"model": {"embedding": 32, "enc_hidden": 256, "enc_layers": 1, "enc_bidirectional": True,
                          "dec_hidden": 256, "dec_layers": 2, "latent": 128, "disc_layers": [640, 256],
                          "lr": 1e-3, "lr_step": 3, "lr_gamma": 0.5},
                "training": {"epochs": 6, "steps": 80, "batch_size": 128, "val": 1000, "grad_clip": None}},
        "tiny": {"model": {"embedding": 8, "enc_hidden": 16, "dec_hidden": 32, "dec_layers": 1, "latent": 8,
                           "disc_layers": [16], "lr": 1e-2},
                 "training": {"epochs": 2, "steps": 6, "batch_size": 16, "val": 32, "grad_clip": None}},
    },
    "latentgan": {
        "paper": {"model": {"embedding": 32, "enc_hidden": 512, "enc_layers": 2, "latent": 512, "dec_hidden": 512,
                            "dec_layers": 4, "noise_std": 0.1, "lr": 1e-3, "lr_end": 1e-6, "gp": 10.0,
                            "n_critic": 5, "gan_lr": 2e-4, "beta1": 0.5, "beta2": 0.999},
                  "training": {"epochs": 100, "steps": None, "batch_size": 128, "val": 2000, "grad_clip": None,
                               "gan_epochs": 2000, "gan_steps": None, "gan_batch_size": 64, "gan_train": None}},
        "cpu": {"model": {"embedding": 32, "enc_hidden": 256, "enc_layers": 1, "latent": 128, "dec_hidden": 256,
                          "dec_layers": 2, "noise_std": 0.1, "lr": 1e-3, "lr_end": 1e-5, "gp": 10.0,
                          "n_critic": 5, "gan_lr": 2e-4, "beta1": 0.5, "beta2": 0.999},
                "training": {"epochs": 5, "steps": 100, "batch_size": 128, "val": 1000, "grad_clip": None,
                             "gan_epochs": 100, "gan_steps": 500, "gan_batch_size": 64, "gan_train": 50000}},
        "tiny": {"model": {"embedding": 8, "enc_hidden": 16, "enc_layers": 1, "latent": 8, "dec_hidden": 32,
                           "dec_layers": 1, "lr": 1e-2, "lr_end": 1e-3, "gan_lr": 1e-3},
                 "training": {"epochs": 2, "steps": 6, "batch_size": 16, "val": 32, "grad_clip": None,
                              "gan_epochs": 2, "gan_steps": 5, "gan_batch_size": 16, "gan_train": 64}},
    },
    "hmm": {
        "paper": {"model": {"states": 200}, "training": {"iterations": 100, "tol": 0.0, "limit": 100_000}},
        "cpu": {"model": {"states": 200}, "training": {"iterations": 10, "tol": 0.0, "limit": 5_000}},
        "tiny": {"model": {"states": 4}, "training": {"iterations": 3, "tol": 0.0, "limit": 100}},
    },
}
_TRAINING_KEYS = {"epochs", "steps", "batch_size", "val", "grad_clip", "gan_epochs", "gan_steps", "gan_batch_size",
                  "gan_train", "iterations", "tol", "limit"}


def _config_class(kind: str):
    if kind == "charrnn":
        from chemassay.suites.generation.baselines.charrnn import CharRNNConfig

        return CharRNNConfig
    if kind == "vae":
        from chemassay.suites.generation.baselines.vae import VAEConfig

        return VAEConfig
    if kind == "aae":
        from chemassay.suites.generation.baselines.aae import AAEConfig

        return AAEConfig
    if kind == "latentgan":
        from chemassay.suites.generation.baselines.latentgan import LatentGANConfig

        return LatentGANConfig

    return HMMConfig


def _parse_value(text: str, default: Any, key: str) -> Any:
    """An option's text as the type of its default."""
    try:
        if isinstance(default, bool):
            lowered = text.strip().lower()
            if lowered not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError(text)
            return lowered in ("true", "1", "yes")
        if isinstance(default, int) and not isinstance(default, bool):
            return int(text)
        if isinstance(default, float):
            return float(text)
        if isinstance(default, list):
            return [int(v) for v in text.replace("/", " ").replace("x", " ").split()]
    except ValueError:
        raise UserInputError(f"option {key}={text!r}: expected a value like {default!r}") from None
    return text


def training_plan(kind: str, options: dict[str, str]) -> dict[str, Any]:
    """The model configuration and training lengths a spec's options ask for: the ``size``
    preset with the options laid over it (unknown keys are an error)."""
    size = options.get("size", "paper")
    if size not in SIZES:
        raise UserInputError(f"size must be one of {', '.join(SIZES)}, got {size!r}")
    preset = PRESETS[kind][size]
    config_class = _config_class(kind)
    config = asdict(config_class(**preset["model"]))
    training = dict(preset["training"])
    allowed = set(config) | set(training) | {"size", "train", "autoencoder"}
    for key, text in options.items():
        if key in ("size", "train", "autoencoder"):
            continue
        if key not in allowed:
            raise UserInputError(
                f"unknown option {key!r} for {kind}; model options: {', '.join(sorted(config))}; "
                f"training options: {', '.join(sorted(training))}"
            )
        if key in config:
            config[key] = _parse_value(text, config[key], key)
        elif text.strip().lower() in ("none", "all", "full"):
            training[key] = None
        else:
            default = training[key]
            training[key] = _parse_value(text, default if default is not None else 0, key)
    # The schedules that span the run follow its length unless set explicitly.
    if kind == "vae" and "kl_epochs" not in options:
        config["kl_epochs"] = training["epochs"]
    if kind == "latentgan":
        config["schedule_epochs"] = training["epochs"]
    for key in ("epochs", "steps", "batch_size", "gan_epochs", "gan_steps", "gan_batch_size", "iterations"):
        if training.get(key) is not None and training[key] < 1:
            raise UserInputError(f"{key} must be at least 1, got {training[key]}")
    return {"size": size, "config": config, "training": training}


# ---------------------------------------------------------------- the model folder


def read_info(folder: Path) -> dict[str, Any] | None:
    """The folder's ``model.json`` (``None`` when absent); a one-line error when damaged."""
    path = folder / INFO_FILE
    if not path.is_file():
        return None
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(info, dict) or info.get("format") != FORMAT or info.get("kind") not in KINDS:
            raise ValueError("not a chemassay learned-generator description")
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise UserInputError(f"{path}: damaged or not a chemassay model description ({exc})") from None
    return info


def folder_kind(path: str | os.PathLike) -> str | None:
    """Which learned kind a folder holds (``None``: not a learned-model folder)."""
    target = Path(path)
    if not target.is_dir():
        return None
    try:
        info = read_info(target)
    except UserInputError:
        return None
    return None if info is None else info["kind"]


def _write_info(folder: Path, info: dict[str, Any]) -> None:
    atomic_write_text(folder / INFO_FILE, json.dumps(info, indent=1, sort_keys=True) + "\n")


def _check_folder(kind: str, folder: Path, *, for_training: bool) -> dict[str, Any] | None:
    if folder.exists() and not folder.is_dir():
        from chemassay.suites.generation.baselines.kinds import checkpoint_kind

        other = checkpoint_kind(folder)
        hint = f" (it holds {'an' if other == 'ngram' else 'a'} {other} model: use --model {other}:{folder})" if other \
            else ""
        raise UserInputError(f"{folder}: is a file; --model {kind}:DIR names a model folder{hint}")
    info = read_info(folder) if folder.is_dir() else None
    if info is not None and info["kind"] != kind:
        raise UserInputError(
            f"{folder}: holds a {_LABEL[info['kind']]} model, not a {_LABEL[kind]} one; use --model {info['kind']}:{folder}"
        )
    if info is None and not for_training:
        raise UserInputError(
            f"{folder}: no trained {_LABEL[kind]} model there; train one with "
            f"'chemassay generation train --model {kind}:{folder},size=cpu'"
        )
    return info


# ---------------------------------------------------------------- loading


def _module_for(kind: str, info: dict[str, Any], vocab):
    config = dict(info["config"])
    if kind == "charrnn":
        from chemassay.suites.generation.baselines.charrnn import CharRNN

        return CharRNN(len(vocab), vocab.pad, config)
    if kind == "vae":
        from chemassay.suites.generation.baselines.vae import VAE

        return VAE(len(vocab), vocab.pad, config)
    if kind == "aae":
        from chemassay.suites.generation.baselines.aae import AAE

        return AAE(len(vocab), vocab.pad, config)
    raise ValueError(kind)


def _latentgan_modules(info: dict[str, Any], vocab):
    from chemassay.suites.generation.baselines.latentgan import (
        Heteroencoder,
        LatentGAN,
        LatentGANConfig,
    )

    config = LatentGANConfig(**info["config"])
    return Heteroencoder(len(vocab), vocab.pad, config.autoencoder()), LatentGAN(config.gan())


def _weights_files(kind: str, folder: Path) -> list[Path]:
    if kind == "hmm":
        from chemassay.suites.generation.baselines.hmm import STATE_FILE

        return [folder / STATE_FILE]
    if kind == "latentgan":
        return [folder / "autoencoder" / "last.ckpt", folder / "gan" / "last.ckpt"]
    return [folder / "last.ckpt"]


class LearnedGenerator:
    """A trained learned generator: ``sample(n, seed)`` (the ``generator`` protocol)."""

    def __init__(self, kind: str, folder: Path, info: dict[str, Any], model: Any, vocab: Any,
                 sampling: dict[str, Any], show_progress: bool | None = None) -> None:
        self.kind = kind
        self.folder = Path(folder)
        self.path = self.folder
        self.info = info
        self.model = model
        self.vocab = vocab
        self.sampling = dict(sampling)
        self.show_progress = show_progress
        self.name = f"{kind} ({self.folder.name})"
        self.spec = ModelSpec(kind, str(self.folder), {k: str(v) for k, v in sampling.items()
                                                       if v != default_sampling(kind).get(k)})
        self._checksum: str | None = None

    def sample(self, n: int, seed: int = 0) -> list[str]:
        """``n`` strings (valid molecules or not) drawn with ``seed``; the same seed, ``n`` and
        sampling batch give the same samples, draw for draw."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise UserInputError(f"cannot sample {n!r} molecules; n must be a whole number, 0 or more")
        if n == 0:
            return []
        if self.model is None:
            raise UserInputError(f"{self.folder}: training has not produced a model yet; run the training again to go on")
        s = self.sampling
        if self.kind == "hmm":
            return self.model.sample(n, seed, max_len=s["max_len"], batch=s["batch"])

        return sample_smiles(self.model, self.vocab, n, seed, batch=s["batch"], max_len=s["max_len"],
                             temperature=s["temperature"], device=s["device"], show_progress=self.show_progress)

    def checksum(self) -> str:
        """sha256 of the weights file (LatentGAN: of both files' digests)."""
        if self._checksum is None:
            import hashlib

            from chemassay.runtime.files import sha256_file

            digests = [sha256_file(p) for p in _weights_files(self.kind, self.folder)]
            self._checksum = digests[0] if len(digests) == 1 else hashlib.sha256("".join(digests).encode()).hexdigest()
        return self._checksum

    def describe(self) -> dict[str, Any]:
        """What determines the samples: the folder, the configuration, its training, sampling."""
        train = self.info.get("train", {})
        return {"model_dir": str(self.folder), "size": self.info.get("size"), **self.info.get("config", {}),
                **{k: train.get(k) for k in ("train", "train_limit", "train_sha256", "n_train") if k in train},
                "epochs_done": self.info.get("epochs_done"), "finished": self.info.get("finished"), **self.sampling}


def default_sampling(kind: str) -> dict[str, Any]:
    return {"max_len": 100, "temperature": 0.0 if kind == "latentgan" else 1.0,
            "batch": 4096 if kind == "hmm" else 512, "device": "cpu"}


def _sampling(kind: str, spec: ModelSpec) -> dict[str, Any]:
    defaults = default_sampling(kind)
    sampling = {
        "max_len": option_int(spec, "max_len", defaults["max_len"], minimum=1),
        "temperature": option_float(spec, "temperature", defaults["temperature"]),
        "batch": option_int(spec, "batch", defaults["batch"], minimum=1),
        "device": spec.options.get("device", defaults["device"]),
    }
    if sampling["temperature"] < 0:
        raise UserInputError(f"--model {spec.text}: temperature must be 0 or more")
    if kind == "hmm" and sampling["temperature"] != 1.0:
        raise UserInputError(f"--model {spec.text}: the HMM samples at temperature 1 only")
    if sampling["device"] not in ("cpu", "cuda") and not str(sampling["device"]).startswith("cuda:"):
        raise UserInputError(f"--model {spec.text}: device must be cpu or cuda")
    return sampling


def load_learned(kind: str, folder: str | os.PathLike, sampling: dict[str, Any] | None = None,
                 show_progress: bool | None = None) -> LearnedGenerator:
    """The trained model of ``kind`` in ``folder``; one-line errors for a missing folder, a
    folder of another kind, an untrained one and damaged weights."""
    target = Path(folder).expanduser()
    info = _check_folder(kind, target, for_training=False)
    assert info is not None
    sampling = dict(sampling or default_sampling(kind))
    missing = [p for p in _weights_files(kind, target) if not p.is_file()]
    if missing:
        raise UserInputError(
            f"{target}: the {_LABEL[kind]} model has no trained weights yet ({missing[0].name} missing); "
            f"finish its training with 'chemassay generation train --model {kind}:{target}' (same options)"
        )
    if kind == "hmm":
        from chemassay.suites.generation.baselines.hmm import HMMModel

        model = HMMModel.load(_weights_files(kind, target)[0])
        return LearnedGenerator(kind, target, info, model, None, sampling, show_progress)
    if sampling["device"].startswith("cuda"):
        from chemassay.models.training import resolve_device

        resolve_device(sampling["device"])
    vocab = CharVocab(info["vocab"])
    if kind == "latentgan":
        from chemassay.suites.generation.baselines.latentgan import LatentGANSampler

        autoencoder, gan = _latentgan_modules(info, vocab)
        load_module_state(autoencoder, target / "autoencoder" / "last.ckpt")
        load_module_state(gan, target / "gan" / "last.ckpt")
        model = LatentGANSampler(autoencoder, gan)
    else:
        model = load_module_state(_module_for(kind, info, vocab), target / "last.ckpt")
    model = model.to(sampling["device"]).eval()
    return LearnedGenerator(kind, target, info, model, vocab, sampling, show_progress)


def create(spec: ModelSpec, protocol: str, context: dict[str, Any]) -> LearnedGenerator:
    """Factory of the learned kinds: ``KIND:DIR[,max_len=..][,temperature=..][,batch=..][,device=..]``."""
    kind = spec.kind
    if not spec.arg:
        raise UserInputError(f"--model {kind}:DIR needs the folder of a trained model "
                             f"('chemassay generation train --model {kind}:DIR,size=cpu' makes one)")
    extra = set(spec.options) - SAMPLING_OPTIONS
    if extra & (_TRAINING_KEYS | {"size", "train"}):
        raise UserInputError(
            f"--model {spec.text}: {', '.join(sorted(extra))} are training options; give them to "
            f"'chemassay generation train --model {kind}:DIR,...' (sampling options: {', '.join(sorted(SAMPLING_OPTIONS))})"
        )
    check_options(spec, SAMPLING_OPTIONS)
    return load_learned(kind, spec.arg, _sampling(kind, spec), context.get("show_progress"))


# ---------------------------------------------------------------- training


@dataclass
class RunControls:
    """How this training piece runs (never part of the model's identity)."""

    seed: int = 0
    device: str = "auto"
    threads: int | None = None
    max_minutes: float | None = None
    stop_after_epochs: int | None = None
    show_progress: bool | None = None


def _train_set(source: Any, limit: int | None) -> tuple[dict[str, Any], list[str]]:
    origin, load = _train_source(source, limit)
    everything = load()
    smiles = [s for s in everything if s]
    # Empty cells of a SMILES file are not molecules to learn from; they are counted, not lost.
    origin["n_train"], origin["n_empty_skipped"] = len(smiles), len(everything) - len(smiles)
    return origin, smiles


def _say(text: str) -> None:
    info(text)


def train_learned(kind: str, folder: str | os.PathLike, source: Any = "moses", *, limit: int | None = None,
                  options: dict[str, str] | None = None, run: RunControls | None = None) -> tuple[LearnedGenerator, bool]:
    """Train (or resume training) the ``kind`` model in ``folder``; return it and whether its
    training is finished (``False``: the piece ended early; call again to go on)."""
    run = run or RunControls()
    options = dict(options or {})
    target = Path(folder).expanduser()
    info = _check_folder(kind, target, for_training=True)
    plan = training_plan(kind, options)
    training = plan["training"]
    if kind == "hmm" and limit is None:
        limit = training["limit"]
    origin, smiles = _train_set(source, limit)
    if not smiles:
        raise UserInputError("the training set is empty")
    wanted = {"kind": kind, "size": plan["size"], "config": plan["config"], "training": training,
              "train": {k: origin[k] for k in ("train", "train_sha256", "train_limit")}, "seed": run.seed}
    adopted = None
    if kind == "latentgan" and options.get("autoencoder"):
        adopted = Path(options["autoencoder"]).expanduser()
        source_info = _adoptable_autoencoder(adopted)
        for key in _AE_CONFIG_KEYS:
            wanted["config"][key] = source_info["config"][key]
        for key in ("epochs", "steps", "batch_size", "val"):
            wanted["training"][key] = source_info["training"][key]
        wanted["autoencoder_from"] = str(adopted.resolve())
    if info is not None:
        before = {key: info.get(key) for key in wanted}
        before["train"] = {k: info.get("train", {}).get(k) for k in ("train", "train_sha256", "train_limit")}
        if before != wanted:
            changed = sorted(k for k in wanted if before.get(k) != wanted[k])
            raise UserInputError(
                f"{target}: holds a {_LABEL[kind]} run with other settings ({', '.join(changed)}); resume it with the "
                "same options and --seed, or train into another folder"
            )
    else:
        ensure_writable_dir(target, f"{_LABEL[kind]} model folder")
        from chemassay.contract.result import current_versions
        from chemassay.suites.generation.baselines.neural import CharVocab

        info = {"format": FORMAT, **json.loads(json.dumps(wanted)), "vocab": CharVocab.from_smiles(smiles).as_json(),
                "finished": False, "epochs_done": 0, "train_seconds": 0.0, "versions": current_versions()}
        info["train"]["n_train"] = len(smiles)
        info["train"]["n_empty_skipped"] = origin["n_empty_skipped"]
        if adopted is not None:
            _adopt_autoencoder(adopted, target, info)
        _write_info(target, info)
    started = time.perf_counter()
    if kind == "hmm":
        finished = _train_hmm(target, info, smiles, run)
    elif kind == "latentgan":
        finished = _train_latentgan(target, info, smiles, run)
    else:
        finished = _train_neural(kind, target, info, smiles, run)
    info = read_info(target) or info
    info["finished"] = bool(finished)
    info["train_seconds"] = round(float(info.get("train_seconds", 0.0)) + time.perf_counter() - started, 3)
    _write_info(target, info)
    device = "cpu" if run.device in ("auto", "cpu") else run.device
    if run.device == "auto":
        import torch

        device = "cuda" if torch.cuda.is_available() and kind != "hmm" else "cpu"
    sampling = {**default_sampling(kind), "device": device}
    if not all(p.is_file() for p in _weights_files(kind, target)):
        # A piece that ended before the first sampler weights exist (LatentGAN's first stage).
        return LearnedGenerator(kind, target, info, None, None, sampling, run.show_progress), finished
    return load_learned(kind, target, sampling, run.show_progress), finished


def _settings(training: dict[str, Any], run: RunControls, n_train: int, prefix: str = ""):
    batch = training[f"{prefix}batch_size"]
    steps = training[f"{prefix}steps"] or max(n_train // min(batch, n_train), 1)
    return TrainSettings(seed=run.seed, max_epochs=training[f"{prefix}epochs"], steps_per_epoch=steps, batch_size=batch,
                         max_minutes=run.max_minutes, stop_after_epochs=run.stop_after_epochs, patience=None,
                         device=run.device, threads=run.threads, grad_clip=training.get("grad_clip"),
                         progress=run.show_progress, val_batches=None)


def _train_neural(kind: str, folder: Path, info: dict[str, Any], smiles: list[str], run: RunControls) -> bool:
    import torch

    from chemassay.suites.generation.baselines.neural import (
        CharVocab,
        SmilesDataset,
        held_out_split,
        pad_collate,
    )

    vocab = CharVocab(info["vocab"])
    training = info["training"]
    train, val = held_out_split(smiles, training["val"])
    torch.manual_seed(run.seed)
    module = _module_for(kind, info, vocab)
    dataset = SmilesDataset(train, vocab)
    outcome = fit(module, dataset, pad_collate(vocab.pad), folder, _settings(training, run, len(train)),
                  val_dataset=SmilesDataset(val, vocab) if val else None, lengths=dataset.lengths())
    info["epochs_done"] = outcome.epochs_done
    info["train"]["n_val"] = len(val)
    _write_info(folder, info)
    return outcome.finished


_AE_CONFIG_KEYS = ("embedding", "enc_hidden", "enc_layers", "latent", "dec_hidden", "dec_layers", "noise_std", "lr",
                   "lr_end", "schedule_epochs")


def _adoptable_autoencoder(source: Path) -> dict[str, Any]:
    info = _check_folder("latentgan", source, for_training=False)
    assert info is not None
    if not (source / "autoencoder" / "last.ckpt").is_file() or not info.get("autoencoder_finished"):
        raise UserInputError(f"{source}: its heteroencoder has not finished training; finish it first")
    return info


def _adopt_autoencoder(source: Path, target: Path, info: dict[str, Any]) -> None:
    """Start a LatentGAN run from another run's trained heteroencoder (the MOSES LatentGAN
    seeds share one pretrained heteroencoder): copy its checkpoint, vocabulary and, when they
    were made from the same molecules, its training-set codes."""
    source_info = _adoptable_autoencoder(source)
    info["vocab"] = source_info["vocab"]
    (target / "autoencoder").mkdir(parents=True, exist_ok=True)
    for name in ("last.ckpt", "train_log.jsonl", "train_settings.json"):
        if (source / "autoencoder" / name).is_file():
            shutil.copy2(source / "autoencoder" / name, target / "autoencoder" / name)
    info["autoencoder_finished"] = True
    info["autoencoder_epochs_done"] = source_info.get("autoencoder_epochs_done")
    same_codes = (source_info.get("latents", {}).get("gan_train") == info["training"]["gan_train"]
                  and source_info.get("train", {}).get("train_sha256") == info["train"]["train_sha256"]
                  and source_info.get("train", {}).get("train_limit") == info["train"]["train_limit"])
    if (source / "latents.npy").is_file() and same_codes:
        shutil.copy2(source / "latents.npy", target / "latents.npy")
        info["latents"] = source_info["latents"]


def _randomized(smiles: Sequence[str], seed: int) -> list[str]:
    """One randomized SMILES per molecule, seeded per molecule (RDKit ``MolToRandomSmilesVect``)."""
    out = []
    with rdkit_log_silenced():
        for index, text in enumerate(smiles):
            mol = Chem.MolFromSmiles(text)
            if mol is None:
                out.append(text)
                continue
            # randomSeed 0 means "not seeded" to RDKit, so seeds start at 1.
            out.append(Chem.MolToRandomSmilesVect(mol, 1, randomSeed=1 + (seed * 1_000_003 + index) % (2**31 - 2))[0])
    return out


class _PairDataset:
    """(randomized SMILES, canonical SMILES) pairs, randomized when read (deterministically)."""

    def __init__(self, smiles: Sequence[str], vocab, seed: int) -> None:
        self.smiles = list(smiles)
        self.vocab = vocab
        self.seed = seed

    def __len__(self) -> int:
        return len(self.smiles)

    def __getitem__(self, index: int):
        source = _randomized([self.smiles[index]], self.seed * 7919 + index)[0]
        return self.vocab.encode(source), self.vocab.encode(self.smiles[index])


def _pair_collate(pad: int):
    inner = pad_collate(pad)

    def collate(items):
        return inner([a for a, _ in items]), inner([b for _, b in items])

    return collate


def _encode_codes(autoencoder, vocab, smiles: Sequence[str], batch: int = 256, show_progress: bool | None = None):
    import torch

    collate = pad_collate(vocab.pad)
    autoencoder.eval()
    out = []
    with torch.no_grad(), progress_task("encoding the GAN training set", len(smiles),
                                        disable=None if show_progress is None else not show_progress) as advance:
        for start in range(0, len(smiles), batch):
            chunk = smiles[start:start + batch]
            tokens, lengths = collate([vocab.encode(s) for s in chunk])
            out.append(autoencoder.encode(tokens, lengths).numpy())
            advance(len(chunk))
    return np.concatenate(out).astype(np.float32)


def _train_latentgan(folder: Path, info: dict[str, Any], smiles: list[str], run: RunControls) -> bool:
    import torch

    from chemassay.models.training import fit, load_module_state
    from chemassay.suites.generation.baselines.neural import (
        CharVocab,
        held_out_split,
        tensor_fingerprint,
    )

    vocab = CharVocab(info["vocab"])
    training = info["training"]
    train, val = held_out_split(smiles, training["val"])
    torch.manual_seed(run.seed)
    autoencoder, gan = _latentgan_modules(info, vocab)
    if not info.get("autoencoder_finished"):
        _say("LatentGAN stage 1/2: the heteroencoder")
        outcome = fit(autoencoder, _PairDataset(train, vocab, run.seed), _pair_collate(vocab.pad),
                      folder / "autoencoder", _settings(training, run, len(train)),
                      val_dataset=_PairDataset(val, vocab, run.seed + 1) if val else None,
                      lengths=[len(s) + 2 for s in train])
        info["autoencoder_epochs_done"] = outcome.epochs_done
        info["autoencoder_finished"] = outcome.finished
        _write_info(folder, info)
        if not outcome.finished:
            return False
    load_module_state(autoencoder, folder / "autoencoder" / "last.ckpt")
    codes_path = folder / "latents.npy"
    gan_train = training["gan_train"]
    if not codes_path.is_file():
        subset = train[:gan_train] if gan_train else train
        codes = _encode_codes(autoencoder, vocab, subset, show_progress=run.show_progress)
        from chemassay.runtime.files import atomic_writer

        with atomic_writer(codes_path, "wb", encoding=None) as handle:
            np.save(handle, codes)
        info["latents"] = {"gan_train": gan_train, "n": int(len(codes)), "sha256": tensor_fingerprint(codes)}
        _write_info(folder, info)
    codes = np.load(codes_path)
    val_codes = _encode_codes(autoencoder, vocab, val, show_progress=False) if val else None
    _say("LatentGAN stage 2/2: the Wasserstein GAN on the codes")
    torch.manual_seed(run.seed)
    gan_module = _latentgan_modules(info, vocab)[1]
    dataset = [torch.from_numpy(row) for row in codes]
    val_dataset = [torch.from_numpy(row) for row in val_codes] if val_codes is not None else None
    outcome = fit(gan_module, dataset, torch.stack, folder / "gan", _settings(training, run, len(dataset), "gan_"),
                  val_dataset=val_dataset)
    info["epochs_done"] = outcome.epochs_done
    info["train"]["n_val"] = len(val)
    _write_info(folder, info)
    return outcome.finished


def _train_hmm(folder: Path, info: dict[str, Any], smiles: list[str], run: RunControls) -> bool:
    training = info["training"]
    _, finished = train_hmm(folder, smiles, info["vocab"], states=info["config"]["states"],
                            iterations=training["iterations"], tol=training["tol"], seed=run.seed,
                            max_minutes=run.max_minutes, stop_after_iterations=run.stop_after_epochs,
                            show_progress=run.show_progress, report=_say)
    info["epochs_done"] = len(_hmm_history(folder))
    _write_info(folder, info)
    return finished


def _hmm_history(folder: Path) -> list[float]:
    return list(HMMModel.load(folder / STATE_FILE).info.get("log_likelihood", []))


def train_spec(model: str | ModelSpec, train=None, *, limit: int | None = None, run: RunControls | None = None
               ) -> LearnedGenerator:
    """Train the learned model a spec names (``KIND:DIR[,size=..][,key=value...]``)."""
    spec = parse_spec(model)
    if not spec.arg:
        raise UserInputError(f"name the folder to train into: --model {spec.kind}:DIR[,size=cpu]")
    options = dict(spec.options)
    source = train if train is not None else options.pop("train", "moses")
    options.pop("train", None)
    if limit is None and "limit" in options:
        limit = option_int(spec, "limit", None, minimum=1)
    options.pop("limit", None)
    if limit is not None and limit < 1:
        raise UserInputError(f"--limit must be at least 1, got {limit}")
    generator, finished = train_learned(spec.kind, spec.arg, source, limit=limit, options=options, run=run)
    generator.finished = finished
    return generator
