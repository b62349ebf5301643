"""Built-in baselines that need no language model, so the suite runs end to end offline.

``gold-oracle``
    Predicts the gold mechanism itself (labels and intermediates). It must score 1.0 on
    every metric of every reaction: a check of the scorer and of the data.

``nearest-neighbour``
    Reasoning by analogy only: for each query, the most DRFP-similar reaction of a pool
    (oMe-Template by default, never the query's own family) lends its sequence of step
    labels; every predicted intermediate is the query's own first product. It measures how
    far "this looks like that named reaction" goes without any chemistry of the
    intermediates.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chemassay.suites.mechanism.records import Reaction
from chemassay.suites.mechanism.retrieval import ReactionIndex

BASELINES = ("nearest-neighbour", "gold-oracle")


def gold_oracle(reactions: Sequence[Reaction]) -> list[dict[str, Any]]:
    """Prediction rows that repeat each reaction's gold mechanism."""
    return [
        {
            "reaction_id": reaction.reaction_id,
            "mechanism": [
                {
                    "step": index,
                    "type": step.type,
                    "subtype": step.subtype,
                    "intermediate_smiles": step.intermediate_smiles,
                }
                for index, step in enumerate(reaction.steps, start=1)
            ],
            "model": "gold-oracle",
        }
        for reaction in reactions
    ]


def nearest_neighbour(
    reactions: Sequence[Reaction], index: ReactionIndex, *, exclude_family: bool = True
) -> list[dict[str, Any]]:
    """Prediction rows of the nearest-neighbour baseline (see the module docstring).

    A query whose pool has no admissible neighbour gets an empty mechanism. The
    neighbour's id and DRFP similarity are recorded in each row.
    """
    neighbours = index.nearest(reactions, 1, exclude_family=exclude_family)
    rows = []
    for reaction, found in zip(reactions, neighbours, strict=True):
        product = reaction.products[0] if reaction.products else ""
        if not found:
            rows.append({"reaction_id": reaction.reaction_id, "mechanism": [], "model": "nearest-neighbour",
                         "neighbour": None})
            continue
        analogue = index.pool[found[0].index]
        rows.append(
            {
                "reaction_id": reaction.reaction_id,
                "mechanism": [
                    {"step": number, "type": step.type, "subtype": step.subtype, "intermediate_smiles": product}
                    for number, step in enumerate(analogue.steps, start=1)
                ],
                "model": "nearest-neighbour",
                "neighbour": {"reaction_id": analogue.reaction_id, "drfp_tanimoto": found[0].similarity},
            }
        )
    return rows
