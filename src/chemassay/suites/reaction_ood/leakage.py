"""reaction-ood's test sets for a leakage audit: every test part of the assay's splits.

The eight tasks of ``chemassay assay`` (random, document, time, Suzuki and chloro-Suzuki
splits of the cleaned Schneider 50k set, made with the shipped definitions by the suite's own
preparation, :mod:`chemassay.suites.reaction_ood.assay`), each with *all* the reactions of its
test part (the assay scores a seeded sample of at most 1,000 of them; its ids are a subset of
these). Ids are the cleaned set's ``source_row``, as the results name them. A reaction
predictor is asked for products, so the products-alone key counts too.
"""

from __future__ import annotations

from chemassay.leaks import REACTION, TestSet
from chemassay.suites.reaction_ood.assay import SPLITS, _ids, test_part


def leakage_sets(*, quick: bool = False, n_jobs: int = 1) -> list:
    """The test parts as :class:`chemassay.leaks.TestSet` objects (``quick``: the assay's
    quick splits of a sample of whole patents)."""
    sets = []
    for plan in SPLITS:
        for part in plan.parts:
            frame = test_part(plan, part.part, quick, n_jobs)
            sets.append(TestSet(suite="reaction-ood", task=f"{plan.key}-{part.part}", kind=REACTION, ids=_ids(frame),
                                items=frame["rxn_smiles"].astype(str).tolist(), products=True,
                                dataset="schneider-50k", note=part.title))
    return sets


def training_parts(quick: bool = False, n_jobs: int = 1) -> dict[str, list[str]]:
    """Each split's training part as reaction SMILES (``split key`` → reactions), for auditing
    the suite's own splits."""
    from chemassay.suites.reaction_ood.assay import SPLITS, split_parts

    return {plan.key: split_parts(plan, quick, n_jobs)[plan.train_part]["rxn_smiles"].astype(str).tolist()
            for plan in SPLITS}
