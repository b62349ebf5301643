"""Downstream robustness: does a property model give the same answers on rewritten SMILES?

A property dataset is a MoleculeNet-style CSV: a SMILES column and one or more target
columns (regression values, binary labels, or class names), optionally a ``split`` column
(``train``/``test``). The model is evaluated on the original test set and on every
augmented version of it; the metric per augmentation and its drop against the original are
reported:

- regression: ``rmse`` (mean over targets), drop = ``rmse(aug) - rmse(original)``;
- classification: ``accuracy`` and ``roc_auc`` (mean over targets; one-vs-rest macro
  ROC-AUC for more than two classes), drop = ``metric(original) - metric(aug)``.

Models are property predictors of the one registry: the built-in random forests
(``rf-fingerprint`` on Morgan count fingerprints — invariant, so no drop — and
``rf-char-ngram`` on hashed character n-grams — which drops; :class:`ForestPropertyModel`),
``python:MODULE:CALLABLE`` (a function ``SMILES list -> predictions`` or an object with
``predict_properties``) and ``predictions:FILE.csv`` (a ``SMILES`` column and a
``prediction`` column, or ``prediction_*`` columns: one per target, or one per class of a
single classification target) covering the test SMILES of every augmentation
(``chemassay robustness downstream-sets`` writes them). :func:`target_outputs` says which
output shapes are accepted.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import spearmanr
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.metrics import roc_auc_score

from chemassay.contract import Run
from chemassay.contract.errors import UserInputError
from chemassay.models import run
from chemassay.runtime.files import sha256_text
from chemassay.suites.robustness.amore import levenshtein_ratio, normalized_similarity
from chemassay.suites.robustness.augment import augment_many
from chemassay.suites.robustness.data import read_table
from chemassay.suites.robustness.encoders import CharNgramEncoder, FingerprintEncoder
from chemassay.suites.robustness.protocol import PROPERTY_PREDICTOR

FEATURES = ("fingerprint", "char-ngram")


@dataclass
class PropertyData:
    """A property dataset split into train and test, with its task type and class labels."""

    train_smiles: list[str]
    train_targets: np.ndarray
    test_smiles: list[str]
    test_targets: np.ndarray
    test_lines: list[int]
    target_names: list[str]
    task: str
    classes: list[list[str]] = field(default_factory=list)
    malformed: list[tuple[int, str]] = field(default_factory=list)
    split_source: str = "column"


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def read_property_csv(
    path: str | Path, *, targets: Sequence[str] | None = None, smiles_column: str | None = None,
    task: str = "auto", test_fraction: float = 0.2, seed: int = 0, split_column: str = "split",
) -> PropertyData:
    """Read a property CSV into train/test arrays.

    ``targets`` default to every column except SMILES, ids, names and the split column
    whose values are all numeric. ``task`` ``auto`` picks classification when every
    target is a 0/1 label or a non-numeric class name, else regression. Without a split
    column a random ``test_fraction`` is held out with ``seed``. A row with an unusable
    SMILES field or target value is reported in ``malformed`` (line, reason) and left out.
    """
    target = Path(path)
    header, rows = read_table(target)
    lowered = [h.lower() for h in header]
    if smiles_column is None:
        if "smiles" not in lowered:
            raise UserInputError(f"{target}: no SMILES column; name it 'SMILES' or pass --smiles-column")
        smiles_at = lowered.index("smiles")
    else:
        if smiles_column not in header:
            raise UserInputError(f"{target}: no column {smiles_column!r}")
        smiles_at = header.index(smiles_column)
    split_at = header.index(split_column) if split_column in header else None
    if targets:
        missing = [t for t in targets if t not in header]
        if missing:
            raise UserInputError(f"{target}: no target column(s) {', '.join(missing)} (columns: {', '.join(header)})")
        target_at = [header.index(t) for t in targets]
    else:
        skip = {smiles_at, split_at} | {i for i, h in enumerate(lowered) if h in {"id", "cid", "name", "iupac", "mol_id"}}
        target_at = [
            i for i in range(len(header)) if i not in skip
            and all(_is_number(f[i]) for _, f in rows if i < len(f) and f[i].strip())
        ]
        if not target_at:
            raise UserInputError(f"{target}: no numeric target column found; pass --target NAME")
    names = [header[i] for i in target_at]
    malformed: list[tuple[int, str]] = []
    kept: list[tuple[int, str, list[str], str]] = []
    for line, fields in rows:
        if smiles_at >= len(fields) or not fields[smiles_at].strip():
            malformed.append((line, "empty SMILES"))
            continue
        values = [fields[i].strip() if i < len(fields) else "" for i in target_at]
        if any(v == "" for v in values):
            malformed.append((line, "missing target value"))
            continue
        split = fields[split_at].strip().lower() if split_at is not None and split_at < len(fields) else ""
        kept.append((line, fields[smiles_at].strip(), values, split))
    if not kept:
        raise UserInputError(f"{target}: no usable rows")
    numeric = [all(_is_number(row[2][j]) for row in kept) for j in range(len(names))]
    if task == "auto":
        binary = [numeric[j] and {float(row[2][j]) for row in kept} <= {0.0, 1.0} for j in range(len(names))]
        task = "classification" if all(b or not n for b, n in zip(binary, numeric, strict=True)) else "regression"
    if task not in ("regression", "classification"):
        raise UserInputError(f"--task must be regression, classification or auto, got {task!r}")
    classes: list[list[str]] = []
    if task == "regression":
        bad = [names[j] for j in range(len(names)) if not numeric[j]]
        if bad:
            raise UserInputError(f"{target}: regression targets must be numbers; {', '.join(bad)} are not")
        matrix = np.asarray([[float(v) for v in row[2]] for row in kept], dtype=np.float64)
    else:
        columns = []
        for j in range(len(names)):
            labels = sorted({row[2][j] for row in kept}, key=lambda v: (float(v) if numeric[j] else 0.0, v))
            classes.append(labels)
            lookup = {label: k for k, label in enumerate(labels)}
            columns.append([lookup[row[2][j]] for row in kept])
        matrix = np.asarray(columns, dtype=np.int64).T
    if split_at is not None:
        is_test = np.asarray([row[3] == "test" for row in kept])
        split_source = f"column {split_column!r}"
        if not is_test.any() or is_test.all():
            raise UserInputError(f"{target}: the {split_column!r} column must mark both train and test rows")
    else:
        if not 0 < test_fraction < 1:
            raise UserInputError("--test-fraction must be between 0 and 1")
        rng = np.random.default_rng(seed)
        order = rng.permutation(len(kept))
        is_test = np.zeros(len(kept), dtype=bool)
        is_test[order[: max(1, int(round(test_fraction * len(kept))))]] = True
        split_source = f"random {test_fraction:.2f} test split, seed {seed}"
    train = np.flatnonzero(~is_test)
    test = np.flatnonzero(is_test)
    return PropertyData(
        [kept[i][1] for i in train], matrix[train], [kept[i][1] for i in test], matrix[test],
        [kept[i][0] for i in test], names, task, classes, malformed, split_source,
    )


# -- models ----------------------------------------------------------------------------
def _features(smiles: Sequence[str], kind: str):
    encoder = FingerprintEncoder() if kind == "fingerprint" else CharNgramEncoder()
    matrix = encoder.encode(list(smiles))
    return matrix, dict(encoder.failures)


class ForestPropertyModel:
    """A scikit-learn random forest on fingerprints or character n-grams (multi-output):
    the ``rf-fingerprint`` / ``rf-char-ngram`` property-predictor kinds.

    :meth:`predict_properties` returns ``(n,)`` values for one regression target,
    ``(n, targets)`` for several, ``(n, classes)`` probabilities for one classification
    target and a list of such arrays for several; SMILES the fingerprint cannot read are
    listed in ``failures`` (index → reason).
    """

    def __init__(self, features: str, task: str, seed: int = 0, n_estimators: int = 200, n_jobs: int = 1) -> None:
        if features not in FEATURES:
            raise UserInputError(f"unknown forest features {features!r}; choose one of {', '.join(FEATURES)}")
        if task not in ("regression", "classification"):
            raise UserInputError(f"task must be regression or classification, got {task!r}")

        model_class = RandomForestRegressor if task == "regression" else RandomForestClassifier
        self.features = features
        self.task = task
        self.seed = seed
        self.n_estimators = n_estimators
        self.model = model_class(n_estimators=n_estimators, random_state=seed, n_jobs=n_jobs)
        self.name = f"rf-{features}"
        self.failures: dict[int, str] = {}
        self.trained_on = ""
        self.train_sha256 = ""

    def describe(self) -> dict:
        """Settings and training data that determine the predictions."""
        return {"features": self.features, "task": self.task, "n_estimators": self.n_estimators, "seed": self.seed,
                "trained_on": self.trained_on, "train_sha256": self.train_sha256}

    def fit(self, smiles: Sequence[str], targets: np.ndarray) -> ForestPropertyModel:
        """Fit on ``smiles`` and ``targets`` ``(n, targets)`` (rows the features cannot read are left out)."""
        targets = np.asarray(targets)
        self.train_sha256 = sha256_text(json.dumps([list(smiles), targets.tolist()]))
        features, failures = _features(smiles, self.features)
        keep = np.asarray([i not in failures for i in range(len(smiles))])
        y = targets[keep]
        self.model.fit(features[np.flatnonzero(keep)], y[:, 0] if y.shape[1] == 1 else y)
        # Predict with one thread: scikit-learn's threads add the trees' outputs in whatever order
        # they finish, so identical features would get predictions differing in the last bits.
        self.model.set_params(n_jobs=1)
        return self

    def predict_targets(self, smiles: Sequence[str]) -> list[np.ndarray]:
        """Per target: values ``(n,)`` (regression) or class probabilities ``(n, classes)``."""
        features, self.failures = _features(smiles, self.features)
        if self.task == "regression":
            values = np.asarray(self.model.predict(features), dtype=np.float64)
            values = values[:, None] if values.ndim == 1 else values
            return [values[:, j] for j in range(values.shape[1])]
        probabilities = self.model.predict_proba(features)
        if not isinstance(probabilities, list):
            probabilities = [probabilities]
        return [np.asarray(p, dtype=np.float64) for p in probabilities]

    def predict_properties(self, smiles: Sequence[str]) -> np.ndarray | list[np.ndarray]:
        """The property-predictor protocol (shapes in the class docstring)."""
        outputs = self.predict_targets(smiles)
        if self.task == "classification":
            return outputs[0] if len(outputs) == 1 else outputs
        return outputs[0] if len(outputs) == 1 else np.stack(outputs, axis=1)


def _returned(outputs: Sequence[Any]) -> np.ndarray | list[np.ndarray]:
    """A run's per-SMILES outputs put back as the predictor returned them: an array of values
    (``(n,)`` or ``(n, k)``), or one ``(n, classes)`` array per target; a row the model gave
    nothing for is NaN."""
    if not any(isinstance(output, list) for output in outputs):
        return PROPERTY_PREDICTOR.join(list(outputs), {})
    present = next(output for output in outputs if output is not None)
    return [np.stack([np.full(np.shape(values), np.nan) if output is None else np.asarray(output[j], dtype=np.float64)
                      for output in outputs]) for j, values in enumerate(present)]


def target_outputs(model, smiles: Sequence[str], data: PropertyData, *,
                   context: dict[str, Any] | None = None) -> tuple[list[np.ndarray], dict[int, str], Run]:
    """Run any property predictor (a spec, loaded with ``context``, or an object) on ``smiles``
    through :func:`chemassay.models.run` and return its outputs per target, the rows it could
    not predict (its failures, and rows with NaN outputs) and the run.

    Accepted outputs: ``(n,)`` or ``(n, targets)`` values (regression); for classification
    ``(n,)`` positive-class probabilities of one binary target, ``(n, classes)``
    probabilities of one target, ``(n, targets)`` positive-class probabilities of several
    binary targets, or a list of ``(n, classes)`` arrays, one per target.
    """
    done = run(model, PROPERTY_PREDICTOR, list(smiles), context=context)
    name = getattr(done.model_object, "name", type(done.model_object).__name__)
    n, n_targets = len(smiles), len(data.target_names)
    output = _returned(done.outputs)
    failures = dict(done.failures)

    def wrong(shape) -> UserInputError:
        return UserInputError(
            f"model {name} returned predictions of shape {shape} for {n} SMILES and {n_targets} {data.task} "
            f"target(s) ({', '.join(data.target_names)})"
        )

    if isinstance(output, (list, tuple)) and output and all(np.ndim(o) == 2 for o in output) and data.task == "classification":
        outputs = [np.asarray(o, dtype=np.float64) for o in output]
        if len(outputs) != n_targets or any(o.shape[0] != n for o in outputs):
            raise wrong([o.shape for o in outputs])
    else:
        try:
            array = np.asarray(output, dtype=np.float64)
        except (TypeError, ValueError):
            raise UserInputError(f"model {name} returned predictions that are not numbers") from None
        if array.ndim == 0 or array.shape[0] != n or array.ndim > 2:
            raise wrong(array.shape)
        if data.task == "regression":
            array = array[:, None] if array.ndim == 1 else array
            if array.shape[1] != n_targets:
                raise wrong(array.shape)
            outputs = [array[:, j] for j in range(n_targets)]
        elif array.ndim == 1 or (n_targets > 1 and array.shape[1] == n_targets):
            columns = array[:, None] if array.ndim == 1 else array
            if columns.shape[1] != n_targets or any(len(c) != 2 for c in data.classes):
                raise wrong(array.shape)
            outputs = [np.stack([1.0 - columns[:, j], columns[:, j]], axis=1) for j in range(n_targets)]
        elif n_targets == 1 and array.shape[1] == len(data.classes[0]):
            outputs = [array]
        else:
            raise wrong(array.shape)
    for j, values in enumerate(outputs):
        bad = ~np.isfinite(values if values.ndim == 1 else values).reshape(n, -1).all(axis=1)
        for index in np.flatnonzero(bad):
            failures.setdefault(int(index), "no prediction (NaN)")
        if bad.any():
            values = values.copy()
            values[bad] = 0.0
            outputs[j] = values
    return outputs, failures, done


# -- scoring ---------------------------------------------------------------------------
def score_predictions(data: PropertyData, predictions: list[np.ndarray], rows: np.ndarray) -> dict[str, float]:
    """Task metrics on the test rows ``rows`` (mean over targets)."""
    truth = data.test_targets[rows]
    if data.task == "regression":
        errors = [np.sqrt(np.mean((predictions[j][rows] - truth[:, j]) ** 2)) for j in range(truth.shape[1])]
        return {"rmse": float(np.mean(errors))}
    accuracies, aucs = [], []
    for j in range(truth.shape[1]):
        probabilities = predictions[j][rows]
        accuracies.append(float(np.mean(np.argmax(probabilities, axis=1) == truth[:, j])))
        n_classes = len(data.classes[j])
        present = np.unique(truth[:, j])
        if len(present) < 2:
            continue
        if n_classes == 2:
            aucs.append(float(roc_auc_score(truth[:, j], probabilities[:, 1])))
        else:
            normalised = probabilities / np.clip(probabilities.sum(axis=1, keepdims=True), 1e-12, None)
            aucs.append(float(roc_auc_score(truth[:, j], normalised, multi_class="ovr", average="macro",
                                            labels=list(range(n_classes)))))
    return {"accuracy": float(np.mean(accuracies)), "roc_auc": float(np.mean(aucs)) if aucs else float("nan")}


def per_molecule_error(data: PropertyData, predictions: list[np.ndarray]) -> np.ndarray:
    """Per test molecule: mean absolute error (regression) or 1 - probability of the true class."""
    truth = data.test_targets
    if data.task == "regression":
        return np.mean([np.abs(predictions[j] - truth[:, j]) for j in range(truth.shape[1])], axis=0)
    return np.mean([1.0 - predictions[j][np.arange(len(truth)), truth[:, j]] for j in range(truth.shape[1])], axis=0)


@dataclass
class DownstreamReport:
    """Metrics per augmentation, drops, string statistics and what was left out."""

    metrics: dict[str, float]
    table: list[dict]
    skipped: list[dict]
    n_scored: int
    item_scores: dict[str, list[float | None]] = field(default_factory=dict)
    """Per test molecule, for the metrics that are means over molecules (``accuracy``)."""
    run: Run | None = None
    """The model's latest run (:func:`chemassay.models.run`): its identity and request counts."""


def per_molecule_accuracy(data: PropertyData, predictions: list[np.ndarray], rows: np.ndarray) -> list[float | None]:
    """Per test molecule: the share of targets whose most probable class is right (``None``
    outside ``rows``); its mean over ``rows`` is :func:`score_predictions`' ``accuracy``."""
    truth = data.test_targets
    right = np.mean([np.argmax(predictions[j], axis=1) == truth[:, j] for j in range(truth.shape[1])], axis=0)
    chosen = set(int(i) for i in rows)
    return [float(right[i]) if i in chosen else None for i in range(len(truth))]


ROUNDING_RTOL = 1e-12
"""Two predictions closer than this (relative) differ by floating-point rounding only: a sum
taken in another order (a molecule's atoms in another order, a forest's trees added by
threads), not a different answer."""


def settle_rounding(values: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """``values`` with every entry that equals ``reference``'s up to rounding (relative
    :data:`ROUNDING_RTOL`, or 1e-15 absolute near zero) replaced by ``reference``'s.

    A model that sums contributions in input order (Crippen logP over atoms, a threaded
    forest) gives a rewritten SMILES a prediction that differs from the original's in the last
    bits; the drop measured from it would be noise such as ``-8.6e-17`` rather than the 0 it
    is, and could be ranked as a difference. Settling it here makes that drop exactly 0.
    """
    values = np.asarray(values, dtype=np.float64)
    reference = np.asarray(reference, dtype=np.float64)
    close = np.isclose(values, reference, rtol=ROUNDING_RTOL, atol=1e-15)
    return np.where(close, reference, values)


def evaluate_downstream(
    data: PropertyData, model, augmentations: Sequence[str], *, seed: int = 0, n_jobs: int = 1,
    context: dict[str, Any] | None = None,
) -> DownstreamReport:
    """Score ``model`` (a spec, loaded once with ``context``, or an object) on the original
    test set and on each augmentation of it, each set through :func:`chemassay.models.run`.

    Rows an augmentation fails on, or the model cannot predict, are listed in ``skipped``
    and left out of that augmentation's metric; rows an augmentation does not apply to
    are kept unchanged (as in the retrieval task) and counted. ``spearman_*`` is the
    Spearman correlation between a molecule's Levenshtein ratio to its original (the paper's:
    edit distance / original length) and the change of its error (positive: the more the
    string changed, the more the error grew).
    """
    predictions, failures, done = target_outputs(model, data.test_smiles, data, context=context)
    skipped = [{"line": data.test_lines[i], "augmentation": "original", "reason": f"no prediction: {reason}"}
               for i, reason in sorted(failures.items())]
    base_rows = np.asarray([i not in failures for i in range(len(data.test_smiles))])
    base = score_predictions(data, predictions, np.flatnonzero(base_rows))
    base_error = per_molecule_error(data, predictions)
    metrics: dict[str, float] = {f"original/{k}": v for k, v in base.items()}
    item_scores: dict[str, list[float | None]] = {}
    if data.task == "classification":
        item_scores["original/accuracy"] = per_molecule_accuracy(data, predictions, np.flatnonzero(base_rows))
    table = [{"augmentation": "original", "n": int(base_rows.sum()), **base,
              "mean_length": float(np.mean([len(s) for s in data.test_smiles])), "levenshtein_ratio": 0.0,
              "normalized_similarity": 1.0}]
    for kind in augmentations:
        rows = augment_many(data.test_smiles, kind, seed=seed, n_jobs=n_jobs)
        texts = [row.augmented if row.augmented else row.original for row in rows]
        aug_predictions, aug_failures, done = target_outputs(done.model_object, texts, data)
        aug_predictions = [settle_rounding(values, original) for values, original in
                           zip(aug_predictions, predictions, strict=True)]
        keep = base_rows.copy()
        for row in rows:
            if row.status == "failed":
                keep[row.index] = False
                skipped.append({"line": data.test_lines[row.index], "augmentation": kind,
                                "reason": f"augmentation failed: {row.reason}"})
        for index, reason in sorted(aug_failures.items()):
            if keep[index]:
                keep[index] = False
                skipped.append({"line": data.test_lines[index], "augmentation": kind, "reason": f"no prediction: {reason}"})
        chosen = np.flatnonzero(keep)
        scores = score_predictions(data, aug_predictions, chosen)
        reference = score_predictions(data, predictions, chosen)
        ratios = np.asarray([levenshtein_ratio(data.test_smiles[i], texts[i]) for i in chosen])
        similarities = np.asarray([normalized_similarity(data.test_smiles[i], texts[i]) for i in chosen])
        error_change = per_molecule_error(data, aug_predictions)[chosen] - base_error[chosen]
        if len(chosen) > 2 and np.std(ratios) > 0 and np.std(error_change) > 0:
            rho = float(spearmanr(ratios, error_change).statistic)
        else:
            rho = float("nan")
        if data.task == "classification":
            item_scores[f"{kind}/accuracy"] = per_molecule_accuracy(data, aug_predictions, chosen)
        else:
            # Paired per-molecule change of the squared error (mean over targets): its mean is the MSE
            # drop, with a bootstrap interval over molecules (a difference inside it is no finding).
            truth = data.test_targets
            change = np.mean([(aug_predictions[j] - truth[:, j]) ** 2 - (predictions[j] - truth[:, j]) ** 2
                              for j in range(truth.shape[1])], axis=0)
            chosen_set = set(int(i) for i in chosen)
            item_scores[f"{kind}/mse_drop"] = [float(change[i]) if i in chosen_set else None
                                               for i in range(len(truth))]
            metrics[f"{kind}/mse_drop"] = float(np.mean(change[chosen])) if len(chosen) else float("nan")
        row_entry: dict = {"augmentation": kind, "n": int(len(chosen)),
                           "not_applied": int(sum(r.status == "not_applicable" for r in rows))}
        for key, value in scores.items():
            drop = value - reference[key] if key == "rmse" else reference[key] - value
            metrics[f"{kind}/{key}"] = value
            metrics[f"{kind}/{key}_drop"] = drop
            row_entry[key] = value
            row_entry[f"{key}_drop"] = drop
        row_entry["mean_length"] = float(np.mean([len(texts[i]) for i in chosen])) if len(chosen) else float("nan")
        row_entry["levenshtein_ratio"] = float(np.mean(ratios)) if len(ratios) else float("nan")
        row_entry["normalized_similarity"] = float(np.mean(similarities)) if len(similarities) else float("nan")
        row_entry["spearman_levenshtein_vs_error_change"] = rho
        metrics[f"{kind}/mean_length"] = row_entry["mean_length"]
        metrics[f"{kind}/levenshtein_ratio"] = row_entry["levenshtein_ratio"]
        metrics[f"{kind}/normalized_similarity"] = row_entry["normalized_similarity"]
        metrics[f"{kind}/spearman_levenshtein_vs_error_change"] = rho
        table.append(row_entry)
    return DownstreamReport(metrics, table, skipped, int(base_rows.sum()), item_scores, done)
