"""Speed of the seq2seq model on CPU: training throughput and beam-5 inference, beside the
template-kNN baseline on the same test reactions.

1. **Training** (tokens/s, source + target tokens): ``--steps`` optimizer steps of the config's
   batch of USPTO-15K pairs (length-grouped batches, as in training) for each config in
   ``--configs`` (``NAME`` or ``NAME:KEY=VALUE+KEY=VALUE``, e.g. ``small:copy=false``), with 1
   and 2 torch threads; the median step after ``--warmup`` steps is reported.
2. **Inference** (reactions/s at beam 5, k = 5, canonical de-duplication): a trained seq2seq
   model folder (``--model``) and a template-kNN model file (``--knn``, from ``chemassay
   reaction-ood train``) predict the same ``--n`` reactions of ``--test`` (seeded sample),
   one process and one thread each (``--threads``), ``--repeats`` times; medians and the ratio.

    PYTHONPATH=src python benchmarks/reaction_ood_seq2seq_speed.py train
    PYTHONPATH=src python benchmarks/reaction_ood_seq2seq_speed.py infer --model reports/rood-s2s/models/random \\
        --knn reports/rood-s2s/random.npz --test reports/rood-s2s/splits/random/test.parquet --n 200

Print the machine's load with the numbers (``os.getloadavg``): on a shared machine the
ratios measured in one run are the comparable figures, not the absolute rates.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import cpu_model, peak_rss_mb  # noqa: E402


def _machine() -> str:
    model = cpu_model()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return f"{model}, {os.cpu_count()} cores, load average {load}"


def train_speed(args) -> None:
    import numpy as np
    import torch

    import chemassay
    from chemassay.models.seq2seq import (
        collate_pairs,
        count_parameters,
        encode_pairs,
        get_config,
        make_module,
        parse_settings,
    )
    from chemassay.models.seq2seq_data import arrange_pairs, reaction_pair
    from chemassay.models.training import EpochBatchSampler
    from chemassay.models.vocab import Vocabulary

    pairs = [p for p in (reaction_pair(x) for x in chemassay.load_dataset("uspto-15k", part="train", limit=4000)) if p]
    vocab = Vocabulary.build([s for s, _ in pairs] + [t for _, t in pairs], "smiles")
    print(f"machine: {_machine()}; torch {torch.__version__}")
    print("| config | parameters | threads | tokens/step | s/step (median) | tokens/s |")
    print("| --- | --- | --- | --- | --- | --- |")
    for label in args.configs.split(","):
        name, _, changes = label.partition(":")
        config = get_config(name, **parse_settings([c for c in changes.split("+") if c]))
        encoded = encode_pairs(arrange_pairs(pairs, source_order=config.source_order, target_root=config.target_root),
                               vocab, config.max_positions).dataset
        sampler = EpochBatchSampler(len(encoded), config.batch_size, args.warmup + args.steps, 0, encoded.lengths())
        batches = [collate_pairs([encoded[i] for i in b]) for b in sampler]
        for threads in (1, 2):
            torch.set_num_threads(threads)
            torch.manual_seed(0)
            module = make_module(config, vocab)
            optimizer = torch.optim.AdamW(module.parameters(), lr=config.lr)
            seconds, tokens = [], []
            steps = args.steps if name != "paper" else min(args.steps, 3)
            for index, batch in enumerate(batches[:args.warmup + steps]):
                started = time.perf_counter()
                loss, _, _ = module._loss(batch)
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
                if index >= args.warmup:
                    seconds.append(time.perf_counter() - started)
                    tokens.append(module.count_items(batch))
            per_step = statistics.median(seconds)
            rate = float(np.sum(tokens) / np.sum(seconds))
            print(f"| {label} | {count_parameters(module.model):,} | {threads} | {statistics.median(tokens):.0f} | "
                  f"{per_step:.2f} | {rate:,.0f} |", flush=True)
    print(f"\npeak RSS {peak_rss_mb():.0f} MB; {_machine()}")


def infer_speed(args) -> None:
    import pandas as pd
    import torch

    from chemassay.models.seq2seq import Seq2SeqPredictor, load_seq2seq
    from chemassay.suites.reaction_ood.template_knn import TemplateKnnModel

    torch.set_num_threads(args.threads)
    test = pd.read_parquet(args.test)
    test = test.sample(n=min(args.n, len(test)), random_state=0)
    queries = test["reactants"].tolist()
    seq2seq = Seq2SeqPredictor(load_seq2seq(args.model, threads=args.threads), beam=5, batch_size=args.batch_size)
    knn = TemplateKnnModel.load(args.knn)
    print(f"machine: {_machine()}; {len(queries)} reactions of {args.test}")
    rows = []
    for label, predict in (("seq2seq beam 5", lambda: seq2seq.predict(queries, k=5)),
                           ("template-kNN", lambda: knn.predict(queries, k=5, n_jobs=1))):
        times = []
        for _ in range(args.repeats):
            started = time.perf_counter()
            predict()
            times.append(time.perf_counter() - started)
        median = statistics.median(times)
        rows.append((label, median, len(queries) / median))
        print(f"{label}: {', '.join(f'{t:.1f}' for t in times)} s -> median {median:.1f} s, "
              f"{len(queries) / median:.1f} reactions/s", flush=True)
    print("\n| model | reactions | median s | reactions/s |\n| --- | --- | --- | --- |")
    for label, median, rate in rows:
        print(f"| {label} | {len(queries)} | {median:.1f} | {rate:.1f} |")
    reasons: dict[str, int] = {}
    for reason in seq2seq.failures.values():
        reasons[reason.split(":")[0]] = reasons.get(reason.split(":")[0], 0) + 1
    print(f"\nseq2seq: {len(seq2seq.failures)} of {len(queries)} inputs got no prediction without decoding "
          f"({', '.join(f'{n} {r}' for r, n in reasons.items()) or 'none'}); the others were decoded with beam 5")
    print(f"seq2seq / template-kNN speed ratio: {rows[0][2] / rows[1][2]:.2f}; peak RSS {peak_rss_mb():.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="stage", required=True)
    train = sub.add_parser("train")
    train.add_argument("--configs", default="tiny,small,small:copy=false,paper")
    train.add_argument("--steps", type=int, default=10)
    train.add_argument("--warmup", type=int, default=2)
    infer = sub.add_parser("infer")
    infer.add_argument("--model", type=Path, required=True)
    infer.add_argument("--knn", type=Path, required=True)
    infer.add_argument("--test", type=Path, required=True)
    infer.add_argument("--n", type=int, default=200)
    infer.add_argument("--threads", type=int, default=1)
    infer.add_argument("--batch-size", type=int, default=32)
    infer.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    (train_speed if args.stage == "train" else infer_speed)(args)


if __name__ == "__main__":
    main()
