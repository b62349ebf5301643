"""The scorecard's leakage section: per audited task its items (n, exact, near, clean, the
threshold), the distribution of each test item's nearest training similarity as a small
histogram, and each task's headline metric on the full test set beside the clean subset
(:mod:`chemassay.report.leakage`)."""

from __future__ import annotations

import math
from html import escape
from typing import Any

from chemassay.report.leakage import LeakageView
from chemassay.report.scorecard.svg import FONT, PALETTE, bar_chart

ANCHOR = "leakage"


def histogram_svg(entry: dict[str, Any], width: int = 230, height: int = 120) -> str:
    """The task's nearest-similarity histogram (0.05-wide bins from 0 to 1), the threshold as a
    red line; '' where the audit had no similarity (exact only, or no readable item)."""
    distribution = entry.get("nearest_similarity") or {}
    histogram = distribution.get("histogram") or {}
    counts, edges = histogram.get("counts") or [], histogram.get("edges") or []
    if not counts or len(edges) != len(counts) + 1:
        return ""
    left, right, top, bottom = 30, 8, 18, 22
    plot_w, plot_h = width - left - right, height - top - bottom
    peak = max(max(counts), 1)
    span = edges[-1] - edges[0] or 1.0

    def x(value: float) -> float:
        return left + plot_w * (value - edges[0]) / span

    title = f"{entry['suite']} · {entry['task']}"
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">',
             f'<rect width="{width}" height="{height}" fill="white"/>',
             f'<text x="{width / 2:.1f}" y="12" text-anchor="middle" font-size="10" font-weight="bold" {FONT}>{escape(title)}</text>']
    for i, count in enumerate(counts):
        h = plot_h * count / peak
        parts.append(f'<rect x="{x(edges[i]) + 0.5:.1f}" y="{top + plot_h - h:.1f}" width="{max(x(edges[i + 1]) - x(edges[i]) - 1, 0.5):.1f}" '
                     f'height="{h:.1f}" fill="{PALETTE[0]}"><title>{edges[i]:g}-{edges[i + 1]:g}: {count:,}</title></rect>')
    threshold = entry.get("threshold")
    if isinstance(threshold, (int, float)) and entry.get("near") is not None:
        parts.append(f'<line x1="{x(threshold):.1f}" x2="{x(threshold):.1f}" y1="{top}" y2="{top + plot_h}" stroke="{PALETTE[3]}" stroke-width="1.5">'
                     f"<title>threshold {threshold:g}</title></line>")
    parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{top + plot_h}" y2="{top + plot_h}" stroke="#444"/>')
    for tick in (0.0, 0.5, 1.0):
        parts.append(f'<text x="{x(tick):.1f}" y="{top + plot_h + 11}" text-anchor="middle" font-size="9" {FONT}>{tick:g}</text>')
    parts.append(f'<text x="{left - 3}" y="{top + 8}" text-anchor="end" font-size="9" {FONT}>{peak:,}</text>')
    parts.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 2}" text-anchor="middle" font-size="9" {FONT}>nearest training Tanimoto</text>')
    parts.append("</svg>")
    return "".join(parts)


def _number(value: Any) -> str:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        return "–"
    return f"{value:.3f}"


def value_text(value: Any, interval: list | None) -> str:
    """``0.567 [0.392, 0.726]`` (the interval where there is one)."""
    text = _number(value)
    if interval and len(interval) == 2 and all(isinstance(v, (int, float)) for v in interval):
        text += f" [{interval[0]:.3f}, {interval[1]:.3f}]"
    return text


def metric_rows(view: LeakageView) -> list[dict[str, str]]:
    """One row per task and headline metric: counts, full and clean values with intervals,
    and the note (why there is no clean value)."""
    rows = []
    for row in view.rows:
        counts = {"suite": row["suite"], "task": row["task"], "n": f"{row['n']:,}" if "n" in row else "–",
                  "seen": (f"{row['exact']:,} exact + {row['near'] if row['near'] is not None else '–'} near"
                           if "exact" in row else "–"),
                  "clean": f"{row['clean']:,}" if "clean" in row else "–"}
        if not row["metrics"]:
            rows.append({**counts, "metric": "–", "full": "–", "clean_value": "–", "note": row.get("note", "")})
            continue
        for metric in row["metrics"]:
            scored = row.get("scored_clean")
            note = metric.get("note") or row.get("note", "")
            if scored is not None:
                note = (f"scored on {scored:,} clean of {scored + row.get('scored_seen', 0):,} items"
                        + ("" if row.get("ids_checked", True) else " (ids matched by name)")
                        + (f"; {note}" if note else ""))
            rows.append({**counts, "metric": metric["key"], "full": value_text(metric["full"], metric["full_interval"]),
                         "clean_value": value_text(metric["clean"], metric["clean_interval"]), "note": note})
    return rows


def comparison_svg(view: LeakageView) -> str:
    """Grouped bars, full set beside clean subset, of every task's first headline metric
    (with their intervals); '' where no task has a clean value."""
    labels, full, clean, full_err, clean_err, keys = [], [], [], [], [], []
    for row in view.rows:
        metric = next((m for m in row["metrics"] if m.get("clean") is not None or m.get("full") is not None), None)
        if metric is None or "clean" not in metric:
            continue
        labels.append(row["task"])
        keys.append(metric["key"])
        full.append(metric["full"])
        clean.append(metric["clean"])
        full_err.append(tuple(metric["full_interval"]) if None not in metric["full_interval"] else None)
        clean_err.append(tuple(metric["clean_interval"]) if None not in metric["clean_interval"] else None)
    if not labels or all(v is None for v in clean):
        return ""
    if len(set(keys)) > 1:
        labels = [f"{label} ({key})" for label, key in zip(labels, keys, strict=True)]
    title = f"{keys[0] if len(set(keys)) == 1 else 'headline metric'}: full test set vs clean subset"
    return bar_chart(labels, {"full test set": full, "clean subset": clean}, title=title,
                     errors={"full test set": full_err, "clean subset": clean_err}, y_range=(0, None),
                     width=max(420, 90 * len(labels)), height=260)


def training_line(view: LeakageView) -> str:
    """The training files audited, with their counts."""
    parts = []
    for record in view.report.get("training", []):
        kinds = ", ".join(f"{record.get(kind + 's', 0):,} {kind}s" for kind in record.get("kinds", [])) or "no items"
        parts.append(f"{record.get('path')} ({kinds}; {record.get('unreadable', 0):,} unreadable lines)")
    return "; ".join(parts)


def render_html(view: LeakageView, uri) -> str:
    """The section's HTML (``uri(kind, data)`` makes a figure's data URI)."""
    tasks = view.report.get("tasks", [])
    head = ("<tr><th class=\"label\">suite</th><th class=\"label\">task</th><th>n</th><th>exact</th><th>near</th>"
            "<th>clean</th><th>threshold</th><th>median nearest sim.</th></tr>")
    body = []
    for entry in tasks:
        median = (entry.get("nearest_similarity") or {}).get("quantiles", {}).get("0.5")
        body.append(f'<tr><td class="label">{escape(entry["suite"])}</td><td class="label">{escape(entry["task"])}</td>'
                    f'<td>{entry["n"]:,}</td><td>{entry["leaked"] - (entry.get("near") or 0):,}</td>'
                    f'<td>{"–" if entry.get("near") is None else format(entry["near"], ",")}</td><td>{entry["clean"]:,}</td>'
                    f'<td>{entry.get("threshold", "–")}</td><td>{"–" if median is None else f"{median:.3f}"}</td></tr>')
    metrics = "".join(
        f'<tr><td class="label">{escape(r["suite"])}</td><td class="label">{escape(r["task"])}</td><td>{r["n"]}</td>'
        f'<td>{escape(r["seen"])}</td><td>{r["clean"]}</td><td class="label">{escape(r["metric"])}</td>'
        f'<td>{escape(r["full"])}</td><td>{escape(r["clean_value"])}</td><td class="text">{escape(r["note"])}</td></tr>'
        for r in metric_rows(view))
    pictures = [svg for svg in (histogram_svg(entry) for entry in tasks) if svg]
    figures = "".join(f'<img alt="nearest-similarity histogram" src="{uri("svg", svg)}">' for svg in pictures)
    chart = comparison_svg(view)
    parts = [f'<section class="suite" id="{ANCHOR}"><h2>Leakage: has the model seen the test items?</h2>',
             f'<p class="notes">Audit of the training data: {escape(training_line(view))}. Exact: the same molecule '
             "(InChIKey, with or without stereo) or reaction (order-independent key; products alone for product "
             "predictors); near: the nearest training item at or above the Tanimoto threshold; clean: neither "
             f"(docs/leakage.md). Report: {escape(view.source)}.</p>",
             f'<div class="scroll"><table id="leakage-tasks"><thead>{head}</thead><tbody>{"".join(body)}</tbody></table></div>']
    if figures:
        parts.append('<figure id="leakage-histograms"><div class="panels">' + figures + "</div><figcaption><b>Nearest "
                     "training similarity of each test item</b> — 0.05-wide bins; red line: the near-duplicate "
                     "threshold</figcaption></figure>")
    parts.append('<h3>Headline metrics: full test set and clean subset</h3>')
    if metrics:
        parts.append('<div class="scroll"><table id="leakage-metrics"><thead><tr><th class="label">suite</th>'
                     '<th class="label">task</th><th>n</th><th>seen</th><th>clean</th><th class="label">metric</th>'
                     "<th>full [95 % CI]</th><th>clean [95 % CI]</th><th class=\"label\">note</th></tr></thead>"
                     f"<tbody>{metrics}</tbody></table></div>")
    else:
        parts.append('<p class="notes">No results to set beside the audit.</p>')
    if chart:
        parts.append(f'<figure id="leakage-comparison"><img alt="full vs clean" src="{uri("svg", chart)}"><figcaption>'
                     "<b>Full test set vs clean subset</b> — bars with their 95 % intervals</figcaption></figure>")
    parts.append("</section>")
    return "".join(parts)


def render_markdown(view: LeakageView, asset) -> list[str]:
    """The section's Markdown lines (``asset(name, data)`` stores a picture, returns its path)."""
    md = _md
    lines = ["## Leakage: has the model seen the test items?", "",
             f"Audit of the training data: {md(training_line(view))} (report: `{view.source}`).", "",
             "| suite | task | n | exact | near | clean | threshold | median nearest sim. |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for entry in view.report.get("tasks", []):
        median = (entry.get("nearest_similarity") or {}).get("quantiles", {}).get("0.5")
        lines.append(f"| {md(entry['suite'])} | {md(entry['task'])} | {entry['n']:,} | "
                     f"{entry['leaked'] - (entry.get('near') or 0):,} | "
                     f"{'–' if entry.get('near') is None else format(entry['near'], ',')} | {entry['clean']:,} | "
                     f"{entry.get('threshold', '–')} | {'–' if median is None else f'{median:.3f}'} |")
    lines.append("")
    for entry in view.report.get("tasks", []):
        svg = histogram_svg(entry)
        if svg:
            name = "leakage-{}-{}.svg".format(entry["suite"], entry["task"])
            lines.append(f"![nearest similarity, {md(entry['task'])}]({asset(name, svg)})")
    lines += ["", "### Headline metrics: full test set and clean subset", "",
              "| suite | task | n | seen | clean | metric | full [95 % CI] | clean [95 % CI] | note |",
              "|---|---|---:|---|---:|---|---:|---:|---|"]
    lines += [f"| {md(r['suite'])} | {md(r['task'])} | {r['n']} | {md(r['seen'])} | {r['clean']} | {md(r['metric'])} | "
              f"{r['full']} | {r['clean_value']} | {md(r['note'])} |" for r in metric_rows(view)]
    chart = comparison_svg(view)
    if chart:
        lines += ["", f"![full vs clean]({asset('leakage-full-vs-clean.svg', chart)})"]
    return lines + [""]


def _md(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")
