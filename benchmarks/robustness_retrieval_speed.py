"""Speed of AMORE retrieval on 3,300 x 3,300 (ChEBI-20 size), both directions.

Measures :func:`chemassay.suites.robustness.retrieval.score_pair` (exact ranks, both
directions, Acc@1/5 + MRR) on real ChEBI-20 embeddings (fingerprint and char-ngram, sparse
counts), on dense 768-d float32 embeddings (the size of a BERT/T5-base model) and on
256-d ones, and compares with AMORE's own procedure (a FAISS ``IndexFlatL2`` searched one
query at a time with k = n, one direction) on the same input in the same process.
Prints medians of ``--repeats`` runs; timings on a shared machine are noisy, re-run on a
quiet one. Run: ``PYTHONPATH=src python benchmarks/robustness_retrieval_speed.py``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))


def median_time(function, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--reference", action=argparse.BooleanOptionalAction, default=True,
                        help="Also time AMORE's per-query FAISS search (slow).")
    args = parser.parse_args()
    import numpy as np

    from chemassay.models import load_model
    from chemassay.runtime.progress import settings
    from chemassay.suites.robustness.amore import augmented_rows
    from chemassay.suites.robustness.data import load_amore
    from chemassay.suites.robustness.encoders import encode_cached
    from chemassay.suites.robustness.retrieval import (
        faiss_available,
        reference_ranks_faiss,
        score_pair,
    )

    settings.quiet = True
    # A machine-load yardstick: a pure-Python loop of 10**7 squares takes ~0.6 s on an idle
    # modern core; scale the figures below by (this / 0.6) when the machine is shared.
    started = time.perf_counter()
    sum(i * i for i in range(10**7))
    print(f"calibration: python loop 1e7 = {time.perf_counter() - started:.2f} s")
    table = load_amore("chebi20")
    kekule = [r.augmented or r.original for r in augmented_rows(table, "kekulize")]
    cases = {}
    for spec in ("fingerprint", "char-ngram"):
        encoder = load_model(spec, "encoder")
        cases[f"{spec} (sparse, ChEBI-20 kekulize)"] = (encode_cached(encoder, table.smiles).layers[0],
                                                      encode_cached(encoder, kekule).layers[0])
    rng = np.random.default_rng(0)
    for dim in (256, 768):
        base = rng.normal(size=(len(table), dim)).astype(np.float32)
        cases[f"dense {dim}-d float32"] = (base, base + 0.5 * rng.normal(size=base.shape).astype(np.float32))
    backends = ["numpy"] + (["faiss"] if faiss_available() else [])
    print(f"n = {len(table)} queries x {len(table)} candidates, both directions; median of {args.repeats}")
    print("| embeddings | backend | score_pair (s) | AMORE per-query FAISS, one direction (s) | ratio |")
    print("| --- | --- | --- | --- | --- |")
    for label, (original, augmented) in cases.items():
        reference_time = None
        if args.reference and faiss_available():
            reference_time = median_time(lambda o=original, a=augmented: reference_ranks_faiss(a, o), 1)
        for backend in backends:
            ours = median_time(lambda o=original, a=augmented, b=backend: score_pair(o, a, backend=b), args.repeats)
            ratio = f"{reference_time / ours:.1f}x" if reference_time else "-"
            shown = f"{reference_time:.2f}" if reference_time else "-"
            print(f"| {label} | {backend} | {ours:.3f} | {shown} | {ratio} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
