"""End-to-end runs of the baseline on splits: shared by the demo and the results benchmark.

:class:`TemplateBank` extracts each reaction's template once (keyed by the reaction as read,
``source_rxn_smiles``), so models for many splits of the same data share the work;
:func:`train_on_part` trains the kNN baseline on a training part; :func:`evaluate_part`
predicts a test part with a model and scores it with :func:`chemassay.reaction_ood.evaluate`
(task ``evaluate``; the split and part go in ``config``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from chemassay.report.result import DatasetRef, Result
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
    dataset: str,
    k: int = 10,
    n_jobs: int = 1,
    extra_config: dict | None = None,
) -> Result:
    """Predict the reactants of a test part with ``model`` and score them (task ``evaluate``).

    ``model`` asks for ``k`` products per reaction (its ``n_jobs`` processes: ``n_jobs``);
    ``dataset`` names the data in the result, ``extra_config`` adds the split and part.
    """
    from chemassay.suites.reaction_ood.api import evaluate

    model.n_jobs = n_jobs
    result = evaluate(model=model, truth=frame.reset_index(drop=True), k=k, label=label, n_jobs=1)
    result.dataset = DatasetRef(name=dataset)
    result.config.update({"model": model.name, "baseline": model.config.to_dict(),
                          "training_report": model.training_report, **(extra_config or {})})
    return result


def headline(result: Result, keys: Sequence[str] = ("top1_accuracy", "top5_accuracy", "top1_accuracy_stereo_agnostic")) -> str:
    """``top1 41.2 | top5 60.3 | ...`` for a summary line."""
    parts = []
    for key in keys:
        value = result.metrics.get(key)
        if isinstance(value, float):
            parts.append(f"{key.replace('_accuracy', '')} {100 * value:.1f}")
    return " | ".join(parts)
