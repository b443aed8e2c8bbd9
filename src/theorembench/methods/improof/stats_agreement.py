"""Inter-rater agreement of human grades (App. I.2): pairwise agreement, per-question bands, κ and α.

Units are answers with at least two complete grades; every pair of their graders is one comparison (an answer
graded by three people gives three pairs), the pair ordered by grader name. Definitions, as the paper's:

- progress: *exact* when both grades are equal, *within one* when they differ by at most one point (exact
  included); n = pairs where both graders gave a progress grade;
- an indicator: the pair agrees when both marks are the same value (true, false or not sure). A pair where either
  grader marked N/A is left out (only Correct Result allows N/A: the paper's 45/53 leaves out two of 55 pairs);
- a question's agreement pools, over its pairs, the exact progress comparisons and every indicator comparison;
  bands: high ≥ 80%, moderate 60–80%, low < 60%.

Library figures: weighted Cohen's κ (linear and quadratic, scikit-learn) on progress over the pairs, and
Krippendorff's α (the ``krippendorff`` package; ordinal for progress, nominal for each indicator) over the
grader × answer matrix. Their 95% intervals are a seeded percentile bootstrap over answers. Pairwise agreement
rates carry Wilson intervals (pairs of one answer are not independent, so those intervals are on the narrow side).
"""

from __future__ import annotations

import math
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np

from theorembench.common.stats import BOOTSTRAP_SEED, proportion
from theorembench.methods.improof.stats import INDICATOR_LABELS, INDICATORS, NA, PROGRESS_LEVELS, VALUES, complete

AGREEMENT_RESAMPLES = 1000  # each resample calls the libraries; 1000 keeps a report within seconds
BANDS = (("high", 0.8), ("moderate", 0.6), ("low", 0.0))


def grade_pairs(grades: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every pair of complete grades of the same answer (ordered by grader name)."""
    by_answer: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for g in complete(grades):
        by_answer[g["answer_id"]].append(g)
    pairs = []
    for answer_id in sorted(by_answer):
        graded = sorted(by_answer[answer_id], key=lambda g: str(g["grader"]))
        for a, b in combinations(graded, 2):
            pairs.append({"answer_id": answer_id, "problem_id": a["problem_id"], "a": a, "b": b})
    return pairs


def _mark(grade: Mapping[str, Any], name: str) -> str | None:
    value = (grade.get("indicators") or {}).get(name)
    return None if value is None else str(value)


def _indicator_comparison(pair: Mapping[str, Any], name: str) -> bool | None:
    """True/False whether the pair agrees on ``name``; None when it does not count (missing or N/A)."""
    x, y = _mark(pair["a"], name), _mark(pair["b"], name)
    if x is None or y is None or NA in (x, y):
        return None
    return x == y


def _progress_diff(pair: Mapping[str, Any]) -> int | None:
    x, y = pair["a"].get("progress"), pair["b"].get("progress")
    return None if x is None or y is None else abs(int(x) - int(y))


def progress_agreement(pairs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Exact and within-one agreement on progress, with counts, fractions and Wilson intervals."""
    diffs = [d for d in (_progress_diff(p) for p in pairs) if d is not None]
    n = len(diffs)
    exact = sum(1 for d in diffs if d == 0)
    within = sum(1 for d in diffs if d <= 1)
    return {"pairs": n, "exact": exact, "within_one": within,
            "exact_rate": proportion(exact, n).to_dict(), "within_one_rate": proportion(within, n).to_dict(),
            "differences": {str(k): diffs.count(k) for k in range(4)}}  # fmt: skip


def indicator_agreement(pairs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per indicator: pairs that agree, pairs compared and pairs left out for N/A, with the agreement rate."""
    out = {}
    for name in INDICATORS:
        marked = [p for p in pairs if _mark(p["a"], name) is not None and _mark(p["b"], name) is not None]
        results = [r for r in (_indicator_comparison(p, name) for p in marked) if r is not None]
        agreed = sum(results)
        out[name] = {"label": INDICATOR_LABELS[name], "agreed": agreed, "pairs": len(results),
                     "left_out_na": len(marked) - len(results),
                     "rate": proportion(agreed, len(results)).to_dict()}  # fmt: skip
    return out


def band(rate: float) -> str:
    """high (≥ 80%), moderate (60–80%) or low (< 60%)."""
    return next(name for name, floor in BANDS if rate >= floor)


def question_agreement(pairs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per question: agreements over comparisons (exact progress and every indicator), its band, and band shares."""
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for p in pairs:
        t = tally[p["problem_id"]]
        d = _progress_diff(p)
        results = [] if d is None else [d == 0]
        results += [r for r in (_indicator_comparison(p, n) for n in INDICATORS) if r is not None]
        t[0] += sum(results)
        t[1] += len(results)
    questions = {q: {"agreed": a, "comparisons": c, "rate": round(a / c, 4), "band": band(a / c)}
                 for q, (a, c) in sorted(tally.items()) if c}  # fmt: skip
    n = len(questions)
    bands = {}
    for name, _ in BANDS:
        k = sum(1 for q in questions.values() if q["band"] == name)
        bands[name] = {"questions": k, "share": proportion(k, n).to_dict()}
    return {"questions": questions, "bands": bands, "n": n}


def _bootstrap(units: int, stat: Callable[[np.ndarray], float | None], *, resamples: int,
               seed: int | None) -> list[float] | None:  # fmt: skip
    """A percentile 95% interval of ``stat`` over resampled unit indices (None when most resamples are undefined)."""
    if units < 2:
        return None
    rng = np.random.default_rng(BOOTSTRAP_SEED if seed is None else seed)
    values = []
    for _ in range(resamples):
        v = stat(rng.integers(0, units, size=units))
        if v is not None and not math.isnan(v):
            values.append(v)
    if len(values) < resamples / 2:
        return None
    low, high = np.quantile(values, [0.025, 0.975])
    return [round(float(low), 4), round(float(high), 4)]


def weighted_kappa(x: Sequence[int], y: Sequence[int], weights: str) -> float | None:
    """Cohen's κ of two paired progress sequences (``weights``: linear, quadratic, or none), by scikit-learn."""
    from sklearn.metrics import cohen_kappa_score

    if not x:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # undefined κ (one label only) comes back as NaN
        value = cohen_kappa_score(list(x), list(y), labels=list(PROGRESS_LEVELS),
                                  weights=None if weights == "none" else weights)  # fmt: skip
    return None if math.isnan(value) else float(value)


def krippendorff_alpha(matrix: np.ndarray, level: str, domain: Sequence[float]) -> float | None:
    """Krippendorff's α of a raters × units matrix (NaN = no mark), by the ``krippendorff`` package."""
    import krippendorff

    pairable = (~np.isnan(matrix)).sum(axis=0) >= 2
    values = matrix[:, pairable]
    if values.size == 0 or len(np.unique(values[~np.isnan(values)])) < 2:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        value = krippendorff.alpha(reliability_data=values, level_of_measurement=level, value_domain=list(domain))
    return None if math.isnan(value) else float(value)


def _matrix(grades: Sequence[Mapping[str, Any]], value: Callable[[Mapping[str, Any]], float | None]
            ) -> np.ndarray:  # fmt: skip
    """Graders × answers (answers with ≥ 2 complete grades), NaN where a grader gave no usable mark."""
    done = complete(grades)
    counts: dict[str, int] = defaultdict(int)
    for g in done:
        counts[g["answer_id"]] += 1
    answers = sorted(a for a, k in counts.items() if k >= 2)
    graders = sorted({str(g["grader"]) for g in done if counts[g["answer_id"]] >= 2})
    col, row = {a: i for i, a in enumerate(answers)}, {r: i for i, r in enumerate(graders)}
    m = np.full((len(graders), len(answers)), np.nan)
    for g in done:
        if g["answer_id"] in col:
            v = value(g)
            if v is not None:
                m[row[str(g["grader"])], col[g["answer_id"]]] = v
    return m


def _progress_value(g: Mapping[str, Any]) -> float | None:
    return None if g.get("progress") is None else float(g["progress"])


def _indicator_value(name: str) -> Callable[[Mapping[str, Any]], float | None]:
    def value(g: Mapping[str, Any]) -> float | None:
        mark = _mark(g, name)
        return None if mark is None or mark == NA else float(VALUES.index(mark))

    return value


def reliability(grades: Sequence[Mapping[str, Any]], pairs: Sequence[Mapping[str, Any]], *,
                resamples: int = AGREEMENT_RESAMPLES, seed: int | None = None) -> dict[str, Any]:  # fmt: skip
    """Weighted κ on progress and Krippendorff's α (progress ordinal, indicators nominal), each with n and a CI."""
    usable = [(p["answer_id"], int(p["a"]["progress"]), int(p["b"]["progress"])) for p in pairs
              if _progress_diff(p) is not None]  # fmt: skip
    answer_ids = sorted({u[0] for u in usable})
    by_answer: dict[str, list[int]] = defaultdict(list)
    for i, (aid, _, _) in enumerate(usable):
        by_answer[aid].append(i)
    groups = [by_answer[a] for a in answer_ids]
    xs = np.array([u[1] for u in usable], dtype=int)
    ys = np.array([u[2] for u in usable], dtype=int)
    out: dict[str, Any] = {"resamples": resamples}
    for weights in ("linear", "quadratic"):
        def stat(idx: np.ndarray, weights: str = weights) -> float | None:
            sel = [i for j in idx for i in groups[j]]
            return weighted_kappa(xs[sel].tolist(), ys[sel].tolist(), weights)

        out[f"kappa_{weights}"] = {"value": _round(weighted_kappa(xs.tolist(), ys.tolist(), weights)),
                                   "n": len(usable), "answers": len(groups), "ci_method": "answer bootstrap",
                                   "ci95": _bootstrap(len(groups), stat, resamples=resamples, seed=seed)}  # fmt: skip
    out["alpha_progress"] = _alpha_block(_matrix(grades, _progress_value), "ordinal", PROGRESS_LEVELS,
                                         resamples=resamples, seed=seed)  # fmt: skip
    out["alpha_indicators"] = {
        name: _alpha_block(_matrix(grades, _indicator_value(name)), "nominal", range(len(VALUES)),
                           resamples=resamples, seed=seed) | {"label": INDICATOR_LABELS[name]}
        for name in INDICATORS
    }  # fmt: skip
    return out


def _round(v: float | None) -> float | None:
    return None if v is None else round(v, 4)


def _alpha_block(matrix: np.ndarray, level: str, domain: Iterable[float], *, resamples: int,
                 seed: int | None) -> dict[str, Any]:  # fmt: skip
    domain = list(domain)
    units = int(((~np.isnan(matrix)).sum(axis=0) >= 2).sum()) if matrix.size else 0
    value = krippendorff_alpha(matrix, level, domain) if matrix.size else None
    ci = None
    if value is not None:
        ci = _bootstrap(matrix.shape[1], lambda idx: krippendorff_alpha(matrix[:, idx], level, domain),
                        resamples=resamples, seed=seed)  # fmt: skip
    return {"value": _round(value), "level": level, "n": units, "ci_method": "answer bootstrap", "ci95": ci}


def agreement(grades: Sequence[Mapping[str, Any]], *, resamples: int = AGREEMENT_RESAMPLES,
              seed: int | None = None) -> dict[str, Any]:  # fmt: skip
    """Every agreement figure over answers with at least two complete grades."""
    pairs = grade_pairs(grades)
    multi = {p["answer_id"] for p in pairs}
    graders = {str(g["grader"]) for g in complete(grades) if g["answer_id"] in multi}
    return {"answers": len(multi), "pairs": len(pairs), "graders": len(graders),
            "questions": len({p["problem_id"] for p in pairs}),
            "progress": progress_agreement(pairs), "indicators": indicator_agreement(pairs),
            "per_question": question_agreement(pairs),
            "reliability": reliability(grades, pairs, resamples=resamples, seed=seed)}  # fmt: skip


__all__ = ["AGREEMENT_RESAMPLES", "BANDS", "agreement", "band", "grade_pairs", "indicator_agreement",
           "krippendorff_alpha", "progress_agreement", "question_agreement", "reliability",
           "weighted_kappa"]  # fmt: skip
