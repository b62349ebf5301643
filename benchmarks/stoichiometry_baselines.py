"""Both baselines on all eight ChemAlgebra variants built from USPTO-15K (in / cross / out).

Builds the eight variants once (seed 0, default library), then for every variant and test
split runs ``copy-coefficient`` and ``algebraic`` twice: memorising the training pairs (the
baselines as shipped) and with the species of each target given (``--oracle``: the algebra
alone). Prints markdown tables of EM, JAC and F1 (and BAL) that docs/stoichiometry.md quotes,
plus the time each step took:

    PYTHONPATH=src python benchmarks/stoichiometry_baselines.py --jobs 2 [--keep DIR] [--limit N] [--summary]
    PYTHONPATH=src python benchmarks/stoichiometry_baselines.py --table

``--summary`` writes the scores of the full run (every variant, split, mode and baseline: the
metrics and ``n``) to ``benchmarks/results/stoichiometry_baselines.json.gz``, the file the docs
quote; ``--table`` prints the docs' tables from it and runs nothing.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from committed import Clock, read_summary, write_summary  # noqa: E402

from chemassay.runtime.progress import settings
from chemassay.suites.stoichiometry.algebra import BASELINES, load_memory, predict_lines
from chemassay.suites.stoichiometry.data import resolve_source
from chemassay.suites.stoichiometry.metrics import BagReader
from chemassay.suites.stoichiometry.prepare import RebalanceConfig, process_source
from chemassay.suites.stoichiometry.scoring import score_files
from chemassay.suites.stoichiometry.variants import (
    AUGMENTATIONS,
    ENCODINGS,
    TASKS,
    VariantConfig,
    build_variants,
)

SPLITS = ("test_in", "test_cross", "test_out")
SUMMARY = "stoichiometry_baselines"
KEPT = ("EM", "JAC", "F1", "BAL", "valid")
"""The metrics kept in the summary (the tables print EM, JAC, F1 and BAL)."""


def evaluate(folder: Path, encoding: str, readers: dict[str, BagReader]) -> dict:
    reader = readers.setdefault(encoding, BagReader(encoding))
    memories = {split: load_memory(folder, split, reader) for split in ("train", "train_cross")}
    scores = {}
    for split in SPLITS:
        sources = (folder / f"src-{split}.txt").read_text(encoding="utf-8").splitlines()
        targets = (folder / f"tgt-{split}.txt").read_text(encoding="utf-8").splitlines()
        for mode in ("memory", "oracle"):
            for baseline in BASELINES:
                if mode == "memory":
                    memory = memories["train_cross" if "cross" in split else "train"]
                    lines, _ = predict_lines(baseline, sources, reader, memory=memory)
                else:
                    lines, _ = predict_lines(baseline, sources, reader, oracle_lines=targets)
                path = folder / f"pred-{mode}-{baseline}-{split}.txt"
                path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
                report = score_files(path, folder / f"tgt-{split}.txt", folder / f"src-{split}.txt", reader=reader)
                scores.setdefault(mode, {}).setdefault(baseline, {})[split] = {
                    "n": len(report.samples), **{k: report.metrics.get(k) for k in KEPT}}
    return scores


def table(results: dict, mode: str, metric_keys: tuple[str, ...]) -> str:
    """One of the docs' tables: ``results[variant][mode][baseline][split][metric]`` in %."""
    header = "| variant | baseline | " + " | ".join(f"{s.replace('test_', '')} {k}" for s in SPLITS for k in metric_keys)
    lines = [header + " |", "|" + " --- |" * (2 + len(SPLITS) * len(metric_keys))]
    for variant, scores in results.items():
        for baseline in BASELINES:
            cells = [f"{100 * scores[mode][baseline][s][k]:.1f}" for s in SPLITS for k in metric_keys]
            lines.append(f"| {variant} | {baseline} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def print_tables(results: dict) -> None:
    """The four tables of docs/stoichiometry.md (EM / JAC / F1 and BAL, memorised and oracle)."""
    for mode, title in (("memory", "memorised training reactions"), ("oracle", "species given (oracle)")):
        print(f"\n### {title}: EM / JAC / F1 (%)\n")
        print(table(results, mode, ("EM", "JAC", "F1")))
        print(f"\n### {title}: BAL (%)\n")
        print(table(results, mode, ("BAL",)))
    # the T1 cross sentence: EM and misses of the algebraic solver by encoding (the same for x1 and x5)
    by_encoding: dict[str, set] = {}
    for name, scores in results.items():
        if "_t1_" in name:
            row = scores["memory"]["algebraic"]["test_cross"]
            by_encoding.setdefault(name.split("_")[0], set()).add(
                (f"{100 * row['EM']:.2f}", round(row["n"] * (1 - row["EM"])), row["n"]))
    if all(len(v) == 1 for v in by_encoding.values()) and set(by_encoding) == {"smiles", "formula"}:
        (smiles_em, smiles_miss, n), (formula_em, formula_miss, _) = (by_encoding[e].pop() for e in ("smiles", "formula"))
        print(f"\nquote: T1 {smiles_em}% EM in the SMILES variants and {formula_em}% in the formula variants")
        print(f"quote: ({smiles_miss} and {formula_miss} of {n:,} misses")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", type=Path, default=None, help="keep datasets and predictions here")
    parser.add_argument("--limit", type=int, default=None, help="first N reactions per split (quick check)")
    parser.add_argument("--summary", action="store_true",
                        help=f"write benchmarks/results/{SUMMARY}.json.gz (what the docs quote)")
    parser.add_argument("--table", action="store_true", help="print the docs' tables from the committed summary")
    args = parser.parse_args()
    if args.table:
        print(f"(from the committed benchmarks/results/{SUMMARY}.json.gz; run without --table to recompute)")
        print_tables(read_summary(SUMMARY)["results"])
        return
    if args.summary and args.limit:
        parser.error("--summary records the full run: leave out --limit")
    settings.quiet = True
    clock = Clock()
    root = args.keep or Path(tempfile.mkdtemp(prefix="chemassay-stoich-baselines-"))
    try:
        started = time.perf_counter()
        processed = process_source(resolve_source("uspto-15k"), RebalanceConfig(), n_jobs=args.jobs, limit=args.limit)
        configs = [VariantConfig(e, t, a, seed=0) for e in ENCODINGS for t in TASKS for a in AUGMENTATIONS]
        build_variants(processed, configs, [root / c.name for c in configs], source_info={"name": "uspto-15k"},
                       n_jobs=args.jobs)
        usable = {s: len(processed.usable(s)) for s in ("train", "valid", "test")}
        build_seconds = time.perf_counter() - started
        print(f"built 8 variants in {build_seconds:.1f} s (usable train/valid/test: {list(usable.values())})")
        readers: dict[str, BagReader] = {}
        results = {}
        for config in configs:
            begun = time.perf_counter()
            results[config.name] = evaluate(root / config.name, config.encoding, readers)
            print(f"{config.name}: scored in {time.perf_counter() - begun:.1f} s")
        print_tables(results)
        if args.summary:
            write_summary(SUMMARY, {"results": results, "config": {
                "source": "uspto-15k", "seed": 0, "rebalance": "RebalanceConfig() defaults", "usable": usable,
                "jobs": args.jobs, "build_s": round(build_seconds, 1)}}, clock=clock)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
