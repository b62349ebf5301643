"""The error taxonomy of the paper's Fig. 6 / Table 8, computed for any predictions.

The paper sorts the errors of a model's mechanisms into three groups (App. I, Table 8) and
reports their shares for Gemini-Pro-2.5 (Fig. 6: invalid or inconsistent SMILES 35.4 % of
all errors, valence / charge violations 7.3 %, skipped critical steps 20.8 %). The paper does
not say how or by whom the errors were counted; chemassay counts what can be decided from
the answer, the gold mechanism and the oMeS alignment, for every reaction scored. Each *error event* has
one category (a predicted step can carry two events: a wrong step type and an invalid
SMILES, say):

structural / formalization (``group: structural``)
    ``invalid_smiles``       a predicted intermediate RDKit cannot read (syntax, ring
                             closures, aromaticity), or none given
    ``inconsistent_smiles``  a valid intermediate with an element that occurs in none of the
                             reaction's reactants, products and gold intermediates (atoms
                             from nowhere)
    ``unparsed_answer``      an answer from which no step list could be read (empty,
                             truncated beyond repair, not in the expected format): the
                             reaction scores 0, as in the paper; ``unparsed_reasons``
                             counts them by kind (empty / truncated answer, not a step
                             list, answer too long)
    ``repaired_answer``      an answer read only after repairing its JSON (cut off, missing
                             or trailing commas, comments, Python literals; lenient parsing
                             only — ``--strict`` scores such answers 0, counted above)
    ``unknown_label``        a predicted step whose subtype is missing or outside the
                             taxonomy (it can never match)
    ``no_answer``            a gold reaction without prediction, or whose request failed
chemical knowledge (``group: chemical``)
    ``valence_charge``       an intermediate that violates valence (pentavalent carbon,
                             neutral tetravalent nitrogen, neutral trivalent oxygen...: RDKit's
                             valence check) or carries a charge of magnitude 2 or more on C,
                             N, O or a halogen
    ``wrong_intermediate``   a step aligned to a gold step of the same subtype whose valid
                             intermediate is not the gold one
mechanistic / procedural (``group: procedural``)
    ``skipped_critical_step`` a gold step no predicted step is aligned to, weighted above the
                             reaction's mean step weight (1/n)
    ``skipped_step``         any other unaligned gold step
    ``wrong_step_type``      a predicted step aligned to a gold step of another subtype
    ``extra_step``           a predicted step aligned to no gold step

The result carries the counts as metrics ``error/<category>`` and, under
``error_taxonomy``, the counts, each category's share of all events, the three groups'
totals and shares, and up to :data:`EXAMPLES` examples per category (reaction id, step,
SMILES or labels, the reason).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from rdkit import Chem

from chemassay.chem.molecules import rdkit_log_silenced, safe_mol_from_smiles
from chemassay.suites.mechanism.parse import open_brackets

CATEGORIES: dict[str, str] = {
    "invalid_smiles": "structural",
    "inconsistent_smiles": "structural",
    "unparsed_answer": "structural",
    "repaired_answer": "structural",
    "unknown_label": "structural",
    "no_answer": "structural",
    "valence_charge": "chemical",
    "wrong_intermediate": "chemical",
    "skipped_critical_step": "procedural",
    "skipped_step": "procedural",
    "wrong_step_type": "procedural",
    "extra_step": "procedural",
}
GROUPS = ("structural", "chemical", "procedural")
EXAMPLES = 3
JSON_REPAIRS = frozenset({"unterminated", "missing_commas", "trailing_commas", "comments", "python_literal"})
"""Repairs of the answer's JSON itself (not the tags, fences or prose around it)."""
_CHARGE_ELEMENTS = frozenset({"C", "N", "O", "F", "Cl", "Br", "I"})


def smiles_problem(smiles: object) -> tuple[str | None, str]:
    """The category of one predicted intermediate's problem (``invalid_smiles``,
    ``valence_charge`` or ``None`` when it is a valid molecule) and a short reason.

    Valid means what V counts: RDKit parses it into a non-empty molecule. An unreadable
    SMILES is a valence problem when it parses without sanitization and RDKit's only
    objection is an atom's valence.
    """
    if not isinstance(smiles, str) or not smiles.strip():
        return "invalid_smiles", "no intermediate given"
    return _smiles_problem(smiles)


@lru_cache(maxsize=65536)
def _smiles_problem(smiles: str) -> tuple[str | None, str]:
    with rdkit_log_silenced():
        mol = safe_mol_from_smiles(smiles)
        if mol is not None and mol.GetNumAtoms() > 0:
            for atom in mol.GetAtoms():
                if abs(atom.GetFormalCharge()) >= 2 and atom.GetSymbol() in _CHARGE_ELEMENTS:
                    return "valence_charge", f"charge {atom.GetFormalCharge():+d} on {atom.GetSymbol()}"
            return None, ""
        if mol is not None:
            return "invalid_smiles", "empty molecule"
        raw = safe_mol_from_smiles(smiles, sanitize=False)
        if raw is None:
            return "invalid_smiles", "does not parse"
        try:
            problems = list(Chem.DetectChemistryProblems(raw))
        except Exception:  # noqa: BLE001 - RDKit raises unrelated types on odd input
            problems = []
        kinds = {problem.GetType() for problem in problems}
        if "AtomValenceException" in kinds:
            message = next(p.Message() for p in problems if p.GetType() == "AtomValenceException")
            return "valence_charge", message.strip().splitlines()[0] if message.strip() else "valence"
        if kinds:
            return "invalid_smiles", sorted(kinds)[0]
        return "invalid_smiles", "does not parse"


def elements_of(smiles_items: Iterable[object]) -> set[str]:
    """Element symbols of every SMILES that parses (unsanitized; placeholders left out)."""
    found: set[str] = set()
    with rdkit_log_silenced():
        for smiles in smiles_items:
            if not isinstance(smiles, str):
                continue
            mol = safe_mol_from_smiles(smiles, sanitize=False)
            if mol is not None:
                found.update(atom.GetSymbol() for atom in mol.GetAtoms() if atom.GetAtomicNum() > 0)
    return found


@dataclass
class ErrorTally:
    """Error events counted over reactions, with a few examples of each category."""

    counts: Counter = field(default_factory=lambda: Counter({name: 0 for name in CATEGORIES}))
    examples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    unparsed_reasons: Counter = field(default_factory=Counter)

    def add(self, category: str, reaction_id: str, **detail: Any) -> None:
        self.counts[category] += 1
        found = self.examples.setdefault(category, [])
        if len(found) < EXAMPLES:
            found.append({"reaction_id": reaction_id, **detail})

    def as_dict(self) -> dict[str, Any]:
        """The result's ``error_taxonomy`` field (see the module docstring)."""
        total = sum(self.counts.values())
        groups = Counter()
        for name, count in self.counts.items():
            groups[CATEGORIES[name]] += count
        return {
            "events": total,
            "counts": {name: self.counts[name] for name in CATEGORIES},
            "share": {name: (self.counts[name] / total if total else 0.0) for name in CATEGORIES},
            "groups": {group: {"events": groups[group], "share": groups[group] / total if total else 0.0,
                               "categories": [name for name, owner in CATEGORIES.items() if owner == group]}
                       for group in GROUPS},
            "unparsed_reasons": dict(self.unparsed_reasons.most_common()),
            "examples": {name: self.examples[name] for name in CATEGORIES if name in self.examples},
        }

    def metrics(self) -> dict[str, int]:
        """``error/<category>`` counts for the result's metrics."""
        return {f"error/{name}": int(self.counts[name]) for name in CATEGORIES}


def _pairs(tags: Sequence[str]) -> list[tuple[str, int | None, int | None]]:
    """``(tag, gold index, predicted index)`` of each aligned pair, from the trace-back tags."""
    out = []
    gold = pred = 0
    for tag in tags:
        if tag in ("match", "type_mismatch"):
            out.append((tag, gold, pred))
            gold += 1
            pred += 1
        elif tag == "skip_gold":
            out.append((tag, gold, None))
            gold += 1
        else:
            out.append((tag, None, pred))
            pred += 1
    return out


def answer_shape(text: object) -> str | None:
    """What a raw answer looks like before parsing: ``empty`` (nothing but white space),
    ``truncated`` (a ``[`` or ``{`` left open outside strings: the answer was cut off), or
    ``None`` (text of any other shape, or no raw text)."""
    if not isinstance(text, str):
        return None
    if not text.strip():
        return "empty"
    stack, in_string = open_brackets(text[-200_000:])
    return "truncated" if stack or in_string else None


def _unparsed_kind(reason: str, shape: str | None) -> str:
    text = (reason or "").lower()
    if text.startswith("no response") or "request failed" in text:
        return "request failed"
    if shape == "empty" or "empty" in text:
        return "empty answer"
    if shape == "truncated":
        return "truncated answer"
    if "over" in text and "characters" in text:
        return "answer too long"
    return "not a step list"


def tally_reaction(tally: ErrorTally, result: Any, parsed: Any, known_labels: frozenset[str]) -> None:
    """Add one scored reaction's error events (``result``: a
    :class:`~chemassay.suites.mechanism.scoring.ReactionResult`; ``parsed``: its
    :class:`~chemassay.suites.mechanism.parse.ParsedMechanism` or ``None`` when missing)."""
    reaction = result.reaction
    rid = reaction.reaction_id
    if result.status == "missing":
        tally.add("no_answer", rid, reason="no prediction for this reaction")
        return
    if result.status == "unparsed":
        kind = _unparsed_kind(result.reason or "", getattr(result, "answer_shape", None))
        if kind == "request failed":
            tally.add("no_answer", rid, reason=result.reason)
        else:
            tally.unparsed_reasons[kind] += 1
            tally.add("unparsed_answer", rid, reason=result.reason, kind=kind)
        return
    repaired = sorted(JSON_REPAIRS & set(result.repairs))
    if repaired:
        tally.add("repaired_answer", rid, repairs=repaired)
    steps = parsed.steps if parsed is not None and parsed.steps is not None else []
    allowed = None
    for number, step in enumerate(steps, start=1):
        if step.subtype is None or step.subtype not in known_labels:
            tally.add("unknown_label", rid, step=number, subtype=step.subtype, type=step.type)
        category, reason = smiles_problem(step.smiles)
        if category is None:
            if allowed is None:
                allowed = elements_of([*reaction.reactants, *reaction.products,
                                       *(gold.intermediate_smiles for gold in reaction.steps)]) | {"H"}
            extra = sorted(elements_of([step.smiles]) - allowed)
            if extra:
                tally.add("inconsistent_smiles", rid, step=number, smiles=step.smiles,
                          reason=f"element(s) {', '.join(extra)} in none of the reaction's molecules")
        else:
            tally.add(category, rid, step=number, smiles=step.smiles, reason=reason)
    alignment = result.alignment
    if alignment is None:
        return
    n_gold = len(result.gold)
    for tag, gold_index, pred_index in _pairs(alignment.tags):
        if tag == "skip_gold":
            gold = result.gold[gold_index]
            critical = n_gold > 0 and gold.weight > 1.0 / n_gold + 1e-12
            tally.add("skipped_critical_step" if critical else "skipped_step", rid, gold_step=gold_index + 1,
                      subtype=gold.subtype, weight=round(gold.weight, 4))
        elif tag == "skip_pred":
            step = steps[pred_index]
            tally.add("extra_step", rid, step=pred_index + 1, subtype=step.subtype)
        elif tag == "type_mismatch":
            tally.add("wrong_step_type", rid, step=pred_index + 1, gold_step=gold_index + 1,
                      predicted=steps[pred_index].subtype, gold=result.gold[gold_index].subtype)
        elif not alignment.gold_exact[gold_index] and smiles_problem(steps[pred_index].smiles)[0] is None:
            tally.add("wrong_intermediate", rid, step=pred_index + 1, gold_step=gold_index + 1,
                      smiles=steps[pred_index].smiles, gold=result.gold[gold_index].smiles)
