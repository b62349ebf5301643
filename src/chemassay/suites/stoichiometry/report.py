"""The stoichiometry suite's pictures in the report: its failure gallery."""

from __future__ import annotations

from chemassay.report.result import Result
from chemassay.report.scorecard.depict import depict, element_changes, highlights
from chemassay.report.scorecard.galleries import (
    DEFAULT_LIMIT,
    Gallery,
    GalleryItem,
    Panel,
    model_name,
    result_field,
)


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
        rows = result_field(result, "rows")
        if not isinstance(rows, list):
            continue
        encoding = str((result.config or {}).get("encoding") or (result_field(result, "breakdown") or {}).get("encoding") or "smiles")
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
                caption=f"{model_name(result)} · line {row.get('line', '?')} · {row['balance']}: {change}", panels=panels,
            ))
    if not has_rows:
        gallery.missing = ("these results carry no per-sample bags: stoichiometry should write rows[i].source, "
                           "rows[i].prediction and rows[i].target (bag text {n}X.{m}Y) next to rows[i].balance")
    elif not gallery.items:
        gallery.missing = "no unbalanced prediction among the scored rows"
    return gallery
