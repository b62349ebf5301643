"""The suites' own data audited for leakage with ``chemassay.leakage``: each suite's training
data against its own headline test sets.

* ``moses``: MOSES train (1,584,663 molecules) against MOSES test and test-scaffolds;
* ``reaction-ood``: each split's training part against that split's test parts (eight tasks);
* ``stoichiometry``: each SMILES variant's ``train`` against its ``test_in``/``test_out`` and
  ``train_cross`` against ``test_cross``; USPTO-15K train against Table 2's test sets;
* ``mechanism``: oMe-Gold against the oMe-Template reactions (placeholders as written) that the
  template-expansion data is built from;
* ``robustness``: the solubility set's training split against its test split (ChEBI-20's
  training split is not shipped).

Each run writes ``benchmarks/results/leakage_<name>.json.gz`` (counts, distributions, the
training files' sha256, timing and load average; the leaked ids are in the full leakage.json a
run writes with ``--out``, not in the committed summary). ``--table [--suite NAME]`` prints the
docs' tables from the committed files.

    python benchmarks/leakage_suites.py --run moses --n-jobs 2
    python benchmarks/leakage_suites.py --run reaction-ood,stoichiometry
    python benchmarks/leakage_suites.py --table --suite generation
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from committed import Clock, read_summary, write_summary  # noqa: E402

RUNS = ("moses", "reaction-ood", "stoichiometry", "mechanism", "robustness")
PAGES = {"generation": "moses", "reaction-ood": "reaction-ood", "stoichiometry": "stoichiometry",
         "mechanism": "mechanism", "robustness": "robustness"}


def compact(report: dict, label: str) -> dict:
    """The report without the id lists (counts, distributions and hashes stay)."""
    tasks = []
    for task in report["tasks"]:
        kept = {k: v for k, v in task.items() if k not in ("leaked_ids", "exact_lines", "unreadable_ids")}
        kept["training"] = label
        tasks.append(kept)
    files = [{k: v for k, v in f.items() if k != "path"} | {"name": Path(f["path"]).name} for f in report["training"]]
    return {"tasks": tasks, "training": files, "threshold": report["threshold"], "timing": report["timing"]}


def _write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def run_moses(n_jobs: int, out: Path | None, train_lines: int | None = None) -> dict:
    from chemassay.leaks import leakage, suite_test_sets
    from chemassay.suites.generation.data import load_moses, moses_part_path

    sets = suite_test_sets(["generation"])
    started = time.perf_counter()
    label = "moses:train"
    with tempfile.TemporaryDirectory() as folder:
        train = moses_part_path("train")
        if train_lines is not None:  # the first N molecules of the training split
            train = _write_lines(Path(folder) / "train.smi", load_moses(part="train", limit=train_lines))
            label = f"moses:train, first {train_lines:,}"
        report = leakage(train, sets=sets, n_jobs=n_jobs, out=out,
                         progress=lambda text: print(text, file=sys.stderr, flush=True))
    data = compact(report, label)
    data["wall_s"] = round(time.perf_counter() - started, 1)
    data["load_average"] = [round(x, 2) for x in os.getloadavg()]
    return {"runs": [data]}


def run_reaction_ood(n_jobs: int, out: Path | None) -> dict:
    from chemassay.leaks import leakage, suite_test_sets
    from chemassay.suites.reaction_ood.leakage import training_parts

    sets = suite_test_sets(["reaction-ood"], n_jobs=n_jobs)
    trains = training_parts(n_jobs=n_jobs)
    runs = []
    with tempfile.TemporaryDirectory() as folder:
        for split, reactions in trains.items():
            chosen = [s for s in sets if s.task.startswith(f"{split}-")]
            path = _write_lines(Path(folder) / f"{split}-train.txt", reactions)
            started = time.perf_counter()
            report = leakage(path, sets=chosen, n_jobs=n_jobs, out=None if out is None else out / split)
            data = compact(report, f"{split} split, training part")
            data["wall_s"] = round(time.perf_counter() - started, 1)
            data["load_average"] = [round(x, 2) for x in os.getloadavg()]
            runs.append(data)
    return {"runs": runs}


def run_stoichiometry(n_jobs: int, out: Path | None) -> dict:
    from chemassay.leaks import leakage, suite_test_sets
    from chemassay.suites.stoichiometry.leakage import AUDITED_VARIANTS, training_reactions

    runs = []
    with tempfile.TemporaryDirectory() as folder:
        sets = suite_test_sets(["stoichiometry"], n_jobs=n_jobs)
        jobs = []
        for variant in AUDITED_VARIANTS:
            jobs.append((variant, "train", [s for s in sets if s.task in (f"{variant}-test_in", f"{variant}-test_out")]))
            jobs.append((variant, "train_cross", [s for s in sets if s.task == f"{variant}-test_cross"]))
        from chemassay.data.readers import iter_lines
        from chemassay.data.registry import dataset_file

        uspto_train = [line.split()[0] for _, line in iter_lines(dataset_file("uspto-15k", "train.txt.gz")) if line.strip()]
        for variant, split, chosen in jobs:
            path = _write_lines(Path(folder) / f"{variant}-{split}.txt", training_reactions(variant, split, out_dir=folder))
            report = leakage(path, sets=chosen, n_jobs=n_jobs)
            runs.append(compact(report, f"{variant} {split}"))
        path = _write_lines(Path(folder) / "uspto15k-train.txt", uspto_train)
        report = leakage(path, sets=[s for s in sets if s.task.startswith("table2-")], n_jobs=n_jobs)
        runs.append(compact(report, "USPTO-15K train"))
    return {"runs": runs}


def run_mechanism(n_jobs: int, out: Path | None) -> dict:
    from chemassay.leaks import leakage, suite_test_sets
    from chemassay.suites.mechanism.leakage import template_reactions

    with tempfile.TemporaryDirectory() as folder:
        path = _write_lines(Path(folder) / "ome-template.txt", template_reactions())
        report = leakage(path, sets=suite_test_sets(["mechanism"]), n_jobs=n_jobs, out=out)
    return {"runs": [compact(report, "oMe-Template reactions")]}


def run_robustness(n_jobs: int, out: Path | None) -> dict:
    from chemassay.leaks import leakage, suite_test_sets
    from chemassay.suites.robustness.leakage import solubility_training

    with tempfile.TemporaryDirectory() as folder:
        path = _write_lines(Path(folder) / "solubility-train.smi", solubility_training())
        sets = [s for s in suite_test_sets(["robustness"]) if s.task == "downstream-solubility"]
        report = leakage(path, sets=sets, n_jobs=n_jobs, out=out)
    return {"runs": [compact(report, "solubility training split")]}


def table(name: str) -> None:
    data = read_summary(f"leakage_{name}")
    print(f"| task | training data | n | exact | near (>= {data['runs'][0]['threshold']:g}) | clean | "
          "NN similarity median [10th, 90th] |" + (" shared scaffold |" if name == "moses" else ""))
    print("| --- | --- | ---: | ---: | ---: | ---: | --- |" + (" ---: |" if name == "moses" else ""))
    for run in data["runs"]:
        for task in run["tasks"]:
            q = task.get("nearest_similarity", {}).get("quantiles", {})
            spread = f"{q['0.5']:.2f} [{q['0.1']:.2f}, {q['0.9']:.2f}]" if q else "-"
            row = (f"| {task['task']} | {task['training']} | {task['n']:,} | {task['exact']:,} | {task['near']:,} | "
                   f"{task['clean']:,} | {spread} |")
            if name == "moses":
                row += f" {task['scaffold']:,} |"
            print(row)
    if name == "moses":
        run = data["runs"][0]
        print(f"quote: {run['training'][0]['molecules']:,} training molecules, {run['wall_s']:,.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", help=f"comma-separated: {', '.join(RUNS)}")
    parser.add_argument("--table", action="store_true")
    parser.add_argument("--suite", choices=sorted(PAGES), help="with --table: that suite's table only")
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--out", type=Path, help="also write the full leakage.json files here")
    parser.add_argument("--train-lines", type=int, help="moses: audit the first N training molecules only")
    args = parser.parse_args()
    if args.run:
        for name in args.run.split(","):
            clock = Clock()
            runner = {"moses": run_moses, "reaction-ood": run_reaction_ood, "stoichiometry": run_stoichiometry,
                      "mechanism": run_mechanism, "robustness": run_robustness}[name]
            extra = {"train_lines": args.train_lines} if name == "moses" else {}
            data = runner(args.n_jobs, None if args.out is None else args.out / name, **extra)
            write_summary(f"leakage_{name.replace('-', '_')}", data, clock=clock, packages=("drfp", "torch"))
    if args.table:
        for suite, name in PAGES.items():
            if args.suite in (None, suite):
                table(name.replace("-", "_"))


if __name__ == "__main__":
    main()
