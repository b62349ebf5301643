"""The n-gram row of docs/generation.md ("Scores"): the MOSES character n-gram baseline, 30,000
samples with seed 0, every MOSES metric, beside the MOSES paper's n-gram row.

Stages:

    PYTHONPATH=src python benchmarks/generation_ngram_scores.py run [--n-jobs 1]   # sample, score, commit
    PYTHONPATH=src python benchmarks/generation_ngram_scores.py table              # the docs' table

``run`` does what ``chemassay demo --suite generation`` and ``chemassay generation evaluate
--model ngram --n 30000 --seed 0`` do (the model trained on the full MOSES train split, kept in
the chemassay cache; FCD, SNN, Frag and Scaf against the published statistics of both MOSES
test sets, Novelty against the train split) and writes the metrics, intervals and ``n`` (the
valid samples the metrics are over) with the sha256 of the samples to ``benchmarks/results/generation_ngram.json.gz``; ``table`` prints
the docs' table from that committed file. Needs the MOSES files (``chemassay data fetch moses``).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from committed import Clock, read_summary, write_summary  # noqa: E402

SUMMARY = "generation_ngram"
N_SAMPLES = 30_000
SEED = 0
ROWS = (("valid", 4), ("unique@1000", 4), ("unique@10000", 4), ("FCD/Test", 3), ("FCD/TestSF", 3),
        ("SNN/Test", 4), ("SNN/TestSF", 4), ("Frag/Test", 4), ("Frag/TestSF", 4), ("Scaf/Test", 4),
        ("Scaf/TestSF", 4), ("IntDiv", 4), ("IntDiv2", 4), ("Filters", 4), ("Novelty", 4))
"""The table's metrics in the docs' order, with the decimals the docs print."""
PROPERTIES = (("logP", 3), ("SA", 3), ("QED", 4), ("weight", 1))


def run(args: argparse.Namespace) -> None:
    from chemassay.suites.generation import api

    clock = Clock()
    with tempfile.TemporaryDirectory(prefix="chemassay-ngram-") as folder:
        samples = Path(folder) / "ngram_samples.txt"
        result = api.evaluate(model="ngram", n=N_SAMPLES, seed=SEED, out=samples, reference="moses",
                              scaffold_test="moses", train="moses", n_jobs=args.n_jobs)
        digest = hashlib.sha256(samples.read_bytes()).hexdigest()
    intervals = {key: [value.low, value.high] for key, value in (result.intervals or {}).items()
                 if getattr(value, "low", None) is not None}
    model = result.model.model_dump() if hasattr(result.model, "model_dump") else {}
    data = {"metrics": dict(result.metrics), "intervals": intervals, "n": result.n,
            "config": {"model": "ngram", "n_samples": N_SAMPLES, "seed": SEED, "test": "moses",
                       "scaffold_test": "moses", "train": "moses", "n_jobs": args.n_jobs,
                       "model_checksum": model.get("checksum"), "samples_sha256": digest}}
    write_summary(SUMMARY, data, clock=clock, packages=("fcd-torch", "torch"))
    print_table(data)


def print_table(data: dict) -> None:
    """The docs' table: each metric of this run beside the paper's mean ± sd (Tables 1-4)."""
    from chemassay.suites.generation.baselines.reference_samples import PAPER_TABLES

    metrics, paper = data["metrics"], PAPER_TABLES["NGram"]
    print("| metric | chemassay, seed 0 | MOSES paper (mean ± sd) |\n| --- | --- | --- |")
    for key, digits in ROWS:
        cell = f"{metrics[key]:.{digits}f}"
        if key == "unique@10000" and data["n"] < 10_000:  # fewer valid samples: MOSES scores all of them
            cell += f" (on the {data['n']:,} valid samples)"
        print(f"| {key} | {cell} | {paper[key]} |")
    names = " / ".join(name for name, _ in PROPERTIES)
    values = " / ".join(f"{metrics[name]:.{digits}f}" for name, digits in PROPERTIES)
    print(f"| {names} (W1 to test) | {values} | (not in Table 2) |")


def table(args: argparse.Namespace) -> None:
    print(f"(from the committed benchmarks/results/{SUMMARY}.json.gz; the run stage recomputes it)\n")
    print_table(read_summary(SUMMARY))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="stage", required=True)
    runner = sub.add_parser("run", help="sample and score (minutes), then write the committed summary")
    runner.add_argument("--n-jobs", type=int, default=1)
    sub.add_parser("table", help="print the docs' table from the committed summary")
    args = parser.parse_args()
    {"run": run, "table": table}[args.stage](args)


if __name__ == "__main__":
    main()
