"""Failure galleries: RDKit depictions of what went wrong, read from per-item data results carry.

Each gallery is drawn when its fields are present and otherwise says which field it needs
(the report shows that line, so a missing gallery is never silent):

``stoichiometry`` — "alchemical" predictions
    ``rows[i]`` with ``source``, ``prediction`` and ``target`` (bag text ``{n}X.{m}Y``, as in
    the files) and ``balance`` (``BAL``/``DEF``/``EXC``/``DE``); ``config.encoding`` (or
    ``breakdown.encoding``) says ``smiles`` or ``formula``. Predictions whose atoms do not
    balance the source: elements that appear from nowhere are highlighted red in the
    prediction, elements that vanish are highlighted blue in the source.
``reaction-ood`` — wrong top-1 products
    ``items``: ``[{"id", "reactants", "target", "predictions": [ranked SMILES], "rank"}]``
    (``rank`` 1-based, ``null`` when the true product is not among the predictions). The
    reactants, the model's top-1 product and the true product side by side.
``robustness`` — retrieval misses
    ``misses``: ``[{"augmentation", "id", "original", "augmented", "retrieved", "rank"}]``
    (strings as given to the model; ``retrieved`` is the string retrieved instead). The two
    strings of one molecule side by side with its depiction and what was retrieved.
``mechanism`` — predicted vs gold steps
    ``reactions[i]`` with ``gold_steps`` and ``predicted_steps``
    (``[{"subtype", "smiles"}]``, ``smiles`` the step's intermediate) and the ``alignment``
    tags the scorer writes (``match``, ``type_mismatch``, ``skip_gold``, ``skip_pred``).
    The worst-scored reactions, their steps aligned pair by pair.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from chemassay.report.result import Result
from chemassay.report.scorecard.depict import depict, element_changes, highlights

DEFAULT_LIMIT = 6


@dataclass
class Panel:
    """One picture (or text) in a gallery item."""

    label: str
    svg: str | None = None
    text: str | None = None
    """A string shown in monospace under (or instead of) the picture."""


@dataclass
class GalleryItem:
    """One failure: a caption and panels side by side, or aligned step pairs."""

    caption: str
    panels: list[Panel] = field(default_factory=list)
    steps: list[tuple[str, Panel | None, Panel | None]] = field(default_factory=list)
    """``(tag, gold panel, predicted panel)`` for mechanism alignments."""
    note: str = ""


@dataclass
class Gallery:
    """A suite's failure gallery, or the reason there is none."""

    suite: str
    title: str
    items: list[GalleryItem] = field(default_factory=list)
    missing: str | None = None
    """Why nothing is shown: the field the results would need."""


def _extra(result: Result, name: str) -> Any:
    return (result.model_extra or {}).get(name)


def _model(result: Result) -> str:
    from chemassay.report.store import model_label

    return model_label(result)


# --- stoichiometry ---------------------------------------------------------------------------
def _bag(text: str, encoding: str):
    from chemassay.chem.bags import BagParseError, parse_bag

    try:
        return parse_bag(text, encoding)
    except (BagParseError, ValueError):
        return None


def _bag_panels(text: str, encoding: str, label: str, marks: tuple[tuple[str, str], ...]) -> list[Panel]:
    bag = _bag(text, encoding)
    if bag is None or encoding != "smiles":
        return [Panel(label, None, text)]
    panels = []
    for species, coefficient in bag.items():
        shown = f"{label} ({coefficient} ×)" if coefficient != 1 else label
        panels.append(Panel(shown, depict(species, marks), species))
    return panels


def stoichiometry_gallery(results: list[Result], limit: int = DEFAULT_LIMIT) -> Gallery:
    """ChemAlgebra's "alchemical" predictions (see the module docstring)."""
    gallery = Gallery("stoichiometry", "Alchemical predictions: atoms that appear (red) or vanish (blue)")
    has_rows = False
    for result in results:
        rows = _extra(result, "rows")
        if not isinstance(rows, list):
            continue
        encoding = str((result.config or {}).get("encoding") or (_extra(result, "breakdown") or {}).get("encoding") or "smiles")
        candidates = [r for r in rows if isinstance(r, dict) and {"source", "prediction", "target"} <= set(r)]
        if not candidates:
            continue
        has_rows = True
        order = {"DE": 0, "EXC": 1, "DEF": 2}
        unbalanced = sorted((r for r in candidates if r.get("balance") in order and r.get("valid", True)),
                            key=lambda r: (order[r["balance"]], r.get("line", 0)))
        for row in unbalanced:
            if len(gallery.items) >= limit:
                break
            source, prediction = _bag(str(row["source"]), encoding), _bag(str(row["prediction"]), encoding)
            if source is None or prediction is None:
                continue
            appear, vanish = element_changes(dict(source.element_counts()), dict(prediction.element_counts()))
            if not appear and not vanish:
                continue
            change = ", ".join([f"{e} +{n}" for e, n in appear.items()] + [f"{e} −{n}" for e, n in vanish.items()])
            panels = (_bag_panels(str(row["source"]), encoding, "source", highlights(vanish, "vanish"))
                      + _bag_panels(str(row["prediction"]), encoding, "predicted", highlights(appear, "appear"))
                      + _bag_panels(str(row["target"]), encoding, "true", ()))
            gallery.items.append(GalleryItem(
                caption=f"{_model(result)} · line {row.get('line', '?')} · {row['balance']}: {change}", panels=panels,
            ))
    if not has_rows:
        gallery.missing = ("these results carry no per-sample bags: stoichiometry should write rows[i].source, "
                           "rows[i].prediction and rows[i].target (bag text {n}X.{m}Y) next to rows[i].balance")
    elif not gallery.items:
        gallery.missing = "no unbalanced prediction among the scored rows"
    return gallery


def _entry_gallery(gallery: Gallery, results: list[Result], field_name: str, limit: int,
                   item_of: Callable[[Result, dict], GalleryItem | None], no_field: str, no_item: str) -> Gallery:
    """Fill ``gallery`` from the list field ``field_name`` of each result: ``item_of`` turns an
    entry into an item (``None``: not a failure to show), up to ``limit`` items; ``missing`` says
    why nothing is shown (``no_field``: no result has the field, ``no_item``: none qualified)."""
    has_field = False
    for result in results:
        entries = _extra(result, field_name)
        if not isinstance(entries, list):
            continue
        has_field = True
        for entry in entries:
            if len(gallery.items) >= limit:
                break
            item = item_of(result, entry) if isinstance(entry, dict) else None
            if item is not None:
                gallery.items.append(item)
    if not has_field:
        gallery.missing = no_field
    elif not gallery.items:
        gallery.missing = no_item
    return gallery


# --- reaction-ood ----------------------------------------------------------------------------
def _wrong_top1(result: Result, item: dict) -> GalleryItem | None:
    if item.get("rank") == 1 or not item.get("predictions"):
        return None
    top1 = str(item["predictions"][0])
    rank = item.get("rank")
    found = f"true product at rank {rank}" if rank else "true product not among the predictions"
    reactants, target = str(item.get("reactants", "")), str(item.get("target", ""))
    return GalleryItem(
        caption=f"{_model(result)} · {item.get('id', '?')} · {found}",
        panels=[Panel("reactants", depict(reactants, (), 300, 170), reactants),
                Panel("predicted top-1", depict(top1), top1),
                Panel("true product", depict(target), target)],
    )


def reaction_ood_gallery(results: list[Result], limit: int = DEFAULT_LIMIT) -> Gallery:
    """Wrong top-1 products beside the true product."""
    return _entry_gallery(
        Gallery("reaction-ood", "Wrong top-1 products beside the true product"), results, "items", limit,
        _wrong_top1,
        no_field=("these results carry no per-reaction predictions: reaction-ood should write items = "
                  "[{id, reactants, target, predictions: [ranked SMILES], rank}]"),
        no_item="every reaction's top-1 prediction is right",
    )


# --- robustness ------------------------------------------------------------------------------
def _retrieval_miss(result: Result, miss: dict) -> GalleryItem | None:
    if "original" not in miss or "augmented" not in miss:
        return None
    original, augmented = str(miss["original"]), str(miss["augmented"])
    panels = [Panel("molecule", depict(original), None),
              Panel("original string", None, original),
              Panel(f"{miss.get('augmentation', 'augmented')} string", None, augmented)]
    if miss.get("retrieved"):
        panels.append(Panel("retrieved instead", depict(str(miss["retrieved"])), str(miss["retrieved"])))
    rank = miss.get("rank")
    return GalleryItem(
        caption=f"{_model(result)} · {miss.get('augmentation', '?')} · {miss.get('id', '?')}"
                + (f" · true match at rank {rank}" if rank else ""),
        panels=panels,
    )


def robustness_gallery(results: list[Result], limit: int = DEFAULT_LIMIT) -> Gallery:
    """Retrieval misses: the two strings of one molecule side by side."""
    return _entry_gallery(
        Gallery("robustness", "Retrieval misses: two strings of one molecule that the model keeps apart"),
        results, "misses", limit, _retrieval_miss,
        no_field=("these results carry no retrieval misses: robustness should write misses = "
                  "[{augmentation, id, original, augmented, retrieved, rank}]"),
        no_item="no retrieval miss",
    )


# --- mechanism -------------------------------------------------------------------------------
def _step_panel(step: Any) -> Panel | None:
    if not isinstance(step, dict):
        return None
    smiles = str(step.get("smiles") or "")
    label = str(step.get("subtype") or step.get("type") or "?")
    return Panel(label, depict(smiles, (), 200, 140) if smiles else None, smiles)


def align_steps(tags: list[str], gold: list[Any], predicted: list[Any]) -> list[tuple[str, Panel | None, Panel | None]]:
    """Pair gold and predicted steps along the scorer's alignment tags (a diagonal move
    consumes one of each; a skip consumes one step of its side)."""
    pairs = []
    g = p = 0
    for tag in tags:
        if tag in ("match", "type_mismatch"):
            pairs.append((tag, _step_panel(gold[g]) if g < len(gold) else None,
                          _step_panel(predicted[p]) if p < len(predicted) else None))
            g += 1
            p += 1
        elif tag == "skip_gold":
            pairs.append((tag, _step_panel(gold[g]) if g < len(gold) else None, None))
            g += 1
        elif tag == "skip_pred":
            pairs.append((tag, None, _step_panel(predicted[p]) if p < len(predicted) else None))
            p += 1
    return pairs


def mechanism_gallery(results: list[Result], limit: int = DEFAULT_LIMIT) -> Gallery:
    """The worst-scored mechanisms, predicted and gold steps aligned."""
    gallery = Gallery("mechanism", "Predicted vs gold mechanism steps, aligned as the oMeS scorer aligned them")
    has_steps = False
    for result in results:
        reactions = _extra(result, "reactions")
        if not isinstance(reactions, list):
            continue
        usable = [r for r in reactions if isinstance(r, dict) and isinstance(r.get("gold_steps"), list)
                  and isinstance(r.get("predicted_steps"), list) and isinstance(r.get("alignment"), list)]
        if not usable:
            continue
        has_steps = True
        worst = sorted((r for r in usable if r["predicted_steps"]), key=lambda r: (r.get("S_total") or 0.0, r.get("L") or 0.0))
        for reaction in worst:
            if len(gallery.items) >= limit:
                break
            steps = align_steps([str(t) for t in reaction["alignment"]], reaction["gold_steps"], reaction["predicted_steps"])
            s_total = reaction.get("S_total")
            gallery.items.append(GalleryItem(
                caption=f"{_model(result)} · {reaction.get('reaction_id', '?')}"
                        + (f" ({reaction['level']})" if reaction.get("level") else "")
                        + (f" · S_total {s_total:.3f}" if isinstance(s_total, (int, float)) else ""),
                steps=steps,
            ))
    if not has_steps:
        gallery.missing = ("these results carry no steps: mechanism should write reactions[i].gold_steps and "
                           "reactions[i].predicted_steps ([{subtype, smiles}]) beside reactions[i].alignment")
    elif not gallery.items:
        gallery.missing = "no reaction with predicted steps"
    return gallery


GALLERIES = {
    "stoichiometry": stoichiometry_gallery,
    "reaction-ood": reaction_ood_gallery,
    "robustness": robustness_gallery,
    "mechanism": mechanism_gallery,
}


def suite_gallery(suite: str, results: list[Result], limit: int = DEFAULT_LIMIT) -> Gallery | None:
    """The failure gallery of a suite (``None`` for suites without one: generation)."""
    builder = GALLERIES.get(suite)
    return builder(results, limit) if builder else None
