"""The mechanism suite's test set for a leakage audit: oMe-Gold.

The 196 expert reactions of oMe-Gold (the assay's one task, Table 3), read with the suite's own
loader (:func:`chemassay.suites.mechanism.data.load_omebench`, raw records), each as the reaction
SMILES ``reactants>>products`` of its record; ids are the records' ``reaction_id``. A model is
asked for the mechanism, not the products, so the products-alone key does not count as leakage.
"""

from __future__ import annotations

from chemassay.leaks import REACTION, TestSet
from chemassay.suites.mechanism.data import load_omebench

QUICK_ITEMS = 30


def leakage_sets(*, quick: bool = False, n_jobs: int = 1) -> list:
    """oMe-Gold as one :class:`chemassay.leaks.TestSet`."""
    records = gold_records()
    if quick:
        records = records[:QUICK_ITEMS]
    return [TestSet(suite="mechanism", task="ome-gold-one-shot", kind=REACTION,
                    ids=[str(r["reaction_id"]) for r in records], items=[record_reaction(r) for r in records],
                    dataset="omebench:gold")]


def record_reaction(record: dict) -> str:
    """``reactants>>products`` of an oMeBench record (its SMILES fields are text or lists)."""
    def side(value) -> str:
        return ".".join(str(v) for v in value) if isinstance(value, (list, tuple)) else str(value)

    return f"{side(record['reactants_smiles'])}>>{side(record['products_smiles'])}"


def gold_records() -> list[dict]:
    return load_omebench(part="gold", records=True)


def template_reactions() -> list[str]:
    """The oMe-Template records' reactions (placeholders as written), for auditing oMe-Gold
    against the data the template-expansion model is built from."""
    return [record_reaction(r) for r in load_omebench(part="template", records=True)]
