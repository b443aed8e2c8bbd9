"""One set of words across the platform (issue 24 item 9): the indicators' display names are defined once and the
grading page, the statistics and the review and question pages print them, and points, the same way."""

from __future__ import annotations

import time

import pytest
from helpers.web import PASSWORD, signed_in

from theorembench.methods.improof import grades, stats
from theorembench.methods.improof.answers import record_answer
from theorembench.methods.improof.grades import INDICATORS, Grade, save_grade
from theorembench.methods.improof.problems import Problem
from theorembench.store.improof import ImproofRepo
from theorembench.store.schema import web_reviews
from theorembench.web import accounts, grading
from theorembench.web.auth import hash_password
from theorembench.web.wording import points

# written by hand from the paper's grading form (App. B.4): the names a grader sees, everywhere
NAMES = {"incorrect_logic": "Incorrect Logic", "hallucinated": "Hallucinated", "calculation": "Calculation",
         "conceptual": "Conceptual", "understanding": "Understanding", "correct_result": "Correct Result",
         "insight": "Insight", "usefulness": "Usefulness"}  # fmt: skip
OTHER_NAMES = ("Hallucinated Facts", "Correct End Result", "Problem Understanding", "Useful Progress",
               "Mathematical Insight", "Calculation Error", "Conceptual Error", "Incorrect logic")  # fmt: skip
ADMIN, AUTHOR, REVIEWER, GRADER = "admin@example.org", "author@example.org", "rev@example.org", "grader@example.org"


@pytest.mark.parametrize("value,expected", [
    (1, "1 point"), (1.0, "1 point"), ("1", "1 point"), (None, "1 point"), (1.5, "1.5 points"), (2.0, "2 points"),
    (0.25, "0.25 points"), (3, "3 points"), ("2.50", "2.5 points"), (1000, "1000 points"), (0.1 + 0.2, "0.3 points"),
])  # fmt: skip
def test_points_are_worded_one_way(value, expected):
    assert points(value) == expected


def test_points_refuse_what_is_not_a_number():
    with pytest.raises(ValueError):
        points(float("inf"))
    with pytest.raises(ValueError):
        points("many")


def test_the_indicator_names_are_defined_once():
    assert grades.INDICATOR_LABELS == NAMES
    assert stats.INDICATOR_LABELS is grades.INDICATOR_LABELS  # the statistics use the same mapping, not a copy
    assert [(name, label) for name, label, _help in grading.INDICATORS] == [(n, NAMES[n]) for n in INDICATORS]
    assert grading.FIELD_LABELS["hallucinated"] == "Hallucinated"
    assert stats.PROGRESS_LABELS is grades.PROGRESS  # "3/3 full solution" on the grading page and in the charts


def _world(app) -> dict[str, str]:
    repo, store = app.state.repo, app.state.store
    ids = {"admin": accounts.create_admin(repo, ADMIN, PASSWORD)}
    for key, email, roles in (("author", AUTHOR, ("contributor",)), ("reviewer", REVIEWER, ("reviewer",)),
                              ("grader", GRADER, ("grader",))):  # fmt: skip
        ids[key] = repo.create_user(email, hash_password(PASSWORD), verified=True, roles=roles)
    subs = [{"text": f"Part {i}?", "answer": str(i), "kind": "integer", "points": p}
            for i, p in enumerate((1.0, 1.5, 2.0))]  # fmt: skip
    for pid, status in (("worded", "under_review"), ("graded", "active")):
        problem = Problem(id=pid, title=pid.title(), statement="Find it.", solution="It is found.", subquestions=subs,
                          difficulty={"background": 1, "reasoning": 1, "insight": 1, "compute": 1})  # fmt: skip
        ImproofRepo(store).create_problem(pid, status=status, author=ids["author"], payload=problem.content(),
                                          actor=ids["author"])  # fmt: skip
    now = time.time()
    ids["review"] = str(store._execute(web_reviews.insert().returning(web_reviews.c.id), {
        "problem_id": "worded", "version": 1, "reviewer_id": ids["reviewer"], "invited_by": ids["admin"],
        "state": "accepted", "anonymous": 0, "created_at": now, "responded_at": now}).scalar_one())  # fmt: skip
    answer = record_answer(store, run_id="r1", problem_id="graded", version=1, model="openai-api/fake/m1", tier=1,
                           epoch=0, mode="agentic", main_answer="A proof.", sub_answers=["0", "1", "2"], stages=[])
    save_grade(store, Grade(answer_id=answer, grader=GRADER, progress=2, indicators=dict.fromkeys(INDICATORS, "true"),
                            status="complete"), expected_revision=0)  # fmt: skip
    return ids


def _no_other_words(html: str) -> None:
    for word in OTHER_NAMES:
        assert word not in html, word
    assert "1.0 point" not in html and "2.0 points" not in html


def test_review_and_question_pages_print_points_one_way(app):
    ids = _world(app)
    review = signed_in(app, REVIEWER).get(f"/questions/worded/reviews/{ids['review']}")
    assert review.status_code == 200
    for text in ("1 point", "1.5 points", "2 points"):
        assert f'data-testid="review-subquestion-points">{text}<' in review.text
    _no_other_words(review.text)
    question = signed_in(app, AUTHOR).get("/questions/worded")
    assert question.status_code == 200
    for text in ("1 point", "1.5 points", "2 points"):
        assert f'data-testid="subquestion-points">{text}<' in question.text
    _no_other_words(question.text)


def test_grading_and_statistics_name_the_indicators_alike(app):
    _world(app)
    author = signed_in(app, AUTHOR)  # the author grades the live question's answer
    page = author.get("/grade/graded")
    assert page.status_code == 200
    stats_page = signed_in(app, ADMIN).get("/admin/stats")
    assert stats_page.status_code == 200
    for label in NAMES.values():
        assert f"{label} <button" in page.text, label  # the grading form's legend
        assert f"<td>{label}</td>" in stats_page.text, label  # the statistics' table of indicators
    _no_other_words(page.text)
    _no_other_words(stats_page.text)
