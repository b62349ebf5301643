"""The mechanism suite's pictures in the report: its failure gallery and its charts."""

from __future__ import annotations

from typing import Any

from chemassay.report.result import Result
from chemassay.report.scorecard.depict import depict
from chemassay.report.scorecard.galleries import (
    DEFAULT_LIMIT,
    Gallery,
    GalleryItem,
    Panel,
    model_name,
    result_field,
)
from chemassay.report.scorecard.plots import MAX_CHART_ROWS, Figure, is_number, result_label
from chemassay.report.scorecard.svg import bar_chart


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
        reactions = result_field(result, "reactions")
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
                caption=f"{model_name(result)} · {reaction.get('reaction_id', '?')}"
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


def mechanism_charts(results: list[Result], boards: list | None = None) -> list[Figure]:
    """oMeS by difficulty (``by_level``) and step match rate by type (``by_type``)."""
    figures = []
    levels: list[str] = []
    series = {}
    for result in results:
        by_level = result_field(result, "by_level")
        if isinstance(by_level, dict):
            values = {level: entry.get("S_total") for level, entry in by_level.items() if isinstance(entry, dict)}
            for level in values:
                if level not in levels:
                    levels.append(level)
            series[result_label(result)] = values
    if series:
        data = {name: [v.get(level) if is_number(v.get(level)) else None for level in levels]
                for name, v in list(series.items())[:MAX_CHART_ROWS]}
        svg = bar_chart(levels, data, title="oMeS-total by difficulty", y_range=(0.0, 1.0), y_label="S_total")
        figures.append(Figure("oMeS by difficulty", "svg", svg, "From each result's by_level.", "oms-by-difficulty.svg"))
    types: list[str] = []
    series = {}
    for result in results:
        by_type = result_field(result, "by_type")
        if isinstance(by_type, dict):
            values = {name: entry.get("match_rate") for name, entry in by_type.items() if isinstance(entry, dict)}
            for name in values:
                if name not in types:
                    types.append(name)
            series[result_label(result)] = values
    if series:
        data = {name: [v.get(t) if is_number(v.get(t)) else None for t in types] for name, v in list(series.items())[:MAX_CHART_ROWS]}
        svg = bar_chart(types, data, title="Step match rate by step type", y_range=(0.0, 1.0), y_label="match rate",
                        width=max(640, 60 * len(types) + 260))
        figures.append(Figure("Step match by type", "svg", svg, "From each result's by_type.", "match-by-type.svg"))
    return figures
