"""Small, dependency-free SVG charts for the scorecard (bar and line charts).

Each function returns a complete ``<svg>`` document with explicit ``width``/``height`` (so it
can be embedded inline or as an ``<img>`` data URI) and escapes every label.
"""

from __future__ import annotations

import math
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


def _legend(names: Sequence[str], x: float, y: float) -> list[str]:
    parts = []
    labels = shorten_unique(names)
    for i, (name, shown) in enumerate(zip(names, labels, strict=True)):
        yy = y + i * 16
        parts.append(f'<rect x="{x:.1f}" y="{yy - 9:.1f}" width="10" height="10" fill="{PALETTE[i % len(PALETTE)]}"/>')
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
    legend_width = LEGEND_WIDTH if len(names) > 1 else 0
    left, right, top, bottom = 52, 12 + legend_width, 28 if title else 12, 64
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
    n_groups = max(len(categories), 1)
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
        label = category if len(category) <= 18 else category[:17] + "…"
        cx = left + (g + 0.5) * group_w
        parts.append(f'<text transform="translate({cx:.1f} {top + plot_h + 12}) rotate(30)" font-size="10" {FONT}>{escape(label)}</text>')
    parts.append(f'<line x1="{left}" x2="{left}" y1="{top}" y2="{top + plot_h}" stroke="#444"/>')
    parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y_of(max(low, 0.0)):.1f}" y2="{y_of(max(low, 0.0)):.1f}" stroke="#444"/>')
    if x_label:
        parts.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 6}" text-anchor="middle" font-size="11" {FONT}>'
                     f'{escape(x_label)}</text>')
    if len(names) > 1:
        parts += _legend(names, width - legend_width + 6, top + 10)
    parts.append("</svg>")
    return "".join(parts)


def line_chart(series: dict[str, Sequence[tuple[float, float]]], *, title: str = "", x_label: str = "",
               y_label: str = "", y_range: tuple[float | None, float | None] | None = None,
               integer_x: bool = False, width: int = 640, height: int = 300) -> str:
    """Lines with markers, one per series of ``(x, y)`` points."""
    names = list(series)
    legend_width = LEGEND_WIDTH if len(names) > 1 else 0
    left, right, top, bottom = 52, 14 + legend_width, 28 if title else 12, 44
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

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">',
             f'<rect width="{width}" height="{height}" fill="white"/>']
    if title:
        parts.append(f'<text x="{width / 2:.1f}" y="18" text-anchor="middle" font-size="13" font-weight="bold" {FONT}>{escape(title)}</text>')
    for tick in _ticks(low, high):
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{py(tick):.1f}" y2="{py(tick):.1f}" stroke="#e5e5e5"/>')
        parts.append(f'<text x="{left - 6}" y="{py(tick) + 4:.1f}" text-anchor="end" font-size="10" {FONT}>{_fmt(tick)}</text>')
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
        parts += _legend(names, width - legend_width + 6, top + 10)
    parts.append("</svg>")
    return "".join(parts)
