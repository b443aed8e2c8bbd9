"""The IMProofBench statistics document (``stats.json``) from plain rows, and its Markdown report and SVG charts."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from html import escape
from pathlib import Path
from typing import Any

from theorembench.common.outputs import write_json, write_text
from theorembench.common.stats import Estimate, quote
from theorembench.methods.improof.stats import (
    INDICATOR_LABELS,
    INDICATORS,
    PROGRESS_LABELS,
    PROGRESS_LEVELS,
    complete,
    correlations,
    model_stats,
)
from theorembench.methods.improof.stats_agreement import AGREEMENT_RESAMPLES, agreement
from theorembench.methods.improof.stats_charts import figure_charts
from theorembench.methods.improof.stats_figures import figures
from theorembench.report.charts import accuracy_bars
from theorembench.sandbox import summary_line

PROGRESS_COLOURS = ("#c0392b", "#e67e22", "#7fb3d5", "#1f618d")


def pct(block: Mapping[str, Any] | None, digits: int = 1, *, count: int | None = None,
        missing: str = "n=0") -> str:
    """``50.9% [37.1–64.6] n=55`` for an estimate dict (:func:`theorembench.common.stats.quote`); ``missing`` when
    empty (it says what is missing).

    With ``count`` (successes), the percentage is count/n itself, not the stored value rounded to four digits
    (41/55 shows as 74.5%, not 74.6%).
    """
    est = Estimate.from_dict(block)
    if est is None or est.value is None or not est.n:
        return missing
    return quote(est if count is None else replace(est, value=count / est.n), digits)


def corr(block: Mapping[str, Any] | None, what: str = "grades") -> str:
    """``0.48 [0.21, 0.68] n=41`` for a correlation; where there is none, what is missing (``what``: the units)."""
    n = int((block or {}).get("n") or 0)
    if not block or block.get("value") is None:
        if n < 2:
            return f"needs two or more {what} (n={n})"
        return f"one side never varies: no correlation (n={n})"
    ci = block.get("ci95")
    interval = f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else " [95% interval needs four or more]"
    return f"{block['value']:.2f}{interval} n={n}"


def coefficient(block: Mapping[str, Any], what: str = "pairs") -> str:
    """κ or α with its bootstrap interval and n; where there is none, what is missing."""
    n = int(block.get("n") or 0)
    if block.get("value") is None:
        if n < 2:
            return f"needs two or more {what} (n={n})"
        return f"every mark is the same: no coefficient (n={n})"
    ci = block.get("ci95")
    interval = f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else " [95% interval needs more varied marks]"
    return f"{block['value']:.3f}{interval} n={n} {what}"


def sigma_text(runs: Mapping[str, Any]) -> str:
    """σ(M) over repeated runs with its ±1.96σ range; where there is none, what is missing."""
    if runs.get("sigma") is None:
        questions, single = runs.get("questions") or 0, runs.get("single_run_questions") or 0
        if not questions:
            return "no auto-graded answers: σ(M) needs scored runs"
        if single == questions:
            return "one run per question: σ(M) needs repeats"
        return f"σ(M) needs repeats: {single} of {questions} questions have one run"
    return f"{100 * runs['sigma']:.2f} pts (±1.96σ: {100 * runs['ci95'][0]:.1f}–{100 * runs['ci95'][1]:.1f}%)"


def safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.\-]+", "_", text)


def progress_svg(models: Mapping[str, Any], *, title: str = "Progress grades per model") -> str:
    """One stacked bar per model: the shares of grades at progress 0, 1, 2 and 3, with n."""
    label_w, bar_w, row_h, top = 240, 380, 28, 64
    rows = list(models.items())
    width, height = label_w + bar_w + 80, top + row_h * len(rows) + 20
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
           'font-family="Helvetica, Arial, sans-serif" font-size="13">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="12" y="24" font-size="15" font-weight="bold">{escape(title)}</text>']  # fmt: skip
    for i, level in enumerate(PROGRESS_LEVELS):
        x = 12 + 150 * i
        out.append(f'<rect x="{x}" y="36" width="12" height="12" fill="{PROGRESS_COLOURS[i]}"/>')
        out.append(f'<text x="{x + 16}" y="46" font-size="11">{level}/3 {escape(PROGRESS_LABELS[level])}</text>')
    for r, (name, m) in enumerate(rows):
        dist = m["progress"]
        y = top + r * row_h
        out.append(f'<text x="{label_w - 8}" y="{y + 18}" text-anchor="end">{escape(name)}</text>')
        x = float(label_w)
        for i, level in enumerate(PROGRESS_LEVELS):
            count = dist["counts"][str(level)]
            w = bar_w * count / dist["n"] if dist["n"] else 0.0
            if w > 0:
                out.append(f'<rect class="level{level}" x="{x:.1f}" y="{y + 4}" width="{w:.1f}" height="{row_h - 8}" '
                           f'fill="{PROGRESS_COLOURS[i]}"><title>{level}/3: {count}</title></rect>')  # fmt: skip
                if w > 22:
                    out.append(f'<text x="{x + w / 2:.1f}" y="{y + 18}" text-anchor="middle" '
                               f'fill="white">{count}</text>')
            x += w
        out.append(f'<text x="{label_w + bar_w + 6}" y="{y + 18}">n={dist["n"]}</text>')
    out.append("</svg>")
    return "\n".join(out)


def _bar_block(rate: Mapping[str, Any], correct: int, total: int) -> dict[str, Any]:
    return {"accuracy": rate["value"] or 0.0, "correct": correct, "total": total, "ci95": rate["ci95"]}


def charts(doc: Mapping[str, Any]) -> dict[str, str]:
    """SVG charts (file name -> text): progress per model, indicator rates per model, agreement."""
    svgs = {"progress.svg": progress_svg(doc["models"])}
    for name, m in doc["models"].items():
        groups = {}
        for ind in INDICATORS:
            b = m["indicators"][ind]
            if b["applicable"]:
                groups[INDICATOR_LABELS[ind]] = _bar_block(b["rates"]["true"], b["counts"]["true"], b["applicable"])
        if groups:
            svgs[f"indicators_{safe_name(name)}.svg"] = accuracy_bars(
                groups, title=f"Indicators marked true: {name}", baseline=None)
    a = doc.get("agreement") or {}
    if a.get("pairs"):
        p = a["progress"]
        groups = {"Progress (exact)": _bar_block(p["exact_rate"], p["exact"], p["pairs"]),
                  "Progress (within one)": _bar_block(p["within_one_rate"], p["within_one"], p["pairs"])}  # fmt: skip
        for ind in INDICATORS:
            b = a["indicators"][ind]
            if b["pairs"]:
                groups[b["label"]] = _bar_block(b["rate"], b["agreed"], b["pairs"])
        svgs["agreement.svg"] = accuracy_bars(groups, title=f"Inter-rater agreement ({a['pairs']} pairs)",
                                              baseline=None)  # fmt: skip
    return svgs


def _model_sections(doc: Mapping[str, Any]) -> list[str]:
    models = doc["models"]
    lines = ["## Subquestion scores", "",
             "Mean weighted subquestion score (Σ pᵢcᵢ / Σ pᵢ per answer; runs averaged per question, questions "
             "averaged), its 95% interval (Wilson at the mean, n = questions), and σ(M) from repeated runs (App. I.3).", "",
             "| model | score [95% CI] questions | runs per question (min) | σ(M) | all subquestions right |",
             "|---|---|---|---|---|"]  # fmt: skip
    for name, m in models.items():
        s = m["subquestions"]
        lines.append(f"| {name} | {pct(s['score'])} | {s['runs']['min_runs']} | {sigma_text(s['runs'])} | "
                     f"{pct(s['all_correct'])} |")  # fmt: skip
    lines += ["", "## Progress grades", "", "![progress](progress.svg)", "",
              "| model | grades | 0/3 | 1/3 | 2/3 | 3/3 | mean progress (0–3) [95% CI] |",
              "|---|---|---|---|---|---|---|"]
    for name, m in models.items():
        d, mp = m["progress"], m["mean_progress"]
        cells = [f"{d['counts'][str(k)]} ({pct(d['shares'][str(k)], 0, count=d['counts'][str(k)]).split(' n=')[0]})"
                 for k in PROGRESS_LEVELS]
        mean = "n=0" if mp["value"] is None else (f"{mp['value']:.2f} [{mp['ci95'][0]:.2f}–{mp['ci95'][1]:.2f}] "
                                                  f"{mp['questions']} questions")  # fmt: skip
        lines.append(f"| {name} | {d['n']} | " + " | ".join(cells) + f" | {mean} |")
    lines += ["", "## Indicators", "",
              "Rates among complete grades; Correct Result's rates leave out N/A marks, whose rate is shown apart.",
              ""]  # fmt: skip
    for name, m in models.items():
        lines += [f"### {name}", "", "| indicator | true | false | not sure | N/A |", "|---|---|---|---|---|"]
        for ind in INDICATORS:
            b = m["indicators"][ind]
            na = pct(b["na_rate"], count=b["counts"]["na"]) if "na_rate" in b else "—"
            cells = " | ".join(pct(b["rates"][v], count=b["counts"][v]) for v in ("true", "false", "not_sure"))
            lines.append(f"| {b['label']} | {cells} | {na} |")
        chart = f"indicators_{safe_name(name)}.svg"
        lines += ["", f"![indicators {name}]({chart})", ""]
    lines += ["## Subquestion scores against progress grades", "",
              "One unit per complete grade, paired with its answer's subquestion score; Fisher-z 95% intervals.", "",
              "| model | Pearson r (score, progress) | φ (all subquestions right, 3/3) |", "|---|---|---|"]  # fmt: skip
    rows = list(models.items()) + [("all models", {"correlations": doc["overall"]["correlations"]})]
    for name, m in rows:
        c = m["correlations"]
        lines.append(f"| {name} | {corr(c['pearson_score_progress'])} | {corr(c['phi_all_right_full'])} |")
    lines += ["", "## Tool and token usage", "",
              "Output tokens include the reasoning tokens; visible output is output − reasoning.", "",
              "| model | answers | stages | outcomes | output tokens / answer (reasoning included) | "
              "reasoning tokens / answer | visible output / answer | tool calls / answer | tool calls |",
              "|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for name, m in models.items():
        u = m["usage"]
        outcomes = ", ".join(f"{k} {v}" for k, v in u["outcomes"].items()) or "—"
        tools = ", ".join(f"{k} {v}" for k, v in u["tool_calls"].items()) or "—"
        pa = u["per_answer"]
        lines.append(f"| {name} | {u['answers']} | {u['stages']} | {outcomes} | {pa['output_tokens']} | "
                     f"{pa['reasoning_tokens']} | {pa['visible_output_tokens']} | {pa['tool_calls']} | {tools} |")
    return lines + _figure_sections(doc)


def _figure_sections(doc: Mapping[str, Any]) -> list[str]:
    """Figure 4's common questions, the open-problem split and the tags, with their charts."""
    fig = doc.get("figures") or {}
    common = fig.get("common_questions") or {"questions": 0, "models": {}}
    lines = ["", f"## Final answers and proofs on the same questions (Figure 4: {common['questions']} questions)", "",
             "Questions with at least one auto-graded answer and at least one complete human grade.", ""]
    if common["models"]:
        lines += ["![figure 4](fig4_common_questions.svg)", "",
                  "| model | questions | weighted subquestion score | mean progress (0–3) | full solutions |",
                  "|---|---|---|---|---|"]  # fmt: skip
        for name, m in common["models"].items():
            mp = m["mean_progress"]
            mean = "n=0" if mp["value"] is None else f"{mp['value']:.2f} [{mp['ci95'][0]:.2f}–{mp['ci95'][1]:.2f}]"
            lines.append(f"| {name} | {m['questions']} | {pct(m['subquestion_score'])} | {mean} | "
                         f"{pct(m['full_solutions'])} |")
    split = fig.get("open_split") or {"models": {}}
    lines += ["", f"## Open problems ({split.get('open_questions', 0)} questions tagged \"open problem\", "
              f"{split.get('other_questions', 0)} others)", "",
              "| model | open: score | open: full solutions / grades | others: score | "
              "others: full solutions / grades |",
              "|---|---|---|---|---|"]  # fmt: skip
    for name, m in split["models"].items():
        o, r = m["open"], m["other"]
        lines.append(f"| {name} | {pct(o['subquestions'])} | {o['full_solutions']}/{o['progress']['n']} | "
                     f"{pct(r['subquestions'])} | {r['full_solutions']}/{r['progress']['n']} |")
    if fig.get("tags"):
        lines += ["", "## Tags (Figure 13)", "", "![tags](fig13_tags.svg)", "",
                  ", ".join(f"{t} ({n})" for t, n in fig["tags"].items())]
    lines += ["", "Charts: Figure 10 `fig10_subquestion_scores.svg` (σ(M) error bars), Figures 8 and 12 "
              "`fig8_tools_graded.svg` and `fig12_tools_all.svg`, Figure 9 `fig9_tokens.svg`, Figure 11 "
              "`fig11_token_distribution.svg` (where there is data)."]
    return lines


def _agreement_section(a: Mapping[str, Any]) -> list[str]:
    lines = ["## Inter-rater agreement", ""]
    if not a.get("pairs"):
        return lines + ["No answer has two complete grades yet.", ""]
    p = a["progress"]
    lines += [f"{a['answers']} answers graded by two or more of {a['graders']} graders ({a['questions']} questions) "
              f"give {a['pairs']} pairwise comparisons.", "", "![agreement](agreement.svg)", "",
              "| comparison | agreed / pairs | rate [95% CI] | left out (N/A) |", "|---|---|---|---|",
              f"| Progress, exact | {p['exact']}/{p['pairs']} | {pct(p['exact_rate'], count=p['exact'])} | |",
              f"| Progress, within one point | {p['within_one']}/{p['pairs']} | "
              f"{pct(p['within_one_rate'], count=p['within_one'])} | |"]
    for ind in INDICATORS:
        b = a["indicators"][ind]
        lines.append(f"| {b['label']} | {b['agreed']}/{b['pairs']} | {pct(b['rate'], count=b['agreed'])} | "
                     f"{b['left_out_na'] or ''} |")
    q = a["per_question"]
    lines += ["", f"Per question ({q['n']} questions; exact progress and every indicator comparison pooled):", ""]
    for band_name, label in (("high", "≥ 80%"), ("moderate", "60–80%"), ("low", "< 60%")):
        b = q["bands"][band_name]
        lines.append(f"- {band_name} agreement ({label}): {b['questions']} of {q['n']} questions "
                     f"({pct(b['share'], count=b['questions'])})")
    r = a["reliability"]
    lines += ["", f"Chance-corrected (answer-bootstrap 95% intervals, {r['resamples']} resamples):", "",
              f"- weighted Cohen's κ on progress, linear: {coefficient(r['kappa_linear'])}",
              f"- weighted Cohen's κ on progress, quadratic: {coefficient(r['kappa_quadratic'])}",
              f"- Krippendorff's α on progress (ordinal): {coefficient(r['alpha_progress'], 'answers')}", "",
              "| indicator | Krippendorff's α (nominal) |", "|---|---|"]  # fmt: skip
    for ind in INDICATORS:
        lines.append(f"| {INDICATOR_LABELS[ind]} | {coefficient(r['alpha_indicators'][ind], 'answers')} |")
    return lines + [""]


NOTES = [
    "## How these figures are made", "",
    "- Only complete grades count; incomplete and given-up grades are left out.",
    "- σ(M) = (1/N)·√(Σ_Q V(M,Q)), V the sample variance (n − 1) of the weighted scores of M's runs on question Q "
    "and N the questions scored; it is given only when every question has two or more runs. It measures the "
    "spread of one run's average due to stochastic answers; the bootstrap interval measures the finite question "
    "sample.",
    "- Agreement pairs every two complete grades of one answer. An indicator pair agrees when both marks are equal "
    "(true, false or not sure); pairs with an N/A mark are left out. Proportions carry Wilson intervals.",
    "- Cohen's κ is computed by scikit-learn over the pairs (first grader by name), Krippendorff's α by the "
    "`krippendorff` package over the grader × answer table.", "",
]  # fmt: skip


def _isolation_lines(isolation: Mapping[str, Any]) -> list[str]:
    """The header's sandbox isolation, one line per run (a run that ran tools below full isolation says so)."""
    if not isolation:
        return []
    return ["Sandbox isolation of the tools:", "",
            *(f"- run {run}: {summary_line(record)}" for run, record in sorted(isolation.items())), ""]  # fmt: skip


def render(doc: Mapping[str, Any]) -> tuple[str, dict[str, str]]:
    """The Markdown report and its SVG charts for a statistics document."""
    sel = doc["selection"]
    runs = ", ".join(sel["runs"]) if sel.get("runs") else "all runs"
    models = ", ".join(sel["models"]) if sel.get("models") else "all models"
    lines = ["# IMProofBench statistics", "",
             f"Selection: {runs}; {models}. {doc['counts']['answers']} answers on {doc['counts']['problems']} "
             f"problems; {doc['counts']['grades']} complete grades ({doc['counts']['grades_left_out']} incomplete or "
             "given up, left out).", ""]  # fmt: skip
    lines += _isolation_lines(doc.get("isolation") or {})
    lines += _model_sections(doc)
    lines += [""] + _agreement_section(doc.get("agreement") or {}) + NOTES
    return "\n".join(lines), charts(doc) | figure_charts(doc)


def compute(answers: Sequence[Mapping[str, Any]], grades: Sequence[Mapping[str, Any]], *,
            selection: Mapping[str, Any] | None = None, resamples: int = AGREEMENT_RESAMPLES,
            isolation: Mapping[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    """The statistics document (what stats.json holds) from plain rows; ``isolation`` maps each run to the sandbox
    isolation its tools ran under (as the run recorded it)."""
    done = complete(grades)
    return {"kind": "improof.stats", "selection": dict(selection or {}), "isolation": dict(isolation or {}),
            "counts": {"answers": len(answers), "problems": len({a["problem_id"] for a in answers}),
                       "models": len({a["model"] for a in answers}), "grades": len(done),
                       "grades_left_out": len(grades) - len(done)},
            "models": model_stats(answers, grades),
            "overall": {"correlations": correlations(answers, grades)}, "figures": figures(answers, grades),
            "agreement": agreement(grades, resamples=resamples)}  # fmt: skip


def write_outputs(doc: Mapping[str, Any], out_dir: str | Path) -> dict[str, Path]:
    """stats.json, report.md and the SVG charts in ``out_dir``; returns their paths by name."""
    out_dir = Path(out_dir)
    text, svgs = render(doc)
    paths = {"stats": write_json(out_dir / "stats.json", doc), "report": write_text(out_dir / "report.md", text)}
    for name, svg in svgs.items():
        paths[name] = write_text(out_dir / name, svg)
    return paths


__all__ = ["charts", "coefficient", "compute", "corr", "pct", "progress_svg", "render", "write_outputs"]
