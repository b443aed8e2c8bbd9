"""The paper's Figures 4 and 8–13, the open-problem split and the tag counts (issue 21, item 24), from plain rows.

Every expected number is worked out by hand from the rows below (written next to each assertion).
"""

from __future__ import annotations

import pytest

from theorembench.methods.improof.stats_report import compute, render

TOKENS = {"stage": 0, "outcome": "submitted", "input_tokens": 10, "output_tokens": 100, "reasoning_tokens": 40,
          "tool_calls": {"python": 2, "sage_computation": 1, "submit": 1}, "turns": 3}  # fmt: skip
TAGS = {"q1": ["algebraic geometry", "open problem"], "q2": ["combinatorics"], "q3": ["algebraic geometry"]}


def _answer(aid: str, q: str, model: str, score: float) -> dict:
    return {"answer_id": aid, "problem_id": q, "question": q, "model": model, "score": score,
            "all_correct": score == 1.0, "stages": [TOKENS], "tags": TAGS[q], "open": "open problem" in TAGS[q]}


ANSWERS = [_answer("a1", "q1", "A", 1.0), _answer("a2", "q1", "A", 0.0),  # A: two runs on q1 and on q2
           _answer("a3", "q2", "A", 0.5), _answer("a4", "q2", "A", 0.5),
           _answer("b1", "q1", "B", 0.0), _answer("b2", "q3", "B", 1.0)]  # B: one run each on q1 and q3


def _grade(aid: str, model: str, progress: int) -> dict:
    return {"answer_id": aid, "problem_id": "q1", "question": "q1", "model": model, "grader": "g",
            "progress": progress, "indicators": {}, "status": "complete"}


GRADES = [_grade("a1", "A", 3), _grade("a2", "A", 1), _grade("b1", "B", 0)]  # only q1 is human-graded


@pytest.fixture(scope="module")
def doc() -> dict:
    return compute(ANSWERS, GRADES, selection={"runs": [], "models": []}, resamples=20)


def test_figure4_keeps_the_questions_with_both_grades(doc):
    common = doc["figures"]["common_questions"]
    assert common["question_ids"] == ["q1"]  # q2 and q3 have no human grade
    a = common["models"]["A"]
    assert a["questions"] == 1 and a["subquestion_score"]["value"] == 0.5  # q1's runs: (1.0 + 0.0) / 2
    assert a["mean_progress"]["value"] == 2.0 and a["full_solutions"]["value"] == 0.5  # (3 + 1) / 2; one 3 of two
    b = common["models"]["B"]
    assert (b["subquestion_score"]["value"], b["mean_progress"]["value"]) == (0.0, 0.0)  # b2 on q3 is left out


def test_figure10_draws_sigma_error_bars_only_with_repeated_runs(doc):
    runs = doc["models"]["A"]["subquestions"]["runs"]
    # V(q1) = sample variance of (1, 0) = 0.5, V(q2) = 0; σ = √0.5 / 2 = 0.353553; 0.5 ± 1.96σ = 0.5 ± 0.69296: [0, 1]
    assert runs["sigma"] == pytest.approx(0.353553, abs=1e-6) and runs["ci95"] == [0.0, 1.0]
    _, svgs = render(doc)
    fig10 = svgs["fig10_subquestion_scores.svg"]
    assert fig10.count('class="errorbar"') == 1  # A only: B has one run per question
    assert "50.0% ± 69.3 (1.96σ)" in fig10 and "(one run: no σ)" in fig10


def test_token_and_tool_figures_never_count_reasoning_twice(doc):
    usage = doc["figures"]["usage"]["A"]
    # output 100 holds the 40 reasoning tokens: 40 reasoning + 60 visible per answer (one stage each)
    assert usage["tokens_per_answer"] == {"reasoning": 40.0, "visible": 60.0}
    assert usage["tool_calls_per_answer"] == {"python": 2.0, "sage": 1.0}  # sage_computation is sage; submit is not
    assert usage["distribution"]["visible"] == {"min": 60, "q1": 60.0, "median": 60.0, "q3": 60.0, "max": 60}
    _, svgs = render(doc)
    assert "100.0 tokens" in svgs["fig9_tokens.svg"] and "140.0 tokens" not in svgs["fig9_tokens.svg"]
    assert svgs["fig8_tools_graded.svg"].count("3.0 calls") == 2  # A and B, both with human grades
    assert set(svgs) >= {"fig4_common_questions.svg", "fig11_token_distribution.svg", "fig12_tools_all.svg"}


def test_open_problem_split_and_tag_cloud(doc):
    split = doc["figures"]["open_split"]
    assert (split["open_questions"], split["other_questions"]) == (1, 2)  # q1 is open; q2 and q3 are not
    a = split["models"]["A"]
    assert (a["open"]["answers"], a["open"]["full_solutions"], a["open"]["progress"]["n"]) == (2, 1, 2)
    assert a["other"]["subquestions"]["value"] == 0.5 and a["other"]["progress"]["n"] == 0  # q2: 0.5 and 0.5
    assert doc["figures"]["tags"] == {"algebraic geometry": 2, "combinatorics": 1, "open problem": 1}
    text, svgs = render(doc)
    assert svgs["fig13_tags.svg"].count('class="tag"') == 3
    assert "## Open problems (1 questions tagged" in text and "algebraic geometry (2)" in text


def test_the_store_rows_carry_the_problem_tags(store, tmp_path):
    from theorembench.methods.improof.answers import record_answer
    from theorembench.methods.improof.catalog import import_problems
    from theorembench.methods.improof.stats_load import improof_stats

    path = tmp_path / "p.yaml"
    path.write_text('id: hard\ntitle: Hard\nstatement: "S"\nsolution: "T"\ntags: ["open problem", "topology"]\n'
                    "difficulty: {background: 1, reasoning: 1, insight: 1, compute: 1}\nstatus: active\n"
                    'subquestions:\n  - text: "Q"\n    answer: "1"\n    kind: integer\n')  # fmt: skip
    import_problems(store, path)
    record_answer(store, run_id="r", problem_id="hard", version=1, model="m", tier=None, epoch=0, mode="agentic",
                  main_answer="A", sub_answers=["1"], stages=[TOKENS])  # fmt: skip
    figures = improof_stats(store).doc["figures"]
    assert figures["open_split"]["open_questions"] == 1 and figures["tags"] == {"open problem": 1, "topology": 1}
