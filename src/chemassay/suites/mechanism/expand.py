"""Template expansion: oMe-Template placeholders ``[*:i]`` → concrete reactions.

This is how oMe-Silver was made, without an LLM in the loop. For one template, each
placeholder number ``i`` gets one substituent, and the same substituent replaces every
``[*:i]`` in the reactants, the products and every intermediate, so the mechanism stays
consistent. Joining is RDKit's ``molzip``: each placeholder occurrence is given its own
label and paired with its own copy of the substituent, whose attachment point ``*``
carries the same label. SMILES are parsed without sanitization first (a placeholder may
make a template atom look over-valent) and the joined molecule is sanitized; an instance
is kept only when every SMILES of it sanitizes.

Substituents are read from JSON: ``{"substituents": [{"name", "smiles"}, ...]}`` (or a
bare list), every SMILES with exactly one ``*``. A default list ships with chemassay
(``data/substituents.json``).
"""

from __future__ import annotations

import itertools
import json
import os
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from rdkit import Chem

from chemassay.chem.molecules import rdkit_log_silenced, safe_mol_from_smiles
from chemassay.data.readers import read_text
from chemassay.errors import UserInputError

_LABEL_BASE = 900  # molzip labels for placeholder occurrences; above any map number in the data


class ExpansionError(ValueError):
    """A template SMILES that cannot be expanded with a given assignment (with why).

    ``category`` is a short reason used to count rejections.
    """

    def __init__(self, category: str, detail: str) -> None:
        self.category = category
        super().__init__(f"{category}: {detail}")


@dataclass(frozen=True)
class Substituent:
    """An R group: a name and a SMILES with one attachment point ``*``."""

    name: str
    smiles: str

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
        out.append(Substituent(str(item.get("name") or smiles), smiles))
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


def instantiate(template: Mapping[str, Any], assignment: Mapping[int, Substituent]) -> dict[str, Any]:
    """One concrete reaction record from a template; :class:`ExpansionError` if invalid."""
    reactants = [substitute(s, assignment) for s in template.get("reactants_smiles") or []]
    products = [substitute(s, assignment) for s in template.get("products_smiles") or []]
    steps = []
    for step in template.get("mechanism") or []:
        if not isinstance(step, Mapping) or not isinstance(step.get("intermediate_smiles"), str):
            raise ExpansionError("step without intermediate_smiles", str(template.get("reaction_id")))
        item = {key: value for key, value in step.items() if key != "step_weight"}
        item["intermediate_smiles"] = substitute(step["intermediate_smiles"], assignment)
        weight = step.get("step_weight")
        if isinstance(weight, (int, float)) and not isinstance(weight, bool) and weight > 0:
            item["step_weight"] = weight
        steps.append(item)
    labels = sorted(assignment)
    suffix = "_".join(f"{label}-{assignment[label].core}" for label in labels)
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
    record["provenance"] = {
        "template_id": tid,
        "substituents": {str(label): {"name": assignment[label].name, "smiles": assignment[label].smiles} for label in labels},
    }
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


@dataclass
class ExpansionResult:
    """Expanded records and what was rejected, counted by reason."""

    records: list[dict[str, Any]]
    rejected: Counter
    examples: list[dict[str, Any]]
    templates_without_instance: list[str]
    templates_read: int = 0
    manifest: dict[str, Any] | None = None
    """What :func:`chemassay.mechanism.expand` wrote beside the records (``None``: nothing written)."""
    manifest_path: Path | None = None


def _assignments(labels: Sequence[int], substituents: Sequence[Substituent], rng: random.Random, limit: int):
    """Distinct random assignments, at most ``limit`` (all of them when there are fewer)."""
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
    per_template: int = 10,
    attempts: int = 5,
    seed: int = 0,
    max_examples: int = 20,
) -> ExpansionResult:
    """Expand each template into up to ``per_template`` valid instances.

    Assignments are drawn at random (``seed``) without repetition; up to
    ``attempts × per_template`` are tried per template so that invalid combinations can be
    replaced. A template without placeholders gives itself once (if valid). Reaction ids
    repeated across templates get a ``#k`` suffix.
    """
    rng = random.Random(seed)
    records: list[dict[str, Any]] = []
    rejected: Counter = Counter()
    examples: list[dict[str, Any]] = []
    empty: list[str] = []
    used_ids: Counter = Counter()
    for template in templates:
        labels = template_labels(template)
        unparsable = _unparsable(template)
        if unparsable is not None:
            rejected["template SMILES does not parse"] += 1
            if len(examples) < max_examples:
                examples.append({"template_id": template.get("reaction_id"), "reason": f"template SMILES does not parse: {unparsable!r}"})
            empty.append(str(template.get("reaction_id")))
            continue
        kept = 0
        for assignment in _assignments(labels, substituents, rng, per_template * max(1, attempts)):
            if kept >= per_template:
                break
            try:
                record = instantiate(template, assignment)
            except ExpansionError as exc:
                rejected[exc.category] += 1
                if len(examples) < max_examples:
                    examples.append({"template_id": template.get("reaction_id"), "reason": str(exc)})
                continue
            used_ids[record["reaction_id"]] += 1
            if used_ids[record["reaction_id"]] > 1:
                record["reaction_id"] += f"#{used_ids[record['reaction_id']]}"
            records.append(record)
            kept += 1
        if kept == 0:
            empty.append(str(template.get("reaction_id")))
    return ExpansionResult(records, rejected, examples, empty)
