"""The statistics page where figures cannot be made yet: it says what is missing, never "undefined", NaN or None,
and every score it does show carries its 95% interval."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient
from helpers.web import PASSWORD, sign_in

from theorembench.methods.improof import autograde
from theorembench.methods.improof.answers import record_answer
from theorembench.methods.improof.catalog import save_version
from theorembench.methods.improof.grades import INDICATORS, Grade, save_grade
from theorembench.methods.improof.problems import Problem
from theorembench.web import accounts

ADMIN = "admin@example.org"
GRADED, UNGRADED = "openai-api/fake/graded", "openai-api/fake/ungraded"


def _problem(pid: str) -> Problem:
    return Problem(id=pid, title=pid.title(), statement="Find it.", solution="It is found.",
                   difficulty={"background": 1, "reasoning": 1, "insight": 1, "compute": 1},
                   subquestions=[{"text": "Part?", "answer": "2", "kind": "integer"}])  # fmt: skip


def _cell(html: str, model: str, testid: str) -> str:
    row = html.split(f'data-testid="stats-model" data-model="{model}"')[1].split("</tr>")[0]
    return row.split(f'data-testid="{testid}">')[1].split("</td>")[0]


def test_missing_figures_say_what_is_missing(any_app):
    st = any_app.state.store
    for pid in ("alpha", "beta"):
        save_version(st, _problem(pid), actor="test")
    # GRADED: one run per question, auto-graded, one complete grade. UNGRADED: one answer, never auto-graded.
    first = None
    for pid, sub in (("alpha", "2"), ("beta", "3")):
        answer = record_answer(st, run_id="r1", problem_id=pid, version=1, model=GRADED, tier=1, epoch=0,
                               mode="agentic", main_answer="Proof.", sub_answers=[sub], stages=[])  # fmt: skip
        autograde.grade_answer(st, answer)
        first = first or answer
    record_answer(st, run_id="r2", problem_id="alpha", version=1, model=UNGRADED, tier=2, epoch=0, mode="agentic",
                  main_answer="Proof.", sub_answers=["2"], stages=[])  # fmt: skip
    save_grade(st, Grade(answer_id=first, grader="g1", progress=2, indicators=dict.fromkeys(INDICATORS, "true"),
                         status="complete"))  # fmt: skip
    accounts.create_admin(any_app.state.repo, ADMIN, PASSWORD)
    admin = TestClient(any_app)
    assert sign_in(admin, ADMIN).status_code == 303
    html = admin.get("/admin/stats").text
    text = re.sub(r"<[^>]+>", " ", html.split("<main>")[1].split("</main>")[0])
    for word in ("undefined", "NaN", "None", "nan"):
        assert re.search(rf"\b{word}\b", text) is None, word

    assert _cell(html, GRADED, "stats-sigma") == "one run per question: σ(M) needs repeats"
    assert _cell(html, UNGRADED, "stats-sigma") == "no auto-graded answers: σ(M) needs scored runs"
    assert _cell(html, UNGRADED, "stats-score") == "no auto-graded answers yet (n=0)"
    assert _cell(html, UNGRADED, "stats-mean-progress") == "no complete grades yet (n=0)"
    assert _cell(html, GRADED, "stats-pearson") == "needs two or more grades of auto-graded answers (n=1)"
    assert 'data-testid="stats-agreement-none"' in html
    # the scores there are: alpha right, beta wrong -> 1/2 over two questions. Wilson at 0.5, n = 2 (z = 1.96):
    # centre 0.5, half-width 1.96·√(0.125 + 0.2401)/2.9207 = 0.4055 -> [0.0945, 0.9055] stored to four digits,
    # shown to one decimal as 9.4 and 90.5 (the binary 9.45 and 90.55 lie just below).
    assert _cell(html, GRADED, "stats-score") == "50.0% [9.4–90.5] n=2"
    # Mean progress 2 of 3 on one question: Wilson at p = 2/3, n = 1 (z² = 3.8415): centre (0.6667 + 1.9207)/4.8415
    # = 0.5344, half-width 1.96·√(0.2222 + 0.9604)/4.8415 = 0.4403 -> [0.0942, 0.9747], times 3: [0.28, 2.92].
    assert _cell(html, GRADED, "stats-mean-progress") == "2.00 [0.28–2.92] n=1 questions"
