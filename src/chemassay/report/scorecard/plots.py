"""The plots of a suite section: the pictures results point to, and SVG charts drawn from the
data results carry.

* **Pictures a result points to.** Any top-level string field of a result ending in ``.png``,
  ``.svg``, ``.jpg`` or ``.jpeg`` (``plot``, ``plots``, ``figures``: a string, a list or a
  dict of paths), resolved against the result file's folder and then the working folder.
  Missing files are listed in the report, not silently dropped.
* **Charts from data** (drawn when the field is there):

  - every leaderboard: its metric columns with a 0–1 range, per row, with intervals;
  - reaction-ood ``breakdowns.year`` (``[{"group": year, "top1_accuracy": …}]``): accuracy
    by year;
  - robustness ``{augmentation}/o2a_acc@1`` keys: Acc@1 per augmentation; and the
    layer-wise curves, from ``[{augmentation}/]layer{n}/o2a_acc@1`` keys or a ``by_layer``
    field (``[{"layer": 0, "<metric key>": value, ...}]``);
  - mechanism ``by_level`` (``{"easy": {"S_total": …}}``) and ``by_type``
    (``{"addition": {"match_rate": …}}``): oMeS by difficulty and step match by type.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chemassay.report.result import Result
from chemassay.report.scorecard.leaderboard import Leaderboard
from chemassay.report.scorecard.svg import bar_chart, line_chart

IMAGE_SUFFIXES = (".png", ".svg", ".jpg", ".jpeg")
MAX_CHART_ROWS = 10


@dataclass
class Figure:
    """One picture of the report."""

    title: str
    kind: str
    """``svg`` (``data`` is SVG text), ``png``/``jpeg`` (``data`` is bytes) or ``missing``."""
    data: str | bytes
    caption: str = ""
    name: str = ""
    """A file name for the Markdown version's assets folder."""
    path: Path | None = None
    """The picture file it was read from, if any."""


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "figure"


def _paths_in(value: Any) -> list[str]:
    if isinstance(value, str) and value.lower().endswith(IMAGE_SUFFIXES):
        return [value]
    if isinstance(value, list):
        return [p for item in value for p in _paths_in(item)]
    if isinstance(value, dict):
        return [p for item in value.values() for p in _paths_in(item)]
    return []


def _resolve(path: str, result: Result) -> Path | None:
    from chemassay.report.load import source_of

    candidate = Path(path)
    options = [candidate] if candidate.is_absolute() else []
    source = source_of(result)
    if source and not candidate.is_absolute():
        options.append(Path(source).parent / candidate)
        options.append(Path(source).parent / candidate.name)
    options.append(candidate)
    return next((p for p in options if p.is_file()), None)


def image_figure(path: Path, title: str | None = None, caption: str = "") -> Figure:
    """A figure of a picture file (PNG/JPEG as bytes, SVG as text)."""
    suffix = path.suffix.lower()
    if suffix == ".svg":
        text = path.read_text(encoding="utf-8")
        text = text[text.index("<svg"):] if "<svg" in text else text
        return Figure(title or path.stem, "svg", text, caption, path.name, path.resolve())
    return Figure(title or path.stem, "jpeg" if suffix in (".jpg", ".jpeg") else "png", path.read_bytes(), caption,
                  path.name, path.resolve())


def pointed_pictures(results: list[Result]) -> list[Figure]:
    """Pictures the results point to (see the module docstring); unreadable ones as ``missing``."""
    figures: list[Figure] = []
    seen: set[Path] = set()
    for result in results:
        extra = result.model_extra or {}
        for name, value in extra.items():
            for path_text in _paths_in(value):
                found = _resolve(path_text, result)
                if found is None:
                    figures.append(Figure(Path(path_text).stem, "missing", path_text, f"{result.task}: field '{name}'"))
                    continue
                resolved = found.resolve()
                if resolved in seen:
                    continue
                seen.add(resolved)
                figures.append(image_figure(found, caption=f"{result.task} · field '{name}'"))
    return figures


def _short(text: str, limit: int = 32) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _chart_keys(board: Leaderboard) -> list:
    """Columns of a board worth a 0–1 bar chart: declared with range [0, 1], or (without a
    card) holding values in [0, 1] that are not all whole numbers (counts are left out)."""
    from chemassay.report.cards import all_cards, card_for

    has_cards = bool(all_cards(board.suite)) if board.suite else False
    chosen = []
    for column in board.columns:
        card = card_for(board.suite, column.key)
        values = [row.cells.get(column.key) for row in board.rows]
        values = [c.value for c in values if c is not None and c.value is not None]
        if not values:
            continue
        if card is not None:
            if card.range == (0.0, 1.0):
                chosen.append(column)
        elif not has_cards and all(0.0 <= v <= 1.0 for v in values) and not all(float(v).is_integer() for v in values):
            chosen.append(column)
    return chosen


def leaderboard_chart(board: Leaderboard) -> Figure | None:
    """Grouped bars of the board's 0–1 metrics (rows as series), with intervals."""
    keys = _chart_keys(board)
    if not keys:
        return None
    rows = board.rows[:MAX_CHART_ROWS]
    series, errors = {}, {}
    for row in rows:
        name = ("paper: " if row.published else "") + row.label
        while name in series:
            name += "'"
        cells = [row.cells.get(c.key) for c in keys]
        series[name] = [c.value if c is not None else None for c in cells]
        errors[name] = [(c.low, c.high) if c is not None and c.low is not None and c.high is not None else None for c in cells]
    svg = bar_chart([c.label for c in keys], series, title=_short(board.title, 90), y_range=(0.0, 1.0), errors=errors,
                    width=max(560, 70 * len(keys) + 330), height=300)
    caption = "Bars: values; whiskers: 95 % intervals."
    if len(board.rows) > MAX_CHART_ROWS:
        caption += f" First {MAX_CHART_ROWS} of {len(board.rows)} rows."
    return Figure(board.title, "svg", svg, caption, _slug(board.title) + ".svg")


def _label(result: Result) -> str:
    from chemassay.report.store import model_label

    return f"{model_label(result)}{_setting_suffix(result)}"


def reaction_ood_charts(results: list[Result]) -> list[Figure]:
    """Top-1 accuracy by year from ``breakdowns.year``."""
    series = {}
    for result in results:
        years = ((result.model_extra or {}).get("breakdowns") or {}).get("year")
        if not isinstance(years, list):
            continue
        points = [(float(entry["group"]), float(entry["top1_accuracy"])) for entry in years
                  if isinstance(entry, dict) and _num(entry.get("group")) and _num(entry.get("top1_accuracy"))]
        if points:
            name = _label(result)
            while name in series:
                name += "'"
            series[name] = points
    if not series:
        return []
    svg = line_chart(dict(list(series.items())[:MAX_CHART_ROWS]), title="Top-1 accuracy by year of the test reaction",
                     x_label="year", y_label="top-1 accuracy", y_range=(0.0, 1.0), integer_x=True)
    return [Figure("Accuracy by year", "svg", svg, "From each result's breakdowns.year.", "accuracy-by-year.svg")]


def _setting_suffix(result: Result) -> str:
    config = result.config or {}
    parts = [str(config[k]) for k in ("split", "part") if config.get(k)]
    return f" ({' '.join(parts)})" if parts else ""


def _num(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


_AMORE_ACC1 = re.compile(r"^([^/]+)/o2a_acc@1$")
_LAYER_ACC1 = re.compile(r"^(?:([^/]+)/)?layer(\d+)/o2a_acc@1$")


def _layer_curves(result: Result) -> dict[str, list[tuple[float, float]]]:
    """Acc@1 per layer, per augmentation, from ``by_layer`` or from ``[augmentation/]layerN/o2a_acc@1`` keys."""
    curves: dict[str, list[tuple[float, float]]] = {}
    for key, value in result.metrics.items():
        match = _LAYER_ACC1.match(key)
        if match and _num(value):
            curves.setdefault(match.group(1) or "o2a_acc@1", []).append((float(match.group(2)), float(value)))
    layers = (result.model_extra or {}).get("by_layer")
    if isinstance(layers, list) and layers and isinstance(layers[0], dict):
        keys = [k for k in layers[0] if k != "layer" and _num(layers[0].get(k))][:MAX_CHART_ROWS]
        for k in keys:
            points = [(float(e["layer"]), float(e[k])) for e in layers
                      if isinstance(e, dict) and _num(e.get("layer")) and _num(e.get(k))]
            if points:
                curves[k] = points
    return curves


def robustness_charts(results: list[Result]) -> list[Figure]:
    """Acc@1 per augmentation, and layer-wise curves from ``by_layer``."""
    figures = []
    series, augmentations = {}, []
    for result in results:
        values = {}
        for key, value in result.metrics.items():
            match = _AMORE_ACC1.match(key)
            if match and _num(value):
                values[match.group(1)] = float(value)
                if match.group(1) not in augmentations:
                    augmentations.append(match.group(1))
        if values:
            series[_label(result)] = values
    if series:
        data = {name: [values.get(a) for a in augmentations] for name, values in list(series.items())[:MAX_CHART_ROWS]}
        errors = {}
        for result in results:
            name = _label(result)
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
            svg = line_chart(dict(list(curves.items())[:MAX_CHART_ROWS]), title=f"Layer-wise retrieval Acc@1: {_label(result)}",
                             x_label="layer", y_label="Acc@1", y_range=(0.0, 1.0), integer_x=True)
            figures.append(Figure(f"Layer-wise: {_label(result)}", "svg", svg,
                                  "Retrieval from each layer's embeddings (original → augmented).",
                                  _slug("layers " + _label(result)) + ".svg"))
    return figures


def mechanism_charts(results: list[Result]) -> list[Figure]:
    """oMeS by difficulty (``by_level``) and step match rate by type (``by_type``)."""
    figures = []
    levels: list[str] = []
    series = {}
    for result in results:
        by_level = (result.model_extra or {}).get("by_level")
        if isinstance(by_level, dict):
            values = {level: entry.get("S_total") for level, entry in by_level.items() if isinstance(entry, dict)}
            for level in values:
                if level not in levels:
                    levels.append(level)
            series[_label(result)] = values
    if series:
        data = {name: [v.get(level) if _num(v.get(level)) else None for level in levels]
                for name, v in list(series.items())[:MAX_CHART_ROWS]}
        svg = bar_chart(levels, data, title="oMeS-total by difficulty", y_range=(0.0, 1.0), y_label="S_total")
        figures.append(Figure("oMeS by difficulty", "svg", svg, "From each result's by_level.", "oms-by-difficulty.svg"))
    types: list[str] = []
    series = {}
    for result in results:
        by_type = (result.model_extra or {}).get("by_type")
        if isinstance(by_type, dict):
            values = {name: entry.get("match_rate") for name, entry in by_type.items() if isinstance(entry, dict)}
            for name in values:
                if name not in types:
                    types.append(name)
            series[_label(result)] = values
    if series:
        data = {name: [v.get(t) if _num(v.get(t)) else None for t in types] for name, v in list(series.items())[:MAX_CHART_ROWS]}
        svg = bar_chart(types, data, title="Step match rate by step type", y_range=(0.0, 1.0), y_label="match rate",
                        width=max(640, 60 * len(types) + 260))
        figures.append(Figure("Step match by type", "svg", svg, "From each result's by_type.", "match-by-type.svg"))
    return figures


SUITE_CHARTS = {"reaction-ood": reaction_ood_charts, "robustness": robustness_charts, "mechanism": mechanism_charts}


def suite_figures(suite: str, results: list[Result], boards: list[Leaderboard]) -> list[Figure]:
    """Every figure of a suite section, charts from data first, then pointed-to pictures."""
    figures = [f for f in (leaderboard_chart(board) for board in boards) if f is not None]
    charts = SUITE_CHARTS.get(suite)
    if charts is not None:
        figures += charts(results)
    figures += pointed_pictures(results)
    return figures
