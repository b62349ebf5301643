"""The robustness suite's pictures in the report: its failure gallery and its charts."""

from __future__ import annotations

import re

from chemassay.contract.result import Result
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
from chemassay.report.scorecard.plots import MAX_CHART_ROWS, Figure, is_number, result_label, slug
from chemassay.report.scorecard.svg import bar_chart, line_chart


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
        caption=f"{model_name(result)} · {miss.get('augmentation', '?')} · {miss.get('id', '?')}"
                + (f" · true match at rank {rank}" if rank else ""),
        panels=panels,
    )


def robustness_gallery(results: list[Result], limit: int = DEFAULT_LIMIT) -> Gallery:
    """Retrieval misses: the two strings of one molecule side by side."""
    return entry_gallery(
        Gallery("robustness", "Retrieval misses: two strings of one molecule that the model keeps apart"),
        results, "misses", limit, _retrieval_miss,
        no_field=("these results carry no retrieval misses: robustness should write misses = "
                  "[{augmentation, id, original, augmented, retrieved, rank}]"),
        no_item="no retrieval miss",
    )


_AMORE_ACC1 = re.compile(r"^([^/]+)/o2a_acc@1$")
_LAYER_ACC1 = re.compile(r"^(?:([^/]+)/)?layer(\d+)/o2a_acc@1$")


def _layer_curves(result: Result) -> dict[str, list[tuple[float, float]]]:
    """Acc@1 per layer, per augmentation: from the ``[augmentation/]layerN/o2a_acc@1`` metrics,
    else from ``details.per_layer`` (augmentation → the metrics of every layer)."""
    curves: dict[str, list[tuple[float, float]]] = {}
    for key, value in result.metrics.items():
        match = _LAYER_ACC1.match(key)
        if match and is_number(value):
            curves.setdefault(match.group(1) or "o2a_acc@1", []).append((float(match.group(2)), float(value)))
    per_layer = result_field(result, "per_layer")
    if not curves and isinstance(per_layer, dict):
        for augmentation, layers in list(per_layer.items())[:MAX_CHART_ROWS]:
            points = [(float(layer), float(values["o2a_acc@1"])) for layer, values in enumerate(layers or [])
                      if isinstance(values, dict) and is_number(values.get("o2a_acc@1"))]
            if len(points) > 1:
                curves[augmentation] = points
    return curves


def robustness_charts(results: list[Result], boards: list | None = None) -> list[Figure]:
    """Acc@1 per augmentation, and layer-wise curves (``--layers all`` runs)."""
    figures = []
    series, augmentations = {}, []
    for result in results:
        values = {}
        for key, value in result.metrics.items():
            match = _AMORE_ACC1.match(key)
            if match and is_number(value):
                values[match.group(1)] = float(value)
                if match.group(1) not in augmentations:
                    augmentations.append(match.group(1))
        if values:
            series[result_label(result)] = values
    if series:
        data = {name: [values.get(a) for a in augmentations] for name, values in list(series.items())[:MAX_CHART_ROWS]}
        errors = {}
        for result in results:
            name = result_label(result)
            if name in data:
                errors[name] = [(result.intervals[f"{a}/o2a_acc@1"].low, result.intervals[f"{a}/o2a_acc@1"].high)
                                if f"{a}/o2a_acc@1" in result.intervals else None for a in augmentations]
        svg = bar_chart(augmentations, data, title="Retrieval Acc@1 (original → augmented) per augmentation",
                        y_range=(0.0, 1.0), errors=errors, y_label="Acc@1")
        figures.append(Figure("Acc@1 per augmentation", "svg", svg, "AMORE retrieval: higher is more robust.",
                              "acc1-per-augmentation.svg"))
    for result in results:
        curves = _layer_curves(result)
        if curves:
            svg = line_chart(dict(list(curves.items())[:MAX_CHART_ROWS]), title=f"Layer-wise retrieval Acc@1: {result_label(result)}",
                             x_label="layer", y_label="Acc@1", y_range=(0.0, 1.0), integer_x=True)
            figures.append(Figure(f"Layer-wise: {result_label(result)}", "svg", svg,
                                  "Retrieval from each layer's embeddings (original → augmented).",
                                  slug("layers " + result_label(result)) + ".svg"))
    return figures
