"""Speed of the distribution-shift analysis (reaction-ood ``shift``), printed for re-runs.

Measures, on real Schneider 50k reactions:

1. fingerprinting throughput (reactions/s; reagent removal + Morgan counts, both spaces);
2. exact k-nearest-neighbour search (cosine, k=5) in chemassay's blocked implementation
   against scikit-learn's brute-force ``NearestNeighbors(metric="cosine")`` on the same
   vectors (the reference), checking that both give the same distances;
3. the blocked search at a larger size (training rows tiled from the real ones: the cost
   does not depend on the content), reported as test x train pairs per second, and the
   time this machine would need for 100k test x 1M training reactions at that rate.

Usage: ``PYTHONPATH=src python benchmarks/reaction_ood_shift.py [--n-test 1000]
[--n-train 20000] [--big-train 200000] [--n-jobs 2] [--device cpu|cuda]``.
"""

from __future__ import annotations

import argparse
import csv
import gzip

import numpy as np
import scipy.sparse as sp
from timing import peak_rss_mb, timed

from chemassay.data import dataset_file
from chemassay.suites.reaction_ood.shift import (
    ShiftConfig,
    knn_cosine_similarities,
    mean_knn_distance,
    reaction_vectors,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-test", type=int, default=1000)
    parser.add_argument("--n-train", type=int, default=20000)
    parser.add_argument("--big-train", type=int, default=200000)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    import os

    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start "
          "(timings on a shared, loaded machine are lower bounds of what the code does)")

    with gzip.open(dataset_file("schneider-50k", "schneider50k.csv.gz"), "rt", newline="") as handle:
        reactions = [row["rxn"] for row in csv.DictReader(handle)]
    train_rx = reactions[: args.n_train]
    test_rx = reactions[-args.n_test:]
    config = ShiftConfig()

    seconds, vectors = timed(lambda: reaction_vectors(train_rx + test_rx, config=config, n_jobs=args.n_jobs))
    print(f"fingerprinting: {len(train_rx) + len(test_rx)} reactions in {seconds:.1f} s = "
          f"{(len(train_rx) + len(test_rx)) / seconds:.0f} reactions/s (n_jobs={args.n_jobs})")
    train = {s: vectors.space(s)[: len(train_rx)] for s in ("reactant", "difference")}
    test = {s: vectors.space(s)[len(train_rx):] for s in ("reactant", "difference")}
    print(f"  non-zero counts per reaction: reactant {train['reactant'].nnz / len(train_rx):.1f}, "
          f"difference {train['difference'].nnz / len(train_rx):.1f}")

    from sklearn.neighbors import NearestNeighbors

    # warm-up: the first call pays for importing torch and initialising its kernels
    knn_cosine_similarities(test["reactant"][:32], train["reactant"][:64], config=config, device=args.device)
    for space in ("reactant", "difference"):
        t_ours, ours = timed(lambda s=space: knn_cosine_similarities(test[s], train[s], config=config,
                                                                   n_jobs=args.n_jobs, device=args.device),
                             args.repeats)

        def reference(s=space):
            model = NearestNeighbors(n_neighbors=config.k, metric="cosine", algorithm="brute", n_jobs=args.n_jobs)
            model.fit(train[s])
            distances, _ = model.kneighbors(test[s])
            return distances

        t_ref, ref = timed(reference, args.repeats)
        # sklearn's cosine distance of an all-zero vector is 1 as well
        gap = float(np.abs(mean_knn_distance(ours) - ref.mean(axis=1)).max())
        print(f"kNN {space:<10} {len(test_rx)} x {len(train_rx)}: chemassay {t_ours:.2f} s, "
              f"scikit-learn brute {t_ref:.2f} s, ratio {t_ref / t_ours:.1f}x, max |distance gap| {gap:.2e}")

    reps = -(-args.big_train // len(train_rx))
    big = sp.vstack([train["reactant"]] * reps).tocsr()[: args.big_train]
    seconds, ours = timed(lambda: knn_cosine_similarities(test["reactant"], big, config=config,
                                                         n_jobs=args.n_jobs, device=args.device))
    pairs = len(test_rx) * big.shape[0]
    rate = pairs / seconds
    if pairs <= 2e8:
        def reference_big():
            model = NearestNeighbors(n_neighbors=config.k, metric="cosine", algorithm="brute", n_jobs=args.n_jobs)
            return model.fit(big).kneighbors(test["reactant"])[0]

        t_ref, ref = timed(reference_big)
        gap = float(np.abs(mean_knn_distance(ours) - ref.mean(axis=1)).max())
        print(f"kNN reactant {len(test_rx)} x {big.shape[0]}: scikit-learn brute {t_ref:.1f} s "
              f"(ratio {t_ref / seconds:.1f}x), max |distance gap| {gap:.2e}")
    full = 100_000 * 1_000_000 * 2 / rate  # two spaces
    print(f"kNN at scale: {len(test_rx)} x {big.shape[0]} in {seconds:.1f} s = {rate / 1e6:.0f} M pairs/s "
          f"(device={args.device}, n_jobs={args.n_jobs})")
    print(f"  100k test x 1M train, both spaces, at this rate: {full / 60:.0f} min "
          f"(the search is split over test blocks, so it scales with --n-jobs)")
    print(f"peak RSS of this process: {peak_rss_mb():.0f} MB; load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
