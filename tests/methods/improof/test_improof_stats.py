"""IMProofBench statistics: the paper's agreement figures (App. I.2, Table 4), σ(M) (I.3), correlations, κ and α.

Every expected number is written by hand: the paper's counts and percentages, or small examples worked on paper.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from theorembench.methods.improof.stats import (
    correlations,
    indicator_rates,
    mean_progress,
    pearson,
    phi,
    progress_distribution,
    score_summary,
    sigma_runs,
    usage,
)
from theorembench.methods.improof.stats_agreement import (
    agreement,
    grade_pairs,
    krippendorff_alpha,
    progress_agreement,
    reliability,
    weighted_kappa,
)
from theorembench.methods.improof.stats_report import compute, render, write_outputs

# ---------------------------------------------------------------------------------------------------------------
# The App. I.2 fixture: 11 questions × 5 answers, each answer graded by two graders = 55 pairwise comparisons.
# DISAGREE[q][c] is how many of question q's five answers (the first ones) the two graders disagree on in
# category c; the column sums are the paper's disagreements: progress 55−28 = 27, Correct End Result 53−45 = 8,
# Hallucinated 14, Understanding 15, Useful 16, Calculation 19, Conceptual 21, Insight 23, Incorrect Logic 23.
# Row sums make 2 questions high (≥ 80%), 8 moderate and 1 low, the paper's 18.2% / 72.7% / 9.1%.
CATEGORIES = ("progress", "correct_result", "hallucinated", "understanding", "usefulness", "calculation",
              "conceptual", "insight", "incorrect_logic")  # fmt: skip
DISAGREE = [
    # P CR  H  U Us Ca Co In IL      disagreements of 45 comparisons
    [2, 1, 0, 1, 0, 1, 1, 1, 1],  # 8  -> 37/45 = 82.2% high
    [2, 0, 1, 0, 1, 1, 1, 1, 1],  # 8  -> high
    [3, 1, 1, 2, 2, 2, 2, 2, 2],  # 17 -> 28/45 = 62.2%
    [2, 1, 2, 1, 2, 2, 2, 2, 2],  # 16 of 44 (one N/A pair) -> 63.6%
    [2, 1, 1, 2, 1, 2, 2, 3, 2],  # 16 of 44 (one N/A pair) -> 63.6%
    [2, 0, 2, 1, 2, 2, 2, 2, 3],  # 16 -> 64.4%
    [2, 1, 1, 2, 2, 2, 2, 2, 2],  # 16
    [2, 1, 2, 1, 2, 2, 2, 2, 2],  # 16
    [3, 0, 1, 2, 1, 2, 2, 2, 2],  # 15 -> 66.7%
    [2, 0, 1, 1, 1, 1, 2, 3, 3],  # 14 -> 68.9%
    [5, 2, 2, 2, 2, 2, 3, 3, 3],  # 24 -> 21/45 = 46.7% low
]
# Of the 27 progress disagreements, these (the first ones of their question) differ by two points: 55 − 6 = 49
# pairs are within one point.
FAR = {2: 1, 5: 1, 8: 1, 10: 3}
# Correct End Result marked N/A on answer 4 of questions 3 and 4 (by one grader, then by both): 2 pairs left out.
NA_PAIRS = {3: ("na", "true"), 4: ("na", "na")}


def paper_grades() -> list[dict]:
    grades = []
    for q, row in enumerate(DISAGREE):
        for i in range(5):
            answer = f"q{q}-a{i}"
            k_progress = row[0]
            if i < FAR.get(q, 0):
                pa, pb = 0, 2
            elif i < k_progress:
                pa, pb = 2, 3
            else:
                pa = pb = (q + i) % 4
            ind_a, ind_b = {}, {}
            for c, name in enumerate(CATEGORIES[1:], start=1):
                if i < row[c]:
                    x, y = ("true", "false") if (q + i + c) % 2 else ("not_sure", "true")
                else:
                    x = y = "true" if (q + i + c) % 2 else "false"
                ind_a[name], ind_b[name] = x, y
            if q in NA_PAIRS and i == 4:
                ind_a["correct_result"], ind_b["correct_result"] = NA_PAIRS[q]
            for grader, progress, marks in (("grader-a", pa, ind_a), ("grader-b", pb, ind_b)):
                grades.append({"answer_id": answer, "problem_id": f"q{q}", "model": "m", "grader": grader,
                               "progress": progress, "indicators": marks, "status": "complete"})  # fmt: skip
    return grades


@pytest.fixture(scope="module")
def paper_agreement() -> dict:
    return agreement(paper_grades(), resamples=200)


def test_fixture_reproduces_paper_progress_agreement(paper_agreement: dict) -> None:
    a = paper_agreement
    assert (a["answers"], a["pairs"], a["graders"], a["questions"]) == (55, 55, 2, 11)
    p = a["progress"]
    assert (p["exact"], p["within_one"], p["pairs"]) == (28, 49, 55)
    assert p["exact_rate"]["value"] == 0.5091  # "exact agreement in 50.9% of cases"
    assert p["within_one_rate"]["value"] == 0.8909  # "within one point in 89.1% of cases"
    assert p["differences"] == {"0": 28, "1": 21, "2": 6, "3": 0}
    low, high = p["exact_rate"]["ci95"]
    assert low < 28 / 55 < high and p["exact_rate"]["method"] == "wilson"


def test_fixture_reproduces_paper_table_4(paper_agreement: dict) -> None:
    got = {name: (b["agreed"], b["pairs"], round(100 * b["agreed"] / b["pairs"], 1))
           for name, b in paper_agreement["indicators"].items()}  # fmt: skip
    assert got == {
        "correct_result": (45, 53, 84.9),
        "hallucinated": (41, 55, 74.5),
        "understanding": (40, 55, 72.7),
        "usefulness": (39, 55, 70.9),
        "calculation": (36, 55, 65.5),
        "conceptual": (34, 55, 61.8),
        "insight": (32, 55, 58.2),
        "incorrect_logic": (32, 55, 58.2),
    }
    rates = {name: b["rate"]["value"] for name, b in paper_agreement["indicators"].items()}
    assert rates == {"correct_result": 0.8491, "hallucinated": 0.7455, "understanding": 0.7273, "usefulness": 0.7091,
                     "calculation": 0.6545, "conceptual": 0.6182, "insight": 0.5818, "incorrect_logic": 0.5818}
    assert paper_agreement["indicators"]["correct_result"]["left_out_na"] == 2
    assert paper_agreement["indicators"]["insight"]["left_out_na"] == 0
    assert paper_agreement["indicators"]["correct_result"]["label"] == "Correct Result"  # the form's word


def test_fixture_reproduces_paper_question_bands(paper_agreement: dict) -> None:
    q = paper_agreement["per_question"]
    assert q["n"] == 11
    bands = {name: (b["questions"], b["share"]["value"]) for name, b in q["bands"].items()}
    assert bands == {"high": (2, 0.1818), "moderate": (8, 0.7273), "low": (1, 0.0909)}  # 18.2%, 72.7%, 9.1%
    assert q["questions"]["q0"] == {"agreed": 37, "comparisons": 45, "rate": 0.8222, "band": "high"}
    assert q["questions"]["q3"] == {"agreed": 28, "comparisons": 44, "rate": 0.6364, "band": "moderate"}
    assert q["questions"]["q10"] == {"agreed": 21, "comparisons": 45, "rate": 0.4667, "band": "low"}


def test_fixture_reliability_has_n_and_intervals(paper_agreement: dict) -> None:
    r = paper_agreement["reliability"]
    for key in ("kappa_linear", "kappa_quadratic"):
        block = r[key]
        assert block["n"] == 55 and block["answers"] == 55
        assert block["ci95"][0] <= block["value"] <= block["ci95"][1]
    assert r["alpha_progress"]["n"] == 55 and r["alpha_progress"]["level"] == "ordinal"
    assert r["alpha_indicators"]["correct_result"]["n"] == 53  # the two N/A pairs give no pairable values
    assert r["alpha_indicators"]["insight"]["level"] == "nominal"


# ---------------------------------------------------------------------------------------------------------------
# Library figures on examples worked by hand.


def test_weighted_kappa_hand_example() -> None:
    # A = 0 1 2 3, B = 0 2 2 3. Observed: one disagreement of one step. Marginals A: ¼ each; B: 0 ¼, 2 ½, 3 ¼.
    # Linear: expected Σ pA pB |i−j| = 1.25, observed ¼: κ = 1 − 0.25/1.25 = 0.8.
    # Quadratic: expected Σ pA pB (i−j)² = 2.5, observed ¼: κ = 1 − 0.25/2.5 = 0.9.
    # Unweighted: pₒ = ¾, pₑ = ¼: κ = (¾ − ¼)/(1 − ¼) = ⅔.
    a, b = [0, 1, 2, 3], [0, 2, 2, 3]
    assert weighted_kappa(a, b, "linear") == pytest.approx(0.8)
    assert weighted_kappa(a, b, "quadratic") == pytest.approx(0.9)
    assert weighted_kappa(a, b, "none") == pytest.approx(2 / 3)


def test_krippendorff_alpha_hand_and_textbook_examples() -> None:
    # Nominal, two coders, units (0,0) (0,1) (1,1) (1,1): coincidences o00 = 2, o01 = o10 = 1, o11 = 4; n = 8,
    # n0 = 3, n1 = 5: α = 1 − (n − 1)·2 / (2·n0·n1) = 1 − 14/30 = 8/15.
    assert krippendorff_alpha(np.array([[0, 0, 1, 1], [0, 1, 1, 1]], float), "nominal", [0, 1, 2]) == pytest.approx(
        8 / 15)
    # Ordinal, units (0,0) (1,2) (2,2) (3,3): counts n0 = 2, n1 = 1, n2 = 3, n3 = 2; δ²(1,2) = ((1+3)/2)² = 4, so
    # the observed sum is 2·4 = 8; the expected Σ n_c n_k δ² over ordered pairs is 624: α = 1 − 7·8/624 = 71/78.
    ordinal = np.array([[0, 1, 2, 3], [0, 2, 2, 3]], float)
    assert krippendorff_alpha(ordinal, "ordinal", [0, 1, 2, 3]) == pytest.approx(71 / 78)
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 observers, 12 units, missing values.
    n = np.nan
    k = np.array([[1, 2, 3, 3, 2, 1, 4, 1, 2, n, n, n], [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, n, 3],
                  [n, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, n], [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, n]])  # fmt: skip
    assert krippendorff_alpha(k, "nominal", [1, 2, 3, 4, 5]) == pytest.approx(0.743, abs=5e-4)
    assert krippendorff_alpha(k, "ordinal", [1, 2, 3, 4, 5]) == pytest.approx(0.815, abs=5e-4)
    # Every mark equal: no variation, α undefined.
    assert krippendorff_alpha(np.array([[1, 1], [1, 1]], float), "nominal", [0, 1]) is None


def _grade(answer: str, grader: str, progress: int | None, status: str = "complete", **marks: str) -> dict:
    return {"answer_id": answer, "problem_id": answer.split("-")[0], "model": "m", "grader": grader,
            "progress": progress, "indicators": marks, "status": status}  # fmt: skip


def test_reliability_routes_grades_to_the_libraries() -> None:
    # The κ example above as four double-graded answers, usefulness marks the nominal α example above.
    grades = []
    for i, (pa, pb, ua, ub) in enumerate([(0, 0, "true", "true"), (1, 2, "true", "false"), (2, 2, "false", "false"),
                                          (3, 3, "false", "false")]):  # fmt: skip
        grades += [_grade(f"p-{i}", "ann", pa, usefulness=ua), _grade(f"p-{i}", "bob", pb, usefulness=ub)]
    grades.append(_grade("p-0", "cat", 3, status="given_up"))  # left out: not complete
    grades.append(_grade("p-9", "ann", 1))  # left out: graded once
    r = reliability(grades, grade_pairs(grades), resamples=50)
    assert r["kappa_linear"]["value"] == 0.8 and r["kappa_quadratic"]["value"] == 0.9
    assert r["kappa_linear"]["n"] == 4
    assert r["alpha_progress"]["value"] == round(71 / 78, 4) and r["alpha_progress"]["n"] == 4
    assert r["alpha_indicators"]["usefulness"]["value"] == round(8 / 15, 4)
    assert r["alpha_indicators"]["insight"]["value"] is None  # nobody marked insight


def test_three_graders_give_three_pairs() -> None:
    grades = [_grade("p-1", "c", 3, correct_result="true"), _grade("p-1", "a", 1, correct_result="na"),
              _grade("p-1", "b", 2, correct_result="true"), _grade("p-1", "d", 0, status="incomplete")]  # fmt: skip
    pairs = grade_pairs(grades)
    assert [(p["a"]["grader"], p["b"]["grader"]) for p in pairs] == [("a", "b"), ("a", "c"), ("b", "c")]
    p = progress_agreement(pairs)
    assert (p["exact"], p["within_one"], p["pairs"]) == (0, 2, 3)
    cr = agreement(grades, resamples=20)["indicators"]["correct_result"]
    assert (cr["agreed"], cr["pairs"], cr["left_out_na"]) == (1, 1, 2)


# ---------------------------------------------------------------------------------------------------------------
# Per-model figures.


def test_sigma_of_repeated_runs_by_hand() -> None:
    # Sample variances: [1, 0] -> 0.5; [1, 1] -> 0; [0.5, 0] -> 0.125; [0, 0] -> 0. Σ V = 0.625, N = 4:
    # σ = √0.625 / 4 = 0.197642.
    runs = {"q1": [1.0, 0.0], "q2": [1.0, 1.0], "q3": [0.5, 0.0], "q4": [0.0, 0.0]}
    s = sigma_runs(runs)
    assert s["sigma"] == 0.197642 and s["questions"] == 4 and s["variance_sum"] == 0.625
    # Three runs 0, 0.5, 1: mean 0.5, sample variance (0.25 + 0 + 0.25)/2 = 0.25; N = 1: σ = 0.5.
    assert sigma_runs({"q": [0.0, 0.5, 1.0]})["sigma"] == 0.5
    one = sigma_runs({"q1": [1.0, 0.0], "q2": [0.5]})
    assert one["sigma"] is None and one["single_run_questions"] == 1 and one["min_runs"] == 1

    answers = [{"answer_id": f"{q}-{e}", "problem_id": q, "model": "m", "score": v, "all_correct": v == 1.0}
               for q, vals in runs.items() for e, v in enumerate(vals)]  # fmt: skip
    answers.append({"answer_id": "q5-0", "problem_id": "q5", "model": "m", "score": None, "all_correct": None})
    summary = score_summary(answers)
    # Question means 0.5, 1, 0.25, 0: score 0.4375; ±1.96σ = ±0.387372 -> [0.0501, 0.8249].
    assert summary["score"]["value"] == 0.4375 and summary["score"]["n"] == 4
    assert summary["score"]["method"] == "wilson-mean over questions"
    assert summary["score"]["ci95"][0] <= 0.4375 <= summary["score"]["ci95"][1]
    assert summary["runs"]["ci95"] == [0.0501, 0.8249]
    assert (summary["answers"], summary["unscored"]) == (8, 1)
    assert (summary["all_correct"]["value"], summary["all_correct"]["n"]) == (0.375, 8)  # 3 of 8 answers scored 1


def test_pearson_and_phi_by_hand() -> None:
    # x = 0, .5, .5, 1 (mean .5), y = 0, 2, 1, 3 (mean 1.5): Σdxdy = 1.5, Σdx² = 0.5, Σdy² = 5; r = 1.5/√2.5 =
    # 3/√10 = 0.9487. Fisher: atanh(r) ± 1.96/√(4 − 3) -> [−0.1406, 0.9990].
    r = pearson([0, 0.5, 0.5, 1], [0, 2, 1, 3])
    assert r == {"value": 0.9487, "n": 4, "ci95": [-0.1406, 0.999], "ci_method": "fisher-z"}
    assert pearson([1, 1, 1], [0, 1, 2])["value"] is None  # constant side
    # 2×2: both 3, x only 1, y only 1, neither 5: φ = (3·5 − 1·1)/√(4·6·4·6) = 14/24 = 0.5833.
    f = phi([(True, True)] * 3 + [(True, False)] + [(False, True)] + [(False, False)] * 5)
    assert f["value"] == 0.5833 and f["n"] == 10
    assert f["table"] == {"both": 3, "x_only": 1, "y_only": 1, "neither": 5}


def test_correlations_pair_each_grade_with_its_answer_score() -> None:
    answers = [{"answer_id": f"p{i}-a", "problem_id": f"p{i}", "model": "m", "score": s, "all_correct": s == 1}
               for i, s in enumerate([0, 0.5, 0.5, 1])]  # fmt: skip
    grades = [_grade(f"p{i}-a", "g", p) for i, p in enumerate([0, 2, 1, 3])]
    grades.append(_grade("p0-a", "h", None, status="given_up"))
    c = correlations(answers, grades)
    assert c["pearson_score_progress"]["value"] == 0.9487 and c["pearson_score_progress"]["n"] == 4
    # Only p3 has every subquestion right and only p3 got 3/3: φ = 1.
    assert c["phi_all_right_full"]["value"] == 1.0
    assert c["phi_all_right_full"]["table"] == {"both": 1, "x_only": 0, "y_only": 0, "neither": 3}


def test_progress_distribution_and_indicator_rates() -> None:
    grades = [_grade("p-1", "a", 0, correct_result="true", insight="false"),
              _grade("p-1", "b", 3, correct_result="false", insight="false"),
              _grade("p-2", "a", 3, correct_result="na", insight="true"),
              _grade("p-2", "b", 2, correct_result="not_sure", insight="not_sure"),
              _grade("p-3", "a", None, status="given_up", correct_result="true")]  # fmt: skip
    d = progress_distribution(grades)
    assert d["n"] == 4 and d["counts"] == {"0": 1, "1": 0, "2": 1, "3": 2}
    assert d["shares"]["3"]["value"] == 0.5
    rates = indicator_rates(grades)
    cr = rates["correct_result"]
    assert (cr["marks"], cr["applicable"]) == (4, 3)
    assert cr["counts"] == {"true": 1, "false": 1, "not_sure": 1, "na": 1}
    assert cr["rates"]["true"]["value"] == round(1 / 3, 4) and cr["rates"]["true"]["n"] == 3
    assert (cr["na_rate"]["value"], cr["na_rate"]["n"]) == (0.25, 4)
    ins = rates["insight"]
    assert ins["rates"]["false"]["value"] == 0.5 and "na_rate" not in ins
    assert rates["usefulness"]["marks"] == 0 and rates["usefulness"]["rates"]["true"]["value"] is None
    # mean progress: answer p-1 averages 0 and 3 (1.5), answer p-2 averages 3 and 2 (2.5); both answer question p,
    # whose mean 2.0 is the one value, with the Wilson interval at 2/3 with n = 1 on the 0–3 scale (by hand with
    # z = 1.96: [0.283, 2.924]), not a bootstrap's point [2, 2]
    mp = mean_progress(grades)
    assert (mp["value"], mp["n"], mp["questions"]) == (2.0, 1, 1)
    assert mp["ci95"] == pytest.approx([0.2826, 2.9240], abs=1e-3)
    assert mp["method"] == "wilson-mean, scaled 0–3 over questions"


def test_usage_sums_stages() -> None:
    answers = [
        {"answer_id": "x", "stages": [
            {"stage": "main", "outcome": "submitted", "input_tokens": 100, "output_tokens": 40, "reasoning_tokens": 10,
             "tool_calls": {"python": 2, "search": 1}, "turns": 3},
            {"stage": "sub1", "outcome": "limit_exceeded", "input_tokens": 50, "output_tokens": 20,
             "reasoning_tokens": 0, "tool_calls": {"python": 1}, "turns": 2}]},
        {"answer_id": "y", "stages": [
            {"stage": "main", "outcome": "error", "input_tokens": 10, "output_tokens": 0, "reasoning_tokens": 0,
             "tool_calls": {}, "turns": 1, "error": "boom"}]},
    ]  # fmt: skip
    u = usage(answers)
    assert (u["answers"], u["stages"]) == (2, 3)
    assert u["outcomes"] == {"error": 1, "limit_exceeded": 1, "submitted": 1}
    # output 60 holds the 10 reasoning tokens: 50 visible, not 60 + 10
    assert u["totals"] == {"input_tokens": 160, "output_tokens": 60, "reasoning_tokens": 10, "turns": 6,
                           "visible_output_tokens": 50}  # fmt: skip
    assert u["tool_calls"] == {"python": 3, "search": 1} and u["tool_calls_total"] == 4
    assert u["per_answer"]["output_tokens"] == 30.0 and u["per_answer"]["tool_calls"] == 2.0
    assert u["by_stage"]["main"]["stages"] == 2 and u["by_stage"]["sub1"]["tool_calls"] == 1


def test_report_and_charts_from_plain_rows(tmp_path) -> None:
    answers = [{"answer_id": f"q{q}-a{i}", "problem_id": f"q{q}", "model": "m", "score": 1.0 if i % 2 else 0.0,
                "all_correct": bool(i % 2), "stages": []} for q in range(11) for i in range(5)]  # fmt: skip
    doc = compute(answers, paper_grades(), selection={"runs": ["r1"], "models": []}, resamples=50)
    assert doc["counts"] == {"answers": 55, "problems": 11, "models": 1, "grades": 110, "grades_left_out": 0}
    assert doc["models"]["m"]["progress"]["n"] == 110
    assert doc["models"]["m"]["subquestions"]["runs"]["min_runs"] == 5
    paths = write_outputs(doc, tmp_path / "out")
    text = paths["report"].read_text()
    assert "| Progress, exact | 28/55 | 50.9% [" in text
    assert "| Correct Result | 45/53 | 84.9% [" in text and "| 2 |" in text
    assert "| Hallucinated | 41/55 | 74.5% [" in text  # 41/55 itself, not the stored 0.7455 rounded again
    assert "- high agreement (≥ 80%): 2 of 11 questions (18.2% [" in text
    assert json.loads(paths["stats"].read_text())["agreement"]["progress"]["within_one"] == 49
    svg = paths["agreement.svg"].read_text()
    assert svg.startswith("<svg") and "(28/55)" in svg and "(45/53)" in svg
    progress = paths["progress.svg"].read_text()
    assert progress.count('class="level3"') == 1 and "n=110" in progress
    _, svgs = render(doc)
    # with the figures of the paper that have data here: Figure 4 (the grades' questions all have scores), Figure 10
    assert set(svgs) == {"progress.svg", "indicators_m.svg", "agreement.svg", "fig4_common_questions.svg",
                         "fig10_subquestion_scores.svg"}  # fmt: skip
    assert not math.isnan(doc["agreement"]["reliability"]["kappa_linear"]["value"])


# ---------------------------------------------------------------------------------------------------------------
# The loader and the command, end to end on a small store.

PROBLEMS = """
- id: alpha
  title: Alpha
  statement: Count the things.
  solution: There are nine, and then 114.
  difficulty: {background: 1, reasoning: 1, insight: 1, compute: 1}
  subquestions:
    - {text: "How many?", answer: "9", kind: integer, points: 1}
    - {text: "And then?", answer: "114", kind: integer, points: 3}
- id: beta
  title: Beta
  statement: Find two.
  solution: Two.
  difficulty: {background: 1, reasoning: 1, insight: 1, compute: 1}
  subquestions:
    - {text: "Which?", answer: "2", kind: integer}
"""
M1, M2 = "openai-api/fake/m1", "openai-api/fake/m2"
ALL_TRUE = {name: "true" for name in ("incorrect_logic", "hallucinated", "calculation", "conceptual", "understanding",
                                      "correct_result", "insight", "usefulness")}  # fmt: skip


def _stage(name: str, out: int, python: int) -> dict:
    return {"stage": name, "outcome": "submitted", "input_tokens": 10, "output_tokens": out, "reasoning_tokens": 5,
            "tool_calls": {"python": python} if python else {}, "turns": 1 + python}  # fmt: skip


@pytest.fixture
def small_store(tmp_path):
    from theorembench.methods.improof import autograde
    from theorembench.methods.improof.answers import record_answer
    from theorembench.methods.improof.catalog import import_problems
    from theorembench.methods.improof.grades import Grade, save_grade
    from theorembench.store import open_store

    db = tmp_path / "improof.db"
    st = open_store(db)
    (tmp_path / "problems.yaml").write_text(PROBLEMS)
    import_problems(st, tmp_path / "problems.yaml", actor="test")
    ids = {}

    def answer(run, problem, model, epoch, subs, mode="agentic"):
        stages = [_stage("main", 100, 2)] + [_stage(f"sub{i + 1}", 20, 0) for i in range(len(subs))]
        ids[(run, problem, model, epoch, mode)] = record_answer(
            st, run_id=run, problem_id=problem, version=1, model=model, tier=1, epoch=epoch, mode=mode,
            main_answer="proof", sub_answers=subs, stages=stages)  # fmt: skip
        return ids[(run, problem, model, epoch, mode)]

    for aid in (answer("r1", "alpha", M1, 0, ["9", "114"]), answer("r1", "alpha", M1, 1, ["9", "115"]),
                answer("r1", "beta", M1, 0, ["2"]), answer("r1", "beta", M1, 1, ["3"]),
                answer("r2", "beta", M2, 0, ["2"])):  # fmt: skip
        autograde.grade_answer(st, aid)
    answer("r1", "alpha", M1, 0, ["9", "114"], mode="single-turn")  # never auto-graded: left out of the scores
    autograde.override_verdict(st, ids[("r1", "beta", M1, 1, "agentic")], 0, correct=True, verified=True,
                               actor="admin", reason="equivalent answer")  # fmt: skip
    a0, a1 = ids[("r1", "alpha", M1, 0, "agentic")], ids[("r1", "alpha", M1, 1, "agentic")]
    b0 = ids[("r1", "beta", M1, 0, "agentic")]
    for aid, grader, progress, status in ((a0, "ann", 3, "complete"), (a0, "bob", 2, "complete"),
                                          (a1, "ann", 1, "complete"), (a1, "bob", None, "incomplete"),
                                          (b0, "ann", 3, "complete")):  # fmt: skip
        marks = dict(ALL_TRUE, correct_result="false" if progress == 1 else "true") if status == "complete" else {}
        save_grade(st, Grade(answer_id=aid, grader=grader, progress=progress, indicators=marks, status=status))
    yield st, db, ids
    st.close()


def test_loader_reads_scores_overrides_and_grades(small_store) -> None:
    from theorembench.common.errors import UserError
    from theorembench.methods.improof.stats_load import improof_stats, load_rows

    st, _, ids = small_store
    answers, grades = load_rows(st, ["r1"])
    scores = {(a["problem_id"], a["model"], a["epoch"]): a["score"] for a in answers}
    # alpha: both right = 1; 9 right, 115 wrong = 1/(1+3) = 0.25. beta epoch 1 is wrong but overridden to correct.
    assert scores == {("alpha", M1, 0): 1.0, ("alpha", M1, 1): 0.25, ("beta", M1, 0): 1.0, ("beta", M1, 1): 1.0,
                      ("alpha", f"{M1} (single-turn)", 0): None}  # fmt: skip
    assert len(grades) == 5 and sorted(g["status"] for g in grades).count("complete") == 4
    assert len(load_rows(st, ["r1", "r1"])[0]) == 5  # a run named twice is read once

    doc = improof_stats(st, run_ids=["r1"]).doc
    m1 = doc["models"][M1]["subquestions"]
    # Question means: alpha (1 + 0.25)/2 = 0.625, beta 1: score 0.8125. V(alpha) = 0.75²/2 = 0.28125, V(beta) = 0:
    # σ = √0.28125 / 2 = 0.265165.
    assert m1["score"]["value"] == 0.8125 and m1["score"]["n"] == 2
    assert m1["runs"]["sigma"] == 0.265165 and m1["runs"]["min_runs"] == 2
    assert (m1["all_correct"]["value"], m1["all_correct"]["n"]) == (0.75, 4)
    st_model = doc["models"][f"{M1} (single-turn)"]["subquestions"]
    assert st_model["unscored"] == 1 and st_model["score"]["value"] is None
    assert M2 not in doc["models"]
    assert doc["models"][M1]["progress"]["counts"] == {"0": 0, "1": 1, "2": 1, "3": 2}
    assert doc["models"][M1]["grades"] == {"complete": 4, "left_out": 1}
    u = doc["models"][M1]["usage"]
    # 4 answers: 4 main stages (100 output tokens, 2 python calls) and 2+2+1+1 subquestion stages (20 each).
    assert u["stages"] == 10 and u["totals"]["output_tokens"] == 4 * 100 + 6 * 20 and u["tool_calls"] == {"python": 8}
    a = doc["agreement"]
    assert (a["answers"], a["pairs"], a["progress"]["exact"], a["progress"]["within_one"]) == (1, 1, 0, 1)
    assert a["indicators"]["correct_result"]["agreed"] == 1

    with pytest.raises(UserError, match="run 'r9'"):
        load_rows(st, ["r9"])
    with pytest.raises(UserError, match="no answers by openai-api/fake/nobody"):
        load_rows(st, None, ["openai-api/fake/nobody"])
    only_m2, _ = load_rows(st, None, [M2])
    assert [(a["model"], a["score"]) for a in only_m2] == [(M2, 1.0)]


def test_stats_command_prints_tables_and_writes_the_report(small_store, tmp_path) -> None:
    from typer.testing import CliRunner

    from theorembench.cli.app import app

    _, db, _ = small_store
    runner = CliRunner()
    res = runner.invoke(app, ["improof", "stats", "--run", "r1", "--out", str(tmp_path / "st"), "--db", str(db)],
                        env={"COLUMNS": "250"})  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "81.2% [" in res.output and "26.52 pts" in res.output  # score 0.8125, σ = 0.265165
    assert "progress, within one" in res.output and "1/1" in res.output
    report = (tmp_path / "st" / "report.md").read_text()
    assert "| Progress, exact | 0/1 | 0.0% [" in report
    assert json.loads((tmp_path / "st" / "stats.json").read_text())["counts"]["answers"] == 5
    assert (tmp_path / "st" / "progress.svg").read_text().startswith("<svg")
    res = runner.invoke(app, ["improof", "stats", "--model", M2, "--json", "--out", str(tmp_path / "j"),
                              "--db", str(db)])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert list(json.loads(res.output)["models"]) == [M2]
    res = runner.invoke(app, ["improof", "stats", "--run", "nope", "--db", str(db)])
    assert res.exit_code == 2 and "no IMProofBench answers for run 'nope'" in res.output


def test_sigma_pools_only_repeats_of_one_run_on_one_problem_version(small_store, tmp_path) -> None:
    """Runs with other settings, and answers to another version of a problem, are reported apart, never pooled."""
    from theorembench.methods.improof import autograde
    from theorembench.methods.improof.answers import record_answer
    from theorembench.methods.improof.catalog import import_problems
    from theorembench.methods.improof.stats_load import improof_stats

    st, _, _ = small_store
    stages = [_stage("main", 100, 0), _stage("sub1", 20, 0), _stage("sub2", 20, 0)]
    # r4: the same model with another token budget (another run id): both answers right on alpha v1
    for epoch in (0, 1):
        aid = record_answer(st, run_id="r4", problem_id="alpha", version=1, model=M1, tier=1, epoch=epoch,
                            mode="agentic", main_answer="proof", sub_answers=["9", "114"], stages=stages)  # fmt: skip
        autograde.grade_answer(st, aid)
    doc = improof_stats(st, run_ids=["r1", "r4"]).doc
    assert M1 not in doc["models"]
    r1, r4 = doc["models"][f"{M1} [run r1]"]["subquestions"], doc["models"][f"{M1} [run r4]"]["subquestions"]
    assert r1["runs"]["sigma"] == 0.265165 and r1["score"]["value"] == 0.8125  # as with r1 alone
    # r4: alpha only, 1 and 1: V = 0, σ = 0
    assert (r4["score"]["value"], r4["runs"]["sigma"], r4["score"]["n"]) == (1.0, 0.0, 1)

    # alpha edited and re-imported: version 2; one more r1 answer on v2 is not a third repeat of v1
    (tmp_path / "v2.yaml").write_text(PROBLEMS.replace("Count the things.", "Count the things again."))
    import_problems(st, tmp_path / "v2.yaml", actor="test")
    aid = record_answer(st, run_id="r1", problem_id="alpha", version=2, model=M1, tier=1, epoch=0, mode="agentic",
                        main_answer="proof", sub_answers=["8", "114"], stages=stages)  # fmt: skip
    autograde.grade_answer(st, aid)
    m1 = improof_stats(st, run_ids=["r1"]).doc["models"][M1]["subquestions"]
    # questions: alpha (v1) with 1 and 0.25, alpha (v2) with 0.75 alone, beta with 1 and 1: three questions,
    # one of them with a single run, so σ is not given; the score is (0.625 + 0.75 + 1) / 3
    assert m1["score"]["n"] == 3 and m1["score"]["value"] == pytest.approx((0.625 + 0.75 + 1) / 3, abs=1e-4)
    assert m1["runs"]["sigma"] is None and m1["runs"]["single_run_questions"] == 1 and m1["runs"]["questions"] == 3
