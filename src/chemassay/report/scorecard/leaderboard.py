"""Leaderboards: the user's results of one suite, grouped by task, dataset, setting and mode,
with the papers' published rows of the same setting beside them — like with like.

Grouping. Results of one suite are grouped by ``(task, dataset name, setting, quick, subset)``;
the setting is the one the result states (``Result.setting``, in the papers' vocabulary); the
subset is the seeded subset of the task's items a result was measured on (``assay --limit`` or
``--precision``: its sha256), so results on the same items share a table. Results of different
suites never share a table.

Published rows. A published record joins a group when it has a metric of the group and its
setting does not contradict the group's (every setting both name is equal). When some records
match the group's setting exactly (every setting they name is stated by the results and
equal), only those are shown; otherwise only records of the paper's headline tables that do
not contradict it are. Records of one model in one setting spread over several tables of the
paper (MOSES prints a model's metrics in four tables) are shown as one row. A record measured
on the very data of the group (``record.data == dataset``) stands in the ranked table beside
the user's rows; a record measured on other data (Pistachio, the authors' own USPTO variants)
is shown below it, apart, as "different data", and never ranked.

Columns. The metrics of the group's results: first those the papers publish, then those whose
metric card gives a direction, then the rest (at most :data:`MAX_COLUMNS`; every metric of
every result is in the report's per-result details anyway).

Best value (★). Only in a ranked table (one dataset, one setting, no quick or subset result), in a
column whose card says higher or lower is better, and only when the best value's interval
separates it from every other row: for "higher", its interval's low end lies above every other
row's interval high end (the value plus the printed std for a published row; the value itself
for a row without either) by more than rounding noise (:data:`TOLERANCE` relative). A best
value without an interval is never marked. The intervals are those the results carry (Wilson
for proportions, never zero-wide: :mod:`chemassay.report.intervals`).

By construction (†). A value the metric's card declares fixed by construction for the row's
model kind (:attr:`chemassay.report.cards.MetricCard.by_construction`: the fingerprint encoder's
AMORE retrieval, the gold oracle's oMeS) is shown with ``†`` and the reason (the cell's and the
row's note, and the board's :attr:`Leaderboard.notes`), and takes no part in the ★: it is never
marked and does not stand in the way of another row's mark.

Numbers. One unit per metric: a metric its paper prints in percent (ChemAlgebra, Bradshaw et
al., AMORE, oMeBench) is shown in percent, as the assay's verdicts print it (``41.2 %``); the
rest as stored. A published value keeps the paper's own decimals (``0.8`` % is ``0.8 %``,
``0.076 ± 0.0322`` stays so), a printed zero its printed decimals (``0.00 %``). A value computed
on fewer items than its key names (``unique@10000`` of 7,255 valid molecules) says so:
``0.9987 @7,255``, and the column is relabelled (``unique@7,255``) when every row of it agrees.
A published table with no row for the group's setting says why in :attr:`Leaderboard.notes`
(the suite's ``PaperBinding.missing``).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field, replace
from typing import Any

from chemassay.contract.result import Result, SubsetRef
from chemassay.report.cards import card_for
from chemassay.report.load import source_of
from chemassay.report.published import percent_keys, reference_results, shown_decimals
from chemassay.report.store import model_label

MAX_COLUMNS = 14
MAX_PUBLISHED_ROWS = 30
MAX_OTHER_DATA_ROWS = 12
TOLERANCE = 1e-9
"""Relative margin by which a best interval must clear the others (floating-point noise such
as ``-8.6e-17`` against ``0`` is not a separation)."""


@dataclass
class Column:
    """One metric column."""

    key: str
    label: str
    direction: str
    description: str = ""
    paper_name: str | None = None
    percent: bool = False
    """Shown in percent (the paper prints it so; stored as a fraction)."""

    @property
    def arrow(self) -> str:
        """↑ / ↓ / empty."""
        return {"higher": "↑", "lower": "↓"}.get(self.direction, "")


@dataclass
class Cell:
    """A value in a leaderboard, with what is known of its uncertainty."""

    value: float | None
    low: float | None = None
    high: float | None = None
    std: float | None = None
    printed: str | None = None
    bound: str | None = None
    bound_value: float | None = None
    note: str | None = None
    best: bool = False
    percent: bool = False
    """Show the value (stored as a fraction) in percent."""
    decimals: int | None = None
    """Decimal places to show (a published value: the paper's own); ``None``: four significant digits."""
    std_decimals: int | None = None
    by_construction: str | None = None
    """Why this value is fixed by construction (shown with †, never ranked); ``None``: it is not."""
    size: int | None = None
    """The items the value was computed on, when fewer than its key names (``unique@10000`` of 7,255)."""

    def reach(self) -> tuple[float, float] | None:
        """The range this value may be taken to span: its interval, value ± std, or the value."""
        if self.value is None:
            return None
        if self.low is not None and self.high is not None:
            return self.low, self.high
        if self.std is not None:
            return self.value - self.std, self.value + self.std
        return self.value, self.value


@dataclass
class Row:
    """A model's row: the user's (``published=False``) or a paper's."""

    label: str
    published: bool
    source: str
    """The result file (or store run) for a user row; ``Paper, Table N`` for a published one."""
    data: str
    """The dataset the values were measured on."""
    cells: dict[str, Cell] = field(default_factory=dict)
    setting: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    result: Result | None = None


@dataclass
class Leaderboard:
    """One table of a suite section."""

    suite: str
    task: str
    dataset: str | None
    setting: dict[str, Any]
    columns: list[Column]
    rows: list[Row]
    hidden_published: int = 0
    """Published rows left out to keep the table readable (all are in the published section)."""
    anchor: str = ""
    notes: list[str] = field(default_factory=list)
    """One line each: what a mark in the table means (†, a value computed on fewer items than
    its name says) and why a published table has no row for this setting."""
    other_data: list[Row] = field(default_factory=list)
    """Published rows of the same setting measured on other data: shown apart, never ranked."""
    quick: bool = False
    """The group's results are quick-subset results: shown, never ranked."""
    subset: SubsetRef | None = None
    """The seeded subset of the task's items the group's results were measured on
    (``assay --limit``/``--precision``): shown beside the papers' rows, never ranked."""

    @property
    def ranked(self) -> bool:
        """Whether a best value may be marked (one dataset and setting, no quick or subset result)."""
        return not self.quick and self.subset is None

    @property
    def subset_label(self) -> str:
        """``seeded subset: 100 of 2,553 items (seed 0)`` (empty for a whole task)."""
        if self.subset is None:
            return ""
        subset = self.subset
        how = f", chosen for ±{100 * subset.precision:g} points" if subset.precision is not None else ""
        return f"seeded subset: {subset.size:,} of {subset.of:,} items (seed {subset.seed}{how})"

    @property
    def title(self) -> str:
        """``task · dataset · split=… variant=…`` (``· quick subset`` for quick results)."""
        parts = [self.task]
        if self.dataset:
            parts.append(self.dataset)
        if self.setting:
            parts.append(" ".join(f"{k}={v}" for k, v in self.setting.items()))
        if self.quick:
            parts.append("quick subset")
        if self.subset is not None:
            parts.append(self.subset_label)
        return " · ".join(parts)

    @property
    def user_rows(self) -> list[Row]:
        """Rows of the user's results."""
        return [row for row in self.rows if not row.published]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _label_of(result: Result) -> str:
    return model_label(result)


def _source_of(result: Result) -> str:
    source = source_of(result)
    if source:
        return source
    run = getattr(result, "_store_id", None)
    return f"store run {run}" if run is not None else "(in memory)"


def partial_subset(result: Result) -> SubsetRef | None:
    """The seeded subset a result was measured on, when it leaves items of its task out."""
    subset = result.subset
    return subset if subset is not None and subset.partial else None


def group_results(results: list[Result]) -> dict[tuple[str, str | None, str, bool, str | None], list[Result]]:
    """``(task, dataset name, setting as JSON, quick, subset sha256) → results``, in
    first-seen order (the subset's sha256 is ``None`` for a result on every item)."""
    groups: dict[tuple[str, str | None, str, bool, str | None], list[Result]] = {}
    for result in results:
        setting = dict(result.setting)
        subset = partial_subset(result)
        key = (result.task, result.dataset.name if result.dataset else None, json.dumps(setting, sort_keys=True),
               bool(result.quick), subset.sha256 if subset is not None else None)
        groups.setdefault(key, []).append(result)
    return groups


def _compatible(record_setting: dict[str, Any], setting: dict[str, Any]) -> tuple[bool, bool]:
    """``(no contradiction, exact)`` between a published setting and a result's."""
    shared = set(record_setting) & set(setting)
    if any(str(record_setting[k]).lower() != str(setting[k]).lower() for k in shared):
        return False, False
    return True, shared == set(record_setting)


def matching_records(suite: str, setting: dict[str, Any], keys: set[str], *, runs: bool = False) -> list[Any]:
    """Published records to show beside results of ``setting`` with metrics ``keys``."""
    candidates = [r for r in reference_results(suite, runs=runs) if keys & set(r.metrics)]
    exact, loose = [], []
    for record in candidates:
        ok, is_exact = _compatible(record.setting, setting)
        if not ok:
            continue
        (exact if is_exact else loose).append(record)
    if exact:
        return exact
    return [record for record in loose if record.headline]


def _cell_from_result(result: Result, key: str, percent: bool = False) -> Cell:
    from chemassay.report.cards import by_construction, card_for

    value = result.metrics.get(key)
    interval = result.intervals.get(key)
    low = interval.low if interval is not None else None
    high = interval.high if interval is not None else None
    cell = Cell(value=float(value) if _is_number(value) else None, low=low, high=high, percent=percent)
    reason = by_construction(result, key)
    if reason and cell.value is not None:
        cell.by_construction = reason
        cell.note = f"† by construction: {reason} (shown, never ranked)"
    card = card_for(result.suite, key)
    size = card.computed_on(result, key) if card is not None and card.computed_on is not None else None
    if size is not None and cell.value is not None:
        cell.size = size
        note = f"computed on {size:,} items, fewer than {key} says"
        cell.note = f"{cell.note}; {note}" if cell.note else note
    return cell


def _cell_from_published(value: Any, percent: bool = False) -> Cell:
    note = value.note
    if value.bound and not note:
        # the cell shows the bound in chemassay's unit; say how the paper printed it
        unit = " %" if getattr(value, "unit", "value") == "percent" else ""
        note = f"the paper prints {value.printed}{unit}"
    decimals, std_decimals = shown_decimals(value, percent=percent)
    return Cell(value=value.value, std=value.std, printed=value.printed, bound=value.bound,
                bound_value=value.bound_value, note=note, percent=percent, decimals=decimals,
                std_decimals=std_decimals)


def choose_columns(suite: str, results: list[Result], published_keys: set[str]) -> tuple[list[Column], int]:
    """The leaderboard's metric columns and how many numeric metrics were left out."""
    try:
        in_percent = percent_keys(suite)
    except KeyError:  # a suite without a registered paper
        in_percent = frozenset()
    # one unit per metric: every key of a card, or of a card the paper names alike (top2 beside
    # the printed top1 and top5; augmented→original Acc@1 beside the printed original→augmented)
    printed = [card for card in (card_for(suite, key) for key in in_percent) if card is not None]
    percent_cards = {card.key for card in printed} | {card.paper_name for card in printed if card.paper_name}

    keys: list[str] = []
    for result in results:
        for key, value in result.metrics.items():
            if key not in keys and _is_number(value):
                keys.append(key)

    def rank(key: str) -> tuple[int, int]:
        card = card_for(suite, key)
        if key in published_keys:
            return 0, keys.index(key)
        if card is not None and card.direction != "none":
            return 1, keys.index(key)
        return 2, keys.index(key)

    ordered = sorted(keys, key=rank)
    chosen = ordered[:MAX_COLUMNS]
    columns = []
    for key in chosen:
        card = card_for(suite, key)
        # a pattern card's label is its pattern ({augmentation}/...): the key itself says more
        label = card.label if card is not None and not card.is_pattern else key
        columns.append(Column(key=key, label=label, direction=card.direction if card else "none",
                              description=card.description if card else "", paper_name=card.paper_name if card else None,
                              percent=key in in_percent or (card is not None and (
                                  card.key in percent_cards or (card.paper_name or "") in percent_cards))))
    return columns, len(keys) - len(chosen)


def _clears(best: float, other: float, sign: float) -> bool:
    """Whether ``best`` lies beyond ``other`` in the better direction by more than rounding noise."""
    margin = TOLERANCE * max(1.0, abs(best), abs(other))
    return (best - other) * sign > margin


def mark_best(board: Leaderboard) -> None:
    """Set ``Cell.best`` where the best value's interval separates it (module docstring)."""
    if not board.ranked:
        return
    for column in board.columns:
        if column.direction not in ("higher", "lower"):
            continue
        cells = [(row, row.cells.get(column.key)) for row in board.rows]
        # a value fixed by construction is shown but takes no part in the ranking
        cells = [(row, cell) for row, cell in cells
                 if cell is not None and cell.value is not None and cell.by_construction is None]
        if len(cells) < 2:
            continue
        sign = 1.0 if column.direction == "higher" else -1.0
        best_row, best = max(cells, key=lambda rc: sign * rc[1].value)
        if best.low is None or best.high is None:
            continue
        separated = True
        for row, cell in cells:
            if row is best_row:
                continue
            low, high = cell.reach()
            if (sign > 0 and not _clears(best.low, high, sign)) or (sign < 0 and not _clears(best.high, low, sign)):
                separated = False
                break
        best.best = separated


def merge_records(records: list[Any]) -> list[Any]:
    """One record per (paper, model, label, setting, data): a model whose metrics the paper
    spreads over several tables becomes one row (the first table's values win a repeated key).
    Labels are compared without case, spaces or punctuation."""
    merged: dict[tuple, Any] = {}
    for record in records:
        # one row may be labelled "Formula T1 x1" in one table and "FORMULA_T1x1" in another
        label = re.sub(r"[^a-z0-9]", "", record.label.lower())
        key = (record.paper.key, record.model, label, json.dumps(record.setting, sort_keys=True), record.data,
               record.published)
        if key not in merged:
            merged[key] = record
            continue
        first = merged[key]
        metrics = {**record.metrics, **first.metrics}
        table = first.table if record.table == first.table else f"{first.table}, {record.table}"
        notes = tuple(dict.fromkeys((*first.notes, *record.notes)))
        merged[key] = replace(first, metrics=metrics, table=table, notes=notes)
    return list(merged.values())


def _published_row(record: Any, setting: dict[str, Any], columns: list[Column]) -> Row:
    percent = {c.key: c.percent for c in columns}
    extra = {k: v for k, v in record.setting.items() if k not in setting}
    label = record.model
    if record.label != record.model:
        label += f" — {record.label}"
    if extra:
        label += " — " + ", ".join(f"{k}={v}" for k, v in extra.items() if f"{k}={v}" not in label)
    label = label.rstrip(" —")
    return Row(label=label, published=record.published, source=f"{record.paper.short}, {record.table}",
               data=record.dataset, setting=record.setting,
               cells={c.key: _cell_from_published(record.metrics[c.key], percent[c.key]) for c in columns
                      if c.key in record.metrics},
               notes=record.notes)


def build_leaderboards(suite: str, results: list[Result], *, published: bool = True,
                       runs: bool = False) -> list[Leaderboard]:
    """Leaderboards of one suite's results (see the module docstring). ``runs`` adds the
    reference runs chemassay ships (``published=False`` records) beside the papers' rows."""
    boards = []
    for (task, dataset, setting_json, quick, _subset), members in group_results(results).items():
        setting = json.loads(setting_json)
        user_keys = {k for r in members for k, v in r.metrics.items() if _is_number(v)}
        records = matching_records(suite, setting, user_keys, runs=runs) if published else []
        records = merge_records(records)
        published_keys = {k for record in records for k in record.metrics} & user_keys
        columns, _hidden = choose_columns(suite, members, published_keys)
        rows: list[Row] = []
        labels = [_label_of(r) for r in members]
        for result, label in zip(members, labels, strict=True):
            if labels.count(label) > 1:
                from pathlib import Path

                label = f"{label} ({Path(_source_of(result)).stem})"
            cells = {c.key: _cell_from_result(result, c.key, c.percent) for c in columns}
            reasons = list(dict.fromkeys(c.by_construction for c in cells.values() if c.by_construction))
            notes: tuple[str, ...] = ()
            if reasons:
                label += " †"
                notes = tuple(f"† by construction: {reason}" for reason in reasons)
            rows.append(Row(label=label, published=False, source=_source_of(result),
                            data=(result.dataset.name if result.dataset else "-"), cells=cells, result=result,
                            notes=notes))
        shown = [r for r in records if any(c.key in r.metrics for c in columns)]
        same = [r for r in shown if dataset is not None and r.data == dataset]
        other = [r for r in shown if r not in same]
        hidden = max(len(same) - MAX_PUBLISHED_ROWS, 0) + max(len(other) - MAX_OTHER_DATA_ROWS, 0)
        rows += [_published_row(record, setting, columns) for record in same[:MAX_PUBLISHED_ROWS]]
        other_rows = [_published_row(record, setting, columns) for record in other[:MAX_OTHER_DATA_ROWS]]
        board = Leaderboard(suite=suite, task=task, dataset=dataset, setting=setting, columns=columns, rows=rows,
                            hidden_published=hidden, other_data=other_rows, quick=quick,
                            subset=partial_subset(members[0]))
        board.notes = _board_notes(board, suite, setting, published=published)
        mark_best(board)
        boards.append(board)
    return boards


def _relabel_sizes(board: Leaderboard) -> None:
    """A column whose every value was computed on the same smaller number of items is
    relabelled with it (``unique@10000`` → ``unique@7,255``)."""
    for column in board.columns:
        cells = [row.cells.get(column.key) for row in board.rows + board.other_data]
        cells = [cell for cell in cells if cell is not None and (cell.value is not None or cell.bound)]
        sizes = {cell.size for cell in cells}
        if cells and len(sizes) == 1 and None not in sizes and "@" in column.label:
            size = sizes.pop()
            column.label = f"{column.label.rsplit('@', 1)[0]}@{size:,}"
            column.description += f" (computed on {size:,} items here: fewer than {column.key} says)"


def _board_notes(board: Leaderboard, suite: str, setting: dict[str, Any], *, published: bool) -> list[str]:
    """The board's one-line notes: marks (†, smaller sizes) and missing published rows."""
    notes: list[str] = []
    for row in board.user_rows:
        for column in board.columns:
            cell = row.cells.get(column.key)
            if cell is None:
                continue
            if cell.size is not None:
                notes.append(f"{row.label}: {column.key} is computed on {cell.size:,} items (shown as "
                             f"{column.key.rsplit('@', 1)[0]}@{cell.size:,}), fewer than its name says.")
        for note in row.notes:
            notes.append(f"{row.label}: {note.removeprefix('† ')}; shown, never ranked (no ★).")
    _relabel_sizes(board)
    if published and not any(row.published for row in board.rows + board.other_data):
        from chemassay.report.published import missing_row_reason

        reason = missing_row_reason(suite, board.task, setting)
        if reason:
            notes.append(f"No published row for this setting: {reason}")
    return list(dict.fromkeys(notes))


def format_number(value: float | None, digits: int = 4) -> str:
    """A metric value for a table: ``–`` for missing, integers as integers, otherwise
    ``digits`` significant digits without an exponent unless the value is tiny or huge."""
    if value is None or not math.isfinite(value):
        return "–"
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    magnitude = abs(value)
    if magnitude >= 1e9 or magnitude < 1e-4:
        return f"{value:.{digits - 1}g}"
    decimals = max(digits - 1 - math.floor(math.log10(magnitude)), 0)
    return f"{value:.{decimals}f}"


def format_bound(value: float) -> str:
    """A printed bound (``<1e-2`` %, stored as 0.0001) without the padding zeros of
    :func:`format_number`: a bound is exact, its trailing zeros would claim digits it lacks."""
    text = format_number(value)
    if "." in text and "e" not in text:
        text = text.rstrip("0").rstrip(".")
    return text


def _fixed(value: float, decimals: int | None) -> str:
    """``value`` with ``decimals`` places, or :func:`format_number`'s four significant digits."""
    if decimals is None:
        return format_number(value)
    text = f"{value:.{decimals}f}"
    return "0" + text[2:] if text.startswith("-0") and float(text) == 0 else text


def format_percent(value: float) -> str:
    """A measured percentage as the assay's verdicts print it: one decimal (``4.8``, ``100.0``),
    two significant digits below 1 % (``0.38``)."""
    if value == 0 or abs(value) >= 1:
        return f"{value:.1f}"
    return f"{value:.2g}"


def format_cell(cell: Cell | None) -> tuple[str, str]:
    """``(value text, uncertainty text)`` of a cell: in percent where the cell says so (the
    value gains `` %``; a measured one as :func:`format_percent` prints it), a published value
    with the paper's decimals, ``†`` after a value fixed by construction, ``@N`` after one
    computed on fewer items than its key names."""
    if cell is None:
        return "", ""
    scale, unit = (100.0, " %") if cell.percent else (1.0, "")
    if cell.value is None:
        if cell.bound and cell.bound_value is not None:
            return f"{cell.bound}{format_bound(round(scale * cell.bound_value, 12))}{unit}", ""
        return "–", ""
    measured = format_percent if cell.percent and cell.decimals is None else format_number
    main = (_fixed(round(scale * cell.value, 12), cell.decimals) if cell.decimals is not None
            else measured(round(scale * cell.value, 12))) + unit
    if cell.size is not None:
        main += f" @{cell.size:,}"
    if cell.by_construction:
        main += " †"
    if cell.low is not None and cell.high is not None:
        return main, f"[{measured(scale * cell.low)}, {measured(scale * cell.high)}]"
    if cell.std is not None:
        return main, f"± {_fixed(round(scale * cell.std, 12), cell.std_decimals)}"
    return main, ""
