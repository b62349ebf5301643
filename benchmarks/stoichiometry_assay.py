"""Wall time of the stoichiometry suite's part in ``chemassay assay``, its scores, and the
requests an endpoint gets.

Runs the quick and the full assay with the built-in baseline (``copy-coefficient``) and with
``algebraic``, each in a fresh cache folder (so the ChemAlgebra variants are built, not read
back; ``--warm`` adds a second full run of the baseline into a new output folder with the cache
filled). Prints a Markdown table of wall and CPU time (of this process: the work runs in it with
``n_jobs=1``) and verdicts, the per-task scores with their 95 % intervals (EM, BAL, DEF, EXC), then
the plan for an ``openai:`` endpoint, which implements both protocols: the requests each task
sends (no server is contacted).

Run: ``PYTHONPATH=src python benchmarks/stoichiometry_assay.py [--out runs/stoichiometry-assay] [--warm]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "benchmarks"))


def _cell(result, key: str) -> str:
    value, interval = result.metrics.get(key), result.intervals.get(key)
    if value is None:
        return "–"
    if interval is None or interval.low is None:
        return f"{100 * value:.1f}"
    return f"{100 * value:.1f} [{100 * interval.low:.1f}, {100 * interval.high:.1f}]"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(tempfile.mkdtemp(prefix="stoichiometry-assay-")))
    parser.add_argument("--warm", action="store_true", help="also a full baseline run with the cache filled")
    args = parser.parse_args()
    from timing import cpu_model

    from chemassay.assaying import assay, plan
    from chemassay.runtime.progress import settings

    settings.quiet = True
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}; "
          f"load average before: {os.getloadavg()[0]:.1f}\n")
    print("| model | mode | cache | tasks | wall s | CPU s | verdict |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    runs = [(None, True, "cold"), (None, False, "cold"), ("algebraic", True, "cold"), ("algebraic", False, "cold")]
    if args.warm:
        runs.append((None, False, "warm"))
    scored = {}
    home = None
    for spec, quick, cache in runs:
        if cache == "cold" or home is None:
            home = Path(tempfile.mkdtemp(prefix="chemassay-home-"))
            os.environ["CHEMASSAY_HOME"] = str(home)
        out = args.out / f"{spec or 'baseline'}-{'quick' if quick else 'full'}-{cache}"
        started, cpu = time.perf_counter(), time.process_time()
        report = assay(spec, suites=["stoichiometry"], quick=quick, out=out, scorecard=False)
        wall, used = time.perf_counter() - started, time.process_time() - cpu
        (outcome,) = report.suites
        print(f"| {outcome.spec} | {'quick' if quick else 'full'} | {cache} | {len(outcome.tasks)} | {wall:.1f} | "
              f"{used:.1f} | {outcome.verdict} |")
        if not quick and cache == "cold":
            scored[outcome.spec] = report.results
    print("\n| model | variant | split | n | EM % | BAL % | DEF % | EXC % |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for spec, results in scored.items():
        for result in results:
            setting = result.setting
            print(f"| {spec} | {setting['variant']} | {setting['split']} | {result.n:,} | {_cell(result, 'EM')} | "
                  f"{_cell(result, 'BAL')} | {_cell(result, 'DEF')} | {_cell(result, 'EXC')} |")
    print("\n| endpoint task | protocol | mode | items | requests |")
    print("| --- | --- | --- | --- | --- |")
    for quick in (True, False):
        _outcomes, planned = plan("openai:chemist,base_url=http://127.0.0.1:9/v1", suites=["stoichiometry"], quick=quick)
        for task in planned:
            print(f"| {task.task.key} | {task.task.protocol} | {'quick' if quick else 'full'} | {task.task.items:,} | "
                  f"{task.task.request_count:,} |")
        total = sum(task.task.request_count for task in planned)
        print(f"| all | | {'quick' if quick else 'full'} | | {total:,} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
