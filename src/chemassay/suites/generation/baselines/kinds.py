"""The ``ngram`` and ``combinatorial`` model kinds: factories, training and checkpoints.

See :mod:`chemassay.suites.generation.baselines` for the spec grammar. A model file is
recognised by its content, not its name: an n-gram model is an ``.npz`` archive whose
metadata says ``chemassay.generation.ngram/1``, a combinatorial model gzip-compressed JSON
saying ``chemassay.generation.combinatorial/1``. Loading a file of the other kind, or one
that is damaged, is a one-line :class:`~chemassay.contract.errors.UserInputError`.
"""

from __future__ import annotations

import gzip
import json
import os
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from chemassay.contract.errors import UserInputError
from chemassay.models.spec import ModelSpec, check_options, option_float, option_int, parse_spec
from chemassay.runtime.cache import CacheEntry, cached_file
from chemassay.runtime.files import ensure_writable
from chemassay.runtime.progress import info
from chemassay.suites.generation.baselines.combinatorial import (
    DEFAULT_JOIN,
    JOIN_MODES,
    CombinatorialGenerator,
)
from chemassay.suites.generation.data import (
    moses_part_path,
    moses_part_sha256,
    parse_moses_name,
    smiles_set,
)

KINDS = ("ngram", "combinatorial")
FILE_SUFFIX = {"ngram": ".npz", "combinatorial": ".json.gz"}
FORMATS = {"chemassay.generation.ngram/1": "ngram", "chemassay.generation.combinatorial/1": "combinatorial"}
OPTIONS = {
    "ngram": {"train", "limit", "context_len", "max_len", "l_smooth"},
    "combinatorial": {"train", "limit", "join"},
}
CACHE_NAMESPACE = "generation/models"
DEFAULT_TRAIN = "moses"
_LABEL = {"ngram": "n-gram", "combinatorial": "combinatorial"}
_A_LABEL = {"ngram": "an n-gram", "combinatorial": "a combinatorial"}


def check_kind(kind: str) -> str:
    """``kind`` if it is a baseline trained here, else a clear error (the HMM is explained)."""
    key = kind.strip().lower()
    if key == "hmm":
        raise UserInputError(
            "the HMM baseline is not provided (no maintained HMM library reproduces MOSES' pomegranate "
            "model; see docs/generation.md); use ngram or combinatorial"
        )
    if key not in KINDS:
        raise UserInputError(f"unknown baseline {kind!r}; the baselines trained here are: {', '.join(KINDS)}")
    return key


# ---------------------------------------------------------------- checkpoints


def checkpoint_kind(path: str | os.PathLike) -> str | None:
    """Which baseline a model file holds (``ngram``/``combinatorial``), or ``None`` when it
    is neither (another file, or a damaged one)."""
    target = Path(path)
    try:
        with open(target, "rb") as handle:
            magic = handle.read(4)
        if magic.startswith(b"PK"):
            import numpy as np

            with np.load(target, allow_pickle=False) as data:
                meta = json.loads(str(data["meta"]))
            return FORMATS.get(meta.get("format"))
        if magic.startswith(b"\x1f\x8b"):
            payload = json.loads(gzip.decompress(target.read_bytes()))
            return FORMATS.get(payload.get("format")) if isinstance(payload, dict) else None
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, TypeError, AttributeError):
        return None
    return None


def load_checkpoint(kind: str, path: str | os.PathLike):
    """The trained model of ``kind`` saved at ``path``; a one-line error names a file of the
    other kind, a damaged file and a missing one, with the fix."""
    target = Path(path)
    if not target.is_file():
        raise UserInputError(
            f"{target}: no such {_LABEL[kind]} model file; train one with "
            f"'chemassay generation train --model {kind}:{target}', or add train=SET to the spec to train it on first use"
        )
    found = checkpoint_kind(target)
    if found is not None and found != kind:
        raise UserInputError(
            f"{target}: holds {_A_LABEL[found]} model, not {_A_LABEL[kind]} one; use --model {found}:{target}"
        )
    try:
        if kind == "ngram":
            from chemassay.suites.generation.baselines.ngram import CharNGram

            return CharNGram.load(target)
        from chemassay.suites.generation.baselines.combinatorial import CombinatorialGenerator

        return CombinatorialGenerator.load(target)
    except UserInputError as exc:
        raise UserInputError(" ".join(str(exc).split())) from None  # one line, whatever the cause said


# ---------------------------------------------------------------- training


def fit_baseline(kind: str, smiles: Sequence[str], *, context_len: int = 10, n_jobs: int = 1,
                 show_progress: bool | None = None):
    """Train a baseline of ``kind`` on ``smiles`` (``context_len``: n-gram only)."""
    if not smiles:
        raise UserInputError("the training set is empty")
    if kind == "ngram":
        from chemassay.suites.generation.baselines.ngram import CharNGram

        return CharNGram.fit(list(smiles), max_context_len=context_len, show_progress=show_progress)

    return CombinatorialGenerator.fit(list(smiles), n_jobs=n_jobs, show_progress=show_progress)


def _training_settings(kind: str, spec: ModelSpec) -> dict[str, Any]:
    settings: dict[str, Any] = {}
    if kind == "ngram":
        settings["context_len"] = option_int(spec, "context_len", 10, minimum=1)
    return settings


def _train_source(train: str | os.PathLike | Sequence[str], limit: int | None) -> tuple[dict[str, Any], Any]:
    """Key material of a training set (its source checksum) and a loader of its SMILES."""
    if isinstance(train, (list, tuple)):
        from chemassay.suites.generation.reference import _list_digest

        items = list(train)[:limit] if limit else list(train)
        return {"train": f"list of {len(items)} SMILES", "train_sha256": _list_digest(items), "train_limit": limit}, \
            lambda: items
    part = parse_moses_name(train)
    if part is not None:
        part = part or "train"
        moses_part_path(part)  # fetched and verified before its checksum is trusted
        label, digest = f"moses:{part}", moses_part_sha256(part)
    else:
        from chemassay.runtime.files import need_file, sha256_file

        target = need_file(train, "training SMILES")
        label, digest = str(target), sha256_file(target)
    return {"train": label, "train_sha256": digest, "train_limit": limit}, lambda: smiles_set(train, limit=limit).smiles


def train_to_file(kind: str, target: str | os.PathLike, train, *, limit: int | None = None, context_len: int = 10,
                  n_jobs: int = 1, show_progress: bool | None = None) -> Path:
    """Train a baseline on ``train`` (a set name, file or list) and save it at ``target``
    (checked to be writable before the training starts)."""
    ensure_writable(target, f"{_LABEL[kind]} model file")
    origin, load = _train_source(train, limit)
    fitted = fit_baseline(kind, load(), context_len=context_len, n_jobs=n_jobs, show_progress=show_progress)
    fitted.info.update(origin)
    fitted.save(target)
    return Path(target)


def cached_model_path(kind: str, train=DEFAULT_TRAIN, *, limit: int | None = None, context_len: int = 10,
                      n_jobs: int = 1, show_progress: bool | None = None, rebuild: bool = False) -> Path:
    """The model of ``kind`` trained on ``train`` kept in chemassay's checked cache, trained
    now when absent or damaged (or when ``rebuild``)."""
    origin, _ = _train_source(train, limit)
    key = {"what": f"{kind} baseline", "train_sha256": origin["train_sha256"], "train_limit": limit,
           **({"context_len": context_len} if kind == "ngram" else {}), "format": 1}
    if rebuild:
        CacheEntry(CACHE_NAMESPACE, key, FILE_SUFFIX[kind]).discard()

    def build(path: Path) -> None:
        info(f"training the {_LABEL[kind]} baseline on {origin['train']} (once; kept in the chemassay cache)")
        train_to_file(kind, path, train, limit=limit, context_len=context_len, n_jobs=n_jobs,
                      show_progress=show_progress)

    return cached_file(CACHE_NAMESPACE, key, build, suffix=FILE_SUFFIX[kind])


# ---------------------------------------------------------------- the generator


class BaselineGenerator:
    """A trained baseline as a generator: ``sample(n, seed)`` (the ``generator`` protocol).

    ``model`` is the trained :class:`~.ngram.CharNGram` or
    :class:`~.combinatorial.CombinatorialGenerator`, ``path`` its file, ``sampling`` the
    sampling settings (``max_len``/``l_smooth`` or ``join``). The checksum is the file's
    sha256; :meth:`describe` gives the settings that determine the samples.
    """

    def __init__(self, kind: str, model: Any, path: Path, sampling: dict[str, Any], *, n_jobs: int = 1,
                 show_progress: bool | None = None) -> None:
        self.kind = kind
        self.model = model
        self.path = Path(path)
        self.sampling = dict(sampling)
        self.n_jobs = n_jobs
        self.show_progress = show_progress
        self.name = f"{kind} ({self.path.name})"
        self._checksum: str | None = None

    @property
    def info(self) -> dict[str, Any]:
        """What the model was trained on and how (recorded in its file)."""
        return dict(self.model.info)

    def sample(self, n: int, seed: int = 0) -> list[str]:
        """``n`` strings (valid molecules or not) drawn with ``seed``; the same seed gives the
        same sample, draw for draw."""
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise UserInputError(f"cannot sample {n!r} molecules; n must be a whole number, 0 or more")
        if n == 0:
            return []
        if self.kind == "ngram":
            return self.model.sample(n, seed, max_len=self.sampling["max_len"], l_smooth=self.sampling["l_smooth"],
                                     show_progress=self.show_progress)
        return self.model.sample(n, seed, join=self.sampling["join"], n_jobs=self.n_jobs,
                                 show_progress=self.show_progress)

    def checksum(self) -> str:
        """sha256 of the model file."""
        if self._checksum is None:
            from chemassay.runtime.files import sha256_file

            self._checksum = sha256_file(self.path)
        return self._checksum

    def describe(self) -> dict[str, Any]:
        """The settings that determine the samples: the model file, its training, sampling."""
        info = self.model.info
        trained = {key: info.get(key) for key in ("train", "train_limit", "train_sha256", "n_train") if key in info}
        if self.kind == "ngram":
            trained["context_len"] = self.model.max_context_len
        return {"model_file": str(self.path), **trained, **self.sampling}


def _sampling(kind: str, spec: ModelSpec) -> dict[str, Any]:
    if kind == "ngram":
        from chemassay.suites.generation.baselines.ngram import DEFAULT_MAX_LEN, DEFAULT_SMOOTHING

        return {"max_len": option_int(spec, "max_len", DEFAULT_MAX_LEN, minimum=2),
                "l_smooth": option_float(spec, "l_smooth", DEFAULT_SMOOTHING)}

    join = spec.options.get("join", DEFAULT_JOIN)
    if join not in JOIN_MODES:
        raise UserInputError(f"--model {spec.text}: join must be one of {', '.join(JOIN_MODES)}, got {join!r}")
    return {"join": join}


def model_file(kind: str, spec: ModelSpec, context: dict[str, Any]) -> Path:
    """The model file a spec names: its ``MODEL_PATH`` (trained there first when missing and
    ``train=`` is given) or the cached model trained on ``train``."""
    train = spec.options.get("train")
    limit = option_int(spec, "limit", None, minimum=1)
    settings = _training_settings(kind, spec)
    n_jobs = int(context.get("n_jobs", 1))
    show_progress = context.get("show_progress")
    if spec.arg:
        target = Path(spec.arg).expanduser()
        if target.is_dir():
            from chemassay.suites.generation.baselines.learned import folder_kind

            learned = folder_kind(target)
            held = f" (it holds a {learned} model: use --model {learned}:{target})" if learned else ""
            raise UserInputError(f"{target}: is a directory; --model {kind}:PATH names a model file{held}")
        if target.exists() or train is None:
            return target
        info(f"no {_LABEL[kind]} model at {target}: training it on {train} now (once)")
        return train_to_file(kind, target, train, limit=limit, n_jobs=n_jobs, show_progress=show_progress, **settings)
    return cached_model_path(kind, train or DEFAULT_TRAIN, limit=limit, n_jobs=n_jobs, show_progress=show_progress,
                             **settings)


def _create(kind: str, spec: ModelSpec, context: dict[str, Any]) -> BaselineGenerator:
    check_options(spec, OPTIONS[kind])
    sampling = _sampling(kind, spec)
    path = model_file(kind, spec, context)
    model = load_checkpoint(kind, path)
    generator = BaselineGenerator(kind, model, path, sampling, n_jobs=int(context.get("n_jobs", 1)),
                                  show_progress=context.get("show_progress"))
    if not spec.arg:  # the cached model: named by what it was trained on, not by its cache file
        limit = model.info.get("train_limit")
        trained_on = f"{model.info.get('train', 'its training set')}" + (f", first {limit}" if limit else "")
        generator.name = f"{kind} (trained on {trained_on})"
    return generator


def create_ngram(spec: ModelSpec, protocol: str, context: dict[str, Any]) -> BaselineGenerator:
    """Factory of the ``ngram`` kind (see the package docs for the spec)."""
    return _create("ngram", spec, context)


def create_combinatorial(spec: ModelSpec, protocol: str, context: dict[str, Any]) -> BaselineGenerator:
    """Factory of the ``combinatorial`` kind (see the package docs for the spec)."""
    return _create("combinatorial", spec, context)


def train_spec(model: str | ModelSpec, train=None, *, limit: int | None = None, n_jobs: int = 1,
               show_progress: bool | None = None) -> BaselineGenerator:
    """Train the baseline a spec names and return it as a generator.

    ``ngram:PATH`` / ``combinatorial:PATH`` train and save to ``PATH`` (replacing it); a spec
    without a path retrains the cached model. The training set is ``train``, else the spec's
    ``train=`` option, else ``moses``; ``limit`` likewise.
    """
    spec = parse_spec(model)
    kind = check_kind(spec.kind)
    check_options(spec, OPTIONS[kind])
    source = train if train is not None else spec.options.get("train", DEFAULT_TRAIN)
    if limit is None:
        limit = option_int(spec, "limit", None, minimum=1)
    elif limit < 1:
        raise UserInputError(f"--limit must be at least 1, got {limit}")
    settings = _training_settings(kind, spec)
    if spec.arg:
        target = Path(spec.arg).expanduser()
        if target.is_dir():
            raise UserInputError(f"{target}: is a directory; --model {kind}:PATH names a model file to write")
        path = train_to_file(kind, target, source, limit=limit, n_jobs=n_jobs, show_progress=show_progress, **settings)
    else:
        path = cached_model_path(kind, source, limit=limit, n_jobs=n_jobs, show_progress=show_progress,
                                 rebuild=True, **settings)
    fitted = load_checkpoint(kind, path)
    # The spec of what was trained names its file (for a cached model too), so it loads as is.
    options = {k: v for k, v in spec.options.items() if k not in ("train", "limit", "context_len")}
    canonical = ModelSpec(kind, str(path), options)
    generator = BaselineGenerator(kind, fitted, path, _sampling(kind, canonical), n_jobs=n_jobs,
                                  show_progress=show_progress)
    generator.spec = canonical
    return generator
