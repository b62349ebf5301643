"""Speed (and agreement) of the oMeS scorer on oMe-Gold.

Scores all 196 gold reactions against three prediction sets (the gold-oracle, the
nearest-neighbour baseline, and a seeded random perturbation of the gold mechanisms with
dropped, repeated, relabelled and altered steps) and prints median wall times:

* ``cold``: a fresh molecule cache, every SMILES parsed (what a first run pays);
* ``warm gold``: the gold molecules loaded from the on-disk cache (what later runs pay).

With ``--reference PATH`` (the published ``scripts/utils_eval.py`` of skylarkie/oMeBench,
not shipped with chemassay) the published scorer is imported, run on the same inputs and
compared reaction by reaction (S_total, S_partial, V, L rounded as it rounds, and the
alignment tags); its time and the speed ratio are printed.

Run: ``PYTHONPATH=src python benchmarks/mechanism_score.py [--repeats 5] [--reference utils_eval.py]``
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from chemassay.suites.mechanism.baselines import gold_oracle, nearest_neighbour
from chemassay.suites.mechanism.data import omebench_file as bundled_path
from chemassay.suites.mechanism.oms import MoleculeCache
from chemassay.suites.mechanism.records import load_reactions
from chemassay.suites.mechanism.retrieval import ReactionIndex
from chemassay.suites.mechanism.scoring import (
    PredictionFile,
    PredictionRecord,
    ScoreConfig,
    gold_steps,
    score_all,
)
from chemassay.suites.mechanism.taxonomy import TAXONOMY


def perturbed(reactions, seed: int) -> list[dict]:
    rng = random.Random(seed)
    subtypes = [entry.subtype for entry in TAXONOMY]
    pool = [s.intermediate_smiles for r in reactions for s in r.steps]
    rows = []
    for reaction in reactions:
        steps = []
        for step in reaction.steps:
            if rng.random() < 0.15:
                continue
            item = {"type": step.type, "subtype": step.subtype, "intermediate_smiles": step.intermediate_smiles}
            if rng.random() < 0.25:
                item["subtype"] = rng.choice(subtypes)
            roll = rng.random()
            if roll < 0.2:
                item["intermediate_smiles"] = rng.choice(pool)
            elif roll < 0.3:
                item["intermediate_smiles"] += "C"
            elif roll < 0.35:
                item["intermediate_smiles"] = "C1CC"
            steps.append(item)
            if rng.random() < 0.15:
                steps.append(dict(item))
        rows.append({"reaction_id": reaction.reaction_id, "mechanism": steps})
    return rows


def as_predictions(rows) -> PredictionFile:
    return PredictionFile({row["reaction_id"]: PredictionRecord(i + 1, row) for i, row in enumerate(rows)}, [])


def median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def load_reference(path: Path):
    spec = importlib.util.spec_from_file_location("omebench_utils_eval", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reference", type=Path, help="path to oMeBench's scripts/utils_eval.py")
    args = parser.parse_args()

    reactions = load_reactions(bundled_path("gold")).reactions
    sets = {
        "gold-oracle": gold_oracle(reactions),
        "nearest-neighbour": nearest_neighbour(reactions, ReactionIndex(load_reactions(bundled_path("template")).reactions)),
        "perturbed": perturbed(reactions, args.seed),
    }
    with tempfile.TemporaryDirectory() as tmp:
        cache_file = Path(tmp) / "gold.npz"
        gold_cache = MoleculeCache()
        gold_cache.add(s.intermediate_smiles for r in reactions for s in r.steps)
        gold_cache.save(cache_file)
        print(f"oMe-Gold: {len(reactions)} reactions, {sum(len(r.steps) for r in reactions)} steps; "
              f"median of {args.repeats} runs")
        print(f"{'prediction set':<20} {'pred steps':>10} {'cold s':>8} {'warm gold s':>12} {'S_total':>8}")
        for name, rows in sets.items():
            predictions = as_predictions(rows)
            config = ScoreConfig()
            cold = median_time(lambda p=predictions, c=config: score_all(reactions, p, c, cache=MoleculeCache()), args.repeats)
            warm = median_time(lambda p=predictions, c=config: score_all(reactions, p, c, cache=MoleculeCache.load(cache_file)), args.repeats)
            report = score_all(reactions, predictions, config)
            steps = sum(len(r["mechanism"]) for r in rows)
            print(f"{name:<20} {steps:>10} {cold:>8.3f} {warm:>12.3f} {report.metrics['S_total']:>8.4f}")
            if args.reference:
                compare(load_reference(args.reference), reactions, rows, args.repeats)


def compare(reference, reactions, rows, repeats: int) -> None:
    """Time the published scorer and compare it with ours (its rounding, strict parsing)."""
    by_id = {row["reaction_id"]: row for row in rows}
    gold_inputs = [[(s.subtype, s.smiles, s.weight) for s in gold_steps(r)[0]] for r in reactions]
    pred_inputs = [[(p["subtype"], p["intermediate_smiles"]) for p in by_id[r.reaction_id]["mechanism"]] for r in reactions]

    def run_reference():
        return [reference.oMeS(g, p) for g, p in zip(gold_inputs, pred_inputs, strict=True)]

    from rdkit import RDLogger

    RDLogger.DisableLog("rdApp.*")
    ref_time = median_time(run_reference, max(1, repeats // 2))
    ref_results = run_reference()
    ours = score_all(reactions, as_predictions(rows), ScoreConfig(round_to=2, strict=True), cache=MoleculeCache())
    ours_time = median_time(lambda: score_all(reactions, as_predictions(rows), ScoreConfig(round_to=2, strict=True),
                                              cache=MoleculeCache()), repeats)
    mismatches = 0
    for theirs, mine in zip(ref_results, ours.results, strict=True):
        a = (theirs.S_total, theirs.S_partial, theirs.V, theirs.L, theirs.alignment)
        b = (mine.values["S_total"], mine.values["S_partial"], mine.values["V"], mine.values["L"], mine.alignment.tags)
        mismatches += a != b
    print(f"{'  published scorer':<20} {'':>10} {ref_time:>8.3f} {'':>12}   "
          f"agreement {len(reactions) - mismatches}/{len(reactions)} reactions; "
          f"chemassay cold is {ref_time / ours_time:.1f}x faster")


if __name__ == "__main__":
    sys.exit(main())
