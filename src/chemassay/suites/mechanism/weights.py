"""Step weights: the ``step_weight`` of the data, the paper's Table 6 formula, or the fitted scheme.

oMe-Gold ships a weight for every step (the weights of a reaction sum to 1); oMe-Template,
expanded reactions and user files usually do not. Three ways to weight steps
(:data:`WEIGHT_MODES`, the ``--weights`` option of ``evaluate``):

``data`` (default)
    the data's ``step_weight`` when every step of a reaction has a usable one, else the
    fitted scheme (the better of the two formulas at reproducing the shipped weights);
``paper``
    the paper's formula (App. C, Table 6) for every reaction, ignoring the data's weights::

        raw_i = clip(W_type(i) × M_subtype(i) × P_position(i) + B_special(i), 0.5, 6.0)
        w_i   = raw_i / Σ_j raw_j

    with the published constants: base weight by type (pericyclic 4.0, rearrangement 3.5,
    radical 3.0, electron transfer 3.0, substitution 2.5, cleavage 2.5, addition 2.0,
    elimination 2.0, coordination 1.5, proton transfer 1.0, dissociation 1.0), subtype
    multipliers (sigmatropic 1.3, cheletropic 1.3, cycloaddition 1.2, ene 1.2, homolytic
    cleavage 1.2, electrophilic substitution 1.2, nucleophilic substitution 1.1,
    leaving-group elimination 1.1, acid-base proton transfer 0.9, others 1.0), a last-step
    factor 0.9, and the bonuses +0.3 for a ring closure (``cycl`` in the subtype) and +0.2
    for a key bond-forming step (type addition or substitution);
``fitted``
    chemassay's scheme for every reaction: the same structure with constants **fitted to the
    858 weights shipped in oMe-Gold** (least squares on the normalized weights;
    ``benchmarks/mechanism_weights.py --fit`` re-runs the fit)::

        raw_i = base(type_i) × modifier(subtype_i) × position(i, n) × difficulty(level)
                × bonus(step_i)
        w_i   = clip(raw_i, 0.5, 6.0) / Σ_j clip(raw_j, 0.5, 6.0)

    The data show two effects the paper's table does not name: a per-difficulty factor (it
    changes weights only through the clipping, visible in hard reactions whose key steps
    sit at 6.0) and a "key step" bump in the first half of the interior of a mechanism;
    the only multiplicative bonus they support is for steps whose intermediate specifies
    stereochemistry.

The paper gives the formula and says the scheme was curated by three domain experts
(App. C.1), not how the shipped Gold weights were derived; neither formula reproduces
them exactly: per step the fitted
scheme is off by 0.0052 on average, the paper's formula by 0.0122
(``benchmarks/mechanism_weights.py`` prints both).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from chemassay.suites.mechanism.records import Reaction, Step
from chemassay.suites.mechanism.taxonomy import SUBTYPE_TO_TYPE

CLIP_LOW = 0.5
CLIP_HIGH = 6.0

TYPE_BASE: dict[str, float] = {
    "proton_transfer": 0.95,
    "coordination": 1.5,
    "dissociation": 1.0,
    "addition": 2.3,
    "elimination": 2.3,
    "cleavage": 2.9,
    "substitution": 3.1,
    "electron_transfer": 3.2,
    "radical": 3.25,
    "rearrangement": 4.4,
    "pericyclic": 5.0,
}
DEFAULT_BASE = 2.3

SUBTYPE_MODIFIER: dict[str, float] = {
    "nucleophilic_addition": 1.0,
    "electrophilic_addition": 0.9,
    "radical_addition": 0.9,
    "oxidative_addition": 0.9,
    "leaving_group_elimination": 1.0,
    "proton_elimination": 0.9,
    "radical_elimination": 0.95,
    "reductive_elimination": 0.9,
    "nucleophilic_substitution": 1.0,
    "electrophilic_substitution": 1.0,
    "radical_substitution": 0.9,
    "1,2-shift": 1.0,
    "radical_rearrangement": 0.85,
    "migratory insertion": 1.0,
    "acid_base_proton_transfer": 1.0,
    "single_electron_transfer": 1.0,
    "radical_initiation": 1.0,
    "radical_propagation": 1.0,
    "radical_termination": 1.0,
    "radical_coupling": 1.1,
    "cycloaddition": 1.25,
    "cycloreversion": 0.95,
    "electrocyclization": 0.95,
    "sigmatropic_rearrangement": 1.1,
    "group_transfer": 0.8,
    "ene_reaction": 1.0,
    "cheletropic_reaction": 1.05,
    "heterolytic_cleavage": 1.0,
    "homolytic_cleavage": 1.1,
    "coordination": 1.0,
    "dissociation": 1.0,
}

POSITION_FIRST = 1.0
POSITION_LAST = 0.83
POSITION_KEY = 1.07
POSITION_LATE = 0.93
KEY_RANGE = (0.3, 0.5)
LATE_FROM = 0.85

DIFFICULTY: dict[str, float] = {"easy": 1.0, "medium": 1.06, "hard": 1.37}
STEREO_BONUS = 1.1


def position_modifier(index: int, n_steps: int) -> float:
    """Position factor of step ``index`` (0-based) in a mechanism of ``n_steps`` steps.

    First step (and a lone step) 1.0; last step 0.83; interior steps at relative position
    ``index / (n_steps - 1)`` in [0.3, 0.5] 1.07 (the key bond-forming steps tend to sit
    there), at 0.85 or later 0.93; other interior steps 1.0.
    """
    if n_steps <= 1 or index == 0:
        return POSITION_FIRST
    if index == n_steps - 1:
        return POSITION_LAST
    relative = index / (n_steps - 1)
    if relative >= LATE_FROM:
        return POSITION_LATE
    if KEY_RANGE[0] <= relative <= KEY_RANGE[1]:
        return POSITION_KEY
    return 1.0


def has_stereo(smiles: str) -> bool:
    """True when a SMILES specifies tetrahedral (``@``) or double-bond (``/``, ``\\``) stereo."""
    return any(mark in smiles for mark in ("@", "/", "\\"))


def raw_weight(step: Step, index: int, n_steps: int, level: str | None) -> float:
    """Unclipped, unnormalized weight of one step under the scheme."""
    kind = step.type or SUBTYPE_TO_TYPE.get(step.subtype or "")
    if step.subtype in SUBTYPE_TO_TYPE:
        kind = SUBTYPE_TO_TYPE[step.subtype]
    base = TYPE_BASE.get(kind or "", DEFAULT_BASE)
    modifier = SUBTYPE_MODIFIER.get(step.subtype or "", 1.0)
    value = base * modifier * position_modifier(index, n_steps) * DIFFICULTY.get(level or "", 1.0)
    if has_stereo(step.intermediate_smiles):
        value *= STEREO_BONUS
    return value


def scheme_weights(steps: Sequence[Step], level: str | None) -> list[float]:
    """Weights of ``steps`` under the fitted scheme: clipped to [0.5, 6.0], normalized to sum 1."""
    if not steps:
        return []
    clipped = [
        min(CLIP_HIGH, max(CLIP_LOW, raw_weight(step, index, len(steps), level)))
        for index, step in enumerate(steps)
    ]
    total = sum(clipped)
    return [value / total for value in clipped]


fitted_weights = scheme_weights


# ---------------------------------------------------------------- the paper's Table 6

PAPER_TYPE_BASE: dict[str, float] = {
    "pericyclic": 4.0,
    "rearrangement": 3.5,
    "radical": 3.0,
    "electron_transfer": 3.0,
    "substitution": 2.5,
    "cleavage": 2.5,
    "addition": 2.0,
    "elimination": 2.0,
    "coordination": 1.5,
    "proton_transfer": 1.0,
    "dissociation": 1.0,
}
PAPER_DEFAULT_BASE = 1.0
"""Base weight of a type Table 6 does not list (no Gold step has one): the neutral 1.0."""

PAPER_SUBTYPE_MODIFIER: dict[str, float] = {
    "sigmatropic_rearrangement": 1.3,
    "cheletropic_reaction": 1.3,
    "cycloaddition": 1.2,
    "ene_reaction": 1.2,
    "homolytic_cleavage": 1.2,
    "electrophilic_substitution": 1.2,
    "nucleophilic_substitution": 1.1,
    "leaving_group_elimination": 1.1,
    "acid_base_proton_transfer": 0.9,
}
PAPER_LAST_STEP = 0.9
PAPER_RING_CLOSURE_BONUS = 0.3
PAPER_BOND_FORMING_BONUS = 0.2
PAPER_BOND_FORMING_TYPES = frozenset({"addition", "substitution"})


def _type_of(step: Step) -> str | None:
    """A step's type: the taxonomy's parent of its subtype when known, else its own label."""
    if step.subtype in SUBTYPE_TO_TYPE:
        return SUBTYPE_TO_TYPE[step.subtype]
    return step.type


def paper_raw_weight(step: Step, index: int, n_steps: int) -> float:
    """The clipped, unnormalized weight of Table 6:
    ``clip(W_type × M_subtype × P_position + B_special, 0.5, 6.0)``.

    ``P_position`` is 0.9 for the last step of a mechanism of two or more steps (a lone step
    is normalized to 1 whatever it is), 1.0 otherwise; ``B_special`` adds 0.3 when the
    subtype contains ``cycl`` (cycloaddition, cycloreversion, electrocyclization) and 0.2
    when the step's type is addition or substitution.
    """
    kind = _type_of(step)
    subtype = step.subtype or ""
    base = PAPER_TYPE_BASE.get(kind or "", PAPER_DEFAULT_BASE)
    modifier = PAPER_SUBTYPE_MODIFIER.get(subtype, 1.0)
    position = PAPER_LAST_STEP if n_steps > 1 and index == n_steps - 1 else 1.0
    bonus = 0.0
    if "cycl" in subtype:
        bonus += PAPER_RING_CLOSURE_BONUS
    if kind in PAPER_BOND_FORMING_TYPES:
        bonus += PAPER_BOND_FORMING_BONUS
    return min(CLIP_HIGH, max(CLIP_LOW, base * modifier * position + bonus))


def paper_weights(steps: Sequence[Step]) -> list[float]:
    """Weights of ``steps`` under the paper's Table 6 formula, normalized to sum 1."""
    if not steps:
        return []
    raw = [paper_raw_weight(step, index, len(steps)) for index, step in enumerate(steps)]
    total = sum(raw)
    return [value / total for value in raw]


WEIGHT_MODES = ("data", "fitted", "paper")
"""``--weights`` values: the data's weights (fitted scheme where missing), or one formula for all."""


@dataclass(frozen=True)
class ResolvedWeights:
    """Weights used for scoring and where they came from (``data``, ``fitted`` or ``paper``)."""

    weights: tuple[float, ...]
    source: str


def _usable_data_weights(reaction: Reaction) -> tuple[float, ...] | None:
    given = [step.step_weight for step in reaction.steps]
    if given and all(w is not None and w >= 0 and w == w and w != float("inf") for w in given):
        if sum(given) > 0:  # type: ignore[arg-type]
            return tuple(float(w) for w in given)  # type: ignore[arg-type]
    return None


def resolve_weights(reaction: Reaction, mode: str = "data") -> ResolvedWeights:
    """The weights of a reaction's steps under ``mode`` (see :data:`WEIGHT_MODES`).

    ``data``: the ``step_weight`` values when every step has a usable one (present, finite,
    non-negative, positive total; oMe-Template carries placeholder zeros, which are not
    weights), else the fitted scheme. ``fitted`` / ``paper``: that formula for every step.
    """
    if mode not in WEIGHT_MODES:
        raise ValueError(f"unknown weights mode {mode!r}; choose from {', '.join(WEIGHT_MODES)}")
    if mode == "paper":
        return ResolvedWeights(tuple(paper_weights(reaction.steps)), "paper")
    if mode == "data":
        given = _usable_data_weights(reaction)
        if given is not None:
            return ResolvedWeights(given, "data")
    return ResolvedWeights(tuple(scheme_weights(reaction.steps, reaction.level)), "fitted")
