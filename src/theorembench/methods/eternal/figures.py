"""The paper's Figures 4 and 5 as SVG: models side by side, overall (ranked) and per difficulty tier.

Figure 4 is :func:`theorembench.report.charts.accuracy_bars` over the models (ranked, each with its
95% interval). Figure 5 is :func:`tier_groups` here: for each tier a group of bars, one per model in
the same colour everywhere, each with its 95% interval as a whisker and its value printed above.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

COLOURS = ("#3b6ea8", "#c0392b", "#27ae60", "#8e44ad", "#d35400", "#16a085", "#7f8c8d", "#2c3e50")


def tier_groups(series: Mapping[str, Mapping[str, Mapping[str, Any]]], tiers: Sequence[str], *, title: str) -> str:
    """Grouped vertical bars: ``series`` is ``model -> tier -> {"accuracy", "ci95"}`` (a tier may be missing)."""
    models = list(series)
    bar_w, gap, left, top, plot_h = 18, 28, 48, 44, 220
    group_w = bar_w * max(1, len(models)) + gap
    width = left + group_w * len(tiers) + 20
    height = top + plot_h + 48 + 18 * len(models)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
           'font-family="Helvetica, Arial, sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="12" y="24" font-size="15" font-weight="bold">{escape(title)}</text>']  # fmt: skip
    base = top + plot_h
    for frac in (0, 0.25, 0.5, 0.75, 1.0):
        y = base - plot_h * frac
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{width - 12}" y2="{y:.1f}" stroke="#eef1f5"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" fill="#555">{int(frac * 100)}%</text>')
    for g, tier in enumerate(tiers):
        x0 = left + gap / 2 + g * group_w
        for m, model in enumerate(models):
            block = series[model].get(tier)
            if not block or block.get("accuracy") is None:
                continue
            acc = max(0.0, min(1.0, float(block["accuracy"])))
            x, h = x0 + m * bar_w, plot_h * acc
            colour = COLOURS[m % len(COLOURS)]
            out.append(f'<rect class="bar" x="{x:.1f}" y="{base - h:.1f}" width="{bar_w - 3}" height="{h:.1f}" '
                       f'fill="{colour}"><title>{escape(model)} {escape(tier)}: {100 * acc:.1f}%</title></rect>')  # fmt: skip
            low, high = block.get("ci95") or (acc, acc)
            mid = x + (bar_w - 3) / 2
            out.append(f'<line class="ci95" x1="{mid:.1f}" y1="{base - plot_h * high:.1f}" x2="{mid:.1f}" '
                       f'y2="{base - plot_h * low:.1f}" stroke="#1b2f4a"/>')  # fmt: skip
            out.append(f'<text x="{mid:.1f}" y="{base - plot_h * high - 4:.1f}" text-anchor="middle" '
                       f'font-size="9">{100 * acc:.0f}</text>')  # fmt: skip
        out.append(f'<text x="{x0 + bar_w * len(models) / 2:.1f}" y="{base + 18}" text-anchor="middle">'
                   f'{escape(tier)}</text>')  # fmt: skip
    for m, model in enumerate(models):
        y = base + 40 + 18 * m
        out.append(f'<rect x="12" y="{y - 10}" width="12" height="12" fill="{COLOURS[m % len(COLOURS)]}"/>')
        out.append(f'<text x="30" y="{y}">{escape(model)}</text>')
    out.append("</svg>")
    return "\n".join(out)


__all__ = ["tier_groups"]
