"""Step weights: the ``step_weight`` of the data when present, else the weighting scheme.

oMe-Gold ships a weight for every step (the weights of a reaction sum to 1); oMe-Template,
expanded reactions and user files usually do not. For those, the paper's scheme is used:

    raw_i = base(type_i) × modifier(subtype_i) × position(i, n) × difficulty(level)
            × bonus(step_i)
    w_i   = clip(raw_i, 0.5, 6.0) / Σ_j clip(raw_j, 0.5, 6.0)

The structure (base weight by type × subtype modifier × position modifier + special
bonuses, clipped to [0.5, 6.0], normalized) is the paper's; its constants are not in the
public oMeBench repository, so the ones below were **fitted to the 858 weights shipped
in oMe-Gold** (least squares on the normalized weights; ``benchmarks/mechanism_weights.py``
re-runs the fit and prints the agreement). The data showed two effects the short
description does not name: a per-difficulty factor (it changes weights only through the
clipping, which is visible in hard reactions whose key steps all sit at 6.0) and a
"key step" bump in the first half of the interior of a mechanism. The only special bonus
the data supports is for steps whose intermediate specifies stereochemistry.
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
    """Weights of ``steps`` under the scheme: clipped to [0.5, 6.0] and normalized to sum 1."""
    if not steps:
        return []
    clipped = [
        min(CLIP_HIGH, max(CLIP_LOW, raw_weight(step, index, len(steps), level)))
        for index, step in enumerate(steps)
    ]
    total = sum(clipped)
    return [value / total for value in clipped]


@dataclass(frozen=True)
class ResolvedWeights:
    """Weights used for scoring and where they came from (``data`` or ``scheme``)."""

    weights: tuple[float, ...]
    source: str


def resolve_weights(reaction: Reaction) -> ResolvedWeights:
    """The data's ``step_weight`` values when every step has a usable one, else the scheme.

    Usable means present, finite and non-negative, with a positive total (oMe-Template
    carries placeholder zeros, which are not weights).
    """
    given = [step.step_weight for step in reaction.steps]
    if given and all(w is not None and w >= 0 and w == w and w != float("inf") for w in given):
        if sum(given) > 0:  # type: ignore[arg-type]
            return ResolvedWeights(tuple(float(w) for w in given), "data")  # type: ignore[arg-type]
    return ResolvedWeights(tuple(scheme_weights(reaction.steps, reaction.level)), "scheme")
