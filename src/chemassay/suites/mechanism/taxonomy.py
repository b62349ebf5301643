"""The step-type taxonomy of oMeBench: 11 types, 31 subtypes.

The taxonomy is the one the data uses. oMe-Gold labels its 858 steps with 30
``(type, subtype)`` pairs, each subtype belonging to exactly one type; the benchmark's own
prompt (``prompts/default.txt`` in skylarkie/oMeBench) lists one more pair that no Gold step
uses, ``rearrangement / migratory insertion``. Together they form :data:`TAXONOMY`.
The descriptions are the prompt's. :func:`derive_taxonomy` recomputes the pairs from any
set of records, which is how the table below was obtained (and what the tests check).

oMe-Template uses a few labels outside this taxonomy (``lewis_acid_base_coordination``,
``hydride_shift``, ``dehydration`` under ``aromatization``...); ``validate`` reports them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Subtype:
    """One subtype of the taxonomy: its parent type and the prompt's description."""

    type: str
    subtype: str
    description: str


TAXONOMY: tuple[Subtype, ...] = (
    Subtype("addition", "nucleophilic_addition", "Nucleophile attacks an electrophilic center"),
    Subtype("addition", "electrophilic_addition", "Electrophile adds to an electron-rich system (e.g., alkene)"),
    Subtype("addition", "radical_addition", "Radical adds to a π-bond system"),
    Subtype("addition", "oxidative_addition", "A covalent bond breaks upon reacting with a low-valent metal, and the two atoms from the broken bond simultaneously attach to the metal"),
    Subtype("elimination", "proton_elimination", "Only used in E1. β-H proton of carbocation is abstracted to form a double bond"),
    Subtype("elimination", "leaving_group_elimination", "Leaving group departs simultaneously with double bond formation"),
    Subtype("elimination", "radical_elimination", "Radical eliminates a small fragment to form a π-bond"),
    Subtype("elimination", "reductive_elimination", "The reverse reaction of oxidative addition"),
    Subtype("substitution", "nucleophilic_substitution", "Nucleophile replaces a leaving group"),
    Subtype("substitution", "electrophilic_substitution", "Electrophile replaces a hydrogen atom on an aromatic ring"),
    Subtype("substitution", "radical_substitution", "Radical replaces a group within a σ-bond"),
    Subtype("rearrangement", "1,2-shift", "1,2-alkyl or hydride shift within a carbocation"),
    Subtype("rearrangement", "radical_rearrangement", "Radical migrates to a different position"),
    Subtype("rearrangement", "migratory insertion", "One ligand migrates and inserts itself into the bond between the metal and the other ligand"),
    Subtype("proton_transfer", "acid_base_proton_transfer", "Proton migrates between a donor and an acceptor, including keto-enol tautomerization"),
    Subtype("electron_transfer", "single_electron_transfer", "Single electron moves from donor to acceptor"),
    Subtype("radical", "radical_initiation", "Generation of radicals (e.g., by light, heat)"),
    Subtype("radical", "radical_propagation", "Radical continuously generates new radicals"),
    Subtype("radical", "radical_termination", "Two radicals combine to terminate chain reactions"),
    Subtype("radical", "radical_coupling", "Two radicals form a new bond directly (e.g., C–C or C–N)"),
    Subtype("pericyclic", "cycloaddition", "Two π-systems combine to form a ring (e.g., Diels–Alder)"),
    Subtype("pericyclic", "cycloreversion", "The reverse reaction of cycloaddition"),
    Subtype("pericyclic", "electrocyclization", "Ring closure or opening via conjugated π-system rotation"),
    Subtype("pericyclic", "sigmatropic_rearrangement", "Migration of σ-bond across a π-system (e.g., [3,3]-Claisen)"),
    Subtype("pericyclic", "group_transfer", "Group is transferred via concerted cyclic pathway"),
    Subtype("pericyclic", "ene_reaction", "Transfer of an allylic hydrogen and formation of a new σ-bond"),
    Subtype("pericyclic", "cheletropic_reaction", "Two new bonds formed to the same atom (subset of cycloaddition)"),
    Subtype("cleavage", "heterolytic_cleavage", "Only used in SN1 and E1. Bond breaks with both electrons going to one fragment (ions formed), including decarboxylation in some condition"),
    Subtype("cleavage", "homolytic_cleavage", "Only used in radical formation. Bond breaks evenly with one electron to each fragment (radicals formed)"),
    Subtype("coordination", "coordination", "A ligand molecule attaches to a central metal atom. Lone pair coordinates with an empty orbital"),
    Subtype("dissociation", "dissociation", "A ligand molecule detaches from a central metal atom"),
)

SUBTYPE_TO_TYPE: dict[str, str] = {entry.subtype: entry.type for entry in TAXONOMY}
TYPES: tuple[str, ...] = tuple(dict.fromkeys(entry.type for entry in TAXONOMY))
SUBTYPES_OF_TYPE: dict[str, tuple[str, ...]] = {
    kind: tuple(entry.subtype for entry in TAXONOMY if entry.type == kind) for kind in TYPES
}


@lru_cache(maxsize=4096)
def label_key(label: str) -> str:
    """Spelling-insensitive key of a label: lower case, runs of space/_/- become one ``_``.

    ``"Nucleophilic Addition"``, ``"nucleophilic-addition"`` and ``"nucleophilic_addition"``
    share a key; ``"1,2-shift"`` and ``"1,2 shift"`` too.
    """
    return re.sub(r"[\s_\-]+", "_", label.strip().lower()).strip("_")


_SUBTYPE_BY_KEY = {label_key(entry.subtype): entry.subtype for entry in TAXONOMY}
_TYPE_BY_KEY = {label_key(kind): kind for kind in TYPES}


def canonical_subtype(label: str) -> str | None:
    """The taxonomy's spelling of a subtype label, or ``None`` if it is not one."""
    return _SUBTYPE_BY_KEY.get(label_key(label)) if isinstance(label, str) else None


def canonical_type(label: str) -> str | None:
    """The taxonomy's spelling of a type label, or ``None`` if it is not one."""
    return _TYPE_BY_KEY.get(label_key(label)) if isinstance(label, str) else None


def only_subtype(kind: str) -> str | None:
    """The subtype of ``kind`` when the type has exactly one (e.g. proton_transfer)."""
    subtypes = SUBTYPES_OF_TYPE.get(kind, ())
    return subtypes[0] if len(subtypes) == 1 else None


def derive_taxonomy(records: Iterable[Mapping]) -> dict[tuple[str, str], int]:
    """Count the ``(type, subtype)`` pairs used by the steps of ``records`` (oMeBench dicts)."""
    counts: Counter = Counter()
    for record in records:
        for step in record.get("mechanism") or []:
            if isinstance(step, Mapping):
                counts[(step.get("type"), step.get("subtype"))] += 1
    return dict(counts)
