"""Each paper's headline table in the paper's own shape, with the user's rows among the paper's.

A suite declares the shape of its paper's headline table in its ``report`` module (a
:class:`PaperTableSpec`, registered as ``Suite.paper_table``): which published table, its rows
(the paper's models, variants or splits), its columns (metric key, the spanning group it sits
under, the setting it was measured in, the decimals the paper prints), its unit, where a user's
result goes (beside the paper row it reproduces, at its rank, or last) and the one small figure
that shows the paper's central finding. This module builds any declared shape from results and
the shipped published rows (:func:`build_paper_table`); the scorecard renders it first on the
page, and :mod:`chemassay.report.export` writes it as LaTeX, Markdown or CSV.

Paper rows keep the text the paper printed (its precision, its ``± std``, its ``<1e-2``); the
user's rows are printed in the same unit with the same decimals, each value with its 95 %
interval. A ★ marks a best value only where the table is ranked (the user's data is the paper's
data, no quick or subset result) and its interval separates it (:func:`mark_stars`).

>>> spec = PaperTableSpec(table="Table 2", title="Filters, novelty, diversity", unit="fraction", digits=3,
...                       columns=(PaperColumn("Filters", "Filters"), PaperColumn("Novelty", "Novelty")))
>>> from chemassay.contract.result import Result
>>> mine = Result(suite="generation", task="evaluate", metrics={"Filters": 0.9581, "Novelty": 0.97}, n=30000)
>>> table = build_paper_table("generation", spec, [mine])
>>> [row.label for row in table.rows if row.kind == "yours"], table.rows[-1].cells[0].text()
(['evaluate'], ('0.958', ''))
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from chemassay.contract.result import Result
from chemassay.report.cards import by_construction, card_for
from chemassay.report.published import reference_results
from chemassay.report.scorecard.leaderboard import Cell, Column, Leaderboard, Row, mark_best
from chemassay.report.store import model_label

UNIT_WORDS = {"percent": "%", "fraction": "fraction", "value": ""}


@dataclass(frozen=True)
class PaperColumn:
    """One column of a paper's table."""

    label: str
    """The header the paper prints (``EM``, ``top-1``, ``S_total``)."""
    key: str
    """chemassay's metric key of the value (``EM``, ``easy/S_total``)."""
    group: str = ""
    """The spanning header it sits under (``in``, ``canonical``, ``easy``)."""
    where: Mapping[str, str] = field(default_factory=dict)
    """The setting a published record or a result must state for this column (``split=test_in``)."""
    digits: int | None = None
    """Decimals of the user's values (``None``: the table's ``digits``)."""


@dataclass(frozen=True)
class PaperTableSpec:
    """The shape of a paper's headline table (declared by a suite in its ``report`` module)."""

    table: str
    """The published table's id (``Table 4``, ``Table S2.2``)."""
    title: str
    """What the table shows, in a few words."""
    columns: tuple[PaperColumn, ...]
    unit: str = "percent"
    """The unit the paper prints: ``percent`` (values ×100), ``fraction`` or ``value``."""
    digits: int = 2
    """Decimals of the user's values (the paper's precision)."""
    row_header: str = "model"
    """The header of the first column (``variant``, ``split``)."""
    paper_row: Callable[[Any], str | None] | None = None
    """A published record → the paper row it belongs to (default: its label; ``None``: not shown)."""
    user_row: Callable[[Result], str | None] | None = None
    """A result → the paper row it stands beside (``""``: placed by ``rank_by`` or last;
    ``None``: not in this table). Default: every result, placed by ``rank_by`` or last."""
    user_label: Callable[[Result], str] | None = None
    """A result → its row's label (default: the model's name)."""
    value_of: Callable[[Result, PaperColumn], tuple[float, float | None, float | None] | None] | None = None
    """``(value, low, high)`` of a column for a result in chemassay's unit (default: the metric
    and its stored interval)."""
    rank_by: int | None = None
    """The column whose order places a user row among the paper's rows (``None``: last)."""
    descending: bool = True
    """Whether ``rank_by`` is better when higher."""
    unranked_rows: tuple[str, ...] = ()
    """Paper rows that are not models (the training set itself): never starred, never ranked against."""
    figure: Callable[[PaperTable, list[Result]], Any] | None = None
    """``(table, results) -> Figure | None``: the one small figure of the paper's central finding."""
    note: str = ""
    """A line under the table (what differs from the paper's set-up)."""


@dataclass
class TableCell:
    """One value of a paper table, in the table's unit."""

    value: float | None
    low: float | None = None
    high: float | None = None
    std: float | None = None
    printed: str | None = None
    """The paper's own text (paper rows)."""
    digits: int = 2
    best: bool = False
    note: str | None = None
    by_construction: str | None = None
    """Why the value is fixed by construction (a user row: its model's kind is declared on the
    metric's card, :func:`chemassay.report.cards.by_construction`): shown with †, never ★."""

    def text(self) -> tuple[str, str]:
        """``(value, spread)``: the paper's printed value and ``± std``, or the user's value and
        ``[low, high]`` with the column's decimals."""
        if self.printed is not None:
            main, _, spread = self.printed.partition("±")
            return main.strip(), (f"± {spread.strip()}" if spread else "")
        if self.value is None or not math.isfinite(self.value):
            return "–", ""
        main = f"{self.value:.{self.digits}f}"
        if self.low is not None and self.high is not None and math.isfinite(self.low) and math.isfinite(self.high):
            return main, f"[{self.low:.{self.digits}f}, {self.high:.{self.digits}f}]"
        return main, ""


@dataclass
class TableRow:
    """A row: the paper's (``kind="paper"``) or the user's (``kind="yours"``)."""

    label: str
    kind: str
    cells: list[TableCell | None]
    anchor: str = ""
    """The paper row a user row stands beside."""
    notes: tuple[str, ...] = ()
    results: list[Result] = field(default_factory=list)
    quick: bool = False
    subset: bool = False


@dataclass
class PaperTable:
    """A paper's headline table built from results (see the module docstring)."""

    suite: str
    spec: PaperTableSpec
    paper: Any
    """The :class:`~chemassay.report.published.Paper` (``None`` when none is shipped)."""
    caption: str
    paper_data: str
    """The data the paper measured on."""
    your_data: list[str]
    rows: list[TableRow]
    notes: list[str] = field(default_factory=list)
    figure: Any = None
    verdict: str = ""
    ranked: bool = False

    @property
    def columns(self) -> tuple[PaperColumn, ...]:
        """The paper's columns."""
        return self.spec.columns

    @property
    def heading(self) -> str:
        """``ChemAlgebra, Table 4: Transformer baseline on the eight variants``."""
        paper = self.paper.short if self.paper is not None else self.suite
        return f"{paper}, {self.spec.table}: {self.spec.title}"

    @property
    def unit_text(self) -> str:
        """How the values are printed (``values in %``)."""
        return {"percent": "values in %", "fraction": "values as fractions (0–1)"}.get(self.spec.unit, "values")

    def groups(self) -> list[tuple[str, int]]:
        """The spanning headers: ``(group, number of columns)`` in order."""
        spans: list[tuple[str, int]] = []
        for column in self.columns:
            if spans and spans[-1][0] == column.group:
                spans[-1] = (column.group, spans[-1][1] + 1)
            else:
                spans.append((column.group, 1))
        return spans

    @property
    def user_rows(self) -> list[TableRow]:
        """The user's rows."""
        return [row for row in self.rows if row.kind == "yours"]


def _matches(setting: Mapping[str, Any] | None, where: Mapping[str, str]) -> bool:
    setting = setting or {}
    return all(str(setting.get(k)) == str(v) for k, v in where.items())


def _scale(spec: PaperTableSpec) -> float:
    return 100.0 if spec.unit == "percent" else 1.0


def default_value(result: Result, column: PaperColumn) -> tuple[float, float | None, float | None] | None:
    """The metric ``column.key`` of a result with its stored interval (``None``: not a finite number)."""
    value = result.metrics.get(column.key)
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        return None
    interval = result.intervals.get(column.key)
    low = interval.low if interval is not None else None
    high = interval.high if interval is not None else None
    return float(value), low, high


def _paper_rows(suite: str, spec: PaperTableSpec) -> tuple[list[TableRow], Any, str, str | None]:
    records = [r for r in reference_results(suite) if r.table == spec.table and r.published]
    groups: dict[str, list[Any]] = {}
    for record in records:
        label = spec.paper_row(record) if spec.paper_row is not None else record.label
        if label is not None:
            groups.setdefault(label, []).append(record)
    rows = []
    for label, members in groups.items():
        cells: list[TableCell | None] = []
        for column in spec.columns:
            found = next((r for r in members if column.key in r.metrics and _matches(r.setting, column.where)), None)
            if found is None:
                cells.append(None)
                continue
            published = found.metrics[column.key]
            scale = _scale(spec)
            cells.append(TableCell(
                value=None if published.value is None else published.value * scale,
                std=None if published.std is None else published.std * scale,
                printed=published.printed, note=published.note,
                digits=column.digits if column.digits is not None else spec.digits))
        notes = tuple(dict.fromkeys(n for r in members for n in r.notes))
        rows.append(TableRow(label=label, kind="paper", cells=cells, notes=notes))
    paper = records[0].paper if records else None
    dataset = records[0].dataset if records else ""
    data = records[0].data if records else None
    return rows, paper, dataset, data


def _user_rows(spec: PaperTableSpec, results: list[Result]) -> list[TableRow]:
    grouped: dict[tuple[str, str], list[Result]] = {}
    for result in results:
        anchor = spec.user_row(result) if spec.user_row is not None else ""
        if anchor is None:
            continue
        label = spec.user_label(result) if spec.user_label is not None else model_label(result)
        grouped.setdefault((anchor, label), []).append(result)
    value_of = spec.value_of or default_value
    scale = _scale(spec)
    rows = []
    for (anchor, label), members in grouped.items():
        cells: list[TableCell | None] = []
        for column in spec.columns:
            digits = column.digits if column.digits is not None else spec.digits
            found, source = None, None
            for result in members:
                if _matches(result.setting, column.where):
                    found, source = value_of(result, column), result
                    if found is not None:
                        break
            if found is None:
                cells.append(None)
                continue
            value, low, high = found
            reason = by_construction(source, column.key) or by_construction(source, column.key.rsplit("/", 1)[-1])
            cells.append(TableCell(value=value * scale, low=None if low is None else low * scale,
                                   high=None if high is None else high * scale, digits=digits,
                                   by_construction=reason, note=f"† by construction: {reason}" if reason else None))
        quick = any(r.quick for r in members)
        subset = any(r.subset is not None and r.subset.partial for r in members)
        rows.append(TableRow(label=label, kind="yours", cells=cells, anchor=anchor, results=members, quick=quick,
                             subset=subset))
    return rows


def _ranked(spec: PaperTableSpec, rows: list[TableRow]) -> list[TableRow]:
    """The paper's rows ordered by ``spec.rank_by`` (best first; rows without a value and
    unranked rows keep their place at the end and the start), so that a user row's place
    among them is its rank."""
    index = spec.rank_by if spec.rank_by is not None else 0
    sign = -1.0 if spec.descending else 1.0
    first = [row for row in rows if row.label in spec.unranked_rows]
    valued = [row for row in rows if row not in first and row.cells[index] is not None
              and row.cells[index].value is not None]
    rest = [row for row in rows if row not in first and row not in valued]
    return first + sorted(valued, key=lambda row: sign * row.cells[index].value) + rest


def _place(spec: PaperTableSpec, paper: list[TableRow], users: list[TableRow]) -> list[TableRow]:
    """The paper's rows in the paper's order with each user row beside its anchor, at its rank
    (``spec.rank_by``) or last."""
    after: dict[int, list[TableRow]] = {}
    last: list[TableRow] = []
    labels = [row.label for row in paper]
    for row in users:
        if row.anchor and row.anchor in labels:
            after.setdefault(labels.index(row.anchor), []).append(row)
            continue
        cell = row.cells[spec.rank_by] if spec.rank_by is not None and spec.rank_by < len(row.cells) else None
        if cell is None or cell.value is None:
            last.append(row)
            continue
        sign = 1.0 if spec.descending else -1.0
        position = None
        for index, other in enumerate(paper):
            theirs = other.cells[spec.rank_by]
            if other.label in spec.unranked_rows or theirs is None or theirs.value is None:
                continue
            if sign * cell.value > sign * theirs.value:
                position = index
                break
        if position is None:
            last.append(row)
        else:
            after.setdefault(position - 1, []).append(row)
    placed = list(after.get(-1, []))
    for index, row in enumerate(paper):
        placed.append(row)
        placed += after.get(index, [])
    return placed + last


def mark_stars(table: PaperTable) -> None:
    """Mark ★ on the best value of each column where the table is ranked and the best value's
    interval separates it from every other row (the leaderboards' rule,
    :func:`chemassay.report.scorecard.leaderboard.mark_best`); rows the spec declares unranked
    (the training set itself: its novelty is 0 by construction) and values fixed by construction
    (†: the fingerprint encoder on AMORE, a copied product's V) take no part."""
    if not table.ranked:
        return
    rows = [row for row in table.rows if row.label not in table.spec.unranked_rows]
    columns, board_rows = [], []
    for index, column in enumerate(table.columns):
        card = card_for(table.suite, column.key)
        columns.append(Column(key=str(index), label=column.label, direction=card.direction if card else ""))
    for row in rows:
        cells = {}
        for index, cell in enumerate(row.cells):
            if cell is not None and cell.value is not None:
                cells[str(index)] = Cell(value=cell.value, low=cell.low, high=cell.high, std=cell.std,
                                         by_construction=cell.by_construction)
        board_rows.append(Row(label=row.label, published=row.kind == "paper", source="", data="", cells=cells))
    board = Leaderboard(suite=table.suite, task="", dataset=None, setting={}, columns=columns, rows=board_rows)
    mark_best(board)
    for row, board_row in zip(rows, board_rows, strict=True):
        for key, cell in board_row.cells.items():
            if cell.best:
                target = row.cells[int(key)]
                if target is not None:
                    target.best = True


def suite_verdict(suite: str, results: list[Result]) -> str:
    """The suite's one-line verdict of ``results`` (its assay's ``verdict``); empty when the
    suite has none or it cannot sum these results up."""
    from chemassay.suites import find_suite

    declared = find_suite(suite)
    assay = declared.load("assay") if declared is not None else None
    if assay is None or not results:
        return ""
    try:
        return assay.verdict(results) or ""
    except Exception as exc:  # noqa: BLE001 - a verdict that cannot read these results must not lose the report
        return f"(no verdict for these results: {type(exc).__name__})"


def suite_spec(suite: str) -> PaperTableSpec | None:
    """The paper table a suite declares (``Suite.paper_table``), or ``None``."""
    from chemassay.suites import find_suite

    declared = find_suite(suite)
    return declared.load("paper_table") if declared is not None else None


def build_paper_table(suite: str, spec: PaperTableSpec, results: list[Result], *, published: bool = True,
                      figure: bool = True) -> PaperTable:
    """The table ``spec`` declares, the paper's rows (unless ``published`` is false) with the
    user's ``results`` among them (see the module docstring)."""
    paper_rows, paper, dataset, data = _paper_rows(suite, spec) if published else ([], None, "", None)
    if paper is None:
        from chemassay.report.published import papers

        paper = next((p for p in papers() if p.suite == suite), None)
    users = _user_rows(spec, results)
    if spec.rank_by is not None:
        paper_rows = _ranked(spec, paper_rows)
    rows = _place(spec, paper_rows, users)
    your_data = sorted({r.dataset.name for row in users for r in row.results if r.dataset is not None})
    ranked = bool(users) and bool(paper_rows) and data is not None and your_data == [data] and not any(
        row.quick or row.subset for row in users)
    notes = []
    if spec.note:
        notes.append(spec.note)
    if any(row.quick for row in users):
        notes.append("quick: a smoke test on a few items (assay --quick), never ranked")
    if any(row.subset for row in users):
        notes.append("subset: a seeded subset of the items (assay --limit/--precision), never ranked")
    reasons = dict.fromkeys(cell.by_construction for row in users for cell in row.cells
                            if cell is not None and cell.by_construction)
    notes += [f"† {row_reason}: shown, never ranked (no ★)" for row_reason in reasons]
    table = PaperTable(suite=suite, spec=spec, paper=paper, caption="", paper_data=dataset, your_data=your_data,
                       rows=rows, notes=notes, ranked=ranked)
    mark_stars(table)
    if figure and spec.figure is not None and users:
        try:
            table.figure = spec.figure(table, results)
        except Exception as exc:  # noqa: BLE001 - a figure bug must not lose the table
            table.notes.append(f"figure not drawn: {type(exc).__name__}: {exc}")
    return table


def paper_tables(results: list[Result], *, published: bool = True, suites: Sequence[str] | None = None,
                 verdicts: Mapping[str, str] | None = None, with_verdicts: bool = True) -> list[PaperTable]:
    """The paper table of every suite with results (in suite order), each with its verdict
    (``verdicts`` given, else the suite's assay's verdict of the results; none with
    ``with_verdicts=False``, for a caller that has them already)."""
    from chemassay.suites import suite_names

    by_suite: dict[str, list[Result]] = {}
    for result in results:
        by_suite.setdefault(result.suite.replace("_", "-"), []).append(result)
    order = list(suites) if suites is not None else [s for s in suite_names() if s in by_suite]
    tables = []
    for suite in order:
        spec = suite_spec(suite)
        if spec is None:
            continue
        members = by_suite.get(suite, [])
        table = build_paper_table(suite, spec, members, published=published)
        table.verdict = (verdicts or {}).get(suite) or (suite_verdict(suite, members) if with_verdicts else "")
        tables.append(table)
    return tables


def table_json(table: PaperTable) -> dict[str, Any]:
    """A JSON-ready form of a built table (for tools and tests)."""
    return {
        "suite": table.suite, "table": table.spec.table, "title": table.spec.title, "unit": table.spec.unit,
        "paper_data": table.paper_data, "your_data": table.your_data, "verdict": table.verdict,
        "columns": [{"group": c.group, "label": c.label, "key": c.key} for c in table.columns],
        "rows": [{"label": r.label, "kind": r.kind,
                  "cells": [None if c is None else {"text": c.text()[0], "spread": c.text()[1], "best": c.best}
                            for c in r.cells]} for r in table.rows],
    }


__all__ = ["PaperColumn", "PaperTable", "PaperTableSpec", "TableCell", "TableRow", "build_paper_table",
           "default_value", "mark_stars", "paper_tables", "suite_spec", "suite_verdict", "table_json"]

