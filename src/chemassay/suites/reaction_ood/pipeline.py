"""End-to-end runs of the baseline on splits: shared by the demo and the results benchmark.

:class:`TemplateBank` extracts each reaction's template once (keyed by the reaction as read,
``source_rxn_smiles``), so models for many splits of the same data share the work;
:func:`train_on_part` trains the kNN baseline on a training part; :func:`evaluate_part`
predicts a test part with a model and scores it into a :class:`~chemassay.report.Result`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from chemassay.report.result import DatasetRef, Result
from chemassay.suites.reaction_ood.atom_mapping import mapped_reactions_for
from chemassay.suites.reaction_ood.baseline import (
    BaselineConfig,
    TemplateFailure,
    TemplateKnnModel,
    extract_templates,
)
from chemassay.suites.reaction_ood.evaluate import Predictions, evaluate_predictions

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
    """Predict the reactants of a test part with ``model`` and score them (task ``evaluate``)."""
    started = time.perf_counter()
    ranked = model.predict(frame["reactants"].astype(str).tolist(), k, n_jobs=n_jobs)
    predictions = Predictions(ranked, None, "in-memory")
    evaluation = evaluate_predictions(frame.reset_index(drop=True), predictions, source=label, max_k=k)
    return Result(
        suite=SUITE, task="evaluate", metrics=evaluation.metrics, n=len(evaluation.per_item),
        skipped=[{"line": s["line"], "item": s["item"], "reason": s["reason"]} for s in evaluation.skipped],
        dataset=DatasetRef(name=dataset), inputs=[],
        config={"label": label, "k": k, "k_values": evaluation.k_values, "match": "exact",
                "model": model.name, "baseline": model.config.to_dict(),
                "training_report": model.training_report, **(extra_config or {})},
        elapsed_s=time.perf_counter() - started,
        breakdowns=evaluation.breakdowns,
    )


def headline(result: Result, keys: Sequence[str] = ("top1_accuracy", "top5_accuracy", "top1_accuracy_stereo_agnostic")) -> str:
    """``top1 41.2 | top5 60.3 | ...`` for a summary line."""
    parts = []
    for key in keys:
        value = result.metrics.get(key)
        if isinstance(value, float):
            parts.append(f"{key.replace('_accuracy', '')} {100 * value:.1f}")
    return " | ".join(parts)
