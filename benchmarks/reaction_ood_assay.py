"""Wall time of reaction-ood's part of ``chemassay assay`` with the built-in baseline.

Runs :func:`chemassay.assay` for the reaction-ood suite (the eight tasks of
``chemassay.suites.reaction_ood.assay``: the paper's random, document, time and reaction-type
splits of Schneider 50k) with the per-split template-kNN baseline, and prints the plan (items
and, at most, the requests a model behind an endpoint would receive), the wall time of each task, the
total, the peak memory and the verdict. By default the chemassay cache is a fresh temporary
folder, so the time includes preparing the data (cleaning, templates, one model per split);
``--home DIR`` reuses a cache, and a second run on it measures a warm assay.

Usage: ``PYTHONPATH=src python benchmarks/reaction_ood_assay.py [--quick] [--n-jobs 2]
[--home DIR] [--out DIR]``.
"""

from __future__ import annotations

import argparse
import logging
import os
import resource
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="The documented quick subset (30 reactions a task).")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--home", type=Path, default=None, help="CHEMASSAY_HOME to use (default: a fresh one).")
    parser.add_argument("--out", type=Path, default=None, help="Assay folder (default: a temporary one).")
    args = parser.parse_args()
    home = args.home or Path(tempfile.mkdtemp(prefix="chemassay-home-"))
    os.environ["CHEMASSAY_HOME"] = str(home)
    os.environ.setdefault("CHEMASSAY_NO_STORE", "1")
    out = args.out or Path(tempfile.mkdtemp(prefix="rood-assay-"))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    from chemassay.assaying import assay, plan

    _outcomes, planned = plan(None, suites=["reaction-ood"], quick=args.quick)
    endpoint = plan("openai:m,base_url=http://127.0.0.1:1/v1", suites=["reaction-ood"], quick=args.quick)[1]
    print(f"plan: {len(planned)} tasks, {sum(p.task.items for p in planned):,} test reactions; an endpoint model "
          f"would receive at most {sum(p.task.request_count for p in endpoint):,} requests (a reaction two tasks "
          "test is asked once)")
    started = time.perf_counter()
    report = assay(None, suites=["reaction-ood"], quick=args.quick, out=out, n_jobs=args.n_jobs, scorecard=False)
    total = time.perf_counter() - started
    [suite] = report.suites
    print("\n| task | status | n | seconds |\n| --- | --- | --- | --- |")
    for task in suite.tasks:
        n = "-"
        if task.path:
            from chemassay.contract.result import read_result

            n = str(read_result(task.path).n)
        print(f"| {task.task} | {task.status} | {n} | {task.elapsed_s:.0f} |")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"\ntotal {total:.0f} s ({'quick' if args.quick else 'full'}, n_jobs={args.n_jobs}, cache {home}); "
          f"peak RSS {peak:.0f} MB (largest worker {children:.0f} MB)")
    print(f"verdict: {suite.verdict}")
    print(f"results: {out}/reaction-ood")


if __name__ == "__main__":
    main()
