"""Speed and memory of ``chemassay leakage`` as the training file grows.

For each size N a training file of N lines is written once under ``--work`` (MOSES training
molecules in file order, the split repeated when N exceeds it; gzipped), then ``python -m
chemassay leakage --train FILE ...`` runs in a child process: wall time, and the peak resident
memory of its process tree (the main process and its workers, summed, sampled every 0.2 s), with
the load average before and after (the machine may be shared). Memory should not grow with N:
the training side streams in chunks.

    python benchmarks/leakage_speed.py --sizes 20000,100000 --exact-only --quick --n-jobs 2
    python benchmarks/leakage_speed.py --sizes 1584663 --n-jobs 2                 # MOSES train vs every suite
    python benchmarks/leakage_speed.py --sizes 100000,10000000 --quick --exact-only --n-jobs 2
    python benchmarks/leakage_speed.py --table
"""

from __future__ import annotations

import argparse
import gzip
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generation_common import _tree_sample  # noqa: E402 - the summed RSS of a process tree, as the generation benchmarks measure it

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from committed import Clock, read_summary, write_summary  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def training_file(folder: Path, size: int) -> Path:
    """N MOSES training molecules (the split repeated as needed), gzipped, made once."""
    path = folder / f"moses_train_{size}.smi.gz"
    if path.is_file():
        return path
    from chemassay.suites.generation.data import load_moses

    train = load_moses(part="train")
    temporary = path.with_suffix(".part")
    with gzip.open(temporary, "wt", encoding="utf-8", compresslevel=1) as handle:
        written = 0
        while written < size:
            take = train[: size - written]
            handle.write("\n".join(take) + "\n")
            written += len(take)
    temporary.rename(path)
    return path


def measure(path: Path, size: int, args: argparse.Namespace, out: Path) -> dict:
    command = [sys.executable, "-m", "chemassay", "--quiet", "--no-store", "leakage", "--train", str(path),
               "--n-jobs", str(args.n_jobs), "--chunk-lines", str(args.chunk_lines), "--out", str(out)]
    if args.quick:
        command.append("--quick")
    if args.exact_only:
        command.append("--exact-only")
    for suite in args.suites.split(",") if args.suites else []:
        command += ["--suites", suite]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    load_before = os.getloadavg()
    started = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    peak = [0]

    def sample() -> None:
        while child.poll() is None:
            peak[0] = max(peak[0], _tree_sample(child.pid, {}))
            time.sleep(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    code = child.wait()
    sampler.join()
    wall = time.perf_counter() - started
    if code != 0:
        raise SystemExit(f"chemassay leakage exited with {code} for {size:,} lines")
    from chemassay.leaks import read_report

    report = read_report(out)
    return {"lines": size, "wall_s": round(wall, 1), "peak_rss_mib": round(peak[0] / 2**20),
            "index_s": report["timing"]["index_s"], "chunks": report["timing"]["chunks"],
            "test_items": sum(t["n"] for t in report["tasks"]), "tasks": len(report["tasks"]),
            "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in os.getloadavg()],
            "exact": {f"{t['suite']}/{t['task']}": t["exact"] for t in report["tasks"]}}


def table(name: str) -> None:
    data = read_summary(name)
    setting = data["setting"]
    print(f"setting: n_jobs {setting['n_jobs']}, chunk lines {setting.get('chunk_lines', 50_000):,}, quick "
          f"{setting['quick']}, exact only {setting['exact_only']}, suites {setting['suites'] or 'all'}")
    print("| training lines | test items | wall s | index s | peak memory MiB | load average (1 min, before/after) |")
    print("| ---: | ---: | ---: | ---: | ---: | --- |")
    for row in data["rows"]:
        print(f"| {row['lines']:,} | {row['test_items']:,} | {row['wall_s']:,.0f} | {row['index_s']:,.0f} | "
              f"{row['peak_rss_mib']:,} | {row['load_average_before'][0]:.1f} / {row['load_average_after'][0]:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="20000,100000")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--chunk-lines", type=int, default=50_000)
    parser.add_argument("--quick", action="store_true", help="the suites' quick test sets")
    parser.add_argument("--exact-only", action="store_true")
    parser.add_argument("--suites", help="comma-separated suites (default: every suite that declares test sets)")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "chemassay-leakage-speed")
    parser.add_argument("--name", default="leakage_speed", help="the committed summary's name")
    parser.add_argument("--table", action="store_true")
    args = parser.parse_args()
    if args.table:
        table(args.name)
        return
    args.work.mkdir(parents=True, exist_ok=True)
    clock = Clock()
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        path = training_file(args.work, size)
        rows.append(measure(path, size, args, args.work / f"out-{size}"))
        print(rows[-1], file=sys.stderr, flush=True)
    setting = {"n_jobs": args.n_jobs, "quick": args.quick, "exact_only": args.exact_only, "suites": args.suites,
               "chunk_lines": args.chunk_lines}
    write_summary(args.name, {"rows": rows, "setting": setting}, clock=clock, packages=("torch", "psutil"))
    table(args.name)


if __name__ == "__main__":
    main()
