"""Speed and memory of the MOSES metrics: chemassay against the MOSES reference.

Both tools get the same SMILES (default: 30,000 built from real MOSES molecules, see
``generation_common.sample_smiles``, or ``--gen FILE``), run in their own child process
with ``--n-jobs`` workers and ``--threads`` torch threads, CPU only. Runs alternate
(chemassay, MOSES, chemassay, MOSES, ...) so that both see the same changes of load on a
shared machine; each run prints its wall time, the CPU time and peak resident memory of
its whole process tree (sampled every 0.1 s), the 1-minute load average before and after,
and for chemassay its stage timings. The summary gives medians and the ratios. chemassay
is run once first to warm its cache (converted published statistics); the reference reads
its own files each run, as it always does.

``--competitor`` measures the busy-machine case: every run is repeated with one extra
CPU-bound process (a busy Python loop) competing for the cores, and the slowdown (wall
with the competitor / wall without) is printed per tool. On two cores an ideal run slows
by at most 1.5x (it gets two thirds of the machine), not 10x.

    python benchmarks/generation_speed.py                       # 30,000 SMILES, 3 runs each
    python benchmarks/generation_speed.py --n 5000 --repeats 1  # a quick look
    python benchmarks/generation_speed.py --skip-reference --competitor
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from generation_common import (  # noqa: E402
    ensure_reference_venv,
    load_average,
    read_gen_file,
    run_tool,
    sample_smiles,
    start_competitor,
)


def _gib(n_bytes: float) -> float:
    return n_bytes / 2**30


def _run(tool: str, python: str, gen: list[str], args, competitor: bool) -> dict:
    helper = start_competitor() if competitor else None
    try:
        before = load_average()
        src = args.baseline_src if tool == "baseline" else None
        run = run_tool("moses" if tool == "moses" else "chemassay", python, gen, n_jobs=args.n_jobs,
                       threads=args.threads, src=src)
        run["load"] = (before, load_average())
    finally:
        if helper is not None:
            helper.kill()
            helper.wait()
    label = f"{tool}{' + competitor' if competitor else ''}"
    stages = ""
    if run.get("timings"):
        stages = "; stages " + ", ".join(f"{k} {v:.1f}" for k, v in run["timings"].items())
    print(f"{label}: {run['wall_s']:.1f} s wall, {run['cpu_s']:.1f} s CPU, peak {_gib(run['peak_rss_bytes']):.2f} GiB, "
          f"load {run['load'][0]:.1f} -> {run['load'][1]:.1f}{stages}", flush=True)
    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gen", help="SMILES file (default: a sample built from MOSES)")
    parser.add_argument("--n", type=int, default=30000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--venv", help="reference venv location (kept; default: temporary)")
    parser.add_argument("--skip-reference", action="store_true")
    parser.add_argument("--competitor", action="store_true",
                        help="also run chemassay (and --baseline-src) beside one busy process")
    parser.add_argument("--baseline-src", help="also run this chemassay source tree (e.g. an older checkout's src)")
    args = parser.parse_args(argv)

    gen = read_gen_file(args.gen) if args.gen else sample_smiles(args.n, args.seed)
    print(f"{len(gen)} SMILES, n_jobs={args.n_jobs}, torch threads={args.threads}, {args.repeats} runs each, "
          f"load average {load_average():.1f}", flush=True)
    run_tool("chemassay", sys.executable, gen[:200], n_jobs=1, threads=args.threads)  # warm the cache

    tools = {"chemassay": sys.executable}
    if args.baseline_src:
        tools["baseline"] = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_reference:
            venv = Path(args.venv) if args.venv else Path(tmp) / "moses-venv"
            tools["moses"] = str(ensure_reference_venv(venv, quiet=True))
        results: dict[str, list[dict]] = {}
        for _ in range(args.repeats):
            for tool, python in tools.items():
                results.setdefault(tool, []).append(_run(tool, python, gen, args, competitor=False))
                if args.competitor and tool != "moses":
                    results.setdefault(f"{tool}+competitor", []).append(_run(tool, python, gen, args, competitor=True))

    medians = {
        tool: tuple(statistics.median(r[key] for r in runs) for key in ("wall_s", "cpu_s", "peak_rss_bytes"))
        for tool, runs in results.items()
    }
    print()
    print(f"{'tool':<22}{'median wall (s)':>18}{'median CPU (s)':>17}{'median peak (GiB)':>20}")
    for tool, (wall, cpu, peak) in medians.items():
        print(f"{tool:<22}{wall:>18.1f}{cpu:>17.1f}{_gib(peak):>20.2f}")
    for other in ("moses", "baseline"):
        if other in medians:
            ours, ref = medians["chemassay"], medians[other]
            print(
                f"{other} / chemassay: {ref[0] / ours[0]:.1f}x wall, {ref[1] / ours[1]:.1f}x CPU; "
                f"peak memory {_gib(ref[2]):.2f} GiB vs {_gib(ours[2]):.2f} GiB"
            )
    for tool in tools:
        if f"{tool}+competitor" in medians:
            print(f"{tool}: slowdown with one competing process {medians[f'{tool}+competitor'][0] / medians[tool][0]:.2f}x "
                  "(wall, medians)")
    loads = [value for runs in results.values() for r in runs for value in r["load"]]
    print(f"load average during the runs: {min(loads):.1f} to {max(loads):.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
