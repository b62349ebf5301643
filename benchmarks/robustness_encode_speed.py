"""Encoding throughput of every robustness encoder on CPU (molecules/s, all layers).

    python benchmarks/robustness_encode_speed.py [--n 300] [--threads 1] [--checkpoints runs/robustness]

Embeds the first ``--n`` ChEBI-20 test molecules (mean 79 characters, the AMORE input) with
``layers="all"`` (every hidden layer pooled, as the layer-wise tables need) and prints the
median of 3 runs per model, with the ratio to the Morgan fingerprint measured in the same run.
Models whose package or checkpoint is missing are listed as skipped. Caching is off.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--checkpoints", type=Path, default=Path("runs/robustness"))
    args = parser.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    import torch

    torch.set_num_threads(args.threads)
    from chemassay.contract.errors import ChemassayError
    from chemassay.data.registry import load_dataset
    from chemassay.models.registry import resolve_model

    smiles = load_dataset("chebi20").smiles[: args.n]
    specs = {
        "fingerprint": "fingerprint", "char-ngram": "char-ngram", "chemnet": "chemnet", "rxnmapper": "rxnmapper",
        "rxnfp": "rxnfp",
        "lm-encoder": f"hf:{args.checkpoints / 'lm-encoder'},pooling=mean-all",
        "lm-decoder": f"hf:{args.checkpoints / 'lm-decoder'},pooling=mean-all",
        "lm-encoder-decoder": f"hf:{args.checkpoints / 'lm-encoder-decoder'},pooling=mean-all",
        "gnn": f"gnn:{args.checkpoints / 'gnn'}",
    }
    load = os.getloadavg()[0]
    print(f"n = {len(smiles)} ChEBI-20 molecules, layers='all', torch threads {args.threads}, "
          f"load average {load:.1f} on {os.cpu_count()} cores; median of {args.repeats}")
    print("| model | layers | dim | molecules/s | vs fingerprint |")
    print("| --- | --- | --- | --- | --- |")
    reference = None
    for name, spec in specs.items():
        try:
            encoder = resolve_model(spec, "encoder", {})
            encoder.encode(smiles[:8], layers="all")  # load weights, warm up
        except (ChemassayError, OSError) as exc:
            print(f"| {name} | skipped: {str(exc).splitlines()[0][:90]} | | | |")
            continue
        times = []
        for _ in range(args.repeats):
            started = time.perf_counter()
            layers = encoder.encode(smiles, layers="all")
            times.append(time.perf_counter() - started)
        rate = len(smiles) / statistics.median(times)
        reference = reference or rate
        print(f"| {name} | {len(layers)} | {layers[-1].shape[1]} | {rate:,.0f} | {rate / reference:.3f}x |", flush=True)


if __name__ == "__main__":
    main()
