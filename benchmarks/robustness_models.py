"""AMORE's Table 1 (and Tables 2 and 5) for every model chemassay can run offline.

Trains (or reuses) the reference models and scores each of them on ChEBI-20 and the
isomers, every rewrite, both directions, every layer, with 95 % bootstrap intervals:

    python benchmarks/robustness_models.py --out runs/amore [--train] [--models rxnmapper,chemnet]

Models (``--models``, default all): the two bounds (``fingerprint``, ``char-ngram``), the
pretrained networks inside PyPI wheels (``rxnmapper``, ``rxnfp``, ``chemnet``), the three
language-model families trained here (``lm-encoder``, ``lm-decoder``, ``lm-encoder-decoder``,
from ``--checkpoints DIR/lm-<family>``) and the graph network (``gnn``, from
``--checkpoints DIR/gnn``). ``--train`` trains the missing checkpoints first with the
configurations documented in docs/robustness.md (threads=1, resumable: rerun to continue).
Each result is written as ``OUT/<model>-<dataset>.json`` with the Markdown tables in
``OUT/tables.md`` and the layer-wise plots (the paper's Fig. 3) as ``OUT/<model>-<dataset>-layers.png``.

``--summarize`` writes the docs' tables (docs/robustness.md, between the ``amore-models``
markers) from the results in OUT to ``OUT/summary.md``; ``--summary`` writes the compact
results in OUT (per model and dataset: ``n``, the retrieval metrics with their intervals, the
per-layer Acc@1; per downstream run: its metrics and intervals) to
``benchmarks/results/robustness_models.json.gz``, and ``--table`` prints the docs' tables from
that committed file (no ``--out`` needed).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from committed import Clock, read_summary, write_summary  # noqa: E402

AUGMENTATIONS = ("canonical", "explicit_h", "kekulize", "cycle_renumber", "randomized", "cycle_renumber_amore")
LM_CONFIG = {"data": "moses", "n_train": 100000, "n_valid": 1000, "steps_per_epoch": 250, "hidden": 128, "heads": 4,
             "batch_size": 32, "seed": 0}
"""The CPU configuration of the three language-model families (docs/robustness.md)."""
LM_SIZES = {"encoder": {"steps": 1500, "layers": 4}, "decoder": {"steps": 1500, "layers": 4},
            "encoder-decoder": {"steps": 1000, "layers": 2}}
"""Steps and layers (each side for the encoder-decoder) per family."""
SUMMARY = "robustness_models"
TRAINING_KEYS = ("data", "n_train", "n_valid", "config", "finished", "epochs_done", "stopped_by", "best_val_loss",
                 "parameters", "train_seconds", "cpu_seconds_this_call", "validation", "train_loss_first",
                 "train_loss_last", "val_loss_per_epoch", "global_step")
"""What the summary keeps of a checkpoint's ``train_manifest.json``."""
GNN_CONFIG = {"data": "solubility", "target": "logS", "hidden": 128, "layers": 4, "epochs": 60,
              "steps_per_epoch": 32, "batch_size": 32, "seed": 0}


def model_specs(checkpoints: Path) -> dict[str, str]:
    """Display name → model spec of every model of the table."""
    return {
        "fingerprint": "fingerprint",
        "char-ngram": "char-ngram",
        "rxnmapper": "rxnmapper",
        "rxnfp": "rxnfp",
        "chemnet": "chemnet",
        "lm-encoder": f"hf:{checkpoints / 'lm-encoder'},pooling=mean-all",
        "lm-decoder": f"hf:{checkpoints / 'lm-decoder'},pooling=mean-all",
        "lm-encoder-decoder": f"hf:{checkpoints / 'lm-encoder-decoder'},pooling=mean-all",
        "lm-encoder-decoder-dec": f"hf:{checkpoints / 'lm-encoder-decoder'},pooling=mean-all,part=decoder",
        "gnn": f"gnn:{checkpoints / 'gnn'}",
    }


def train_missing(checkpoints: Path, names: list[str], threads: int, minutes: float | None) -> None:
    """Train every requested checkpoint that is not complete yet (resumes cut runs)."""
    from chemassay.suites.robustness import api

    for name in names:
        if name.startswith("lm-"):
            family = name[3:].removesuffix("-dec")
            folder = checkpoints / f"lm-{family}"
            if (folder / "config.json").is_file():
                continue
            config = {**LM_CONFIG, **LM_SIZES[family]}
            while True:
                result = api.train(folder, family=family, threads=threads, max_minutes=minutes, **config)
                print(f"{name}: epochs {result.details.epochs_done}, "
                      f"{'finished' if result.details.finished else 'piece'}", flush=True)
                if result.details.finished:
                    break
        elif name == "gnn" and not (checkpoints / "gnn" / "gnn.pt").is_file():
            while True:
                result = api.train_gnn(checkpoints / "gnn", threads=threads, max_minutes=minutes, **GNN_CONFIG)
                if result.details.finished:
                    break


PAPER_COLUMNS = (("canonical", "canon"), ("explicit_h", "hydro"), ("kekulize", "kekul"),
                 ("cycle_renumber_amore", "cycle"), ("cycle_renumber", "cycle (all rings)"), ("randomized", "random"))


PAPER_TABLE1_ACC1 = {
    # AMORE Table 1 (ChEBI-20, original->augmented Acc@1 %: canon, hydro, kekul, cycle), from paper_tables.md.
    "Text+Chem T5-standard": (63.03, 5.46, 76.76, 96.7), "Text+Chem T5-augm": (60.64, 5.61, 77.09, 97.18),
    "MolT5-base": (55.64, 5.97, 62.76, 90.94), "MolT5-large": (46.94, 2.36, 59.7, 98.21),
    "BARTSmiles": (25.76, 1.21, 39.03, 61.67), "ZINC-GPT": (23.85, 0.85, 35.09, 75.3),
    "SciFive": (29.73, 2.58, 48.21, 98.48), "PubChemDeBERTa": (32.79, 2.15, 53.55, 96.39),
    "ChemBERT-ChEMBL": (26.06, 1.73, 37.7, 79.55), "ChemBERTa": (26.61, 1.09, 44.18, 92.58),
    "ZINC-RoBERTa": (23.33, 0.97, 33.09, 90.61), "GNN (DGL-LifeSci)": (92.42, 92.42, 92.51, 99.15),
}


def compact_table1(by_model: dict) -> list[str]:
    """Table 1's layout (o2a Acc@1 %, ChEBI-20): the paper's rows, then ours with intervals."""
    kinds = ("canonical", "explicit_h", "kekulize", "cycle_renumber_amore", "randomized")
    lines = ["| model | source | canon | hydro | kekul | cycle | random |", "|---|---|---|---|---|---|---|"]
    for name, values in PAPER_TABLE1_ACC1.items():
        lines.append(f"| {name} | paper (checkpoint of Table 8) | " + " | ".join(f"{v:.2f}" for v in values) + " | – |")
    for name, data in by_model.items():
        lines.append(f"| {name} | this run | " + " | ".join(_cell(data, f"{k}/o2a_acc@1") for k in kinds) + " |")
    return lines


def _cell(data: dict, key: str) -> str:
    value = data["metrics"].get(key)
    if value is None:
        return "-"
    interval = (data.get("intervals") or {}).get(key)
    if interval:
        return f"{100 * value:.1f} ({100 * interval['low']:.1f}–{100 * interval['high']:.1f})"
    return f"{100 * value:.1f}"


def _full_table(by_model: dict, direction: str, title: str, words: str) -> list[str]:
    lines = [f"**AMORE {title}, {words}: Acc@1 / Acc@5 / MRR (%), 95 % bootstrap intervals**", "",
             "| model | " + " | ".join(f"{short} Acc@1 | Acc@5 | MRR" for _, short in PAPER_COLUMNS) + " |",
             "|---|" + "---|" * (3 * len(PAPER_COLUMNS))]
    for name, data in by_model.items():
        cells = []
        for kind, _ in PAPER_COLUMNS:
            cells += [_cell(data, f"{kind}/{direction}_acc@1"), _cell(data, f"{kind}/{direction}_acc@5"),
                      _cell(data, f"{kind}/{direction}_mrr")]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines + [""]


def _best_layers(by_model: dict, title: str) -> list[str]:
    lines = [f"**AMORE {title}: best layer vs last layer (o2a Acc@1 %; L0 = embedding layer)**", "",
             "| model | " + " | ".join(short for _, short in PAPER_COLUMNS) + " |", "|---|" + "---|" * len(PAPER_COLUMNS)]
    for name, data in by_model.items():
        per_layer = _field(data, "per_layer") or {}
        cells = []
        for kind, _ in PAPER_COLUMNS:
            values = [layer.get("o2a_acc@1", float("nan")) for layer in per_layer.get(kind, [])]
            if len(values) > 1:
                best = max(range(len(values)), key=lambda i: values[i])
                cells.append(f"{100 * values[best]:.1f} (L{best}) / {100 * values[-1]:.1f}")
            else:
                cells.append("-")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines + [""]


REFERENCE_MODELS = {
    "encoder": ("RoBERTa, 4 layers × 128, 4 heads, FFN 512", "100,000 MOSES train SMILES (seed 0)",
                ("mlm_loss", "masked-LM loss"), ("masked_accuracy", "masked-token accuracy {} %")),
    "decoder": ("GPT-2, 4 layers × 128, 4 heads, FFN 512", "the same",
                ("clm_loss", "next-token loss"), ("next_token_accuracy", "next-token accuracy {} %")),
    "encoder-decoder": ("BART, 2 + 2 layers × 128, 4 heads, FFN 512", "the same",
                        ("denoising_loss", "denoising loss"),
                        ("reconstruction_accuracy", "reconstruction token accuracy {} % (teacher forcing)")),
}
"""Per family: the architecture and data cells of the docs' reference-models table, and the
validation keys of its ``train_manifest.json`` with their words."""


def reference_models_table(training: dict[str, dict]) -> None:
    """The docs' table of the three language models trained here (docs/robustness.md,
    "Reference models (CPU)"), from their training records."""
    if not all(f"lm-{family}" in training for family in REFERENCE_MODELS):
        return
    print("| family | model | parameters | data | steps | training loss (first → last epoch) | validation (1,000 "
          "held-out MOSES SMILES) | training time: wall / CPU |\n" + "| --- " * 8 + "|")
    for family, (model, data, (loss_key, loss_words), (accuracy_key, accuracy_words)) in REFERENCE_MODELS.items():
        record = training[f"lm-{family}"]
        config, validation = record["config"], record["validation"]
        steps = f"{config['steps']:,} × {config['batch_size']}"
        if family != "decoder":  # the docs give the epochs once per run length (the decoder: as the encoder)
            steps += f" ({record['epochs_done']} epochs of {config['steps_per_epoch']})"
        print(f"| {family} | {model} | {record['parameters']:,} | {data} | {steps} | "
              f"{record['train_loss_first']:.3f} → {record['train_loss_last']:.3f} | "
              f"{loss_words} {validation[loss_key]:.3f}, perplexity {validation['perplexity']:.2f}, "
              f"{accuracy_words.format(f'{100 * validation[accuracy_key]:.1f}')} | "
              f"{record['train_seconds']:,.0f} s / {record['cpu_seconds_this_call']:,.0f} s |")
    print()


def load_results(out: Path) -> tuple[dict[str, dict[str, dict]], dict[str, dict]]:
    """The results in ``out``: dataset → model → result, and downstream file stem → result."""
    results: dict[str, dict] = {}
    for path in sorted(p for p in out.glob("*-*.json") if not p.name.startswith("downstream-")):
        name, _, dataset = path.stem.rpartition("-")
        results.setdefault(dataset, {})[name] = json.loads(path.read_text(encoding="utf-8"))
    downstream = {path.stem: json.loads(path.read_text(encoding="utf-8")) for path in sorted(out.glob("downstream-*.json"))}
    return results, downstream


def _field(data: dict, name: str):
    """A result's field, top-level or under ``details`` (where per-suite fields are moving)."""
    value = data.get(name)
    return value if value is not None else (data.get("details") or {}).get(name)


def compact(data: dict) -> dict:
    """What the tables read from one result (no per-layer metric keys, no items): ``n``, the
    retrieval or downstream metrics and intervals, the per-layer Acc@1 and the config."""
    keep = [k for k in data["metrics"] if not k.startswith("layer") and "/layer" not in k]
    intervals = data.get("intervals") or {}
    per_layer = _field(data, "per_layer") or {}
    config = data.get("config") or {}
    return {"n": data.get("n"), "metrics": {k: data["metrics"][k] for k in keep},
            "intervals": {k: {"low": intervals[k]["low"], "high": intervals[k]["high"]} for k in keep
                          if isinstance(intervals.get(k), dict)},
            "per_layer": {kind: [{"o2a_acc@1": layer.get("o2a_acc@1")} for layer in layers]
                          for kind, layers in per_layer.items()} if isinstance(per_layer, dict) else {},
            "config": {k: config.get(k) for k in ("task", "targets", "model", "dataset", "layers", "metric",
                                                  "augmentations") if k in config},
            "n_by_augmentation": {row["augmentation"]: row["n"] for row in _field(data, "table") or []},
            "skipped": len(data.get("skipped") or []), "truncated": len(_field(data, "truncated") or [])}


QUICK_START_AUGMENTATIONS = ("canonical", "explicit_h", "kekulize", "cycle_renumber", "randomized")
"""The default augmentations of ``chemassay robustness evaluate`` (the docs' "Measured numbers")."""


def quick_start_tables(results: dict[str, dict[str, dict]]) -> str:
    """The per-model tables of docs/robustness.md, "Measured numbers" (what ``chemassay robustness
    evaluate --model M --dataset D --table`` prints), for the two bounds."""
    from chemassay.suites.robustness.amore import TABLE_COLUMNS, markdown_table

    tables = []
    for dataset in ("isomers", "chebi20"):
        for name in ("fingerprint", "char-ngram"):
            data = results.get(dataset, {}).get(name)
            if data is None or not data.get("n_by_augmentation"):
                continue
            rows = [{"augmentation": kind, "n": data["n_by_augmentation"][kind],
                     **{column: data["metrics"].get(f"{kind}/{column}") for column in TABLE_COLUMNS}}
                    for kind in QUICK_START_AUGMENTATIONS]
            tables.append(markdown_table(rows, f"AMORE {dataset} - {name}"))
    return "\n".join(tables)


def summarize(out: Path) -> str:
    """Markdown tables (Tables 1, 2 and 5 layouts, best layer, downstream) from the results in ``out``."""
    return render(*load_results(out))


def render(results: dict[str, dict[str, dict]], downstream: dict[str, dict]) -> str:
    """The docs' tables from results by dataset and model and downstream results by file stem."""
    lines: list[str] = []
    if results.get("chebi20"):
        lines += ["**Table 1 layout: ChEBI-20, original→augmented Acc@1 (%), ours with 95 % intervals**", ""]
        lines += compact_table1(results["chebi20"]) + [""]
    if results.get("isomers"):
        kinds = ("canonical", "explicit_h", "kekulize", "cycle_renumber_amore", "randomized")
        lines += ["**Table 2 layout: isomers (918), original→augmented Acc@1 (%)** (the paper's Table 2 numbers "
                  "are not in the text available here; its text: explicit hydrogens under 1 % for every model)", "",
                  "| model | canon | hydro | kekul | cycle | random |", "|---|---|---|---|---|---|"]
        for name, data in results["isomers"].items():
            lines.append(f"| {name} | " + " | ".join(_cell(data, f"{k}/o2a_acc@1") for k in kinds) + " |")
        lines.append("")
    for dataset, title in (("chebi20", "ChEBI-20"), ("isomers", "isomers")):
        if results.get(dataset):
            lines += _best_layers(results[dataset], title)
    if downstream:
        lines += ["**Downstream on measured solubility (test split, 257 molecules): metric on the original set, "
                  "then on each rewrite (drop; for RMSE the paired mean change of the squared error with its "
                  "95 % interval, for accuracy the 95 % interval)**", "",
                  "| model | target | metric | original | " + " | ".join(k for k in DOWNSTREAM_AUGMENTATIONS) + " |",
                  "|---|---|---|---|" + "---|" * len(DOWNSTREAM_AUGMENTATIONS)]
        for stem, data in downstream.items():
            metric = "rmse" if data["config"]["task"] == "regression" else "accuracy"
            name = stem.removeprefix("downstream-").rsplit("-", 1)[0]
            cells = []
            for k in DOWNSTREAM_AUGMENTATIONS:
                cell = f"{data['metrics'][f'{k}/{metric}']:.3f} ({data['metrics'][f'{k}/{metric}_drop']:+.3f})"
                paired = f"{k}/mse_drop" if metric == "rmse" else f"{k}/accuracy"
                interval = (data.get("intervals") or {}).get(paired)
                if interval and metric == "rmse":
                    cell += f"; ΔMSE {data['metrics'][paired]:+.3f} [{interval['low']:+.3f}, {interval['high']:+.3f}]"
                elif interval:
                    cell += f" [{interval['low']:.3f}, {interval['high']:.3f}]"
                cells.append(cell)
            lines.append(f"| {name} | {data['config']['targets'][0]} | {metric} | "
                         f"{data['metrics'][f'original/{metric}']:.3f} | " + " | ".join(cells) + " |")
        lines.append("")
    full = []
    for dataset, title in (("chebi20", "ChEBI-20 (3,300)"), ("isomers", "isomers (918)")):
        for direction, words in (("o2a", "original→augmented (Tables 1-2)"), ("a2o", "augmented→original (Table 5)")):
            if results.get(dataset):
                full += _full_table(results[dataset], direction, title, words)
    if full:
        lines += ["<details><summary>Full tables: Acc@1, Acc@5 and MRR with intervals, both directions, both datasets"
                  "</summary>", ""] + full + ["</details>", ""]
    return "\n".join(lines)


DOWNSTREAM_AUGMENTATIONS = ("cycle_renumber_amore", "explicit_h", "kekulize", "canonical", "randomized")
FINETUNE = "epochs=10,steps_per_epoch=32,lr=1e-4,batch_size=32,threads={threads}"


def run_downstream(out: Path, checkpoints: Path, threads: int, bootstrap: int) -> None:
    """Tables 12-20 on the bundled solubility set: forests, the graph network and fine-tuned LMs."""
    from chemassay.suites.robustness import api

    runs = [("rf-fingerprint", "rf-fingerprint", "logS"), ("rf-char-ngram", "rf-char-ngram", "logS"),
            ("gnn", f"gnn:{checkpoints / 'gnn'}", "logS")]
    for family in ("encoder", "decoder", "encoder-decoder"):
        spec = f"hf-finetune:{checkpoints / ('lm-' + family)},{FINETUNE.format(threads=threads)}"
        runs.append((f"lm-{family}-finetuned", spec, "logS"))
    runs.append(("lm-encoder-finetuned", f"hf-finetune:{checkpoints / 'lm-encoder'},{FINETUNE.format(threads=threads)}",
                 "solubility_class"))
    for name, spec, target in runs:
        path = out / f"downstream-{name}-{target}.json"
        if path.is_file():
            continue
        folder = Path(spec.partition(":")[2].split(",")[0]) if ":" in spec else None
        if folder is not None and not (folder / "config.json").is_file():
            print(json.dumps({"downstream": name, "skipped": f"no checkpoint in {folder}"}), flush=True)
            continue
        started = time.perf_counter()
        result = api.downstream(spec, "solubility", targets=[target], augmentations=DOWNSTREAM_AUGMENTATIONS,
                                n_estimators=100, bootstrap=bootstrap)
        result.write(path)
        print(json.dumps({"downstream": name, "target": target, "seconds": round(time.perf_counter() - started, 1)}),
              flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("runs/amore"))
    parser.add_argument("--checkpoints", type=Path, default=Path("runs/robustness"))
    parser.add_argument("--models", default="")
    parser.add_argument("--datasets", default="isomers,chebi20", help="'none': only train")
    parser.add_argument("--augmentations", default=",".join(AUGMENTATIONS))
    parser.add_argument("--train", action="store_true")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--piece-minutes", type=float, default=9.0)
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--summarize", action="store_true", help="only write OUT/summary.md from the results")
    parser.add_argument("--downstream", action="store_true", help="also run the downstream tables (12-20)")
    parser.add_argument("--summary", action="store_true",
                        help=f"write the compact results in OUT to benchmarks/results/{SUMMARY}.json.gz")
    parser.add_argument("--table", action="store_true", help="print the docs' tables from the committed summary")
    args = parser.parse_args()
    if args.table:
        data = read_summary(SUMMARY)
        print(f"(from the committed benchmarks/results/{SUMMARY}.json.gz: models {', '.join(data['models'])})\n")
        # the order of load_results (sorted file names), which the summary's sorted keys lost
        results = {dataset: dict(sorted(models.items(), key=lambda item: f"{item[0]}-{dataset}.json"))
                   for dataset, models in data["results"].items()}
        downstream = dict(sorted(data["downstream"].items(), key=lambda item: f"{item[0]}.json"))
        print("<!-- amore-models:begin -->\n" + render(results, downstream).strip() + "\n<!-- amore-models:end -->\n")
        print(quick_start_tables(results))
        reference_models_table(data.get("training", {}))
        gnn = data.get("training", {}).get("gnn")
        if gnn:  # the reference network's paragraph
            print(f"quote: {gnn['parameters']:,} parameters; {gnn['n_train']} training and {gnn['n_valid']} "
                  f"early-stopping molecules")
            print(f"quote: {gnn['stopped_by']} after {gnn['epochs_done']} epochs")
        return
    if args.summary:
        clock = Clock()  # the summary's own time; the runs' times are in each result (elapsed_s)
        results, downstream = load_results(args.out)
        compacted = {dataset: {name: compact(d) for name, d in models.items()} for dataset, models in results.items()}
        elapsed = {f"{name}-{dataset}": d.get("elapsed_s") for dataset, models in results.items()
                   for name, d in models.items()}
        elapsed.update({stem: d.get("elapsed_s") for stem, d in downstream.items()})
        training = {}
        for folder in ("gnn", "lm-encoder", "lm-decoder", "lm-encoder-decoder"):
            manifest = args.checkpoints / folder / "train_manifest.json"
            if manifest.is_file():
                record = json.loads(manifest.read_text(encoding="utf-8"))
                training[folder] = {k: record.get(k) for k in TRAINING_KEYS if k in record}
        write_summary(SUMMARY, {"results": compacted, "downstream": {k: compact(d) for k, d in downstream.items()},
                                "models": sorted({n for models in results.values() for n in models}),
                                "training": training, "run_elapsed_s": elapsed}, clock=clock,
                      packages=("torch", "transformers"),
                      command=f"python benchmarks/robustness_models.py --out {args.out} --checkpoints "
                              f"{args.checkpoints} --summary")
        return
    if args.summarize:
        text = summarize(args.out)
        (args.out / "summary.md").write_text(text, encoding="utf-8")
        print(text)
        return
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    import torch

    torch.set_num_threads(args.threads)
    from chemassay.suites.robustness import api
    from chemassay.suites.robustness.amore import markdown_table
    from chemassay.suites.robustness.plots import plot_layers

    specs = model_specs(args.checkpoints)
    names = [n for n in args.models.split(",") if n] or list(specs)
    if args.train:
        train_missing(args.checkpoints, names, args.threads, args.piece_minutes)
    args.out.mkdir(parents=True, exist_ok=True)
    for name in names:
        for dataset in [d for d in args.datasets.split(",") if d and d != "none"]:
            target = args.out / f"{name}-{dataset}.json"
            if target.is_file():
                continue
            started = time.perf_counter()
            result = api.evaluate(model=specs[name], reference=dataset, augmentations=args.augmentations, layers="all",
                                  bootstrap=args.bootstrap, n_jobs=1)
            result.write(target)
            with open(args.out / "tables.md", "a", encoding="utf-8") as handle:
                handle.write(markdown_table(result.details.table, f"AMORE {dataset} - {name}") + "\n")
            per_layer = result.details.per_layer
            if per_layer and max(len(v) for v in per_layer.values()) > 1:
                plot_layers(per_layer, args.out / f"{name}-{dataset}-layers.png", title=f"{name} on {dataset}")
            print(json.dumps({"model": name, "dataset": dataset, "seconds": round(time.perf_counter() - started, 1),
                              "truncated": len(result.details.truncated), "skipped": len(result.skipped)}), flush=True)
    if args.downstream:
        run_downstream(args.out, args.checkpoints, args.threads, args.bootstrap)


if __name__ == "__main__":
    main()
