"""What the two seq2seq reproduction scripts (stoichiometry_seq2seq.py, reaction_ood_seq2seq.py)
share: the training-time table, the plan of what is still to run, and the stage runner."""

from __future__ import annotations

import gzip
import json
import os
import resource
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
"""Where the compact results of the reproduction runs are committed (``summary`` stage)."""


def _train_times(out: Path, summary: Path | None) -> list[dict]:
    times = out / "models" / "train_times.jsonl"
    if times.is_file():
        return [json.loads(line) for line in times.read_text().splitlines() if line.strip()]
    if summary is not None and summary.is_file():
        return json.loads(gzip.decompress(summary.read_bytes()))["train_times"]
    return []


def epochs_seconds(folder: Path) -> float | None:
    """The summed training time of every epoch in ``folder/train_log.jsonl`` (all pieces of a run,
    validation excluded): the run's training time even where a piece was killed unrecorded."""
    log_file = folder / "train_log.jsonl"
    if not log_file.is_file():
        return None
    rows = [json.loads(line) for line in log_file.read_text().splitlines() if line.strip()]
    return round(sum(r.get("elapsed_s", 0.0) for r in rows), 1)


def print_train_times(out: Path, summary: Path | None = None) -> None:
    """The table of ``OUT/models/train_times.jsonl`` (one row per model: its recorded pieces
    summed), or of the committed summary when ``OUT`` holds no runs. ``epochs min`` sums the
    epochs of ``train_log.jsonl``, so it counts pieces that were killed before they were recorded."""
    rows = _train_times(out, summary)
    if not rows:
        return
    models: dict[str, list[dict]] = {}
    for r in rows:
        models.setdefault(r["name"], []).append(r)
    print("\n| model | pairs | steps | best val loss | tokens/s | pieces | wall min | CPU min | epochs min |\n"
          + "| --- " * 9 + "|")
    for name, pieces in models.items():
        last = pieces[-1]
        epochs = last.get("epochs_s")
        print(f"| {name} | {last['train_pairs']} | {last['steps']} | {last['best_val_loss']:.3f} | "
              f"{last['tokens_per_s'] or 0:.0f} | {len(pieces)} | {sum(r['wall_s'] for r in pieces) / 60:.1f} | "
              f"{sum(r['cpu_s'] for r in pieces) / 60:.1f} | {'-' if epochs is None else f'{epochs / 60:.1f}'} |")


def print_plan(names: Iterable[str], out: Path, script: str, epochs: Mapping[str, int | None] | None = None) -> None:
    """Each model's state (trained / partly trained / not trained) and the commands that finish it
    (with ``--epochs N`` where ``epochs`` names a model's run length)."""
    for name in names:
        length = (epochs or {}).get(name)
        extra = f" --epochs {length}" if length else ""
        record_file = out / "models" / name / "seq2seq.json"
        finished = json.loads(record_file.read_text()).get("training", {}).get("finished") if record_file.is_file() else None
        state = "trained" if finished else ("partly trained" if record_file.is_file() else "not trained")
        print(f"{name:24s} {state:15s} python benchmarks/{script} train {name}{extra} --out {out} "
              f"&& python benchmarks/{script} evaluate {name} --out {out}")


def run_stage(args, stages: dict[str, Callable]) -> None:
    """Run ``args.stage`` and print its wall time and peak memory on stderr."""
    started = time.perf_counter()
    stages[args.stage](args)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"# {args.stage}: {time.perf_counter() - started:.0f} s, peak RSS {peak:.0f} MB", file=sys.stderr)


def train_model(args, name: str, train: str | Path, *, task: str, split: str = "train", valid: Path | None = None) -> None:
    """Train (or resume) ``OUT/models/NAME`` with ``chemassay models train seq2seq``'s library call,
    print the equivalent command, and append this piece's times to ``train_times.jsonl``.
    ``args`` carries ``out``, ``config``, ``epochs``, ``threads``, ``device``, ``max_minutes``
    and ``set`` (config overrides, ``KEY=VALUE``)."""
    from chemassay.models.seq2seq import parse_settings, train_from_source

    target = args.out / "models" / name
    overrides = parse_settings(args.set or [])
    options: dict[str, Any] = {"max_epochs": args.epochs} if args.epochs else {}
    command = (f"chemassay models train seq2seq --train {train} --task {task} --split {split}"
               + (f" --valid {valid}" if valid else "") + f" --config {args.config}"
               + (f" --max-epochs {args.epochs}" if args.epochs else "")
               + "".join(f" --set {item}" for item in args.set or [])
               + f" --threads {args.threads} --device {args.device} --seed 0 --out {target}")
    print(f"[{time.strftime('%H:%M:%S')}] training {name}: {command}", flush=True)
    started, cpu = time.perf_counter(), time.process_time()
    report = train_from_source(train, target, task=task, split=split, valid=valid, config=args.config,
                               threads=args.threads, device=args.device, seed=0, max_minutes=args.max_minutes,
                               progress=False, overrides=overrides, **options)
    record = {"name": name, "command": command, "finished": report.finished, "epochs": report.epochs_done,
              "steps": report.global_step, "best_val_loss": report.best_val_loss, "train_pairs": report.train_pairs,
              "tokens_per_s": report.tokens_per_s, "wall_s": time.perf_counter() - started,
              "cpu_s": time.process_time() - cpu, "parameters": report.parameters,
              "load_average": os.getloadavg()[0], "epochs_s": epochs_seconds(target)}
    (args.out / "models").mkdir(parents=True, exist_ok=True)
    with open(args.out / "models" / "train_times.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")
    print(f"[{time.strftime('%H:%M:%S')}] {name}: {record}", flush=True)


def add_train_options(parser, names: Iterable[str]) -> None:
    """The ``train`` stage's options, the same in both scripts."""
    parser.add_argument("name", choices=sorted(names))
    parser.add_argument("--config", default="small")
    parser.add_argument("--epochs", type=int, default=None, help="Epochs of 500 steps (default: the experiment's run length, else the config's).")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--max-minutes", type=float, default=None)
    parser.add_argument("--set", action="append", default=None, metavar="KEY=VALUE",
                        help="Config override, as 'chemassay models train seq2seq --set'.")


def write_summary(out: Path, summary: Path, keep: Callable[[dict], dict]) -> None:
    """Every result in ``OUT/results`` reduced by ``keep`` (the fields its ``table`` reads),
    with the training records, into one gzipped JSON file (committed, so the tables can be
    printed again without the runs)."""
    results = {path.stem: keep(json.loads(path.read_text())) for path in sorted((out / "results").glob("*.json"))}
    data = {"results": results, "train_times": _train_times(out, None)}
    summary.parent.mkdir(parents=True, exist_ok=True)
    summary.write_bytes(gzip.compress(json.dumps(data, sort_keys=True).encode("utf-8"), mtime=0))
    print(f"{summary}: {len(results)} results, {summary.stat().st_size / 1024:.0f} KiB")


def read_results(out: Path, summary: Path) -> dict[str, dict]:
    """The results of ``OUT/results`` by file stem, or the committed summary's when ``OUT``
    holds none."""
    found = {path.stem: json.loads(path.read_text()) for path in sorted((out / "results").glob("*.json"))}
    if not found and summary.is_file():
        found = json.loads(gzip.decompress(summary.read_bytes()))["results"]
        print(f"(from the committed summary {summary.name}; run the stages to recompute)\n")
    return found
