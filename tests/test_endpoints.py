"""A model behind an endpoint, in every suite: one client and one failure contract.

Each suite's CLI runs ``--model openai:...`` against a real OpenAI-compatible server on
127.0.0.1 (``support.openai_server``) that injects faults. The same tests run for all five
suites (``SUITES`` says how each is asked); per suite they check:

* every fault of :data:`~support.openai_server.FAULTS` given to two items makes those items
  failed requests with their reason: exit code 1, the result written with the items in
  ``skipped``, the summary line, and nothing cached for them (a rerun without the fault asks
  exactly those two and exits 0);
* 30 % random 429/500/resets end with every item answered (exit 0), ``concurrency`` requests in
  flight, the tokens the server reported summed, no API key in any output, and a rerun
  answered from the cache;
* a server that fails every request stops the run early with one line (exit 2);
* a reply's reasoning (``reasoning_content``, streamed or not, or a ``<think>`` block) is taken
  out before parsing: the same metrics as without it, the reasoning tokens counted;
* slow requests print a progress line every interval;
* a run killed with SIGKILL resumes asking only what was not answered (slow).

The server streams the chat replies (the client asks it to), so every fault is also a fault of
a streamed reply; tests/models/test_openai_client.py checks that each gives the same reason
not streamed.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from support.openai_server import FAULTS, OpenAIServer, first_bodies

pytest.importorskip("httpx")

MOLECULES = ["CCO", "CC(=O)O", "c1ccccc1", "CCN", "CCCl", "OCCO", "CC#N", "CC(C)O", "C1CCOC1", "CCOC(C)=O"]
SECRET = "sk-test-never-written-0123456789"


@dataclass(frozen=True)
class SuiteRun:
    """How one suite asks a model: its CLI arguments (``{spec}``, ``{out}`` and input names are
    filled in), extra spec options, and whether it asks the embeddings endpoint."""

    args: tuple[str, ...]
    options: tuple[tuple[str, str], ...] = ()
    embeddings: bool = False


SUITES = {
    "stoichiometry": SuiteRun(("stoichiometry", "evaluate", "{tgt}", "--src", "{src}", "--model", "{spec}",
                               "--bootstrap", "0", "--out", "{out}")),
    "reaction-ood": SuiteRun(("reaction-ood", "evaluate", "--truth", "{truth}", "--model", "{spec}", "--k", "2",
                              "--bootstrap", "0", "--out", "{out}")),
    "generation": SuiteRun(("generation", "evaluate", "--model", "{spec}", "--n", "20", "--test", "{smiles}",
                            "--scaffold-test", "none", "--train", "{smiles}", "--no-plot", "--bootstrap", "0",
                            "--out", "{out}"), (("batch", "2"),)),
    "robustness": SuiteRun(("robustness", "evaluate", "--model", "{spec}", "--dataset", "{dataset}",
                            "--augmentations", "kekulize", "--bootstrap", "0", "--out", "{out}"),
                           (("batch", "1"),), embeddings=True),
    "mechanism": SuiteRun(("mechanism", "evaluate", "--model", "{spec}", "--limit", "10", "--bootstrap", "0",
                           "--out", "{out}")),
}

# What a failed item's reason says, per fault (chat, embeddings); "retries=2" gives 3 attempts.
REASONS = {
    "http-429": ("HTTP 429 after 3 attempts",) * 2,
    "http-500": ("HTTP 500 after 3 attempts",) * 2,
    "reset": ("connection lost",) * 2,
    "malformed": ("reply is not JSON after 3 attempts",) * 2,
    "no-choices": ("reply has no choices after 3 attempts", "reply has no embeddings after 3 attempts"),
    "no-content": ("reply has no content after 3 attempts", "an item of the reply has no embedding after 3 attempts"),
    "empty": ("empty answer after 3 attempts", None),
    "length": ("answer cut off (finish_reason=length)", None),
    "huge": ("answer over 65536 bytes", "embeddings reply over 589824 bytes"),
    # timeout=1 is the longest silence; seconds_per_token=0.001 makes a reply's cap about 1-6 s
    "hang": ("no complete reply in time",) * 2,
    "trickle": ("no complete reply in time",) * 2,
    "ramble": ("no complete reply in time",) * 2,
}
TIMED_OUT = {"hang", "trickle", "ramble"}
assert set(REASONS) == set(FAULTS)

FAULT_CASES = [pytest.param(suite, fault, id=f"{suite}-{fault}") for suite in SUITES for fault in FAULTS
               if REASONS[fault][SUITES[suite].embeddings] is not None]


@pytest.fixture
def server():
    server = OpenAIServer()
    server.retry_after = "0"
    server.hang_seconds = 30.0
    server.trickle_interval = 0.25
    yield server
    server.close()


@pytest.fixture
def inputs(tmp_path):
    """Ten items for each suite (the mechanism suite asks about its bundled gold reactions)."""
    files = {"src": tmp_path / "src.txt", "tgt": tmp_path / "tgt.txt", "truth": tmp_path / "truth.csv",
             "smiles": tmp_path / "smiles.txt", "dataset": tmp_path / "molecules.csv"}
    pairs = [(a, MOLECULES[(i + 1) % len(MOLECULES)]) for i, a in enumerate(MOLECULES)]
    files["src"].write_text("".join(f"{{1}}{a}.{{1}}{b}\n" for a, b in pairs))
    files["tgt"].write_text("".join(f"{{1}}{b}\n" for _, b in pairs))
    files["truth"].write_text("id,reactants,products\n" + "".join(
        f"r{i},{a}.{b},{max((a, b), key=len)}\n" for i, (a, b) in enumerate(pairs)))
    files["smiles"].write_text("\n".join(MOLECULES) + "\n")
    files["dataset"].write_text("SMILES\n" + "\n".join(MOLECULES) + "\n")
    return files


def spec_for(suite: str, base_url: str, **options: str) -> str:
    settings = {"base_url": base_url, "backoff": "0.01", "timeout": "1", "seconds_per_token": "0.001",
                "retries": "2", "concurrency": "4",
                **dict(SUITES[suite].options), **options}
    return "openai:chemist," + ",".join(f"{key}={value}" for key, value in settings.items())


def arguments(suite: str, spec: str, inputs: dict[str, Path], out: Path) -> list[str]:
    names = {**{key: str(path) for key, path in inputs.items()}, "spec": spec, "out": str(out)}
    return [arg.format(**names) for arg in SUITES[suite].args]


def run(cli, suite: str, server: OpenAIServer, inputs, tmp_path: Path, name: str = "result", **options: str):
    """The CLI outcome and the result written (``None`` when none was)."""
    out = tmp_path / f"{name}.json"
    outcome = cli(*arguments(suite, spec_for(suite, server.base_url, **options), inputs, out))
    return outcome, json.loads(out.read_text()) if out.exists() else None


def requests_asked(server: OpenAIServer) -> int:
    return len(server.requests)


@pytest.mark.parametrize(("suite", "fault"), FAULT_CASES)
def test_a_fault_makes_a_failed_item_with_its_reason_never_cached(cli, server, inputs, tmp_path, isolated_home,
                                                                  suite, fault):
    server.fault = fault
    server.fault_filter = first_bodies(2)
    outcome, result = run(cli, suite, server, inputs, tmp_path)
    assert outcome.code == 1, (outcome.stdout, outcome.stderr)
    reason = REASONS[fault][SUITES[suite].embeddings]
    failed = [item for item in result["skipped"] if "request failed: " in item["reason"]]
    assert failed and all(reason in item["reason"] for item in failed), failed
    if fault in TIMED_OUT:  # asked once more after the first time-out, then failed
        assert all(re.search(r"no complete reply in time \(.*\) after 2 attempts", item["reason"]) for item in failed), failed
    summary = result["requests"]
    assert summary["failed"] >= 2 and summary["new"] >= 1 and list(summary["reasons"])[0].startswith(reason)
    assert summary["cut_off"] == (summary["failed"] if fault == "length" else 0)
    assert f"{summary['failed']} failed" in outcome.stdout and "answered:" in outcome.stdout
    assert "Traceback" not in outcome.stderr
    # Nothing of the failed items was cached: without the fault, a rerun asks exactly them.
    server.clear_faults()
    before = requests_asked(server)
    outcome, result = run(cli, suite, server, inputs, tmp_path, "rerun")
    assert outcome.code == 0, (outcome.stdout, outcome.stderr)
    assert result["requests"]["failed"] == 0 and result["requests"]["new"] == len(server.faulted_bodies) == 2
    assert requests_asked(server) - before == 2
    assert not [item for item in result["skipped"] if "request failed" in item["reason"]]


@pytest.mark.parametrize("suite", list(SUITES))
def test_transient_faults_end_with_every_item_answered(cli, server, inputs, tmp_path, isolated_home, monkeypatch,
                                                       suite):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    server.fault_rate = 0.3
    server.latency = 0.2
    outcome, result = run(cli, suite, server, inputs, tmp_path, retries="8")
    assert outcome.code == 0, (outcome.stdout, outcome.stderr)
    summary = result["requests"]
    assert summary["failed"] == 0 and summary["new"] >= 10 and summary["cached"] >= 0
    assert sum(server.faulted.values()) >= 1  # faults were given, and retried
    assert server.max_in_flight == 4  # concurrency=4 honoured (the embeddings endpoint included)
    assert summary["prompt_tokens"] > 0 and summary["endpoints"] == [server.base_url]
    assert f"{summary['new'] + summary['cached']} answered: {summary['new']} new" in outcome.stdout
    assert "tokens: " in outcome.stdout
    assert not [item for item in result["skipped"] if "request failed" in item["reason"]]
    # the key went to the server as a bearer token, and nowhere else
    assert server.authorizations[f"Bearer {SECRET}"] >= 10
    cache = isolated_home / "cache" / "llm-responses.sqlite"
    written = [outcome.stdout, outcome.stderr, (tmp_path / "result.json").read_text(), cache.read_bytes().decode("latin-1")]
    assert all(SECRET not in text for text in written)
    # A rerun is answered from the cache: nothing asked, and the line says so.
    server.clear_faults()
    before = requests_asked(server)
    outcome, again = run(cli, suite, server, inputs, tmp_path, "rerun", retries="8")
    assert outcome.code == 0 and requests_asked(server) == before
    assert again["requests"]["new"] == 0 and again["requests"]["cached"] == summary["new"] + summary["cached"]
    assert f"0 new, {again['requests']['cached']} from cache, 0 failed" in outcome.stdout
    assert again["metrics"] == result["metrics"]


@pytest.mark.parametrize("suite", list(SUITES))
def test_a_server_failing_every_request_stops_the_run_early(cli, server, inputs, tmp_path, isolated_home, suite):
    server.fault = "http-500"
    started = time.perf_counter()
    outcome, result = run(cli, suite, server, inputs, tmp_path, retries="1")
    assert outcome.code == 2 and result is None
    errors = [line for line in outcome.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in outcome.stderr, outcome.stderr
    assert server.base_url in errors[0] and "stopped early" in errors[0] and "HTTP 500 after 2 attempts" in errors[0]
    assert requests_asked(server) <= 2 * 10  # stopped, not every item asked twice more
    assert time.perf_counter() - started < 30


@pytest.mark.parametrize("suite", [suite for suite in SUITES if not SUITES[suite].embeddings])
def test_reasoning_is_taken_out_before_parsing_and_counted(cli, server, inputs, tmp_path, isolated_home, suite):
    """The reasoning (which holds SMILES, numbered lines and a bag of its own) never reaches
    the parser: the metrics are those of the answers alone; a mechanism row keeps it."""
    extra = ("--predictions-out", str(tmp_path / "{name}.jsonl")) if suite == "mechanism" else ()

    def ask(name: str, **options: str):
        out = tmp_path / f"{name}.json"
        args = arguments(suite, spec_for(suite, server.base_url, cache="false", **options), inputs, out)
        outcome = cli(*args, *[arg.format(name=name) for arg in extra])
        assert outcome.code == 0, (outcome.stdout, outcome.stderr)
        return outcome, json.loads(out.read_text())

    _, plain = ask("plain")
    assert plain["requests"]["reasoning_tokens"] is None
    for where, stream in (("content", "true"), ("think", "false")):
        server.reasoning = where
        outcome, result = ask(f"{where}-{stream}", stream=stream)
        assert result["metrics"] == plain["metrics"], (where, stream)
        summary = result["requests"]
        assert summary["reasoning_tokens"] == summary["new"] * len(server.reasoning_text.split()) > 0
        assert f"({summary['reasoning_tokens']} reasoning)" in outcome.stdout
        if suite == "mechanism":
            rows = [json.loads(line) for line in (tmp_path / f"{where}-{stream}.jsonl").read_text().splitlines()]
            assert rows and all(row["reasoning"] == server.reasoning_text and "<think>" not in row["response"]
                                for row in rows)


def test_slow_requests_print_a_progress_line_every_few_seconds(cli, server, inputs, tmp_path, isolated_home,
                                                                monkeypatch):
    monkeypatch.setenv("CHEMASSAY_PROGRESS_INTERVAL", "0.5")
    server.latency = 1.0
    started = time.perf_counter()
    outcome, _ = run(cli, "stoichiometry", server, inputs, tmp_path, concurrency="2", timeout="10")
    elapsed = time.perf_counter() - started
    assert outcome.code == 0, outcome.stderr
    lines = [line for line in outcome.stderr.splitlines() if " requests answered, " in line]
    assert elapsed > 5 and len(lines) >= 6, outcome.stderr  # ten requests two at a time, a second each
    assert all(line.startswith(f"chemist at {server.base_url}: ") for line in lines)
    assert "0/10 requests answered, 0 failed, 2 in flight (oldest 0." in lines[0]
    assert lines[-1].startswith(f"chemist at {server.base_url}: 10/10 requests answered") and lines[-1].endswith("(done)")
    quiet = cli("--quiet", *arguments("stoichiometry", spec_for(  # all ten at once: a second and a half
        "stoichiometry", server.base_url, concurrency="10", cache="false", timeout="10"), inputs, tmp_path / "quiet.json"))
    assert quiet.code == 0 and "requests answered" not in quiet.stderr


@pytest.mark.slow
@pytest.mark.parametrize("suite", list(SUITES))
def test_a_killed_run_resumes_asking_only_the_rest(server, inputs, tmp_path, suite):
    """SIGKILL in the middle of a CLI run (a preempted job): answers already received are kept
    (the cache, or the mechanism suite's predictions file) and the rerun asks only the rest."""
    server.latency = 0.3
    spec = spec_for(suite, server.base_url, concurrency="2")
    args = arguments(suite, spec, inputs, tmp_path / "result.json")
    if suite == "mechanism":  # its answers go to a resumable predictions file as they come
        args += ["--predictions-out", str(tmp_path / "answers.jsonl")]
    env = {**os.environ, "CHEMASSAY_HOME": str(tmp_path / "home"), "PYTHONPATH": os.pathsep.join(sys.path)}
    command = [sys.executable, "-m", "chemassay", *args]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline and server.served < 4 and process.poll() is None:
        time.sleep(0.02)
    time.sleep(0.1)
    process.send_signal(signal.SIGKILL)
    process.wait()
    answered_before = set(server.answered_bodies)
    assert 4 <= len(answered_before) < 11
    asked_before = len(server.requests)
    finished = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stderr
    summary = json.loads((tmp_path / "result.json").read_text())["requests"]
    asked_again = server.requests[asked_before:]
    bodies_again = {json.dumps({k: v for k, v in r.items() if k != "path"}, sort_keys=True) for r in asked_again}
    # Only the rest is asked: an answer received before the kill is asked again only if it was
    # still in flight in the client when it died (at most concurrency=2 of them).
    assert len(bodies_again & answered_before) <= 2
    assert summary["failed"] == 0 and summary["new"] == len(asked_again)
    if suite == "mechanism":
        rows = [json.loads(line) for line in (tmp_path / "answers.jsonl").read_text().splitlines()]
        assert sorted(row["reaction_id"] for row in rows) == sorted({row["reaction_id"] for row in rows})
        assert len(rows) == 10 and "response" in rows[0]
    else:
        assert summary["cached"] >= len(answered_before) - 2
