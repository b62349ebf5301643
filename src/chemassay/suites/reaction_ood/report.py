"""The reaction-ood suite's pictures in the report: its failure gallery and its charts."""

from __future__ import annotations

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
from chemassay.report.scorecard.plots import MAX_CHART_ROWS, Figure, is_number, result_label
from chemassay.report.scorecard.svg import bar_chart, line_chart


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
        no_field=("these results carry no per-reaction predictions: a reaction-ood evaluate result lists "
                  "them in details.items = [{id, reactants, target, predictions: [ranked SMILES], rank}]"),
        no_item="every reaction's top-1 prediction is right",
    )


def _split_label(result: Result) -> str | None:
    """A short name of a result's test set: ``random``, ``document OOD``, ``time >2004``,
    ``all-suzuki OOD``... (``ID``: the in-distribution ``test`` part, ``OOD``: ``test_ood``)."""
    setting = result.setting
    split, part = setting.get("split"), setting.get("part", "")
    if not split:
        return None
    if split == "time" and setting.get("cutoff") and part in ("test", "test_ood"):
        return f"time {'≤' if part == 'test' else '>'}{setting['cutoff']}"
    name = setting.get("held_out") or split
    if split == "random" and part == "test":
        return name
    return f"{name} {dict(test='ID', test_ood='OOD').get(part, part)}".strip()


def accuracy_by_split(results: list[Result]) -> Figure | None:
    """Top-1 accuracy of every ``evaluate`` result that names its split, one bar per model and
    test set, with its 95 % interval (the paper's Figs. 2 and 4)."""
    categories: list[str] = []
    cells: dict[str, dict[str, tuple[float, tuple[float, float] | None]]] = {}
    for result in results:
        label = _split_label(result) if result.task == "evaluate" else None
        value = result.metrics.get("top1_accuracy")
        if label is None or not is_number(value):
            continue
        if label not in categories:
            categories.append(label)
        interval = result.intervals.get("top1_accuracy")
        bounds = (interval.low, interval.high) if interval is not None and is_number(interval.low) \
            and is_number(interval.high) else None
        cells.setdefault(model_name(result), {})[label] = (float(value), bounds)
    if not categories:
        return None
    models = list(cells)[:MAX_CHART_ROWS]
    series = {m: [cells[m][c][0] if c in cells[m] else None for c in categories] for m in models}
    errors = {m: [cells[m][c][1] if c in cells[m] else None for c in categories] for m in models}
    svg = bar_chart(categories, series, title="Top-1 accuracy by split and test set", y_label="top-1 accuracy",
                    y_range=(0.0, 1.0), errors=errors, width=max(560, 90 * len(categories) + 330), height=320)
    caption = ("Bars: top-1 accuracy of each result that names its split (ID: the split's in-distribution test "
               "part; OOD: new patents, a held-out reaction type; time: test years up to / after the training "
               "cutoff); whiskers: the results' 95 % intervals (Wilson; bootstrap in results written before).")
    if len(cells) > MAX_CHART_ROWS:
        caption += (f" {MAX_CHART_ROWS} of {len(cells)} models (more bars per group would be unreadable); left out, "
                    f"all in the leaderboards: {', '.join(list(cells)[MAX_CHART_ROWS:])}.")
    return Figure("Accuracy by split", "svg", svg, caption, "accuracy-by-split.svg")


def accuracy_by_year(results: list[Result]) -> Figure | None:
    """Top-1 accuracy per test year from each result's ``details.breakdowns["year"]``."""
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
        return None
    svg = line_chart(dict(list(series.items())[:MAX_CHART_ROWS]), title="Top-1 accuracy by year of the test reaction",
                     x_label="year", y_label="top-1 accuracy", y_range=(0.0, 1.0), integer_x=True)
    caption = "From each result's details.breakdowns.year."
    if len(series) > MAX_CHART_ROWS:
        caption += (f" {MAX_CHART_ROWS} of {len(series)} results (more lines would be unreadable); left out: "
                    f"{', '.join(list(series)[MAX_CHART_ROWS:])}.")
    return Figure("Accuracy by year", "svg", svg, caption, "accuracy-by-year.svg")


def reaction_ood_charts(results: list[Result], boards: list | None = None) -> list[Figure]:
    """Top-1 accuracy by split (with intervals) and by year of the test reaction."""
    return [figure for figure in (accuracy_by_split(results), accuracy_by_year(results)) if figure is not None]


# --- Bradshaw et al. Table S2.2, in the paper's shape ---------------------------------------------
_S22_ROWS = {("random", "test"): "on reactions (random)", ("document", "test_ood"): "on documents",
             ("author", "test_ood"): "on authors"}
"""A result's (split, part) → the Table S2.2 row it measures (the document and author splits'
new-patent / new-author test sets, the random split's test set)."""


def _s22_row(result: Result) -> str | None:
    setting = result.setting or {}
    if result.task != "evaluate":
        return None
    return _S22_ROWS.get((str(setting.get("split")), str(setting.get("part"))))


def _document_figure(table, results: list[Result]) -> Figure | None:
    """Top-1 on the random split against the document split (new patents): the paper's finding
    is that a split by document costs accuracy a random split hides."""
    rows = {"random": "on reactions (random)", "document": "on documents"}
    series: dict[str, list[float | None]] = {}
    errors: dict[str, list[tuple[float, float] | None]] = {}
    names = list(dict.fromkeys(row.label for row in table.rows if row.kind == "yours"))
    for name in names:
        mine = {row.anchor: row.cells[0] for row in table.rows if row.kind == "yours" and row.label == name}
        cells = [mine.get(label) for label in rows.values()]
        series[name] = [c.value if c is not None else None for c in cells]
        errors[name] = [(c.low, c.high) if c is not None and c.low is not None else None for c in cells]
    paper = {row.label: row.cells[0] for row in table.rows if row.kind == "paper"}
    if paper:
        series["paper (Pistachio)"] = [paper[label].value if paper.get(label) else None for label in rows.values()]
    if not any(v is not None for vs in series.values() for v in vs):
        return None
    svg = bar_chart(list(rows), series, title="Top-1: random vs document split", y_label="top-1 accuracy",
                    y_range=(0.0, 1.0), errors=errors, width=380, height=240)
    return Figure("Random vs document split", "svg", svg,
                  "Top-1 accuracy on a random split and on new patents (document split). Whiskers: 95 % intervals; "
                  "the paper's bars are its BART model on Pistachio (other data: compare the drop, not the level).",
                  "reaction-ood-paper-document.svg")


def _paper_table():
    return PaperTableSpec(
        table="Table S2.2", title="top-k accuracy on reaction-, document- and author-based splits",
        columns=tuple(PaperColumn(f"top-{k}", f"top{k}_accuracy") for k in range(1, 6)), unit="fraction", digits=2,
        row_header="split", user_row=_s22_row, figure=_document_figure,
        note="The paper trained on Pistachio (1M reactions); yours are on the data named under the table: compare "
             "how accuracy drops from the random split to new documents and authors, not the levels.")


PAPER_TABLE = _paper_table()
"""Bradshaw et al. Table S2.2 (splits × top-1…top-5), the user's splits under the paper's."""
