"""The results table of docs/reaction-ood.md: the template-kNN baseline on splits of Schneider 50k.

Cleans the bundled Schneider 50k set, makes the shipped Schneider splits (random, document,
time, reaction-type: all Suzuki couplings, and the chloro-Suzuki subtype), trains the
baseline on each training part (templates from the shipped RXNMapper atom maps, extracted
once and shared), evaluates it on the test parts, runs the distribution-shift analysis, and
prints the table (markdown) plus timings. Result JSONs and the figures (Figs. 2/4, 3 and 6)
go to ``--out``.

Usage: ``PYTHONPATH=src python benchmarks/reaction_ood_baseline.py --out reports/rood
[--n-jobs 2] [--max-test N] [--splits random,document,time,suzuki,chloro_suzuki]``.
``--max-test`` evaluates a seeded sample of at most N reactions per test part (quicker; the
docs table uses the full parts unless it says otherwise).
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path

import pandas as pd

from chemassay.suites.reaction_ood.api import split_setting
from chemassay.suites.reaction_ood.clean import clean_reactions
from chemassay.suites.reaction_ood.details import breakdowns_of
from chemassay.suites.reaction_ood.io import read_schneider_50k
from chemassay.suites.reaction_ood.iterate import iterated_evaluation
from chemassay.suites.reaction_ood.pipeline import (
    TemplateBank,
    evaluate_part,
    train_on_part,
    whole_documents,
)
from chemassay.suites.reaction_ood.plots import (
    plot_accuracy_by_year,
    plot_shift_histograms,
    plot_split_bars,
)
from chemassay.suites.reaction_ood.shift import ShiftConfig, distribution_shift
from chemassay.suites.reaction_ood.splits import make_split, split_definition
from chemassay.suites.reaction_ood.template_knn import BaselineConfig, TemplateFailure

SPLITS = {
    "random": "schneider_random",
    "document": "schneider_document",
    "time": "schneider_time",
    "suzuki": "schneider_reaction_type_suzuki",
    "chloro_suzuki": "schneider_reaction_type_chloro_suzuki",
}
DATASET = "schneider-50k"


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def sample(frame: pd.DataFrame, limit: int | None) -> pd.DataFrame:
    if limit is None or len(frame) <= limit:
        return frame.reset_index(drop=True)
    return frame.sample(n=limit, random_state=0).sort_index().reset_index(drop=True)


def load_bank(clean: pd.DataFrame, workdir: Path, n_jobs: int) -> TemplateBank:
    cache = workdir / "templates.json"
    bank = TemplateBank(maps="schneider")
    if cache.is_file():
        data = json.loads(cache.read_text())
        bank.mapped = data["mapped"]
        bank.templates = {k: (TemplateFailure(v[1:]) if v.startswith("!") else v) for k, v in data["templates"].items()}
        log(f"templates from cache {cache}: {len(bank.templates)}")
        return bank
    started = time.perf_counter()
    bank.add(clean, n_jobs=n_jobs)
    seconds = time.perf_counter() - started
    failures = sum(isinstance(t, TemplateFailure) for t in bank.templates.values())
    log(f"templates: {len(bank.templates)} reactions in {seconds:.0f} s "
        f"({len(bank.templates) / seconds:.0f}/s), {failures} without a template, "
        f"{sum(v is None for v in bank.mapped.values())} without atom maps")
    cache.write_text(json.dumps({
        "mapped": bank.mapped,
        "templates": {k: ("!" + v.reason if isinstance(v, TemplateFailure) else v) for k, v in bank.templates.items()},
    }))
    return bank


def shift_inputs(frame: pd.DataFrame, bank: TemplateBank) -> list[str]:
    return [bank.mapped.get(k) or r for k, r in zip(frame["source_rxn_smiles"], frame["rxn_smiles"], strict=True)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("reports/reaction-ood-baseline"))
    parser.add_argument("--workdir", type=Path, default=None, help="Cache of the cleaned set and templates.")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--max-test", type=int, default=None)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--n-neighbors", type=int, default=50)
    parser.add_argument("--splits", default=",".join(SPLITS))
    parser.add_argument("--no-shift", action="store_true")
    parser.add_argument("--iterate", action="store_true", help="Also run the two-round Eschweiler-Clarke analysis.")
    parser.add_argument("--rows", type=int, default=None,
                        help="Use only whole patents (seeded) up to this many raw reactions (quick runs).")
    args = parser.parse_args()
    out = args.out
    workdir = args.workdir or out / "cache"
    out.mkdir(parents=True, exist_ok=True)
    workdir.mkdir(parents=True, exist_ok=True)

    started = time.perf_counter()
    clean_path = workdir / f"schneider_clean{'' if args.rows is None else f'_{args.rows}'}.parquet"
    if clean_path.is_file():
        clean = pd.read_parquet(clean_path)
    else:
        raw = read_schneider_50k()
        if args.rows is not None:
            raw = whole_documents(raw, args.rows, seed=0)
        t0 = time.perf_counter()
        clean, report = clean_reactions(raw, n_jobs=args.n_jobs)
        log(f"cleaned {report.rows_in} -> {report.rows_out} reactions in {time.perf_counter() - t0:.0f} s")
        clean.to_parquet(clean_path)
    bank = load_bank(clean, workdir, args.n_jobs)
    config = BaselineConfig(n_neighbors=args.n_neighbors)

    table: list[dict] = []
    bars: dict[str, dict] = {}
    year_lines: dict[str, list] = {}
    cutoffs: dict[str, int] = {}
    shift_sets: dict[str, tuple] = {}

    def run(model, frame, label, split, part, setting, extra=None, sampled=False):
        t0 = time.perf_counter()
        chosen = frame if sampled else sample(frame, args.max_test)
        result = evaluate_part(model, chosen, label=label, dataset=DATASET, k=args.k, n_jobs=args.n_jobs,
                               setting=setting, extra_config={"split_definition": split, "test_set": part,
                                                              **(extra or {})})
        result.write(out / f"{label.replace(' ', '_').replace('+', 'plus')}.json")
        seconds = time.perf_counter() - t0
        m = result.metrics
        table.append({"split": split, "test set": part, "n": result.n,
                      "top-1": m["top1_accuracy"], "top-5": m["top5_accuracy"], "top-10": m.get("top10_accuracy"),
                      "top-1 stereo-agnostic": m["top1_accuracy_stereo_agnostic"],
                      "train": model.training_report["n_with_template"],
                      "templates": model.training_report["n_templates"], "seconds": seconds})
        log(f"{label}: n={result.n} top1 {100 * m['top1_accuracy']:.1f} top5 {100 * m['top5_accuracy']:.1f} "
            f"({seconds:.0f} s, {1000 * seconds / max(1, result.n):.0f} ms/reaction)")
        return result

    for short in args.splits.split(","):
        name = SPLITS[short]
        definition = split_definition(name)
        kind = definition["kind"]
        settings = {k: v for k, v in definition.items() if k not in ("kind", "name", "description", "seed")}
        parts = make_split(clean, kind, settings, seed=definition.get("seed", 0))
        log(f"{name}: " + ", ".join(f"{p} {len(f)}" for p, f in parts.items()))
        if kind == "time":
            tests = pd.concat([sample(f, args.max_test) for p, f in parts.items() if p.startswith("test_")],
                              ignore_index=True)
            for part in sorted(p for p in parts if p.startswith("train_upto_")):
                year = int(part.rsplit("_", 1)[1])
                model = train_on_part(parts[part], bank, config=config)
                label = f"time upto {year}"
                result = run(model, tests, label, name, f"all test years, trained up to {year}",
                             {"split": "time", "part": "all test years", "cutoff": str(year)}, sampled=True)
                year_lines[f"≤ {year}"] = [(int(r["group"]), r["top1_accuracy"], int(r["n"]))
                                            for r in breakdowns_of(result).get("year", [])]
                cutoffs[f"≤ {year}"] = year
            continue
        model = train_on_part(parts["train"], bank, config=config)
        evaluated = ["test"] + (["test_ood"] if "test_ood" in parts else [])
        for part in evaluated:
            label = f"{short} {part}"
            result = run(model, parts[part], label, name, part, split_setting(kind, settings, part))
            bars[label] = result
        shift_sets[short] = (parts["train"], {f"{short} {p}": parts[p] for p in evaluated})
        if kind == "reaction-type" and "ood_train" in parts:
            # the "intrinsic difficulty" baseline: a few held-out-class reactions added to training
            boosted = pd.concat([parts["train"], parts["ood_train"]], ignore_index=True)
            model = train_on_part(boosted, bank, config=config)
            label = f"{short} test_ood +{len(parts['ood_train'])} ood_train"
            result = run(model, parts["test_ood"], label, name, "test_ood",
                         {**split_setting(kind, settings, "test_ood"), "ood_train": "true"},
                         {"ood_train_added": len(parts["ood_train"])})
            bars[label] = result

    iterate_rows = []
    if args.iterate:
        # Eschweiler-Clarke (1.2.4) held out: like the paper's Grignard esters, a primary amine
        # is methylated twice; a model that knows only reductive aminations may stop after one
        definition = {"held_out": ["1.2.4"], "test_ood": 800, "ood_train": 0, "train": "rest",
                      "valid": 1000, "test": 1000, "exclude_all_relevant_docs": True, "leeway": 200}
        parts = make_split(clean, "reaction-type", definition, seed=0)
        model = train_on_part(parts["train"], bank, config=config)
        frame = sample(parts["test_ood"], args.max_test)
        t0 = time.perf_counter()
        model.n_jobs = args.n_jobs  # the model predicts on n_jobs processes
        iterated = iterated_evaluation(model, frame["reactants"].tolist(),
                                       frame["products"].tolist(), k=5, rounds=2)
        m = iterated.metrics
        iterate_rows.append({"held out": "1.2.4 Eschweiler-Clarke methylation", "n": len(frame), **m})
        log(f"iterate Eschweiler-Clarke: round1 top1 {100 * m['round1_top1_accuracy']:.1f}, round2 top1 "
            f"{100 * m['round2_top1_accuracy']:.1f}, recovered {m['recovered_in_round2']} "
            f"({time.perf_counter() - t0:.0f} s)")
        (out / "iterate_eschweiler_clarke.json").write_text(json.dumps(iterate_rows, indent=2))

    if bars:
        plot_split_bars(bars, out / "accuracy_by_split.png", metrics=("top1_accuracy", "top5_accuracy"),
                        title="Template-kNN baseline, Schneider 50k splits")
    if year_lines:
        plot_accuracy_by_year(year_lines, out / "accuracy_by_year.png", cutoffs=cutoffs, min_n=50)

    shift_rows = []
    if not args.no_shift and shift_sets:
        distances = {}
        for short, (train, tests) in shift_sets.items():
            t0 = time.perf_counter()
            result = distribution_shift(shift_inputs(train, bank),
                                        {label: shift_inputs(sample(f, args.max_test), bank) for label, f in tests.items()},
                                        config=ShiftConfig(), n_jobs=args.n_jobs)
            distances.update(result.distances)
            for label in tests:
                shift_rows.append({"test set": label,
                                   "reactant median": result.summaries[f"{label}/reactant"]["median"],
                                   "difference median": result.summaries[f"{label}/difference"]["median"]})
            log(f"shift {short}: {time.perf_counter() - t0:.0f} s")
        plot_shift_histograms(distances, out / "shift_histograms.png")
        (out / "shift_medians.json").write_text(json.dumps(shift_rows, indent=2))

    print()
    print("| split | test set | n | top-1 | top-5 | top-10 | top-1 stereo-agnostic | train reactions | templates |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for row in table:
        top10 = f"{100 * row['top-10']:.1f}" if row["top-10"] is not None else "-"
        print(f"| {row['split']} | {row['test set']} | {row['n']} | {100 * row['top-1']:.1f} | "
              f"{100 * row['top-5']:.1f} | {top10} | {100 * row['top-1 stereo-agnostic']:.1f} | "
              f"{row['train']} | {row['templates']} |")
    if year_lines:
        print()
        years = sorted({y for line in year_lines.values() for y, _, _ in line})
        print("| trained up to | " + " | ".join(str(y) for y in years) + " |")
        print("| --- |" + " --- |" * len(years))
        for label, line in year_lines.items():
            values = {y: a for y, a, _ in line}
            print(f"| {label} | " + " | ".join(f"{100 * values[y]:.0f}" if y in values else "-" for y in years) + " |")
    if shift_rows:
        print()
        print("| test set | median distance, reactant space | median distance, difference space |")
        print("| --- | --- | --- |")
        for row in shift_rows:
            print(f"| {row['test set']} | {row['reactant median']:.3f} | {row['difference median']:.3f} |")
    if iterate_rows:
        print()
        print("| held out | n | round-1 top-1 | round-2 top-1 | any round top-1 | recovered | lost |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for row in iterate_rows:
            print(f"| {row['held out']} | {row['n']} | {100 * row['round1_top1_accuracy']:.1f} | "
                  f"{100 * row['round2_top1_accuracy']:.1f} | {100 * row['any_round_top1_accuracy']:.1f} | "
                  f"{row['recovered_in_round2']} | {row['lost_in_round2']} |")
    (out / "table.json").write_text(json.dumps(table, indent=2))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\ntotal {time.perf_counter() - started:.0f} s, peak RSS {peak:.0f} MB (this process)")


if __name__ == "__main__":
    main()
