"""The plots of a suite section: the pictures results point to, and SVG charts drawn from the
data results carry.

* **Pictures a result points to.** Any string field of a result's details ending in ``.png``,
  ``.svg``, ``.jpg`` or ``.jpeg`` (``plot``, ``plots``, ``figures``: a string, a list or a
  dict of paths), resolved against the result file's folder and then the working folder.
  Missing files are listed in the report, not silently dropped.
* **Charts from data**: every leaderboard's 0–1 metric columns, per row, with intervals;
  and the charts each suite declares (``Suite.charts``, a function ``(results, leaderboards)
  -> list[Figure]`` in the suite's ``report`` module).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chemassay.contract.result import Result
from chemassay.report.cards import all_cards, card_for
from chemassay.report.load import source_of
from chemassay.report.scorecard.leaderboard import Leaderboard
from chemassay.report.scorecard.svg import bar_chart
from chemassay.report.store import model_label

IMAGE_SUFFIXES = (".png", ".svg", ".jpg", ".jpeg")
MAX_CHART_ROWS = 24
"""Bars per group a chart draws at most (a table with more rows lists the rest by name)."""
MAX_BOARD_CHARTS = 6
"""Leaderboards of a section that get their own bar chart (a suite's own charts sum up the rest)."""


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


def slug(text: str) -> str:
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
        fields = dict(result.details.model_dump()) if result.details is not None else {}
        for name, value in fields.items():
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


def _chart_keys(board: Leaderboard) -> list:
    """Columns of a board worth a 0–1 bar chart: declared with range [0, 1], or (without a
    card) holding values in [0, 1] that are not all whole numbers (counts are left out)."""
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


def leaderboard_charts(board: Leaderboard) -> list[Figure]:
    """Grouped bars of the board's 0–1 metrics, one chart per better-direction (↑ and ↓ never
    share a chart), with intervals. The user's rows come first; published rows follow only
    where they have a value of the charted metrics: every such row up to
    :data:`MAX_CHART_ROWS`, and past that the caption names the rows left out."""
    keys = _chart_keys(board)
    figures = []
    for direction in ("higher", "lower", "none"):
        chosen = [c for c in keys if c.direction == direction]
        if not chosen:
            continue
        with_values = [row for row in board.rows
                       if any(row.cells.get(c.key) is not None and row.cells[c.key].value is not None for c in chosen)]
        users = [row for row in with_values if row.result is not None]
        others = [row for row in with_values if row.result is None]
        rows = (users + others)[:MAX_CHART_ROWS]
        if not rows:
            continue
        series, errors = {}, {}
        for row in rows:
            name = ("paper: " if row.published else "") + row.label
            while name in series:
                name += "'"
            cells = [row.cells.get(c.key) for c in chosen]
            series[name] = [c.value if c is not None else None for c in cells]
            errors[name] = [c.reach() if c is not None and (c.low is not None or c.std is not None) else None
                            for c in cells]
        arrow = {"higher": " (↑ higher is better)", "lower": " (↓ lower is better)"}.get(direction, "")
        # the figure's caption names the board; inside the picture only what the bars mean
        title = arrow.strip(" ()") or "values"
        svg = bar_chart([c.label for c in chosen], series, title=title, y_range=(0.0, 1.0), errors=errors,
                        width=max(560, min(1100, 12 * len(rows) * len(chosen) + 330)), height=300)
        caption = "Bars: values; whiskers: 95 % intervals (yours) or the paper's ± std."
        if len(with_values) > len(rows):
            left_out = [row.label for row in (users + others)[len(rows):]]
            caption += (f" {len(rows)} of the {len(with_values)} rows with a value (yours first; more bars per group "
                        f"would be unreadable); left out, all in the table above: {', '.join(left_out)}.")
        name = slug(board.title + ("" if direction == "higher" else f" {direction}")) + ".svg"
        figures.append(Figure(board.title + arrow, "svg", svg, caption, name))
    return figures


def result_label(result: Result) -> str:
    """A chart's name for a result: the model and the setting it was measured in."""
    return f"{model_label(result)}{_setting_suffix(result)}"


def _setting_suffix(result: Result) -> str:
    parts = [str(value) for value in (result.setting or {}).values() if value]
    return f" ({' '.join(parts)})" if parts else ""


def is_number(value: Any) -> bool:
    """A finite int or float (not a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def suite_figures(suite: str, results: list[Result], boards: list[Leaderboard]) -> list[Figure]:
    """Every figure of a suite section, charts from data first, then pointed-to pictures."""
    figures = [figure for board in boards[:MAX_BOARD_CHARTS] for figure in leaderboard_charts(board)]
    from chemassay.suites import find_suite

    declared = find_suite(suite)
    charts = declared.load("charts") if declared is not None else None
    if charts is not None:
        figures += charts(results, boards)
    drawn = {figure.path for figure in figures if figure.path is not None}
    drawn |= {str(figure.data) for figure in figures if figure.kind == "missing"}
    for figure in pointed_pictures(results):
        # a picture the suite's charts already show (or already report missing) is not repeated
        if (figure.path is not None and figure.path in drawn) or (figure.kind == "missing" and str(figure.data) in drawn):
            continue
        figures.append(figure)
    return figures
