"""The reaction-ood suite's pictures in the report: its failure gallery and its charts."""

from __future__ import annotations

from chemassay.report.result import Result
from chemassay.report.scorecard.depict import depict
from chemassay.report.scorecard.galleries import (
    DEFAULT_LIMIT,
    Gallery,
    GalleryItem,
    Panel,
    entry_gallery,
    model_name,
    result_field,
)
from chemassay.report.scorecard.plots import MAX_CHART_ROWS, Figure, is_number, result_label
from chemassay.report.scorecard.svg import line_chart


def _wrong_top1(result: Result, item: dict) -> GalleryItem | None:
    if item.get("rank") == 1 or not item.get("predictions"):
        return None
    top1 = str(item["predictions"][0])
    rank = item.get("rank")
    found = f"true product at rank {rank}" if rank else "true product not among the predictions"
    reactants, target = str(item.get("reactants", "")), str(item.get("target", ""))
    return GalleryItem(
        caption=f"{model_name(result)} · {item.get('id', '?')} · {found}",
        panels=[Panel("reactants", depict(reactants, (), 300, 170), reactants),
                Panel("predicted top-1", depict(top1), top1),
                Panel("true product", depict(target), target)],
    )


def reaction_ood_gallery(results: list[Result], limit: int = DEFAULT_LIMIT) -> Gallery:
    """Wrong top-1 products beside the true product."""
    return entry_gallery(
        Gallery("reaction-ood", "Wrong top-1 products beside the true product"), results, "items", limit,
        _wrong_top1,
        no_field=("these results carry no per-reaction predictions: reaction-ood should write items = "
                  "[{id, reactants, target, predictions: [ranked SMILES], rank}]"),
        no_item="every reaction's top-1 prediction is right",
    )


def reaction_ood_charts(results: list[Result], boards: list | None = None) -> list[Figure]:
    """Top-1 accuracy by year from ``breakdowns.year``."""
    series = {}
    for result in results:
        years = (result_field(result, "breakdowns") or {}).get("year")
        if not isinstance(years, list):
            continue
        points = [(float(entry["group"]), float(entry["top1_accuracy"])) for entry in years
                  if isinstance(entry, dict) and is_number(entry.get("group")) and is_number(entry.get("top1_accuracy"))]
        if points:
            name = result_label(result)
            while name in series:
                name += "'"
            series[name] = points
    if not series:
        return []
    svg = line_chart(dict(list(series.items())[:MAX_CHART_ROWS]), title="Top-1 accuracy by year of the test reaction",
                     x_label="year", y_label="top-1 accuracy", y_range=(0.0, 1.0), integer_x=True)
    return [Figure("Accuracy by year", "svg", svg, "From each result's breakdowns.year.", "accuracy-by-year.svg")]
