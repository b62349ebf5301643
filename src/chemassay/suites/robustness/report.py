"""The robustness suite's pictures in the report: its failure gallery and its charts."""

from __future__ import annotations

import re

from chemassay.contract.result import Result
from chemassay.report.paper_tables import PaperColumn, PaperTableSpec
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
        caption = "AMORE retrieval: higher is more robust."
        if len(series) > len(data):
            left_out = [name for name in series if name not in data]
            caption += (f" {len(data)} of {len(series)} results (more bars per group would be unreadable); left out, "
                        f"all in the leaderboards: {', '.join(left_out)}.")
        figures.append(Figure("Acc@1 per augmentation", "svg", svg, caption, "acc1-per-augmentation.svg"))
    for result in results:
        curves = _layer_curves(result)
        if curves:
            svg = line_chart(dict(list(curves.items())[:MAX_CHART_ROWS]), title=f"Layer-wise retrieval Acc@1: {result_label(result)}",
                             x_label="layer", y_label="Acc@1", y_range=(0.0, 1.0), integer_x=True)
            figures.append(Figure(f"Layer-wise: {result_label(result)}", "svg", svg,
                                  "Retrieval from each layer's embeddings (original → augmented).",
                                  slug("layers " + result_label(result)) + ".svg"))
    return figures


# --- AMORE Table 1, in the paper's shape ------------------------------------------------------------
_REWRITES = (("canon", "canonical"), ("hydro", "explicit_h"), ("kekul", "kekulize"), ("cycle", "cycle_renumber_amore"))
_PAPER_SHOWN = ("Text+Chem T5-standard", "GNN (DGL-LifeSci)")
"""The paper's rows the figure draws beside the user's: its best language model and its graph model."""


def _chebi_row(result: Result) -> str | None:
    """Every ChEBI-20 retrieval result is a row of Table 1 (placed by its canonical Acc@1)."""
    return "" if result.task == "evaluate" and (result.setting or {}).get("dataset") == "chebi20" else None


def _rewrite_figure(table, results: list[Result]) -> Figure | None:
    """Acc@1 per rewrite: the paper's finding is that a language model's embedding stops
    recognising the same molecule written another way (explicit hydrogens above all), while a
    graph model does not."""
    picks = [i for i, column in enumerate(table.columns) if column.label == "Acc@1"]
    series: dict[str, list[float | None]] = {}
    errors: dict[str, list[tuple[float, float] | None]] = {}
    for row in table.rows:
        if row.kind == "paper" and row.label not in _PAPER_SHOWN:
            continue
        name = f"paper: {row.label}" if row.kind == "paper" else row.label
        cells = [row.cells[i] for i in picks]
        series[name] = [c.value if c is not None else None for c in cells]
        errors[name] = [(c.low, c.high) if c is not None and c.low is not None else None for c in cells]
    svg = bar_chart([group for group, _ in _REWRITES], series, title="Acc@1 (%) per rewrite", y_label="Acc@1 %",
                    y_range=(0.0, 100.0), errors=errors, width=400, height=240)
    return Figure("Acc@1 per rewrite", "svg", svg,
                  "Original → rewritten SMILES retrieval on ChEBI-20 (Acc@1, %): yours with 95 % intervals beside the "
                  "paper's best language model and its graph model.", "robustness-paper-rewrites.svg")


def _paper_table():
    columns = []
    for group, rewrite in _REWRITES:
        columns += [PaperColumn("Acc@1", f"{rewrite}/o2a_acc@1", group, digits=2),
                    PaperColumn("Acc@5", f"{rewrite}/o2a_acc@5", group, digits=2),
                    PaperColumn("MRR", f"{rewrite}/o2a_mrr", group, digits=1)]
    return PaperTableSpec(
        table="Table 1", title="ChEBI-20 retrieval of each molecule's rewritten SMILES (Acc@1, Acc@5, MRR)",
        columns=tuple(columns), unit="percent", digits=2, user_row=_chebi_row, rank_by=0, figure=_rewrite_figure,
        note="Rows ordered by canonical Acc@1 (the paper lists them by model family), so your rows stand at their rank.")


PAPER_TABLE = _paper_table()
"""AMORE Table 1 (models × rewrites × Acc@1/Acc@5/MRR, %), the user's models at their rank."""
