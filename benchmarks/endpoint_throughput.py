"""Throughput of every suite's model path against a local OpenAI-compatible server.

A server (``tests/support/openai_server.py``: one asyncio loop, HTTP/1.1 keep-alive) runs in
its own process and answers every request after ``--latency`` seconds (default 0.1). For each
suite and each concurrency C the script asks N = ``--waves`` × C requests through the suite's
own model path, with the response cache on (an empty one: every request is new, every answer
written) and measures requests per second:

* stoichiometry: ``TextModel.predict_bags`` (bag prompts, answers parsed as bags);
* reaction-ood: ``chemassay.reaction_ood.predict`` (answers parsed as ranked SMILES by RDKit);
* generation: ``TextModel.sample`` with ``batch=2`` (one request per two molecules, seeded);
* robustness: the embeddings encoder with ``batch=1`` (one request per SMILES);
* mechanism: the streaming runner (``run_model``) writing each answer to a JSONL file;
* bare-httpx: the floor, bare ``httpx`` POSTs from C threads (no cache, parsing or retries).

The ideal is C / latency requests per second (every slot always busy); the table gives the
share of it reached. ``--replicas`` adds the same suites against two servers of limited
``--capacity`` (requests a server works on at once; the others queue, as on a vLLM replica
with a full batch) named in one ``base_url=A|B``, beside one such server: with capacity K per
server and C ≥ 2K, one server gives at most K / latency, two give 2K / latency.

Chat replies are streamed (the client asks, the server streams); ``--spec-options stream=false``
adds options to every model spec (here: plain JSON replies), to compare.

Run: ``PYTHONPATH=src python benchmarks/endpoint_throughput.py [--latency 0.1] [--concurrency 1,4,16,64]
[--suites ...] [--replicas] [--capacity 16] [--spec-options K=V,...] [--json OUT]``
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "tests" / "support" / "openai_server.py"


SERVER_PIDS: dict[str, int] = {}
SPEC_OPTIONS = ""
"""Extra ``key=value`` options of every model spec (``--spec-options``)."""


@contextmanager
def served(latency: float, capacity: int | None = None):
    """A server in its own process (so it does not share the client's interpreter); its base URL."""
    command = [sys.executable, str(SERVER), "--latency", str(latency)]
    if capacity is not None:
        command += ["--capacity", str(capacity)]
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        url = process.stdout.readline().strip()
        SERVER_PIDS[url] = process.pid
        yield url
    finally:
        process.stdin.close()
        process.wait(timeout=30)


def server_cpu(base_url: str) -> float:
    """CPU seconds the server(s) behind ``base_url`` used so far (Linux ``/proc``; 0 elsewhere)."""
    total = 0.0
    for url in base_url.split("|"):
        try:
            fields = Path(f"/proc/{SERVER_PIDS[url]}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (KeyError, OSError, IndexError, ValueError):
            return 0.0
    return total


def spec(base_url: str, concurrency: int, extra: str = "") -> str:
    more = f",{SPEC_OPTIONS}" if SPEC_OPTIONS else ""
    return f"openai:bench,base_url={base_url},concurrency={concurrency},timeout=30{extra}{more}"


def run_stoichiometry(base_url: str, concurrency: int, n: int) -> int:
    from chemassay.models import load_model

    model = load_model(spec(base_url, concurrency), "bag-predictor")
    sources = [f"{{1}}{'C' * (i % 40 + 1)}O.{{1}}{'C' * (i // 40 + 1)}N" for i in range(n)]
    model.predict_bags(sources)
    return model.request_stats.new


def run_reaction_ood(base_url: str, concurrency: int, n: int) -> int:
    from chemassay.models import load_model

    model = load_model(spec(base_url, concurrency), "reaction-predictor")
    model.predict([f"{'C' * (i % 40 + 1)}O.{'C' * (i // 40 + 1)}N" for i in range(n)], 2)
    return model.request_stats.new


def run_generation(base_url: str, concurrency: int, n: int) -> int:
    from chemassay.models import load_model

    model = load_model(spec(base_url, concurrency, ",batch=2"), "generator")
    model.sample(2 * n, seed=1)
    return model.request_stats.new


def run_robustness(base_url: str, concurrency: int, n: int) -> int:
    from chemassay.models import load_model

    encoder = load_model(spec(base_url, concurrency, ",batch=1"), "encoder")
    encoder.encode([f"{'C' * (i % 40 + 1)}O{'N' * (i // 40)}" for i in range(n)])
    return encoder.request_stats.new


def run_mechanism(base_url: str, concurrency: int, n: int) -> int:
    from chemassay.suites.mechanism.api import load_predictor, load_reactions
    from chemassay.suites.mechanism.runners import PromptJob, prepare_jobs, run_model

    gold = prepare_jobs(load_reactions("gold"), "default")
    # more requests than oMe-Gold has reactions: each reaction again under a new id and prompt
    jobs = [PromptJob(dataclasses.replace(job.reaction, reaction_id=f"{job.reaction.reaction_id}#{i}"),
                      f"{job.prompt}\n(request {i})", []) for i, job in ((i, gold[i % len(gold)]) for i in range(n))]
    model = load_predictor(spec(base_url, concurrency))
    with tempfile.TemporaryDirectory() as folder:
        run = run_model(model, jobs, style="default", out=Path(folder) / "answers.jsonl")
    return run.requests.new


def run_bare(base_url: str, concurrency: int, n: int) -> int:
    """The floor: bare ``httpx`` POSTs from ``concurrency`` threads, one client each (no cache,
    no parsing, no retries), against which the suites' own overhead is measured."""
    import threading

    import httpx

    local = threading.local()
    clients = []

    def ask(i: int) -> int:
        if not hasattr(local, "http"):
            local.http = httpx.Client(verify=False)
            clients.append(local.http)
        body = {"model": "bench", "messages": [{"role": "user", "content": f"Write 1 different molecule {i}"}]}
        return len(local.http.post(base_url + "/chat/completions", json=body).json()["choices"])

    with ThreadPoolExecutor(concurrency) as pool:
        asked = sum(pool.map(ask, range(n)))
    for http in clients:
        http.close()
    return asked


SUITES = {"bare-httpx": run_bare, "stoichiometry": run_stoichiometry, "reaction-ood": run_reaction_ood, "generation": run_generation,
          "robustness": run_robustness, "mechanism": run_mechanism}


def measure(suite: str, base_url: str, concurrency: int, n: int, latency: float, repeats: int = 1) -> dict:
    """One point (the median of ``repeats`` runs, each with a fresh, empty response cache):
    requests per second and the share of ideal."""
    if repeats > 1:
        runs = sorted((measure(suite, base_url, concurrency, n, latency) for _ in range(repeats)),
                      key=lambda row: row["requests_per_s"])
        return {**runs[len(runs) // 2], "repeats": repeats,
                "range_per_s": [runs[0]["requests_per_s"], runs[-1]["requests_per_s"]]}
    with tempfile.TemporaryDirectory() as home:
        os.environ["CHEMASSAY_HOME"] = home
        cpu, server = time.process_time(), server_cpu(base_url)
        started = time.perf_counter()
        asked = SUITES[suite](base_url, concurrency, n)
        seconds = time.perf_counter() - started
        cpu, server = time.process_time() - cpu, server_cpu(base_url) - server
    assert asked == n, (suite, asked, n)
    rate = n / seconds
    return {"suite": suite, "concurrency": concurrency, "requests": n, "seconds": round(seconds, 3),
            "requests_per_s": round(rate, 1), "ideal_per_s": round(concurrency / latency, 1),
            "share_of_ideal": round(rate / (concurrency / latency), 3), "client_cpu_ms": round(1000 * cpu / n, 2),
            "server_cpu_ms": round(1000 * server / n, 2),
            "load_average": round(os.getloadavg()[0], 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", default="1,4,16,64")
    parser.add_argument("--waves", type=int, default=20, help="requests per concurrency slot (N = waves x C)")
    parser.add_argument("--suites", default=",".join(SUITES))
    parser.add_argument("--replicas", action="store_true", help="also one vs two servers of limited capacity")
    parser.add_argument("--capacity", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3, help="runs per point; the median is shown")
    parser.add_argument("--spec-options", default="", help="extra options of every spec, e.g. stream=false")
    parser.add_argument("--json", type=Path, default=None)
    options = parser.parse_args()
    global SPEC_OPTIONS
    SPEC_OPTIONS = options.spec_options
    levels = [int(c) for c in options.concurrency.split(",")]
    suites = options.suites.split(",")
    for suite in suites:  # warm imports (RDKit, the mechanism prompts) outside the timings
        with served(options.latency) as url:
            measure(suite, url, 4, 8, options.latency)
    rows = []
    print(f"latency {options.latency:g} s; {os.cpu_count()} CPUs; N = {options.waves} x C requests per point; "
          f"client/server: CPU ms per request; load: the machine's 1-minute load average")
    print(f"{'suite':<14} {'C':>3} {'N':>5} {'req/s':>8} {'ideal':>7} {'share':>6} {'client':>7} {'server':>7} "
          f"{'load':>5}  (median of {options.repeats})")
    for suite in suites:
        for concurrency in levels:
            with served(options.latency) as url:
                row = measure(suite, url, concurrency, options.waves * concurrency, options.latency, options.repeats)
            rows.append(row)
            print(f"{suite:<14} {concurrency:>3} {row['requests']:>5} {row['requests_per_s']:>8.1f} "
                  f"{row['ideal_per_s']:>7.1f} {100 * row['share_of_ideal']:>5.1f}% {row['client_cpu_ms']:>7.2f} "
                  f"{row['server_cpu_ms']:>7.2f} {row['load_average']:>5.1f}", flush=True)
    if options.replicas:
        capacity = options.capacity
        print(f"\nreplicas: each server works on {capacity} requests at once (ideal one server: "
              f"{capacity / options.latency:.0f}/s, two: {2 * capacity / options.latency:.0f}/s)")
        print(f"{'suite':<14} {'C':>3} {'servers':>7} {'req/s':>8}")
        for suite in [s for s in suites if s != "bare-httpx"]:  # the floor has no replicas
            for concurrency in (2 * capacity, 4 * capacity):
                n = options.waves * concurrency
                with served(options.latency, capacity) as one:
                    single = measure(suite, one, concurrency, n, options.latency, options.repeats)
                with served(options.latency, capacity) as first, served(options.latency, capacity) as second:
                    double = measure(suite, f"{first}|{second}", concurrency, n, options.latency, options.repeats)
                for servers, row in ((1, single), (2, double)):
                    rows.append({**row, "servers": servers, "capacity": capacity})
                    print(f"{suite:<14} {concurrency:>3} {servers:>7} {row['requests_per_s']:>8.1f}", flush=True)
    if options.json is not None:
        options.json.write_text(json.dumps({"latency": options.latency, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
