"""Reaction similarity by DRFP (differential reaction fingerprint) and nearest neighbours.

DRFP (Probst et al., 2022) folds the symmetric difference of the circular substructures of
reactants and products into a bit vector; its Tanimoto similarity is a good measure of
"same kind of transformation". It picks the in-context exemplars of k-shot prompting and
the analogue of the nearest-neighbour baseline.

Two exclusion rules (:meth:`ReactionIndex.nearest`):

* chemassay's default (``exclude_family=True``): a query never retrieves a pool reaction of
  its own *family* (the same named reaction, :class:`FamilyIndex`) nor one with its
  canonical reactants and products;
* the paper's protocol (App. G, ``exclude_family=False``, ``--allow-same-family``): only the
  *identical* reaction is left out — a pool reaction with the query's reaction id or its
  canonical reactants and products. Other reactions of the query's family stay in the pool,
  which is what the paper's exemplars from oMe-Silver allow (leaky: they share the query's
  mechanism).

The family relation also defines the paper's in-domain / out-of-domain split (Table 16): a
reaction is in-domain for a pool (the training set, or the exemplar pool) when the pool
holds a reaction of its family.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from chemassay.chem.fingerprints import pack_bits
from chemassay.chem.molecules import rdkit_log_silenced, try_canonical
from chemassay.chem.similarity import tanimoto_matrix
from chemassay.contract.errors import require
from chemassay.suites.mechanism.records import Reaction
from chemassay.suites.mechanism.taxonomy import SUBTYPE_TO_TYPE

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
    if not reaction.steps:
        return False
    for step in reaction.steps:
        if step.subtype not in SUBTYPE_TO_TYPE or SUBTYPE_TO_TYPE[step.subtype] != step.type:
            return False
    smiles = [*reaction.reactants, *reaction.products, *(step.intermediate_smiles for step in reaction.steps)]
    return all(try_canonical(item) is not None for item in smiles)


def reaction_family(reaction_id: str) -> str:
    """The family part of a reaction id: the part before an expansion suffix (``_`` or ``#``),
    so ``NR-001`` (oMe-Gold), ``NR-001`` (oMe-Template) and ``NR-001_1-C_2-CC`` (expanded)
    share ``NR-001``."""
    return reaction_id.split("#", 1)[0].split("_", 1)[0]


def normalized_name(name: str | None) -> str:
    """A reaction name compared across files: accents dropped, lower case, every run of
    characters other than letters and digits one space (``Tiffeneau–Demjanov rearrangement``
    and ``Tiffeneau-Demjanov Rearrangement`` agree)."""
    if not isinstance(name, str):
        return ""
    text = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii").lower()
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text).split())


NAME_SIMILARITY = 0.75
"""Two names under one reaction id are one family from this ``difflib`` ratio on (the data
spell ``Seyferth-Gilbert`` / ``Seyfert-Gilbert``, ``Takai-Utimoto`` / ``Takai``)."""


def _labels(reaction: Reaction) -> tuple:
    return tuple(step.subtype for step in reaction.steps)


def same_family(first: Reaction, second: Reaction) -> bool:
    """Whether two reactions are of one family (one named reaction).

    They are when their normalized names are equal and not empty, or when their ids share
    the family part (:func:`reaction_family`) and, in addition, their names are similar
    (ratio ≥ :data:`NAME_SIMILARITY`), one of them has no name, or their step-label
    sequences are the same. The extra condition is needed because the shipped files reuse
    ids: oMe-Gold ``NR-231`` is the Semmler-Wolff reaction, oMe-Template ``NR-231`` the
    Seyferth-Gilbert homologation (different families), while oMe-Template ``NR-217``
    ("Acidic elimination") is the acidic Peterson olefination of oMe-Gold ``NR-217`` with
    the same two steps (one family); names alone miss swapped ids (oMe-Gold ``NR-335`` is
    oMe-Template ``NR-336``, Robinson-Gabriel synthesis), which the name rule catches.
    """
    name_a, name_b = normalized_name(first.name), normalized_name(second.name)
    if name_a and name_a == name_b:
        return True
    if reaction_family(first.reaction_id) != reaction_family(second.reaction_id):
        return False
    if not name_a or not name_b:
        return True

    if difflib.SequenceMatcher(None, name_a, name_b).ratio() >= NAME_SIMILARITY:
        return True
    return bool(first.steps) and _labels(first) == _labels(second)


class FamilyIndex:
    """The families of a pool of reactions, for "which pool reactions share this query's
    family" (:func:`same_family`) without comparing the query with every pool reaction."""

    def __init__(self, pool: Sequence[Reaction]) -> None:
        self.pool = list(pool)
        self._by_name: dict[str, list[int]] = {}
        self._by_id: dict[str, list[int]] = {}
        for index, reaction in enumerate(self.pool):
            name = normalized_name(reaction.name)
            if name:
                self._by_name.setdefault(name, []).append(index)
            self._by_id.setdefault(reaction_family(reaction.reaction_id), []).append(index)

    def members(self, query: Reaction) -> set[int]:
        """Positions of the pool reactions of ``query``'s family."""
        found = set(self._by_name.get(normalized_name(query.name), ())) if normalized_name(query.name) else set()
        for index in self._by_id.get(reaction_family(query.reaction_id), ()):
            if index not in found and same_family(query, self.pool[index]):
                found.add(index)
        return found

    def seen(self, query: Reaction) -> bool:
        """Whether the pool holds a reaction of ``query``'s family (in-domain, Table 16)."""
        return bool(self.members(query))


def _canonical_side(smiles_items: Sequence[str]) -> str:
    return ".".join(sorted(try_canonical(s) or s for s in smiles_items))


def reaction_key(reaction: Reaction) -> str:
    """Canonical ``reactants>>products`` (molecules sorted) used to spot the same reaction."""
    with rdkit_log_silenced():
        return _canonical_side(reaction.reactants) + ">>" + _canonical_side(reaction.products)


def drfp_fingerprints(reactions: Sequence[Reaction], *, n_bits: int = DRFP_BITS) -> np.ndarray:
    """Packed DRFP fingerprints (radius 3, folded to ``n_bits``) of ``reactions``."""
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
        self.families = FamilyIndex(self.pool)
        self._keys = [reaction_key(r) for r in self.pool]
        self._ids = [r.reaction_id for r in self.pool]

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

        Ties keep pool order. Excluded: pool reactions with the query's canonical reaction
        or its reaction id (the identical reaction: the paper's rule, App. G) and, when
        ``exclude_family`` (chemassay's default), every pool reaction of the query's family.
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
            key = reaction_key(query)
            for index in range(len(self.pool)):
                if self._keys[index] == key or self._ids[index] == query.reaction_id:
                    scores[index] = -1.0
            if exclude_family:
                for index in self.families.members(query):
                    scores[index] = -1.0
            order = np.argsort(-scores, kind="stable")[:k]
            out.append([Neighbour(int(i), float(scores[i])) for i in order if scores[i] >= 0.0])
        return out
