"""Wall time of the robustness suite's part in ``chemassay assay``, and the requests an endpoint gets.

Runs, each in a fresh cache folder (so the rewrites are computed, not read back): the quick
assay and the full assay with the built-in baseline (``fingerprint``: AMORE retrieval on
ChEBI-20 and the QM9 isomers), and the quick and full downstream task with the built-in forest
(``rf-fingerprint``). Then the plan for an ``openai:`` embeddings endpoint: the requests each
task sends, counted from the rewrites (no server is contacted). Prints a Markdown table.

Run: ``PYTHONPATH=src python benchmarks/robustness_assay.py [--out runs/robustness-assay]``.
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(tempfile.mkdtemp(prefix="robustness-assay-")))
    args = parser.parse_args()
    from timing import cpu_model

    from chemassay.assaying import assay, plan
    from chemassay.runtime.progress import settings

    settings.quiet = True
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}\n")
    print("| model | mode | tasks | wall s | verdict |")
    print("| --- | --- | --- | --- | --- |")
    for spec in (None, "rf-fingerprint"):
        for quick in (True, False):
            home = Path(tempfile.mkdtemp(prefix="chemassay-home-"))
            os.environ["CHEMASSAY_HOME"] = str(home)
            started = time.perf_counter()
            report = assay(spec, suites=["robustness"], quick=quick, out=args.out / f"{spec or 'baseline'}-{quick}",
                           scorecard=False)
            elapsed = time.perf_counter() - started
            (outcome,) = report.suites
            tasks = ", ".join(f"{t.task} ({t.status})" for t in outcome.tasks)
            print(f"| {outcome.spec} | {'quick' if quick else 'full'} | {tasks} | {elapsed:.1f} | {outcome.verdict} |")
    print("\n| endpoint task | mode | items | requests (batch 64, response cache on) |")
    print("| --- | --- | --- | --- |")
    for quick in (True, False):
        _outcomes, planned = plan("openai:embedder,base_url=http://127.0.0.1:9/v1", suites=["robustness"], quick=quick)
        for task in planned:
            print(f"| {task.task.key} | {'quick' if quick else 'full'} | {task.task.items:,} | {task.task.request_count:,} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
