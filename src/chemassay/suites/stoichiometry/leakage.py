"""The stoichiometry suite's test sets for a leakage audit: ChemAlgebra's headline test files.

The test files of the assay's headline variants, built by the suite's own preparation (cached,
see :mod:`chemassay.suites.stoichiometry.assay`): for each SMILES variant (``smiles_t1_x1``,
``smiles_t2_x1``) its ``test_in``, ``test_cross`` and ``test_out`` files, and Table 2's four
USPTO-15K test sets (``uspto``, ``uspto-bal``, ``uspto-t1``, ``uspto-t2``). A line pair
(``src``/``tgt``, bags such as ``{2}CCO.{1}O=O``) is audited as the reaction SMILES
``reactants>>products`` with the coefficients dropped (:func:`bag_reaction`), so the same
reaction written with other coefficients is an exact duplicate; ids are the files' 1-based line
numbers, as the assay's results name them. The formula variants (``formula_*``) hold the same
USPTO-15K reactions as the SMILES ones, written as molecular formulas that have no structure to
key or fingerprint, so they are left out (their leakage is that of the SMILES variant with the
same T1/T2 setting).
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from chemassay.contract.assay import AssayContext
from chemassay.data.readers import iter_lines
from chemassay.leaks import REACTION, TestSet
from chemassay.suites.stoichiometry.assay import QUICK_ITEMS, SPLITS, TABLE2_SETS, prepared_folder

AUDITED_VARIANTS = ("smiles_t1_x1", "smiles_t2_x1")
_COEFFICIENT = re.compile(r"^\{\d+\}")


def bag_reaction(source: str, target: str) -> str:
    """``{2}A.{1}B`` and ``{1}C`` → ``A.B>>C`` (coefficients dropped)."""
    def molecules(bag: str) -> str:
        return ".".join(_COEFFICIENT.sub("", part) for part in bag.strip().split(".") if part)

    return f"{molecules(source)}>>{molecules(target)}"


def folder_reactions(folder: Path, split: str) -> list[str]:
    """The reactions of ``src-SPLIT.txt``/``tgt-SPLIT.txt`` in ``folder`` (a built variant)."""
    sources = [line for _, line in iter_lines(folder / f"src-{split}.txt")]
    targets = [line for _, line in iter_lines(folder / f"tgt-{split}.txt")]
    return [bag_reaction(s, t) for s, t in zip(sources, targets, strict=True)]


def leakage_sets(*, quick: bool = False, n_jobs: int = 1, out_dir: str | Path | None = None) -> list:
    """The ChemAlgebra test files as :class:`chemassay.leaks.TestSet` objects (``quick``:
    Table 2's sets from the assay's quick data, first 40 lines; the quick data has no SMILES
    variant)."""
    root = Path(out_dir) if out_dir is not None else Path(tempfile.mkdtemp(prefix="chemassay-leakage-stoich-"))
    ctx = AssayContext(spec="", out_dir=root, quick=quick, n_jobs=n_jobs)
    variants = () if quick else AUDITED_VARIANTS  # the quick data builds a formula variant only
    sets = []

    def add(task: str, folder: Path, split: str, note: str) -> None:
        reactions = folder_reactions(folder, split)
        if quick:
            reactions = reactions[:QUICK_ITEMS]
        sets.append(TestSet(suite="stoichiometry", task=task, kind=REACTION,
                            ids=[str(n) for n in range(1, len(reactions) + 1)], items=reactions, products=True,
                            dataset="uspto-15k", note=note))

    for variant in variants:
        folder = prepared_folder(variant, ctx)
        for split in SPLITS:
            add(f"{variant}-{split}", folder, split, "bags as reactions, coefficients dropped")
    for name in TABLE2_SETS:
        add(f"table2-{name}", prepared_folder(name, ctx), "test", "ChemAlgebra Table 2 test set")
    return sets


def training_reactions(variant: str, split: str = "train", *, out_dir: str | Path | None = None,
                       n_jobs: int = 1) -> list[str]:
    """A built variant's training pairs (``train``, or ``train_cross`` for ``test_cross``) as
    reactions, for auditing the suite's own data."""
    from chemassay.suites.stoichiometry.assay import prepared_folder

    root = Path(out_dir) if out_dir is not None else Path(tempfile.mkdtemp(prefix="chemassay-leakage-stoich-"))
    return folder_reactions(prepared_folder(variant, AssayContext(spec="", out_dir=root, n_jobs=n_jobs)), split)
