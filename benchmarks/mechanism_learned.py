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
(the defaults are the CPU run reported in docs/mechanism.md). ``--summary`` also writes what the
docs quote (each row's metrics and intervals overall / in- / out-of-domain, the model's training
record, error taxonomy and levels) to ``benchmarks/results/mechanism_learned.json.gz``;
``--baselines-only`` scores the two nearest-neighbour rows without training the model (their
summary then holds no learned row); ``--table`` prints the docs' table from the committed file.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import chemassay.mechanism as mechanism

sys.path.insert(0, str(Path(__file__).resolve().parent))
from committed import Clock, read_summary, write_summary  # noqa: E402
from timing import cpu_model, interval_cell  # noqa: E402

METRICS = ("S_total", "S_partial", "V", "L")
SUMMARY = "mechanism_learned"
ROWS = (("learned", "learned seq2seq (this run)", "trained on the silver expansion"),
        ("nn_strict", "nearest-neighbour, silver pool", "family excluded (chemassay's rule)"),
        ("nn_paper", "nearest-neighbour, silver pool", "identical only (the paper's App. G)"))
"""Summary key, model and setting cells of the docs' table rows."""
TAXONOMY_WORDS = {"wrong_step_type": "wrong step type", "invalid_smiles": "invalid SMILES",
                  "wrong_intermediate": "wrong intermediate", "skipped_critical_step": "skipped critical step",
                  "skipped_step": "skipped step", "extra_step": "extra step", "valence_charge": "valence/charge",
                  "inconsistent_smiles": "inconsistent SMILES",
                  "no_answer": "no answer (outputs that are not a step sequence)"}


def cell(result, key: str) -> str:
    return interval_cell(result, key, scale=100.0, digits=1)


def field(result, name: str):
    """A per-suite field of a result (``by_level``, ``error_taxonomy``): an attribute, or an
    entry of its ``details`` (where such fields are moving), else None."""
    value = getattr(result, name, None)
    if value is None:
        details = getattr(result, "details", None)
        value = details.get(name) if isinstance(details, dict) else getattr(details, name, None)
    return _plain(value)


def _plain(value):
    """JSON-ready: typed details (pydantic models, also inside dicts and lists) as plain data."""
    if hasattr(value, "model_dump"):
        return value.model_dump()
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def compact(result) -> dict:
    """What the docs' rows read from one result: metrics, intervals, domain counts, levels."""
    keys = [f"{prefix}{metric}" for prefix in ("", "in-domain/", "out-of-domain/") for metric in METRICS]
    intervals = result.intervals or {}
    return {"n": result.n,
            "metrics": {k: result.metrics.get(k) for k in [*keys, "n_in_domain", "n_out_of_domain", "n_unparsed"]},
            "intervals": {k: [intervals[k].low, intervals[k].high] for k in keys
                          if intervals.get(k) is not None and intervals[k].low is not None},
            "by_level": field(result, "by_level") or {}}


def _pct(row: dict, key: str) -> str:
    """``value [low, high]`` in %; a degenerate interval (every item the same) is left out."""
    value = row["metrics"].get(key)
    if value is None:
        return "—"
    interval = row["intervals"].get(key)
    if interval is None or (interval[0] == interval[1] == value):
        return f"{100 * value:.1f}"
    return f"{100 * value:.1f} [{100 * interval[0]:.1f}, {100 * interval[1]:.1f}]"


def print_table(data: dict) -> None:
    """The docs' table (docs/mechanism.md, "The CPU run": this run's rows) and the numbers its
    prose quotes, from the summary dict."""
    print("| model | setting | overall V / L / S_total / S_partial | in-domain S_total | out-of-domain S_total |\n"
          "| --- | --- | --- | --- | --- |")
    for key, model, setting in ROWS:
        row = data["rows"].get(key)
        if row is None:
            continue
        overall = " / ".join(_pct(row, metric) for metric in ("V", "L", "S_total", "S_partial"))
        print(f"| {model} | {setting} | {overall} | {_pct(row, 'in-domain/S_total')} | "
              f"{_pct(row, 'out-of-domain/S_total')} |")
    learned, training = data["rows"].get("learned"), data.get("training")
    if learned is None or training is None:
        return
    print(f"\nquote: {training['train_pairs']:,} for training, {training['valid_pairs']} held out for the validation "
          f"loss, {training['dropped']} dropped as longer than 512 positions")
    print(f"quote: best validation loss {training['best_val_loss']:.3f}")
    print(f"quote: Training took {training['epochs_wall_s'] / 60:.1f} minutes of epoch wall time")
    print(f"quote: S_total {_pct(learned, 'in-domain/S_total')} vs {_pct(learned, 'out-of-domain/S_total')} and "
          f"L {_pct(learned, 'in-domain/L')} vs {_pct(learned, 'out-of-domain/L')}")
    taxonomy = data["taxonomy"]
    print(f"quote: (share of {sum(taxonomy['counts'].values()):,} error events)")
    for name, share in sorted(taxonomy["share"].items(), key=lambda item: -item[1]):
        if taxonomy["counts"].get(name):
            print(f"quote: {TAXONOMY_WORDS.get(name, name.replace('_', ' '))} {100 * share:.1f} %")
    levels = learned["by_level"]
    print("quote: By level (S_total): " + ", ".join(
        f"{level} {100 * levels[level]['S_total']:.1f} ({'n = ' if index == 0 else ''}{levels[level]['n']})"
        for index, level in enumerate(level for level in ("easy", "medium", "hard") if level in levels)))


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
    parser.add_argument("--summary", action="store_true",
                        help=f"write benchmarks/results/{SUMMARY}.json.gz (what the docs quote)")
    parser.add_argument("--baselines-only", action="store_true",
                        help="score only the nearest-neighbour rows (no training)")
    parser.add_argument("--table", action="store_true", help="print the docs' table from the committed summary")
    args = parser.parse_args()
    if args.table:
        data = read_summary(SUMMARY)
        print(f"(from the committed benchmarks/results/{SUMMARY}.json.gz; rows: {', '.join(data['rows'])})\n")
        print_table(data)
        return
    clock = Clock()
    args.out.mkdir(parents=True, exist_ok=True)

    silver = args.silver or args.out / "silver.jsonl"
    if not silver.is_file():
        expanded = mechanism.expand("template", per_template=18, seed=0, out=silver)
        print(f"expanded oMe-Template into {silver}: {len(expanded.records)} reactions")
    rows, summary = [], {"rows": {}, "config": {
        "silver": "mechanism.expand('template', per_template=18, seed=0)", "config": args.config,
        "batch_size": args.batch_size, "steps_per_epoch": args.steps_per_epoch, "max_epochs": args.max_epochs,
        "threads": args.threads, "device": args.device, "seed": args.seed, "beam": args.beam,
        "bootstrap": args.bootstrap, "cpu": cpu_model()}}
    learned = None
    if not args.baselines_only:
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
        training = report.as_dict()
        summary["training"] = {"train_pairs": training.get("train_pairs"), "valid_pairs": training.get("valid_pairs"),
                               # targets longer than the config's positions (the reactions left out as
                               # unusable are counted apart, in "left_out")
                               "dropped": sum((training.get("dropped") or {}).values()),
                               "left_out": training.get("left_out"), "best_val_loss": training.get("best_val_loss"),
                               "epochs": training.get("epochs_done"), "steps": training.get("global_step"),
                               "parameters": training.get("parameters"), "epochs_wall_s": round(train_seconds, 1)}

        spec = f"mechanism-seq2seq:{model_dir},beam={args.beam},threads={args.threads},device={args.device}"
        started = time.perf_counter()
        learned = mechanism.evaluate(model=spec, out=args.out / "gold_predictions.jsonl",
                                     bootstrap=args.bootstrap, seed=0)
        decode_seconds = time.perf_counter() - started
        learned.write(args.out / "learned_gold.json")
        rows.append(("learned seq2seq (trained on the expansion)", learned))
        summary["rows"]["learned"] = compact(learned)
        summary["decode_s"] = round(decode_seconds, 1)
        taxonomy = field(learned, "error_taxonomy")
        summary["taxonomy"] = {"counts": dict(taxonomy["counts"]), "share": dict(taxonomy["share"])}
    for same_family, label in ((False, "nearest-neighbour, same pool, family excluded"),
                               (True, "nearest-neighbour, same pool, paper's rule (identical only)")):
        result = mechanism.evaluate(model=f"nearest-neighbour:pool={silver}"
                                    + (",allow_same_family=true" if same_family else ""),
                                    bootstrap=args.bootstrap, seed=0)
        result.write(args.out / f"nn_{'paper' if same_family else 'strict'}_gold.json")
        rows.append((label, result))
        summary["rows"]["nn_paper" if same_family else "nn_strict"] = compact(result)
    if args.summary:
        write_summary(SUMMARY, summary, clock=clock, packages=("torch", "transformers", "drfp"))

    print("\noMe-Gold, 196 reactions; % with 95 % bootstrap intervals"
          + (f"; scoring with the model took {summary['decode_s']:.0f} s (greedy decoding included)" if learned else ""))
    for label, result in rows:
        print(f"\n{label}: in-domain {result.metrics.get('n_in_domain')}, out-of-domain "
              f"{result.metrics.get('n_out_of_domain')}, unparsed {result.metrics['n_unparsed']}")
        print(f"  {'metric':<10} {'overall':>22} {'in-domain':>22} {'out-of-domain':>22}")
        for metric in METRICS:
            print(f"  {metric:<10} {cell(result, metric):>22} {cell(result, 'in-domain/' + metric):>22} "
                  f"{cell(result, 'out-of-domain/' + metric):>22}")
    if learned is not None:
        taxonomy = field(learned, "error_taxonomy")
        print("\nerror taxonomy of the learned model's answers (share of all error events):")
        for name, count in sorted(taxonomy["counts"].items(), key=lambda item: -item[1]):
            if count:
                print(f"  {name:<22} {count:>5}  {100 * taxonomy['share'][name]:5.1f} %")
        by_level = field(learned, "by_level")
        print("\nby level (S_total %): " + ", ".join(f"{level} {100 * v['S_total']:.1f} (n={v['n']})"
                                                     for level, v in by_level.items()))
    print()
    print_table(summary)


if __name__ == "__main__":
    main()
