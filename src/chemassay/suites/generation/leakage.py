"""The generation suite's test sets for a leakage audit: MOSES test and scaffold test.

The two reference sets of the MOSES metrics (FCD, SNN, Frag and Scaf are computed against
them): ``test`` (176,074 molecules) and ``test_scaffolds`` (176,225 molecules whose Bemis-Murcko
scaffolds do not occur in MOSES's training split), read with the suite's own loader
(:func:`chemassay.suites.generation.data.load_moses`). An item's id is its 0-based row in the
split file. Both ask for shared scaffolds: a generator trained on molecules with the
scaffold-test scaffolds has seen what Scaf/TestSF measures novelty against.
"""

from __future__ import annotations

from chemassay.leaks import MOLECULE, TestSet
from chemassay.suites.generation.data import load_moses

QUICK_ITEMS = 2000
"""Molecules of each split with ``quick`` (the first rows)."""


def leakage_sets(*, quick: bool = False, n_jobs: int = 1) -> list:
    """MOSES ``test`` and ``test_scaffolds`` as :class:`chemassay.leaks.TestSet` objects."""
    sets = []
    for part in ("test", "test_scaffolds"):
        smiles = load_moses(part=part, limit=QUICK_ITEMS if quick else None)
        sets.append(TestSet(suite="generation", task=f"moses-{part.replace('_', '-')}", kind=MOLECULE,
                            ids=[str(i) for i in range(len(smiles))], items=smiles, scaffolds=True,
                            dataset=f"moses:{part}"))
    return sets
