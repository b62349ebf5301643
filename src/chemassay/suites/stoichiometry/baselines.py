"""The suite's built-in models: ChemAlgebra's two reference baselines as bag-predictor kinds.

``--model algebraic:TRAIN_DIR`` and ``--model copy-coefficient:TRAIN_DIR`` memorise the
training pairs of a dataset folder written by ``chemassay stoichiometry build`` and predict a
product bag for every input bag (the algebra is in :mod:`.algebra`). Options:

* ``split=auto|train|train_cross`` — which training pairs to memorise. ``auto`` (default)
  takes ``train_cross`` when the input file's name contains ``cross`` (``src-test_cross.txt``)
  and the folder has it, else ``train``; inputs handed over in memory have no name, so give
  ``split=train_cross`` there.
* ``oracle=TGT_FILE`` — take each reaction's species from the line-aligned target file instead
  of the memory (never its coefficients): the algebra alone. ``TRAIN_DIR`` may then be left
  out (``algebraic:oracle=data/tgt-test_out.txt``).
* ``encoding=smiles|formula`` — the bag notation (default: ``--encoding``, else the manifest
  of the training folder, or of the oracle file's folder, else ``smiles``).

Without ``TRAIN_DIR`` (and without ``oracle=``) the training folder is the one the caller
passes as ``train_dir`` in the model context: ``chemassay assay`` runs the plain spec
``algebraic`` that way on every variant it builds.

This module is imported when the model registry loads its catalog, so it imports nothing
heavy (RDKit is imported when a model is created).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from chemassay.contract.errors import UserInputError
from chemassay.data.readers import iter_lines
from chemassay.models.registry import ModelKind
from chemassay.models.spec import check_options
from chemassay.runtime.files import sha256_file
from chemassay.suites.stoichiometry.algebra import (
    BASELINES,
    PredictionReport,
    load_memory,
    predict_lines,
)
from chemassay.suites.stoichiometry.metrics import BagError, BagReader
from chemassay.suites.stoichiometry.scoring import encoding_for

SPLITS = ("auto", "train", "train_cross")
BASELINE_OPTIONS = {
    "split": "training pairs to memorise: auto (train_cross for an input file named *cross*, else train), "
             "train or train_cross",
    "oracle": "target file (line-aligned with the inputs) whose species, never coefficients, replace the memory",
    "encoding": "bag notation: smiles or formula (default: the training folder's manifest, else smiles)",
}
_FACTORY = "chemassay.suites.stoichiometry.baselines:create_baseline"

MODEL_KINDS = [
    ModelKind(
        name="algebraic", protocols=("bag-predictor",), factory=_FACTORY,
        description=("ChemAlgebra baseline: memorised species and reagents, reaction vector from the integer null "
                     "space of the element matrix, run as far as the input allows (exact on T1)"),
        arg="TRAIN_DIR", options=BASELINE_OPTIONS, suite="stoichiometry",
        example="algebraic:chemalgebra/smiles_t2_x1",
    ),
    ModelKind(
        name="copy-coefficient", protocols=("bag-predictor",), factory=_FACTORY,
        description=("ChemAlgebra baseline, the T1 shortcut: memorised products and reagents, each with the input's "
                     "most common coefficient"),
        arg="TRAIN_DIR", options=BASELINE_OPTIONS, suite="stoichiometry",
        example="copy-coefficient:chemalgebra/smiles_t1_x1,split=train",
    ),
]


class MemorisingBaseline:
    """A bag predictor: ``copy-coefficient`` or ``algebraic`` over memorised training pairs
    (or oracle species); see the module docstring for the settings.

    After :meth:`predict_bags`, ``counts`` holds the run's counts (unknown reactions,
    undetermined reaction vectors, unreadable inputs), ``split_used`` the training split read,
    and ``failures`` the inputs that got no prediction (index → reason), as for every model.
    """

    line_aligned = True
    """Asked for every input line at its place (the oracle file is line-aligned with the inputs,
    and ``counts`` count input lines): the suite does not merge identical lines for it."""

    def __init__(self, baseline: str, train: str | Path | None = None, *, split: str = "auto",
                 oracle: str | Path | None = None, encoding: str | None = None,
                 source: str | Path | None = None) -> None:
        if baseline not in BASELINES:
            raise UserInputError(f"unknown baseline {baseline!r}; choose one of {', '.join(BASELINES)}")
        if split not in SPLITS:
            raise UserInputError(f"{baseline}: split must be one of {', '.join(SPLITS)}, got {split!r}")
        if train is None and oracle is None:
            raise UserInputError(
                f"{baseline} needs a training folder written by 'chemassay stoichiometry build' "
                f"({baseline}:TRAIN_DIR) or oracle target species ({baseline}:oracle=TGT_FILE)"
            )
        self.train = Path(train) if train is not None else None
        self.oracle = Path(oracle) if oracle is not None else None
        if self.oracle is not None and not self.oracle.is_file():
            raise UserInputError(f"{self.oracle}: no such oracle target file")
        if self.oracle is None and not self.train.is_dir():
            raise UserInputError(f"{self.train}: no such dataset folder (give a folder written by "
                                 "'chemassay stoichiometry build')")
        self.baseline = baseline
        self.name = baseline
        self.split = split
        self.source = Path(source) if source is not None else None
        anchor = self.train / "tgt-train.txt" if self.train is not None else self.oracle
        self.encoding = encoding_for(anchor, encoding)
        self.reader = BagReader(self.encoding)
        self.counts = PredictionReport()
        self.failures: dict[int, str] = {}
        self.split_used: str | None = None
        self.memorised: int | None = None
        self._memories: dict[str, Any] = {}

    def training_split(self) -> str:
        """The training split ``auto`` resolves to for the current input file (module doc)."""
        if self.split != "auto":
            return self.split
        cross = self.source is not None and "cross" in self.source.name
        return "train_cross" if cross and (self.train / "src-train_cross.txt").is_file() else "train"

    def _memory(self, split: str):
        if split not in self._memories:
            self._memories[split] = load_memory(self.train, split, self.reader)
        return self._memories[split]

    def predict_bags(self, sources: Sequence[str]) -> list[str]:
        """The product bag predicted for each input bag (``{n}X.{m}Y``; an empty string for an
        input that is not a readable bag, recorded in ``failures``)."""
        source_lines = list(sources)
        memory = oracle_lines = None
        if self.oracle is not None:
            oracle_lines = [line for _, line in iter_lines(self.oracle)]
            if len(oracle_lines) != len(source_lines):
                raise UserInputError(
                    f"{self.oracle} has {len(oracle_lines)} lines but {len(source_lines)} inputs were given: "
                    "the oracle target file must be line-aligned with the inputs"
                )
            self.split_used, self.memorised = None, None
        else:
            self.split_used = self.training_split()
            memory = self._memory(self.split_used)
            self.memorised = len(memory.entries)
        lines, self.counts = predict_lines(self.baseline, source_lines, self.reader, memory=memory,
                                           oracle_lines=oracle_lines)
        self.failures = {}
        for index, line in enumerate(lines):
            if not line:
                try:
                    self.reader.parse(source_lines[index], "src")
                except BagError as exc:
                    self.failures[index] = f"input is not a readable bag: {exc}"
        return lines

    def describe(self) -> dict[str, Any]:
        """The settings that determine the predictions."""
        return {"baseline": self.baseline, "train": str(self.train) if self.train else None, "split": self.split,
                "oracle": str(self.oracle) if self.oracle else None, "encoding": self.encoding}

    def checksum(self) -> str:
        """sha256 of the baseline's settings and of the files it reads (training pairs, oracle)."""
        files: dict[str, str] = {}
        if self.train is not None:
            for name in ("src-train.txt", "tgt-train.txt", "src-train_cross.txt", "tgt-train_cross.txt"):
                if (self.train / name).is_file():
                    files[name] = sha256_file(self.train / name)
        if self.oracle is not None:
            files["oracle"] = sha256_file(self.oracle)
        material = {"baseline": self.baseline, "split": self.split, "encoding": self.encoding, "files": files}
        return hashlib.sha256(json.dumps(material, sort_keys=True).encode("utf-8")).hexdigest()


def create_baseline(spec, protocol: str, context: dict[str, Any]) -> MemorisingBaseline:
    """Factory of the ``algebraic`` and ``copy-coefficient`` kinds (``factory(spec, protocol,
    context)``; the context may give ``encoding``, ``source`` (the input file's path) and
    ``train_dir`` (the training folder when the spec names none))."""
    check_options(spec, set(BASELINE_OPTIONS))
    # A spec without TRAIN_DIR memorises the folder the caller names: ``chemassay assay`` builds
    # each variant and passes its folder, so the baseline's spec stays ``algebraic``.
    train = spec.arg or (None if spec.options.get("oracle") else context.get("train_dir"))
    return MemorisingBaseline(
        spec.kind, train, split=spec.options.get("split", "auto"), oracle=spec.options.get("oracle"),
        encoding=spec.options.get("encoding") or context.get("encoding"), source=context.get("source"),
    )
