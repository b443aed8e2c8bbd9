"""The admin statistics page (n and 95% intervals, worked by hand), its charts, the exports and the CSV defusing,
and the user list."""

from __future__ import annotations

import csv
import io
import json

import pytest
from fastapi.testclient import TestClient
from helpers.web import PASSWORD, parse_tags, sign_in

from theorembench.methods.improof import autograde
from theorembench.methods.improof.answers import record_answer
from theorembench.methods.improof.catalog import save_version
from theorembench.methods.improof.grades import INDICATORS, Grade, correct_grade, get_grade, save_grade
from theorembench.methods.improof.problems import Problem
from theorembench.web import accounts
from theorembench.web.auth import hash_password
from theorembench.web.csv_safe import csv_text, safe_cell

ADMIN, GRADER, MEMBER = "admin@example.org", "grader@example.org", "member@example.org"
MODEL = "openai-api/fake/m1"
ALL_TRUE = dict.fromkeys(INDICATORS, "true")
HOSTILE = "=cmd|' /C calc'!A0"


def _problem(pid: str, subs: list[tuple[str, float]]) -> Problem:
    return Problem(id=pid, title=pid.title(), statement="Find it.", solution="It is found.",
                   difficulty={"background": 1, "reasoning": 1, "insight": 1, "compute": 1},
                   subquestions=[{"text": f"Part {i}?", "answer": a, "kind": "integer", "points": p}
                                 for i, (a, p) in enumerate(subs)])  # fmt: skip



@pytest.fixture
def graded(app):
    """Two questions, one model, two runs each, auto-graded; grades by two graders (one a platform user).

    alpha: subquestions 9 (1 point) and 114 (3 points); beta: 2 (1 point).
    Answers: a0 alpha [9, 114] -> 1; a1 alpha [9, 115] -> 1/4; b0 beta [2] -> 1; b1 beta [3] -> 0.
    Grades: a0 g1 3 and g2 2, a1 g1 1 (g2 incomplete), b0 g1 3, b1 g1 given up: 4 complete, 2 left out.
    """
    st, repo = app.state.store, app.state.repo
    g1 = repo.create_user(GRADER, hash_password(PASSWORD), verified=True, roles=("grader",))
    save_version(st, _problem("alpha", [("9", 1), ("114", 3)]), actor="test")
    save_version(st, _problem("beta", [("2", 1)]), actor="test")
    ids = {}
    for key, pid, epoch, subs, main in (("a0", "alpha", 0, ["9", "114"], "@SUM(A1)"),
                                        ("a1", "alpha", 1, ["9", "115"], "A proof."),
                                        ("b0", "beta", 0, ["2"], "-1"), ("b1", "beta", 1, ["3"], "Two.")):  # fmt: skip
        ids[key] = record_answer(st, run_id="r1", problem_id=pid, version=1, model=MODEL, tier=1, epoch=epoch,
                                 mode="agentic", main_answer=main, sub_answers=subs, stages=[])  # fmt: skip
        autograde.grade_answer(st, ids[key])
    for key, grader, progress, status, comment in (("a0", g1, 3, "complete", HOSTILE),
                                                   ("a0", "g2", 2, "complete", "Fine proof."),
                                                   ("a1", g1, 1, "complete", "+1"),
                                                   ("a1", "g2", None, "incomplete", ""),
                                                   ("b0", g1, 3, "complete", ""),
                                                   ("b1", g1, None, "given_up", "")):  # fmt: skip
        marks = dict(ALL_TRUE, correct_result="false" if progress == 1 else "true") if status == "complete" else {}
        save_grade(st, Grade(answer_id=ids[key], grader=grader, progress=progress, indicators=marks, status=status,
                             comment=comment))  # fmt: skip
    return ids | {"g1": g1}


def _admin(app) -> TestClient:
    accounts.create_admin(app.state.repo, ADMIN, PASSWORD)
    client = TestClient(app)
    assert sign_in(client, ADMIN).status_code == 303
    return client


def _cell(html: str, testid: str) -> str:
    start = html.index(f'data-testid="{testid}">') + len(f'data-testid="{testid}">')
    return html[start:html.index("<", start)]


def test_stats_page_shows_n_and_intervals(app, graded):
    admin = _admin(app)
    html = admin.get("/admin/stats").text
    assert "4 answers on 2 questions by 1 model;\n  4 complete grades (2 incomplete or given up, left out)." in html
    assert f'data-model="{MODEL}"' in html
    # Subquestion score: question means alpha (1 + 1/4)/2 = 0.625, beta (1 + 0)/2 = 0.5 -> 0.5625. With two
    # questions, the Wilson interval at p = 0.5625 with n = 2 (z = 1.96): centre (p + z²/4)/(1 + z²/2) = 0.5214,
    # half-width z·√(p(1−p)/2 + z²/16)/(1 + z²/2) = 0.4044: [0.117, 0.926], not the bootstrap's [0.5, 0.625].
    assert _cell(html, "stats-score") == "56.2% [11.7–92.6] n=2"
    # All subquestions right: a0 and b0, 2 of 4. Wilson, z = 1.96: centre 0.5, half-width
    # 1.96·√(0.0625 + 0.0600)/1.9604 = 0.3500 -> [15.0, 85.0].
    assert _cell(html, "stats-all-correct") == "50.0% [15.0–85.0] n=4"
    # σ(M): sample variances alpha (0.375² · 2) = 0.28125, beta 0.5; √0.78125 / 2 = 0.4419;
    # ±1.96σ clipped to [0, 1].
    assert _cell(html, "stats-sigma") == "44.19 pts (±1.96σ: 0.0–100.0%)"
    # Mean progress: answers a0 (3 + 2)/2 = 2.5, a1 1 -> alpha 1.75; b0 3 -> beta 3; mean 2.375 on 0–3. Wilson at
    # p = 2.375/3 = 0.7917 with n = 2 (z = 1.96): centre 0.5999, half-width 0.3811 -> times 3: [0.66, 2.94], not the
    # bootstrap's [1.75, 3.00].
    assert _cell(html, "stats-mean-progress") == "2.38 [0.66–2.94] n=2 questions"
    assert _cell(html, "stats-grades") == "4 (+2 left out)"
    assert _cell(html, "stats-progress-counts") == "0 / 1 / 1 / 2"
    # Correct End Result true in 3 of 4 complete grades: Wilson centre 0.6275, half 0.3269 -> [30.1, 95.4].
    assert _cell(html, "stats-indicator-correct_result") == "75.0% [30.1–95.4] n=4"
    # Insight true in 4 of 4: Wilson [0.5101, 1].
    assert _cell(html, "stats-indicator-insight") == "100.0% [51.0–100.0] n=4"
    # Agreement: a0 is the only answer graded twice (3 and 2): exact 0/1, Wilson [0, 0.7935]; within one 1/1,
    # Wilson [0.2065, 1] (stored to four digits, 0.2065 shows as 20.6).
    assert "1 answer graded by two or more of 2 graders: 1 pair." in html
    rates = html.split('data-testid="stats-agreement-rate">')[1:3]
    assert [r.split("<")[0] for r in rates] == ["0.0% [0.0–79.3] n=1", "100.0% [20.6–100.0] n=1"]
    # Pearson r over the complete grades: x = 1, 1, 1/4, 1 and y = 3, 2, 1, 3: 0.9375/√(0.421875 · 2.75) = 0.870.
    assert _cell(html, "stats-pearson").startswith("0.87 [") and _cell(html, "stats-pearson").endswith(" n=4")
    charts = [part.split('"')[0] for part in html.split('src="/admin/stats/charts/')[1:]]
    assert charts == ["agreement.svg", "indicators_openai-api_fake_m1.svg", "progress.svg"]
    svg = admin.get("/admin/stats/charts/progress.svg")
    assert svg.headers["content-type"] == "image/svg+xml" and svg.text.startswith("<svg") and "n=4" in svg.text
    assert admin.get("/admin/stats/charts/nope.svg").status_code == 404

    # a new grade changes the figures on the next visit (the cached document is made again)
    save_grade(app.state.store, Grade(answer_id=graded["b1"], grader=graded["g1"], progress=0, indicators=ALL_TRUE,
                                      status="complete"))  # fmt: skip
    again = admin.get("/admin/stats").text
    assert _cell(again, "stats-progress-counts") == "1 / 1 / 1 / 2"
    assert _cell(again, "stats-grades") == "5 (+1 left out)"


def test_a_correction_after_the_reveal_changes_no_figure_and_is_counted_apart(app, graded):
    admin = _admin(app)
    first = admin.get("/admin/stats").text
    assert 'data-testid="stats-corrections">Grades changed after their grader saw the model names: 0.' in first
    kept = get_grade(app.state.store, graded["b0"], graded["g1"])  # progress 3, complete, revision 1
    correct_grade(app.state.store, kept.model_copy(update={"progress": 0, "comment": "Seen the names."}),
                  expected_revision=1)  # fmt: skip
    html = admin.get("/admin/stats").text
    assert 'data-testid="stats-corrections">Grades changed after their grader saw the model names: 1.' in html
    # the figures are still those of the blind grades (worked in test_stats_page_shows_n_and_intervals)
    assert _cell(html, "stats-mean-progress") == "2.38 [0.66–2.94] n=2 questions"
    assert _cell(html, "stats-progress-counts") == "0 / 1 / 1 / 2"
    assert _cell(html, "stats-grades") == "4 (+2 left out)"
    doc = admin.get("/admin/export/stats.json").json()
    assert doc["counts"] == {"answers": 4, "problems": 2, "models": 1, "grades": 4, "grades_left_out": 2}
    assert (doc["grade_corrections"]["grades"], doc["grade_corrections"]["revisions"]) == (1, 1)
    rows = [r for r in csv.DictReader(io.StringIO(admin.get("/admin/export/grades.csv").text))
            if r["answer_id"] == graded["b0"]]  # fmt: skip
    assert [(r["progress"], r["revision"], r["after_reveal"]) for r in rows] == [("3", "1", "false"),
                                                                                ("0", "2", "true")]  # fmt: skip


def test_exports_defuse_formulas(app, graded):
    admin = _admin(app)
    grades = admin.get("/admin/export/grades.csv")
    assert grades.headers["content-type"].startswith("text/csv")
    assert grades.headers["content-disposition"] == 'attachment; filename="grades.csv"'
    rows = list(csv.DictReader(io.StringIO(grades.text)))
    assert len(rows) == 6
    by = {(r["answer_id"], r["grader"]): r for r in rows}
    first = by[(graded["a0"], graded["g1"])]
    assert first["comment"] == "'" + HOSTILE and first["grader_email"] == GRADER and first["progress"] == "3"
    assert first["problem_id"] == "alpha" and first["model"] == MODEL and first["correct_result"] == "true"
    assert by[(graded["a1"], graded["g1"])]["comment"] == "'+1"
    assert by[(graded["a0"], "g2")]["comment"] == "Fine proof." and by[(graded["a0"], "g2")]["grader_email"] == ""
    answers = {r["answer_id"]: r for r in csv.DictReader(io.StringIO(admin.get("/admin/export/answers.csv").text))}
    assert answers[graded["a0"]]["main_answer"] == "'@SUM(A1)" and answers[graded["b0"]]["main_answer"] == "'-1"
    assert answers[graded["a1"]]["main_answer"] == "A proof."
    assert [answers[graded[k]]["score"] for k in ("a0", "a1", "b0", "b1")] == ["1.0", "0.25", "1.0", "0.0"]
    assert json.loads(answers[graded["a1"]]["sub_answers"]) == ["9", "115"]
    doc = admin.get("/admin/export/stats.json").json()
    assert doc["counts"] == {"answers": 4, "problems": 2, "models": 1, "grades": 4, "grades_left_out": 2}
    assert doc["models"][MODEL]["subquestions"]["score"]["value"] == 0.5625
    assert admin.get("/admin/export/secrets.txt").status_code == 404
    # the grading page saves grades under the grader's email: the export names that grader too
    save_grade(app.state.store, Grade(answer_id=graded["b0"], grader=GRADER, status="incomplete"))
    again = csv.DictReader(io.StringIO(admin.get("/admin/export/grades.csv").text))
    assert {r["grader"]: r["grader_email"] for r in again if r["answer_id"] == graded["b0"]} == {
        graded["g1"]: GRADER, GRADER: GRADER}


def test_admin_pages_are_admin_only(app, graded):
    app.state.repo.create_user(MEMBER, hash_password(PASSWORD), verified=True, roles=("contributor", "reviewer"))
    member = TestClient(app)
    assert sign_in(member, MEMBER).status_code == 303
    for client in (member, TestClient(app)):
        for path in ("/admin/stats", "/admin/stats/charts/progress.svg", "/admin/export/grades.csv",
                     "/admin/export/stats.json", "/admin/users"):  # fmt: skip
            response = client.get(path, follow_redirects=False)
            assert response.status_code == 404 and HOSTILE not in response.text, path
    admin = _admin(app)
    users = admin.get("/admin/users").text
    for html in (users, admin.get("/admin/stats").text):  # no inline script or style (the CSP refuses them)
        parsed = parse_tags(html)
        assert parsed.script_text == [] and all(tag != "style" and "style" not in attrs for tag, attrs in parsed.tags)
    assert users.count('data-testid="users-row"') == 3
    assert 'data-email="member@example.org">' in users
    assert 'data-testid="users-roles">contributor, reviewer<' in users and 'data-testid="users-roles">admin<' in users


def test_stats_page_without_answers(app):
    html = _admin(app).get("/admin/stats")
    assert html.status_code == 200 and 'data-testid="stats-empty"' in html.text


CORPUS = [
    (HOSTILE, "'" + HOSTILE),
    ("+1", "'+1"),
    ("-1", "'-1"),
    ("@SUM(A1)", "'@SUM(A1)"),
    ("\t=1", "'\t=1"),
    ("\r=1", "'\r=1"),
    ("=1+2", "'=1+2"),
    # normal values stay as they are
    ("A proof.", "A proof."),
    ("1", "1"),
    ("0.25", "0.25"),
    ("x = -1", "x = -1"),
    ("a@b.org", "a@b.org"),
    (" =1", " =1"),
    ("", ""),
    (None, ""),
    (3, "3"),
    (0.5, "0.5"),
]


@pytest.mark.parametrize(("value", "expected"), CORPUS)
def test_safe_cell_corpus(value, expected):
    assert safe_cell(value) == expected


def test_csv_text_round_trips_the_defused_cells():
    text = csv_text(["value", "=header"], [[v, "ok"] for v, _ in CORPUS])
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows[0] == ["value", "'=header"]
    assert [r[0] for r in rows[1:]] == [e for _, e in CORPUS]
    assert '"\'\r=1"' in text  # a cell holding a carriage return is quoted as well as defused
