"""The robustness CLI end to end: augment, evaluate, downstream, train + hf: round trip."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data" / "robustness"


@pytest.fixture
def molecules(tmp_path) -> Path:
    path = tmp_path / "molecules.tsv"
    path.write_text("CID\tSMILES\n1\tCCO\n2\tc1ccccc1O\n3\tC1CC2CCCC1CC2\n4\tCC(=O)Nc1ccc(O)cc1\n5\tCCCC\n")
    return path


def test_augment_writes_rows_statuses_and_manifest(cli, molecules, tmp_path, isolated_home):
    out = tmp_path / "cycle.csv"
    result = cli("robustness", "augment", molecules, "--kind", "cycle_renumber", "--seed", "3", "--out", out)
    assert result.code == 0, result.stderr
    rows = list(csv.DictReader(out.open()))
    assert [r["status"] for r in rows] == ["not_applicable", "ok", "ok", "ok", "not_applicable"]
    assert rows[0]["SMILES"] == "CCO" and rows[0]["reason"]
    manifest = json.loads((tmp_path / "cycle.csv.manifest.json").read_text())
    assert manifest["counts"] == {"ok": 3, "not_applicable": 2, "failed": 0}
    assert manifest["seed"] == 3 and len(manifest["output_sha256"]) == 64
    assert [p["line"] for p in manifest["problems"]] == [2, 6]
    again = tmp_path / "again.csv"
    cli("robustness", "augment", molecules, "--kind", "cycle_renumber", "--seed", "3", "--out", again)
    assert again.read_text() == out.read_text()


def test_augment_bad_input(cli, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("name,value\nx,1\n")
    result = cli("robustness", "augment", bad, "--kind", "canonical", "--out", tmp_path / "o.csv")
    assert result.code == 2 and "no SMILES column" in result.stderr
    result = cli("robustness", "augment", bad, "--kind", "shuffle", "--out", tmp_path / "o.csv")
    assert result.code == 2 and "unknown augmentation" in result.stderr


def test_retrieve_result_contract_and_identity_check(cli, molecules, tmp_path, isolated_home):
    augmented = tmp_path / "aug.csv"
    # Row 3 is a wrong cycle renumbering (a ring label reused while open): another molecule.
    augmented.write_text("CID,SMILES\n1,OCC\n2,Oc1ccccc1\n3,C1CC1CCCC1CC1\n4,CC(=O)Nc1ccc(O)cc1\n5,CCCC\n")
    out = tmp_path / "r.json"
    result = cli("robustness", "evaluate", "--dataset", molecules, "--augmented", augmented,
                 "--model", "fingerprint", "--out", out, "--per-row", tmp_path / "rows.csv")
    assert result.code == 0, result.stderr
    data = json.loads(out.read_text())
    assert data["suite"] == "robustness" and data["task"] == "evaluate" and data["n"] == 5
    assert {"o2a_acc@1", "o2a_acc@5", "o2a_mrr", "a2o_acc@1", "a2o_acc@5", "a2o_mrr"} <= set(data["metrics"])
    assert data["details"]["identity_mismatches"] == [{"line": 4, "id": "3"}]
    assert len(data["inputs"]) == 2 and data["config"]["ties"] == "index"
    per_row = (tmp_path / "rows.csv").read_text().splitlines()
    assert per_row[0] == "id,rank_o2a,rank_a2o" and len(per_row) == 6
    dropped = cli("robustness", "evaluate", "--dataset", molecules, "--augmented", augmented,
                  "--model", "fingerprint", "--drop-mismatched", "--out", out)
    assert dropped.code == 0
    data = json.loads(out.read_text())
    assert data["n"] == 4 and data["metrics"]["o2a_acc@1"] == 1.0 and data["skipped"][0]["line"] == 4


def test_retrieve_misaligned_files(cli, molecules, tmp_path):
    short = tmp_path / "short.csv"
    short.write_text("SMILES\nCCO\n")
    result = cli("robustness", "evaluate", "--model", "fingerprint", "--dataset", molecules, "--augmented", short)
    assert result.code == 2 and "row i of both files" in result.stderr
    result = cli("robustness", "evaluate")
    assert result.code == 2 and "--model" in result.stderr


def test_run_isomers_char_ngram_table(cli, tmp_path, isolated_home):
    out = tmp_path / "run.json"
    table = tmp_path / "table.md"
    result = cli("--quiet", "robustness", "evaluate", "--dataset", "isomers", "--model", "char-ngram",
                 "--augmentations", "canonical,kekulize", "--out", out, "--table", table)
    assert result.code == 0, result.stderr
    data = json.loads(out.read_text())
    assert data["n"] == 918 and data["dataset"]["name"] == "amore-isomers"
    assert [row["augmentation"] for row in data["details"]["table"]] == ["canonical", "kekulize"]
    assert 0 < data["metrics"]["canonical/o2a_acc@1"] < 0.5
    assert data["details"]["strings"]["canonical"]["mean_normalized_similarity"] < 1
    assert data["details"]["strings"]["canonical"]["mean_levenshtein_ratio"] > 0
    assert "| canonical | 918 |" in table.read_text()


def test_train_lm_and_hf_round_trip(cli, molecules, tmp_path, isolated_home):
    pytest.importorskip("transformers")
    checkpoint = tmp_path / "lm"
    result = cli("--quiet", "robustness", "train", "--data", DATA / "moses_train_200.csv", "--out", checkpoint,
                 "--n-train", "150", "--n-valid", "20", "--steps", "3", "--layers", "1", "--hidden", "16",
                 "--heads", "2", "--batch-size", "8", "--result", tmp_path / "lm.json")
    assert result.code == 0, result.stderr
    manifest = json.loads((checkpoint / "train_manifest.json").read_text())
    assert manifest["n_train"] == 150 and "model.safetensors" in manifest["files"]
    assert json.loads((tmp_path / "lm.json").read_text())["metrics"]["mlm_loss"] > 0
    out = tmp_path / "hf.json"
    result = cli("robustness", "evaluate", "--dataset", molecules, "--augmented", molecules,
                 "--model", f"hf:{checkpoint}", "--layers", "all", "--out", out)
    assert result.code == 0, result.stderr
    data = json.loads(out.read_text())
    assert len(data["details"]["per_layer"]["pair"]) == 2
    assert data["metrics"]["o2a_acc@1"] == 1.0  # identical strings, identical embeddings
    assert data["config"]["encoder"] == "hf"
    plot = tmp_path / "fig3.png"
    result = cli("--quiet", "robustness", "evaluate", "--dataset", molecules, "--model", f"hf:{checkpoint}",
                 "--layers", "all", "--augmentations", "kekulize,explicit_h", "--plot", plot, "--out", out)
    assert result.code == 0, result.stderr
    data = json.loads(out.read_text())
    assert [len(layers) for layers in data["details"]["per_layer"].values()] == [2, 2]
    assert "kekulize/layer1/o2a_acc@1" in data["metrics"]
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_downstream_baseline_and_prediction_file(cli, tmp_path, isolated_home):
    data_file = DATA / "solubility_160.csv"
    out = tmp_path / "d.json"
    result = cli("--quiet", "robustness", "downstream", "--data", data_file, "--target", "logS",
                 "--model", "rf-fingerprint", "--augmentations", "kekulize,explicit_h",
                 "--n-estimators", "10", "--out", out)
    assert result.code == 0, result.stderr
    data = json.loads(out.read_text())
    assert data["config"]["task"] == "regression" and data["n"] == 40
    assert data["metrics"]["kekulize/rmse_drop"] == pytest.approx(0.0)
    assert data["metrics"]["explicit_h/rmse_drop"] == pytest.approx(0.0)
    sets = tmp_path / "sets.csv"
    assert cli("robustness", "downstream-sets", "--data", data_file, "--target", "logS",
               "--augmentations", "kekulize", "--out", sets).code == 0
    rows = list(csv.DictReader(sets.open()))
    assert len(rows) == 80
    predictions = tmp_path / "pred.csv"
    # A "model" that predicts -2 for originals and -3 for the Kekule strings, and nothing for one row.
    lines = ["SMILES,prediction"] + [f"{r['SMILES']},{-2 if r['augmentation'] == 'original' else -3}" for r in rows[:-1]]
    predictions.write_text("\n".join(lines) + "\n")
    result = cli("--quiet", "robustness", "downstream", "--data", data_file, "--target", "logS",
                 "--model", f"predictions:{predictions}", "--augmentations", "kekulize", "--out", out)
    assert result.code == 0, result.stderr
    data = json.loads(out.read_text())
    assert any("no prediction" in s["reason"] for s in data["skipped"])
    assert data["details"]["table"][1]["n"] <= 39
