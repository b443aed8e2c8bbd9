"""Small self-contained SVG charts (no plotting library needed to read a report)."""

from __future__ import annotations

from html import escape

from theorembench.common.stats import wilson


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
