"""Speed of the leakage audit's near-duplicate search: MOSES training chunks against every MOSES test molecule.

The audit compares each chunk of training molecules (50,000 lines by default) with every test
item and keeps each test item's exact highest Tanimoto (Morgan radius 2, 2,048 bits). This
script times that search alone, on real MOSES fingerprints (test and scaffold test: 352,299
queries; training: 1,584,663), one thread per process as the audit's workers run:

* before: ``NearestNeighbourIndex`` (each chunk indexed, 4-fold folded bounds), on
  ``--before-queries`` test molecules against the first chunk (its pairs per second);
* after: ``StreamingNearest`` (the test side prepared once, best values carried over),
  all queries against the first ``--chunks`` chunks, seconds per chunk; the values of the
  ``--before-queries`` queries are checked to equal the old method's over the same chunks;
* the extrapolated wall time of the full training split on ``--workers`` processes (one core
  each): each worker's first chunk, then its share of the rest at the later chunks' rate;
* ``--real``: the full training split on ``--workers`` worker processes (chunks dealt out in
  turn, results merged by maxima), wall time measured; ``--check N`` compares N random test
  molecules' values with ``max_tanimoto`` (the ``NearestNeighbourIndex`` search) over the
  whole split.

Fingerprints are computed once and kept under ``--cache`` (about 20 minutes of RDKit for the
1.9 million molecules). Results go to ``benchmarks/results/nearest_speed.json.gz``
(``--real``: ``nearest_speed_real.json.gz``).

    python benchmarks/nearest_speed.py --chunks 4
    python benchmarks/nearest_speed.py --real --workers 2 --check 2000
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from committed import Clock, write_summary  # noqa: E402

PARTS = ("test", "test_scaffolds", "train")


def fingerprints(part: str, cache: Path) -> np.ndarray:
    """Packed Morgan (radius 2, 2,048 bits) fingerprints of one MOSES split, cached as .npy."""
    path = cache / f"moses_{part}_morgan2_2048.npy"
    if path.is_file():
        return np.load(path, mmap_mode="r")
    from chemassay.chem.fingerprints import morgan_fingerprints
    from chemassay.suites.generation.data import load_moses

    smiles = load_moses(part=part)
    packed = np.concatenate([morgan_fingerprints(smiles[i:i + 20000]) for i in range(0, len(smiles), 20000)])
    cache.mkdir(parents=True, exist_ok=True)
    np.save(path, packed)
    return packed


def load_average() -> float:
    return round(os.getloadavg()[0], 2)


def extrapolated(args: argparse.Namespace) -> dict:
    from chemassay.chem.similarity import NearestNeighbourIndex, StreamingNearest, set_num_threads

    set_num_threads(1)
    queries = np.ascontiguousarray(np.concatenate([fingerprints("test", args.cache),
                                                   fingerprints("test_scaffolds", args.cache)]))
    train = fingerprints("train", args.cache)
    chunk = args.chunk_lines
    n_chunks = -(-len(train) // chunk)
    sample = queries[:: max(1, len(queries) // args.before_queries)][: args.before_queries]
    loads = [load_average()]

    started = time.perf_counter()
    old_best = NearestNeighbourIndex(np.asarray(train[:chunk])).query(sample, n_threads=1)
    before_s = time.perf_counter() - started
    before_rate = len(sample) * chunk / before_s
    print(f"before: {len(sample):,} x {chunk:,} pairs in {before_s:.1f} s: {before_rate / 1e6:.1f} M pairs/s", flush=True)

    nearest = StreamingNearest(queries)
    started = time.perf_counter()
    nearest._prepare()
    prepare_s = time.perf_counter() - started
    seconds = []
    for k in range(args.chunks):
        part = np.asarray(train[k * chunk:(k + 1) * chunk])
        started = time.perf_counter()
        best = nearest.update(part)
        seconds.append(time.perf_counter() - started)
        print(f"after: chunk {k + 1}: {len(queries):,} x {len(part):,} in {seconds[-1]:.1f} s "
              f"({len(queries) * len(part) / seconds[-1] / 1e6:.0f} M pairs/s), median best {np.median(best):.3f}",
              flush=True)
        if k:
            old_best = np.maximum(old_best, NearestNeighbourIndex(part).query(sample, n_threads=1))
    loads.append(load_average())
    positions = np.arange(0, len(queries), max(1, len(queries) // args.before_queries))[: args.before_queries]
    identical = bool(np.array_equal(nearest.best[positions], old_best))
    steady = float(np.mean(seconds[1:])) if len(seconds) > 1 else seconds[0]
    per_worker = -(-n_chunks // args.workers)
    wall = prepare_s + seconds[0] + (per_worker - 1) * steady
    before_wall = len(queries) * len(train) / before_rate / args.workers
    result = {
        "queries": len(queries), "training": len(train), "chunk_lines": chunk, "chunks_measured": args.chunks,
        "before": {"queries": len(sample), "seconds": round(before_s, 2), "pairs_per_s": round(before_rate),
                   "extrapolated_wall_s": round(before_wall)},
        "after": {"prepare_s": round(prepare_s, 2), "chunk_s": [round(s, 2) for s in seconds],
                  "pairs_per_s_first": round(len(queries) * chunk / seconds[0]),
                  "pairs_per_s_later": round(len(queries) * chunk / steady),
                  "engine": nearest.engine(), "extrapolated_wall_s": round(wall)},
        "workers": args.workers, "identical_to_before": identical, "load_average": loads,
        "median_best_after_chunks": round(float(np.median(nearest.best)), 4),
    }
    print(f"identical to NearestNeighbourIndex on {len(sample):,} queries: {identical}")
    print(f"extrapolated wall time, {n_chunks} chunks on {args.workers} workers: before {before_wall:,.0f} s, "
          f"after {wall:,.0f} s (load average {loads[0]} / {loads[-1]})")
    return result


def _worker(job: tuple) -> tuple[np.ndarray, list[float]]:
    cache, worker, workers, chunk = job
    from chemassay.chem.similarity import StreamingNearest, set_num_threads

    set_num_threads(1)
    queries = np.ascontiguousarray(np.concatenate([fingerprints("test", cache), fingerprints("test_scaffolds", cache)]))
    train = fingerprints("train", cache)
    nearest = StreamingNearest(queries)
    seconds = []
    for start in range(worker * chunk, len(train), workers * chunk):
        started = time.perf_counter()
        nearest.update(np.asarray(train[start:start + chunk]))
        seconds.append(time.perf_counter() - started)
    return nearest.best, seconds


def real(args: argparse.Namespace) -> dict:
    loads = [load_average()]
    started = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(args.workers) as pool:
        parts = pool.map(_worker, [(args.cache, w, args.workers, args.chunk_lines) for w in range(args.workers)])
    wall = time.perf_counter() - started
    loads.append(load_average())
    best = np.maximum.reduce([p[0] for p in parts])
    print(f"real: full training split on {args.workers} workers in {wall:,.0f} s (load average {loads[0]} / {loads[-1]})")
    result = {"workers": args.workers, "chunk_lines": args.chunk_lines, "wall_s": round(wall),
              "chunk_s": [[round(s, 1) for s in p[1]] for p in parts], "load_average": loads,
              "nearest_similarity": {f"{q:g}": round(float(np.quantile(best, q)), 4) for q in (0.01, 0.1, 0.5, 0.9, 0.99)},
              "at_least_0.7": int((best >= 0.7 - 1e-9).sum()), "queries": len(best)}
    if args.check:
        from chemassay.chem.similarity import max_tanimoto, set_num_threads

        set_num_threads(args.workers)
        queries = np.concatenate([fingerprints("test", args.cache), fingerprints("test_scaffolds", args.cache)])
        pick = np.random.default_rng(0).choice(len(queries), args.check, replace=False)
        train = fingerprints("train", args.cache)
        expected = np.zeros(args.check)
        for start in range(0, len(train), 200000):  # max_tanimoto per slice: bounded memory
            part = max_tanimoto(np.ascontiguousarray(queries[pick]), np.asarray(train[start:start + 200000]))
            np.maximum(expected, part, out=expected)
        result["check"] = {"queries": args.check, "identical": bool(np.array_equal(best[pick], expected))}
        print(f"check: {args.check} queries identical to max_tanimoto over the whole split: {result['check']['identical']}")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "chemassay" / "bench")
    parser.add_argument("--chunk-lines", type=int, default=50000)
    parser.add_argument("--chunks", type=int, default=4, help="chunks timed (the extrapolation)")
    parser.add_argument("--before-queries", type=int, default=20000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--real", action="store_true", help="run the full training split")
    parser.add_argument("--check", type=int, default=0, help="with --real: test molecules checked by max_tanimoto")
    args = parser.parse_args()
    clock = Clock()
    if args.real:
        write_summary("nearest_speed_real", real(args), clock=clock, packages=("numpy", "torch"))
    else:
        write_summary("nearest_speed", extrapolated(args), clock=clock, packages=("numpy", "torch"))


if __name__ == "__main__":
    main()
