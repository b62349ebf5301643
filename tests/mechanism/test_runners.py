"""Chat models as mechanism predictors against a real HTTP server on 127.0.0.1 (see
conftest.py): answers, concurrency, retries with backoff, time-outs, hard failures, resume,
k-shot, an unreachable endpoint. The old ``run`` spelling is exercised as the hidden alias it
now is; ``predict`` / ``evaluate --model`` are the new verbs."""

from __future__ import annotations

import importlib.util
import json

import pytest

pytest.importorskip("httpx")

from chemassay.contract.result import read_result
from chemassay.models.openai_chat import ChatError, OpenAIChatClient, chat_url
from chemassay.suites.mechanism.data import omebench_file as bundled_path
from chemassay.suites.mechanism.prompts import build_prompt
from chemassay.suites.mechanism.records import load_reactions
from chemassay.suites.mechanism.retrieval import reaction_family
from chemassay.suites.mechanism.runners import prepare_jobs, read_answered

needs_drfp = pytest.mark.skipif(importlib.util.find_spec("drfp") is None,
                                reason="the drfp extra is not installed (pip install 'chemassay[drfp]')")


def lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_evaluate_scores_the_served_answers(cli, tmp_path, fake_openai, monkeypatch):
    monkeypatch.setenv("TEST_KEY", "sk-test-123")
    out, scored = tmp_path / "pred.jsonl", tmp_path / "score.json"
    result = cli(
        "mechanism", "evaluate", "--model", "openai:tiny-chem,api_key_env=TEST_KEY,concurrency=3,temperature=0",
        "--base-url", fake_openai.base_url, "--limit", "8", "--predictions-out", out, "--out", scored,
    )
    assert result.code == 0, result.stderr
    rows = lines(out)
    assert len(rows) == 8 and all(isinstance(r["response"], str) for r in rows)
    assert {r["model"] for r in rows} == {"openai:tiny-chem"} and {r["prompt_style"] for r in rows} == {"default"}
    requests = fake_openai.script.requests
    assert len(requests) == 8
    assert {r["auth"] for r in requests} == {"Bearer sk-test-123"}
    assert {r["body"]["model"] for r in requests} == {"tiny-chem"}
    assert {r["body"]["temperature"] for r in requests} == {0.0}
    assert 1 <= fake_openai.script.max_in_flight <= 3
    data = read_result(scored)
    assert data.n == 8  # --limit: only the reactions asked about are scored
    assert data.metrics["S_total"] == 1.0 and data.metrics["L"] == 1.0
    assert all(row.repairs["answer_tags"] == 1 for row in data.details.reactions)


def test_retries_backoff_and_resume(cli, tmp_path, fake_openai, gold_reactions):
    script = fake_openai.script
    first, second, third, fourth = (r.reaction_id for r in gold_reactions[:4])
    script.fail_first = {first: [500, 503], second: [429]}
    script.retry_after = "0"
    script.always_fail = {third: 400}
    out = tmp_path / "pred.jsonl"
    args = ("mechanism", "predict", "gold", "--model", "openai:m,retries=3", "--base-url", fake_openai.base_url,
            "--limit", "4", "--out", out)
    result = cli(*args)
    assert result.code == 1  # one reaction failed for good
    rows = {r["reaction_id"]: r for r in lines(out)}
    assert script.seen[first] == 3 and "response" in rows[first]  # two retries
    assert script.seen[second] == 2 and "response" in rows[second]
    assert "HTTP 400" in rows[third]["error"] and "response" not in rows[third]
    assert "response" in rows[fourth]
    assert script.seen[third] == 1  # a 400 is not retried
    # Resume: only the failed reaction is asked again; its old error line is replaced.
    del script.always_fail[third]
    before = len(script.requests)
    result = cli(*args)
    assert result.code == 0
    assert [r["rid"] for r in script.requests[before:]] == [third]
    rows = lines(out)
    assert sorted(r["reaction_id"] for r in rows) == sorted([first, second, third, fourth])
    assert all("response" in r for r in rows)
    assert "1 answered: 1 new, 0 from cache, 0 failed" in result.stdout and "; 3 already in" in result.stdout
    # A third run asks nothing.
    before = len(script.requests)
    assert cli(*args).code == 0 and len(script.requests) == before


def test_resume_refuses_another_model_and_drops_truncated_lines(tmp_path):
    out = tmp_path / "p.jsonl"
    good = {"reaction_id": "A", "response": "[]", "model": "openai:x", "prompt_style": "default"}
    out.write_text(json.dumps(good) + "\n" + '{"reaction_id": "B", "respo')
    assert set(read_answered(out, model="openai:x", prompt_style="default")) == {"A"}
    assert out.read_text() == json.dumps(good) + "\n"
    from chemassay.contract.errors import UserInputError

    with pytest.raises(UserInputError, match="--overwrite"):
        read_answered(out, model="openai:y", prompt_style="default")


def test_timeout_is_retried(tmp_path, fake_openai, gold_reactions):
    reaction = gold_reactions[0]
    fake_openai.script.delay_first = {reaction.reaction_id: 1.5}
    waits = []
    # this server does not stream: its reply is silent until whole, so the attempt's cap decides;
    # seconds_per_token=0 makes the cap the 0.4 s timeout itself
    client = OpenAIChatClient(base_url=fake_openai.base_url, model="m", timeout=0.4, max_retries=2, backoff=0.05,
                              sleep=lambda s: waits.append(s), seconds_per_token=0.0)
    with client:
        answer = client.complete([{"role": "user", "content": build_prompt("default", reaction)}])
    assert answer.attempts == 2 and "[ANSWER]" in answer.text
    assert waits == [0.05]


def test_backoff_schedule_and_giving_up(fake_openai, gold_reactions):
    reaction = gold_reactions[1]
    fake_openai.script.fail_first = {reaction.reaction_id: [502] * 10}
    waits = []
    client = OpenAIChatClient(base_url=fake_openai.base_url, model="m", max_retries=3, backoff=0.5, max_backoff=1.5,
                              sleep=lambda s: waits.append(s))
    with client, pytest.raises(ChatError, match="HTTP 502 after 4 attempts") as info:
        client.complete([{"role": "user", "content": build_prompt("default", reaction)}])
    assert info.value.status == 502 and info.value.attempts == 4
    assert waits == [0.5, 1.0, 1.5]  # doubling, capped


def test_unreachable_server_and_bad_urls(tmp_path):
    client = OpenAIChatClient(base_url="http://127.0.0.1:9/v1", model="m", max_retries=1, backoff=0.0, sleep=lambda s: None)
    with client, pytest.raises(ChatError, match="connection failed"):
        client.complete([{"role": "user", "content": "hi"}])
    assert chat_url("http://h/v1/") == "http://h/v1/chat/completions"
    assert chat_url("http://h/v1/chat/completions") == "http://h/v1/chat/completions"
    from chemassay.contract.errors import UserInputError
    from chemassay.suites.mechanism.api import load_predictor

    with pytest.raises(UserInputError, match="unknown model kind 'gpt-4o'"):
        load_predictor("gpt-4o")


def test_predict_needs_a_base_url(cli, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    result = cli("mechanism", "predict", "gold", "--model", "openai:m", "--out", tmp_path / "x.jsonl")
    assert result.code == 2 and "--base-url" in result.stderr
    assert not (tmp_path / "x.jsonl").exists()


def test_kshot_prompts_use_similar_reactions_but_never_the_query(gold_reactions, template_index):
    queries = gold_reactions[:10]
    jobs = prepare_jobs(queries, "kshot", k=3, pool_index=template_index)
    for job in jobs:
        assert len(job.exemplars) == 3
        assert all(reaction_family(e) != reaction_family(job.reaction.reaction_id) for e in job.exemplars)
        assert job.prompt.count("#### Example ") == 3
        assert job.prompt.endswith("**output**:")
        assert json.dumps(list(job.reaction.reactants)) in job.prompt
    # The paper's rule (App. G) leaves out only the identical reaction: with oMe-Template, whose
    # ids are oMe-Gold's, the same id is that reaction's template and is left out too ...
    leaky = prepare_jobs(queries, "kshot", k=3, pool_index=template_index, exclude_family=False)
    assert all(e != j.reaction.reaction_id for j in leaky for e in j.exemplars)
    # ... while instances of the query's family in an expanded pool (the paper's oMe-Silver) stay
    from chemassay.suites.mechanism.expand import expand_templates, load_substituents
    from chemassay.suites.mechanism.records import to_reaction
    from chemassay.suites.mechanism.retrieval import ReactionIndex

    templates = load_reactions(bundled_path("template")).reactions[:10]
    records = expand_templates([_raw(t.reaction_id) for t in templates], load_substituents(), per_template=2, seed=0)
    expanded = ReactionIndex([to_reaction(r) for r in records.records])
    strict = prepare_jobs(queries, "kshot", k=3, pool_index=expanded)
    assert all(reaction_family(e) != reaction_family(j.reaction.reaction_id) for j in strict for e in j.exemplars)
    paper = prepare_jobs(queries, "kshot", k=3, pool_index=expanded, exclude_family=False)
    same = [j for j in paper if any(reaction_family(e) == reaction_family(j.reaction.reaction_id) for e in j.exemplars)]
    assert len(same) >= 5


def _raw(reaction_id):
    from chemassay.suites.mechanism.records import read_records

    return next(r.data for r in read_records(bundled_path("template")).records if r.data["reaction_id"] == reaction_id)


def test_prompts_are_filled_like_the_published_script(gold_reactions):
    prompt = build_prompt("default", gold_reactions[0])
    assert '- **Reactants (SMILES)**: {["CC=O", "CC=O"]}' in prompt
    assert '"products_smiles": "["CC(O)CC=O"]",' in prompt
    assert '"conditions": "Base"' in prompt and "{ conditions }" not in prompt
    assert "[ANSWER] and [/ANSWER]" in prompt and len(prompt) > 6000
    cot = build_prompt("cot", gold_reactions[0])
    assert "think step by step" in cot and cot.rstrip().endswith("### Now, generate your output!")


@needs_drfp
def test_kshot_run_through_the_cli(cli, tmp_path, fake_openai, template_reactions):
    from chemassay.suites.mechanism.retrieval import usable_exemplars

    usable = {r.reaction_id for r in usable_exemplars(template_reactions)}
    assert 100 < len(usable) < len(template_reactions)  # Template steps with foreign labels are left out
    out = tmp_path / "kshot.jsonl"
    result = cli("mechanism", "predict", "gold", "--model", "openai:m", "--base-url", fake_openai.base_url,
                 "--prompt", "kshot", "--shots", "2", "--limit", "2", "--out", out)
    assert result.code == 0, result.stderr
    assert "usable as exemplars" in result.stderr
    rows = lines(out)
    assert {r["prompt_style"] for r in rows} == {"kshot2"}
    for row in rows:
        assert len(row["exemplars"]) == 2 and set(row["exemplars"]) <= usable
        assert all(reaction_family(e) != reaction_family(row["reaction_id"]) for e in row["exemplars"])
    prompts = [r["body"]["messages"][0]["content"] for r in fake_openai.script.requests]
    assert all("#### Example 2" in p and "#### Example 3" not in p for p in prompts)
