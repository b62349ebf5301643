"""Speed of re-balancing and of building all eight ChemAlgebra variants.

Target (issue 4): re-balancing plus the eight datasets for 480,000 reactions within 10 minutes
on 2 cores. Runs on USPTO-15K (15,000 reactions) and on a synthetic 480k set made by repeating
every USPTO-15K split 32 times (each distinct molecule text is still parsed once per worker;
every line is still re-balanced, written and checked for balance). Prints wall time, CPU time
(this process and its workers), throughput in reactions/s and lines/s, and peak memory, so the
figures can be re-measured on a quiet machine:

    PYTHONPATH=src python benchmarks/stoichiometry_build.py --jobs 2 [--repeat 32] [--skip-small]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import tempfile
import time
from pathlib import Path

from chemassay.runtime.progress import settings
from chemassay.suites.stoichiometry.data import resolve_source
from chemassay.suites.stoichiometry.prepare import RebalanceConfig, process_source
from chemassay.suites.stoichiometry.variants import (
    AUGMENTATIONS,
    ENCODINGS,
    TASKS,
    VariantConfig,
    build_variants,
)

TARGET_SECONDS = 600.0


def cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def peak_mb() -> tuple[float, float]:
    return (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)


def run(repeat: int, jobs: int, root: Path) -> dict:
    source = resolve_source("uspto-15k")
    wall, cpu = time.perf_counter(), cpu_seconds()
    processed = process_source(source, RebalanceConfig(), n_jobs=jobs, repeat=repeat)
    balance_wall, balance_cpu = time.perf_counter() - wall, cpu_seconds() - cpu
    reactions = sum(len(v) for v in processed.outcomes.values())
    configs = [VariantConfig(e, t, a, seed=0) for e in ENCODINGS for t in TASKS for a in AUGMENTATIONS]
    folders = [root / c.name for c in configs]
    wall, cpu = time.perf_counter(), cpu_seconds()
    manifests = build_variants(processed, configs, folders, source_info={"name": f"uspto-15k x{repeat}"}, n_jobs=jobs)
    build_wall, build_cpu = time.perf_counter() - wall, cpu_seconds() - cpu
    lines = sum(v["lines"] for m in manifests for k, v in m["files"].items() if k.startswith("src-"))
    size = sum(p.stat().st_size for folder in folders for p in folder.iterdir())
    counts = processed.counts()
    return {
        "reactions": reactions, "usable": counts["balanced"] + counts["rebalanced"], "lines": lines,
        "bytes": size, "balance_wall": balance_wall, "balance_cpu": balance_cpu,
        "build_wall": build_wall, "build_cpu": build_cpu,
    }


def report(name: str, figures: dict, jobs: int) -> None:
    total_wall = figures["balance_wall"] + figures["build_wall"]
    total_cpu = figures["balance_cpu"] + figures["build_cpu"]
    own, children = peak_mb()
    print(f"\n== {name}: {figures['reactions']:,} reactions ({figures['usable']:,} balanced or re-balanced), "
          f"{jobs} worker(s)")
    print(f"re-balancing   wall {figures['balance_wall']:8.1f} s   cpu {figures['balance_cpu']:8.1f} s   "
          f"{figures['reactions'] / figures['balance_wall']:10,.0f} reactions/s")
    print(f"8 variants     wall {figures['build_wall']:8.1f} s   cpu {figures['build_cpu']:8.1f} s   "
          f"{figures['lines'] / figures['build_wall']:10,.0f} lines/s   "
          f"({figures['lines']:,} src/tgt line pairs, {figures['bytes'] / 1e9:.2f} GB written)")
    print(f"total          wall {total_wall:8.1f} s   cpu {total_cpu:8.1f} s   "
          f"{figures['reactions'] / total_wall:10,.0f} reactions/s end to end")
    print(f"cpu / {jobs} cores = {total_cpu / jobs:.1f} s (lower bound of wall time on an idle machine); "
          f"target {TARGET_SECONDS:.0f} s: {'met' if total_wall <= TARGET_SECONDS else 'NOT met'} by wall time, "
          f"{'met' if total_cpu / jobs <= TARGET_SECONDS else 'NOT met'} by cpu/cores")
    print(f"peak memory: main {own:.0f} MB, largest worker {children:.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=32, help="copies of USPTO-15K in the large set (32: 480,000)")
    parser.add_argument("--skip-small", action="store_true", help="only the large synthetic set")
    parser.add_argument("--keep", type=Path, default=None, help="write the datasets here and keep them")
    args = parser.parse_args()
    settings.quiet = True
    print(f"stoichiometry build benchmark, {args.jobs} worker(s)")
    sizes = ([1] if not args.skip_small else []) + [args.repeat]
    for repeat in sizes:
        root = args.keep / f"x{repeat}" if args.keep else Path(tempfile.mkdtemp(prefix="chemassay-stoich-"))
        try:
            figures = run(repeat, args.jobs, root)
        finally:
            if not args.keep:
                shutil.rmtree(root, ignore_errors=True)
        report("USPTO-15K" if repeat == 1 else f"USPTO-15K x {repeat} (synthetic)", figures, args.jobs)


if __name__ == "__main__":
    main()
