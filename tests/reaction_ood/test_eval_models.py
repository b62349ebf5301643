"""Live models (a chat model behind a real local OpenAI-compatible server, Python objects, the
template-kNN baseline), the iterated evaluation, plots."""

from __future__ import annotations

import csv
import json
import random

import pandas as pd
import pytest

from chemassay.chem.molecules import canonical_smiles
from chemassay.contract.errors import UserInputError
from chemassay.data import dataset_file
from chemassay.suites.reaction_ood.iterate import iterated_evaluation, next_round_inputs

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


def chat_lookup(body):
    """A chat model (behind the real local OpenAI-compatible server) that answers with the
    lookup model's ranked products, numbered as chat models like to."""
    prompt = body["messages"][-1]["content"]
    reactants = prompt.split("): ", 1)[1].splitlines()[0]
    ranked = lookup_predict([reactants], 5)[0]
    return "\n".join(f"{i}. {smiles}" for i, smiles in enumerate(ranked, start=1)) or ""


def test_chat_model_is_evaluated_as_a_reaction_predictor(openai_server, isolated_home, grignard_test, tmp_path):
    from chemassay.reaction_ood import evaluate, iterate, predict

    openai_server.responder = chat_lookup
    spec = f"openai:chemist-7b,base_url={openai_server.base_url}"
    result = evaluate(model=spec, reference=grignard_test, k=2)
    assert result.model.kind == "openai" and result.model.spec.startswith("openai:chemist-7b")
    assert result.metrics["top1_accuracy"] == 0.5 and result.metrics["top2_accuracy"] == 0.5
    assert result.metrics["n_model_failures"] == 0 and result.item_scores["top1_accuracy"] == [0.0, 1.0]
    assert "top1_accuracy" in result.intervals
    assert predict(spec, [f"{ESTER}.{GRIGNARD}", "CCCC"], 2) == [[KETONE, "CCO"], []]
    prompts = [r["messages"][-1]["content"] for r in openai_server.chat_requests()]
    assert any(f"{ESTER}.{GRIGNARD}" in p and "the 2 most likely products" in p for p in prompts)
    rounds = iterate(spec, grignard_test, k=2)
    assert rounds.metrics["recovered_in_round2"] == 1 and rounds.metrics["lost_in_round2"] == 1
    assert rounds.model.kind == "openai"


def test_chat_model_end_to_end_through_the_cli(cli, openai_server, isolated_home, grignard_test, tmp_path):
    openai_server.responder = chat_lookup
    spec = f"openai:chemist-7b,base_url={openai_server.base_url}"
    out = tmp_path / "live.json"
    run = cli("reaction-ood", "evaluate", "--truth", grignard_test, "--model", spec, "--k", "2", "--out", out)
    assert run.code == 0, run.stderr
    live = json.loads(out.read_text())
    assert live["metrics"]["top1_accuracy"] == 0.5 and live["model"]["kind"] == "openai"
    iterated = tmp_path / "iterate.json"
    rounds = tmp_path / "rounds.csv"
    run = cli("reaction-ood", "iterate", grignard_test, "--model", "openai:chemist-7b", "--base-url",
              openai_server.base_url, "--out", iterated, "--k", "2", "--predictions", rounds)
    assert run.code == 0, run.stderr
    data = json.loads(iterated.read_text())
    assert data["task"] == "iterate" and data["n"] == 2
    assert data["metrics"]["recovered_in_round2"] == 1
    assert set(pd.read_csv(rounds)["round"]) == {1, 2}
    preds = tmp_path / "preds.csv"
    assert cli("reaction-ood", "predict", grignard_test, "--model", spec, "--out", preds, "--k", "2").code == 0
    table = pd.read_csv(preds)
    assert table.loc[table["id"] == "g1", "prediction"].tolist() == [KETONE, "CCO"]
    scored = tmp_path / "e.json"
    assert cli("reaction-ood", "evaluate", preds, "--truth", grignard_test, "--out", scored).code == 0
    from_file = json.loads(scored.read_text())
    assert from_file["metrics"]["top1_accuracy"] == live["metrics"]["top1_accuracy"]
    assert from_file["model"]["kind"] == "predictions" and len(from_file["model"]["checksum"]) == 64


def test_failed_chat_requests_count_as_wrong_with_their_reason(openai_server, isolated_home, grignard_test):
    from chemassay.reaction_ood import evaluate

    def flaky(body):
        if "NC" in body["messages"][-1]["content"].split("): ", 1)[1].splitlines()[0].split("."):
            raise RuntimeError("the server falls over on this one")
        return chat_lookup(body)

    openai_server.responder = flaky
    result = evaluate(model=f"openai:chemist-7b,base_url={openai_server.base_url},retries=0", reference=grignard_test,
                      k=2, bootstrap=0)
    assert result.n == 2 and result.metrics["n_model_failures"] == 1
    assert result.metrics["top1_accuracy"] == 0.0 and result.metrics["n_missing_predictions"] == 1
    [failure] = result.skipped
    assert failure.line == 3 and failure.item == "a1" and failure.index == 1
    assert "the model failed (request failed" in failure.reason and failure.reason.endswith("scored as wrong")


def test_model_specs_and_objects(tmp_path, monkeypatch, grignard_test):
    from chemassay.reaction_ood import evaluate, predict

    from chemassay.contract.errors import UserInputError as InputError

    module = tmp_path / "my_rxn_model.py"
    module.write_text(
        "def predict(reactants, k):\n    return [['CCO'] for _ in reactants]\n"
        "class Model:\n    def predict(self, reactants, k=5):\n        return [['CC'] for _ in reactants]\n"
        "def make():\n    return Model()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert predict("python:my_rxn_model:predict", ["X"], 1) == [["CCO"]]
    assert predict("python:my_rxn_model:Model", ["X"], 1) == [["CC"]]
    assert predict("python:my_rxn_model:make", ["X"], 1) == [["CC"]]
    with pytest.raises(InputError, match="no attribute"):
        predict("python:my_rxn_model:missing", ["X"], 1)
    with pytest.raises(InputError, match="unknown model kind"):
        predict("something:x", ["X"], 1)
    # an object and a plain function are models too; the result names them
    by_object = evaluate(model=LookupModel(), reference=grignard_test, k=2, bootstrap=0)
    by_function = evaluate(model=lookup_predict, reference=grignard_test, k=2, bootstrap=0)
    assert by_object.metrics["top1_accuracy"] == by_function.metrics["top1_accuracy"] == 0.5
    assert by_object.model.kind == "python"


def test_train_predict_evaluate_plot_cli(cli, tmp_path):
    with open(dataset_file("schneider-dataseta", "dataSetA.csv"), newline="") as handle:
        rows = list(csv.DictReader(handle))
    random.Random(3).shuffle(rows)
    train = tmp_path / "train.csv"
    pd.DataFrame({"rxn_smiles": [r["rxn_Smiles"] for r in rows[:80]]}).to_csv(train, index=False)
    model = tmp_path / "model.npz"
    run = cli("reaction-ood", "train", train, "--out", model, "--n-neighbors", "10")
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
    assert cli("reaction-ood", "predict", test, "--model", f"template-knn:{model}", "--out", preds, "--k", "3").code == 0
    results = []
    for label in ("random", "document"):
        out = tmp_path / f"{label}.json"
        evaluated = cli("reaction-ood", "evaluate", preds, "--truth", test, "--out", out, "--label", label)
        assert evaluated.code == 0, evaluated.stderr
        results.append(out)
    skipped = json.loads(results[0].read_text())["skipped"]
    scored = json.loads(results[0].read_text())
    assert scored["metrics"]["top3_accuracy_stereo_agnostic"] >= 0.6
    # nothing lost: every test reaction is scored, or listed with why it could not be
    unscored = [item for item in skipped if "scored as wrong" not in item["reason"]]
    assert scored["n"] + len(unscored) == 16
    assert len(skipped) - len(unscored) == scored["metrics"]["n_missing_predictions"]
    png = tmp_path / "bars.png"
    assert cli("reaction-ood", "plot", "bars", *results, "--out", png).code == 0
    assert png.stat().st_size > 5000
    no_years = cli("reaction-ood", "plot", "years", results[0], "--out", tmp_path / "y.png")
    assert no_years.code == 2 and "no per-year breakdown" in no_years.stderr


def test_plot_years_draws_one_line_per_cutoff(cli, tmp_path):
    from chemassay.contract.result import Result

    paths = []
    for cutoff, base in ((2005, 0.6), (2010, 0.7)):
        rows = [{"group": year, "n": 50, "top1_accuracy": base - 0.02 * max(0, year - cutoff)}
                for year in range(2003, 2016)]
        result = Result(suite="reaction-ood", task="evaluate", metrics={"top1_accuracy": base}, n=650,
                        config={"label": f"upto {cutoff}"}, details={"breakdowns": {"year": rows}})
        path = tmp_path / f"t{cutoff}.json"
        result.write(path)
        paths.append(path)
    png = tmp_path / "years.png"
    run = cli("reaction-ood", "plot", "years", *paths, "--out", png)
    assert run.code == 0, run.stderr
    assert png.stat().st_size > 5000


def test_evaluate_takes_the_common_options_and_runs_the_model_through_the_pipeline(isolated_home, tmp_path):
    from chemassay.reaction_ood import evaluate, iterate

    from chemassay.contract import Options

    class Counting(LookupModel):
        def __init__(self):
            self.asked = []

        def predict(self, reactants, k=5):
            self.asked.append(list(reactants))
            return super().predict(reactants, k)

    test = pd.DataFrame({"id": ["g1", "a1", "g2"], "reactants": [f"{ESTER}.{GRIGNARD}", "CC(=O)Cl.NC",
                                                                   f"{ESTER}.{GRIGNARD}"],
                         "products": [ALCOHOL, "CNC(C)=O", ALCOHOL]})
    model = Counting()
    ranks = tmp_path / "ranks.csv"
    result = evaluate(model=model, reference=test, k=2, options=Options(bootstrap=0, cache=True, out=ranks))
    assert model.asked == [[f"{ESTER}.{GRIGNARD}", "CC(=O)Cl.NC"]]  # identical reactions asked once
    assert result.metrics["top1_accuracy"] == pytest.approx(1 / 3) and result.intervals == {}
    assert ranks.is_file() and result.details.per_item == str(ranks)
    again = evaluate(model=model, reference=test, k=2, bootstrap=0, cache=True)  # the response cache answers
    assert len(model.asked) == 1 and again.metrics == result.metrics and again.model == result.model
    with pytest.raises(UserInputError, match="takes no limit"):
        evaluate(model=model, reference=test, options=Options(limit=2))
    with pytest.raises(TypeError):
        evaluate(model=model, truth=test)  # the old name is gone
    rounds = iterate(Counting(), test, k=2, out=tmp_path / "rounds.csv")
    assert rounds.details.predictions == str(tmp_path / "rounds.csv") and rounds.metrics["recovered_in_round2"] == 2
