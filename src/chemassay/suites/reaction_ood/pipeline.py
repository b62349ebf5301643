"""End-to-end runs of the baseline on splits: shared by the demo and the results benchmark.

:class:`TemplateBank` extracts each reaction's template once (keyed by the reaction as read,
``source_rxn_smiles``), so models for many splits of the same data share the work;
:func:`train_on_part` trains the kNN baseline on a training part; :func:`evaluate_part`
predicts a test part with a model and scores it with :func:`chemassay.reaction_ood.evaluate`
(task ``evaluate``; the split and part go in its ``setting``); :func:`whole_documents` takes a
sample of whole patents (the demo's and the quick assay's data).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from chemassay.contract.result import Result
from chemassay.runtime.files import atomic_write_text
from chemassay.suites.reaction_ood.api import evaluate
from chemassay.suites.reaction_ood.atom_mapping import mapped_reactions_for
from chemassay.suites.reaction_ood.template_knn import (
    BaselineConfig,
    TemplateFailure,
    TemplateKnnModel,
    extract_templates,
)

SUITE = "reaction-ood"


@dataclass
class TemplateBank:
    """Atom-mapped reactions and their templates, keyed by the reaction as read."""

    maps: str = "schneider"
    radius: int = 1
    mapped: dict[str, str | None] = field(default_factory=dict)
    templates: dict[str, str | TemplateFailure] = field(default_factory=dict)

    def add(self, frame: pd.DataFrame, *, n_jobs: int = 1) -> None:
        """Map (look up) and extract templates for the rows of ``frame`` not seen yet."""
        keys = _keys(frame)
        mapped, _ = mapped_reactions_for(frame, self.maps)
        fresh = [(k, m) for k, m in zip(keys, mapped, strict=True) if k not in self.mapped]
        for key, value in fresh:
            self.mapped[key] = value
        todo = [(k, m) for k, m in fresh if m is not None]
        extracted = extract_templates([m for _, m in todo], radius=self.radius, n_jobs=n_jobs)
        for (key, _), template in zip(todo, extracted, strict=True):
            self.templates[key] = template

    def save(self, path: str | os.PathLike) -> None:
        """Write the bank as JSON (a failure as ``"!reason"``), atomically."""
        templates = {k: ("!" + v.reason if isinstance(v, TemplateFailure) else v) for k, v in self.templates.items()}
        atomic_write_text(Path(path), json.dumps({"maps": self.maps, "radius": self.radius, "mapped": self.mapped,
                                                  "templates": templates}))

    @classmethod
    def load(cls, path: str | os.PathLike) -> TemplateBank:
        """Read a bank written by :meth:`save`."""
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        templates = {k: (TemplateFailure(v[1:]) if v.startswith("!") else v) for k, v in data["templates"].items()}
        return cls(maps=data["maps"], radius=int(data["radius"]), mapped=dict(data["mapped"]), templates=templates)


def _keys(frame: pd.DataFrame) -> list[str]:
    column = "source_rxn_smiles" if "source_rxn_smiles" in frame.columns else "rxn_smiles"
    return frame[column].astype(str).tolist()


def train_on_part(
    frame: pd.DataFrame, bank: TemplateBank, *, config: BaselineConfig | None = None, n_jobs: int = 1,
) -> TemplateKnnModel:
    """Train the baseline on a training part, reusing the bank's templates."""
    bank.add(frame, n_jobs=n_jobs)
    keys = [k for k in _keys(frame) if bank.mapped.get(k)]
    model = TemplateKnnModel.train(
        [bank.mapped[k] for k in keys], config=config or BaselineConfig(), templates=[bank.templates[k] for k in keys],
    )
    model.training_report["n_without_maps"] = len(frame) - len(keys)
    return model


def evaluate_part(
    model: TemplateKnnModel,
    frame: pd.DataFrame,
    *,
    label: str,
    dataset: str = "schneider-50k",
    setting: dict[str, str] | None = None,
    k: int = 10,
    n_jobs: int = 1,
    extra_config: dict | None = None,
) -> Result:
    """Predict the reactants of a test part with ``model`` and score them (task ``evaluate``).

    ``model`` asks for ``k`` products per reaction (its ``n_jobs`` processes: ``n_jobs``);
    ``dataset`` names the data in the result and ``setting`` the split and part
    (:func:`~chemassay.suites.reaction_ood.api.split_setting`); ``extra_config`` adds how
    the data was made (split definition, sample) to the result's config.
    """
    model.n_jobs = n_jobs
    result = evaluate(model=model, reference=frame.reset_index(drop=True), k=k, label=label, n_jobs=1, dataset=dataset,
                      setting=setting)
    config = {**result.config, "model": model.name, "baseline": model.config.to_dict(),
              "training_report": model.training_report, **(extra_config or {})}
    return result.model_copy(update={"config": config})


def whole_documents(frame: pd.DataFrame, rows: int, *, seed: int = 0) -> pd.DataFrame:
    """Rows of whole documents, documents in seeded random order, until ``rows`` are reached."""
    documents = frame["document_id"].astype(str)
    order = pd.Series(documents.unique()).sample(frac=1.0, random_state=seed).tolist()
    sizes = documents.value_counts()
    chosen, total = [], 0
    for document in order:
        if total >= rows:
            break
        chosen.append(document)
        total += int(sizes[document])
    return frame[documents.isin(set(chosen))].reset_index(drop=True)


def headline(result: Result, keys: Sequence[str] = ("top1_accuracy", "top5_accuracy", "top1_accuracy_stereo_agnostic")) -> str:
    """``top1 41.2 | top5 60.3 | ...`` for a summary line."""
    parts = []
    for key in keys:
        value = result.metrics.get(key)
        if isinstance(value, float):
            parts.append(f"{key.replace('_accuracy', '')} {100 * value:.1f}")
    return " | ".join(parts)
