"""Rebuild the reference statistics shipped next to this file (run from the repository root):

    PYTHONPATH=src python tests/data/generation/make_reference_stats.py

They are chemassay's own statistics (``compute_stats``) of ``moses_test_300.txt`` and
``moses_test_scaffolds_300.txt``; the tests load them instead of recomputing.
"""

from pathlib import Path

from chemassay.data.readers import read_smiles_file
from chemassay.runtime.files import sha256_file
from chemassay.suites.generation.reference import compute_stats, save_stats

HERE = Path(__file__).resolve().parent

for stem in ("moses_test_300", "moses_test_scaffolds_300"):
    source = HERE / f"{stem}.txt"
    stats = compute_stats(read_smiles_file(source).smiles, name=stem, sha256=sha256_file(source))
    save_stats(stats, HERE / f"{stem}.stats.npz")
    print(stem, stats.n_molecules, len(stats.fragments), len(stats.scaffolds))
