"""Downstream robustness: reading property CSVs, task detection, metrics and drops."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from chemassay.contract.errors import UserInputError
from chemassay.models import load_model
from chemassay.models.protocols import from_callable
from chemassay.suites.robustness.downstream import (
    ForestPropertyModel,
    evaluate_downstream,
    read_property_csv,
    score_predictions,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "robustness" / "solubility_160.csv"


def test_read_regression_and_multilabel():
    regression = read_property_csv(DATA, targets=["logS"])
    assert regression.task == "regression"
    assert (len(regression.train_smiles), len(regression.test_smiles)) == (120, 40)
    assert regression.split_source == "column 'split'"
    multilabel = read_property_csv(DATA, targets=["is_low", "is_high"])
    assert multilabel.task == "classification" and multilabel.classes == [["0", "1"], ["0", "1"]]
    assert multilabel.test_targets.shape == (40, 2)


def test_malformed_rows_are_reported(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("SMILES,y\nCCO,1.5\n,2.0\nCCC,\nCCCC,3.0\nCCN,2.5\nCCCl,0.1\n")
    data = read_property_csv(path, test_fraction=0.4, seed=1)
    assert data.malformed == [(3, "empty SMILES"), (4, "missing target value")]
    assert len(data.train_smiles) + len(data.test_smiles) == 4
    assert data.split_source.startswith("random")
    with pytest.raises(UserInputError, match="no target column"):
        read_property_csv(path, targets=["z"])


def test_classification_metrics_hand_checked():
    data = read_property_csv(DATA, targets=["is_low"])
    truth = data.test_targets[:, 0]
    perfect = np.stack([1.0 - truth, truth.astype(float)], axis=1)
    assert score_predictions(data, [perfect], np.arange(len(truth))) == {"accuracy": 1.0, "roc_auc": 1.0}
    inverted = perfect[:, ::-1]
    scores = score_predictions(data, [inverted], np.arange(len(truth)))
    assert scores["accuracy"] == 0.0 and scores["roc_auc"] == 0.0


def test_invariant_callable_has_zero_drop_and_string_model_drops():
    data = read_property_csv(DATA, targets=["logS"])
    # A model of the molecule (heavy-atom count from RDKit), not of the string: invariant.
    from rdkit import Chem

    def heavy_atoms(smiles):
        return [-0.3 * Chem.MolFromSmiles(s).GetNumHeavyAtoms() for s in smiles]

    invariant = evaluate_downstream(data, from_callable(heavy_atoms, "property-predictor"), ["explicit_h", "randomized"])
    assert invariant.metrics["explicit_h/rmse_drop"] == pytest.approx(0.0, abs=1e-12)
    assert invariant.metrics["randomized/rmse_drop"] == pytest.approx(0.0, abs=1e-12)
    string_model = ForestPropertyModel("char-ngram", "regression", n_estimators=20).fit(
        data.train_smiles, data.train_targets)
    report = evaluate_downstream(data, string_model, ["explicit_h"])
    assert report.metrics["explicit_h/rmse_drop"] > 0.1
    assert report.table[1]["mean_length"] > report.table[0]["mean_length"]
    assert report.table[1]["normalized_similarity"] < 1 and report.table[1]["levenshtein_ratio"] > 0


def test_python_kind_property_predictor_and_errors(tmp_path):
    # The general python kind replaces the suite's own callable loader.
    module = tmp_path / "model.py"
    module.write_text("def predict(smiles):\n    return [0.0] * len(smiles)\n")
    assert load_model(f"python:{module}:predict", "property-predictor").predict_properties(["C", "CC"]) == [0.0, 0.0]
    with pytest.raises(UserInputError):
        load_model(f"python:{module}:missing", "property-predictor")
    with pytest.raises(UserInputError):
        load_model("python:no_such_module_xyz:f", "property-predictor")


def test_several_classification_targets_come_through_the_run_pipeline_unchanged():
    data = read_property_csv(DATA, targets=["is_low", "is_high"])
    forest = ForestPropertyModel("fingerprint", "classification", n_estimators=10).fit(
        data.train_smiles, data.train_targets)
    report = evaluate_downstream(data, forest, ["kekulize"])  # one (n, 2) array per target, through run
    direct = score_predictions(data, forest.predict_targets(data.test_smiles), np.arange(len(data.test_smiles)))
    assert report.metrics["original/accuracy"] == direct["accuracy"]
    assert report.metrics["original/roc_auc"] == direct["roc_auc"]
    assert report.run.model.name == "rf-fingerprint" and report.run.n == len(data.test_smiles)
