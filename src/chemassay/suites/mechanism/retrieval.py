"""Reaction similarity by DRFP (differential reaction fingerprint) and nearest neighbours.

DRFP (Probst et al., 2022) folds the symmetric difference of the circular substructures of
reactants and products into a bit vector; its Tanimoto similarity is a good measure of
"same kind of transformation". It picks the in-context exemplars of k-shot prompting and
the analogue of the nearest-neighbour baseline.

A query never retrieves itself: pool reactions of the same *family* (same reaction id up
to the expansion suffix, so ``NR-001`` in oMe-Gold, oMe-Template and ``NR-001_1-C_2-CC``
in an expanded set are one family) and pool reactions with the same canonical reactants
and products are excluded, unless ``exclude_family=False``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from chemassay.chem.fingerprints import pack_bits
from chemassay.chem.molecules import rdkit_log_silenced, try_canonical
from chemassay.chem.similarity import tanimoto_matrix
from chemassay.suites.mechanism.records import Reaction

DRFP_BITS = 2048


def usable_exemplars(reactions: Sequence[Reaction]) -> list[Reaction]:
    """Reactions fit to be shown as worked examples: every step labelled with a taxonomy
    pair and every SMILES (placeholders ``[*:i]`` allowed) parsable by RDKit.

    oMe-Template has steps with labels outside the taxonomy and SMILES that do not parse;
    showing those to a model would teach it the errors.
    """
    with rdkit_log_silenced():
        return [reaction for reaction in reactions if _usable(reaction)]


def _usable(reaction: Reaction) -> bool:
    from chemassay.suites.mechanism.taxonomy import SUBTYPE_TO_TYPE

    if not reaction.steps:
        return False
    for step in reaction.steps:
        if step.subtype not in SUBTYPE_TO_TYPE or SUBTYPE_TO_TYPE[step.subtype] != step.type:
            return False
    smiles = [*reaction.reactants, *reaction.products, *(step.intermediate_smiles for step in reaction.steps)]
    return all(try_canonical(item) is not None for item in smiles)


def reaction_family(reaction_id: str) -> str:
    """The family of a reaction id: the part before an expansion suffix (``_`` or ``#``)."""
    return reaction_id.split("#", 1)[0].split("_", 1)[0]


def _canonical_side(smiles_items: Sequence[str]) -> str:
    return ".".join(sorted(try_canonical(s) or s for s in smiles_items))


def reaction_key(reaction: Reaction) -> str:
    """Canonical ``reactants>>products`` (molecules sorted) used to spot the same reaction."""
    with rdkit_log_silenced():
        return _canonical_side(reaction.reactants) + ">>" + _canonical_side(reaction.products)


def drfp_fingerprints(reactions: Sequence[Reaction], *, n_bits: int = DRFP_BITS) -> np.ndarray:
    """Packed DRFP fingerprints (radius 3, folded to ``n_bits``) of ``reactions``."""
    from chemassay.errors import require

    # Imported late: it is slow to import, and it is an extra (see pyproject.toml's `drfp`).
    DrfpEncoder = require("drfp", "drfp", "DRFP reaction fingerprints").DrfpEncoder

    if not reactions:
        return np.zeros((0, n_bits // 64), dtype=np.uint64)
    smiles = [r.reaction_smiles for r in reactions]
    with rdkit_log_silenced():
        try:
            dense = DrfpEncoder.encode(smiles, n_folded_length=n_bits)
        except Exception:  # one reaction DRFP cannot encode must not sink the others
            dense = []
            for item in smiles:
                try:
                    dense.extend(DrfpEncoder.encode([item], n_folded_length=n_bits))
                except Exception:
                    dense.append(np.zeros(n_bits, dtype=np.uint8))  # similar to nothing
    return pack_bits(np.asarray(dense, dtype=np.uint8))


@dataclass(frozen=True)
class Neighbour:
    """A retrieved pool reaction: its position in the pool and DRFP Tanimoto to the query."""

    index: int
    similarity: float


class ReactionIndex:
    """DRFP fingerprints of a pool of reactions, queried for the most similar ones."""

    def __init__(self, pool: Sequence[Reaction], *, n_bits: int = DRFP_BITS) -> None:
        self.pool = list(pool)
        self.n_bits = n_bits
        self.fingerprints = drfp_fingerprints(self.pool, n_bits=n_bits)
        self._families = [reaction_family(r.reaction_id) for r in self.pool]
        self._keys = [reaction_key(r) for r in self.pool]

    def __len__(self) -> int:
        return len(self.pool)

    def nearest(
        self,
        queries: Sequence[Reaction],
        k: int = 1,
        *,
        exclude_family: bool = True,
        query_fingerprints: np.ndarray | None = None,
    ) -> list[list[Neighbour]]:
        """The ``k`` most DRFP-similar pool reactions of each query, best first.

        Ties keep pool order. Excluded: the query's own family (see the module docstring)
        and pool entries with the query's canonical reaction, unless ``exclude_family`` is
        false (then only the identical reaction is excluded).
        """
        if not queries:
            return []
        fps = query_fingerprints if query_fingerprints is not None else drfp_fingerprints(queries, n_bits=self.n_bits)
        # Exact counts on every backend; numpy's popcount spares importing torch (seconds)
        # for pools of a few hundred or thousand reactions.
        similarity = (tanimoto_matrix(fps, self.fingerprints, backend="numpy-popcount") if len(self.pool)
                      else np.zeros((len(queries), 0)))
        out = []
        for row, query in enumerate(queries):
            scores = similarity[row].copy()
            family = reaction_family(query.reaction_id)
            key = reaction_key(query)
            for index in range(len(self.pool)):
                if self._keys[index] == key or (exclude_family and self._families[index] == family):
                    scores[index] = -1.0
            order = np.argsort(-scores, kind="stable")[:k]
            out.append([Neighbour(int(i), float(scores[i])) for i in order if scores[i] >= 0.0])
        return out
