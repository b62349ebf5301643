"""Both baselines on all eight ChemAlgebra variants built from USPTO-15K (in / cross / out).

Builds the eight variants once (seed 0, default library), then for every variant and test
split runs ``copy-coefficient`` and ``algebraic`` twice: memorising the training pairs (the
baselines as shipped) and with the species of each target given (``--oracle``: the algebra
alone). Prints markdown tables of EM, JAC and F1 (and BAL) that docs/stoichiometry.md quotes,
plus the time each step took:

    PYTHONPATH=src python benchmarks/stoichiometry_baselines.py --jobs 2 [--keep DIR] [--limit N]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

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
                scores[(mode, baseline, split)] = score_files(
                    path, folder / f"tgt-{split}.txt", folder / f"src-{split}.txt", reader=reader
                ).metrics
    return scores


def table(results: dict, mode: str, metric_keys: tuple[str, ...]) -> str:
    header = "| variant | baseline | " + " | ".join(f"{s.replace('test_', '')} {k}" for s in SPLITS for k in metric_keys)
    lines = [header + " |", "|" + " --- |" * (2 + len(SPLITS) * len(metric_keys))]
    for variant, scores in results.items():
        for baseline in BASELINES:
            cells = [f"{100 * scores[(mode, baseline, s)][k]:.1f}" for s in SPLITS for k in metric_keys]
            lines.append(f"| {variant} | {baseline} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", type=Path, default=None, help="keep datasets and predictions here")
    parser.add_argument("--limit", type=int, default=None, help="first N reactions per split (quick check)")
    args = parser.parse_args()
    settings.quiet = True
    root = args.keep or Path(tempfile.mkdtemp(prefix="chemassay-stoich-baselines-"))
    try:
        started = time.perf_counter()
        processed = process_source(resolve_source("uspto-15k"), RebalanceConfig(), n_jobs=args.jobs, limit=args.limit)
        configs = [VariantConfig(e, t, a, seed=0) for e in ENCODINGS for t in TASKS for a in AUGMENTATIONS]
        build_variants(processed, configs, [root / c.name for c in configs], source_info={"name": "uspto-15k"},
                       n_jobs=args.jobs)
        print(f"built 8 variants in {time.perf_counter() - started:.1f} s "
              f"(usable train/valid/test: {[len(processed.usable(s)) for s in ('train', 'valid', 'test')]})")
        readers: dict[str, BagReader] = {}
        results = {}
        for config in configs:
            begun = time.perf_counter()
            results[config.name] = evaluate(root / config.name, config.encoding, readers)
            print(f"{config.name}: scored in {time.perf_counter() - begun:.1f} s")
        for mode, title in (("memory", "memorised training reactions"), ("oracle", "species given (oracle)")):
            print(f"\n### {title}: EM / JAC / F1 (%)\n")
            print(table(results, mode, ("EM", "JAC", "F1")))
            print(f"\n### {title}: BAL (%)\n")
            print(table(results, mode, ("BAL",)))
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
