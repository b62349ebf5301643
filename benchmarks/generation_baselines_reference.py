"""Compare chemassay's MOSES baselines and filters with the reference code, side by side.

Installs ``molsets==0.3.1`` without its dependencies into a throwaway virtual environment
(``generation_common.ensure_reference_venv``: same RDKit/NumPy/pandas versions as this
interpreter), trains the reference ``NGram(10)`` and ``CombinatorialGenerator`` on the
first ``--n-train`` MOSES training SMILES, samples them with the reference's own seeding,
does the same with chemassay, and prints per baseline: whether the samples are identical
draw for draw, and both tools' training and sampling times. It also compares the reference
``mol_passes_filters`` with ``chemassay.suites.generation.filters.passes_filters`` on real
molecules (MOSES test, ChEBI-20 and the n-gram samples). Not part of the test suite.

    python benchmarks/generation_baselines_reference.py --n-train 20000 --n-samples 2000
    python benchmarks/generation_baselines_reference.py --venv /tmp/moses-ref
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from generation_common import MOLSETS_SHIMS, ensure_reference_venv  # noqa: E402

# Runs inside the reference venv, after the shared shims (generation_common.MOLSETS_SHIMS).
REFERENCE_RUNNER = MOLSETS_SHIMS + r'''
from moses.baselines import CombinatorialGenerator, NGram
from moses.metrics.utils import mol_passes_filters
args = json.load(open(sys.argv[1]))
train, n = args["train"], args["n_samples"]
out = {}
start = time.perf_counter(); ngram = NGram(10); ngram.fit(train); out["ngram_fit_s"] = time.perf_counter() - start
np.random.seed(args["seed"])
start = time.perf_counter(); out["ngram"] = ngram.generate(n); out["ngram_sample_s"] = time.perf_counter() - start
start = time.perf_counter(); comb = CombinatorialGenerator().fit(train); out["comb_fit_s"] = time.perf_counter() - start
seeds = range(args["seed"] * n, args["seed"] * n + n)
start = time.perf_counter(); out["combinatorial"] = [comb.generate_one(s) for s in seeds]
out["comb_sample_s"] = time.perf_counter() - start
start = time.perf_counter(); out["filters"] = [bool(mol_passes_filters(s)) for s in args["filter_smiles"]]
out["filters_s"] = time.perf_counter() - start
json.dump(out, open(sys.argv[2], "w"))
'''


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-train", type=int, default=20000, help="first N MOSES train SMILES")
    parser.add_argument("--n-samples", type=int, default=2000)
    parser.add_argument("--n-filter", type=int, default=1000, help="molecules per source for the filter check")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--venv", help="where to keep the reference venv (default: a temporary one)")
    args = parser.parse_args(argv)

    from chemassay.data import dataset_file
    from chemassay.suites.generation.baselines import CharNGram, CombinatorialGenerator
    from chemassay.suites.generation.data import load_moses
    from chemassay.suites.generation.filters import passes_filters

    train = load_moses(part="train", limit=args.n_train)
    test = load_moses(part="test", limit=args.n_filter)
    chebi_rows = dataset_file("amore-chebi20", "chebi20_original.tsv").read_text().splitlines()[1:]
    chebi = [row.split("\t")[1].replace("\\\\", "\\") for row in chebi_rows[: args.n_filter]]

    ours: dict = {}
    start = time.perf_counter()
    ngram = CharNGram.fit(train, show_progress=False)
    ours["ngram_fit_s"] = time.perf_counter() - start
    start = time.perf_counter()
    ours["ngram"] = ngram.sample(args.n_samples, args.seed, show_progress=False)
    ours["ngram_sample_s"] = time.perf_counter() - start
    start = time.perf_counter()
    comb = CombinatorialGenerator.fit(train, show_progress=False)
    ours["comb_fit_s"] = time.perf_counter() - start
    start = time.perf_counter()
    ours["combinatorial"] = comb.sample(args.n_samples, args.seed, join="moses", show_progress=False)
    ours["comb_sample_s"] = time.perf_counter() - start
    filter_smiles = test + chebi + [s for s in ours["ngram"] if s][: args.n_filter]
    start = time.perf_counter()
    ours["filters"] = [passes_filters(s) for s in filter_smiles]
    ours["filters_s"] = time.perf_counter() - start

    with tempfile.TemporaryDirectory() as tmp:
        venv = Path(args.venv) if args.venv else Path(tmp) / "moses-venv"
        python = ensure_reference_venv(venv, quiet=True)
        job = Path(tmp) / "job.json"
        result = Path(tmp) / "reference.json"
        runner = Path(tmp) / "runner.py"
        runner.write_text(REFERENCE_RUNNER)
        # Both sides seed combinatorial sample i with seed * n + i (the reference's
        # reproduce(seed) would use (seed - 1) * n + i: the same draws one seed later).
        job.write_text(json.dumps({
            "train": train, "n_samples": args.n_samples, "seed": args.seed, "filter_smiles": filter_smiles,
        }))
        subprocess.run([str(python), str(runner), str(job), str(result)], check=True)
        reference = json.loads(result.read_text())

    def same(key: str) -> str:
        equal = sum(a == b for a, b in zip(ours[key], reference[key], strict=True))
        return f"{equal}/{len(ours[key])} identical"

    print(f"training set: first {len(train)} MOSES train SMILES; {args.n_samples} samples; seed {args.seed}")
    print(f"{'':<26}{'chemassay':>12}{'reference':>12}   agreement")
    rows = [
        ("n-gram fit (s)", "ngram_fit_s", ""),
        ("n-gram sample (s)", "ngram_sample_s", same("ngram")),
        ("combinatorial fit (s)", "comb_fit_s", ""),
        ("combinatorial sample (s)", "comb_sample_s", same("combinatorial") + " (join=moses)"),
        ("filters (s)", "filters_s", same("filters") + f" ({sum(ours['filters'])} pass)"),
    ]
    for label, key, note in rows:
        print(f"{label:<26}{ours[key]:>12.2f}{reference[key]:>12.2f}   {note}")
    exact = all(ours[k] == reference[k] for k in ("ngram", "combinatorial", "filters"))
    print("all identical" if exact else "DIFFERENCES FOUND")
    return 0 if exact else 1


if __name__ == "__main__":
    raise SystemExit(main())
