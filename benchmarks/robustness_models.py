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
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

AUGMENTATIONS = ("canonical", "explicit_h", "kekulize", "cycle_renumber", "randomized", "cycle_renumber_amore")
LM_CONFIG = {"data": "moses", "n_train": 100000, "n_valid": 1000, "steps_per_epoch": 250, "hidden": 128, "heads": 4,
             "batch_size": 32, "seed": 0}
"""The CPU configuration of the three language-model families (docs/robustness.md)."""
LM_SIZES = {"encoder": {"steps": 1500, "layers": 4}, "decoder": {"steps": 1500, "layers": 4},
            "encoder-decoder": {"steps": 1500, "layers": 3}}
"""Steps and layers (each side for the encoder-decoder) per family."""
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
                print(f"{name}: epochs {result.epochs_done}, {'finished' if result.finished else 'piece'}", flush=True)
                if result.finished:
                    break
        elif name == "gnn" and not (checkpoints / "gnn" / "gnn.pt").is_file():
            while True:
                result = api.train_gnn(checkpoints / "gnn", threads=threads, max_minutes=minutes, **GNN_CONFIG)
                if result.finished:
                    break


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--checkpoints", type=Path, default=Path("runs/robustness"))
    parser.add_argument("--models", default="")
    parser.add_argument("--datasets", default="isomers,chebi20", help="'none': only train")
    parser.add_argument("--train", action="store_true")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--piece-minutes", type=float, default=9.0)
    parser.add_argument("--bootstrap", type=int, default=1000)
    args = parser.parse_args()
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
            result = api.evaluate(model=specs[name], dataset=dataset, augmentations=AUGMENTATIONS, layers="all",
                                  bootstrap=args.bootstrap, n_jobs=1)
            result.write(target)
            with open(args.out / "tables.md", "a", encoding="utf-8") as handle:
                handle.write(markdown_table(result.table, f"AMORE {dataset} - {name}") + "\n")
            if getattr(result, "per_layer", None) and max(len(v) for v in result.per_layer.values()) > 1:
                plot_layers(result.per_layer, args.out / f"{name}-{dataset}-layers.png", title=f"{name} on {dataset}")
            print(json.dumps({"model": name, "dataset": dataset, "seconds": round(time.perf_counter() - started, 1),
                              "truncated": len(result.truncated or []), "skipped": len(result.skipped)}), flush=True)


if __name__ == "__main__":
    main()
