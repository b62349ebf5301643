"""HTML and Markdown rendering of a :class:`~chemassay.report.scorecard.Scorecard`.

The HTML is one file: CSS in a ``<style>`` element, every picture an ``<img>`` with a
``data:`` URI (SVG charts and RDKit depictions base64-encoded, PNGs as they are), no script,
no external reference — it works from a file, offline. Section ids: ``summary``,
``suite-<suite>`` and inside each ``leaderboards-``, ``plots-``, ``gallery-``,
``published-`` and ``details-<suite>``.
"""

from __future__ import annotations

import base64
import json
import re
from html import escape
from pathlib import Path

from chemassay.report.cards import card_for
from chemassay.report.export import to_markdown
from chemassay.report.load import source_of
from chemassay.report.scorecard import Scorecard, SuiteSection
from chemassay.report.scorecard.galleries import Gallery, Panel
from chemassay.report.scorecard.leaderboard import Leaderboard, format_cell, format_number
from chemassay.report.scorecard.leakage import render_html as leakage_html
from chemassay.report.scorecard.leakage import render_markdown as leakage_markdown
from chemassay.report.scorecard.plots import Figure
from chemassay.report.store import model_label

CSS = """
:root { --ink: #1d2330; --muted: #5f6b7a; --line: #d9dee5; --pub: #f6f1e3; --best: #1a7f37; }
* { box-sizing: border-box; }
body { font: 14px/1.45 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: var(--ink); margin: 0; background: #fbfcfd; }
header { background: #1d2330; color: #fff; padding: 18px 28px; }
header h1 { margin: 0 0 4px; font-size: 22px; }
header p { margin: 2px 0; color: #c9d1dc; }
nav { padding: 8px 28px; background: #eef1f5; border-bottom: 1px solid var(--line); position: sticky; top: 0; z-index: 2; }
nav a { margin-right: 16px; color: #24508f; text-decoration: none; font-weight: 600; }
main { padding: 8px 28px 40px; max-width: 1500px; }
p.model { margin: 6px 0; font-size: 14px; }
table#verdicts { font-size: 13px; margin: 4px 0 6px; }
table#verdicts td { padding: 2px 7px; }
table#verdicts td.text { max-width: 900px; }
section.paper { margin: 10px 0 4px; }
section.paper h3 { margin: 10px 0 3px; font-size: 15px; }
.paper-body { display: flex; flex-wrap: wrap; gap: 6px 16px; align-items: flex-start; }
.paper-body .tablebox { flex: 1 1 560px; max-width: 100%; overflow-x: auto; }
table.paper-table { font-size: 12px; margin: 0; }
table.paper-table th, table.paper-table td { padding: 1px 5px; }
table.paper-table th.group { text-align: center; }
table.paper-table th { overflow-wrap: normal; }
table.paper-table td.label { max-width: 240px; font-weight: normal; }
table.paper-table tr.yours td { background: #e6eefa; }
table.paper-table tr.yours td.label { font-weight: 700; }
table.paper-table td.best::after { content: ""; }
table.paper-table .ci { font-size: 10px; white-space: normal; }
table.paper-table .pm { color: var(--muted); font-size: 10px; }
.paper-body figure { margin: 0; max-width: 100%; flex: 0 0 auto; }
.paper-body figcaption { max-width: none; }
p.paper-notes { font-size: 11.5px; color: var(--muted); margin: 2px 0 0; max-width: 1340px; }
h2.details { margin-top: 30px; border-top: 3px solid #24508f; padding-top: 8px; }
.rowsrc { display: block; font-weight: normal; font-size: 11px; color: var(--muted); overflow-wrap: anywhere; }
.datakey { font-size: 10px; color: var(--muted); font-weight: normal; vertical-align: super; }
table.leaderboard th { overflow-wrap: anywhere; min-width: 4.5em; }
.notes, .cite, figcaption, p.paper-notes { overflow-wrap: anywhere; }
section.suite { margin-top: 28px; border-top: 3px solid #24508f; padding-top: 6px; }
h2 { font-size: 20px; margin: 6px 0; } h3 { font-size: 16px; margin: 18px 0 6px; } h4 { font-size: 14px; margin: 14px 0 4px; }
.cite { color: var(--muted); font-size: 12px; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: 6px 0 10px; font-size: 13px; }
th, td { border: 1px solid var(--line); padding: 3px 7px; text-align: right; vertical-align: top; }
th { background: #eef1f5; position: relative; }
td.label, th.label, td.text { text-align: left; }
td.label { font-weight: 600; max-width: 320px; }
tr.published td { background: var(--pub); }
tr.published td.label { font-weight: normal; font-style: italic; }
.badge { display: inline-block; font-size: 10px; font-weight: 700; letter-spacing: .04em; padding: 0 5px; border-radius: 3px;
         background: #b58a1b; color: #fff; margin-right: 4px; font-style: normal; vertical-align: 1px; }
.badge.user { background: #24508f; }
.badge.ref { background: #5f6b7a; }
tr.apart td { background: #f3f3f3; color: #555; }
tr.divider td { background: #fff; text-align: left; font-size: 12px; color: var(--muted); font-style: italic; border-left: 0; border-right: 0; }
.ci { display: block; color: var(--muted); font-size: 11px; white-space: nowrap; }
td.best { color: var(--best); font-weight: 700; }
td.best::after { content: " ★"; }
.arrow { color: #24508f; font-weight: 700; }
.src, .data { color: var(--muted); font-size: 12px; text-align: left; min-width: 160px; max-width: 280px; }
figure { display: inline-block; margin: 8px 12px 8px 0; vertical-align: top; background: #fff; border: 1px solid var(--line); padding: 6px; max-width: 100%; }
figure img { display: block; max-width: 100%; height: auto; }
figcaption { font-size: 12px; color: var(--muted); max-width: 560px; }
.gallery-item { background: #fff; border: 1px solid var(--line); margin: 8px 0; padding: 8px; }
.gallery-item .caption { font-weight: 600; margin-bottom: 6px; }
.panels { display: flex; flex-wrap: wrap; gap: 10px; align-items: flex-start; }
.panel { max-width: 320px; }
.panel .plabel { font-size: 12px; color: var(--muted); }
.panel code, .smiles { font-family: Menlo, Consolas, monospace; font-size: 11px; word-break: break-all; display: block; }
table.steps td { text-align: left; }
.tag-match { color: var(--best); font-weight: 700; } .tag-type_mismatch { color: #b35c00; font-weight: 700; }
.tag-skip_gold, .tag-skip_pred { color: #a33; font-weight: 700; }
.missing { color: #8a5a00; background: #fff7e0; border: 1px solid #f0d68a; padding: 6px 10px; display: inline-block; }
details { margin: 10px 0; } summary { cursor: pointer; font-weight: 600; }
.legend span { margin-right: 14px; }
.notes { color: var(--muted); font-size: 12px; }
"""


def _uri(figure_kind: str, data: str | bytes) -> str:
    if figure_kind == "svg":
        payload = data.encode("utf-8") if isinstance(data, str) else data
        return "data:image/svg+xml;base64," + base64.b64encode(payload).decode("ascii")
    payload = data if isinstance(data, bytes) else data.encode("utf-8")
    return f"data:image/{figure_kind};base64," + base64.b64encode(payload).decode("ascii")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:80]


# --- HTML ------------------------------------------------------------------------------------
MAX_TABLE_COLUMNS = 8
"""Metric columns per table: a leaderboard with more is split into several tables (the model
column repeated), so that no column lies beyond a 1,400 px wide window."""


TABLE_BUDGET_PX = 1040
"""Room for metric columns beside the model column in a 1,400 px window."""


def column_chunks(columns: list, size: int = MAX_TABLE_COLUMNS, widths: list[float] | None = None) -> list[list]:
    """``columns`` in runs of at most ``size`` (balanced: 14 columns → 7 + 7); with ``widths``
    (each column's estimated width in px), in as few runs as fit :data:`TABLE_BUDGET_PX` each."""
    if widths is not None:
        chunks: list[list] = [[]]
        used = 0.0
        for column, width in zip(columns, widths, strict=True):
            if chunks[-1] and used + width > TABLE_BUDGET_PX:
                chunks.append([])
                used = 0.0
            chunks[-1].append(column)
            used += width
        return chunks
    if len(columns) <= size:
        return [list(columns)]
    parts = -(-len(columns) // size)
    per = -(-len(columns) // parts)
    return [list(columns[i:i + per]) for i in range(0, len(columns), per)]


def _column_px(board: Leaderboard, column) -> float:
    """A generous estimate of a leaderboard column's width: its widest header segment (headers
    wrap at ``_`` and ``/``) or its widest value or interval, plus padding."""
    header = max((len(part) for part in re.split(r"[_/ ]", column.label)), default=1) * 8.0 + 20
    cells = [0.0]
    for row in board.rows + board.other_data:
        value, spread = format_cell(row.cells.get(column.key))
        cells.append(max(len(value) * 7.2 + 14, len(spread) * 5.8))
    return max(header, max(cells) + 16, 60.0)


def breakable(text: str) -> str:
    """Escaped ``text`` that may wrap after ``_`` and ``/`` (``top1_accuracy_stereo_agnostic``)."""
    return escape(text).replace("_", "_<wbr>").replace("/", "/<wbr>")


def data_keys(rows: list) -> dict[str, str]:
    """Each distinct data text of the rows → a short key (``d1``, ``d2``…), so that a long data
    description is printed once under the table instead of on every row."""
    keys: dict[str, str] = {}
    for row in rows:
        if row.data and row.data not in keys:
            keys[row.data] = f"d{len(keys) + 1}"
    return keys


def _html_rows(board: Leaderboard, rows: list, columns: list, keys: dict[str, str], apart: bool = False) -> str:
    body = []
    for row in rows:
        if row.published:
            badge = '<span class="badge">PUBLISHED</span>'
        elif row.result is None:
            badge = '<span class="badge ref">REFERENCE RUN</span>'
        else:
            badge = '<span class="badge user">YOURS</span>'
        notes = escape(" ".join(row.notes), quote=True)
        source = row.source if row.result is None else Path(row.source).name or row.source
        data = f'<span class="datakey">{keys[row.data]}</span>' if row.data in keys else ""
        cells = [f'<td class="label" title="{notes}">{badge}{escape(row.label)}{data}'
                 f'<span class="rowsrc" title="{escape(row.source, quote=True)}">{escape(source)}</span></td>']
        for column in columns:
            cell = row.cells.get(column.key)
            value, spread = format_cell(cell)
            klass = ' class="best"' if cell is not None and cell.best else ""
            title = f' title="{escape(cell.note, quote=True)}"' if cell is not None and cell.note else ""
            spread_html = f'<span class="ci">{escape(spread)}</span>' if spread else ""
            cells.append(f"<td{klass}{title}>{escape(value)}{spread_html}</td>")
        kind = "published" if row.result is None else "user"
        body.append(f'<tr class="{kind}{" apart" if apart else ""}">' + "".join(cells) + "</tr>")
    return "".join(body)


def _html_board(board: Leaderboard, index: int) -> str:
    anchor = f"board-{board.suite}-{index}"
    board.anchor = anchor
    keys = data_keys(board.rows + board.other_data)
    chunks = column_chunks(board.columns, widths=[_column_px(board, c) for c in board.columns])
    tables = []
    for number, columns in enumerate(chunks, start=1):
        head = ['<th class="label">model</th>']
        for column in columns:
            tip = escape(column.description + (f" (paper: {column.paper_name})" if column.paper_name else ""), quote=True)
            arrow = f' <span class="arrow">{column.arrow}</span>' if column.arrow else ""
            head.append(f'<th title="{tip}">{breakable(column.label)}{arrow}</th>')
        body = _html_rows(board, board.rows, columns, keys)
        if board.other_data:
            span = 1 + len(columns)
            body += (f'<tr class="divider"><td colspan="{span}">Published on different data (the paper\'s own data, '
                     "not the data of the rows above): shown for orientation, never ranked</td></tr>")
            body += _html_rows(board, board.other_data, columns, keys, apart=True)
        part = (f'<p class="notes">Columns {sum(len(c) for c in chunks[:number - 1]) + 1}–'
                f'{sum(len(c) for c in chunks[:number])} of {len(board.columns)}.</p>' if len(chunks) > 1 else "")
        tables.append(f'{part}<div class="scroll"><table class="leaderboard">'
                      f"<thead><tr>{''.join(head)}</tr></thead><tbody>{body}</tbody></table></div>")
    extra = ""
    if keys:
        extra += '<p class="notes datanote">Data: ' + " · ".join(
            f"<b>{key}</b> {escape(text)}" for text, key in keys.items()) + "</p>"
    if board.quick:
        extra += ('<p class="notes">Quick subset (<code>assay --quick</code>): a smoke test on a few items, '
                  "shown beside the papers' rows but never ranked.</p>")
    if board.subset is not None:
        extra += (f'<p class="notes subset">{escape(board.subset_label[0].upper() + board.subset_label[1:])} '
                  "(<code>assay --limit</code>/<code>--precision</code>; the same items for every model with this "
                  f"seed, sha256 {escape(board.subset.sha256[:12])}…): shown beside the papers' rows with its "
                  "intervals, never ranked.</p>")
    if board.hidden_published:
        extra += f'<p class="notes">{board.hidden_published} more published rows of this setting are in the published tables below.</p>'
    extra += "".join(f'<p class="notes board-note">{escape(note)}</p>' for note in board.notes)
    return f'<h4 id="{anchor}">{escape(board.title)}</h4>{"".join(tables)}{extra}'


def _svg_width(figure: Figure) -> int | None:
    if figure.kind != "svg":
        return None
    match = re.search(r'<svg[^>]*?\swidth="([\d.]+)"', str(figure.data))
    return int(float(match.group(1))) if match else None


def _html_figure(figure: Figure, fixed: bool = False) -> str:
    """A figure with its caption; ``fixed``: as wide as its picture (the caption wraps under
    it), never wider than the page."""
    if figure.kind == "missing":
        return f'<p class="missing">Picture not found: {escape(str(figure.data))} ({escape(figure.caption)})</p>'
    caption = f"<figcaption><b>{escape(figure.title)}</b>{(' — ' + escape(figure.caption)) if figure.caption else ''}</figcaption>"
    width = _svg_width(figure) if fixed else None
    style = f' style="width: {width + 14}px"' if width else ""
    return f'<figure{style}><img alt="{escape(figure.title, quote=True)}" src="{_uri(figure.kind, figure.data)}">{caption}</figure>'


def _html_panel(panel: Panel | None) -> str:
    if panel is None:
        return '<td class="text">—</td>'
    image = f'<img alt="{escape(panel.label, quote=True)}" src="{_uri("svg", panel.svg)}">' if panel.svg else ""
    text = f"<code>{escape(panel.text)}</code>" if panel.text else ""
    return f'<div class="panel"><div class="plabel">{escape(panel.label)}</div>{image}{text}</div>'


def _html_gallery(gallery: Gallery) -> str:
    parts = [f"<h3>{escape(gallery.title)}</h3>"]
    if gallery.missing and not gallery.items:
        parts.append(f'<p class="missing">No gallery: {escape(gallery.missing)}.</p>')
    for item in gallery.items:
        parts.append(f'<div class="gallery-item"><div class="caption">{escape(item.caption)}</div>')
        if item.note:
            parts.append(f'<p class="notes">{escape(item.note)}</p>')
        if item.panels:
            parts.append('<div class="panels">' + "".join(_html_panel(p) for p in item.panels) + "</div>")
        if item.steps:
            rows = []
            for k, (tag, gold, predicted) in enumerate(item.steps, start=1):
                rows.append(f'<tr><td>{k}</td><td>{_html_panel(gold) if gold else "—"}</td>'
                            f'<td class="tag-{escape(tag)}">{escape(tag.replace("_", " "))}</td>'
                            f'<td>{_html_panel(predicted) if predicted else "—"}</td></tr>')
            parts.append('<div class="scroll"><table class="steps"><thead><tr><th>#</th><th class="label">gold step</th>'
                         '<th class="label">alignment</th><th class="label">predicted step</th></tr></thead><tbody>'
                         + "".join(rows) + "</tbody></table></div>")
        parts.append("</div>")
    return "".join(parts)


def _html_published(section: SuiteSection) -> str:
    parts = []
    for table in section.published_tables:
        notes = {(i, j): note for i, j, note in table.cell_notes}
        meta = f"Data: {escape(table.dataset)}."
        if table.spread:
            meta += f" Values: {escape(table.spread)}."
        if table.parenthesis:
            meta += f" In parentheses: {escape(table.parenthesis)}."
        note_html = "".join(f"<li>{escape(n)}</li>" for n in table.notes)
        note_html += "".join(f"<li>row {i + 1}, column {escape(table.columns[j])} (*): {escape(n)}</li>" for i, j, n in table.cell_notes)
        grids = []
        for columns in column_chunks(list(range(len(table.columns)))):
            chunk_head = "".join(f"<th>{escape(table.columns[j])}</th>" for j in columns)
            chunk_rows = []
            for i, (label, cells) in enumerate(table.rows):
                tds = []
                for j in columns:
                    note = notes.get((i, j))
                    cell = cells[j]
                    tds.append(f'<td title="{escape(note, quote=True)}">{escape(cell)}*</td>' if note else f"<td>{escape(cell)}</td>")
                chunk_rows.append(f'<tr><td class="label">{escape(label)}</td>{"".join(tds)}</tr>')
            grids.append(f'<div class="scroll"><table><thead><tr><th class="label">model</th>{chunk_head}</tr>'
                         f'</thead><tbody>{"".join(chunk_rows)}</tbody></table></div>')
        parts.append(f'<h4>{escape(table.paper.short)} — {escape(table.table)}: {escape(table.caption)}</h4>'
                     f'<p class="notes">{meta}</p>{"".join(grids)}'
                     + (f'<ul class="notes">{note_html}</ul>' if note_html else ""))
    return "".join(parts)


def _html_details(section: SuiteSection) -> str:
    parts = []
    for result in section.results:
        rows = []
        for key, value in result.metrics.items():
            interval = result.intervals.get(key)
            spread = f"[{format_number(interval.low)}, {format_number(interval.high)}]" if interval and interval.low is not None else ""
            shown = format_number(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else escape(str(value))
            card = card_for(result.suite, key)
            arrow = {"higher": " ↑", "lower": " ↓"}.get(card.direction, "") if card else ""
            rows.append(f'<tr><td class="text">{escape(key)}{arrow}</td><td>{escape(shown)}</td><td>{escape(spread)}</td></tr>')
        model = result.model.spec if result.model else model_label(result)
        dataset = f"{result.dataset.name} (sha256 {result.dataset.sha256[:12]}…)" if result.dataset and result.dataset.sha256 else (result.dataset.name if result.dataset else "-")
        config = escape(json.dumps(result.config, default=str)[:600])
        parts.append(f'<h4>{escape(result.task)} · {escape(model_label(result))}</h4>'
                     f'<p class="notes">source: {escape(source_of(result) or "(in memory)")} · model: {escape(model)} · '
                     f'data: {escape(dataset)} · n={result.n} · skipped={len(result.skipped)} · '
                     f'{result.elapsed_s:.2f} s · chemassay {escape(result.versions.get("chemassay", "?"))}<br>config: {config}</p>'
                     f'<div class="scroll"><table><thead><tr><th class="label">metric</th><th>value</th><th>95 % interval</th></tr></thead>'
                     f'<tbody>{"".join(rows)}</tbody></table></div>')
    return "".join(parts)


def _html_section(section: SuiteSection) -> str:
    suite = section.suite
    paper_line = " · ".join(f"reproduces {escape(p.short)}" for p in section.papers)
    parts = [f'<section class="suite" id="{section.anchor}"><h2>{escape(suite)}</h2>']
    if paper_line:
        parts.append(f'<p class="cite">{paper_line}. {len(section.results)} result(s).</p>')
    parts.append(f'<div id="leaderboards-{suite}"><h3>Leaderboards</h3>')
    if section.leaderboards:
        parts.append('<p class="notes">Rows marked <span class="badge user">YOURS</span> are the results in this report; '
                     '<span class="badge">PUBLISHED</span> rows are the paper\'s, measured on the paper\'s data (the key after each name, d1, d2…, is spelled out under its table). '
                     "Small grey numbers: 95 % bootstrap interval (yours) or the paper's ± std.</p>")
        parts += [_html_board(board, i) for i, board in enumerate(section.leaderboards)]
    else:
        parts.append('<p class="notes">No results of this suite.</p>')
    parts.append("</div>")
    parts.append(f'<div id="plots-{suite}"><h3>Plots</h3>')
    parts += [_html_figure(f) for f in section.figures] or ['<p class="notes">No plots.</p>']
    parts.append("</div>")
    if section.gallery is not None:
        parts.append(f'<div id="gallery-{suite}">{_html_gallery(section.gallery)}</div>')
    if section.published_tables:
        parts.append(f'<details id="published-{suite}"><summary>Published results ({len(section.published_tables)} tables, as printed in the paper)</summary>'
                     f'<p class="cite">{" ".join(escape(p.citation) for p in section.papers)}</p>{_html_published(section)}</details>')
    if section.results:
        parts.append(f'<details id="details-{suite}"><summary>Every metric of every result</summary>{_html_details(section)}</details>')
    parts.append("</section>")
    return "".join(parts)


def _assay_rows(card: Scorecard) -> list[tuple[str, str, str]]:
    """``(suite, verdict or why skipped, tasks)``: of the assay this scorecard closes, else the
    verdict each suite's assay gives the results."""
    if card.assay is None:
        # the verdicts each suite's assay gives these results, computed once per scorecard
        if card.verdicts is None:
            from chemassay.report.paper_tables import suite_verdict

            card.verdicts = {section.suite: suite_verdict(section.suite, section.results)
                             for section in card.sections if section.results}
        rows = [(suite, verdict or "no verdict", "") for suite, verdict in card.verdicts.items()]
        if card.leakage is not None:  # an assay appends it to its verdicts itself
            rows = [(suite, verdict + (f"; {seen}" if (seen := card.leakage.seen(suite)) else ""), tasks)
                    for suite, verdict, tasks in rows]
        return rows
    rows = []
    for outcome in card.assay.suites:
        if outcome.skipped:
            rows.append((outcome.suite, f"skipped: {outcome.skipped}", ""))
            continue
        counts: dict[str, int] = {}
        for task in outcome.tasks:
            counts[task.status] = counts.get(task.status, 0) + 1
        tasks = ", ".join(f"{n} {status}" for status, n in counts.items())
        failures = "; ".join(f"{t.task} failed: {t.message.splitlines()[0]}" for t in outcome.tasks if t.status == "failed")
        verdict = outcome.verdict or "no result"
        rows.append((outcome.suite, verdict + (f" — {failures}" if failures else ""), tasks))
    return rows


def model_text(card: Scorecard) -> str:
    """The model(s) the report is about, in words."""
    if card.assay is not None:
        if isinstance(card.assay.model, str):
            return card.assay.model
        if card.assay.model is None:
            specs = ", ".join(f"{o.suite}: {o.spec}" for o in card.assay.suites if o.spec)
            return "each suite's built-in baseline" + (f" ({specs})" if specs else "")
        return json.dumps(card.assay.model)
    labels = list(dict.fromkeys(model_label(r) for section in card.sections for r in section.results))
    return ", ".join(labels[:8]) + (f" and {len(labels) - 8} more" if len(labels) > 8 else "")


def _verdict_of(card: Scorecard, suite: str) -> str:
    return next((verdict for name, verdict, _tasks in _assay_rows(card) if name == suite), "")


def _html_assay(card: Scorecard) -> str:
    quick = ""
    with_tasks = card.assay is not None
    if card.assay is not None:
        quick = " (quick subset: a smoke test, not ranked)" if card.assay.quick else ""
        if getattr(card.assay, "limit", None) is not None:
            quick = (f" (seeded subsets of at most {card.assay.limit:,} items per task, seed {card.assay.seed}: "
                     "shown with their intervals, not ranked)")
        quick += f" · {card.assay.elapsed_s:.0f} s"
    known = {table.suite for table in card.paper_tables}
    rows = []
    for suite, verdict, tasks in _assay_rows(card):
        link = f'<a href="#paper-{escape(suite)}">{escape(suite)}</a>' if suite in known else escape(suite)
        rows.append(f'<tr><td class="label">{link}</td><td class="text">{escape(verdict)}</td>'
                    + (f'<td class="text">{escape(tasks)}</td>' if with_tasks else "") + "</tr>")
    return (f'<p class="model">Model: <code>{escape(model_text(card))}</code>{escape(quick)}</p>'
            f'<table id="verdicts"><thead><tr><th class="label">suite</th><th class="label">verdict</th>'
            + ('<th class="label">tasks</th>' if with_tasks else "")
            + f'</tr></thead><tbody>{"".join(rows)}</tbody></table>')


def _paper_caption(table) -> str:
    parts = [table.unit_text[0].upper() + table.unit_text[1:] + "."]
    if table.paper_data:
        parts.append(f"Paper rows as printed (its precision), measured on {table.paper_data}.")
    if table.user_rows:
        data = ", ".join(table.your_data) or "the data of these results"
        parts.append(f"YOURS: measured on {data}, in the paper's unit and decimals, 95 % interval in brackets.")
    parts += [note.rstrip(".") + "." for note in table.notes]
    if any(cell is not None and cell.best for row in table.rows for cell in row.cells):
        parts.append("★ best value, its interval separated from every other row.")
    return " ".join(parts)


def _html_paper_table(table) -> str:
    """One suite's paper table in the paper's shape (the user's rows among the paper's) beside
    its figure."""
    groups = table.groups()
    grouped = any(group for group, _ in groups)
    rowspan = ' rowspan="2"' if grouped else ""
    head = f'<th class="label"{rowspan}>{escape(table.spec.row_header)}</th>'
    second = ""
    labels = []
    for column in table.columns:
        card = card_for(table.suite, column.key) or card_for(table.suite, column.key.rsplit("/", 1)[-1])
        arrow = {"higher": " ↑", "lower": " ↓"}.get(card.direction, "") if card is not None else ""
        tip = escape(f"{column.key}: {card.description}" if card is not None else column.key, quote=True)
        labels.append(f'<th title="{tip}">{escape(column.label)}<span class="arrow">{arrow}</span></th>')
    if grouped:
        head += "".join(f'<th class="group" colspan="{span}">{escape(group)}</th>' for group, span in groups)
        second = "<tr>" + "".join(labels) + "</tr>"
    else:
        head += "".join(labels)
    body = []
    for row in table.rows:
        if row.kind == "yours":
            marks = "".join(f" ({word})" for word, on in (("quick", row.quick), ("subset", row.subset)) if on)
            arrow = "↳ " if row.anchor else ""
            sources = "; ".join(str(getattr(r, "_source", "") or "") for r in row.results)
            label = (f'<td class="label" title="{escape(sources, quote=True)}">{arrow}<span class="badge user">YOURS</span>'
                     f"{escape(row.label + marks)}</td>")
        else:
            label = f'<td class="label" title="{escape(" ".join(row.notes), quote=True)}">{escape(row.label)}</td>'
        cells = []
        for cell in row.cells:
            if cell is None:
                cells.append('<td class="na">–</td>')
                continue
            main, spread = cell.text()
            klass = ' class="best"' if cell.best else ""
            main += " ★" if cell.best else " †" if getattr(cell, "by_construction", None) else ""
            extra = ""
            if spread:
                extra = f'<span class="{"pm" if row.kind == "paper" else "ci"}">{escape(spread)}</span>'
                if row.kind == "paper":
                    extra = " " + extra
            title = f' title="{escape(cell.note, quote=True)}"' if cell.note else ""
            cells.append(f"<td{klass}{title}>{escape(main)}{extra}</td>")
        body.append(f'<tr class="{row.kind}">{label}{"".join(cells)}</tr>')
    figure = _html_figure(table.figure, fixed=True) if table.figure is not None else ""
    return (f'<section class="paper" id="paper-{escape(table.suite)}"><h3><a href="#suite-{escape(table.suite)}">'
            f"{escape(table.suite)}</a> · {escape(table.heading)}</h3>"
            f'<div class="paper-body"><div class="tablebox"><table class="paper-table"><thead><tr>{head}</tr>{second}'
            f'</thead><tbody>{"".join(body)}</tbody></table></div>{figure}</div>'
            f'<p class="paper-notes">{escape(_paper_caption(table))}</p></section>')


def render_html(card: Scorecard) -> str:
    """The whole report as one HTML document: the answer first (model, verdicts, the papers'
    tables with the results among the papers' rows), then the details per suite."""
    nav = ('<a href="#summary">Answer</a>' + ('<a href="#leakage">Leakage</a>' if card.leakage is not None else "")
           + "".join(f'<a href="#{s.anchor}">{escape(s.suite)}</a>' for s in card.sections))
    summary_rows = []
    for section in card.sections:
        boards = ", ".join(f'<a href="#board-{section.suite}-{i}">{escape(b.title)}</a>' for i, b in enumerate(section.leaderboards))
        summary_rows.append(f'<tr><td class="label"><a href="#{section.anchor}">{escape(section.suite)}</a></td>'
                            f"<td>{len(section.results)}</td><td class=\"text\">{boards}</td></tr>")
    notes = "".join(f"<li>{escape(n)}</li>" for n in card.notes)
    # _html_board sets anchors, so render sections before the summary that links to them
    sections = "".join(_html_section(s) for s in card.sections)
    papers = "".join(_html_paper_table(table) for table in card.paper_tables)
    legend = ('<p class="legend notes"><span><span class="arrow">↑</span> higher is better</span>'
              '<span><span class="arrow">↓</span> lower is better</span><span style="color:var(--best);font-weight:700">'
              "★ best, and its 95 % interval separates it from every other row</span>"
              '<span><span class="badge user">YOURS</span> the results of this report</span></p>')
    body = (f'<header><h1>{escape(card.title)}</h1><p>chemassay {escape(card.version)} · {escape(card.generated)} · '
            f"{len(card.sources)} result(s)</p></header><nav>{nav}</nav><main>"
            f'<section id="summary">{_html_assay(card)}{legend}'
            f'<div id="paper-tables">{papers}</div>'
            + (f'<ul class="notes">{notes}</ul>' if notes else "")
            + "</section>"
            + (leakage_html(card.leakage, _uri) if card.leakage is not None else "")
            + f'<h2 class="details" id="details">Details per suite</h2>'
            f'<table><thead><tr><th class="label">suite</th><th>results</th><th class="label">leaderboards</th></tr></thead>'
            f"<tbody>{''.join(summary_rows)}</tbody></table>"
            f"{sections}</main>")
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{escape(card.title)}</title><style>{CSS}</style></head><body>{body}</body></html>\n")


# --- Markdown --------------------------------------------------------------------------------
def _md(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _md_rows(board: Leaderboard, rows: list, keys: dict[str, str], apart: bool = False) -> list[str]:
    lines = []
    for row in rows:
        mark = "*(published)* " if row.published else ("*(reference run)* " if row.result is None else "")
        if apart:
            mark = "*(published, different data)* "
        data = f" [{keys[row.data]}]" if row.data in keys else ""
        cells = [mark + _md(row.label) + data, _md(row.source)]
        for column in board.columns:
            cell = row.cells.get(column.key)
            value, spread = format_cell(cell)
            text = f"{value} {spread}".strip()
            if cell is not None and cell.best:
                text = f"**{value}** ★ {spread}".strip()
            cells.append(_md(text))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _md_board(board: Leaderboard) -> list[str]:
    keys = data_keys(board.rows + board.other_data)
    head = ["model", "source"] + [f"{c.label} {c.arrow}".strip() for c in board.columns]
    lines = [f"##### {_md(board.title)}", "", "| " + " | ".join(_md(h) for h in head) + " |",
             "|" + "|".join(["---"] * 2 + ["---:"] * len(board.columns)) + "|"]
    lines += _md_rows(board, board.rows, keys)
    lines += _md_rows(board, board.other_data, keys, apart=True)
    if keys:
        lines += ["", "Data: " + "; ".join(f"[{key}] {_md(text)}" for text, key in keys.items()) + "."]
    if board.quick:
        lines += ["", "Quick subset (`assay --quick`): a smoke test, never ranked."]
    if board.subset is not None:
        label = board.subset_label
        lines += ["", f"{label[0].upper() + label[1:]} (`assay --limit`/`--precision`; the same items for every "
                      f"model with this seed, sha256 {board.subset.sha256[:12]}…): shown beside the papers' rows "
                      "with its intervals, never ranked."]
    if board.other_data:
        lines += ["", "Rows marked *different data* were measured on the paper's own data: for orientation, never ranked."]
    if board.hidden_published:
        lines += ["", f"{board.hidden_published} more published rows of this setting are in the published tables."]
    lines += [line for note in board.notes for line in ("", _md(note))]
    return lines + [""]


def render_markdown(card: Scorecard) -> tuple[str, dict[str, bytes | str]]:
    """The report as Markdown, and its pictures (``assets/NAME`` → content)."""
    assets: dict[str, bytes | str] = {}

    def asset(name: str, data: bytes | str) -> str:
        base = _slug(name.rsplit(".", 1)[0]) or "figure"
        suffix = "." + name.rsplit(".", 1)[1] if "." in name else ".svg"
        candidate, k = base + suffix, 1
        while candidate in assets:
            k += 1
            candidate = f"{base}-{k}{suffix}"
        assets[candidate] = data
        return f"assets/{candidate}"

    lines = [f"# {_md(card.title)}", "",
             f"chemassay {card.version} · {card.generated} · {len(card.sources)} result(s). "
             "↑ higher is better, ↓ lower is better; **bold ★**: best, and its 95 % interval separates it from every "
             "other row. *(published)* rows are the papers' own results on the papers' data (column \"data\").", ""]

    lines += [f"Model: `{model_text(card)}`", "", "## Verdicts", "", "| suite | verdict | tasks |", "|---|---|---|"]
    lines += [f"| {_md(suite)} | {_md(verdict)} | {_md(tasks)} |" for suite, verdict, tasks in _assay_rows(card)]
    lines += [""]
    if card.paper_tables:
        lines += ["## The papers' tables, with your rows", ""]
        for table in card.paper_tables:
            lines += to_markdown(table, heading="###", verdict=False).rstrip("\n").split("\n") + [""]
            figure = table.figure
            if figure is not None and figure.kind == "svg":
                path = asset(figure.name or f"{table.suite}-paper.svg", figure.data)
                lines += [f"![{_md(figure.title)}]({path})", "", f"*{_md(figure.caption)}*", ""]
    if card.leakage is not None:
        lines += leakage_markdown(card.leakage, asset)
    lines += ["## Details per suite", "", "| suite | results | leaderboards |", "|---|---:|---|"]
    for section in card.sections:
        lines.append(f"| {section.suite} | {len(section.results)} | {_md(', '.join(b.title for b in section.leaderboards))} |")
    lines += [""] + [f"- {_md(n)}" for n in card.notes] + ([""] if card.notes else [])
    for section in card.sections:
        lines += [f"### {section.suite}", ""]
        if section.papers:
            lines += [" · ".join(f"Reproduces {p.citation}." for p in section.papers), ""]
        lines += ["#### Leaderboards", ""]
        for board in section.leaderboards:
            lines += _md_board(board)
        if section.figures:
            lines += ["#### Plots", ""]
            for figure in section.figures:
                if figure.kind == "missing":
                    lines += [f"- picture not found: `{figure.data}` ({_md(figure.caption)})"]
                    continue
                suffix = "svg" if figure.kind == "svg" else ("jpg" if figure.kind == "jpeg" else "png")
                path = asset(f"{section.suite}-{figure.name or figure.title}.{suffix}".replace(f".{suffix}.{suffix}", f".{suffix}"), figure.data)
                lines += [f"![{_md(figure.title)}]({path})", ""] + ([f"*{_md(figure.caption)}*", ""] if figure.caption else [])
        gallery = section.gallery
        if gallery is not None:
            lines += [f"#### {_md(gallery.title)}", ""]
            if gallery.missing and not gallery.items:
                lines += [f"No gallery: {_md(gallery.missing)}.", ""]
            for k, item in enumerate(gallery.items):
                lines += [f"**{_md(item.caption)}**", ""] + ([f"*{_md(item.note)}*", ""] if item.note else [])
                pictures = []
                for j, panel in enumerate(item.panels):
                    if panel.svg:
                        pictures.append(f"![{_md(panel.label)}]({asset(f'gallery-{section.suite}-{k}-{j}.svg', panel.svg)})")
                    if panel.text:
                        pictures.append(f"{_md(panel.label)}: `{panel.text}`")
                if pictures:
                    lines += [" ".join(p for p in pictures if p.startswith("!")), ""]
                    lines += [f"- {p}" for p in pictures if not p.startswith("!")] + [""]
                if item.steps:
                    lines += ["| # | gold step | alignment | predicted step |", "|---:|---|---|---|"]
                    for n, (tag, gold, predicted) in enumerate(item.steps, start=1):
                        def step(panel: Panel | None) -> str:
                            return f"{_md(panel.label)} `{panel.text}`" if panel and panel.text else (_md(panel.label) if panel else "—")
                        lines.append(f"| {n} | {step(gold)} | {tag} | {step(predicted)} |")
                    lines.append("")
        if section.published_tables:
            lines += ["<details><summary>Published results, as printed</summary>", ""]
            for table in section.published_tables:
                lines += [f"##### {_md(table.paper.short)} — {_md(table.table)}: {_md(table.caption)}", "",
                          f"Data: {_md(table.dataset)}." + (f" Values: {_md(table.spread)}." if table.spread else ""), "",
                          "| model | " + " | ".join(_md(c) for c in table.columns) + " |",
                          "|---|" + "|".join("---:" for _ in table.columns) + "|"]
                for label, cells in table.rows:
                    lines.append(f"| {_md(label)} | " + " | ".join(_md(c) for c in cells) + " |")
                lines += [""] + [f"- {_md(n)}" for n in table.notes] + [""]
            lines += ["</details>", ""]
    return "\n".join(lines) + "\n", assets
