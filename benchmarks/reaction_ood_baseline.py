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

The docs' run is ``--n-jobs 1 --iterate --summary``: it writes what the docs quote (per test
part: n, top-k accuracies with their intervals, training and template counts, the per-year and
per-class breakdowns; the distance medians; the two-round evaluation; the cleaning and template
counts) to ``benchmarks/results/reaction_ood_baseline.json.gz``. ``--table`` prints the docs'
tables from that committed file and runs nothing.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from committed import Clock, read_summary, write_summary  # noqa: E402

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
SUMMARY = "reaction_ood_baseline"
HEADLINE = ("top1_accuracy", "top5_accuracy", "top10_accuracy", "top1_accuracy_stereo_agnostic")
SPLIT_LABELS = {"random": "random", "document": "document", "suzuki": "reaction type: Suzuki (3.1) held out",
                "chloro_suzuki": "reaction type: chloro-Suzuki (3.1.6) held out"}
PART_LABELS = {("document", "test"): "test (patents seen in training)", ("document", "test_ood"): "test_ood (new patents)",
               ("suzuki", "test"): "test (other classes)", ("suzuki", "test_ood"): "test_ood (Suzuki)",
               ("chloro_suzuki", "test_ood"): "test_ood (chloro-Suzuki)"}
SHIFT_LABELS = {"random": "random", "document": "document", "suzuki": "Suzuki held out:",
                "chloro_suzuki": "chloro-Suzuki held out:"}
ADDED_LABELS = {"suzuki": "reaction type: Suzuki, + {n} Suzuki in training",
                "chloro_suzuki": "reaction type: chloro-Suzuki, + {n} in training"}


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


def _breakdown(rows: list[dict]) -> list[dict]:
    return [{"group": str(r["group"]), "n": int(r["n"]), "top1_accuracy": r["top1_accuracy"],
             "top5_accuracy": r.get("top5_accuracy")} for r in rows]


def _row_labels(row: dict, first_time: bool) -> tuple[str, str]:
    """The docs' split and test-set cells of one evaluated part."""
    short, part = row["short"], row["part_key"]
    if short == "time":
        years = [int(r["group"]) for r in row["breakdowns"].get("year", [])]
        span = f" {min(years)}-{max(years)}" if first_time and years else ""
        return f"time, trained up to {row['cutoff']}", f"all test years{span}"
    if row.get("ood_train_added"):
        return ADDED_LABELS[short].format(n=row["ood_train_added"]), part
    return SPLIT_LABELS[short], PART_LABELS.get((short, part), part)


def _spread(values: list[float]) -> str:
    low, high = round(100 * min(values)), round(100 * max(values))
    return f"{low}-{high}%" if low != high else f"{low}%"


def print_tables(data: dict) -> None:
    """The tables of docs/reaction-ood.md ("Results: the template-kNN baseline"), and the
    numbers its prose quotes, from the run's summary dict."""
    pct = lambda v: "-" if v is None else f"{100 * v:.1f}"  # noqa: E731
    clean, bank = data.get("clean"), data.get("templates")
    if clean and bank:
        removed = clean["removed"]
        print(f"quote: The {clean['rows_in']:,} reactions clean to {clean['rows_out']:,} "
              f"({removed['no_new_product_heavy_enough']} removed by the new-product rule, {removed['protonation_only']} as "
              f"protonations, {clean['duplicates']:,} duplicates); {bank['with_template']:,} of them give a "
              f"template ({bank['failures']} do not, {bank['unmapped']} has no atom maps)")
    print("\n| split | test set | n | top-1 | top-5 | top-10 | top-1 stereo-agnostic | training reactions (with "
          "template) | templates |\n" + "| --- " * 9 + "|")
    first_time = True
    for row in data["rows"]:
        split, part = _row_labels(row, first_time)
        first_time = first_time and row["short"] != "time"
        m = row["metrics"]
        print(f"| {split} | {part} | {row['n']} | {pct(m['top1_accuracy'])} | {pct(m['top5_accuracy'])} | "
              f"{pct(m.get('top10_accuracy'))} | {pct(m['top1_accuracy_stereo_agnostic'])} | {row['train']} | "
              f"{row['templates']} |")
    time_rows = [r for r in data["rows"] if r["short"] == "time"]
    if time_rows:
        years = sorted({int(b["group"]) for r in time_rows for b in r["breakdowns"]["year"]})
        print("\n| trained up to | " + " | ".join(str(y) for y in years) + " |\n| --- |" + " --- |" * len(years))
        for row in time_rows:
            values = {int(b["group"]): b["top1_accuracy"] for b in row["breakdowns"]["year"]}
            print(f"| {row['cutoff']} | " + " | ".join(f"{100 * values[y]:.0f}" if y in values else "-"
                                                      for y in years) + " |")
        first, last = time_rows[0], time_rows[-1]
        early = [b["top1_accuracy"] for b in first["breakdowns"]["year"] if int(b["group"]) <= first["cutoff"] + 3]
        late = [b["top1_accuracy"] for b in first["breakdowns"]["year"] if int(b["group"]) >= years[-1] - 4]
        latest = [b["top1_accuracy"] for b in last["breakdowns"]["year"] if int(b["group"]) >= years[-1] - 4]
        if early and late and latest:
            print(f"quote: the model trained up to {first['cutoff']} scores {_spread(early)} on {years[0]}-"
                  f"{first['cutoff'] + 3} and {_spread(late)} on {years[-1] - 4}-{years[-1]}, where the model "
                  f"trained up to {last['cutoff']} scores {_spread(latest)}")
    if data.get("shift"):
        print("\n| test set | reactant space | reaction-difference space |\n| --- | --- | --- |")
        for row in data["shift"]:
            short, _, part = row["test set"].partition(" ")
            print(f"| {SHIFT_LABELS[short]} {part} | {row['reactant median']:.3f} | {row['difference median']:.3f} |")
    by_part = {(r["short"], r["part_key"]): r for r in data["rows"] if not r.get("ood_train_added")}
    parts = [("random", "test"), ("document", "test"), ("document", "test_ood")]
    if all(part in by_part for part in parts):
        classes = [{b["group"]: b["top1_accuracy"] for b in by_part[part]["breakdowns"]["class_level1"]} for part in parts]
        print(f"quote: ({by_part[parts[2]]['metrics']['top1_accuracy'] * 100:.1f} vs "
              f"{by_part[parts[0]]['metrics']['top1_accuracy'] * 100:.1f} top-1")
        # class 10 (functional-group additions) and 3 (C-C bond formations) over the three parts
        print(f"quote: are hardest ({_spread([c['10'] for c in classes])};")
        print(f"quote: easiest ({_spread([c['3'] for c in classes])})")
        for group in ("2", "3"):
            print(f"quote: ({group}: {100 * classes[1][group]:.1f} -> {100 * classes[2][group]:.1f}")
    added = {r["short"]: r for r in data["rows"] if r.get("ood_train_added")}
    if {"suzuki", "chloro_suzuki"} <= set(added):
        suzuki, chloro = added["suzuki"], added["chloro_suzuki"]
        print(f"quote: ({100 * suzuki['metrics']['top1_accuracy']:.1f}% with {suzuki['ood_train_added']} Suzuki "
              f"reactions, {100 * chloro['metrics']['top1_accuracy']:.1f}% with {chloro['ood_train_added']} chloro-Suzuki)")
    for row in data.get("iterate", []):
        first, second = 100 * row["round1_top1_accuracy"], 100 * row["round2_top1_accuracy"]
        rounds = (f"{first:.2f}% top-1 in round 1 and in round 2" if f"{first:.2f}" == f"{second:.2f}"
                  else f"{first:.2f}% top-1 in round 1 and {second:.2f}% in round 2")
        recovered = "nothing recovered" if row["recovered_in_round2"] == 0 else f"{row['recovered_in_round2']} recovered"
        print(f"quote: {row['n']} test reactions): {rounds}, {recovered}")


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
    parser.add_argument("--summary", action="store_true",
                        help=f"write benchmarks/results/{SUMMARY}.json.gz (what the docs quote; needs the full run)")
    parser.add_argument("--table", action="store_true", help="print the docs' tables from the committed summary")
    args = parser.parse_args()
    if args.table:
        print(f"(from the committed benchmarks/results/{SUMMARY}.json.gz; run without --table to recompute)")
        print_tables(read_summary(SUMMARY))
        return
    if args.summary and (args.max_test or args.rows or args.no_shift or not args.iterate
                         or args.splits != ",".join(SPLITS)):
        parser.error("--summary records the docs' run: every split, full test parts, shift and --iterate")
    clock = Clock()
    clean_counts = None
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
        clean_counts = {"rows_in": report.rows_in, "rows_out": report.rows_out, "unparsable": report.unparsable,
                        "removed": dict(report.removed), "duplicates": report.duplicates}
        log(f"cleaned {report.rows_in} -> {report.rows_out} reactions in {time.perf_counter() - t0:.0f} s")
        clean.to_parquet(clean_path)
    bank = load_bank(clean, workdir, args.n_jobs)
    failures = sum(isinstance(t, TemplateFailure) for t in bank.templates.values())
    bank_counts = {"reactions": len(bank.templates), "with_template": len(bank.templates) - failures,
                   "failures": failures, "unmapped": sum(v is None for v in bank.mapped.values())}
    config = BaselineConfig(n_neighbors=args.n_neighbors)

    table: list[dict] = []
    bars: dict[str, dict] = {}
    year_lines: dict[str, list] = {}
    cutoffs: dict[str, int] = {}
    shift_sets: dict[str, tuple] = {}

    def run(model, frame, label, split, part, setting, extra=None, sampled=False, short=None, part_key=None):
        t0 = time.perf_counter()
        chosen = frame if sampled else sample(frame, args.max_test)
        result = evaluate_part(model, chosen, label=label, dataset=DATASET, k=args.k, n_jobs=args.n_jobs,
                               setting=setting, extra_config={"split_definition": split, "test_set": part,
                                                              **(extra or {})})
        result.write(out / f"{label.replace(' ', '_').replace('+', 'plus')}.json")
        seconds = time.perf_counter() - t0
        m = result.metrics
        table.append({"split": split, "test set": part, "short": short, "part_key": part_key, "n": result.n,
                      "metrics": {key: m.get(key) for key in HEADLINE},
                      "intervals": {key: [result.intervals[key].low, result.intervals[key].high]
                                    for key in HEADLINE if key in (result.intervals or {})},
                      "breakdowns": {key: _breakdown(breakdowns_of(result).get(key, [])) for key in ("year", "class_level1")},
                      "train": model.training_report["n_with_template"],
                      "templates": model.training_report["n_templates"], "seconds": round(seconds, 1),
                      **(extra or {})})
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
                             {"split": "time", "part": "all test years", "cutoff": str(year)}, {"cutoff": year},
                             sampled=True, short=short, part_key="test_years")
                year_lines[f"≤ {year}"] = [(int(r["group"]), r["top1_accuracy"], int(r["n"]))
                                            for r in breakdowns_of(result).get("year", [])]
                cutoffs[f"≤ {year}"] = year
            continue
        model = train_on_part(parts["train"], bank, config=config)
        evaluated = ["test"] + (["test_ood"] if "test_ood" in parts else [])
        for part in evaluated:
            label = f"{short} {part}"
            result = run(model, parts[part], label, name, part, split_setting(kind, settings, part),
                         short=short, part_key=part)
            bars[label] = result
        shift_sets[short] = (parts["train"], {f"{short} {p}": parts[p] for p in evaluated})
        if kind == "reaction-type" and "ood_train" in parts:
            # the "intrinsic difficulty" baseline: a few held-out-class reactions added to training
            boosted = pd.concat([parts["train"], parts["ood_train"]], ignore_index=True)
            model = train_on_part(boosted, bank, config=config)
            label = f"{short} test_ood +{len(parts['ood_train'])} ood_train"
            result = run(model, parts["test_ood"], label, name, "test_ood",
                         {**split_setting(kind, settings, "test_ood"), "ood_train": "true"},
                         {"ood_train_added": len(parts["ood_train"])}, short=short, part_key="test_ood")
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

    data = {"rows": table, "shift": shift_rows, "iterate": iterate_rows, "clean": clean_counts,
            "templates": bank_counts,
            "config": {"dataset": DATASET, "k": args.k, "n_neighbors": args.n_neighbors, "n_jobs": args.n_jobs,
                       "splits": {short: SPLITS[short] for short in args.splits.split(",")}, "seed": 0}}
    if args.summary:  # before printing, so that a failure below loses no run
        write_summary(SUMMARY, data, clock=clock, packages=("pandas", "scikit-learn"))
    (out / "summary.json").write_text(json.dumps(data, indent=1))
    print()
    print_tables(data)
    (out / "table.json").write_text(json.dumps(table, indent=2))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\ntotal {time.perf_counter() - started:.0f} s, peak RSS {peak:.0f} MB (this process)")


if __name__ == "__main__":
    main()
