"""IMProofBench statistics per model, over plain rows: progress, indicators, subquestion scores, correlations, usage.

Two kinds of rows, both plain dicts (``stats_load`` builds them from the store):

- an answer row: ``answer_id, run_id, problem_id, question, model, epoch, score, all_correct, stages``;
  ``question`` (default: the problem id) names the unit of every per-question figure: a problem answered in
  several versions is one question per version (``stats_load.separate_non_repeats``); ``score`` is the
  answer's weighted subquestion score Σ pᵢcᵢ / Σ pᵢ (None when the problem has no subquestions or the answer has
  no verdicts yet), ``all_correct`` whether every subquestion was judged correct;
- a grade row: ``answer_id, problem_id, model, grader, progress (0..3 or None), indicators {name: value}, status``.

Only grades with status ``complete`` count; incomplete and given-up grades are left out (and counted).

Choices, written out:

- σ(M) is App. I.3's ``(1/N)·√(Σ_Q V(M,Q))`` with V the *sample* variance (n − 1 in the denominator, as the paper
  says) of the weighted scores of model M's runs on question Q, and N the number of questions in the score. It is
  the standard deviation, due to sampling, of one run's average score. It is given only when every question has
  at least two runs; its interval is score ± 1.96σ (the paper rounds this to ±2σ). Only repeats are pooled: the
  rows of one entry come from one run (endpoint, settings, mode) and a question is one problem version.
- The score is the mean over questions of each question's mean over runs; its interval (finite-question
  uncertainty, the other source I.3 names) is the Wilson interval at that mean with n = questions
  (``wilson-mean over questions``: conservative for scores in [0, 1], never a point at small n).
- Correlations pair each complete grade with its answer's subquestion score (an answer graded twice counts twice);
  Pearson between the score and the progress grade, φ between "all subquestions right" and "progress 3/3" (φ is
  Pearson on the two 0/1 variables). Intervals: Fisher's z transform (n > 3).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from theorembench.common.stats import Z95, bounded_mean, proportion
from theorembench.methods.improof.grades import (
    ACHIEVEMENTS,
    INDICATOR_LABELS,
    INDICATORS,
    MISTAKES,
    NA,
    PROGRESS,
    VALUES,
)

PROGRESS_LEVELS = (0, 1, 2, 3)
PROGRESS_LABELS = PROGRESS  # the grading form's words (grades.py), also INDICATOR_LABELS


def complete(grades: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The grades that count: status complete."""
    return [g for g in grades if g.get("status", "complete") == "complete"]


def _fisher(r: float | None, n: int) -> dict[str, Any]:
    """A correlation with its n and a Fisher-z 95% interval (None where undefined)."""
    if r is None:
        return {"value": None, "n": n, "ci95": None, "ci_method": "fisher-z"}
    if n > 3 and abs(r) < 1:
        z, half = math.atanh(r), Z95 / math.sqrt(n - 3)
        ci = [round(math.tanh(z - half), 4), round(math.tanh(z + half), 4)]
    elif abs(r) == 1 and n > 3:
        ci = [round(r, 4), round(r, 4)]
    else:
        ci = None
    return {"value": round(r, 4), "n": n, "ci95": ci, "ci_method": "fisher-z"}


def pearson(x: Sequence[float], y: Sequence[float]) -> dict[str, Any]:
    """Pearson's r of paired values with n and a Fisher-z interval; value None when either side is constant."""
    if len(x) != len(y):
        raise ValueError(f"paired samples differ in length: {len(x)} and {len(y)}")
    n = len(x)
    if n < 2:
        return _fisher(None, n)
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    if sxx <= 0 or syy <= 0:
        return _fisher(None, n)
    return _fisher(sxy / math.sqrt(sxx * syy), n)


def phi(pairs: Iterable[tuple[bool, bool]]) -> dict[str, Any]:
    """φ of paired booleans (x, y) from the 2×2 table, with the table, n and a Fisher-z interval."""
    t = Counter((bool(a), bool(b)) for a, b in pairs)
    n11, n10, n01, n00 = t[(True, True)], t[(True, False)], t[(False, True)], t[(False, False)]
    n = n11 + n10 + n01 + n00
    denom = (n11 + n10) * (n01 + n00) * (n11 + n01) * (n10 + n00)
    out = _fisher(None if denom == 0 else (n11 * n00 - n10 * n01) / math.sqrt(denom), n)
    out["table"] = {"both": n11, "x_only": n10, "y_only": n01, "neither": n00}
    return out


def progress_distribution(grades: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Counts of progress 0..3 over complete grades, each share with its Wilson interval."""
    values = [g["progress"] for g in complete(grades) if g.get("progress") is not None]
    counts = Counter(int(v) for v in values)
    n = len(values)
    return {"n": n, "counts": {str(k): counts.get(k, 0) for k in PROGRESS_LEVELS},
            "shares": {str(k): proportion(counts.get(k, 0), n).to_dict() for k in PROGRESS_LEVELS}}  # fmt: skip


def _question_means(rows: Iterable[tuple[str, str, float]]) -> dict[str, float]:
    """(problem_id, answer_id, value) -> per question, the mean over answers of each answer's mean value."""
    per_answer: dict[tuple[str, str], list[float]] = defaultdict(list)
    for problem, answer, value in rows:
        per_answer[(problem, answer)].append(value)
    per_question: dict[str, list[float]] = defaultdict(list)
    for (problem, _), vals in per_answer.items():
        per_question[problem].append(sum(vals) / len(vals))
    return {q: sum(v) / len(v) for q, v in sorted(per_question.items())}


def mean_progress(grades: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Mean progress (0–3): graders averaged per answer, answers per question; the Wilson interval at that mean
    on the 0–3 scale over questions (never a point at small n)."""
    rows = [(g.get("question", g["problem_id"]), g["answer_id"], float(g["progress"])) for g in complete(grades)
            if g.get("progress") is not None]  # fmt: skip
    means = _question_means(rows)
    est = bounded_mean(list(means.values()), scale=3.0)
    return replace(est, method=f"{est.method} over questions").to_dict() | {"questions": len(means)}


def indicator_rates(grades: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Per indicator over complete grades: counts of each value and the true/false/not-sure rates.

    The rates' denominator leaves out N/A (only Correct Result allows it); the N/A rate is over all marks.
    """
    done = complete(grades)
    out: dict[str, Any] = {}
    for name in INDICATORS:
        marks = [str(g["indicators"][name]) for g in done if (g.get("indicators") or {}).get(name) is not None]
        counts = Counter(marks)
        applicable = len(marks) - counts.get(NA, 0)
        block: dict[str, Any] = {"label": INDICATOR_LABELS[name], "marks": len(marks), "applicable": applicable,
                                 "counts": {v: counts.get(v, 0) for v in (*VALUES, NA)}}  # fmt: skip
        block["rates"] = {v: proportion(counts.get(v, 0), applicable).to_dict() for v in VALUES}
        if name == "correct_result":
            block["na_rate"] = proportion(counts.get(NA, 0), len(marks)).to_dict()
        out[name] = block
    return out


def sigma_runs(per_question: Mapping[str, Sequence[float]]) -> dict[str, Any]:
    """App. I.3: σ(M) = (1/N)·√(Σ_Q V(M,Q)), V the sample variance of the runs' scores on question Q.

    ``per_question`` maps each question to its runs' weighted scores. σ is None unless every question has at
    least two runs (then ``single_run_questions`` says how many have one).
    """
    n = len(per_question)
    variances = {}
    single = 0
    for q, runs in per_question.items():
        if len(runs) < 2:
            single += 1
            continue
        m = sum(runs) / len(runs)
        variances[q] = sum((s - m) ** 2 for s in runs) / (len(runs) - 1)
    sigma = None if n == 0 or single else math.sqrt(sum(variances.values())) / n
    return {"sigma": None if sigma is None else round(sigma, 6), "questions": n, "single_run_questions": single,
            "min_runs": min((len(r) for r in per_question.values()), default=0),
            "variance_sum": round(sum(variances.values()), 6), "variance": "sample (n-1)"}  # fmt: skip


def score_summary(answers: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Mean weighted subquestion score over questions, with σ(M) from repeated runs and its Wilson-at-mean interval over questions."""
    per_question: dict[str, list[float]] = defaultdict(list)
    unscored = 0
    for a in answers:
        if a.get("score") is None:
            unscored += 1
            continue
        per_question[a.get("question", a["problem_id"])].append(float(a["score"]))
    means = [sum(v) / len(v) for _, v in sorted(per_question.items())]
    est = replace(bounded_mean(means), method="wilson-mean over questions").to_dict()
    sig = sigma_runs(per_question)
    value = est["value"]
    if sig["sigma"] is not None and value is not None:
        half = Z95 * sig["sigma"]
        sig["ci95"] = [round(max(0.0, value - half), 4), round(min(1.0, value + half), 4)]
    else:
        sig["ci95"] = None
    all_right = [a["all_correct"] for a in answers if a.get("score") is not None and a.get("all_correct") is not None]
    return {"score": est, "runs": sig, "answers": sum(len(v) for v in per_question.values()), "unscored": unscored,
            "all_correct": proportion(sum(1 for v in all_right if v), len(all_right)).to_dict()}  # fmt: skip


def correlations(answers: Sequence[Mapping[str, Any]], grades: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Pearson (subquestion score vs progress) and φ (all subquestions right vs 3/3), one unit per complete grade."""
    by_id = {a["answer_id"]: a for a in answers}
    xs, ys, flags = [], [], []
    for g in complete(grades):
        a = by_id.get(g["answer_id"])
        if a is None or a.get("score") is None or g.get("progress") is None:
            continue
        xs.append(float(a["score"]))
        ys.append(float(g["progress"]))
        flags.append((bool(a.get("all_correct")), int(g["progress"]) == 3))
    return {"pearson_score_progress": pearson(xs, ys), "phi_all_right_full": phi(flags)}


def usage(answers: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Tokens, turns, tool calls and stage outcomes summed over the answers' stages, with means per answer."""
    totals: Counter[str] = Counter()
    tools: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    by_stage: dict[str, Counter[str]] = defaultdict(Counter)
    n = stages = 0
    for a in answers:
        n += 1
        for s in a.get("stages") or []:
            stages += 1
            outcomes[str(s.get("outcome"))] += 1
            key = str(s.get("stage"))
            for field in ("input_tokens", "output_tokens", "reasoning_tokens", "turns"):
                value = int(s.get(field) or 0)
                totals[field] += value
                by_stage[key][field] += value
            by_stage[key]["stages"] += 1
            for tool, count in (s.get("tool_calls") or {}).items():
                tools[tool] += int(count)
                by_stage[key]["tool_calls"] += int(count)
    fields = ("input_tokens", "output_tokens", "reasoning_tokens", "turns")
    totals["visible_output_tokens"] = max(0, totals["output_tokens"] - totals["reasoning_tokens"])
    fields += ("visible_output_tokens",)  # output includes reasoning: visible = output - reasoning, never added twice
    return {"answers": n, "stages": stages, "outcomes": dict(sorted(outcomes.items())),
            "totals": {f: totals[f] for f in fields}, "tool_calls": dict(sorted(tools.items())),
            "tool_calls_total": sum(tools.values()),
            "per_answer": {f: round(totals[f] / n, 2) if n else None for f in fields}
            | {"tool_calls": round(sum(tools.values()) / n, 2) if n else None},
            "by_stage": {k: dict(v) for k, v in sorted(by_stage.items())}}  # fmt: skip


def model_stats(answers: Sequence[Mapping[str, Any]], grades: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Every per-model figure, keyed by model (rows carry the model label)."""
    models = sorted({a["model"] for a in answers} | {g["model"] for g in grades})
    out = {}
    for m in models:
        ans = [a for a in answers if a["model"] == m]
        grd = [g for g in grades if g["model"] == m]
        out[m] = {"progress": progress_distribution(grd), "mean_progress": mean_progress(grd),
                  "indicators": indicator_rates(grd), "subquestions": score_summary(ans),
                  "correlations": correlations(ans, grd), "usage": usage(ans),
                  "grades": {"complete": len(complete(grd)), "left_out": len(grd) - len(complete(grd))}}  # fmt: skip
    return out


__all__ = ["ACHIEVEMENTS", "INDICATORS", "INDICATOR_LABELS", "MISTAKES", "NA", "PROGRESS_LABELS", "PROGRESS_LEVELS",
           "VALUES", "complete", "correlations", "indicator_rates", "mean_progress", "model_stats", "pearson", "phi",
           "progress_distribution", "score_summary", "sigma_runs", "usage"]  # fmt: skip
