"""CPU time of each stage of the MOSES metrics, per molecule, on one thread.

On a shared machine wall times move with the other jobs; the CPU time one thread spends on
a fixed piece of work moves much less. For ``--n`` molecules (real MOSES training
molecules) this measures, in a child process per source tree, the CPU seconds of: parsing
and canonicalizing, describing each distinct molecule (RDKit: fingerprint, logP, SA, QED,
weight, filters, fragments, scaffold), ChemNet activations, SNN against the published MOSES
test set, and IntDiv, all single-threaded (``torch.set_num_threads(1)``). Give
``--baseline-src`` (another checkout's ``src``) to measure the same stages of that version
beside this one; both must give the same values (checked).

    python benchmarks/generation_stages.py --n 4096 --baseline-src /tmp/main/src
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from generation_common import ROOT, load_average  # noqa: E402

RUNNER = r'''
import json, sys, time
import numpy as np
import torch
torch.set_num_threads(1)
from chemassay.suites.generation import chemnet, metrics
from chemassay.suites.generation.descriptors import canonicalize, describe_smiles, fingerprint_matrix
from chemassay.suites.generation.reference import published_moses_stats
gen = json.load(open(sys.argv[1]))
out = {}
ref = published_moses_stats("test")
t = time.process_time(); canonical = [canonicalize(s) for s in gen]; out["parse"] = time.process_time() - t
distinct = list(dict.fromkeys(c for c in canonical if c))
t = time.process_time(); records = [describe_smiles(c) for c in distinct]; out["describe"] = time.process_time() - t
second = [r.canonical for r in records]
chemnet.chemnet_activations(second[:64], show_progress=False)
t = time.process_time(); acts = chemnet.chemnet_activations(second, show_progress=False); out["chemnet"] = time.process_time() - t
fps = fingerprint_matrix([r.fingerprint for r in records])
t = time.process_time(); best = metrics.nearest_neighbour_similarities(fps, ref.fingerprints); out["snn"] = time.process_time() - t
t = time.process_time(); intdiv = metrics.internal_diversities(fps); out["intdiv"] = time.process_time() - t
mu, sigma = chemnet.gaussian_statistics(acts)
values = {"snn": float(best.mean()), "intdiv": list(intdiv), "fcd": chemnet.frechet_distance(ref.fcd_mu, ref.fcd_sigma, mu, sigma),
          "qed": float(np.mean([r.qed for r in records])), "filters": float(np.mean([bool(r.passes_filters) for r in records]))}
json.dump({"cpu": out, "n_input": len(gen), "n_distinct": len(distinct), "values": values}, open(sys.argv[2], "w"))
'''


def run(src: Path, gen_path: Path) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        env = dict(os.environ, PYTHONPATH=str(src), OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
        done = subprocess.run([sys.executable, "-c", RUNNER, str(gen_path), str(out)], env=env,
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(done.stderr[-3000:])
        return json.loads(out.read_text())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--baseline-src", help="another chemassay source tree to measure beside this one")
    args = parser.parse_args(argv)

    import pandas as pd

    from chemassay.data import dataset_file

    gen = pd.read_csv(dataset_file("moses", "train.csv.gz"), nrows=args.n)["SMILES"].tolist()
    with tempfile.TemporaryDirectory() as tmp:
        gen_path = Path(tmp) / "gen.json"
        gen_path.write_text(json.dumps(gen))
        trees = {"this": ROOT / "src"}
        if args.baseline_src:
            trees = {"baseline": Path(args.baseline_src), **trees}
        results = {}
        for name, src in trees.items():
            before = load_average()
            results[name] = run(src, gen_path)
            results[name]["load"] = (before, load_average())
    stages = list(next(iter(results.values()))["cpu"])
    n = next(iter(results.values()))["n_distinct"]
    print(f"{args.n} SMILES ({n} distinct), one thread, CPU seconds (ms per molecule)")
    print(f"{'stage':<10}" + "".join(f"{name:>24}" for name in results) + ("   ratio" if len(results) == 2 else ""))
    for stage in stages:
        cells = [results[name]["cpu"][stage] for name in results]
        row = f"{stage:<10}" + "".join(f"{c:>14.2f} ({1000 * c / n:5.2f} ms)" for c in cells)
        if len(cells) == 2 and cells[1] > 0:
            row += f"   {cells[0] / cells[1]:.2f}x"
        print(row)
    for name, result in results.items():
        print(f"{name}: values {result['values']}, load {result['load'][0]:.1f} -> {result['load'][1]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
