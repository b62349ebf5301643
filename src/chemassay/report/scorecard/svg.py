"""Small, dependency-free SVG charts for the scorecard (bar and line charts).

Each function returns a complete ``<svg>`` document with explicit ``width``/``height`` (so it
can be embedded inline or as an ``<img>`` data URI) and escapes every label.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from html import escape

PALETTE = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c",
           "#ccb974", "#64b5cd")
FONT = "font-family=\"Helvetica, Arial, sans-serif\""
LEGEND_CHARS = 40
LEGEND_WIDTH = 250


def _nice_range(values: Sequence[float], y_range: tuple[float | None, float | None] | None) -> tuple[float, float]:
    finite = [v for v in values if v is not None and math.isfinite(v)]
    low = min([0.0, *finite]) if finite else 0.0
    high = max(finite) if finite else 1.0
    if y_range is not None:
        if y_range[0] is not None:
            low = y_range[0]
        if y_range[1] is not None and (not finite or max(finite) <= y_range[1]):
            high = y_range[1]
    if high <= low:
        high = low + 1.0
    return low, high


def _ticks(low: float, high: float, count: int = 5) -> list[float]:
    span = high - low
    step = 10 ** math.floor(math.log10(span / count))
    for factor in (1, 2, 2.5, 5, 10):
        if span / (step * factor) <= count:
            step *= factor
            break
    first = math.ceil(low / step) * step
    ticks = []
    value = first
    while value <= high + step * 1e-9:
        ticks.append(round(value, 10))
        value += step
    return ticks


def _fmt(value: float) -> str:
    return f"{value:g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.1e}"


CHAR_PX = {9: 5.6, 10: 6.2, 11: 6.8, 13: 8.2}
"""A generous average advance per character at a font size (Helvetica/Arial/DejaVu Sans), so
that a label measured with it is never wider in a browser than the room made for it."""



def _frame(width: int, height: int, title: str | None, ticks, left: float, plot_w: float, py) -> list[str]:
    """The opening of a chart: the svg element on white, its title, and the y grid lines with
    their labels at ``ticks`` (``py`` maps a value to its y pixel)."""
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">',
             f'<rect width="{width}" height="{height}" fill="white"/>']
    if title:
        parts.append(f'<text x="{width / 2:.1f}" y="18" text-anchor="middle" font-size="13" font-weight="bold" {FONT}>{escape(title)}</text>')
    for tick in ticks:
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{py(tick):.1f}" y2="{py(tick):.1f}" stroke="#e5e5e5"/>')
        parts.append(f'<text x="{left - 6}" y="{py(tick) + 4:.1f}" text-anchor="end" font-size="10" {FONT}>{_fmt(tick)}</text>')
    return parts

def text_px(text: str, size: int = 10) -> float:
    """The room a label needs at a font size (an upper estimate, see :data:`CHAR_PX`)."""
    return len(text) * CHAR_PX.get(size, 0.62 * size)


def legend_width(names: Sequence[str]) -> int:
    """The width of a legend of ``names``: the longest name in full, up to 420 px."""
    if len(names) <= 1:
        return 0
    return int(min(max(120.0, max(text_px(n, 11) for n in names) + 30), 420.0))


def shorten_unique(names: Sequence[str], limit: int = LEGEND_CHARS) -> list[str]:
    """Labels of at most ``limit`` characters that stay distinct: a long label keeps its start
    and its end (where labels of one model in different settings differ) around an ellipsis,
    and labels that still collide get a number."""
    shown = []
    for name in names:
        if len(name) <= limit:
            shown.append(name)
            continue
        head = (limit - 1) // 2
        tail = limit - 1 - head
        shown.append(name[:head] + "…" + name[len(name) - tail:])
    seen: dict[str, int] = {}
    repeated = {label for label in shown if shown.count(label) > 1}
    for index, label in enumerate(shown):
        if label in repeated:
            seen[label] = seen.get(label, 0) + 1
            suffix = f" #{seen[label]}"
            shown[index] = (label[: limit - len(suffix)] if len(label) + len(suffix) > limit else label) + suffix
    return shown


def _legend(names: Sequence[str], x: float, y: float, width: float = LEGEND_WIDTH,
            colors: dict[str, int] | None = None, dashed: Sequence[str] = ()) -> list[str]:
    parts = []
    labels = shorten_unique(names, max(int((width - 30) / CHAR_PX[11] + 0.999), 8))
    for i, (name, shown) in enumerate(zip(names, labels, strict=True)):
        yy = y + i * 16
        color = PALETTE[(colors or {}).get(name, i) % len(PALETTE)]
        if name in dashed:
            parts.append(f'<line x1="{x:.1f}" x2="{x + 10:.1f}" y1="{yy - 4:.1f}" y2="{yy - 4:.1f}" stroke="{color}" '
                         'stroke-width="2" stroke-dasharray="3 2"/>')
        else:
            parts.append(f'<rect x="{x:.1f}" y="{yy - 9:.1f}" width="10" height="10" fill="{color}"/>')
        parts.append(f'<text x="{x + 14:.1f}" y="{yy:.1f}" font-size="11" {FONT}><title>{escape(name)}</title>{escape(shown)}</text>')
    return parts


def bar_chart(categories: Sequence[str], series: dict[str, Sequence[float | None]], *, title: str = "",
              y_label: str = "", y_range: tuple[float | None, float | None] | None = None,
              errors: dict[str, Sequence[tuple[float, float] | None]] | None = None,
              width: int = 640, height: int = 300, x_label: str = "") -> str:
    """Grouped bars: one group per category, one bar per series (with optional intervals).

    A value of exactly zero is drawn as a short thick line on the axis with a "0" above it, so
    it does not look like a missing bar; a missing value draws nothing."""
    names = list(series)
    legend_w = legend_width(names)
    n_groups = max(len(categories), 1)
    width = max(width, int(text_px(title, 13)) + 24 if title else 0)
    left, right, top = 52, 12 + legend_w, 28 if title else 12
    width = max(width, left + right + max(160, 28 * n_groups * max(len(names), 1) // 2))
    group_w = (width - left - right) / n_groups
    flat = all(text_px(c) <= group_w - 6 for c in categories)
    # rotated labels (30°) start under their group and run down to the right: make room below
    # and, for the last groups, to the right, so that no label is cut
    reach = max((text_px(c) for c in categories), default=0.0)
    bottom = (30 if flat else int(22 + 0.5 * reach + 12)) + (16 if x_label else 0)
    if not flat:
        overflow = max(left + (g + 0.5) * group_w + 0.87 * text_px(c) + 6 - (width - 2)
                       for g, c in enumerate(categories)) if categories else 0.0
        if overflow > 0:
            right += int(overflow) + 1
            width += int(overflow) + 1
    height = max(height, top + 10 + 16 * len(names) + bottom if len(names) > 1 else height)
    plot_w, plot_h = width - left - right, height - top - bottom
    all_values = [v for values in series.values() for v in values if v is not None]
    if errors:
        all_values += [e for bounds in errors.values() for pair in bounds if pair for e in pair]
    low, high = _nice_range(all_values, y_range)

    def y_of(value: float) -> float:
        return top + plot_h * (1 - (value - low) / (high - low))

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">',
             f'<rect width="{width}" height="{height}" fill="white"/>']
    if title:
        parts.append(f'<text x="{width / 2:.1f}" y="18" text-anchor="middle" font-size="13" font-weight="bold" {FONT}>{escape(title)}</text>')
    for tick in _ticks(low, high):
        y = y_of(tick)
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e5e5e5"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="10" {FONT}>{_fmt(tick)}</text>')
    if y_label:
        parts.append(f'<text transform="translate(13 {top + plot_h / 2:.1f}) rotate(-90)" text-anchor="middle" font-size="11" {FONT}>{escape(y_label)}</text>')
    group_w = plot_w / n_groups
    bar_w = max(min(group_w * 0.8 / max(len(names), 1), 40), 1.5)
    for g, category in enumerate(categories):
        x0 = left + g * group_w + (group_w - bar_w * len(names)) / 2
        for s, name in enumerate(names):
            value = series[name][g] if g < len(series[name]) else None
            if value is None or not math.isfinite(value):
                continue
            x = x0 + s * bar_w
            y, base = y_of(value), y_of(max(low, 0.0))
            height_px = max(abs(base - y), 2.0) if value == 0 else abs(base - y)
            parts.append(f'<rect x="{x:.1f}" y="{min(y, base) - (2.0 if value == 0 else 0):.1f}" width="{bar_w * 0.92:.1f}" '
                         f'height="{height_px:.1f}" fill="{PALETTE[s % len(PALETTE)]}">'
                         f'<title>{escape(name)} · {escape(category)}: {value:.4g}</title></rect>')
            if value == 0:
                parts.append(f'<text x="{x + bar_w * 0.46:.1f}" y="{base - 4:.1f}" text-anchor="middle" font-size="9" '
                             f'{FONT}>0</text>')
            pair = errors.get(name, [None] * n_groups)[g] if errors else None
            if pair and all(p is not None and math.isfinite(p) for p in pair):
                cx = x + bar_w * 0.46
                parts.append(f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{y_of(pair[0]):.1f}" y2="{y_of(pair[1]):.1f}" stroke="#222" stroke-width="1.2"/>')
        cx = left + (g + 0.5) * group_w
        if flat:
            parts.append(f'<text x="{cx:.1f}" y="{top + plot_h + 15}" text-anchor="middle" font-size="10" {FONT}>'
                         f'{escape(category)}</text>')
        else:
            parts.append(f'<text transform="translate({cx:.1f} {top + plot_h + 12}) rotate(30)" font-size="10" {FONT}>'
                         f'{escape(category)}</text>')
    parts.append(f'<line x1="{left}" x2="{left}" y1="{top}" y2="{top + plot_h}" stroke="#444"/>')
    parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y_of(max(low, 0.0)):.1f}" y2="{y_of(max(low, 0.0)):.1f}" stroke="#444"/>')
    if x_label:
        parts.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 6}" text-anchor="middle" font-size="11" {FONT}>'
                     f'{escape(x_label)}</text>')
    if len(names) > 1:
        parts += _legend(names, left + plot_w + 18, top + 10, legend_w)
    parts.append("</svg>")
    return "".join(parts)


def line_chart(series: dict[str, Sequence[tuple[float, float]]], *, title: str = "", x_label: str = "",
               y_label: str = "", y_range: tuple[float | None, float | None] | None = None,
               integer_x: bool = False, width: int = 640, height: int = 300) -> str:
    """Lines with markers, one per series of ``(x, y)`` points."""
    names = list(series)
    legend_w = legend_width(names)
    width = max(width, int(text_px(title, 13)) + 24 if title else 0)
    height = max(height, (28 if title else 12) + 10 + 16 * len(names) + 44 if len(names) > 1 else height)
    left, right, top, bottom = 52, 14 + legend_w, 28 if title else 12, 44
    plot_w, plot_h = width - left - right, height - top - bottom
    xs = [x for points in series.values() for x, _ in points]
    ys = [y for points in series.values() for _, y in points if y is not None]
    x_low, x_high = (min(xs), max(xs)) if xs else (0.0, 1.0)
    if x_high <= x_low:
        x_high = x_low + 1
    low, high = _nice_range(ys, y_range)

    def px(x: float) -> float:
        return left + plot_w * (x - x_low) / (x_high - x_low)

    def py(y: float) -> float:
        return top + plot_h * (1 - (y - low) / (high - low))

    parts = _frame(width, height, title, _ticks(low, high), left, plot_w, py)
    for tick in _ticks(x_low, x_high, 8):
        if integer_x and tick != int(tick):
            continue
        parts.append(f'<text x="{px(tick):.1f}" y="{top + plot_h + 14}" text-anchor="middle" font-size="10" {FONT}>{_fmt(tick)}</text>')
    if x_label:
        parts.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 6}" text-anchor="middle" font-size="11" {FONT}>{escape(x_label)}</text>')
    if y_label:
        parts.append(f'<text transform="translate(13 {top + plot_h / 2:.1f}) rotate(-90)" text-anchor="middle" font-size="11" {FONT}>{escape(y_label)}</text>')
    for s, name in enumerate(names):
        points = [(x, y) for x, y in sorted(series[name]) if y is not None and math.isfinite(y)]
        color = PALETTE[s % len(PALETTE)]
        if len(points) > 1:
            path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in points)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="1.6"/>')
        for x, y in points:
            parts.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="2.6" fill="{color}"><title>{escape(name)}: {_fmt(x)} → {y:.4g}</title></circle>')
    parts.append(f'<line x1="{left}" x2="{left}" y1="{top}" y2="{top + plot_h}" stroke="#444"/>')
    parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{top + plot_h}" y2="{top + plot_h}" stroke="#444"/>')
    if len(names) > 1:
        parts += _legend(names, left + plot_w + 20, top + 10, legend_w)
    parts.append("</svg>")
    return "".join(parts)


def category_lines(categories: Sequence[str], series: dict[str, Sequence[float | None]], *, title: str = "",
                   y_label: str = "", y_range: tuple[float | None, float | None] | None = None,
                   errors: dict[str, Sequence[tuple[float, float] | None]] | None = None,
                   dashed: Sequence[str] = (), colors: dict[str, int] | None = None, width: int = 420,
                   height: int = 250) -> str:
    """Lines across ordered categories (``in → cross → out``), one per series, with intervals
    as whiskers; series named in ``dashed`` (a paper's rows) are drawn dashed and hollow;
    ``colors`` gives a series a palette index (a paper row and the user's row of the same
    setting share a colour)."""
    names = list(series)
    legend_w = legend_width(names)
    width = max(width, int(text_px(title, 13)) + 24 if title else 0, 52 + 14 + legend_w + 60 * max(len(categories), 2))
    top, bottom = 28 if title else 12, 30
    height = max(height, top + 10 + 16 * len(names) + bottom if len(names) > 1 else height)
    left, right = 52, 14 + legend_w
    plot_w, plot_h = width - left - right, height - top - bottom
    values = [v for vs in series.values() for v in vs if v is not None]
    if errors:
        values += [e for bounds in errors.values() for pair in bounds if pair for e in pair if e is not None]
    low, high = _nice_range(values, y_range)
    step = plot_w / max(len(categories), 1)

    def px(index: int) -> float:
        return left + step * (index + 0.5)

    def py(value: float) -> float:
        return top + plot_h * (1 - (value - low) / (high - low))

    parts = _frame(width, height, title, _ticks(low, high), left, plot_w, py)
    for index, category in enumerate(categories):
        parts.append(f'<text x="{px(index):.1f}" y="{top + plot_h + 16}" text-anchor="middle" font-size="10" {FONT}>{escape(category)}</text>')
    if y_label:
        parts.append(f'<text transform="translate(13 {top + plot_h / 2:.1f}) rotate(-90)" text-anchor="middle" font-size="11" {FONT}>{escape(y_label)}</text>')
    for s, name in enumerate(names):
        color = PALETTE[(colors or {}).get(name, s) % len(PALETTE)]
        dash = ' stroke-dasharray="4 3"' if name in dashed else ""
        points = [(i, v) for i, v in enumerate(series[name]) if v is not None and math.isfinite(v)]
        if len(points) > 1:
            path = " ".join(f"{px(i):.1f},{py(v):.1f}" for i, v in points)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="1.8"{dash}/>')
        for i, v in points:
            pair = errors.get(name, [None] * len(categories))[i] if errors else None
            if pair and all(p is not None and math.isfinite(p) for p in pair):
                parts.append(f'<line x1="{px(i):.1f}" x2="{px(i):.1f}" y1="{py(pair[0]):.1f}" y2="{py(pair[1]):.1f}" stroke="{color}" stroke-width="1.2"/>')
            fill = "white" if name in dashed else color
            parts.append(f'<circle cx="{px(i):.1f}" cy="{py(v):.1f}" r="3" fill="{fill}" stroke="{color}" stroke-width="1.5">'
                         f'<title>{escape(name)} · {escape(categories[i])}: {v:.4g}</title></circle>')
    parts.append(f'<line x1="{left}" x2="{left}" y1="{top}" y2="{top + plot_h}" stroke="#444"/>')
    parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{top + plot_h}" y2="{top + plot_h}" stroke="#444"/>')
    if len(names) > 1:
        parts += _legend(names, left + plot_w + 20, top + 10, legend_w, colors=colors, dashed=dashed)
    parts.append("</svg>")
    return "".join(parts)


def hbar_chart(labels: Sequence[str], values: Sequence[float | None], *, title: str = "",
               errors: Sequence[tuple[float, float] | None] | None = None, highlight: Sequence[str] = (),
               x_range: tuple[float | None, float | None] | None = None, width: int = 260, bar_h: int = 14) -> str:
    """Horizontal bars, one per label (labels in full on the left), the value printed at the
    bar's end; labels in ``highlight`` (the user's rows) are drawn in a second colour and bold."""
    label_w = max((text_px(label, 10) for label in labels), default=40.0) + 10
    width = max(width, int(label_w + 110), int(text_px(title, 11)) + 16 if title else 0)
    top = 24 if title else 8
    height = top + bar_h * len(labels) + 26
    left = label_w
    plot_w = width - left - 44
    finite = [v for v in values if v is not None and math.isfinite(v)]
    if errors:
        finite += [e for pair in errors if pair for e in pair if e is not None and math.isfinite(e)]
    low, high = _nice_range(finite, x_range)

    def px(value: float) -> float:
        return left + plot_w * (value - low) / (high - low)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height}" viewBox="0 0 {width:.0f} {height}" role="img">',
             f'<rect width="{width:.0f}" height="{height}" fill="white"/>']
    if title:
        parts.append(f'<text x="{width / 2:.1f}" y="15" text-anchor="middle" font-size="11" font-weight="bold" {FONT}>{escape(title)}</text>')
    for tick in _ticks(low, high, 3):
        parts.append(f'<line x1="{px(tick):.1f}" x2="{px(tick):.1f}" y1="{top}" y2="{top + bar_h * len(labels)}" stroke="#e5e5e5"/>')
        parts.append(f'<text x="{px(tick):.1f}" y="{top + bar_h * len(labels) + 12}" text-anchor="middle" font-size="9" {FONT}>{_fmt(tick)}</text>')
    for i, (label, value) in enumerate(zip(labels, values, strict=True)):
        y = top + i * bar_h
        mine = label in highlight
        weight = ' font-weight="bold"' if mine else ""
        parts.append(f'<text x="{left - 6:.1f}" y="{y + bar_h - 4}" text-anchor="end" font-size="10"{weight} {FONT}>{escape(label)}</text>')
        if value is None or not math.isfinite(value):
            parts.append(f'<text x="{left + 4:.1f}" y="{y + bar_h - 4}" font-size="9" fill="#888" {FONT}>–</text>')
            continue
        color = PALETTE[1] if mine else "#9aa7b8"
        x0, x1 = px(max(low, 0.0)), px(value)
        parts.append(f'<rect x="{min(x0, x1):.1f}" y="{y + 2}" width="{max(abs(x1 - x0), 1.5):.1f}" height="{bar_h - 4}" fill="{color}">'
                     f'<title>{escape(label)}: {value:.4g}</title></rect>')
        pair = errors[i] if errors else None
        end = x1
        if pair and all(p is not None and math.isfinite(p) for p in pair):
            parts.append(f'<line x1="{px(pair[0]):.1f}" x2="{px(pair[1]):.1f}" y1="{y + bar_h / 2:.1f}" y2="{y + bar_h / 2:.1f}" stroke="#222" stroke-width="1.2"/>')
            end = max(end, px(pair[1]))
        parts.append(f'<text x="{end + 3:.1f}" y="{y + bar_h - 4}" font-size="9" {FONT}>{_fmt(round(value, 3))}</text>')
    parts.append(f'<line x1="{left:.1f}" x2="{left:.1f}" y1="{top}" y2="{top + bar_h * len(labels)}" stroke="#444"/>')
    parts.append("</svg>")
    return "".join(parts)


def side_by_side(svgs: Sequence[str], gap: int = 8) -> str:
    """One SVG of several placed in a row (small multiples of a figure)."""
    sizes = []
    for svg in svgs:
        match = re.search(r'width="([\d.]+)" height="([\d.]+)"', svg)
        sizes.append((float(match.group(1)), float(match.group(2))) if match else (300.0, 200.0))
    width = sum(w for w, _ in sizes) + gap * max(len(svgs) - 1, 0)
    height = max((h for _, h in sizes), default=0.0)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" role="img">',
             f'<rect width="{width:.0f}" height="{height:.0f}" fill="white"/>']
    x = 0.0
    for svg, (w, _h) in zip(svgs, sizes, strict=True):
        inner = svg.replace('<svg xmlns="http://www.w3.org/2000/svg"', f'<svg x="{x:.0f}" y="0"', 1)
        parts.append(inner)
        x += w + gap
    parts.append("</svg>")
    return "".join(parts)
