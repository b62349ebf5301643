"""How fast the seq2seq model learns on a CPU, with and without each of the ``small`` config's
four devices: pre-norm layers with sinusoidal positions, the copy head, largest-first sources
and root-aligned targets.

Every variant is the ``small`` config with some settings put back to BART's defaults, trained
on the USPTO-15K training reactions (seed 0, one torch thread, epochs of ``--steps`` steps of 32
pairs); after every ``--every`` epochs the run stops, its model is exported, and its greedy
top-1 on the first ``--n`` USPTO-15K validation reactions is measured (canonical products
compared; the decoding time is not counted as training time). Each variant runs in its own
folder and resumes where it stopped.

    PYTHONPATH=src python benchmarks/seq2seq_learning_probe.py --out reports/probe --variants bart,small
    PYTHONPATH=src python benchmarks/seq2seq_learning_probe.py --out reports/probe --table

Variants (``--variants``, comma-separated):

* ``bart`` — BART as the earlier ``small`` config had it: post-norm, learned positions, no copy
  head, sources as given, canonical targets;
* ``sinusoidal`` — ``mbart`` layers with fixed sinusoidal positions, nothing else;
* ``copy`` — that plus the copy head;
* ``small`` — that plus largest-first sources and aligned targets (the ``small`` config).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import cpu_model  # noqa: E402

PLAIN = {"architecture": "bart", "positions": "learned", "copy": False, "source_order": "as-given",
         "target_root": "canonical"}
VARIANTS = {
    "bart": PLAIN,
    "sinusoidal": {**PLAIN, "architecture": "mbart", "positions": "sinusoidal"},
    "copy": {**PLAIN, "architecture": "mbart", "positions": "sinusoidal", "copy": True},
    "small": {},
}


def greedy_top1(folder: Path, valid: list[tuple[str, str]]) -> float:
    from chemassay.chem import try_canonical
    from chemassay.models.seq2seq import Seq2SeqPredictor, load_seq2seq

    predictor = Seq2SeqPredictor(load_seq2seq(folder, threads=1), decode="greedy", batch_size=50)
    predicted = predictor.predict([s for s, _ in valid], k=1)
    hits = [bool(row) and row[0] == try_canonical(target) for row, (_, target) in zip(predicted, valid, strict=True)]
    return sum(hits) / len(hits)


def probe(args, name: str, train: list, valid_loss: list, valid_top1: list) -> None:
    from chemassay.models.seq2seq import train_seq2seq

    folder = args.out / name
    log = args.out / f"{name}.jsonl"
    while True:
        started, cpu = time.perf_counter(), time.process_time()
        report = train_seq2seq(train, folder, config="small", valid=valid_loss, seed=0, threads=1, progress=False,
                               max_epochs=args.epochs, steps_per_epoch=args.steps, stop_after_epochs=args.every,
                               overrides=VARIANTS[name], metadata={"task": "reactions"})
        seconds, cpu_s = time.perf_counter() - started, time.process_time() - cpu
        top1 = greedy_top1(folder, valid_top1)
        record = {"variant": name, "step": report.global_step, "train_wall_s": seconds, "train_cpu_s": cpu_s,
                  "best_val_loss": report.best_val_loss, "top1": top1, "n": len(valid_top1),
                  "load_average": os.getloadavg()[0]}
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
        print(json.dumps(record), flush=True)
        if report.finished:
            return


def table(args) -> None:
    from chemassay.report.intervals import percentile_interval

    print(f"greedy top-1 on the first USPTO-15K validation reactions [95 % interval]; {cpu_model()}\n")
    print("| variant | step | training CPU min (cumulative) | validation loss | top-1 % |\n| --- | --- | --- | --- | --- |")
    for name in VARIANTS:
        path = args.out / f"{name}.jsonl"
        if not path.is_file():
            continue
        cpu = 0.0
        for line in path.read_text().splitlines():
            r = json.loads(line)
            cpu += r["train_cpu_s"]
            hits = [1.0] * round(r["top1"] * r["n"]) + [0.0] * (r["n"] - round(r["top1"] * r["n"]))
            low, high = percentile_interval(hits, resamples=1000, seed=0)
            print(f"| {name} | {r['step']} | {cpu / 60:.1f} | {r['best_val_loss']:.3f} | "
                  f"{100 * r['top1']:.1f} [{100 * low:.1f}, {100 * high:.1f}] |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("reports/probe"))
    parser.add_argument("--variants", default="bart,small")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--steps", type=int, default=500, help="Steps per epoch.")
    parser.add_argument("--every", type=int, default=2, help="Epochs between measurements.")
    parser.add_argument("--n", type=int, default=500, help="Validation reactions scored for top-1.")
    parser.add_argument("--table", action="store_true", help="Print the table of what is measured.")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.table:
        table(args)
        return
    import torch

    torch.set_num_threads(1)
    from chemassay.models.seq2seq_data import read_pairs

    train = read_pairs("uspto-15k", "reactions", split="train").pairs
    valid = read_pairs("uspto-15k", "reactions", split="valid").pairs
    for name in args.variants.split(","):
        if name not in VARIANTS:
            raise SystemExit(f"unknown variant {name!r}; choose from {', '.join(VARIANTS)}")
        probe(args, name, train, valid[:1000], valid[:args.n])


if __name__ == "__main__":
    main()
