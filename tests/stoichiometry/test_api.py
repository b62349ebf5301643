"""The suite's contract: the Python API gives the CLI's numbers, the baselines are bag-predictor
kinds, a chat model behind a real local server is predicted and evaluated end to end, and the
datasets load through the registry."""

from __future__ import annotations

import json
import re

import pytest

import chemassay
from chemassay import stoichiometry
from chemassay.contract.errors import UserInputError
from chemassay.models import check_model, list_kinds, load_model
from chemassay.report.cards import undeclared_keys
from chemassay.runtime.files import sha256_file


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """A small ChemAlgebra T2 dataset (SMILES) built from the bundled USPTO-15K."""
    folder = tmp_path_factory.mktemp("api") / "smiles_t2_x1"
    result = stoichiometry.build("uspto-15k", folder, task="t2", seed=2, limit=80)
    assert result.task == "build" and result.metrics["datasets"] == 1 and (folder / "manifest.json").is_file()
    assert result.metrics["line_pairs"] == sum(
        v["lines"] for k, v in result.details.manifests[0]["files"].items() if k.startswith("src-"))
    return folder


def test_evaluate_in_memory_on_the_appendix_e_example():
    # prediction 3 H2O + 2 HCl + CO2 against truth 2 H2O + 2 HCl + CH4: TP 4, FP 2, FN 1
    result = stoichiometry.evaluate(["{3}H2O.{2}HCl.{1}CO2"], ["{2}H2O.{2}HCl.{1}CH4"], encoding="formula")
    assert result.suite == "stoichiometry" and result.task == "evaluate" and result.n == 1
    assert result.metrics["JAC"] == pytest.approx(4 / 7) and result.metrics["F1"] == pytest.approx(8 / 11)
    assert result.metrics["mol_JAC"] == pytest.approx(2 / 4) and result.metrics["BAL"] is None
    assert result.model.kind == "predictions" and result.model.spec == "predictions:<memory>"
    assert result.item_ids == ["1"] and "BAL" not in result.item_scores
    assert undeclared_keys("stoichiometry", result.metrics) == []


def test_evaluate_needs_one_source_of_predictions(dataset):
    with pytest.raises(UserInputError, match="either predictions"):
        stoichiometry.evaluate(reference=["{1}C"])
    with pytest.raises(UserInputError, match="needs sources"):
        stoichiometry.evaluate(model=f"algebraic:{dataset}", reference=["{1}C"])
    with pytest.raises(UserInputError, match="no such prediction file.*list of bag strings"):
        stoichiometry.evaluate("{1}C", ["{1}C"])


def test_api_and_cli_give_the_same_numbers(cli, dataset, tmp_path):
    src, tgt = dataset / "src-test_cross.txt", dataset / "tgt-test_cross.txt"
    new = tmp_path / "new.txt"
    report = tmp_path / "predict.json"
    result = cli("stoichiometry", "predict", "--model", f"algebraic:{dataset}", "--src", src, "--out", new,
                 "--report", report)
    assert result.code == 0, result.stderr
    predicted = json.loads(report.read_text())
    assert predicted["task"] == "predict" and predicted["config"]["train_split"] == "train_cross"
    assert predicted["model"]["kind"] == "algebraic" and predicted["metrics"]["unknown_reactions"] == 0

    evaluated = tmp_path / "evaluate.json"
    assert cli("stoichiometry", "evaluate", new, tgt, "--src", src, "--out", evaluated).code == 0
    by_cli = json.loads(evaluated.read_text())
    by_api = stoichiometry.evaluate(new, tgt, src)
    assert by_cli["task"] == "evaluate"
    assert by_cli["metrics"] == by_api.metrics
    assert by_cli["intervals"] == json.loads(by_api.to_json())["intervals"]
    assert by_cli["model"]["kind"] == "predictions" and by_cli["model"]["checksum"] == sha256_file(new)

    # the model run in process gives the same numbers as its predictions file
    live, written = tmp_path / "live.json", tmp_path / "written.txt"
    result = cli("stoichiometry", "evaluate", tgt, "--model", f"algebraic:{dataset}", "--src", src, "--out", live,
                 "--predictions-out", written)
    assert result.code == 0, result.stderr
    by_model = json.loads(live.read_text())
    assert by_model["metrics"] == by_cli["metrics"] and written.read_text() == new.read_text()
    assert by_model["model"]["kind"] == "algebraic" and by_model["model"]["parameters"]["split"] == "auto"
    assert by_model["details"]["prediction_counts"]["failed"] == 0


def test_per_item_scores_are_the_metrics_and_intervals_bracket_them(dataset):
    result = stoichiometry.evaluate(model=f"copy-coefficient:{dataset}", sources=dataset / "src-test_cross.txt",
                                    reference=dataset / "tgt-test_cross.txt", bootstrap=200, seed=1)
    assert set(result.item_scores) == set(result.metrics)
    assert len(result.item_ids) == result.n == len(result.item_scores["EM"])
    for key, values in result.item_scores.items():
        present = [v for v in values if v is not None]
        assert sum(present) / len(present) == pytest.approx(result.metrics[key])
        interval = result.intervals[key]
        assert interval.low <= result.metrics[key] + 1e-12 and result.metrics[key] <= interval.high + 1e-12
        if key in {"EM", "ACC", "ALO", "VAL", "BAL", "DEF", "EXC", "DE"}:  # proportions: Wilson
            assert interval.method == "wilson", key
        else:
            assert interval.method == "bootstrap" and interval.resamples == 200 and interval.seed == 1, key
    again = stoichiometry.evaluate(model=f"copy-coefficient:{dataset}", sources=dataset / "src-test_cross.txt",
                                   reference=dataset / "tgt-test_cross.txt", bootstrap=200, seed=1)
    assert again.intervals == result.intervals


def test_baselines_are_registered_bag_predictors(dataset, tmp_path):
    kinds = {k.name: k for k in list_kinds(protocol="bag-predictor", suite="stoichiometry")}
    assert {"algebraic", "copy-coefficient"} <= set(kinds)
    assert kinds["algebraic"].suite == "stoichiometry" and kinds["algebraic"].arg == "TRAIN_DIR"
    model = load_model(f"algebraic:{dataset},split=train", "bag-predictor")
    assert check_model(model, "bag-predictor").passed
    assert model.predict_bags(["{1}O=C=O.{4}[H][H]", "not a bag"])[1] == ""
    assert 1 in model.failures and "not a readable bag" in model.failures[1]
    assert model.counts.unknown == 1 and model.split_used == "train"
    for spec, message in ((f"algebraic:{dataset},spilt=train", "unknown option"),
                          (f"algebraic:{tmp_path / 'missing'}", "no such dataset folder"),
                          ("algebraic", "needs a training folder"),
                          (f"copy-coefficient:{dataset},split=test", "split must be one of")):
        with pytest.raises(UserInputError, match=message):
            load_model(spec, "bag-predictor")
    # the oracle needs no training folder; the spec takes only options then
    oracle = dataset / "tgt-test_out.txt"
    bags = stoichiometry.predict(f"algebraic:oracle={oracle}", dataset / "src-test_out.txt")
    assert len(bags) == len(oracle.read_text().splitlines())
    with pytest.raises(UserInputError, match="line-aligned"):
        stoichiometry.predict(f"algebraic:oracle={oracle}", ["{1}C"])


def test_a_python_model_object_and_its_failed_items(dataset):
    class HalfBroken:
        """Answers the first input and fails the rest, recording why (as text models do)."""

        def __init__(self):
            self.failures = {}

        def predict_bags(self, sources):
            self.failures = {i: "request failed: HTTP 503" for i in range(1, len(sources))}
            return ["{1}C.{2}O"] + [""] * (len(sources) - 1)

    sabatier = ["{1}O=C=O.{4}[H][H]", "{2}O=C=O.{8}[H][H]", "{3}O=C=O.{12}[H][H]"]
    result = stoichiometry.evaluate(model=HalfBroken(), sources=sabatier, reference=["{1}C.{2}O"] * 3)
    assert result.metrics["EM"] == pytest.approx(1 / 3) and result.metrics["VAL"] == pytest.approx(1 / 3)
    assert [row.reason for row in result.details.rows] == [None, "request failed: HTTP 503", "request failed: HTTP 503"]
    assert result.details.prediction_counts.failed == 2 and result.model.kind == "python"
    assert [(s.line, s.item, s.reason) for s in result.skipped] == [
        (2, sabatier[1], "request failed: HTTP 503"), (3, sabatier[2], "request failed: HTTP 503")]
    # the run pipeline asks identical inputs once: the first answer stands for all three
    same = stoichiometry.evaluate(model=HalfBroken(), sources=sabatier[:1] * 3, reference=["{1}C.{2}O"] * 3)
    assert same.metrics["EM"] == 1.0 and same.skipped == []
    run = stoichiometry.run_predictions(HalfBroken(), ["{1}C", "{1}O"])
    assert [(s.line, s.reason) for s in run.result.skipped] == [(2, "request failed: HTTP 503")]


def test_common_options_by_keyword_or_as_one_object(tmp_path, isolated_home):
    from chemassay.contract import Options

    calls = []

    class Sabatier:
        def predict_bags(self, sources):
            calls.append(list(sources))
            return ["{1}C.{2}O"] * len(sources)

    sources, reference = ["{1}O=C=O.{4}[H][H]", "{1}O=C=O.{2}[H][H]"], ["{1}C.{2}O"] * 2
    by_keywords = stoichiometry.evaluate(model=Sabatier(), sources=sources, reference=reference, seed=3, bootstrap=50,
                                         out=tmp_path / "bags.txt")
    assert (tmp_path / "bags.txt").read_text() == "{1}C.{2}O\n{1}C.{2}O\n"
    by_object = stoichiometry.evaluate(model=Sabatier(), sources=sources, reference=reference,
                                       options=Options(seed=3, bootstrap=50, cache=True))
    assert by_object.metrics == by_keywords.metrics and by_object.intervals == by_keywords.intervals
    # the response cache of the run pipeline: the same run again asks the model nothing
    again = stoichiometry.evaluate(model=Sabatier(), sources=sources, reference=reference,
                                   options=Options(seed=3, bootstrap=50), cache=True)
    assert again.metrics == by_keywords.metrics and len(calls) == 2
    with pytest.raises(TypeError):
        stoichiometry.evaluate(["{1}C"], targets=["{1}C"])  # the old name is gone
    with pytest.raises(UserInputError, match="out= keeps a model's"):
        stoichiometry.evaluate(["{1}C"], ["{1}C"], out=tmp_path / "x.txt")


SOURCES = ["{1}O=C=O.{4}[H][H]", "{2}CCO.{2}CC(=O)O", "{1}CC(=O)Cl.{1}CN"]
TARGETS = ["{1}C.{2}O", "{2}CCOC(C)=O.{2}O", "{1}CNC(C)=O.{1}Cl"]


def chemist(body):
    """A chat model that balances the first two reactions (once in prose) and fumbles the third."""
    prompt = body["messages"][-1]["content"]
    source = re.search(r"Reactants: (.*)", prompt).group(1).strip()
    answers = {SOURCES[0]: "Balanced: CO2 + 4 H2 -> CH4 + 2 H2O, so the products are\n{1}C.{2}O",
               SOURCES[1]: "{2}CCOC(C)=O.{2}O", SOURCES[2]: "{1}CNC(C)=O"}
    return answers[source]


def test_a_chat_model_predicts_and_is_evaluated_end_to_end(cli, openai_server, isolated_home, tmp_path):
    openai_server.responder = chemist
    (tmp_path / "src.txt").write_text("".join(s + "\n" for s in SOURCES))
    (tmp_path / "tgt.txt").write_text("".join(t + "\n" for t in TARGETS))
    spec = f"openai:chemist-1,base_url={openai_server.base_url}"
    predicted = tmp_path / "pred.txt"
    result = cli("stoichiometry", "predict", "--model", spec, "--src", tmp_path / "src.txt", "--out", predicted)
    assert result.code == 0, result.stderr
    assert predicted.read_text().splitlines() == ["{1}C.{2}O", "{2}CCOC(C)=O.{2}O", "{1}CNC(C)=O"]
    prompts = [r["messages"][-1]["content"] for r in openai_server.chat_requests()]
    assert len(prompts) == 3 and all("{n}X" in p and "SMILES" in p for p in prompts)

    out = tmp_path / "evaluate.json"
    result = cli("stoichiometry", "evaluate", predicted, tmp_path / "tgt.txt", "--src", tmp_path / "src.txt",
                 "--out", out)
    assert result.code == 0, result.stderr
    scored = json.loads(out.read_text())
    assert scored["metrics"]["EM"] == pytest.approx(2 / 3) and scored["metrics"]["VAL"] == 1.0
    assert scored["metrics"]["DEF"] == pytest.approx(1 / 3)  # the third answer lost the HCl
    # the same model run in process (answers from the response cache) gives the same numbers
    live = stoichiometry.evaluate(model=spec, sources=tmp_path / "src.txt", reference=tmp_path / "tgt.txt")
    assert live.metrics == scored["metrics"] and live.model.kind == "openai" and live.model.name == "openai:chemist-1"
    assert len(openai_server.chat_requests()) == 3

    # a server that refuses every request: each input is a failed item with the reason, none lost
    openai_server.refuse_chat = True
    failed = stoichiometry.evaluate(model=spec + ",cache=false,retries=0", sources=SOURCES, reference=TARGETS)
    assert failed.n == 3 and failed.metrics["VAL"] == 0.0 and failed.details.prediction_counts.failed == 3
    assert all("request failed" in row.reason for row in failed.details.rows)

    # the server URL may come from --base-url instead of the spec
    openai_server.refuse_chat = False
    again = tmp_path / "again.txt"
    result = cli("stoichiometry", "predict", "--model", "openai:chemist-1", "--base-url", openai_server.base_url,
                 "--src", tmp_path / "src.txt", "--out", again)
    assert result.code == 0, result.stderr
    assert again.read_text() == predicted.read_text()


def test_uspto_datasets_load_through_the_registry():
    test = chemassay.load_dataset("uspto15k", part="test")  # an alias of uspto-15k
    assert len(test) == 3000 and ">" in test[0] and " " in test[0]  # reaction SMILES and its edits
    parts = stoichiometry.load_dataset("uspto-15k", limit=5)
    assert set(parts) == {"train", "valid", "test"} and all(len(lines) == 5 for lines in parts.values())
    assert parts["test"] == test[:5]
    # lines in memory balance exactly as the dataset read from its files
    in_memory = stoichiometry.balance(test[:30])
    from_files = stoichiometry.balance("uspto-15k", splits=["test"], limit=30)
    assert in_memory.metrics == from_files.metrics and from_files.dataset.name == "uspto-15k"
    assert stoichiometry.balance({"test": test[:30]}).details.per_split == from_files.details.per_split


def test_verify_and_build_results(dataset, tmp_path):
    verified = stoichiometry.verify(dataset)
    assert verified.task == "verify" and verified.metrics["ok"] is True and verified.metrics["problems"] == 0
    uspto_t = stoichiometry.build_uspto_t("uspto-15k", tmp_path / "t1", kind="t1", limit=10)
    assert uspto_t.metrics["line_pairs"] == 30 and stoichiometry.verify(tmp_path / "t1").metrics["ok"] is True
