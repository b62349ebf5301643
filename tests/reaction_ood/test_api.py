"""The Python API (chemassay.reaction_ood), the template-knn model kind, the dataset loader,
the metric cards, and the values the CLI gave before the API existed (same numbers)."""

from __future__ import annotations

import csv
import json
import random

import pandas as pd
import pytest

from chemassay.contract.errors import UserInputError
from chemassay.data import dataset_file


@pytest.fixture(scope="module")
def dataset_a_files(tmp_path_factory):
    """250 dataSetA training reactions and 100 test reactions (80 unseen, 20 seen)."""
    folder = tmp_path_factory.mktemp("dataseta")
    with open(dataset_file("schneider-dataseta", "dataSetA.csv"), newline="") as handle:
        rows = list(csv.DictReader(handle))
    random.Random(3).shuffle(rows)
    pd.DataFrame({"rxn_smiles": [r["rxn_Smiles"] for r in rows[:250]]}).to_csv(folder / "train.csv", index=False)
    test_rows = []
    for i, row in enumerate(rows[250:330] + rows[:20]):
        reactants, _, products = row["rxn_Smiles"].partition(">>")
        test_rows.append({"id": f"r{i}", "reactants": reactants, "products": products, "class_code": row["rxn_Class"]})
    pd.DataFrame(test_rows).to_csv(folder / "test.csv", index=False)
    return folder


# What `train-baseline --n-neighbors 20`, `predict --k 5`, `evaluate` and `iterate --k 3` gave
# on these files with the code before the contract (main at dc3089a).
BEFORE_EVALUATE = {
    "top1_accuracy": 0.31, "top2_accuracy": 0.35, "top3_accuracy": 0.35, "top5_accuracy": 0.36,
    "top1_accuracy_stereo_agnostic": 0.32, "top2_accuracy_stereo_agnostic": 0.36,
    "top3_accuracy_stereo_agnostic": 0.36, "top5_accuracy_stereo_agnostic": 0.37, "top1_invalid_rate": 0.0,
    "invalid_prediction_rate": 0.0, "n_missing_predictions": 37, "mean_predictions_per_item": 1.23,
}
BEFORE_ITERATE = {
    "round1_top1_accuracy": 0.31, "round1_top3_accuracy": 0.35, "round1_top1_accuracy_stereo_agnostic": 0.32,
    "round2_top1_accuracy": 0.29, "round2_top3_accuracy": 0.34, "round2_top1_accuracy_stereo_agnostic": 0.3,
    "any_round_top1_accuracy": 0.32, "recovered_in_round2": 1, "recovered_fraction_of_round1_errors": 1 / 69,
    "lost_in_round2": 3, "n_round2_queries": 63,
}


def test_cli_and_api_give_the_numbers_of_before(cli, tmp_path, dataset_a_files):
    from chemassay.reaction_ood import evaluate, iterate

    model = tmp_path / "m.npz"
    train, test = dataset_a_files / "train.csv", dataset_a_files / "test.csv"
    run = cli("reaction-ood", "train", train, "--out", model, "--n-neighbors", "20")
    assert run.code == 0, run.stderr
    assert "227 of 250 training reactions gave a template (205 distinct" in run.stderr
    preds = tmp_path / "p.csv"
    assert cli("reaction-ood", "predict", test, "--model", f"template-knn:{model}", "--out", preds, "--k", "5").code == 0
    out = tmp_path / "e.json"
    assert cli("reaction-ood", "evaluate", preds, "--truth", test, "--out", out).code == 0
    from_file = json.loads(out.read_text())
    # the reactions the model gave no product for have no row in the file: each is listed
    missing = from_file["metrics"]["n_missing_predictions"]
    assert from_file["n"] == 100 and missing > 0 and len(from_file["skipped"]) == missing
    assert {s["reason"] for s in from_file["skipped"]} == {"no prediction for this test reaction; scored as wrong"}
    assert from_file["skipped"][0]["line"] == 2 + from_file["skipped"][0]["index"]
    assert {k: from_file["metrics"][k] for k in BEFORE_EVALUATE} == pytest.approx(BEFORE_EVALUATE)
    first_class = dict(from_file["details"]["breakdowns"]["class_level1"][0])
    assert first_class.pop("top1_accuracy_regio_agnostic") >= 0.25  # added after main at dc3089a
    assert first_class == pytest.approx(
        {"group": "1", "n": 20, "top1_accuracy": 0.25, "top2_accuracy": 0.35, "top3_accuracy": 0.35,
         "top5_accuracy": 0.35, "top1_accuracy_stereo_agnostic": 0.25})
    # the live model in process, and the API on the predictions file: the same numbers
    live = evaluate(model=f"template-knn:{model}", reference=test, k=5)
    assert {k: live.metrics[k] for k in BEFORE_EVALUATE} == pytest.approx(BEFORE_EVALUATE)
    # a live model's empty answer is an answer, not a failed item
    assert live.skipped == [] and live.metrics["n_missing_predictions"] == missing
    assert live.model.kind == "template-knn" and live.model.spec == f"template-knn:{model}"
    assert from_file["model"]["kind"] == "predictions" and from_file["model"]["spec"] == f"predictions:{preds}"
    api_file = evaluate(str(preds), test)
    assert api_file.metrics == pytest.approx(from_file["metrics"])
    assert api_file.intervals["top1_accuracy"].low < 0.31 < api_file.intervals["top1_accuracy"].high
    rounds = iterate(f"template-knn:{model}", test, k=3)
    assert rounds.metrics == pytest.approx({**BEFORE_ITERATE, "n_model_failures": 0})


def test_template_knn_kind_and_its_identity(tmp_path, dataset_a_files):
    from chemassay.reaction_ood import train

    from chemassay.models import check_model, list_kinds, load_model, model_ref
    from chemassay.suites.reaction_ood.template_knn import TemplateKnnModel

    path = tmp_path / "m.npz"
    trained = train(dataset_a_files / "train.csv", path, n_neighbors=20)
    loaded = load_model(f"template-knn:{path},n_jobs=1", "reaction-predictor")
    assert isinstance(loaded, TemplateKnnModel)
    ref = model_ref(loaded)
    assert ref.kind == "template-knn" and ref.checksum == trained.checksum()
    assert ref.parameters["n_neighbors"] == 20 and ref.parameters["file"] == str(path)
    assert model_ref(trained).spec == f"template-knn:{path}" and model_ref(trained).kind == "template-knn"
    in_memory = TemplateKnnModel(trained.templates, trained.train_template, trained.fingerprints, trained.config)
    assert model_ref(in_memory).spec == "template-knn:in-memory" and model_ref(in_memory).checksum == ref.checksum
    assert "template-knn" in {k.name for k in list_kinds("reaction-predictor", "reaction-ood")}
    assert check_model(loaded, "reaction-predictor").passed
    with pytest.raises(UserInputError, match="unknown option"):
        load_model(f"template-knn:{path},neighbours=3", "reaction-predictor")
    with pytest.raises(UserInputError, match="needs an argument"):
        load_model("template-knn", "reaction-predictor")
    with pytest.raises(UserInputError, match="not a chemassay baseline model"):
        load_model(f"template-knn:{dataset_a_files / 'train.csv'}", "reaction-predictor")


def test_load_dataset_through_the_registry():
    from chemassay.reaction_ood import load_dataset

    import chemassay

    frame = chemassay.load_dataset("schneider50k")  # an alias
    assert len(frame) == 50_000 and list(frame.columns[:3]) == ["rxn_smiles", "document_id", "authors"]
    assert frame["year"].notna().mean() > 0.99 and frame["class_code"].notna().all()
    assert load_dataset("schneider-50k")["rxn_smiles"].iloc[7] == frame["rxn_smiles"].iloc[7]
    dataset_a = chemassay.load_dataset("schneider-dataseta")
    assert len(dataset_a) == 683 and dataset_a["class_code"].iloc[0] == "1"
    with pytest.raises(UserInputError, match="has no parts"):
        chemassay.load_dataset("schneider-50k", part="train")


def test_in_memory_inputs_and_their_model_field():
    from chemassay.reaction_ood import evaluate

    truth = ["CNC(C)=O", "CCOC(C)=O", "C[C@H](N)C(=O)O"]
    ranked = [["CNC(C)=O"], "CCO", ["C[C@@H](N)C(=O)O", "CCC"]]  # a bare string is one prediction
    result = evaluate(ranked, truth, bootstrap=0)
    assert result.metrics["top1_accuracy"] == pytest.approx(1 / 3)
    assert result.metrics["top1_accuracy_stereo_agnostic"] == pytest.approx(2 / 3)
    assert result.model.kind == "predictions" and result.model.spec == "predictions:<memory>"
    assert result.item_ids == ["0", "1", "2"] and result.intervals == {}
    by_id = evaluate({"b": ["CCOC(C)=O"], "a": ["CCC"]},
                     pd.DataFrame({"id": ["a", "b"], "products": truth[:2]}), bootstrap=0)
    assert by_id.item_scores["top1_accuracy"] == [0.0, 1.0]
    reactions = evaluate([["CNC(C)=O"]], ["CC(=O)Cl.NC>>CNC(C)=O"], bootstrap=0)  # reaction SMILES as truth
    assert reactions.metrics["top1_accuracy"] == 1.0
    with pytest.raises(UserInputError, match="give the predictions to score, or a model"):
        evaluate(None, truth)
    with pytest.raises(UserInputError, match="k must be"):
        evaluate(ranked, truth, k=0)


def test_item_scores_average_to_the_metrics_and_give_intervals(tmp_path):
    from chemassay.reaction_ood import evaluate

    truth = ["CCO", "CC(=O)O", "c1ccccc1O", "CCN", "CCCl"] * 4
    ranked = [["CCO"], ["CC", "CC(=O)O"], ["x("], [], ["CCCl"]] * 4
    result = evaluate(ranked, truth, seed=3, bootstrap=200)
    for key in ("top1_accuracy", "top2_accuracy", "top1_accuracy_stereo_agnostic"):
        scores = result.item_scores[key]
        assert sum(scores) / len(scores) == pytest.approx(result.metrics[key])
        interval = result.intervals[key]
        # top-k accuracies are proportions: Wilson intervals (no resampling)
        assert interval.low <= result.metrics[key] <= interval.high and interval.method == "wilson"
    invalid = result.item_scores["top1_invalid_rate"]
    assert invalid[:5] == [0.0, 0.0, 1.0, None, 0.0]  # no predictions: the rate leaves it out
    assert result.metrics["top1_invalid_rate"] == pytest.approx(0.25)
    again = evaluate(ranked, truth, seed=3, bootstrap=200)
    assert again.intervals == result.intervals


def test_every_key_is_declared_by_a_card():
    from chemassay.report.cards import card_for
    from chemassay.suites.reaction_ood.metrics import METRIC_CARDS

    keys = ["top1_accuracy", "top10_accuracy_stereo_agnostic", "n_duplicate_predictions", "n_model_failures",
            "n_unmatched_prediction_ids",
            "round2_top3_accuracy", "document test_ood/difference_median", "ood/reactant_mean", "rows_out",
            "no_new_product_heavy_enough", "failed"]
    for key in keys:
        assert card_for("reaction-ood", key) is not None, key
    assert card_for("reaction-ood", "top1_accuracy").paper_table.startswith("Tables S2.2")
    assert card_for("reaction-ood", "top1_accuracy").interval == "wilson"
    assert all(c.interval in ("wilson", "bootstrap") or c.interval_note for c in METRIC_CARDS)


def test_data_verbs_through_the_api(tmp_path):
    from chemassay.reaction_ood import clean, load_dataset, split, verify

    raw = load_dataset("schneider-50k").iloc[:1500]
    report = clean(raw, tmp_path / "clean.parquet")
    assert report.task == "clean" and report.metrics["rows_in"] == 1500
    assert report.metrics["rows_out"] == len(pd.read_parquet(tmp_path / "clean.parquet"))
    manifest = split(tmp_path / "clean.parquet", tmp_path / "split", config={"kind": "random", "test": 100, "valid": 50})
    assert manifest["parts"]["test"]["rows"] == 100
    checked = verify(tmp_path / "split")
    assert checked.metrics["failed"] == 0 and checked.metrics["checks"] == len(checked.details.checks)
    with pytest.raises(UserInputError, match="already holds a split"):
        split(tmp_path / "clean.parquet", tmp_path / "split", config={"kind": "random"})
