"""Bradshaw et al.'s findings with chemassay's learned seq2seq model, on Schneider 50k.

The paper trains a BART reaction predictor on Pistachio; Schneider 50k (public USPTO
reactions, 50 named reaction classes, years from patent numbers, no authors) stands in for
it here. Every experiment is a split of the cleaned set, a model trained on its training
part (``chemassay models train seq2seq``: the ``small`` config unless ``--config``), and
beam-5 top-k on its test parts:

==========================  ==========================================================  ===========
experiment (model)          training part                                               paper
==========================  ==========================================================  ===========
``random``                  random split                                                Table S2.2
``document``                document (patent) split: ``test`` = seen patents, ``test_ood`` = new  Table S2.2
``suzuki_none``             every Suzuki coupling (3.1.*) held out                      Table S2.4, Fig. 5a
``suzuki_no_chloro``        other Suzuki types (3.1.1, 3.1.5) added, chloro (3.1.6) not  Table S2.4, Fig. 5a
``suzuki_all``              every Suzuki type added (1,400 reactions from other patents)  Table S2.4, Fig. 5a
``eschweiler_held_out``     Eschweiler–Clarke methylation (1.2.4) held out               Table S2.4 (Grignard analogue)
``eschweiler_plus``         the same + 200 held-out reactions from other patents         Table S2.4
``sonogashira_held_out``    Sonogashira coupling (3.3.1) held out                       Table S2.4 (Heck analogue)
``sonogashira_plus``        the same + 200 held-out reactions                           Table S2.4
``time_<year>``             reactions up to <year>, every cutoff the same size           Table S2.3, Fig. 3
==========================  ==========================================================  ===========

The three Suzuki models share one test set (``test_suzuki``: 1,000 Suzuki couplings of every
type from patents none of them saw; ``test_chloro`` its chloro subset): the nested hold-outs
of Fig. 5a. Training parts of one experiment family have the same size (random rows of the
in-distribution part are dropped to make room for the added held-out reactions). The time
models are tested on a held-out set per year and on every N-arylation (1.3.*, Schneider's
closest analogue of the paper's Buchwald–Hartwig set) that no time model trained or
validated on.

Stages (each resumable; training runs in pieces with ``--max-minutes``)::

    python benchmarks/reaction_ood_seq2seq.py prepare --out reports/rood-s2s
    python benchmarks/reaction_ood_seq2seq.py train random --out reports/rood-s2s [--max-minutes 60]
    python benchmarks/reaction_ood_seq2seq.py evaluate random --out reports/rood-s2s
    python benchmarks/reaction_ood_seq2seq.py table --out reports/rood-s2s
    python benchmarks/reaction_ood_seq2seq.py plan --out reports/rood-s2s      # every command, what is done

``train`` runs the same as ``chemassay models train seq2seq --train SPLIT/PART.parquet
--valid SPLIT/VALID.parquet --task reactions --config small --threads T
--out OUT/models/NAME`` (the command is printed). ``--config paper --device cuda`` trains the
paper-size model on a GPU.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import numpy as np
import pandas as pd
from seq2seq_runs import (  # noqa: E402
    RESULTS,
    add_train_options,
    print_plan,
    print_train_times,
    read_results,
    run_stage,
    train_model,
    write_summary,
)

DATASET = "schneider-50k (cleaned), a public stand-in for Pistachio"
SUMMARY = RESULTS / "reaction_ood_seq2seq.json.gz"
SEED = 0
K = 5
SPLIT_FAMILIES = ("random", "document", "suzuki", "eschweiler", "sonogashira", "time")
TIME_CUTOFFS = (2000, 2006, 2011)
TIME_TEST_PER_YEAR = 150

EXPERIMENTS: dict[str, dict] = {
    "random": {"split": "random", "train": "train", "tests": {"test": 2000}},
    "document": {"split": "document", "train": "train", "tests": {"test": 2000, "test_ood": 2000}},
    **{name: {"split": "suzuki", "train": part, "tests": {"test_suzuki": None}, "group_by": ["class_code"]}
       for name, part in (("suzuki_none", "train_none"), ("suzuki_no_chloro", "train_no_chloro"),
                          ("suzuki_all", "train_all"))},
    "eschweiler_held_out": {"split": "eschweiler", "train": "train", "tests": {},
                            "iterate": "test_ood"},
    "eschweiler_plus": {"split": "eschweiler", "train": "train_plus", "tests": {},
                        "iterate": "test_ood"},
    "sonogashira_held_out": {"split": "sonogashira", "train": "train", "tests": {"test_ood": None}},
    "sonogashira_plus": {"split": "sonogashira", "train": "train_plus", "tests": {"test_ood": None}},
    **{f"time_{year}": {"split": "time", "train": f"train_upto_{year}", "valid": f"valid_upto_{year}",
                        "tests": {"test_narylation": 1000, "test_years": 1000}}
       for year in TIME_CUTOFFS},
}
"""Model name → split family, training part, test parts (→ seeded sample size, ``None``: all).
Every model trains for the config's steps (``small``: 5,000 steps of 32 pairs, about five
passes over a 32k training part, 16 over the 9.8k of a time model). Suzuki test sets are
scored once: ``test_chloro`` is the chloro (3.1.6) subset of ``test_suzuki``. The Eschweiler–Clarke models are scored by the
two-round evaluation (its round 1 is the ordinary top-k)."""

HELD_OUT = {"eschweiler": (["1.2.4"], 600, 200), "sonogashira": (["3.3.1"], 600, 200)}


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def cleaned(out: Path, n_jobs: int) -> pd.DataFrame:
    path = out / "schneider_clean.parquet"
    if path.is_file():
        return pd.read_parquet(path)
    from chemassay.suites.reaction_ood.clean import clean_reactions
    from chemassay.suites.reaction_ood.io import read_schneider_50k

    frame, report = clean_reactions(read_schneider_50k(), n_jobs=n_jobs)
    log(f"cleaned {report.rows_in} -> {report.rows_out} reactions")
    frame.to_parquet(path)
    return frame


def _settings(name: str) -> dict:
    from chemassay.suites.reaction_ood.splits import split_definition

    definition = split_definition(name)
    return {k: v for k, v in definition.items() if k not in ("kind", "name", "description", "seed", "source")}


def _same_size(frame: pd.DataFrame, added: pd.DataFrame, size: int, seed: int) -> pd.DataFrame:
    """``added`` plus a seeded sample of ``frame``, ``size`` rows in all (size control)."""
    keep = frame.sample(n=size - len(added), random_state=seed) if size - len(added) < len(frame) else frame
    return pd.concat([keep, added], ignore_index=True)


def make_parts(family: str, clean: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The parts of one split family (see the module docstring)."""
    from chemassay.suites.reaction_ood.splits import make_split

    if family == "random":
        # the same training size as the document split's (the paper controls for dataset size)
        parts = dict(make_split(clean, "random", _settings("schneider_random"), seed=SEED))
        size = len(make_split(clean, "document", _settings("schneider_document"), seed=SEED)["train"])
        parts["train"] = parts["train"].sample(n=min(size, len(parts["train"])), random_state=SEED)
        return parts
    if family == "document":
        return dict(make_split(clean, "document", _settings("schneider_document"), seed=SEED))
    if family == "suzuki":
        config = {"held_out": ["3.1"], "test_ood": 1000, "ood_train": 1400, "train": "rest", "valid": 2000,
                  "test": 2000, "exclude_all_relevant_docs": True, "leeway": 200}
        parts = make_split(clean, "reaction-type", config, seed=SEED)
        none, extra = parts["train"], parts["ood_train"]
        size = len(none)
        chloro = extra["class_code"].astype(str) == "3.1.6"
        test = parts["test_ood"]
        return {"train_none": none, "train_no_chloro": _same_size(none, extra[~chloro], size, SEED),
                "train_all": _same_size(none, extra, size, SEED), "valid": parts["valid"], "test": parts["test"],
                "test_suzuki": test, "test_chloro": test[test["class_code"].astype(str) == "3.1.6"]}
    if family in HELD_OUT:
        held_out, test_ood, ood_train = HELD_OUT[family]
        config = {"held_out": held_out, "test_ood": test_ood, "ood_train": ood_train, "train": "rest",
                  "valid": 2000, "test": 2000, "exclude_all_relevant_docs": True, "leeway": 200}
        parts = make_split(clean, "reaction-type", config, seed=SEED)
        size = len(parts["train"])
        return {"train": parts["train"], "train_plus": _same_size(parts["train"], parts["ood_train"], size, SEED),
                "valid": parts["valid"], "test": parts["test"], "test_ood": parts["test_ood"]}
    if family == "time":
        settings = {**_settings("schneider_time"), "cutoff_years": list(TIME_CUTOFFS), "fixed_train_size": True}
        parts = make_split(clean, "time", settings, seed=SEED)
        out = {k: v for k, v in parts.items() if k.startswith(("train_upto_", "valid_upto_"))}
        years = [v.sample(n=min(TIME_TEST_PER_YEAR, len(v)), random_state=SEED)
                 for k, v in sorted(parts.items()) if k.startswith("test_")]
        out["test_years"] = pd.concat(years, ignore_index=True)
        seen = set()
        for key, part in out.items():
            if key.startswith(("train_upto_", "valid_upto_")):
                seen.update(part["rxn_smiles"])
        narylation = clean[clean["class_code"].astype(str).str.startswith("1.3.") & ~clean["rxn_smiles"].isin(seen)]
        out["test_narylation"] = narylation.reset_index(drop=True)
        return out
    raise SystemExit(f"unknown split family {family!r}")


def prepare(args) -> None:
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    clean = cleaned(out, args.n_jobs)
    manifest = {"dataset": DATASET, "seed": SEED, "families": {}}
    for family in SPLIT_FAMILIES:
        folder = out / "splits" / family
        folder.mkdir(parents=True, exist_ok=True)
        parts = make_parts(family, clean)
        sizes = {}
        for name, frame in parts.items():
            frame.reset_index(drop=True).to_parquet(folder / f"{name}.parquet")
            sizes[name] = len(frame)
        if family == "time":
            counts = {k: int(v["class_code"].astype(str).str.startswith("1.3.").sum())
                      for k, v in parts.items() if k.startswith("train_upto_")}
            sizes["n_arylations_in_training"] = counts
        manifest["families"][family] = sizes
        log(f"{family}: {sizes}")
    (out / "splits" / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")


def train(args) -> None:
    spec = EXPERIMENTS[args.name]
    folder = args.out / "splits" / spec["split"]
    train_model(args, args.name, folder / f"{spec['train']}.parquet", task="reactions",
                valid=folder / f"{spec.get('valid', 'valid')}.parquet")


def addition_label(reactants: str, product: str) -> str:
    """For an N-methylation: ``double`` when the product has two carbons more than the largest
    nitrogen-bearing reactant it could come from, ``single`` for one, else ``other`` (the
    analogue of the paper's single- vs double-addition Grignard subsets)."""
    from rdkit import Chem

    from chemassay.chem import rdkit_log_silenced

    with rdkit_log_silenced():
        target = Chem.MolFromSmiles(product.split(".")[0]) if product else None
        if target is None:
            return "other"

        def carbons(mol) -> int:
            return sum(a.GetSymbol() == "C" for a in mol.GetAtoms())

        product_c = carbons(target)
        best = None
        for text in reactants.split("."):
            mol = Chem.MolFromSmiles(text)
            if mol is None or not any(a.GetSymbol() == "N" for a in mol.GetAtoms()):
                continue
            c = carbons(mol)
            if c <= product_c and (best is None or c > best):
                best = c
    if best is None:
        return "other"
    return {1: "single", 2: "double"}.get(product_c - best, "other")


def evaluate(args) -> None:
    import chemassay
    from chemassay.models import parse_spec
    from chemassay.models.seq2seq import Seq2SeqPredictor, load_seq2seq
    from chemassay.suites.reaction_ood.iterate import iterated_evaluation

    names = args.names or [n for n in EXPERIMENTS if (args.out / "models" / n / "seq2seq.json").is_file()]
    results = args.out / "results"
    results.mkdir(parents=True, exist_ok=True)
    for name in names:
        spec = EXPERIMENTS[name]
        model = load_seq2seq(args.out / "models" / name, threads=args.threads)
        predictor = Seq2SeqPredictor(model, beam=K)
        predictor.spec = parse_spec(f"seq2seq:{args.out / 'models' / name},beam={K}")
        for part, limit in spec["tests"].items():
            path = results / f"{name}__{part}.json"
            if path.is_file() and not args.force:
                continue
            frame = pd.read_parquet(args.out / "splits" / spec["split"] / f"{part}.parquet")
            limit = args.max_test if args.max_test else limit
            if limit and len(frame) > limit:
                frame = frame.sample(n=limit, random_state=SEED).reset_index(drop=True)
            started, cpu = time.perf_counter(), time.process_time()
            result = chemassay.reaction_ood.evaluate(model=predictor, reference=frame, k=K,
                                                     group_by=spec.get("group_by", ()))
            seconds = time.perf_counter() - started
            result.config.update({"experiment": name, "test_part": part, "split_family": spec["split"],
                                  "data": DATASET, "decode_wall_s": seconds, "decode_cpu_s": time.process_time() - cpu,
                                  "class_codes": frame["class_code"].astype(str).tolist()})
            result.write(path)
            m = result.metrics
            log(f"{name} {part}: n={result.n} top1 {100 * m['top1_accuracy']:.1f} top5 {100 * m['top5_accuracy']:.1f} "
                f"({seconds:.0f} s, {result.n / max(seconds, 1e-9):.1f} reactions/s)")
        if spec.get("iterate"):
            path = results / f"{name}__iterate.json"
            if path.is_file() and not args.force:
                continue
            frame = pd.read_parquet(args.out / "splits" / spec["split"] / f"{spec['iterate']}.parquet")
            labels = [addition_label(r, p) for r, p in zip(frame["reactants"], frame["products"], strict=True)]
            started = time.perf_counter()
            outcome = iterated_evaluation(predictor, frame["reactants"].tolist(), frame["products"].tolist(), k=K,
                                          rounds=2)
            rounds = []
            for round_scores in outcome.scores:
                rounds.append({key: [getattr(s, key) if not isinstance(s, str) else None for s in round_scores]
                               for key in ("rank", "rank_stereo_agnostic", "rank_regio_agnostic")})
            path.write_text(json.dumps({"metrics": outcome.metrics, "labels": labels, "rounds": rounds,
                                        "n": len(frame), "decode_wall_s": time.perf_counter() - started,
                                        "predictions": outcome.predictions}, indent=1))
            log(f"{name} iterate: {outcome.metrics}")


def _interval(values) -> tuple[float, float]:
    from chemassay.report.intervals import percentile_interval

    return percentile_interval(values, resamples=1000, seed=0)


def _mean_ci(values) -> str:
    """``mean [low, high]`` in % of 0/1 values (percentile bootstrap, 1,000 resamples, seed 0)."""
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    low, high = _interval(values)
    return f"{100 * float(np.mean(values)):.1f} [{100 * low:.1f}, {100 * high:.1f}]"


def _hits(ranks, k: int) -> list[float]:
    return [0.0 if r is None else float(r <= k) for r in ranks]


def _subset(result: dict, key: str, keep) -> list[float]:
    codes = result["config"].get("class_codes") or []
    return [v for v, code in zip(result["item_scores"][key], codes, strict=True) if keep(code)]


def _paired(x: list, y: list) -> str:
    """Mean of x − y over the same items with its paired bootstrap 95 % interval (in points)."""
    diff = [None if p is None or q is None else p - q for p, q in zip(x, y, strict=True)]
    values = [d for d in diff if d is not None]
    low, high = _interval(diff)
    return f"{100 * float(np.mean(values)):+.1f} [{100 * low:+.1f}, {100 * high:+.1f}]"


def _wilson(hits: float, n: int) -> str:
    """``p [low, high]`` in % with the Wilson score 95 % interval (for breakdown rows, which keep
    counts but not items)."""
    if n == 0:
        return "-"
    p, z = hits / n, 1.959964
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return f"{100 * p:.1f} [{100 * max(centre - half, 0):.1f}, {100 * min(centre + half, 1):.1f}]"


IN_DISTRIBUTION = (("3.1", "Suzuki (3.1)"), ("3.3", "Sonogashira (3.3, in Schneider only 3.3.1)"),
                   ("1.2", "reductive alkylation (1.2, holds Eschweiler-Clarke 1.2.4)"))
"""Classes whose held-out models are compared with the random-split model's score on the same
class seen in training (class_level2 breakdown of the random test part)."""


def _unpaired(x: list, y: list) -> str:
    """Mean of x − mean of y over different items, with the 95 % interval of the difference from
    independent bootstrap resamples of each (1,000, seed 0), in points."""
    a = np.array([v for v in x if v is not None], dtype=float)
    b = np.array([v for v in y if v is not None], dtype=float)
    rng = np.random.default_rng(0)
    diffs = [rng.choice(a, a.size).mean() - rng.choice(b, b.size).mean() for _ in range(1000)]
    low, high = np.percentile(diffs, [2.5, 97.5])
    return (f"{100 * (a.mean() - b.mean()):+.1f} [{100 * low:+.1f}, {100 * high:+.1f}] "
            f"(unpaired: {_mean_ci(x)} vs {_mean_ci(y)})")


def _row(label: str, part: str, n: int, scores: dict[str, list]) -> str:
    cells = [_mean_ci(scores.get(f"top{k}_accuracy", [])) for k in (1, 2, 3, 5)]
    cells += [_mean_ci(scores.get("top1_accuracy_stereo_agnostic", [])),
              _mean_ci(scores.get("top1_accuracy_regio_agnostic", []))]
    return f"| {label} | {part} | {n} | " + " | ".join(cells) + " |"


def table(args) -> None:
    results: dict[tuple[str, str], dict] = {}
    for stem, result in read_results(args.out, SUMMARY).items():
        name, part = stem.split("__", 1)
        results[(name, part)] = result
    print(f"Beam 5, top-k in % [95 % bootstrap interval]; data: {DATASET}\n")
    print("| model | test set | n | top-1 | top-2 | top-3 | top-5 | top-1 no stereo | top-1 regio |")
    print("| --- " * 9 + "|")
    subsets: dict[tuple[str, str], dict[str, list]] = {}
    for (name, part), result in results.items():
        if part == "iterate":
            rounds = result["rounds"]
            first = {f"top{k}_accuracy": _hits(rounds[0]["rank"], k) for k in (1, 2, 3, 5)}
            first["top1_accuracy_stereo_agnostic"] = _hits(rounds[0]["rank_stereo_agnostic"], 1)
            first["top1_accuracy_regio_agnostic"] = _hits(rounds[0]["rank_regio_agnostic"], 1)
            subsets[(name, "test_ood")] = first
            print(_row(name, "test_ood (round 1)", result["n"], first))
            continue
        scores = result["item_scores"]
        subsets[(name, part)] = scores
        print(_row(name, part, result["n"], scores))
        if part == "test_suzuki":
            chloro = {k: _subset(result, k, lambda c: c == "3.1.6") for k in scores}
            other = {k: _subset(result, k, lambda c: c != "3.1.6") for k in scores}
            subsets[(name, "test_chloro")] = chloro
            subsets[(name, "test_other_suzuki")] = other
            print(_row(name, "test_chloro (3.1.6 subset)", len(chloro["top1_accuracy"]), chloro))
            print(_row(name, "test_suzuki without 3.1.6", len(other["top1_accuracy"]), other))
    pairs = [("document", "test_ood", "document", "test", "new patents − seen patents (same model)"),
             ("suzuki_no_chloro", "test_chloro", "suzuki_none", "test_chloro", "other Suzuki types added (Fig. 5a)"),
             ("suzuki_all", "test_chloro", "suzuki_no_chloro", "test_chloro", "chloro-Suzuki examples added"),
             ("suzuki_all", "test_suzuki", "suzuki_none", "test_suzuki", "Suzuki examples added"),
             ("eschweiler_plus", "test_ood", "eschweiler_held_out", "test_ood", "200 held-out examples added"),
             ("sonogashira_plus", "test_ood", "sonogashira_held_out", "test_ood", "200 held-out examples added"),
             ("time_2006", "test_narylation", "time_2000", "test_narylation", "later cutoff"),
             ("time_2011", "test_narylation", "time_2000", "test_narylation", "later cutoff")]
    print("\n| comparison (top-1, points) | what | difference [95 % interval] |\n| --- | --- | --- |")
    for a_name, a_part, b_name, b_part, what in pairs:
        a, b = subsets.get((a_name, a_part)), subsets.get((b_name, b_part))
        if a is None or b is None:
            continue
        if a_part == b_part:  # the same test items: paired bootstrap of the difference
            text = _paired(a["top1_accuracy"], b["top1_accuracy"])
        else:  # other items: independent resamples of each
            text = _unpaired(a["top1_accuracy"], b["top1_accuracy"])
        print(f"| {a_name} {a_part} − {b_name} {b_part} | {what} | {text} |")
    if ("random", "test") in subsets and ("document", "test_ood") in subsets:
        a, b = subsets[("random", "test")], subsets[("document", "test_ood")]
        print(f"| random test − document test_ood | random vs new patents (two models) | "
              f"{_unpaired(a['top1_accuracy'], b['top1_accuracy'])} |")
    random = results.get(("random", "test"))
    if random is not None:
        rows = {r["group"]: r for r in _breakdowns(random).get("class_level2", [])}
        print("\nThe same classes seen in training: random model, random test part, top-1 [Wilson 95 %]")
        print("| class | n | top-1 |\n| --- | --- | --- |")
        for code, label in IN_DISTRIBUTION:
            if code in rows:
                row = rows[code]
                print(f"| {label} | {row['n']} | {_wilson(round(row['top1_accuracy'] * row['n']), row['n'])} |")
    for name in ("eschweiler_held_out", "eschweiler_plus"):
        iterated = results.get((name, "iterate"))
        if iterated is None:
            continue
        labels = iterated["labels"]
        print(f"\n{name}: two-round evaluation on test_ood, top-1 by methyl groups added (single / double)")
        print("| round | all | single | double |\n| --- | --- | --- | --- |")
        for index, row in enumerate(iterated["rounds"], 1):
            hits = _hits(row["rank"], 1)
            cells = [_mean_ci(hits)] + [_mean_ci([h for h, g in zip(hits, labels, strict=True) if g == group])
                                        for group in ("single", "double")]
            print(f"| {index} | " + " | ".join(cells) + " |")
        counts = {g: labels.count(g) for g in ("single", "double", "other")}
        print(f"labels: {counts}; metrics: {iterated['metrics']}")
    if ("time_2000", "test_years") in results:
        print("\nTime models: top-1 on the yearly test sets up to / after each cutoff [Wilson 95 %]\n")
        print("| model | n up to cutoff | top-1 up to cutoff | n after cutoff | top-1 after cutoff |\n"
              + "| --- " * 5 + "|")
        for year in TIME_CUTOFFS:
            result = results.get((f"time_{year}", "test_years"))
            if result is None:
                continue
            rows = _breakdowns(result).get("year", [])
            cells = []
            for group in ([r for r in rows if int(r["group"]) <= year], [r for r in rows if int(r["group"]) > year]):
                n = sum(r["n"] for r in group)
                hits = round(sum(r["top1_accuracy"] * r["n"] for r in group))
                cells += [str(n), _wilson(hits, n)]
            print(f"| time_{year} | " + " | ".join(cells) + " |")
    print_train_times(args.out, SUMMARY)


def _breakdowns(result: dict) -> dict:
    """The breakdowns of a result file (``details.breakdowns``) or of the committed summary."""
    return result.get("breakdowns") or (result.get("details") or {}).get("breakdowns") or {}


SCORE_KEYS = ("top1_accuracy", "top2_accuracy", "top3_accuracy", "top5_accuracy", "top1_accuracy_stereo_agnostic",
              "top1_accuracy_regio_agnostic")


def summary(args) -> None:
    def keep(result: dict) -> dict:
        if "rounds" in result:  # a two-round evaluation: everything but the predictions
            return {k: v for k, v in result.items() if k != "predictions"}
        return {"n": result["n"], "metrics": result["metrics"], "intervals": result.get("intervals", {}),
                "item_scores": {k: v for k, v in result["item_scores"].items() if k in SCORE_KEYS},
                "breakdowns": {key: _breakdowns(result).get(key, []) for key in ("year", "class_level2")},
                "config": {k: result["config"].get(k) for k in ("experiment", "test_part", "split_family", "data",
                                                                "decode_wall_s", "decode_cpu_s", "class_codes")}}

    write_summary(args.out, SUMMARY, keep)


def plan(args) -> None:
    print_plan(EXPERIMENTS, args.out, "reaction_ood_seq2seq.py")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="stage", required=True)
    for stage in ("prepare", "train", "evaluate", "table", "summary", "plan"):
        p = sub.add_parser(stage)
        p.add_argument("--out", type=Path, default=Path("reports/rood-s2s"))
        p.add_argument("--n-jobs", type=int, default=1)
        p.add_argument("--threads", type=int, default=1)
        if stage == "train":
            add_train_options(p, EXPERIMENTS)
        if stage == "evaluate":
            p.add_argument("names", nargs="*", help="Experiments to evaluate (default: every trained one).")
            p.add_argument("--max-test", type=int, default=2000, help="Seeded sample of at most N per test part.")
            p.add_argument("--force", action="store_true")
    args = parser.parse_args()
    run_stage(args, {"prepare": prepare, "train": train, "evaluate": evaluate, "table": table, "summary": summary,
                     "plan": plan})


if __name__ == "__main__":
    main()
