"""The built-in baseline: a template-based k-nearest-neighbour reaction predictor (model kind
``template-knn``).

Training extracts a forward template (:mod:`chemassay.chem.templates`, radius 1) from every
atom-mapped training reaction and stores the Morgan fingerprint (radius 2, 2048 bits) of its
reactant side (all reactant and reagent molecules, as the queries have them). To predict the
products of a query, the training reactions are ranked by Tanimoto similarity of their
reactant fingerprints to the query's; the templates of the ``n_neighbors`` most similar ones
are applied to the query, and each outcome is scored by the highest similarity among the
neighbours whose template gives it (ties: the sum of those similarities, then first seen).
The top ``k`` outcomes, as canonical product SMILES, are the prediction.

This is the nearest-neighbour template idea of RetroSim (Coley et al., ACS Cent. Sci. 2017)
run in the forward direction; it can only predict reactions whose centre it has seen, which
is exactly what the out-of-distribution splits probe.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from chemassay.chem.fingerprints import morgan_fingerprints
from chemassay.chem.molecules import InvalidSmiles, rdkit_log_silenced
from chemassay.chem.reactions import parse_reaction
from chemassay.chem.similarity import PreparedFingerprints, intersection_counts
from chemassay.chem.templates import (
    TemplateError,
    apply_template,
    extract_forward_template,
    reactants_mol,
)
from chemassay.contract.errors import UserInputError
from chemassay.models.spec import ModelSpec, check_options, option_int
from chemassay.runtime.files import atomic_writer
from chemassay.runtime.parallel import Failure, effective_jobs, parallel_map
from chemassay.runtime.progress import progress_task

FORMAT_VERSION = 1


@dataclass
class BaselineConfig:
    """Settings of the template kNN baseline (defaults used for the docs' results table)."""

    template_radius: int = 1
    fp_radius: int = 2
    fp_bits: int = 2048
    n_neighbors: int = 50

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def _unmapped_reactant_side(mapped_reaction: str) -> str:
    reaction = parse_reaction(mapped_reaction)
    return ".".join(reaction.reactants + reaction.reagents)


@dataclass(frozen=True)
class TemplateFailure:
    """Why no template came out of one training reaction."""

    reason: str


def _extract_one(args: tuple[str, int]) -> str:
    mapped, radius = args
    return extract_forward_template(mapped, radius=radius).key


def extract_templates(
    mapped_reactions: Sequence[str], *, radius: int = 1, n_jobs: int = 1
) -> list[str | TemplateFailure]:
    """Template key of each atom-mapped reaction, or a :class:`TemplateFailure` with the reason."""
    keys = parallel_map(
        _extract_one, [(m, radius) for m in mapped_reactions], n_jobs=n_jobs, description="extracting templates",
    )
    out: list[str | TemplateFailure] = []
    for key in keys:
        if isinstance(key, Failure):
            reason = key.message if key.error_type == TemplateError.__name__ else f"{key.error_type}: {key.message}"
            out.append(TemplateFailure(reason))
        else:
            out.append(key)
    return out


def _query_fingerprints(reactants: Sequence[str], config: BaselineConfig) -> tuple[np.ndarray, list[int]]:
    """Packed fingerprints of the queries; indices of queries RDKit cannot read."""
    words = config.fp_bits // 64
    packed = np.zeros((len(reactants), words), dtype=np.uint64)
    bad = []
    with rdkit_log_silenced():
        for row, text in enumerate(reactants):
            try:
                mol = reactants_mol(text)
            except (InvalidSmiles, TypeError):
                bad.append(row)
                continue
            packed[row] = morgan_fingerprints([mol], radius=config.fp_radius, n_bits=config.fp_bits)[0]
    return packed, bad


@dataclass
class TemplateKnnModel:
    """A trained baseline: distinct templates, each training reaction's template, fingerprints.

    A reaction predictor (``predict(reactants, k)``); the model kind ``template-knn:MODEL.npz``
    loads one. ``n_jobs`` is the number of worker processes :meth:`predict` uses by default,
    ``path`` the file it was loaded from (``None`` for a model trained in memory).
    """

    templates: list[str]
    train_template: np.ndarray
    fingerprints: np.ndarray
    config: BaselineConfig = field(default_factory=BaselineConfig)
    training_report: dict = field(default_factory=dict)
    name: str = "template-knn"
    n_jobs: int = 1
    path: Path | None = None
    spec: ModelSpec | None = None
    """How results name it: ``template-knn:PATH`` (``template-knn:in-memory`` before it is saved);
    :func:`chemassay.models.load_model` sets the spec it was loaded with."""

    def __post_init__(self) -> None:
        if self.spec is None:
            self.spec = ModelSpec("template-knn", str(self.path) if self.path else "in-memory")

    # -- identity (the model field of results) -------------------------------------------
    def describe(self) -> dict:
        """Settings that determine the predictions: the model file, the kNN settings, its size."""
        return {"file": str(self.path) if self.path else None, **self.config.to_dict(),
                "n_templates": len(self.templates), "n_training_reactions": int(len(self.train_template))}

    def checksum(self) -> str:
        """sha256 of the model's content (templates, fingerprints, settings): the same model
        gets the same id whether trained in memory or loaded from any copy of its file."""
        digest = hashlib.sha256()
        digest.update(json.dumps({"config": self.config.to_dict(), "format": FORMAT_VERSION}, sort_keys=True).encode())
        digest.update("\n".join(self.templates).encode("utf-8"))
        digest.update(np.ascontiguousarray(self.train_template, dtype=np.int32).tobytes())
        digest.update(np.ascontiguousarray(self.fingerprints, dtype=np.uint64).tobytes())
        return digest.hexdigest()

    # -- training ------------------------------------------------------------------------
    @classmethod
    def train(
        cls,
        mapped_reactions: Sequence[str],
        *,
        config: BaselineConfig | None = None,
        n_jobs: int = 1,
        templates: Sequence[str | TemplateFailure] | None = None,
    ) -> TemplateKnnModel:
        """Train on atom-mapped reaction SMILES; reactions without a template are counted.

        ``templates`` may hold the result of :func:`extract_templates` for the same
        reactions (to share extraction between several training sets). The report in
        :attr:`training_report` gives how many reactions gave a template, the number of
        distinct templates and the reasons for failures.
        """
        config = config or BaselineConfig()
        if templates is None:
            templates = extract_templates(mapped_reactions, radius=config.template_radius, n_jobs=n_jobs)
        elif len(templates) != len(mapped_reactions):
            raise ValueError("templates and mapped_reactions differ in length")
        index: dict[str, int] = {}
        train_template: list[int] = []
        reactant_sides: list[str] = []
        reasons: Counter[str] = Counter()
        for mapped, key in zip(mapped_reactions, templates, strict=True):
            if isinstance(key, TemplateFailure):
                reasons[_reason_class(key.reason)] += 1
                continue
            train_template.append(index.setdefault(key, len(index)))
            reactant_sides.append(_unmapped_reactant_side(mapped))
        if not train_template:
            raise UserInputError("no training reaction gave a template: are the reactions atom-mapped?")
        fingerprints, bad = _query_fingerprints(reactant_sides, config)
        report = {
            "n_reactions": len(mapped_reactions),
            "n_with_template": len(train_template),
            "n_templates": len(index),
            "failures": dict(reasons.most_common()),
            "n_unreadable_reactants": len(bad),
        }
        return cls(list(index), np.asarray(train_template, dtype=np.int32), fingerprints, config, report)

    # -- prediction ----------------------------------------------------------------------
    def predict(
        self, reactants: Sequence[str], k: int = 10, *, n_jobs: int | None = None, block: int = 256,
    ) -> list[list[str]]:
        """Top-``k`` canonical product SMILES for each query (reactants, reagents merged).

        ``n_jobs`` worker processes (default: the model's :attr:`n_jobs`) share the queries;
        the predictions do not depend on it.
        """
        jobs = effective_jobs(self.n_jobs if n_jobs is None else n_jobs)
        if jobs > 1 and len(reactants) > block:
            # a few large chunks: each task ships the model to its worker
            size = max(block, -(-len(reactants) // (4 * jobs)))
            chunks = [list(reactants[i:i + size]) for i in range(0, len(reactants), size)]
            parts = parallel_map(_PredictChunk(self, k, block), chunks, n_jobs=jobs, chunk_size=1,
                                 description="predicting")
            out: list[list[str]] = []
            for part in parts:
                if isinstance(part, Failure):
                    raise RuntimeError(f"prediction failed: {part}")
                out.extend(part)
            return out
        with progress_task("predicting", len(reactants)) as advance:
            return self._predict_serial(list(reactants), k, block, advance=advance)

    def _predict_serial(
        self, reactants: list[str], k: int, block: int, backend: str = "auto", advance=None,
    ) -> list[list[str]]:
        prepared = PreparedFingerprints(self.fingerprints, backend)
        out: list[list[str]] = []
        for start in range(0, len(reactants), block):
            chunk = reactants[start:start + block]
            query_fps, bad = _query_fingerprints(chunk, self.config)
            queries = PreparedFingerprints(query_fps, prepared.backend)
            common = intersection_counts(queries, prepared)
            union = queries.counts[:, None] + prepared.counts[None, :] - common
            with np.errstate(invalid="ignore", divide="ignore"):
                similarity = np.where(union > 0, common / union.astype(np.float64), 0.0)
            bad_rows = set(bad)
            for row, text in enumerate(chunk):
                if row in bad_rows:
                    out.append([])
                    continue
                out.append(self._rank_outcomes(text, similarity[row], k))
            if advance is not None:
                advance(len(chunk))
        return out

    def _rank_outcomes(self, reactants: str, similarity: np.ndarray, k: int) -> list[str]:
        n = min(self.config.n_neighbors, similarity.size)
        nearest = np.argpartition(-similarity, n - 1)[:n] if n < similarity.size else np.arange(similarity.size)
        nearest = nearest[np.lexsort((nearest, -similarity[nearest]))]
        mol = reactants_mol(reactants)
        outcomes_of: dict[int, list[str]] = {}
        best: dict[str, float] = {}
        total: dict[str, float] = {}
        first: dict[str, int] = {}
        for neighbour in nearest:
            template = int(self.train_template[neighbour])
            if template not in outcomes_of:
                outcomes_of[template] = apply_template(self.templates[template], mol)
            score = float(similarity[neighbour])
            for outcome in outcomes_of[template]:
                if outcome not in first:
                    first[outcome] = len(first)
                    best[outcome] = score
                total[outcome] = total.get(outcome, 0.0) + score
        ranked = sorted(first, key=lambda o: (-best[o], -total[o], first[o]))
        return ranked[:k]

    # -- persistence ---------------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> Path:
        """Write the model to one ``.npz`` file (atomic; no pickled objects)."""
        meta = {
            "format": "chemassay-reaction-ood-template-knn", "version": FORMAT_VERSION,
            "config": self.config.to_dict(), "training_report": self.training_report, "name": self.name,
        }
        buffer = io.BytesIO()
        np.savez_compressed(
            buffer,
            fingerprints=self.fingerprints,
            train_template=self.train_template,
            templates=np.frombuffer("\n".join(self.templates).encode("utf-8"), dtype=np.uint8),
            meta=np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8),
        )
        target = Path(path)
        with atomic_writer(target, "wb", encoding=None) as handle:
            handle.write(buffer.getvalue())
        return target

    @classmethod
    def load(cls, path: str | os.PathLike) -> TemplateKnnModel:
        """Read a model written by :meth:`save`; a clear error if the file is not one."""
        target = Path(path)
        if not target.is_file():
            raise UserInputError(f"{target}: no such baseline model file")
        try:
            with np.load(target, allow_pickle=False) as data:
                meta = json.loads(bytes(data["meta"]).decode("utf-8"))
                templates = bytes(data["templates"]).decode("utf-8").split("\n")
                model = cls(
                    templates, data["train_template"].astype(np.int32), data["fingerprints"].astype(np.uint64),
                    BaselineConfig(**meta["config"]), meta.get("training_report", {}), meta.get("name", "template-knn"),
                    path=target,
                )
        except (OSError, ValueError, KeyError, TypeError, EOFError) as exc:
            raise UserInputError(f"{target}: not a chemassay baseline model ({exc})") from None
        if meta.get("format") != "chemassay-reaction-ood-template-knn":
            raise UserInputError(f"{target}: not a chemassay baseline model")
        return model


class _PredictChunk:
    """Picklable callable: predictions for one chunk of queries in a worker process."""

    def __init__(self, model: TemplateKnnModel, k: int, block: int) -> None:
        self.model = model
        self.k = k
        self.block = block

    def __call__(self, chunk: list[str]) -> list[list[str]]:
        # torch's OpenMP pool does not survive fork (a child using it after the parent did
        # hangs), so forked workers compute similarities with numpy's BLAS instead
        return self.model._predict_serial(chunk, self.k, self.block, backend="numpy-float32")


def create_template_knn(spec, protocol: str, context: dict) -> TemplateKnnModel:
    """Factory of the ``template-knn`` model kind: ``template-knn:MODEL.npz[,n_jobs=N]``.

    Loads a model written by ``chemassay reaction-ood train`` (:meth:`TemplateKnnModel.save`);
    ``n_jobs`` (option, else the calling command's ``--n-jobs``) sets its worker processes.
    ``template-knn:per-split`` names the baseline ``chemassay assay`` trains for each split
    itself; it is not a file to load.
    """
    check_options(spec, {"n_jobs"})
    if spec.arg == "per-split" and not Path(spec.arg).exists():
        raise UserInputError("template-knn:per-split is the baseline 'chemassay assay' trains on each split's "
                             "training part; elsewhere give a model file trained with 'chemassay reaction-ood train'")
    model = TemplateKnnModel.load(Path(spec.arg).expanduser())
    model.n_jobs = option_int(spec, "n_jobs", int(context.get("n_jobs", 1)))
    return model


def _reason_class(reason: str) -> str:
    """Group failure messages (drop the varying numbers) for the training report."""
    return re.sub(r"\d+", "N", reason.split(" in '")[0])[:80]
