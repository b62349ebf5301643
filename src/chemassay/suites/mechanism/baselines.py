"""Built-in mechanism predictors that need no language model, so the suite runs end to end
offline. Both are registered model kinds (``MODEL_KINDS``, which also lists the learned
model of :mod:`.learned`, ``mechanism-seq2seq:DIR``) implementing the
``mechanism-predictor`` protocol, usable wherever a ``--model SPEC`` / ``model=`` is taken:

``gold-oracle[:gold=NAME|PATH]``
    Predicts the gold mechanism itself (labels and intermediates). It must score 1.0 on
    every metric of every reaction: a check of the scorer and of the data. The gold
    reactions are the ones being evaluated (``gold=`` overrides; a reaction it does not
    know gets an empty mechanism).

``nearest-neighbour[:pool=NAME|PATH,allow_same_family=false]``
    Reasoning by analogy only: for each query, the most DRFP-similar reaction of a pool
    (oMe-Template by default, never the query's own family; with ``allow_same_family`` the
    paper's App. G rule: only the identical reaction is left out) lends its sequence of step
    labels; every predicted intermediate is the query's own first product. It measures how
    far "this looks like that named reaction" goes without any chemistry of the
    intermediates.

This module is imported when the model registry lists kinds, so it imports nothing heavy;
DRFP and RDKit are loaded when a nearest-neighbour model is built.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from chemassay.models.registry import ModelKind
from chemassay.models.spec import check_options
from chemassay.runtime.files import sha256_file
from chemassay.suites.mechanism.data import reactions_path
from chemassay.suites.mechanism.learned import MODEL_KIND as LEARNED_KIND
from chemassay.suites.mechanism.records import Reaction, load_reactions
from chemassay.suites.mechanism.retrieval import DRFP_BITS, ReactionIndex

BASELINES = ("nearest-neighbour", "gold-oracle")

MODEL_KINDS: tuple[ModelKind, ...] = (
    ModelKind(
        name="gold-oracle", protocols=("mechanism-predictor",),
        factory="chemassay.suites.mechanism.baselines:create_gold_oracle",
        description="repeats the gold mechanism of each reaction (scores 1.0: a check of the scorer and the data)",
        options={"gold": "gold reactions to repeat: a dataset name (gold, template) or a file (default: the gold "
                         "being evaluated)"},
        suite="mechanism", example="gold-oracle",
    ),
    ModelKind(
        name="nearest-neighbour", protocols=("mechanism-predictor",),
        factory="chemassay.suites.mechanism.baselines:create_nearest_neighbour",
        description=("borrows the step labels of the most DRFP-similar pool reaction of another family; every "
                     "intermediate is the query's product (the analogy-only floor)"),
        options={"pool": "reactions to borrow from: template (default), gold or a file",
                 "allow_same_family": "the paper's App. G rule: only the identical reaction (same id or same "
                                      "canonical reaction) is left out, not the query's family (leaky; default false)"},
        extra="drfp", suite="mechanism", example="nearest-neighbour:pool=template",
    ),
    LEARNED_KIND,
)


def _steps_of(reaction: Reaction, intermediate: str | None = None) -> list[dict[str, Any]]:
    return [
        {
            "step": index,
            "type": step.type,
            "subtype": step.subtype,
            "intermediate_smiles": step.intermediate_smiles if intermediate is None else intermediate,
        }
        for index, step in enumerate(reaction.steps, start=1)
    ]


def gold_oracle(reactions: Sequence[Reaction]) -> list[dict[str, Any]]:
    """Prediction rows that repeat each reaction's gold mechanism."""
    return [
        {"reaction_id": reaction.reaction_id, "mechanism": _steps_of(reaction), "model": "gold-oracle"}
        for reaction in reactions
    ]


def nearest_neighbour(reactions: Sequence[Reaction], index, *, exclude_family: bool = True) -> list[dict[str, Any]]:
    """Prediction rows of the nearest-neighbour baseline (see the module docstring).

    ``index`` is a :class:`~chemassay.suites.mechanism.retrieval.ReactionIndex` of the pool.
    A query whose pool has no admissible neighbour gets an empty mechanism. The neighbour's
    id and DRFP similarity are recorded in each row.
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
                "mechanism": _steps_of(analogue, intermediate=product),
                "model": "nearest-neighbour",
                "neighbour": {"reaction_id": analogue.reaction_id, "drfp_tanimoto": found[0].similarity},
            }
        )
    return rows


def _molecules(record: Mapping[str, Any], listed: str, joined: str) -> tuple[str, ...]:
    value = record.get(listed)
    if isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value):
        return tuple(value)
    value = record.get(joined, "")
    if isinstance(value, (list, tuple)):
        return tuple(str(item) for item in value)
    return tuple(part for part in str(value or "").split(".") if part)


def record_to_reaction(record: Mapping[str, Any]) -> Reaction:
    """The :class:`Reaction` (without mechanism) of a mechanism-predictor record.

    Molecules come from ``reactants_smiles`` / ``products_smiles`` (lists, as the suite
    sends them) or else from ``reactants`` / ``products`` (dot-joined SMILES).
    """
    return Reaction(
        reaction_id=str(record.get("reaction_id", "")),
        level=record.get("level") if isinstance(record.get("level"), str) else None,
        name=None,
        reactants=_molecules(record, "reactants_smiles", "reactants"),
        products=_molecules(record, "products_smiles", "products"),
        conditions=str(record.get("conditions") or ""),
        steps=(),
    )


class GoldOracle:
    """mechanism-predictor repeating the gold mechanisms of a set of reactions."""

    name = "gold-oracle"

    def __init__(self, reactions: Sequence[Reaction], *, source: str = "", checksum: str | None = None) -> None:
        self.table = {reaction.reaction_id: reaction for reaction in reactions}
        self.source = source
        self.source_sha256 = checksum
        self.details: list[dict[str, Any]] = []

    def describe(self) -> dict[str, Any]:
        return {"gold": self.source, "gold_sha256": self.source_sha256}

    def predict_mechanisms(self, reactions: Sequence[Mapping[str, Any]]) -> list[list[dict[str, Any]]]:
        """The gold step list of each record's ``reaction_id`` (empty when unknown)."""
        out = []
        for record in reactions:
            known = self.table.get(str(record.get("reaction_id")))
            out.append(_steps_of(known) if known is not None else [])
        self.details = [{} for _ in out]
        return out


_POOL_INDEXES: dict[str, object] = {}
"""The DRFP index of the last pool file (by sha256), reused by later models in the process."""


class NearestNeighbour:
    """mechanism-predictor of the nearest-neighbour baseline (see the module docstring)."""

    name = "nearest-neighbour"

    def __init__(self, pool: Sequence[Reaction], *, allow_same_family: bool = False, source: str = "template",
                 checksum: str | None = None) -> None:
        self.index = _POOL_INDEXES.get(checksum) if checksum else None
        if self.index is None:
            self.index = ReactionIndex(pool)
            if checksum:
                _POOL_INDEXES.clear()  # one pool kept: the DRFP of the last pool file used
                _POOL_INDEXES[checksum] = self.index
        self.allow_same_family = allow_same_family
        self.source = source
        self.source_sha256 = checksum
        self.drfp_bits = DRFP_BITS
        self.details: list[dict[str, Any]] = []
        """Per record of the last call: the neighbour borrowed from (id, DRFP Tanimoto)."""

    @property
    def domain_pool(self) -> list[Reaction]:
        """The reactions it borrows from: in-domain means a family among them (Table 16)."""
        return list(self.index.pool)

    @property
    def domain_pool_name(self) -> str:
        return f"nearest-neighbour pool {self.source}"

    def describe(self) -> dict[str, Any]:
        return {"pool": self.source, "pool_sha256": self.source_sha256, "pool_size": len(self.index),
                "allow_same_family": self.allow_same_family, "drfp_bits": self.drfp_bits}

    def predict_mechanisms(self, reactions: Sequence[Mapping[str, Any]]) -> list[list[dict[str, Any]]]:
        """The borrowed step list of each record (empty when no pool reaction is admissible)."""
        queries = [record_to_reaction(record) for record in reactions]
        rows = nearest_neighbour(queries, self.index, exclude_family=not self.allow_same_family)
        self.details = [{"neighbour": row["neighbour"]} for row in rows]
        return [row["mechanism"] for row in rows]


def _reaction_source(source: Any) -> tuple[list[Reaction], str, str | None]:
    """Reactions from a dataset name, a path or a list of :class:`Reaction`, with a label
    and the file's sha256."""
    if isinstance(source, (list, tuple)):
        return list(source), "in-memory reactions", None

    path = reactions_path(source)
    return load_reactions(path).reactions, str(source), sha256_file(path)


def create_gold_oracle(spec, protocol: str, context: dict[str, Any]) -> GoldOracle:
    """Factory of the ``gold-oracle`` kind (context ``gold``: what is being evaluated)."""
    check_options(spec, {"gold"})
    source = spec.options.get("gold") or context.get("gold") or "gold"
    reactions, label, checksum = _reaction_source(source)
    return GoldOracle(reactions, source=label, checksum=checksum)


def create_nearest_neighbour(spec, protocol: str, context: dict[str, Any]) -> NearestNeighbour:
    """Factory of the ``nearest-neighbour`` kind."""
    from chemassay.models.spec import check_options, option_bool

    check_options(spec, {"pool", "allow_same_family"})
    reactions, label, checksum = _reaction_source(spec.options.get("pool") or "template")
    return NearestNeighbour(reactions, allow_same_family=option_bool(spec, "allow_same_family", False),
                            source=label, checksum=checksum)
