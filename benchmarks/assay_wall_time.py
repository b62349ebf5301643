"""How long `chemassay assay` takes with the built-in baselines, and what it asks an endpoint.

Three figures (the issue's targets for the assay):

* the wall time of ``chemassay assay --quick`` with every suite's built-in baseline, per suite
  and in all (a fresh output folder and a fresh cache, so data preparation is counted — the
  downloaded datasets themselves are shared; then a second run into a fresh output folder with
  the warm cache);
* the wall time of the full ``chemassay assay`` with the built-in baselines (``--full``; long);
* the number of requests a full assay sends to a model behind an endpoint, per suite and task,
  from the plan (``assay --dry-run --model openai:...``), and for ``--quick``.

Each run is a separate ``chemassay`` process (as a user runs it), timed with
``time.perf_counter`` around it; the per-suite times come from the tasks' ``elapsed_s`` in
the run's ``assay.json``.

    python benchmarks/assay_wall_time.py                 # quick (cold and warm cache) + request counts
    python benchmarks/assay_wall_time.py --full          # also the full assay (tens of minutes)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from timing import cpu_model  # noqa: E402


def run_assay(out: Path, home: Path, *extra: str) -> tuple[float, dict]:
    """One ``chemassay assay`` process; returns its wall time and its manifest."""
    env = {**os.environ, "CHEMASSAY_HOME": str(home), "CHEMASSAY_NO_STORE": "1"}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "chemassay", "--quiet", "assay", "--out", str(out), *extra],
                          env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"assay failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return wall, json.loads((out / "assay.json").read_text())


def per_suite(manifest: dict) -> list[tuple[str, float, str]]:
    rows = []
    for suite in manifest["suites"]:
        seconds = sum(task.get("elapsed_s", 0.0) for task in suite["tasks"])
        statuses = ",".join(sorted({task["status"] for task in suite["tasks"]})) or suite["skipped"][:40]
        rows.append((suite["suite"], seconds, statuses))
    return rows


def requests_planned(quick: bool) -> list[tuple[str, str, int, int]]:
    """``(suite, task, items, requests)`` of an assay of a chat/embeddings endpoint."""
    from chemassay.assaying import plan

    _outcomes, planned = plan("openai:any-model,base_url=http://127.0.0.1:9/v1", quick=quick)
    return [(p.suite, p.task.key, p.task.items, p.task.request_count) for p in planned]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--full", action="store_true", help="also time the full assay with the built-in baselines")
    parser.add_argument("--n-jobs", default="2", help="--n-jobs for the assay (default 2: the cores here)")
    args = parser.parse_args(argv)
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        home = root / "home"
        home.mkdir()
        # the downloaded datasets (MOSES) are shared; every cache built from them starts empty
        from chemassay.runtime.cache import chemassay_home

        if (chemassay_home() / "datasets").is_dir():
            (home / "datasets").symlink_to(chemassay_home() / "datasets")
        runs = [("quick, cold cache", root / "quick-cold", ["--quick"]),
                ("quick, warm cache", root / "quick-warm", ["--quick"])]
        if args.full:
            runs.append(("full, after the quick runs (it builds its own full-size data)", root / "full", []))
        for label, out, extra in runs:
            wall, manifest = run_assay(out, home, *extra, "--n-jobs", args.n_jobs)
            print(f"\n{label}: {wall:,.1f} s wall in all")
            for suite, seconds, status in per_suite(manifest):
                print(f"  {suite:<14} {seconds:8.1f} s  {status}")
    for quick in (False, True):
        rows = requests_planned(quick)
        print(f"\nrequests an endpoint model receives ({'quick' if quick else 'full'} assay):")
        for suite, task, items, requests in rows:
            print(f"  {suite:<14} {task:<30} {items:>7,} items {requests:>7,} requests")
        print(f"  {'all':<14} {'':<30} {sum(r[2] for r in rows):>7,} items {sum(r[3] for r in rows):>7,} requests")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
