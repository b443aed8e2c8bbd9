"""Every chart of a report, as self-contained SVG text (no plotting library needed to read a report).

* :func:`accuracy_bars`: accuracy per group with its 95% interval and a baseline;
* :func:`radar_svg`: a radar (for instance D1–D6); values outside [0, 1] are drawn at the rim
  and their true value is printed beside the axis;
* :func:`count_bars`: horizontal count bars.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from html import escape

from theorembench.common.stats import wilson


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


def accuracy_bars(
    groups: dict[str, dict], *, title: str, baseline: float | None = 0.2, baseline_label: str = "random guess"
) -> str:
    """Horizontal bars of accuracy per group, each with its 95% interval as a whisker and its n, and a dashed baseline."""
    rows = sorted(groups.items(), key=lambda kv: (-kv[1]["accuracy"], kv[0]))
    label_w, bar_w, row_h, top, right = 240, 360, 26, 48, 170
    height = top + row_h * len(rows) + 30
    width = label_w + bar_w + right
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif" font-size="13">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="12" y="24" font-size="15" font-weight="bold">{escape(title)}</text>',
    ]
    for i, (name, block) in enumerate(rows):
        y = top + i * row_h
        w = bar_w * max(0.0, min(1.0, block["accuracy"]))
        out.append(f'<text x="{label_w - 8}" y="{y + 17}" text-anchor="end">{escape(name)}</text>')
        out.append(f'<rect x="{label_w}" y="{y + 4}" width="{bar_w}" height="{row_h - 8}" fill="#eef1f5"/>')
        out.append(f'<rect x="{label_w}" y="{y + 4}" width="{w:.1f}" height="{row_h - 8}" fill="#3b6ea8"/>')
        low, high = block.get("ci95") or wilson(block["correct"], block["total"])
        x_low, x_high, y_mid = label_w + bar_w * low, label_w + bar_w * high, y + row_h / 2
        out.append(
            f'<line class="ci95" x1="{x_low:.1f}" y1="{y_mid:.1f}" x2="{x_high:.1f}" y2="{y_mid:.1f}" '
            'stroke="#1b2f4a" stroke-width="1.5"/>'
        )
        for x in (x_low, x_high):
            out.append(f'<line x1="{x:.1f}" y1="{y_mid - 5:.1f}" x2="{x:.1f}" y2="{y_mid + 5:.1f}" stroke="#1b2f4a"/>')
        out.append(
            f'<text x="{label_w + bar_w + 6}" y="{y + 17}">{100 * block["accuracy"]:.0f}% '
            f'[{100 * low:.0f}–{100 * high:.0f}] ({block["correct"]}/{block["total"]})</text>'
        )
    axis_y = top + row_h * len(rows) + 4
    for frac in (0, 0.25, 0.5, 0.75, 1.0):
        x = label_w + bar_w * frac
        out.append(f'<text x="{x:.1f}" y="{axis_y + 16}" text-anchor="middle" fill="#555">{int(frac * 100)}%</text>')
    if baseline is not None:
        x = label_w + bar_w * baseline
        out.append(
            f'<line x1="{x:.1f}" y1="{top - 4}" x2="{x:.1f}" y2="{axis_y}" stroke="#c0392b" '
            'stroke-dasharray="4 3" stroke-width="1.5"/>'
        )
        out.append(f'<text x="{x + 4:.1f}" y="{top - 8}" fill="#c0392b" font-size="11">{escape(baseline_label)}</text>')
    out.append("</svg>")
    return "\n".join(out)


__all__ = ["accuracy_bars", "count_bars", "radar_svg"]
