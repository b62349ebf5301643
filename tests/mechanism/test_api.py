"""``chemassay.mechanism``: evaluate on files and in-memory inputs (the CLI's numbers),
model kinds through the registry (baselines, a chat model on the shared local server),
predict with resume, verify, expand, the registry loader; numbers unchanged from the
previous release."""

from __future__ import annotations

import importlib.util
import json

import chemassay.mechanism as mechanism
import pytest

import chemassay
from chemassay.contract.result import read_result
from chemassay.models import check_model
from chemassay.suites.mechanism.baselines import gold_oracle

needs_drfp = pytest.mark.skipif(importlib.util.find_spec("drfp") is None,
                                reason="the drfp extra is not installed (pip install 'chemassay[drfp]')")


def gold_answer_text(steps) -> str:
    """A chatty answer holding ``steps`` between the [ANSWER] tags the paper's prompt asks for."""
    return f"Here is the mechanism.\n[ANSWER]\n{json.dumps(steps, indent=1)}\n[/ANSWER]"


def test_file_dict_and_records_give_the_cli_numbers(cli, tmp_path, gold_reactions):
    rows = gold_oracle(gold_reactions[:5])
    rows[1]["mechanism"] = rows[1]["mechanism"][:1]  # a partly right answer
    texts = {row["reaction_id"]: gold_answer_text(row["mechanism"]) for row in rows}
    pred = tmp_path / "pred.jsonl"
    pred.write_text("".join(json.dumps({"reaction_id": rid, "response": text}) + "\n" for rid, text in texts.items()))
    assert cli("mechanism", "evaluate", pred, "--out", tmp_path / "cli.json").code == 0
    from_cli = read_result(tmp_path / "cli.json")
    from_file = mechanism.evaluate(pred)
    from_texts = mechanism.evaluate(texts)
    from_steps = mechanism.evaluate({row["reaction_id"]: row["mechanism"] for row in rows})
    from_records = mechanism.evaluate([{"reaction_id": rid, "response": text} for rid, text in texts.items()])
    for result in (from_file, from_texts, from_steps, from_records):
        assert result.metrics == from_cli.metrics
        assert result.item_scores == from_cli.item_scores and result.intervals == from_cli.intervals
    assert from_cli.task == "evaluate" and from_cli.model.kind == "predictions" and from_cli.model.checksum
    assert from_texts.model.spec == "predictions:<memory>" and from_texts.model.checksum != from_steps.model.checksum
    assert from_cli.metrics["S_total"] == pytest.approx(sum(from_cli.item_scores["S_total"]) / 196)
    assert from_cli.item_ids[:5] == [r.reaction_id for r in gold_reactions[:5]]
    interval = from_cli.intervals["S_total"]
    assert interval.low <= from_cli.metrics["S_total"] <= interval.high and interval.resamples == 1000


@needs_drfp
def test_baselines_are_model_kinds_with_the_pinned_numbers():
    oracle = mechanism.evaluate(model="gold-oracle", bootstrap=0)
    assert [oracle.metrics[k] for k in ("S_total", "S_partial", "V", "L")] == [1.0, 1.0, 1.0, 1.0]
    assert oracle.model.kind == "gold-oracle" and oracle.model.parameters["gold"] == "gold" and not oracle.details.warnings
    neighbour = mechanism.evaluate(model="nearest-neighbour", bootstrap=0)
    # the same values as the demo (docs/mechanism.md): S_total 0.0629, S_partial 0.0742, V 1.0, L 0.1928
    assert neighbour.metrics["S_total"] == pytest.approx(0.06288794362567093, abs=1e-15)
    assert neighbour.metrics["S_partial"] == pytest.approx(0.074172390293728, abs=1e-15)
    assert neighbour.metrics["V"] == 1.0 and neighbour.metrics["L"] == pytest.approx(0.192826957622876, abs=1e-15)
    assert neighbour.model.spec == "nearest-neighbour" and neighbour.model.parameters["pool_size"] == 166


@needs_drfp
def test_numbers_unchanged_from_the_previous_release(tmp_path):
    """Values the previous release's CLI printed on bundled data (recorded before the move
    onto the contract): strict + rounded scoring, another pool, scoring against templates."""
    run = mechanism.predict("nearest-neighbour", "gold")
    rows = [{"reaction_id": r["reaction_id"], "mechanism": r["mechanism"]} for r in run.rows]
    strict = mechanism.evaluate(rows, round_to=2, strict=True, bootstrap=0).metrics
    assert (strict["S_total"], strict["S_partial"], strict["L"]) == (
        pytest.approx(0.06275510204081633, abs=1e-15), pytest.approx(0.07408163265306122, abs=1e-15),
        pytest.approx(0.19239795918367347, abs=1e-15))
    on_templates = mechanism.evaluate(rows, reference="template", bootstrap=0)
    missing = [item for item in on_templates.skipped if item.reason.startswith("no prediction:")]
    assert on_templates.n == 166 and len(on_templates.skipped) - len(missing) == 39  # rows and records left out
    assert len(missing) == on_templates.metrics["n_missing"] == 8  # scored as empty mechanisms
    assert on_templates.metrics["S_partial"] == pytest.approx(0.0017902569094463694, abs=1e-15)
    assert on_templates.metrics["V"] == pytest.approx(0.9518072289156626, abs=1e-15)
    gold_pool = mechanism.evaluate(model="nearest-neighbour:pool=gold", bootstrap=0).metrics
    assert gold_pool["S_total"] == pytest.approx(0.129283486040556, abs=1e-15)
    assert gold_pool["exact_mechanisms"] == 5
    checked = mechanism.verify("template").metrics
    assert (checked["reactions"], checked["steps"], checked["errors"], checked["warnings"]) == (167, 722, 136, 1)


@needs_drfp
def test_predict_writes_and_resumes(tmp_path):
    out = tmp_path / "nn.jsonl"
    first = mechanism.predict("nearest-neighbour", "gold", limit=5, out=out)
    assert (first.asked, first.answered, first.already_done) == (5, 5, 0)
    again = mechanism.predict("nearest-neighbour", "gold", limit=7, out=out)
    assert (again.asked, again.already_done) == (2, 5) and len(again.rows) == 7
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [row["reaction_id"] for row in lines] == [row["reaction_id"] for row in again.rows]
    assert all(row["neighbour"]["reaction_id"] for row in lines)
    from chemassay.contract.errors import UserInputError

    with pytest.raises(UserInputError, match="--overwrite"):
        mechanism.predict("gold-oracle", "gold", limit=2, out=out)


def test_chat_model_end_to_end_on_the_shared_server(openai_server, gold_reactions):
    pytest.importorskip("httpx", reason="the llm extra is not installed")
    by_prompt = {}
    from chemassay.suites.mechanism.prompts import build_prompt

    for reaction in gold_reactions[:6]:
        by_prompt[build_prompt("default", reaction)] = gold_answer_text(gold_oracle([reaction])[0]["mechanism"])
    openai_server.responder = lambda body: by_prompt.get(body["messages"][-1]["content"], "no idea")
    spec = f"openai:chem-llm,base_url={openai_server.base_url}"
    result = mechanism.evaluate(model=spec, limit=6)
    assert result.n == 6 and result.metrics["S_total"] == 1.0 and result.metrics["n_unparsed"] == 0
    assert result.model.kind == "openai" and result.model.parameters["base_url"] == openai_server.base_url
    requests = openai_server.chat_requests()
    assert len(requests) == 6
    assert all(len(r["messages"]) == 1 and r["messages"][0]["role"] == "user" for r in requests)  # the paper's prompt alone
    # The response cache (model + prompt + parameters): the same evaluation asks nothing again.
    assert mechanism.evaluate(model=spec, limit=6).metrics == result.metrics
    assert len(openai_server.chat_requests()) == 6


@needs_drfp
def test_chat_model_through_the_cli_and_check_model(cli, tmp_path, openai_server):
    pytest.importorskip("httpx", reason="the llm extra is not installed")
    # The server's default answer: one step in prose-free JSON with a spelled-out type.
    out, pred = tmp_path / "r.json", tmp_path / "pred.jsonl"
    result = cli("mechanism", "evaluate", "--model", "openai:m", "--base-url", openai_server.base_url,
                 "--limit", "3", "--prompt", "cot", "--predictions-out", pred, "--out", out)
    assert result.code == 0, result.stderr
    data = read_result(out)
    assert data.n == 3 and data.metrics["n_scored"] == 3 and data.config["prompt"] == "cot"
    assert all(row.repairs.get("smiles_key:intermediate") == 1 for row in data.details.reactions)
    assert {row["prompt_style"] for row in map(json.loads, pred.read_text().splitlines())} == {"cot"}
    assert "think step by step" in openai_server.chat_requests()[0]["messages"][0]["content"]
    for spec in (f"openai:m,base_url={openai_server.base_url}", "gold-oracle", "nearest-neighbour"):
        assert check_model(spec, "mechanism-predictor").passed, spec


def test_a_failed_request_is_a_failed_item_with_its_reason(openai_server):
    pytest.importorskip("httpx", reason="the llm extra is not installed")
    openai_server.refuse_chat = True  # the server answers 404: the client gives up at once
    spec = f"openai:m,base_url={openai_server.base_url},retries=0"
    result = mechanism.evaluate(model=spec, limit=2, bootstrap=0)
    assert result.metrics["n_unparsed"] == 2 and result.config["run"]["failed"] == 2
    failed = [item for item in result.skipped if item.reason.startswith("unparsed prediction")]
    assert len(failed) == 2 and all("HTTP 404" in item.reason for item in failed)


def test_python_object_as_predictor(gold_reactions):
    class Echo:
        def predict_mechanisms(self, records):
            return [[{"subtype": "acid_base_proton_transfer", "intermediate_smiles": r["products"]}] for r in records]

    result = mechanism.evaluate(model=Echo(), limit=3, bootstrap=0)
    assert result.n == 3 and result.metrics["n_scored"] == 3 and result.model.kind == "python"


def test_common_options_by_keyword_or_as_one_object(tmp_path, isolated_home):
    from chemassay.contract import Options

    by_keywords = mechanism.evaluate(model="gold-oracle", limit=3, bootstrap=50, seed=2, out=tmp_path / "a.jsonl")
    by_object = mechanism.evaluate(model="gold-oracle", options=Options(limit=3, bootstrap=50, seed=2,
                                                                        out=tmp_path / "b.jsonl"))
    assert by_object.n == 3 and by_object.metrics == by_keywords.metrics
    assert by_object.intervals == by_keywords.intervals and by_object.model == by_keywords.model
    assert (tmp_path / "b.jsonl").read_text() == (tmp_path / "a.jsonl").read_text()
    with pytest.raises(TypeError):
        mechanism.evaluate(model="gold-oracle", gold="gold")  # the old name is gone

    calls = []

    class Echo:
        def predict_mechanisms(self, records):
            calls.append(len(records))
            return [[{"subtype": "acid_base_proton_transfer", "intermediate_smiles": r["products"]}] for r in records]

    # a model that is not streamed runs through the run pipeline: its response cache answers again
    first = mechanism.evaluate(model=Echo(), limit=4, bootstrap=0, cache=True)
    again = mechanism.evaluate(model=Echo(), limit=4, bootstrap=0, cache=True)
    assert again.metrics == first.metrics and calls == [4]


def test_registry_loader_and_names():
    gold = chemassay.load_dataset("gold")
    assert len(gold) == 196 and gold[0].reaction_id == "NR-001"
    assert len(chemassay.load_dataset("template")) == 166  # one repeated id is left out
    assert len(chemassay.load_dataset("omebench", part="templates", records=True)) == 167
    assert len(mechanism.load_dataset("gold")) == 196 and len(mechanism.load_reactions("ome-template")) == 166
    from chemassay.contract.errors import UserInputError

    with pytest.raises(UserInputError, match="no such oMeBench file"):
        mechanism.load_reactions("no-such-file.json")


def test_verify_and_expand_api(tmp_path):
    checked = mechanism.verify("gold")
    assert checked.task == "verify" and checked.metrics["problems.step_numbering"] == 4
    assert mechanism.validate is mechanism.verify
    templates = tmp_path / "some-templates.jsonl"
    some = chemassay.load_dataset("omebench", part="templates", records=True)[:15]
    templates.write_text("".join(json.dumps(record) + "\n" for record in some))
    expanded = mechanism.expand(templates, per_template=2, seed=3)
    assert expanded.records and expanded.manifest is None and expanded.templates_read == 15
    written = mechanism.expand(templates, per_template=2, seed=3, out=tmp_path / "x.jsonl")
    assert written.records == expanded.records and written.manifest["seed"] == 3
    assert written.manifest_path.is_file()


def test_evaluate_argument_errors():
    from chemassay.contract.errors import UserInputError

    with pytest.raises(UserInputError, match="not both"):
        mechanism.evaluate({"NR-001": "[]"}, model="gold-oracle")
    with pytest.raises(UserInputError, match="or neither"):
        mechanism.evaluate()
    with pytest.raises(UserInputError, match="tau"):
        mechanism.evaluate({"NR-001": "[]"}, tau=2.0)
    with pytest.raises(UserInputError, match="expected a path"):
        mechanism.evaluate(42)
