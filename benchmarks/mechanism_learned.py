"""Reproduce the paper's fine-tuning experiment (Table 16) with the model trained here.

Steps (each skipped when its output exists; training resumes where it stopped):

1. expand oMe-Template at oMe-Silver's scale (``--per-template 18 --seed 0``: 2,502
   reactions) into ``OUT/silver.jsonl`` — the stand-in for the paper's oMe-Silver, which is
   not public;
2. train the learned mechanism model on it (``chemassay mechanism train``; the CPU run of
   the docs: ``--config small --batch-size 32 --steps-per-epoch 250 --max-epochs 10
   --threads 1``) into ``OUT/model``;
3. score it on oMe-Gold (greedy decoding; answers kept in ``OUT/gold_predictions.jsonl``,
   resumable), and the nearest-neighbour baseline with the same pool under both exemplar
   rules, each overall / in-domain / out-of-domain (the domain: the family seen in the
   training set / pool) with 95 % bootstrap intervals (1,000 resamples, seed 0); the error
   taxonomy of the model's answers; results as JSON in ``OUT``.

Run: ``PYTHONPATH=src python benchmarks/mechanism_learned.py --out runs/mechanism [--device cuda --config paper]``
(the defaults are the CPU run reported in docs/mechanism.md).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import chemassay.mechanism as mechanism

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import cpu_model, interval_cell  # noqa: E402

METRICS = ("S_total", "S_partial", "V", "L")


def cell(result, key: str) -> str:
    return interval_cell(result, key, scale=100.0, digits=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("runs/mechanism"))
    parser.add_argument("--silver", type=Path, help="an expansion to train on (default: OUT/silver.jsonl, made here)")
    parser.add_argument("--model-dir", type=Path, help="model folder (default: OUT/model)")
    parser.add_argument("--config", default="small")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--steps-per-epoch", type=int, default=250)
    parser.add_argument("--max-epochs", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--beam", type=int, default=1)
    parser.add_argument("--max-minutes", type=float, default=None, help="train in pieces of this length")
    parser.add_argument("--bootstrap", type=int, default=1000)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    silver = args.silver or args.out / "silver.jsonl"
    if not silver.is_file():
        expanded = mechanism.expand("template", per_template=18, seed=0, out=silver)
        print(f"expanded oMe-Template into {silver}: {len(expanded.records)} reactions")
    model_dir = args.model_dir or args.out / "model"
    started = time.perf_counter()
    report = mechanism.train(silver, model_dir, config=args.config, seed=args.seed, device=args.device,
                             threads=args.threads, max_minutes=args.max_minutes, batch_size=args.batch_size,
                             steps_per_epoch=args.steps_per_epoch, max_epochs=args.max_epochs, progress=False)
    print(f"training: {report.as_dict()} ({time.perf_counter() - started:.0f} s this call)")
    if not report.finished:
        print("training not finished: run the same command again to continue")
        return
    log = [json.loads(line) for line in (model_dir / "train_log.jsonl").read_text().splitlines() if line.strip()]
    train_seconds = sum(row.get("elapsed_s", 0.0) for row in log)
    print(f"training time (sum of epoch wall times): {train_seconds / 60:.1f} min on {cpu_model()}, "
          f"threads {args.threads}, device {args.device}")

    spec = f"mechanism-seq2seq:{model_dir},beam={args.beam},threads={args.threads},device={args.device}"
    started = time.perf_counter()
    learned = mechanism.evaluate(model=spec, predictions_out=args.out / "gold_predictions.jsonl",
                                 bootstrap=args.bootstrap, seed=0)
    decode_seconds = time.perf_counter() - started
    learned.write(args.out / "learned_gold.json")
    rows = [("learned seq2seq (trained on the expansion)", learned)]
    for same_family, label in ((False, "nearest-neighbour, same pool, family excluded"),
                               (True, "nearest-neighbour, same pool, paper's rule (identical only)")):
        result = mechanism.evaluate(model=f"nearest-neighbour:pool={silver}"
                                    + (",allow_same_family=true" if same_family else ""),
                                    bootstrap=args.bootstrap, seed=0)
        result.write(args.out / f"nn_{'paper' if same_family else 'strict'}_gold.json")
        rows.append((label, result))

    print(f"\noMe-Gold, 196 reactions; % with 95 % bootstrap intervals; scoring with the model took "
          f"{decode_seconds:.0f} s (greedy decoding included)")
    for label, result in rows:
        print(f"\n{label}: in-domain {result.metrics.get('n_in_domain')}, out-of-domain "
              f"{result.metrics.get('n_out_of_domain')}, unparsed {result.metrics['n_unparsed']}")
        print(f"  {'metric':<10} {'overall':>22} {'in-domain':>22} {'out-of-domain':>22}")
        for metric in METRICS:
            print(f"  {metric:<10} {cell(result, metric):>22} {cell(result, 'in-domain/' + metric):>22} "
                  f"{cell(result, 'out-of-domain/' + metric):>22}")
    taxonomy = learned.details.error_taxonomy.model_dump()
    print("\nerror taxonomy of the learned model's answers (share of all error events):")
    for name, count in sorted(taxonomy["counts"].items(), key=lambda item: -item[1]):
        if count:
            print(f"  {name:<22} {count:>5}  {100 * taxonomy['share'][name]:5.1f} %")
    by_level = learned.details.by_level
    print("\nby level (S_total %): " + ", ".join(f"{level} {100 * v.S_total:.1f} (n={v.n})"
                                                 for level, v in by_level.items()))


if __name__ == "__main__":
    main()
