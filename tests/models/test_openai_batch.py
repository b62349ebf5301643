"""``batch_api=true``: chat requests through an OpenAI-compatible Batch API, against a real local
server with files and batches (``support.batch_server``): every request answered as the direct
path answers it, a run killed while polling resumes its batch without submitting again, per-line
errors and an expired or failed batch become failed requests with their reason, and one response
cache serves both paths."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip("httpx")

from chemassay.contract.errors import UserInputError  # noqa: E402
from chemassay.models import load_model, run  # noqa: E402
from chemassay.models.openai_batch import BatchChatClient, custom_id  # noqa: E402
from chemassay.models.openai_chat import OpenAIChatClient  # noqa: E402
from chemassay.models.text_model import EmbeddingsModel  # noqa: E402
from support.batch_server import BatchServer  # noqa: E402
from support.openai_server import OpenAIServer  # noqa: E402

MOLECULES = ["CCO", "CC(=O)O", "c1ccccc1", "CCN", "CCCl", "OCCO", "CC#N", "CC(C)O", "C1CCOC1", "CCOC(C)=O"]
BAGS = [f"{{1}}{a}.{{1}}{MOLECULES[(i + 1) % len(MOLECULES)]}" for i, a in enumerate(MOLECULES)]


@pytest.fixture
def server():
    server = BatchServer(delay=0.2)
    yield server
    server.close()


def spec(server, **options: str) -> str:
    settings = {"base_url": server.base_url, "batch_api": "true", "batch_poll": "0.02", "backoff": "0.01",
                **options}
    return "openai:chemist," + ",".join(f"{key}={value}" for key, value in settings.items() if value is not None)


def body_texts(bodies) -> list[str]:
    skip = ("path", "stream", "stream_options")  # the direct path streams; a batch line cannot
    return sorted(json.dumps({k: v for k, v in body.items() if k not in skip}, sort_keys=True) for body in bodies)


def uploaded_lines(server: BatchServer) -> list[dict]:
    inputs = {batch["input_file_id"] for batch in server.batches.values()}
    return [json.loads(line) for file_id in sorted(inputs) for line in server.files[file_id].decode().splitlines()]


def test_a_batch_run_answers_every_request_as_the_direct_path_does(server, isolated_home, tmp_path):
    direct = run(spec(server, batch_api=None, cache="false"), "bag-predictor", BAGS)
    sent_directly = server.chat_requests()
    assert len(sent_directly) == len(BAGS) and server.uploads == 0
    batched = run(load_model(spec(server, cache="false"), "bag-predictor", {"out_dir": str(tmp_path)}),
                  "bag-predictor", BAGS)
    assert batched.outputs == direct.outputs and not batched.failures
    assert batched.outputs[0] == "{1}" + MOLECULES[1]  # the responder's answer, mapped back to its item
    # one upload and one batch, no chat request sent directly, the same bodies answered
    assert (server.uploads, server.creations) == (1, 1) and len(server.chat_requests()) == len(BAGS)
    assert body_texts(server.batch_lines) == body_texts(sent_directly)
    lines = uploaded_lines(server)
    assert all(line["method"] == "POST" and line["url"] == "/v1/chat/completions" for line in lines)
    assert sorted(line["custom_id"] for line in lines) == sorted(custom_id(line["body"]) for line in lines)
    batch = next(iter(server.batches.values()))
    assert batch["endpoint"] == "/v1/chat/completions" and batch["completion_window"] == "24h"
    assert server.downloads == 1  # the output file (no line failed: no error file)
    summary = batched.requests
    assert (summary.new, summary.cached, summary.failed) == (len(BAGS), 0, 0) and summary.prompt_tokens > 0
    assert not (tmp_path / "batches").exists()  # the state goes once the answers are kept


def test_identical_requests_go_once_and_answer_every_copy(server, isolated_home):
    client = BatchChatClient(OpenAIChatClient(server.base_url, "m"), poll_interval=0.02)
    same = [{"role": "user", "content": "Write 2 different molecules"}]
    seen: list[int] = []
    outcomes = client.complete_many([same, same, [{"role": "user", "content": "Write 3 different molecules"}]],
                                    on_result=lambda index, outcome: seen.append(index))
    assert len(uploaded_lines(server)) == 2 and sorted(seen) == [0, 1, 2]
    assert outcomes[0].text == outcomes[1].text and outcomes[2].text.count("\n") == 2
    assert client.stats.summary().new == 3


def test_per_line_errors_become_failed_requests_with_their_reason(server, isolated_home):
    faults = {BAGS[1]: "http-400", BAGS[2]: "error", BAGS[3]: "length"}
    server.line_error = lambda body: next((f for bag, f in faults.items() if bag in body["messages"][-1]["content"]),
                                          None)
    done = run(spec(server), "bag-predictor", BAGS)
    assert sorted(done.failures) == [1, 2, 3]
    assert "request failed: HTTP 400: this model does not take that request" in done.failures[1]
    assert "request failed: batch: server_error: the request could not be run" in done.failures[2]
    assert "request failed: answer cut off (finish_reason=length)" in done.failures[3]  # the direct path's contract
    assert done.requests.failed == 3 and done.requests.new == 7
    assert server.downloads == 2  # the output file and the error file
    # failures are not cached: a rerun sends exactly those three, in a new batch
    server.line_error = None
    again = run(spec(server), "bag-predictor", BAGS)
    assert not again.failures and (again.requests.new, again.requests.cached) == (3, 7)
    assert server.creations == 2 and len(uploaded_lines(server)) == 10 + 3


@pytest.mark.parametrize("outcome", ["expired", "failed"])
def test_an_expired_or_failed_batch_fails_the_unanswered_requests_with_the_reason(server, isolated_home, outcome):
    server.outcome, server.expire_after = outcome, 4
    done = run(spec(server), "bag-predictor", BAGS)
    if outcome == "expired":  # the lines answered in time count; the error file says why the others did not
        assert sorted(done.failures) == list(range(4, 10)) and done.requests.new == 4
        assert all("batch: batch_expired: This request could not be executed" in reason
                   for reason in done.failures.values())
    else:
        assert sorted(done.failures) == list(range(10))
        assert all("request failed: batch failed: model not found for this batch" in reason
                   for reason in done.failures.values())
    server.outcome = "completed"
    again = run(spec(server), "bag-predictor", BAGS)  # a rerun sends the rest in a new batch
    assert not again.failures and server.creations == 2


def test_the_response_cache_is_shared_with_the_direct_path(server, isolated_home):
    first, second = BAGS[:5], BAGS[5:]
    direct = run(spec(server, batch_api="false"), "bag-predictor", first)
    assert direct.requests.new == 5 and server.uploads == 0
    from_cache = run(spec(server), "bag-predictor", first)  # batch after direct: nothing submitted
    assert from_cache.outputs == direct.outputs and from_cache.requests.cached == 5 and server.uploads == 0
    batched = run(spec(server), "bag-predictor", second)
    assert batched.requests.new == 5 and server.creations == 1
    asked = len(server.chat_requests())
    again = run(spec(server, batch_api="false"), "bag-predictor", second)  # direct after batch: nothing asked
    assert again.outputs == batched.outputs and again.requests.cached == 5 and len(server.chat_requests()) == asked


def test_a_batch_the_server_no_longer_knows_is_submitted_again(server, isolated_home, tmp_path, caplog):
    client = BatchChatClient(OpenAIChatClient(server.base_url, "m"), poll_interval=0.02, state_dir=tmp_path)
    conversations = [[{"role": "user", "content": f"Write {n} different molecules"}] for n in (1, 2)]
    bodies = [{"model": "m", "messages": c, **client.params} for c in conversations]
    lines = {custom_id(body): body for body in bodies}
    client._submit(lines, client._state_path(lines), None)  # a run that was killed after submitting
    assert len(list(tmp_path.glob("*.json"))) == 1 and server.creations == 1
    server.forget()
    with caplog.at_level("WARNING", logger="chemassay"):
        outcomes = client.complete_many(conversations)
    assert [o.text.count("\n") for o in outcomes] == [0, 1] and server.creations == 2
    assert "no longer knows batch" in caplog.text and not list(tmp_path.glob("*.json"))


def test_a_server_without_a_batch_api_ends_the_run_with_one_line(isolated_home):
    plain = OpenAIServer()
    try:
        with pytest.raises(UserInputError, match=r"POST /files\): HTTP 404.*drop batch_api=true"):
            run(spec(plain), "bag-predictor", BAGS[:2])
    finally:
        plain.close()


def test_batch_options_are_checked_and_embeddings_are_asked_directly(server, isolated_home, caplog):
    with pytest.raises(UserInputError, match="batch_poll"):
        load_model(spec(server, batch_poll="-1"), "bag-predictor")
    with caplog.at_level("WARNING", logger="chemassay"):
        encoder = load_model(spec(server), "encoder")
    assert isinstance(encoder, EmbeddingsModel) and "asked directly" in caplog.text


@pytest.mark.slow
def test_a_run_killed_while_polling_resumes_its_batch_without_submitting_again(server, tmp_path):
    """SIGKILL while the CLI polls (a preempted job): the rerun finds the batch in the state file
    beside --out and polls it; exactly one upload and one batch in all."""
    server.delay = 3600.0  # the batch stays in progress until the test lets it finish
    src, tgt, out = tmp_path / "src.txt", tmp_path / "tgt.txt", tmp_path / "result.json"
    src.write_text("".join(bag + "\n" for bag in BAGS))
    tgt.write_text("".join("{1}" + MOLECULES[(i + 1) % len(MOLECULES)] + "\n" for i in range(len(BAGS))))
    command = [sys.executable, "-m", "chemassay", "stoichiometry", "evaluate", str(tgt), "--src", str(src),
               "--model", spec(server), "--bootstrap", "0", "--out", str(out)]
    env = {**os.environ, "CHEMASSAY_HOME": str(tmp_path / "home"), "PYTHONPATH": os.pathsep.join(sys.path)}
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline and server.polls < 3 and process.poll() is None:
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert (server.uploads, server.creations) == (1, 1) and server.polls >= 3
    states = list((tmp_path / "batches").glob("*.json"))
    assert len(states) == 1
    state = json.loads(states[0].read_text())
    assert state["batch_id"] in server.batches and len(state["custom_ids"]) == len(BAGS)
    server.delay = 0.0
    finished = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stderr
    assert f"resuming batch {state['batch_id']}" in finished.stderr
    assert (server.uploads, server.creations) == (1, 1)  # polled, not submitted again
    result = json.loads(out.read_text())
    assert result["requests"]["new"] == len(BAGS) and result["requests"]["failed"] == 0
    assert result["n"] == len(BAGS) and not result["skipped"]
    assert not (tmp_path / "batches").exists()
