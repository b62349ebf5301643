"""Throughput of the mechanism runner against a local OpenAI-compatible server.

A small threaded HTTP server on 127.0.0.1, in its own process (so it does not share the
runner's interpreter), answers ``/v1/chat/completions`` after a fixed latency
(``--latency``, default 0.2 s), as a model server with spare capacity would, and records
how many requests are in flight at every moment (read back through ``GET /stats``). For each concurrency N the
runner (``chemassay.mechanism.predict`` with ``openai:...,concurrency=N,cache=false``)
asks about ``--per-slot`` × N oMe-Gold reactions (at most the 196) and the script prints
requests per second, the ideal N / latency, their ratio, and the time-weighted mean and the
maximum number of requests in flight: a runner that keeps N requests in flight reaches a
mean close to N and a throughput close to the ideal.

``--jitter J`` draws each latency uniformly from latency × [1 − J, 1 + J] (seeded) and
adds, for the same N, the runner's chunked path (``stream=False``: reactions sent in
chunks of 4 × N, each chunk waiting for its slowest answer), which is what local
checkpoints and Python predictors get; chat models on a server stream.

Run: ``PYTHONPATH=src python benchmarks/mechanism_serving.py [--latency 0.2] [--concurrency 1,4,16,32] [--jitter 0.5]``
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import statistics
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ANSWER = json.dumps([{"step": 1, "type": "proton_transfer", "subtype": "acid_base_proton_transfer",
                      "intermediate_smiles": "CC(O)CC=O"}])


class LatencyServer:
    """Answers every chat request after a (possibly jittered) latency; logs the in-flight count."""

    def __init__(self, latency: float, jitter: float = 0.0, seed: int = 0) -> None:
        self.latency = latency
        self.jitter = jitter
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.in_flight = 0
        self.events: list[tuple[float, int]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out at once, not 40 ms apart

            def log_message(self, *args: object) -> None:
                return

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                with owner.lock:
                    payload = json.dumps(owner.events).encode()
                    owner.events = []
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                with owner.lock:
                    owner.in_flight += 1
                    owner.events.append((time.time(), owner.in_flight))
                    delay = owner.latency * (1 + owner.jitter * (2 * owner.rng.random() - 1))
                time.sleep(delay)
                payload = json.dumps({"id": "x", "object": "chat.completion", "model": body.get("model"),
                                      "choices": [{"index": 0, "finish_reason": "stop",
                                                   "message": {"role": "assistant", "content": ANSWER}}]}).encode()
                with owner.lock:
                    owner.in_flight -= 1
                    owner.events.append((time.time(), owner.in_flight))
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.request_queue_size = 256
        self.port = self.server.server_address[1]

    def serve(self) -> None:
        self.server.serve_forever()


def _serve(latency: float, jitter: float, ports) -> None:
    server = LatencyServer(latency, jitter)
    ports.put(server.port)
    server.serve()


class ServerProcess:
    """A :class:`LatencyServer` in a child process."""

    def __init__(self, latency: float, jitter: float) -> None:
        context = multiprocessing.get_context("spawn")
        ports = context.Queue()
        self.process = context.Process(target=_serve, args=(latency, jitter, ports), daemon=True)
        self.process.start()
        port = ports.get(timeout=60)
        self.base_url = f"http://127.0.0.1:{port}/v1"
        self.stats_url = f"http://127.0.0.1:{port}/stats"

    def events(self) -> list[tuple[float, int]]:
        with urllib.request.urlopen(self.stats_url) as response:  # noqa: S310 - our own local server
            return [tuple(item) for item in json.loads(response.read())]

    def reset(self) -> None:
        self.events()

    def occupancy(self, start: float, end: float) -> tuple[float, int]:
        """Time-weighted mean and maximum of requests in flight between ``start`` and ``end``
        (wall-clock seconds)."""
        events = sorted(self.events())
        area, level, last, peak = 0.0, 0, start, 0
        for moment, count in events:
            moment = min(max(moment, start), end)
            area += level * (moment - last)
            level, last = count, moment
            peak = max(peak, count)
        area += level * (end - last)
        return area / max(end - start, 1e-9), peak

    def close(self) -> None:
        self.process.terminate()
        self.process.join(timeout=10)


def measure(server: ServerProcess, concurrency: int, n: int, *, stream: bool, repeats: int) -> dict[str, float]:
    from chemassay.suites.mechanism.api import _prepare, load_predictor, load_reactions
    from chemassay.suites.mechanism.runners import run_model

    spec = f"openai:bench,base_url={server.base_url},concurrency={concurrency},cache=false,retries=0"
    jobs = _prepare(load_reactions("gold")[:n], "default", 3, "template", False, None)
    rates, means, peaks = [], [], []
    for _ in range(repeats):
        model = load_predictor(spec)
        server.reset()
        started = time.time()
        run = run_model(model, jobs, style="default", stream=stream)
        ended = time.time()
        if run.answered != n:
            raise SystemExit(f"only {run.answered} of {n} answered: {run.errors[:2]}")
        mean, peak = server.occupancy(started, ended)
        rates.append(n / (ended - started))
        means.append(mean)
        peaks.append(peak)
    return {"rate": statistics.median(rates), "mean": statistics.median(means), "peak": max(peaks)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per answer")
    parser.add_argument("--concurrency", default="1,4,16,32", help="comma-separated N")
    parser.add_argument("--per-slot", type=int, default=6, help="reactions asked per concurrency slot")
    parser.add_argument("--jitter", type=float, default=0.0, help="relative latency spread (0: fixed)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per setting (medians)")
    args = parser.parse_args()
    server = ServerProcess(args.latency, args.jitter)
    try:
        label = f"latency {args.latency:g} s" + (f" ± {args.jitter:.0%}" if args.jitter else " (fixed)")
        print(f"local OpenAI-compatible server, {label}; medians of {args.repeats} runs")
        print(f"{'N':>4} {'path':<8} {'requests':>8} {'req/s':>8} {'ideal':>8} {'ratio':>6} {'mean in flight':>15} {'max':>4}")
        for concurrency in (int(x) for x in args.concurrency.split(",")):
            n = min(196, args.per_slot * concurrency)
            ideal = concurrency / args.latency
            paths = [("stream", True)] + ([("chunks", False)] if args.jitter else [])
            for name, stream in paths:
                row = measure(server, concurrency, n, stream=stream, repeats=args.repeats)
                print(f"{concurrency:>4} {name:<8} {n:>8} {row['rate']:>8.1f} {ideal:>8.1f} {row['rate'] / ideal:>6.2f} "
                      f"{row['mean']:>15.2f} {row['peak']:>4}")
    finally:
        server.close()


if __name__ == "__main__":
    main()
