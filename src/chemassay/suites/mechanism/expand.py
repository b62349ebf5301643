"""Template expansion: oMe-Template placeholders ``[*:i]`` → concrete reactions.

This is how oMe-Silver was made (the paper's App. D), with a fixed substituent list in place
of the LLM's suggestions. For one template, each placeholder number ``i`` gets one
substituent, and the same substituent replaces every ``[*:i]`` in the reactants, the
products and every intermediate, so the mechanism stays consistent. Joining is RDKit's
``molzip``: each placeholder occurrence is given its own label and paired with its own copy
of the substituent, whose attachment point ``*`` carries the same label. SMILES are parsed
without sanitization first (a placeholder may make a template atom look over-valent) and
the joined molecule is sanitized.

Every instance is validated, and what is rejected is counted by reason:

* the template itself (once, whatever the substituents): a SMILES that does not parse, a
  step label outside the taxonomy after the alias repairs below;
* an instance: a SMILES that does not sanitize after substitution; a step that is atom
  balanced in the template but not in the instance. A step is *balanced* when the previous
  state (the reactants for step 1, else the previous intermediate) and its intermediate
  hold the same atoms, placeholders counted as pseudo-elements — with hydrogens and net
  charge (``full``) or heavy atoms only (``heavy``). Most steps of oMeBench show only the
  main species, so reagents come and go and the balance cannot hold; the check applies
  where the template allows it (is balanced), at the level it is balanced.

Labels the templates spell outside the taxonomy are mapped by :data:`LABEL_ALIASES` (for
example ``lewis_acid_base_coordination`` is oMe-Gold's ``coordination``) and each step's
type is taken from its subtype; the repairs are listed in the record's ``provenance``.

Following the paper's R-group prompt (App. H.1), substituents with a ring are not used in a
template that already holds a ring (``ring_rule``), and the default list holds no hydrogen.
Substituents are read from JSON: ``{"substituents": [{"name", "smiles"}, ...]}`` (or a bare
list), every SMILES with exactly one ``*``. A default list ships with chemassay
(``data/substituents.json``, 43 groups).
"""

from __future__ import annotations

import itertools
import json
import os
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from rdkit import Chem

from chemassay.chem.molecules import rdkit_log_silenced, safe_mol_from_smiles
from chemassay.contract.errors import UserInputError
from chemassay.data.readers import read_text
from chemassay.suites.mechanism.taxonomy import SUBTYPE_TO_TYPE, canonical_subtype

_LABEL_BASE = 900  # molzip labels for placeholder occurrences; above any map number in the data


class ExpansionError(ValueError):
    """A template SMILES that cannot be expanded with a given assignment (with why).

    ``category`` is a short reason used to count rejections.
    """

    def __init__(self, category: str, detail: str) -> None:
        self.category = category
        super().__init__(f"{category}: {detail}")


LABEL_ALIASES: dict[str, str] = {
    "lewis_acid_base_coordination": "coordination",
    "hydride_shift": "1,2-shift",
    "intramolecular_proton_transfer": "acid_base_proton_transfer",
    "intramolecular_nucleophilic_addition": "nucleophilic_addition",
    "aromatic_electrophilic_substitution": "electrophilic_substitution",
}
"""Subtype labels of oMe-Template outside the taxonomy, and the taxonomy's label for the
same step (the paper's Table 5 names ``lewis_acid_base_coordination``; oMe-Gold calls it
``coordination``)."""


@dataclass(frozen=True)
class Substituent:
    """An R group: a name and a SMILES with one attachment point ``*``."""

    name: str
    smiles: str
    has_ring: bool = False

    @property
    def core(self) -> str:
        """The SMILES without its attachment point, as used in reaction ids."""
        return self.smiles.replace("[*]", "").replace("*", "")


def default_substituents_path() -> Path:
    """Path of the substituent list shipped with chemassay."""
    return Path(str(resources.files("chemassay.suites.mechanism") / "data" / "substituents.json"))


def load_substituents(path: str | os.PathLike | None = None) -> list[Substituent]:
    """Read and check a substituent list (default: the shipped one)."""
    target = Path(path) if path is not None else default_substituents_path()
    if not target.is_file():
        raise UserInputError(f"{target}: no such substituent file")
    try:
        data = json.loads(read_text(target))
    except json.JSONDecodeError as exc:
        raise UserInputError(f"{target}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise UserInputError(f"{target}: JSON nested too deeply to read") from None
    items = data.get("substituents") if isinstance(data, Mapping) else data
    if not isinstance(items, list) or not items:
        raise UserInputError(f"{target}: expected {{\"substituents\": [{{\"name\": ..., \"smiles\": \"*C\"}}, ...]}}")
    out = []
    for index, item in enumerate(items):
        if isinstance(item, str):
            item = {"name": item, "smiles": item}
        if not isinstance(item, Mapping) or not isinstance(item.get("smiles"), str):
            raise UserInputError(f"{target}: substituent {index} needs a 'smiles' string")
        smiles = item["smiles"]
        mol = safe_mol_from_smiles(smiles)
        dummies = [a for a in mol.GetAtoms() if a.GetAtomicNum() == 0] if mol is not None else []
        if mol is None or len(dummies) != 1:
            raise UserInputError(
                f"{target}: substituent {index} ({smiles!r}) must be a valid SMILES with exactly one '*' attachment point"
            )
        out.append(Substituent(str(item.get("name") or smiles), smiles, mol.GetRingInfo().NumRings() > 0))
    return out


def placeholder_labels(smiles: str) -> set[int]:
    """Numbers ``i`` of the ``[*:i]`` placeholders of a SMILES (``0`` for an unnumbered ``*``)."""
    mol = safe_mol_from_smiles(smiles, sanitize=False)
    if mol is None:
        return set()
    return {atom.GetAtomMapNum() for atom in mol.GetAtoms() if atom.GetAtomicNum() == 0}


def _fragment(substituent: Substituent, label: int) -> Chem.Mol:
    mol = Chem.MolFromSmiles(substituent.smiles, sanitize=False)
    for atom in mol.GetAtoms():
        if atom.GetAtomicNum() == 0:
            atom.SetAtomMapNum(label)
    return mol


def substitute(smiles: str, assignment: Mapping[int, Substituent]) -> str:
    """Replace every ``[*:i]`` of ``smiles`` by ``assignment[i]``; canonical SMILES out.

    Raises :class:`ExpansionError` when the SMILES does not parse, has a placeholder with
    no substituent, or the joined molecule fails sanitization.
    """
    with rdkit_log_silenced():
        mol = safe_mol_from_smiles(smiles, sanitize=False)
        if mol is None:
            raise ExpansionError("template SMILES does not parse", repr(smiles))
        mol = Chem.RWMol(mol)
        fragments = None
        label = _LABEL_BASE
        for atom in mol.GetAtoms():
            if atom.GetAtomicNum() != 0:
                continue
            number = atom.GetAtomMapNum()
            if number not in assignment:
                raise ExpansionError("placeholder without substituent", f"[*:{number}] in {smiles!r}")
            label += 1
            atom.SetAtomMapNum(label)
            piece = _fragment(assignment[number], label)
            fragments = piece if fragments is None else Chem.CombineMols(fragments, piece)
        try:
            joined = mol.GetMol() if fragments is None else Chem.molzip(mol.GetMol(), fragments)
            Chem.SanitizeMol(joined)
            joined = Chem.RemoveHs(joined)
        except Exception as exc:  # RDKit raises several unrelated exception types here
            message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ExpansionError("invalid after substitution", f"{message}: {smiles!r}") from None
        if any(atom.GetAtomicNum() == 0 for atom in joined.GetAtoms()):
            raise ExpansionError("placeholder left after substitution", repr(smiles))
        return Chem.MolToSmiles(joined)


def template_labels(template: Mapping[str, Any]) -> list[int]:
    """All placeholder numbers used anywhere in a template record, sorted."""
    labels: set[int] = set()
    for key in ("reactants_smiles", "products_smiles"):
        for smiles in template.get(key) or []:
            if isinstance(smiles, str):
                labels |= placeholder_labels(smiles)
    for step in template.get("mechanism") or []:
        if isinstance(step, Mapping) and isinstance(step.get("intermediate_smiles"), str):
            labels |= placeholder_labels(step["intermediate_smiles"])
    return sorted(labels)


def _repaired_labels(template: Mapping[str, Any]) -> tuple[list[tuple[str, str]], list[str]]:
    """``(type, subtype)`` of each template step on the taxonomy, and the repairs made.

    Raises :class:`ExpansionError` (``step label outside the taxonomy``) for a step whose
    subtype is neither a taxonomy label (in any spelling) nor one of :data:`LABEL_ALIASES`.
    """
    labels: list[tuple[str, str]] = []
    repairs: list[str] = []
    for number, step in enumerate(template.get("mechanism") or [], start=1):
        raw_type = step.get("type") if isinstance(step, Mapping) else None
        raw = step.get("subtype") if isinstance(step, Mapping) else None
        subtype = canonical_subtype(raw) if isinstance(raw, str) else None
        if subtype is None and isinstance(raw, str) and raw in LABEL_ALIASES:
            subtype = LABEL_ALIASES[raw]
        if subtype is None:
            raise ExpansionError("step label outside the taxonomy", f"step {number}: {raw_type!r} / {raw!r}")
        kind = SUBTYPE_TO_TYPE[subtype]
        if subtype != raw or kind != raw_type:
            repairs.append(f"step {number}: {raw_type}/{raw} -> {kind}/{subtype}")
        labels.append((kind, subtype))
    return labels, repairs


def formula_counts(smiles_items: Sequence[str], *, hydrogens: bool) -> Counter | None:
    """Atoms of some SMILES taken together: element symbols (placeholders ``[*:i]`` as the
    pseudo-element ``*i``) and, with ``hydrogens``, ``H`` (implicit and explicit) and the net
    ``charge``. ``None`` when one does not parse. Parsed without sanitization, so template
    SMILES and expanded ones are counted alike."""
    counts: Counter = Counter()
    with rdkit_log_silenced():
        for smiles in smiles_items:
            mol = safe_mol_from_smiles(smiles, sanitize=False) if isinstance(smiles, str) else None
            if mol is None:
                return None
            mol.UpdatePropertyCache(strict=False)
            for atom in mol.GetAtoms():
                number = atom.GetAtomicNum()
                if number == 1 and not hydrogens:
                    continue
                counts[f"*{atom.GetAtomMapNum()}" if number == 0 else atom.GetSymbol()] += 1
                if hydrogens:
                    counts["H"] += atom.GetTotalNumHs()
                    counts["charge"] += atom.GetFormalCharge()
    if hydrogens:
        counts["charge"] += 0  # present even when zero, so two neutral states compare equal
    return counts


def _states(record: Mapping[str, Any]) -> list[list[str]]:
    states = [list(record.get("reactants_smiles") or [])]
    for step in record.get("mechanism") or []:
        states.append([step.get("intermediate_smiles")] if isinstance(step, Mapping) else [None])
    return states


def step_balance(record: Mapping[str, Any]) -> list[str | None]:
    """Per step, how it is atom balanced against the previous state: ``full`` (atoms,
    hydrogens and charge), ``heavy`` (atoms other than hydrogen) or ``None`` (not balanced:
    a reagent joins or a by-product leaves, which the intermediates do not show)."""
    states = _states(record)
    out: list[str | None] = []
    for before, after in zip(states, states[1:], strict=False):
        level = None
        for name, hydrogens in (("full", True), ("heavy", False)):
            first, second = formula_counts(before, hydrogens=hydrogens), formula_counts(after, hydrogens=hydrogens)
            if first is not None and first == second:
                level = name
                break
        out.append(level)
    return out


def check_balance(record: Mapping[str, Any], required: Sequence[str | None]) -> None:
    """Raise :class:`ExpansionError` (``step not atom balanced``) when a step balanced in the
    template at level ``required[k]`` is not balanced at that level in ``record``."""
    states = _states(record)
    for number, (level, before, after) in enumerate(zip(required, states, states[1:], strict=False), start=1):
        if level is None:
            continue
        hydrogens = level == "full"
        first, second = formula_counts(before, hydrogens=hydrogens), formula_counts(after, hydrogens=hydrogens)
        if first is None or first != second:
            diff = {} if first is None or second is None else dict((second - first) + (first - second))
            raise ExpansionError("step not atom balanced", f"step {number} ({level}): changed {diff}")


def instantiate(template: Mapping[str, Any], assignment: Mapping[int, Substituent], *,
                labels: Sequence[tuple[str, str]] | None = None, label_repairs: Sequence[str] = (),
                balance: Sequence[str | None] | None = None) -> dict[str, Any]:
    """One concrete reaction record from a template; :class:`ExpansionError` if invalid.

    ``labels`` (the template's steps on the taxonomy, :func:`_repaired_labels`) replace the
    template's own; ``balance`` (per step, :func:`step_balance` of the template) is checked
    on the instance.
    """
    reactants = [substitute(s, assignment) for s in template.get("reactants_smiles") or []]
    products = [substitute(s, assignment) for s in template.get("products_smiles") or []]
    steps = []
    for index, step in enumerate(template.get("mechanism") or []):
        if not isinstance(step, Mapping) or not isinstance(step.get("intermediate_smiles"), str):
            raise ExpansionError("step without intermediate_smiles", str(template.get("reaction_id")))
        item = {key: value for key, value in step.items() if key != "step_weight"}
        if labels is not None:
            item["type"], item["subtype"] = labels[index]
        item["intermediate_smiles"] = substitute(step["intermediate_smiles"], assignment)
        weight = step.get("step_weight")
        if isinstance(weight, (int, float)) and not isinstance(weight, bool) and weight > 0:
            item["step_weight"] = weight
        steps.append(item)
    label_numbers = sorted(assignment)
    suffix = "_".join(f"{label}-{assignment[label].core}" for label in label_numbers)
    tid = str(template.get("reaction_id"))
    record: dict[str, Any] = {
        "reaction_id": f"{tid}_{suffix}" if suffix else tid,
        "name": template.get("name"),
        "level": template.get("level"),
        "reactants_smiles": reactants,
        "products_smiles": products,
        "conditions": template.get("conditions", ""),
        "mechanism_step_nums": len(steps),
        "mechanism": steps,
    }
    if template.get("description") is not None:
        record["description"] = template["description"]
    if balance is not None:
        check_balance(record, balance)
    record["provenance"] = {
        "template_id": tid,
        "substituents": {str(label): {"name": assignment[label].name, "smiles": assignment[label].smiles}
                         for label in label_numbers},
    }
    if label_repairs:
        record["provenance"]["label_repairs"] = list(label_repairs)
    if balance is not None:
        record["provenance"]["balance_checked"] = [level or "none" for level in balance]
    return record


def _unparsable(template: Mapping[str, Any]) -> str | None:
    """The first SMILES of a template that does not even parse (no assignment can fix it)."""
    smiles_items = [*(template.get("reactants_smiles") or []), *(template.get("products_smiles") or [])]
    smiles_items += [
        step.get("intermediate_smiles") for step in template.get("mechanism") or [] if isinstance(step, Mapping)
    ]
    with rdkit_log_silenced():
        for smiles in smiles_items:
            if not isinstance(smiles, str) or safe_mol_from_smiles(smiles, sanitize=False) is None:
                return str(smiles)
    return None


def has_ring(template: Mapping[str, Any]) -> bool:
    """Whether a template's reactants or products hold a ring (placeholders aside)."""
    with rdkit_log_silenced():
        for smiles in [*(template.get("reactants_smiles") or []), *(template.get("products_smiles") or [])]:
            mol = safe_mol_from_smiles(smiles, sanitize=False) if isinstance(smiles, str) else None
            if mol is not None:
                Chem.FastFindRings(mol)
                if mol.GetRingInfo().NumRings() > 0:
                    return True
    return False


@dataclass
class ExpansionResult:
    """Expanded records and what was rejected, counted by reason."""

    records: list[dict[str, Any]]
    rejected: Counter
    """Rejected candidate instances by reason (one template rejected as a whole counts once)."""
    examples: list[dict[str, Any]]
    """One example per template and reason."""
    templates_without_instance: list[str]
    templates_read: int = 0
    manifest: dict[str, Any] | None = None
    """What :func:`chemassay.mechanism.expand` wrote beside the records (``None``: nothing written)."""
    manifest_path: Path | None = None
    templates_rejected: dict[str, str] = field(default_factory=dict)
    """Templates no instance can come from (unparsable SMILES, labels), with the reason."""
    balance_checks: Counter = field(default_factory=Counter)
    """Steps of the kept instances by the balance level checked (``full``, ``heavy``, ``none``)."""
    label_repairs: int = 0
    """Kept instances whose step labels were mapped onto the taxonomy."""


def _assignments(labels: Sequence[int], substituents: Sequence[Substituent], rng: random.Random, limit: int):
    """Distinct random assignments, at most ``limit`` (all of them when there are fewer)."""
    if not substituents and labels:
        return
    total = len(substituents) ** len(labels)
    if total <= limit:
        combos = list(itertools.product(range(len(substituents)), repeat=len(labels)))
        rng.shuffle(combos)
    else:
        seen: set[tuple[int, ...]] = set()
        combos = []
        while len(combos) < limit:
            combo = tuple(rng.randrange(len(substituents)) for _ in labels)
            if combo not in seen:
                seen.add(combo)
                combos.append(combo)
    for combo in combos:
        yield {label: substituents[index] for label, index in zip(labels, combo, strict=True)}


def expand_templates(
    templates: Sequence[Mapping[str, Any]],
    substituents: Sequence[Substituent],
    *,
    per_template: int = 18,
    attempts: int = 5,
    seed: int = 0,
    ring_rule: bool = True,
    check_atom_balance: bool = True,
    max_examples: int = 200,
) -> ExpansionResult:
    """Expand each template into up to ``per_template`` valid instances.

    Assignments are drawn at random (``seed``) without repetition; up to
    ``attempts × per_template`` are tried per template so that invalid combinations can be
    replaced. A template without placeholders gives itself once (if valid). Reaction ids
    repeated across templates get a ``#k`` suffix. ``ring_rule``: substituents with a ring
    are not used in templates that hold one. ``check_atom_balance``: steps balanced in the
    template must stay balanced (see the module docstring).
    """
    rng = random.Random(seed)
    records: list[dict[str, Any]] = []
    rejected: Counter = Counter()
    examples: list[dict[str, Any]] = []
    noted: set[tuple[str, str]] = set()
    empty: list[str] = []
    refused: dict[str, str] = {}
    checks: Counter = Counter()
    repaired_instances = 0
    used_ids: Counter = Counter()

    def note(tid: str, category: str, detail: str) -> None:
        rejected[category] += 1
        if (tid, category) not in noted and len(examples) < max_examples:
            noted.add((tid, category))
            examples.append({"template_id": tid, "reason": f"{category}: {detail}"})

    for template in templates:
        tid = str(template.get("reaction_id"))
        placeholders = template_labels(template)
        unparsable = _unparsable(template)
        if unparsable is not None:
            note(tid, "template SMILES does not parse", repr(unparsable))
            refused.setdefault(tid, f"template SMILES does not parse: {unparsable!r}")
            empty.append(tid)
            continue
        try:
            labels, label_repairs = _repaired_labels(template)
        except ExpansionError as exc:
            note(tid, exc.category, str(exc).split(": ", 1)[1])
            refused.setdefault(tid, str(exc))
            empty.append(tid)
            continue
        balance = step_balance(template) if check_atom_balance else None
        groups = [g for g in substituents if not g.has_ring] if ring_rule and has_ring(template) else list(substituents)
        kept = 0
        first_reason = None
        for assignment in _assignments(placeholders, groups, rng, per_template * max(1, attempts)):
            if kept >= per_template:
                break
            try:
                record = instantiate(template, assignment, labels=labels, label_repairs=label_repairs, balance=balance)
            except ExpansionError as exc:
                note(tid, exc.category, str(exc).split(": ", 1)[1])
                first_reason = first_reason or str(exc)
                continue
            used_ids[record["reaction_id"]] += 1
            if used_ids[record["reaction_id"]] > 1:
                record["reaction_id"] += f"#{used_ids[record['reaction_id']]}"
            records.append(record)
            checks.update(level or "none" for level in (balance or [None] * len(labels)))
            repaired_instances += bool(label_repairs)
            kept += 1
        if kept == 0:
            empty.append(tid)
            refused.setdefault(tid, f"no valid instance among the assignments tried ({first_reason})")
    return ExpansionResult(records, rejected, examples, empty, templates_rejected=refused, balance_checks=checks,
                           label_repairs=repaired_instances)
