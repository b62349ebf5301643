"""Augmentation throughput and identity on every shipped molecule (ChEBI-20 + QM9 isomers).

For each augmentation: seconds for the whole set (including the identity check: canonical
SMILES and InChIKey of input and output), and the counts of ok / not applicable / failed
rows. This also exercises what the slow test ``test_every_augmentation_is_identity_on_all_chebi20``
covers. Run: ``PYTHONPATH=src python benchmarks/robustness_augment.py [--jobs 2]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    from chemassay.runtime.progress import settings
    from chemassay.suites.robustness.augment import AUGMENTATIONS, augment_many
    from chemassay.suites.robustness.data import load_amore

    settings.quiet = True
    failed_total = 0
    print("| dataset | augmentation | seconds | ok | not applicable | failed |")
    print("| --- | --- | --- | --- | --- | --- |")
    for dataset in ("isomers", "chebi20"):
        smiles = load_amore(dataset).smiles
        for kind in AUGMENTATIONS:
            started = time.perf_counter()
            rows = augment_many(smiles, kind, seed=0, n_jobs=args.jobs)
            elapsed = time.perf_counter() - started
            counts = [sum(r.status == s for r in rows) for s in ("ok", "not_applicable", "failed")]
            failed_total += counts[2]
            print(f"| {dataset} | {kind} | {elapsed:.1f} | {counts[0]} | {counts[1]} | {counts[2]} |")
    print(f"failed rows in total: {failed_total} (must be 0)")
    return 1 if failed_total else 0


if __name__ == "__main__":
    raise SystemExit(main())
