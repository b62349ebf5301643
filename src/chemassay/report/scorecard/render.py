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

from chemassay.report.cards import card_for
from chemassay.report.load import source_of
from chemassay.report.scorecard import Scorecard, SuiteSection
from chemassay.report.scorecard.galleries import Gallery, Panel
from chemassay.report.scorecard.leaderboard import Leaderboard, format_cell, format_number
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
figure { display: inline-block; margin: 8px 12px 8px 0; vertical-align: top; background: #fff; border: 1px solid var(--line); padding: 6px; }
figure img { display: block; max-width: 100%; height: auto; }
figcaption { font-size: 12px; color: var(--muted); max-width: 640px; }
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
def _html_rows(board: Leaderboard, rows: list, apart: bool = False) -> str:
    body = []
    for row in rows:
        if row.published:
            badge = '<span class="badge">PUBLISHED</span>'
        elif row.result is None:
            badge = '<span class="badge ref">REFERENCE RUN</span>'
        else:
            badge = '<span class="badge user">YOURS</span>'
        notes = escape(" ".join(row.notes), quote=True)
        cells = [f'<td class="label" title="{notes}">{badge}{escape(row.label)}</td>',
                 f'<td class="src">{escape(row.source)}</td>', f'<td class="data">{escape(row.data)}</td>']
        for column in board.columns:
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
    head = ['<th class="label">model</th>', '<th class="label">source</th>', '<th class="label">data</th>']
    for column in board.columns:
        tip = escape(column.description + (f" (paper: {column.paper_name})" if column.paper_name else ""), quote=True)
        arrow = f' <span class="arrow">{column.arrow}</span>' if column.arrow else ""
        head.append(f'<th title="{tip}">{escape(column.label)}{arrow}</th>')
    body = _html_rows(board, board.rows)
    if board.other_data:
        span = 3 + len(board.columns)
        body += (f'<tr class="divider"><td colspan="{span}">Published on different data (the paper\'s own data, '
                 "not the data of the rows above): shown for orientation, never ranked</td></tr>")
        body += _html_rows(board, board.other_data, apart=True)
    extra = ""
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
    return (f'<h4 id="{anchor}">{escape(board.title)}</h4><div class="scroll"><table class="leaderboard">'
            f"<thead><tr>{''.join(head)}</tr></thead><tbody>{body}</tbody></table></div>{extra}")


def _html_figure(figure: Figure) -> str:
    if figure.kind == "missing":
        return f'<p class="missing">Picture not found: {escape(str(figure.data))} ({escape(figure.caption)})</p>'
    caption = f"<figcaption><b>{escape(figure.title)}</b>{(' — ' + escape(figure.caption)) if figure.caption else ''}</figcaption>"
    return f'<figure><img alt="{escape(figure.title, quote=True)}" src="{_uri(figure.kind, figure.data)}">{caption}</figure>'


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
        head = "".join(f"<th>{escape(c)}</th>" for c in table.columns)
        notes = {(i, j): note for i, j, note in table.cell_notes}
        rows = []
        for i, (label, cells) in enumerate(table.rows):
            tds = []
            for j, cell in enumerate(cells):
                note = notes.get((i, j))
                tds.append(f'<td title="{escape(note, quote=True)}">{escape(cell)}*</td>' if note else f"<td>{escape(cell)}</td>")
            rows.append(f'<tr><td class="label">{escape(label)}</td>{"".join(tds)}</tr>')
        meta = f"Data: {escape(table.dataset)}."
        if table.spread:
            meta += f" Values: {escape(table.spread)}."
        if table.parenthesis:
            meta += f" In parentheses: {escape(table.parenthesis)}."
        note_html = "".join(f"<li>{escape(n)}</li>" for n in table.notes)
        note_html += "".join(f"<li>row {i + 1}, column {escape(table.columns[j])} (*): {escape(n)}</li>" for i, j, n in table.cell_notes)
        parts.append(f'<h4>{escape(table.paper.short)} — {escape(table.table)}: {escape(table.caption)}</h4>'
                     f'<p class="notes">{meta}</p><div class="scroll"><table><thead><tr><th class="label">model</th>{head}</tr>'
                     f'</thead><tbody>{"".join(rows)}</tbody></table></div>'
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
                     '<span class="badge">PUBLISHED</span> rows are the paper\'s, measured on the paper\'s data (column "data"). '
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
    """``(suite, verdict or why skipped, tasks)`` of the assay this scorecard closes."""
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


def _html_assay(card: Scorecard) -> str:
    if card.assay is None:
        return ""
    model = card.assay.model if isinstance(card.assay.model, str) else (
        "each suite's built-in baseline" if card.assay.model is None else json.dumps(card.assay.model))
    rows = "".join(f'<tr><td class="label">{escape(suite)}</td><td class="text">{escape(verdict)}</td>'
                   f'<td class="text">{escape(tasks)}</td></tr>' for suite, verdict, tasks in _assay_rows(card))
    quick = " (quick subset: a smoke test, not ranked)" if card.assay.quick else ""
    if getattr(card.assay, "limit", None) is not None:
        quick = (f" (seeded subsets of at most {card.assay.limit:,} items per task, seed {card.assay.seed}: "
                 "shown with their intervals, not ranked)")
    return (f'<h3>Verdicts</h3><p class="notes">Model: <code>{escape(model)}</code>{escape(quick)} · '
            f"{card.assay.elapsed_s:.0f} s</p>"
            f'<table id="verdicts"><thead><tr><th class="label">suite</th><th class="label">verdict</th>'
            f'<th class="label">tasks</th></tr></thead><tbody>{rows}</tbody></table>')


def render_html(card: Scorecard) -> str:
    """The whole report as one HTML document."""
    nav = "".join(f'<a href="#{s.anchor}">{escape(s.suite)}</a>' for s in card.sections)
    summary_rows = []
    for section in card.sections:
        boards = ", ".join(f'<a href="#board-{section.suite}-{i}">{escape(b.title)}</a>' for i, b in enumerate(section.leaderboards))
        summary_rows.append(f'<tr><td class="label"><a href="#{section.anchor}">{escape(section.suite)}</a></td>'
                            f"<td>{len(section.results)}</td><td class=\"text\">{boards}</td></tr>")
    notes = "".join(f"<li>{escape(n)}</li>" for n in card.notes)
    # _html_board sets anchors, so render sections before the summary that links to them
    sections = "".join(_html_section(s) for s in card.sections)
    body = (f'<header><h1>{escape(card.title)}</h1><p>chemassay {escape(card.version)} · {escape(card.generated)} · '
            f"{len(card.sources)} result(s)</p></header><nav>{nav}</nav><main>"
            f'<section id="summary"><h2>Summary</h2>{_html_assay(card)}<p class="legend"><span><span class="arrow">↑</span> higher is better</span>'
            f'<span><span class="arrow">↓</span> lower is better</span><span style="color:var(--best);font-weight:700">★ best, '
            "and its 95 % interval separates it from every other row</span></p>"
            f'<table><thead><tr><th class="label">suite</th><th>results</th><th class="label">leaderboards</th></tr></thead>'
            f"<tbody>{''.join(summary_rows)}</tbody></table>"
            + (f'<ul class="notes">{notes}</ul>' if notes else "")
            + f"</section>{sections}</main>")
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{escape(card.title)}</title><style>{CSS}</style></head><body>{body}</body></html>\n")


# --- Markdown --------------------------------------------------------------------------------
def _md(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _md_rows(board: Leaderboard, rows: list, apart: bool = False) -> list[str]:
    lines = []
    for row in rows:
        mark = "*(published)* " if row.published else ("*(reference run)* " if row.result is None else "")
        if apart:
            mark = "*(published, different data)* "
        cells = [mark + _md(row.label), _md(row.source), _md(row.data)]
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
    head = ["model", "source", "data"] + [f"{c.label} {c.arrow}".strip() for c in board.columns]
    lines = [f"#### {_md(board.title)}", "", "| " + " | ".join(_md(h) for h in head) + " |",
             "|" + "|".join(["---"] * 3 + ["---:"] * len(board.columns)) + "|"]
    lines += _md_rows(board, board.rows)
    lines += _md_rows(board, board.other_data, apart=True)
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
    if card.assay is not None:
        lines += ["## Verdicts", "", "| suite | verdict | tasks |", "|---|---|---|"]
        lines += [f"| {_md(suite)} | {_md(verdict)} | {_md(tasks)} |" for suite, verdict, tasks in _assay_rows(card)]
        lines += [""]
    lines += ["| suite | results | leaderboards |", "|---|---:|---|"]
    for section in card.sections:
        lines.append(f"| {section.suite} | {len(section.results)} | {_md(', '.join(b.title for b in section.leaderboards))} |")
    lines += [""] + [f"- {_md(n)}" for n in card.notes] + ([""] if card.notes else [])
    for section in card.sections:
        lines += [f"## {section.suite}", ""]
        if section.papers:
            lines += [" · ".join(f"Reproduces {p.citation}." for p in section.papers), ""]
        lines += ["### Leaderboards", ""]
        for board in section.leaderboards:
            lines += _md_board(board)
        if section.figures:
            lines += ["### Plots", ""]
            for figure in section.figures:
                if figure.kind == "missing":
                    lines += [f"- picture not found: `{figure.data}` ({_md(figure.caption)})"]
                    continue
                suffix = "svg" if figure.kind == "svg" else ("jpg" if figure.kind == "jpeg" else "png")
                path = asset(f"{section.suite}-{figure.name or figure.title}.{suffix}".replace(f".{suffix}.{suffix}", f".{suffix}"), figure.data)
                lines += [f"![{_md(figure.title)}]({path})", ""] + ([f"*{_md(figure.caption)}*", ""] if figure.caption else [])
        gallery = section.gallery
        if gallery is not None:
            lines += [f"### {_md(gallery.title)}", ""]
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
                lines += [f"#### {_md(table.paper.short)} — {_md(table.table)}: {_md(table.caption)}", "",
                          f"Data: {_md(table.dataset)}." + (f" Values: {_md(table.spread)}." if table.spread else ""), "",
                          "| model | " + " | ".join(_md(c) for c in table.columns) + " |",
                          "|---|" + "|".join("---:" for _ in table.columns) + "|"]
                for label, cells in table.rows:
                    lines.append(f"| {_md(label)} | " + " | ".join(_md(c) for c in cells) + " |")
                lines += [""] + [f"- {_md(n)}" for n in table.notes] + [""]
            lines += ["</details>", ""]
    return "\n".join(lines) + "\n", assets
