"""The non-neural MOSES baselines: character n-gram LM and combinatorial BRICS generator.

Each baseline trains on a SMILES list, saves to / loads from one model file, and samples
``n`` strings with a seed (the ``MoleculeGenerator`` protocol of ``chemassay.models``).
Trained models are kept under ``$CHEMASSAY_HOME/models/generation/`` unless a path is given,
so sampling does not retrain. The MOSES HMM baseline is not provided: see
``docs/generation.md`` ("Why no HMM").
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from chemassay.data import chemassay_home
from chemassay.errors import UserInputError
from chemassay.suites.generation.baselines.combinatorial import CombinatorialGenerator
from chemassay.suites.generation.baselines.ngram import CharNGram

BASELINES: dict[str, type] = {"ngram": CharNGram, "combinatorial": CombinatorialGenerator}
MODEL_SUFFIX = {"ngram": ".npz", "combinatorial": ".json.gz"}


def check_baseline(name: str) -> str:
    """The baseline's canonical name, or a clear error listing the known ones."""
    key = name.strip().lower().replace("_", "-")
    aliases = {"n-gram": "ngram", "char-ngram": "ngram", "brics": "combinatorial"}
    key = aliases.get(key, key)
    if key not in BASELINES:
        if key == "hmm":
            raise UserInputError(
                "the HMM baseline is not provided (no maintained HMM library reproduces MOSES' "
                "pomegranate model; see docs/generation.md); use ngram or combinatorial"
            )
        raise UserInputError(f"unknown baseline {name!r}; choose from {', '.join(BASELINES)}")
    return key


def default_model_path(name: str, train_label: str, **options: object) -> Path:
    """Where ``train``/``sample`` keep a model trained on ``train_label`` with ``options``."""
    parts = [check_baseline(name), re.sub(r"[^A-Za-z0-9._-]+", "_", train_label)]
    parts += [f"{key}{value}" for key, value in sorted(options.items()) if value is not None]
    return chemassay_home() / "models" / "generation" / ("-".join(parts) + MODEL_SUFFIX[check_baseline(name)])


def load_baseline(name: str, path: str | os.PathLike):
    """Load a saved model of baseline ``name``."""
    return BASELINES[check_baseline(name)].load(path)


__all__ = [
    "BASELINES",
    "CharNGram",
    "CombinatorialGenerator",
    "check_baseline",
    "default_model_path",
    "load_baseline",
]
