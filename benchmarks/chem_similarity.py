"""Bulk Tanimoto throughput: chemassay's backends vs RDKit's BulkTanimotoSimilarity.

Real molecules (the bundled ChEBI-20 set, or MOSES test when it is in the cache) are
fingerprinted (Morgan radius 2, 1024 and 2048 bits); every query is compared with every
reference, by RDKit's ``BulkTanimotoSimilarity`` looped over the queries and by each
chemassay backend, with 1 and 2 threads. Values are checked to be identical. Prints pairs
per second (median of repeats) and the ratio to RDKit measured in the same run. First it
prints the raw intersection-count throughput of each backend on one 4,096 x 8,192 block of
1024-bit 0/1 rows with 2 threads (what the matrix product itself reaches on this CPU) and
the backend ``auto`` picks here.

    python benchmarks/chem_similarity.py [--queries 2000] [--refs 20000] [--repeats 3]
"""

from __future__ import annotations

import argparse

import numpy as np
from rdkit import DataStructs
from rdkit.Chem import rdFingerprintGenerator
from timing import timed


def load_smiles(limit: int) -> list[str]:
    from chemassay.data import locate
    from chemassay.data.readers import read_table

    moses = locate("moses", "test.csv.gz")
    if moses is not None:
        import pandas as pd

        return pd.read_csv(moses)["SMILES"].head(limit).tolist()
    from chemassay.data import dataset_file

    frame = read_table(dataset_file("amore-chebi20", "chebi20_original.tsv"), sep="\t")
    smiles = frame["SMILES"].tolist()
    return (smiles * (limit // len(smiles) + 1))[:limit]


def raw_counts(repeats: int) -> None:
    from chemassay.chem.similarity import (
        BACKENDS,
        _counts_dense,
        backend_available,
        resolve_backend,
        set_num_threads,
    )

    set_num_threads(2)
    rng = np.random.default_rng(0)
    a = (rng.random((4096, 1024)) < 0.05).astype(np.uint8)
    b = (rng.random((8192, 1024)) < 0.05).astype(np.uint8)
    exact = a.astype(np.int32) @ b.astype(np.int32).T
    print("raw intersection counts, 4096 x 8192 pairs of 1024 bits, 2 threads:")
    for backend in BACKENDS:
        if backend == "numpy-popcount" or not backend_available(backend):
            continue
        _counts_dense(a, b, backend)
        seconds, counts = timed(lambda: _counts_dense(a, b, backend), repeats)  # noqa: B023 (called at once, inside the loop)
        assert np.array_equal(counts, exact), f"{backend} counts are not exact"
        print(f"  {backend:<15} {a.shape[0] * b.shape[0] / seconds / 1e6:8.1f} M pairs/s  [exact]")
    print(f"  auto picks: {resolve_backend('auto')}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--refs", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--bits", type=int, nargs="+", default=[1024, 2048])
    args = parser.parse_args()
    raw_counts(args.repeats)

    from chemassay.chem import morgan_fingerprints, parse_smiles
    from chemassay.chem.similarity import BACKENDS, backend_available, max_tanimoto, set_num_threads

    smiles = load_smiles(args.queries + args.refs)
    mols = [parse_smiles(s) for s in smiles]
    print(f"{len(mols)} real molecules: {args.queries} queries x {args.refs} references")
    for n_bits in args.bits:
        generator = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=n_bits)
        rd = [generator.GetFingerprint(m) for m in mols]
        queries_rd, refs_rd = rd[: args.queries], rd[args.queries:]
        packed = morgan_fingerprints(mols, radius=2, n_bits=n_bits)
        queries, refs = packed[: args.queries], packed[args.queries:]
        pairs = args.queries * args.refs

        def rdkit_max():
            return np.array([max(DataStructs.BulkTanimotoSimilarity(q, refs_rd)) for q in queries_rd])  # noqa: B023 (called at once, inside the loop)

        rd_time, rd_best = timed(rdkit_max, max(1, args.repeats - 2))
        print(f"\n{n_bits} bits; RDKit BulkTanimotoSimilarity loop (1 core): "
              f"{pairs / rd_time / 1e6:8.1f} M pairs/s ({rd_time:.2f} s)")
        for threads in (1, 2):
            set_num_threads(threads)
            for backend in BACKENDS:
                if not backend_available(backend):
                    continue
                seconds, best = timed(lambda: max_tanimoto(queries, refs, backend=backend), args.repeats)  # noqa: B023 (called at once, inside the loop)
                assert np.array_equal(best, rd_best), f"{backend} disagrees with RDKit"
                print(f"  {backend:<15} {threads} thread(s): {pairs / seconds / 1e6:8.1f} M pairs/s "
                      f"({seconds:.3f} s)  x{rd_time / seconds:6.1f} vs RDKit  [values identical]")


if __name__ == "__main__":
    main()
