"""SVG charts of the paper's Figures 4 and 8–13 from the statistics document (self-contained SVG text).

* Figure 4: weighted subquestion score and mean progress (as a share of 3) per model, on the common questions;
* Figure 10: the weighted subquestion score per model with σ(M) error bars (±1.96σ; none where a question has
  fewer than two runs, as the paper draws none for models evaluated once);
* Figures 8 and 12: mean research-tool calls per answer, stacked by tool (models with human grades; all models);
* Figure 9: mean reasoning and visible output tokens per answer (stacked: visible output is output − reasoning);
* Figure 11: the distribution over answers of reasoning and visible output tokens (min, quartiles, max);
* Figure 13: the tags of the questions, sized by how many questions carry them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

COLOURS = ("#3b6ea8", "#e67e22", "#27ae60", "#8e44ad", "#c0392b", "#7f8c8d")
FONT = 'font-family="Helvetica, Arial, sans-serif" font-size="13"'


def _open(width: int, height: int, title: str) -> list[str]:
    return [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
            f'{FONT}>', f'<rect width="{width}" height="{height}" fill="white"/>',
            f'<text x="12" y="24" font-size="15" font-weight="bold">{escape(title)}</text>']  # fmt: skip


def interval_bars(rows: Sequence[tuple[str, float | None, tuple[float, float] | None, str]], *, title: str,
                  note: str = "") -> str:  # fmt: skip
    """Horizontal bars of shares in [0, 1] (``(label, value, interval or None, text)``), whiskers where given."""
    label_w, bar_w, row_h, top = 300, 340, 26, 48 + (16 if note else 0)
    width, height = label_w + bar_w + 200, top + row_h * len(rows) + 34
    out = _open(width, height, title)
    if note:
        out.append(f'<text x="12" y="44" font-size="11" fill="#555">{escape(note)}</text>')
    for i, (label, value, ci, text) in enumerate(rows):
        y = top + i * row_h
        out.append(f'<text x="{label_w - 8}" y="{y + 17}" text-anchor="end">{escape(label)}</text>')
        out.append(f'<rect x="{label_w}" y="{y + 4}" width="{bar_w}" height="{row_h - 8}" fill="#eef1f5"/>')
        if value is not None:
            w = bar_w * max(0.0, min(1.0, value))
            out.append(f'<rect class="bar" x="{label_w}" y="{y + 4}" width="{w:.1f}" height="{row_h - 8}" '
                       f'fill="{COLOURS[0]}"/>')
        if ci is not None:
            x1, x2, ym = label_w + bar_w * ci[0], label_w + bar_w * ci[1], y + row_h / 2
            out.append(f'<line class="errorbar" x1="{x1:.1f}" y1="{ym:.1f}" x2="{x2:.1f}" y2="{ym:.1f}" '
                       'stroke="#1b2f4a" stroke-width="1.5"/>')
            out += [f'<line x1="{x:.1f}" y1="{ym - 5:.1f}" x2="{x:.1f}" y2="{ym + 5:.1f}" stroke="#1b2f4a"/>'
                    for x in (x1, x2)]
        out.append(f'<text x="{label_w + bar_w + 6}" y="{y + 17}">{escape(text)}</text>')
    axis = top + row_h * len(rows) + 16
    out += [f'<text x="{label_w + bar_w * f:.1f}" y="{axis}" text-anchor="middle" fill="#555">{int(f * 100)}%</text>'
            for f in (0, 0.25, 0.5, 0.75, 1.0)]
    out.append("</svg>")
    return "\n".join(out)


def stacked_bars(rows: Mapping[str, Mapping[str, float]], segments: Sequence[str], *, title: str, unit: str) -> str:
    """One horizontal bar per row, stacked by segment (values ≥ 0), the total printed beside it."""
    label_w, bar_w, row_h, top = 300, 340, 26, 64
    width, height = label_w + bar_w + 140, top + row_h * len(rows) + 16
    peak = max((sum(v.get(s, 0.0) for s in segments) for v in rows.values()), default=0.0) or 1.0
    out = _open(width, height, title)
    for i, seg in enumerate(segments):
        x = 12 + 130 * i
        out.append(f'<rect x="{x}" y="36" width="12" height="12" fill="{COLOURS[i % len(COLOURS)]}"/>')
        out.append(f'<text x="{x + 16}" y="46" font-size="11">{escape(seg)}</text>')
    for r, (label, values) in enumerate(rows.items()):
        y, x = top + r * row_h, float(label_w)
        out.append(f'<text x="{label_w - 8}" y="{y + 17}" text-anchor="end">{escape(label)}</text>')
        for i, seg in enumerate(segments):
            v = float(values.get(seg, 0.0))
            w = bar_w * v / peak
            if w > 0:
                out.append(f'<rect class="segment" x="{x:.1f}" y="{y + 4}" width="{w:.1f}" height="{row_h - 8}" '
                           f'fill="{COLOURS[i % len(COLOURS)]}"><title>{escape(seg)}: {v:g}</title></rect>')
            x += w
        total = sum(float(values.get(s, 0.0)) for s in segments)
        out.append(f'<text x="{x + 6:.1f}" y="{y + 17}">{total:,.1f} {escape(unit)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def box_rows(rows: Mapping[str, Mapping[str, float] | None], *, title: str, unit: str) -> str:
    """One box per row: whiskers from min to max, the box from q1 to q3, a mark at the median (a shared scale)."""
    label_w, plot_w, row_h, top = 340, 360, 26, 48
    width, height = label_w + plot_w + 40, top + row_h * len(rows) + 34
    peak = max((b["max"] for b in rows.values() if b), default=0.0) or 1.0
    out = _open(width, height, title)

    def sx(v: float) -> float:
        return label_w + plot_w * v / peak

    for r, (label, b) in enumerate(rows.items()):
        y = top + r * row_h
        ym = y + row_h / 2
        out.append(f'<text x="{label_w - 8}" y="{y + 17}" text-anchor="end">{escape(label)}</text>')
        if not b:
            continue
        out.append(f'<line x1="{sx(b["min"]):.1f}" y1="{ym}" x2="{sx(b["max"]):.1f}" y2="{ym}" stroke="#555"/>')
        box_w = max(1.0, sx(b["q3"]) - sx(b["q1"]))
        out.append(f'<rect class="box" x="{sx(b["q1"]):.1f}" y="{y + 5}" width="{box_w:.1f}" height="{row_h - 10}" '
                   f'fill="{COLOURS[0]}" fill-opacity="0.4" stroke="{COLOURS[0]}"/>')
        out.append(f'<line class="median" x1="{sx(b["median"]):.1f}" y1="{y + 3}" x2="{sx(b["median"]):.1f}" '
                   f'y2="{y + row_h - 3}" stroke="#1b2f4a" stroke-width="2"/>')
    axis = top + row_h * len(rows) + 16
    out += [f'<text x="{sx(peak * f):.1f}" y="{axis}" text-anchor="middle" fill="#555">{peak * f:,.0f}</text>'
            for f in (0, 0.5, 1.0)]
    out.append(f'<text x="{label_w + plot_w}" y="{axis + 14}" text-anchor="end" fill="#555">{escape(unit)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def tag_cloud(counts: Mapping[str, int], *, title: str) -> str:
    """The tags in rows, most frequent first, each sized by its count (12 to 32 points, by the square root)."""
    width, x, y, line_h = 720, 12.0, 64.0, 40.0
    peak = max(counts.values(), default=1)
    words = []
    for n, (tag, count) in enumerate(counts.items()):
        size = 12 + 20 * math.sqrt(count / peak)
        w = 0.6 * size * len(tag) + 18
        if x + w > width - 12 and x > 12:
            x, y = 12.0, y + line_h
        words.append(f'<text class="tag" x="{x:.1f}" y="{y:.1f}" font-size="{size:.1f}" '
                     f'fill="{COLOURS[n % len(COLOURS)]}">{escape(tag)}<title>{count}</title></text>')
        x += w
    out = _open(width, int(y + 24), title) + words
    out.append("</svg>")
    return "\n".join(out)


def _pct(block: Mapping[str, Any] | None) -> tuple[float | None, tuple[float, float] | None]:
    if not block or block.get("value") is None:
        return None, None
    ci = block.get("ci95")
    return float(block["value"]), (float(ci[0]), float(ci[1])) if ci else None


def figure_charts(doc: Mapping[str, Any]) -> dict[str, str]:
    """The SVGs of Figures 4 and 8–13 (file name -> text); a figure without data is left out."""
    fig, models = doc.get("figures") or {}, doc["models"]
    svgs: dict[str, str] = {}
    common = fig.get("common_questions") or {}
    rows = []
    for name, m in (common.get("models") or {}).items():
        v, ci = _pct(m["subquestion_score"])
        rows.append((f"{name}: final answers", v, ci, "—" if v is None else f"{100 * v:.1f}%"))
        mp = m["mean_progress"]
        if mp.get("value") is not None:
            rows.append((f"{name}: proofs (progress / 3)", mp["value"] / 3, (mp["ci95"][0] / 3, mp["ci95"][1] / 3),
                         f"{mp['value']:.2f} of 3"))  # fmt: skip
    if rows:
        svgs["fig4_common_questions.svg"] = interval_bars(rows, title=f"Figure 4: the {common['questions']} questions "
                                                          "with subquestions and human grades",
                                                          note="95% intervals: Wilson at the mean over questions")
    score_rows = []
    for name, m in models.items():
        s = m["subquestions"]
        v = s["score"].get("value")
        if v is None:
            continue
        sigma = s["runs"].get("sigma")
        ci = tuple(s["runs"]["ci95"]) if sigma is not None else None
        text = f"{100 * v:.1f}%" + (f" ± {196 * sigma:.1f} (1.96σ)" if sigma is not None else " (one run: no σ)")
        score_rows.append((name, v, ci, text))
    if score_rows:
        svgs["fig10_subquestion_scores.svg"] = interval_bars(
            score_rows, title="Figure 10: weighted subquestion score", note="error bars: ±1.96σ(M) from repeated "
            "runs (App. I.3), drawn where every question has two or more runs")  # fmt: skip
    usage = fig.get("usage") or {}
    graded = set(fig.get("human_graded_models") or [])
    tools = [t for t in ("python", "bash", "sage", "search", "web search", "code execution")
             if any(u["tool_calls_per_answer"].get(t) for u in usage.values())]  # fmt: skip
    if tools:
        for key, keep, what in (("fig8_tools_graded.svg", graded, "models with human grades"),
                                ("fig12_tools_all.svg", set(usage), "all models")):  # fmt: skip
            picked = {n: u["tool_calls_per_answer"] for n, u in usage.items() if n in keep}
            if picked:
                svgs[key] = stacked_bars(picked, tools, title=f"Tool calls per answer ({what})", unit="calls")
    if any(sum(u["tokens_per_answer"].values()) for u in usage.values()):
        picked = {n: {"reasoning": u["tokens_per_answer"]["reasoning"], "visible output": u["tokens_per_answer"]
                      ["visible"]} for n, u in usage.items()}  # fmt: skip
        svgs["fig9_tokens.svg"] = stacked_bars(picked, ("reasoning", "visible output"),
                                               title="Tokens per answer (output = reasoning + visible)", unit="tokens")
        boxes = {f"{n}: {k}": u["distribution"][key] for n, u in usage.items()
                 for k, key in (("reasoning", "reasoning"), ("visible output", "visible"))}  # fmt: skip
        svgs["fig11_token_distribution.svg"] = box_rows(boxes, title="Tokens per answer: distribution", unit="tokens")
    if fig.get("tags"):
        svgs["fig13_tags.svg"] = tag_cloud(fig["tags"], title="Tags of the questions")
    return svgs


__all__ = ["box_rows", "figure_charts", "interval_bars", "stacked_bars", "tag_cloud"]
