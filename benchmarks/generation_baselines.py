"""Training and sampling times of the generation baselines, and filter throughput.

Prints wall times (median of ``--repeats`` for the short steps) and peak memory so the
figures can be re-measured on a quiet machine:

* n-gram: training on the first ``--ngram-train`` MOSES train SMILES (default: all
  1,584,663), save, load, and sampling ``--n`` (30,000) strings with seed 0;
* combinatorial: training on ``--comb-train`` SMILES (default 100,000; ``0`` = all) with
  ``--n-jobs`` processes, sampling ``--n`` with ``join=valid`` and ``join=moses``;
* the MOSES filters on ``--n-filter`` MOSES test molecules, with and without the pattern
  fingerprint pre-screen.

    python benchmarks/generation_baselines.py
    python benchmarks/generation_baselines.py --ngram-train 200000 --comb-train 20000 --n 5000
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from timing import peak_rss_mb, timed  # noqa: E402


def save(folder: str | None, name: str, samples: list[str]) -> None:
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        (Path(folder) / name).write_text("".join(f"{s}\n" for s in samples))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ngram-train", type=int, default=0, help="0 = the full MOSES train split")
    parser.add_argument("--comb-train", type=int, default=100_000, help="0 = the full MOSES train split")
    parser.add_argument("--n", type=int, default=30_000)
    parser.add_argument("--n-filter", type=int, default=500)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--save-samples", help="folder to write ngram.txt and combinatorial_<join>.txt into")
    args = parser.parse_args(argv)

    from rdkit import Chem, RDLogger

    from chemassay.suites.generation.baselines import CharNGram, CombinatorialGenerator
    from chemassay.suites.generation.data import load_moses
    from chemassay.suites.generation.filters import filter_molecules

    RDLogger.DisableLog("rdApp.*")
    seconds, train = timed(lambda: load_moses(part="train"))
    print(f"load MOSES train ({len(train)} SMILES): {seconds:.1f} s")

    ngram_train = train[: args.ngram_train] if args.ngram_train else train
    seconds, ngram = timed(lambda: CharNGram.fit(ngram_train, show_progress=False))
    print(f"n-gram fit on {len(ngram_train)} SMILES: {seconds:.1f} s, {ngram.n_contexts} contexts, "
          f"{len(ngram.counts)} (context, next) counts, peak RSS {peak_rss_mb():.0f} MB")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ngram.npz"
        seconds, _ = timed(lambda: ngram.save(path), args.repeats)
        print(f"n-gram save: {seconds:.2f} s ({path.stat().st_size / 1e6:.1f} MB)")
        seconds, ngram = timed(lambda: CharNGram.load(path), args.repeats)
        print(f"n-gram load: {seconds:.2f} s")
    seconds, samples = timed(lambda: ngram.sample(args.n, 0, show_progress=False))
    save(args.save_samples, "ngram.txt", samples)
    valid = sum(Chem.MolFromSmiles(s) is not None for s in samples if s) / len(samples)
    print(f"n-gram sample {args.n}: {seconds:.1f} s ({args.n / seconds:.0f}/s), valid {valid:.4f}")

    comb_train = train[: args.comb_train] if args.comb_train else train
    seconds, comb = timed(lambda: CombinatorialGenerator.fit(comb_train, n_jobs=args.n_jobs, show_progress=False))
    print(f"combinatorial fit on {len(comb_train)} SMILES with {args.n_jobs} processes: {seconds:.1f} s "
          f"({len(comb_train) / seconds:.0f} molecules/s), {len(comb.fragments)} fragments")
    for join in ("valid", "moses"):
        seconds, samples = timed(lambda join=join: comb.sample(args.n, 0, join=join, n_jobs=args.n_jobs, show_progress=False))
        save(args.save_samples, f"combinatorial_{join}.txt", samples)
        valid = sum(Chem.MolFromSmiles(s) is not None for s in samples) / len(samples)
        print(f"combinatorial sample {args.n} (join={join}, {args.n_jobs} processes): {seconds:.1f} s, valid {valid:.4f}")

    molecules = load_moses(part="test", limit=args.n_filter)
    for screen in (True, False):
        seconds, _ = timed(lambda screen=screen: filter_molecules(molecules, screen=screen, show_progress=False), args.repeats)
        print(f"filters on {len(molecules)} MOSES test molecules (screen={screen}, 1 process): "
              f"{seconds:.2f} s ({len(molecules) / seconds:.0f} molecules/s)")
    print(f"peak RSS {peak_rss_mb():.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
