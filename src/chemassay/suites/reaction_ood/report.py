"""The reaction-ood suite's pictures in the report: its failure gallery and its charts."""

from __future__ import annotations

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
        caption += f" First {MAX_CHART_ROWS} of {len(cells)} models."
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
    return Figure("Accuracy by year", "svg", svg, "From each result's details.breakdowns.year.", "accuracy-by-year.svg")


def reaction_ood_charts(results: list[Result], boards: list | None = None) -> list[Figure]:
    """Top-1 accuracy by split (with intervals) and by year of the test reaction."""
    return [figure for figure in (accuracy_by_split(results), accuracy_by_year(results)) if figure is not None]
