"""Evaluating a model served behind an OpenAI-compatible HTTP server (how vLLM or
llama.cpp's server are used): the runner keeps ``concurrency`` requests in flight, writes
each answer as it arrives, and a run interrupted mid-way resumes without asking an
answered reaction again. The server is real (``FakeOpenAI`` on 127.0.0.1)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import chemassay.mechanism as mechanism
import pytest


def lines(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_concurrency_saturates_the_server(tmp_path, fake_openai):
    script = fake_openai.script
    script.delay_all = 0.3
    spec = f"openai:served,base_url={fake_openai.base_url},concurrency=8,cache=false"
    started = time.perf_counter()
    run = mechanism.predict(spec, "gold", limit=32, out=tmp_path / "p.jsonl")
    elapsed = time.perf_counter() - started
    assert run.answered == 32 and run.failed == 0 and len(lines(tmp_path / "p.jsonl")) == 32
    assert script.max_in_flight == 8
    # 32 requests of 0.3 s: 1.2 s with 8 always in flight, 9.6 s one at a time; under 2.4 s
    # means more than 4 were in flight on average (loading and prompting included)
    assert elapsed < 32 * 0.3 / 4, elapsed
    result = mechanism.evaluate(tmp_path / "p.jsonl", bootstrap=0)
    assert result.metrics["n_scored"] == 32 and result.metrics["exact_mechanisms"] == 32


def test_streaming_keeps_the_server_busy_where_chunks_wait_for_their_slowest(tmp_path, fake_openai, gold_reactions):
    from chemassay.suites.mechanism.api import _prepare, load_predictor
    from chemassay.suites.mechanism.runners import run_model

    script = fake_openai.script
    slow = {r.reaction_id: 0.6 for r in gold_reactions[0:16:4]}  # one slow answer in every chunk of 4
    script.delay_first = slow
    spec = f"openai:served,base_url={fake_openai.base_url},concurrency=4,cache=false"
    jobs = _prepare(gold_reactions[:16], "default", 3, "template", False, None)
    timings = {}
    for stream in (True, False):
        script.seen.clear()
        started = time.perf_counter()
        run = run_model(load_predictor(spec), jobs, style="default", chunk=4, stream=stream)
        timings[stream] = time.perf_counter() - started
        assert run.answered == 16
    # chunked: each of the four chunks waits for its slow answer (about 4 x 0.6 s); streamed:
    # the slow answers overlap with the rest (about 0.6 s plus the fast ones)
    assert timings[True] < 0.6 * timings[False], timings


def test_an_interrupted_run_resumes_without_asking_again(tmp_path, fake_openai, gold_reactions):
    script = fake_openai.script
    script.delay_all = 0.05
    spec = f"openai:served,base_url={fake_openai.base_url},concurrency=4,cache=false"
    out = tmp_path / "p.jsonl"
    answered = []

    def crash_after_ten(count):
        answered.append(count)
        if len(answered) == 10:
            raise KeyboardInterrupt  # as a Ctrl-C or a dying job would stop the run

    with pytest.raises(KeyboardInterrupt):
        mechanism.predict(spec, "gold", limit=30, out=out, progress=crash_after_ten)
    kept = {row["reaction_id"] for row in lines(out)}
    assert 10 <= len(kept) < 30
    asked_before = dict(script.seen)
    run = mechanism.predict(spec, "gold", limit=30, out=out)
    assert run.already_done == len(kept) and run.answered == 30 - len(kept)
    rids = {script.prompt_ids[r["body"]["messages"][-1]["content"]] for r in script.requests}
    assert len(rids) == 30
    for rid in kept:  # an answered reaction was never asked again
        assert script.seen[rid] == asked_before[rid] == 1
    assert sorted(row["reaction_id"] for row in lines(out)) == sorted(r.reaction_id for r in gold_reactions[:30])


@pytest.mark.slow
def test_a_killed_process_resumes(tmp_path, fake_openai, gold_reactions):
    """SIGKILL in the middle of a CLI run (a preempted job): the rerun asks only the rest."""
    script = fake_openai.script
    script.delay_all = 0.2
    out = tmp_path / "p.jsonl"
    command = [sys.executable, "-m", "chemassay", "mechanism", "predict", "gold", "--model",
               f"openai:served,base_url={fake_openai.base_url},concurrency=2,cache=false", "--limit", "20",
               "--out", str(out)]
    env = {**os.environ, "CHEMASSAY_HOME": str(tmp_path / "home")}
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline and (not out.exists() or len(lines(out)) < 4):
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    kept = {row["reaction_id"] for row in lines(out)}
    assert 4 <= len(kept) < 20
    before = dict(script.seen)
    assert subprocess.run(command, env=env, capture_output=True).returncode == 0
    assert all(script.seen[rid] == before[rid] for rid in kept)
    assert len(lines(out)) == 20
