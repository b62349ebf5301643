"""A busy machine: the heavy kernels of the MOSES metrics as OpenMP-parallel calls against
independent single-threaded blocks, alone and beside competing CPU-bound processes.

For each of three kernels, ChemNet on ``--n`` molecules (batches of 512), the pruned SNN
of ``--n`` queries against the published MOSES test set, and the eigendecompositions of
FCD (two 512 x 512), this runs (in this process, with ``--threads`` threads):

* ``openmp``: one call at a time with ``torch.set_num_threads(threads)`` and BLAS threads
  (how chemassay ran before: every step waits for all its threads);
* ``blocks``: the same work cut into independent blocks on ``threads`` Python threads with
  single-threaded kernels (``chemassay.runtime.threads.thread_map``, what chemassay does now),

first as the machine is, then with ``--competitors`` extra busy processes (a Python loop
each). It prints the wall time of each and the slowdown caused by the competitors, and the
load average. An ideal run on 2 cores with one competitor slows by 1.5x.

    python benchmarks/generation_busy.py --n 2048 --competitors 1
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from generation_common import load_average, start_competitor  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=2048)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--competitors", type=int, default=1)
    args = parser.parse_args(argv)

    import numpy as np
    import pandas as pd
    import torch
    from threadpoolctl import threadpool_limits

    from chemassay.chem.similarity import NearestNeighbourIndex, PreparedFingerprints
    from chemassay.data import dataset_file
    from chemassay.runtime.threads import single_threaded_kernels, thread_map
    from chemassay.suites.generation import chemnet
    from chemassay.suites.generation.descriptors import (
        canonicalize,
        describe_smiles,
        fingerprint_matrix,
    )
    from chemassay.suites.generation.pairs import unique_rows
    from chemassay.suites.generation.reference import published_moses_stats

    smiles = pd.read_csv(dataset_file("moses", "train.csv.gz"), nrows=args.n)["SMILES"].tolist()
    canonical = [canonicalize(s) for s in smiles]
    records = [describe_smiles(c) for c in canonical]
    queries = fingerprint_matrix([r.fingerprint for r in records])
    ref = published_moses_stats("test")
    index = NearestNeighbourIndex(unique_rows(ref.fingerprints)[0])
    rng = np.random.default_rng(0)
    sigma = np.cov(rng.normal(size=(600, 512)).T)

    def chemnet_openmp():
        torch.set_num_threads(args.threads)
        model, trajectory = chemnet.chemnet_model("cpu"), chemnet._trajectory("cpu")
        ordered = sorted(canonical, key=len)
        with torch.no_grad(), threadpool_limits(args.threads):
            for start in range(0, len(ordered), 512):
                tokens = [chemnet.chemnet_tokens(s) for s in ordered[start:start + 512]]
                one_hot = chemnet._one_hot_batch(tokens, torch, "cpu")
                chemnet._activations_skipping_padding(model, one_hot, [len(t) for t in tokens], trajectory, torch)

    def chemnet_blocks():
        chemnet.chemnet_activations(canonical, show_progress=False, n_threads=args.threads)

    def snn_openmp():
        torch.set_num_threads(args.threads)  # each block's kernels on `threads` OpenMP threads
        prepared = PreparedFingerprints(queries)
        best = np.zeros(len(queries))
        found = np.zeros(len(queries), dtype=np.int64)
        for start in range(0, len(queries), 1024):
            rows = np.arange(start, min(start + 1024, len(queries)))
            index._query_pruned(prepared.rows_at(rows), best, found, rows, False)

    def snn_blocks():
        index.query(queries, n_threads=args.threads)

    def eigh_openmp():
        with threadpool_limits(args.threads):
            for _ in range(2):
                np.linalg.eigh(sigma)

    def eigh_blocks():
        with single_threaded_kernels():
            thread_map(lambda _: np.linalg.eigh(sigma), range(2), n_threads=args.threads)

    kernels = {"ChemNet": (chemnet_openmp, chemnet_blocks), "SNN": (snn_openmp, snn_blocks),
               "FCD eigh": (eigh_openmp, eigh_blocks)}
    for run in (chemnet_blocks, snn_blocks):
        run()  # warm up (model, trajectory, kernel choice)

    def measure(fn) -> float:
        start = time.perf_counter()
        fn()
        return time.perf_counter() - start

    results: dict[tuple[str, str, int], float] = {}
    loads = [load_average()]
    for competitors in (0, args.competitors):
        helpers = [start_competitor() for _ in range(competitors)]
        time.sleep(1.0 if competitors else 0.0)
        try:
            for name, (openmp, blocks) in kernels.items():
                results[(name, "openmp", competitors)] = measure(openmp)
                results[(name, "blocks", competitors)] = measure(blocks)
                loads.append(load_average())
        finally:
            for helper in helpers:
                helper.kill()
                helper.wait()
        torch.set_num_threads(args.threads)
    print(f"{args.n} molecules, {args.threads} threads; load average {min(loads):.1f} to {max(loads):.1f}")
    print(f"{'kernel':<10}{'mode':<8}{'alone (s)':>11}{f'+{args.competitors} busy (s)':>14}{'slowdown':>10}")
    for name in kernels:
        for mode in ("openmp", "blocks"):
            alone, busy = results[(name, mode, 0)], results[(name, mode, args.competitors)]
            print(f"{name:<10}{mode:<8}{alone:>11.2f}{busy:>14.2f}{busy / alone:>9.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
