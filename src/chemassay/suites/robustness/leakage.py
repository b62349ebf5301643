"""The robustness suite's test sets for a leakage audit: AMORE's two molecule sets and the
solubility test set.

ChEBI-20's test molecules (3,300; AMORE Tables 1 and 3) and the QM9 isomers (918, C7H10O2;
Table 2), loaded with the suite's registered loaders, ids as the results name them; and the
downstream task's solubility test molecules (ids their file lines). An encoder trained on a
molecule's SMILES has seen the string whose rewrites the suite asks about. ChEBI-20's training
split is not shipped here, so the suite's own data is audited only where it has a training
split: the solubility set's 1,025 training molecules against its test molecules
(:func:`solubility_training`).
"""

from __future__ import annotations

from chemassay.contract.assay import AssayContext
from chemassay.data.registry import load_dataset
from chemassay.leaks import MOLECULE, TestSet
from chemassay.suites.robustness.api import _property_file
from chemassay.suites.robustness.assay import AMORE_SETS, QUICK_ITEMS, list_test_molecules
from chemassay.suites.robustness.downstream import read_property_csv


def leakage_sets(*, quick: bool = False, n_jobs: int = 1) -> list:
    """The AMORE sets and the solubility test set as :class:`chemassay.leaks.TestSet` objects
    (``quick``: the first 50 of each)."""
    sets = []
    for name, (dataset, title, _size) in AMORE_SETS.items():
        table = load_dataset(dataset)
        ids = [str(i) for i in table.ids]
        smiles = list(table.smiles)
        if quick:
            ids, smiles = ids[:QUICK_ITEMS], smiles[:QUICK_ITEMS]
        sets.append(TestSet(suite="robustness", task=f"amore-{name}", kind=MOLECULE, ids=ids, items=smiles,
                            dataset=dataset, note=title))
    listing = list_test_molecules(AssayContext(spec="", out_dir=".", quick=quick, n_jobs=n_jobs))
    sets.append(TestSet(suite="robustness", task="downstream-solubility", kind=MOLECULE, ids=listing.ids,
                        items=list(listing.items), dataset="solubility-huuskonen", note="downstream test set"))
    return sets


def solubility_training() -> list[str]:
    """The solubility set's training molecules (the downstream task's training split)."""
    path, _dataset = _property_file("solubility-huuskonen")
    return list(read_property_csv(path, targets=["logS"], seed=0).train_smiles)
