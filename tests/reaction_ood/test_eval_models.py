"""Live models (HTTP server, Python objects, the baseline), the iterated evaluation, plots."""

from __future__ import annotations

import csv
import json
import random
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pandas as pd
import pytest

from chemassay.chem.molecules import canonical_smiles
from chemassay.data import dataset_file
from chemassay.errors import UserInputError
from chemassay.suites.reaction_ood.iterate import iterated_evaluation, next_round_inputs
from chemassay.suites.reaction_ood.models import HttpPredictor, load_predictor

ESTER = "CCOC(=O)c1ccccc1"
GRIGNARD = "C[Mg]Br"
KETONE = "CC(=O)c1ccccc1"
ALCOHOL = "CC(C)(O)c1ccccc1"


def canonical_set(smiles: str) -> str:
    return ".".join(sorted(canonical_smiles(s) for s in smiles.split(".")))


# A model that has learned Grignard additions to ketones but not to esters: it stops the
# ester at the single addition (the ketone). Keys are canonical reactant sets.
SINGLE_ADDITION_MODEL = {
    canonical_set(f"{ESTER}.{GRIGNARD}"): [KETONE, "CCO"],
    canonical_set(f"{ESTER}.{GRIGNARD}.{KETONE}"): [ALCOHOL, KETONE],
    canonical_set("CC(=O)Cl.NC"): ["CNC(C)=O"],
    canonical_set("CC(=O)Cl.NC.CNC(C)=O"): ["CN(C(C)=O)C(C)=O"],
}


def lookup_predict(reactants, k=5):
    return [SINGLE_ADDITION_MODEL.get(canonical_set(r), [])[:k] for r in reactants]


class LookupModel:
    def predict(self, reactants, k=5):
        return lookup_predict(reactants, k)


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 (http.server's naming)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path != "/predict":
            self.send_response(404)
            self.end_headers()
            return
        payload = json.dumps({"predictions": lookup_predict(body["reactants"], body["k"])}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def model_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def grignard_test(tmp_path):
    path = tmp_path / "grignard.csv"
    pd.DataFrame({
        "id": ["g1", "a1"],
        "reactants": [f"{ESTER}.{GRIGNARD}", "CC(=O)Cl.NC"],
        "products": [ALCOHOL, "CNC(C)=O"],
    }).to_csv(path, index=False)
    return path


def test_iterated_evaluation_recovers_the_double_addition():
    result = iterated_evaluation(LookupModel(), [f"{ESTER}.{GRIGNARD}", "CC(=O)Cl.NC"], [ALCOHOL, "CNC(C)=O"], k=2)
    m = result.metrics
    assert m["round1_top1_accuracy"] == 0.5      # the Grignard ester stops at the ketone
    assert m["round2_top1_accuracy"] == 0.5      # fed back, it becomes the alcohol; the amide over-reacts
    assert m["recovered_in_round2"] == 1 and m["lost_in_round2"] == 1
    assert m["recovered_fraction_of_round1_errors"] == 1.0
    assert m["any_round_top1_accuracy"] == 1.0
    assert result.inputs[1][0] == f"{ESTER}.{GRIGNARD}.{KETONE}"


def test_next_round_inputs_modes_and_unreadable_predictions():
    assert next_round_inputs(["A", "B", "C"], [["CCO"], [], ["C1CC"]], "append") == ["A.CCO", None, None]
    assert next_round_inputs(["A"], [["CCO"]], "alone") == ["CCO"]
    with pytest.raises(UserInputError):
        next_round_inputs(["A"], [["CCO"]], "replace")


def test_http_predictor_against_a_real_server(model_server):
    predictor = load_predictor(f"{model_server}/predict")
    assert isinstance(predictor, HttpPredictor)
    predictor.batch_size = 1
    assert predictor.predict([f"{ESTER}.{GRIGNARD}", "CCCC"], k=1) == [[KETONE], []]
    with pytest.raises(UserInputError, match="HTTP 404"):
        load_predictor(f"{model_server}/other").predict(["CC"], k=1)
    with pytest.raises(UserInputError, match="cannot reach"):
        HttpPredictor("http://127.0.0.1:9/predict", timeout=2).predict(["CC"], k=1)


def test_iterate_and_predict_cli_with_a_served_model(cli, tmp_path, model_server, grignard_test):
    out = tmp_path / "iterate.json"
    rounds = tmp_path / "rounds.csv"
    run = cli("reaction-ood", "iterate", grignard_test, "--model", f"{model_server}/predict", "--out", out,
              "--k", "2", "--predictions", rounds)
    assert run.code == 0, run.stderr
    data = json.loads(out.read_text())
    assert data["task"] == "iterate" and data["n"] == 2
    assert data["metrics"]["recovered_in_round2"] == 1
    assert set(pd.read_csv(rounds)["round"]) == {1, 2}
    preds = tmp_path / "preds.csv"
    assert cli("reaction-ood", "predict", grignard_test, "--model", f"{model_server}/predict", "--out", preds).code == 0
    table = pd.read_csv(preds)
    assert table.loc[table["id"] == "g1", "prediction"].tolist() == [KETONE, "CCO"]
    evaluated = cli("reaction-ood", "evaluate", preds, "--truth", grignard_test, "--out", tmp_path / "e.json")
    assert evaluated.code == 0
    assert json.loads((tmp_path / "e.json").read_text())["metrics"]["top1_accuracy"] == 0.5


def test_python_model_specs(tmp_path, monkeypatch):
    module = tmp_path / "my_rxn_model.py"
    module.write_text(
        "def predict(reactants, k):\n    return [['CCO'] for _ in reactants]\n"
        "class Model:\n    def predict(self, reactants, k=5):\n        return [['CC'] for _ in reactants]\n"
        "def make():\n    return Model()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert load_predictor("python:my_rxn_model:predict").predict(["X"], 1) == [["CCO"]]
    assert load_predictor("python:my_rxn_model:Model").predict(["X"], 1) == [["CC"]]
    assert load_predictor("python:my_rxn_model:make").predict(["X"], 1) == [["CC"]]
    with pytest.raises(UserInputError, match="no attribute"):
        load_predictor("python:my_rxn_model:missing")
    with pytest.raises(UserInputError, match="use baseline:PATH"):
        load_predictor("something")


def test_train_baseline_predict_evaluate_plot_cli(cli, tmp_path):
    with open(dataset_file("schneider-dataseta", "dataSetA.csv"), newline="") as handle:
        rows = list(csv.DictReader(handle))
    random.Random(3).shuffle(rows)
    train = tmp_path / "train.csv"
    pd.DataFrame({"rxn_smiles": [r["rxn_Smiles"] for r in rows[:80]]}).to_csv(train, index=False)
    model = tmp_path / "model.npz"
    run = cli("reaction-ood", "train-baseline", train, "--out", model, "--n-neighbors", "10")
    assert run.code == 0, run.stderr
    assert "gave a template" in run.stderr
    test_rows = []
    for row in rows[:16]:  # training reactions: the baseline should recall most
        reactants, _, products = row["rxn_Smiles"].partition(">>")
        test_rows.append({"id": row["patentID"] + str(len(test_rows)), "reactants": reactants, "products": products,
                          "class_code": row["rxn_Class"]})
    test = tmp_path / "test.csv"
    pd.DataFrame(test_rows).to_csv(test, index=False)
    preds = tmp_path / "preds.jsonl"
    assert cli("reaction-ood", "predict", test, "--model", f"baseline:{model}", "--out", preds, "--k", "3").code == 0
    results = []
    for label in ("random", "document"):
        out = tmp_path / f"{label}.json"
        evaluated = cli("reaction-ood", "evaluate", preds, "--truth", test, "--out", out, "--label", label)
        assert evaluated.code == 0, evaluated.stderr
        results.append(out)
    skipped = json.loads(results[0].read_text())["skipped"]
    scored = json.loads(results[0].read_text())
    assert scored["metrics"]["top3_accuracy_stereo_agnostic"] >= 0.6
    assert scored["n"] + len(skipped) == 16
    png = tmp_path / "bars.png"
    assert cli("reaction-ood", "plot", "bars", *results, "--out", png).code == 0
    assert png.stat().st_size > 5000
    no_years = cli("reaction-ood", "plot", "years", results[0], "--out", tmp_path / "y.png")
    assert no_years.code == 2 and "no per-year breakdown" in no_years.stderr


def test_plot_years_draws_one_line_per_cutoff(cli, tmp_path):
    from chemassay.report.result import Result

    paths = []
    for cutoff, base in ((2005, 0.6), (2010, 0.7)):
        rows = [{"group": year, "n": 50, "top1_accuracy": base - 0.02 * max(0, year - cutoff)}
                for year in range(2003, 2016)]
        result = Result(suite="reaction-ood", task="evaluate", metrics={"top1_accuracy": base}, n=650,
                        config={"label": f"upto {cutoff}"}, breakdowns={"year": rows})
        path = tmp_path / f"t{cutoff}.json"
        result.write(path)
        paths.append(path)
    png = tmp_path / "years.png"
    run = cli("reaction-ood", "plot", "years", *paths, "--out", png)
    assert run.code == 0, run.stderr
    assert png.stat().st_size > 5000
