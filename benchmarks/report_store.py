"""How fast the results store lists many results (target: 100,000 stored results list in under
a second).

Fills a temporary store with N results of all five suites (the shape of real results: a dozen
metrics, config, model, dataset; without per-item lists, which listing never reads), then
times

* ``ResultStore.list()`` of every latest run (the Python API),
* the same with a filter (one suite, a model substring),
* ``chemassay results list --limit 0`` end to end (a new process: start-up, query, printing
  100,000 lines to /dev/null), and ``--json``.

    python benchmarks/report_store.py            # 100,000 results
    python benchmarks/report_store.py --n 20000
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import peak_rss_mb, timed  # noqa: E402

from chemassay.contract.result import DatasetRef, ModelRef, Result  # noqa: E402
from chemassay.report.store import Filters, ResultStore  # noqa: E402

SHAPES = {
    "stoichiometry": ("evaluate", ["EM", "JAC", "F1", "mol_JAC", "mol_F1", "ACC", "ALO", "VAL", "BAL", "DEF", "EXC", "DE"]),
    "reaction-ood": ("evaluate", [f"top{k}_accuracy" for k in (1, 2, 3, 5, 10)] + ["invalid_prediction_rate"]),
    "generation": ("evaluate", ["valid", "unique@1000", "unique@10000", "FCD/Test", "SNN/Test", "Frag/Test", "Scaf/Test",
                                "IntDiv", "IntDiv2", "Filters", "Novelty"]),
    "robustness": ("retrieve", [f"{a}/o2a_acc@1" for a in ("canonical", "explicit_h", "kekulize", "cycle_renumber")]),
    "mechanism": ("evaluate", ["S_total", "S_partial", "V", "L"]),
}


def make_results(n: int):
    suites = list(SHAPES)
    for i in range(n):
        suite = suites[i % len(suites)]
        task, keys = SHAPES[suite]
        metrics = {key: ((i * 7919 + j * 104729) % 1000) / 1000 for j, key in enumerate(keys)}
        yield Result(suite=suite, task=task, metrics=metrics, n=1000 + i % 50,
                     model=ModelRef(spec=f"predictions:model-{i}.txt", name=f"model-{i}", kind="predictions",
                                    checksum=f"{i:064x}"),
                     dataset=DatasetRef(name=f"{suite}-data", sha256=f"{i % 7:064x}"),
                     config={"seed": i % 3, "split": "test"}), f"/results/run-{i}.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=100_000, help="results to store")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="chemassay-store-bench-") as folder:
        path = Path(folder) / "results.sqlite"
        started = time.perf_counter()
        with ResultStore(path) as store:
            batch = []
            for pair in make_results(args.n):
                batch.append(pair)
                if len(batch) == 5000:
                    store.add_many(batch)
                    batch = []
            if batch:
                store.add_many(batch)
        fill = time.perf_counter() - started
        size_mb = path.stat().st_size / 1e6
        print(f"filled {args.n:,} results in {fill:.1f} s ({size_mb:.0f} MB)")

        with ResultStore(path) as store:
            seconds, runs = timed(lambda: store.list(Filters()), args.repeats)
            print(f"ResultStore.list(): {len(runs):,} runs in {seconds:.3f} s (median of {args.repeats})")
            seconds, runs = timed(lambda: store.list(Filters(suite="generation", model="model-1")), args.repeats)
            print(f"ResultStore.list(suite=generation, model~'model-1'): {len(runs):,} runs in {seconds:.3f} s")

        env = dict(os.environ, CHEMASSAY_STORE=str(path))
        command = [sys.executable, "-c", "from chemassay.cli import main; main()"]
        for extra in ([], ["--json"]):
            def run_cli(extra=extra):
                with open(os.devnull, "w") as sink:
                    subprocess.run(command + ["results", "list", "--limit", "0", *extra], env=env, stdout=sink, check=True)
            seconds, _ = timed(run_cli, args.repeats)
            print(f"chemassay results list --limit 0 {' '.join(extra)}: {seconds:.3f} s end to end "
                  f"(new process, {args.n:,} lines to /dev/null; median of {args.repeats})")
        def start_only():
            subprocess.run(command + ["--version"], env=env, stdout=subprocess.DEVNULL, check=True)
        seconds, _ = timed(start_only, args.repeats)
        print(f"for scale: chemassay --version (process start-up alone): {seconds:.3f} s")
    print(f"peak RSS of this process: {peak_rss_mb():.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
