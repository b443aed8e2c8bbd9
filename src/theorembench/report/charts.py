"""Radar (for instance D1–D6) and horizontal count-bar SVG charts, beside the bars of ``report.plots``.

Self-contained SVG text, like ``report.plots.accuracy_bars``; values outside [0, 1] on the
radar are drawn at the rim and their true value is printed beside the axis.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from html import escape


def radar_svg(series: Mapping[str, Mapping[str, float | None]], axes: Mapping[str, str], *, title: str) -> str:
    """A radar of one or more series (``name -> {axis: value in [0, 1]}``) over ``axes`` (``key -> label``)."""
    keys = list(axes)
    size, cx, cy, radius = 460, 230, 250, 150
    colours = ["#3b6ea8", "#c0392b", "#27ae60", "#8e44ad"]
    height = size + 24 * max(0, len(series) - 1)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{height}" viewBox="0 0 {size} {height}" '
           'font-family="Helvetica, Arial, sans-serif" font-size="12">',
           f'<rect width="{size}" height="{height}" fill="white"/>',
           f'<text x="12" y="22" font-size="15" font-weight="bold">{escape(title)}</text>']  # fmt: skip

    def point(i: int, r: float) -> tuple[float, float]:
        angle = -math.pi / 2 + 2 * math.pi * i / len(keys)
        return cx + r * math.cos(angle), cy + r * math.sin(angle)

    for ring in (0.25, 0.5, 0.75, 1.0):
        pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in (point(i, radius * ring) for i in range(len(keys))))
        out.append(f'<polygon points="{pts}" fill="none" stroke="#d5dbe3"/>')
    for i, key in enumerate(keys):
        x, y = point(i, radius)
        lx, ly = point(i, radius + 34)
        out.append(f'<line x1="{cx}" y1="{cy}" x2="{x:.1f}" y2="{y:.1f}" stroke="#d5dbe3"/>')
        shown = "; ".join(f"{'n/a' if v.get(key) is None else f'{v[key]:.2f}'}" for v in series.values())
        out.append(f'<text x="{lx:.1f}" y="{ly:.1f}" text-anchor="middle">{escape(key)} {escape(axes[key])}</text>')
        out.append(f'<text x="{lx:.1f}" y="{ly + 14:.1f}" text-anchor="middle" fill="#555">{escape(shown)}</text>')
    for n, (name, values) in enumerate(series.items()):
        colour = colours[n % len(colours)]
        pts = []
        for i, key in enumerate(keys):
            v = values.get(key)
            pts.append(point(i, radius * (0.0 if v is None else max(0.0, min(1.0, float(v))))))
        joined = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
        out.append(f'<polygon class="series" points="{joined}" fill="{colour}" fill-opacity="0.18" '
                   f'stroke="{colour}" stroke-width="2"/>')  # fmt: skip
        ly = size - 6 + 24 * n
        out.append(f'<rect x="12" y="{ly - 10}" width="12" height="12" fill="{colour}"/>')
        out.append(f'<text x="30" y="{ly}">{escape(name)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def count_bars(counts: Mapping[str, int], *, title: str) -> str:
    """Horizontal bars of counts per category (largest first), each labelled with its count."""
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    label_w, bar_w, row_h, top = 190, 320, 24, 44
    width, height = label_w + bar_w + 60, top + row_h * len(rows) + 16
    peak = max((c for _, c in rows), default=0) or 1
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
           'font-family="Helvetica, Arial, sans-serif" font-size="13">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="12" y="24" font-size="15" font-weight="bold">{escape(title)}</text>']  # fmt: skip
    for i, (name, count) in enumerate(rows):
        y = top + i * row_h
        w = bar_w * count / peak
        out.append(f'<text x="{label_w - 8}" y="{y + 16}" text-anchor="end">{escape(name)}</text>')
        out.append(f'<rect class="bar" x="{label_w}" y="{y + 4}" width="{w:.1f}" height="{row_h - 8}" fill="#3b6ea8"/>')
        out.append(f'<text x="{label_w + w + 6:.1f}" y="{y + 16}">{count}</text>')
    out.append("</svg>")
    return "\n".join(out)


__all__ = ["count_bars", "radar_svg"]
