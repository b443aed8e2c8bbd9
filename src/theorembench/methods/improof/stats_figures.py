"""The figures of the paper that are not per-model scores: Figure 4's common questions, the token and tool usage of
Figures 8, 9, 11 and 12 per answer, the open-problem split (§4.1) and the tag counts of Figure 13.

Over the same plain rows as :mod:`stats` (answer rows carry ``tags`` and ``open`` from the answered problem version).
Token rule: a stage's ``output_tokens`` already include its ``reasoning_tokens`` (see ``budget.py``), so a chart
splits output into reasoning and *visible* output (output − reasoning), and never stacks reasoning on output.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from theorembench.common.stats import proportion
from theorembench.methods.improof.stats import complete, mean_progress, progress_distribution, score_summary

# tool names as charts show them: the paper's wording names sage and search otherwise; submit is not a research tool
TOOL_LABELS = {"python": "python", "bash": "bash", "sage": "sage", "sage_computation": "sage", "search": "search",
               "web_search": "web search", "code_execution": "code execution"}  # fmt: skip
CHART_TOOLS = ("python", "bash", "sage", "search", "web search", "code execution")


def answer_usage(answer: Mapping[str, Any]) -> dict[str, Any]:
    """One answer's tokens (reasoning, visible output) and research-tool calls over all its stages."""
    reasoning = output = 0
    tools: Counter[str] = Counter()
    for s in answer.get("stages") or []:
        reasoning += int(s.get("reasoning_tokens") or 0)
        output += int(s.get("output_tokens") or 0)
        for name, n in (s.get("tool_calls") or {}).items():
            if name in TOOL_LABELS:
                tools[TOOL_LABELS[name]] += int(n)
    return {"reasoning": reasoning, "visible": max(0, output - reasoning), "output": output, "tools": dict(tools)}


def _quartiles(values: Sequence[float]) -> dict[str, float] | None:
    """min, q1, median, q3, max (linear interpolation between order statistics); None when empty."""
    if not values:
        return None
    v = sorted(values)

    def at(p: float) -> float:
        k = (len(v) - 1) * p
        lo = int(k)
        hi = min(lo + 1, len(v) - 1)
        return round(v[lo] + (v[hi] - v[lo]) * (k - lo), 2)

    return {"min": v[0], "q1": at(0.25), "median": at(0.5), "q3": at(0.75), "max": v[-1]}


def usage_figures(answers: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per model: mean tokens (reasoning, visible output) and tool calls per answer, and the token distributions."""
    by_model: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for a in answers:
        by_model[a["model"]].append(answer_usage(a))
    out = {}
    for model, rows in sorted(by_model.items()):
        n = len(rows)
        tools = {t: round(sum(r["tools"].get(t, 0) for r in rows) / n, 2) for t in CHART_TOOLS}
        out[model] = {"answers": n,
                      "tokens_per_answer": {k: round(sum(r[k] for r in rows) / n, 1) for k in ("reasoning", "visible")},
                      "tool_calls_per_answer": {t: v for t, v in tools.items() if v},
                      "distribution": {k: _quartiles([r[k] for r in rows]) for k in ("reasoning", "visible")}}
    return out


def common_questions(answers: Sequence[Mapping[str, Any]], grades: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Figure 4: the questions with both an auto-graded subquestion score and a complete human grade, and on them per
    model the weighted subquestion score and the progress grades (mean, and the share of full solutions)."""
    done = [g for g in complete(grades) if g.get("progress") is not None]
    both = {g.get("question", g["problem_id"]) for g in done} & {a.get("question", a["problem_id"]) for a in answers
                                                                  if a.get("score") is not None}  # fmt: skip
    models: dict[str, Any] = {}
    for model in sorted({a["model"] for a in answers}):
        ans = [a for a in answers if a["model"] == model and a.get("question", a["problem_id"]) in both]
        grd = [g for g in done if g["model"] == model and g.get("question", g["problem_id"]) in both]
        if not ans or not grd:
            continue
        full = sum(1 for g in grd if int(g["progress"]) == 3)
        models[model] = {"questions": len({a.get("question", a["problem_id"]) for a in ans}),
                         "subquestion_score": score_summary(ans)["score"], "mean_progress": mean_progress(grd),
                         "full_solutions": proportion(full, len(grd)).to_dict()}  # fmt: skip
    return {"questions": len(both), "question_ids": sorted(both), "models": models,
            "rule": "questions with at least one auto-graded answer and at least one complete human grade"}


def open_split(answers: Sequence[Mapping[str, Any]], grades: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per model, the figures on the questions their authors call open (tag "open problem") and on the others."""
    open_q = {a.get("question", a["problem_id"]) for a in answers if a.get("open")}
    out: dict[str, Any] = {"open_questions": len(open_q),
                           "other_questions": len({a.get("question", a["problem_id"]) for a in answers} - open_q),
                           "models": {}}  # fmt: skip
    for model in sorted({a["model"] for a in answers}):
        block = {}
        for part, keep in (("open", True), ("other", False)):
            ans = [a for a in answers if a["model"] == model and (a.get("question", a["problem_id"]) in open_q) == keep]
            grd = [g for g in grades if g["model"] == model and (g.get("question", g["problem_id"]) in open_q) == keep]
            dist = progress_distribution(grd)
            block[part] = {"answers": len(ans), "subquestions": score_summary(ans)["score"],
                           "progress": dist, "full_solutions": dist["counts"]["3"]}  # fmt: skip
        out["models"][model] = block
    return out


def tag_counts(answers: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """How many of the selection's questions carry each tag (Figure 13's weights), most frequent first."""
    seen: dict[str, list[str]] = {}
    for a in answers:
        seen.setdefault(a.get("question", a["problem_id"]), list(a.get("tags") or []))
    counts = Counter(t for tags in seen.values() for t in tags)
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def figures(answers: Sequence[Mapping[str, Any]], grades: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Everything this module computes, as the stats document's ``figures``."""
    graded = {g["model"] for g in complete(grades)}
    return {"common_questions": common_questions(answers, grades), "usage": usage_figures(answers),
            "human_graded_models": sorted(graded), "open_split": open_split(answers, grades),
            "tags": tag_counts(answers),
            "token_rule": "output tokens include reasoning tokens: charts show reasoning and visible output "
                          "(output - reasoning)"}  # fmt: skip


__all__ = ["CHART_TOOLS", "TOOL_LABELS", "answer_usage", "common_questions", "figures", "open_split", "tag_counts",
           "usage_figures"]
