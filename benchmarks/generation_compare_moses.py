"""Compare chemassay's MOSES metrics with the reference implementation, value by value.

Installs ``molsets==0.3.1`` (the MOSES reference) without its dependencies into a
throwaway virtual environment (see ``generation_common.py``: same library versions as this
interpreter by default, ``--rdkit VERSION`` for another RDKit), runs both tools on the same
SMILES and prints both values side by side with their difference and the tolerance (1e-6;
FCD 1e-3). Not part of the test suite: it downloads packages and takes minutes.

    python benchmarks/generation_compare_moses.py --n 3000
    python benchmarks/generation_compare_moses.py --gen samples.txt --venv /tmp/moses-ref
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from generation_common import ensure_reference_venv, read_gen_file, run_tool, sample_smiles  # noqa: E402

# Frag/Scaf: the reference overflows int64 for large sets (see docs/generation-metrics.md),
# so a difference there is expected once the sample is large.
KNOWN_REFERENCE_BUGS = {"Frag/Test", "Frag/TestSF", "Scaf/Test", "Scaf/TestSF"}


def tolerance(key: str) -> float:
    return 1e-3 if key.startswith("FCD") else 1e-6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gen", help="SMILES file to evaluate (default: a sample built from MOSES)")
    parser.add_argument("--n", type=int, default=3000, help="sample size when --gen is not given")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2, help="torch threads of each tool")
    parser.add_argument("--venv", help="where to keep the reference venv (default: a temporary one)")
    parser.add_argument("--rdkit", help="RDKit version for the reference venv (default: this one's)")
    parser.add_argument("--json", help="also write both results here")
    args = parser.parse_args(argv)

    gen = read_gen_file(args.gen) if args.gen else sample_smiles(args.n, args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        venv = Path(args.venv) if args.venv else Path(tmp) / "moses-venv"
        python = ensure_reference_venv(venv, rdkit=args.rdkit, quiet=True)
        reference = run_tool("moses", str(python), gen, n_jobs=args.n_jobs, threads=args.threads)
    ours = run_tool("chemassay", sys.executable, gen, n_jobs=args.n_jobs, threads=args.threads)

    print(f"{len(gen)} SMILES, n_jobs={args.n_jobs}")
    print(f"{'metric':<14}{'MOSES':>16}{'chemassay':>16}{'|diff|':>12}  verdict")
    failures = 0
    for key, ref_value in reference["metrics"].items():
        value = ours["metrics"].get(key, math.nan)
        both_nan = math.isnan(ref_value) and math.isnan(value)
        diff = 0.0 if both_nan else abs(ref_value - value)
        if diff <= tolerance(key) or both_nan:
            verdict = "same"
        elif key in KNOWN_REFERENCE_BUGS:
            verdict = "differs (reference int64 overflow; ours is float64)"
        else:
            verdict = "DIFFERENT"
            failures += 1
        print(f"{key:<14}{ref_value:>16.8f}{value:>16.8f}{diff:>12.2e}  {verdict}")
    print(f"wall time: MOSES {reference['wall_s']:.1f} s, chemassay {ours['wall_s']:.1f} s")
    if args.json:
        Path(args.json).write_text(json.dumps({"moses": reference, "chemassay": ours}, indent=2))
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
