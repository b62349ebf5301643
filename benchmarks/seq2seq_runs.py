"""What the two seq2seq reproduction scripts (stoichiometry_seq2seq.py, reaction_ood_seq2seq.py)
share: the training-time table, the plan of what is still to run, and the stage runner."""

from __future__ import annotations

import json
import resource
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path


def print_train_times(out: Path) -> None:
    """The table of ``OUT/models/train_times.jsonl`` (one row per training piece recorded)."""
    times = out / "models" / "train_times.jsonl"
    if not times.is_file():
        return
    print("\n| model | pairs | steps | best val loss | tokens/s | wall min | CPU min |\n" + "| --- " * 7 + "|")
    for line in times.read_text().splitlines():
        r = json.loads(line)
        print(f"| {r['name']} | {r['train_pairs']} | {r['steps']} | {r['best_val_loss']:.3f} | "
              f"{r['tokens_per_s'] or 0:.0f} | {r['wall_s'] / 60:.1f} | {r['cpu_s'] / 60:.1f} |")


def print_plan(names: Iterable[str], out: Path, script: str) -> None:
    """Each model's state (trained / partly trained / not trained) and the commands that finish it."""
    for name in names:
        record_file = out / "models" / name / "seq2seq.json"
        finished = json.loads(record_file.read_text()).get("training", {}).get("finished") if record_file.is_file() else None
        state = "trained" if finished else ("partly trained" if record_file.is_file() else "not trained")
        print(f"{name:24s} {state:15s} python benchmarks/{script} train {name} --out {out} "
              f"&& python benchmarks/{script} evaluate {name} --out {out}")


def run_stage(args, stages: dict[str, Callable]) -> None:
    """Run ``args.stage`` and print its wall time and peak memory on stderr."""
    started = time.perf_counter()
    stages[args.stage](args)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"# {args.stage}: {time.perf_counter() - started:.0f} s, peak RSS {peak:.0f} MB", file=sys.stderr)
