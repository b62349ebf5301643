"""Speed and memory of the MOSES metrics: chemassay against the MOSES reference.

Both tools get the same SMILES (default: 30,000 built from real MOSES molecules, see
``generation_common.sample_smiles``, or ``--gen FILE``), run in their own child process
with ``--n-jobs`` workers and ``--threads`` torch threads, CPU only. Each is run
``--repeats`` times; the script prints every run and the medians of wall time and of the
peak resident memory of the whole process tree (sampled every 0.1 s), and the ratios.
chemassay is run once first to warm its cache (converted published statistics); the
reference reads its own files each run, as it always does.

    python benchmarks/generation_speed.py                       # 30,000 SMILES, 3 runs each
    python benchmarks/generation_speed.py --n 5000 --repeats 1  # a quick look
    python benchmarks/generation_speed.py --skip-reference      # chemassay only
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from generation_common import ensure_reference_venv, read_gen_file, run_tool, sample_smiles  # noqa: E402


def _gib(n_bytes: float) -> float:
    return n_bytes / 2**30


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
    args = parser.parse_args(argv)

    gen = read_gen_file(args.gen) if args.gen else sample_smiles(args.n, args.seed)
    print(f"{len(gen)} SMILES, n_jobs={args.n_jobs}, torch threads={args.threads}, {args.repeats} runs each")
    run_tool("chemassay", sys.executable, gen[:200], n_jobs=1, threads=args.threads)  # warm the cache

    results: dict[str, list[dict]] = {"chemassay": []}
    for i in range(args.repeats):
        run = run_tool("chemassay", sys.executable, gen, n_jobs=args.n_jobs, threads=args.threads)
        results["chemassay"].append(run)
        print(f"chemassay run {i + 1}: {run['wall_s']:.1f} s wall, {run['cpu_s']:.1f} s CPU, peak {_gib(run['peak_rss_bytes']):.2f} GiB")
    if not args.skip_reference:
        with tempfile.TemporaryDirectory() as tmp:
            venv = Path(args.venv) if args.venv else Path(tmp) / "moses-venv"
            python = ensure_reference_venv(venv, quiet=True)
            results["moses"] = []
            for i in range(args.repeats):
                run = run_tool("moses", str(python), gen, n_jobs=args.n_jobs, threads=args.threads)
                results["moses"].append(run)
                print(f"MOSES run {i + 1}: {run['wall_s']:.1f} s wall, {run['cpu_s']:.1f} s CPU, peak {_gib(run['peak_rss_bytes']):.2f} GiB")

    medians = {
        tool: tuple(statistics.median(r[key] for r in runs) for key in ("wall_s", "cpu_s", "peak_rss_bytes"))
        for tool, runs in results.items()
    }
    print()
    print(f"{'tool':<12}{'median wall (s)':>18}{'median CPU (s)':>17}{'median peak (GiB)':>20}")
    for tool, (wall, cpu, peak) in medians.items():
        print(f"{tool:<12}{wall:>18.1f}{cpu:>17.1f}{_gib(peak):>20.2f}")
    if "moses" in medians:
        ours, ref = medians["chemassay"], medians["moses"]
        print(
            f"speed-up {ref[0] / ours[0]:.1f}x wall, {ref[1] / ours[1]:.1f}x CPU; "
            f"peak memory {_gib(ref[2]):.2f} GiB vs {_gib(ours[2]):.2f} GiB (MOSES vs chemassay)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
