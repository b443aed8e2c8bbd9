"""The authorisation matrix: every route × every relationship, against a table written by hand.

One world is built once: three questions by the author (a draft, one under review, one active),
another author's draft and active question, a reviewer with an accepted review of the question
under review, a grader assigned to the active question, another grader assigned to the other
author's active question, a job of the author's, a model answer and a flag. Each case copies
that world's SQLite file, so a POST that changes something never leaks into the next case.

``EXPECTED`` names, for each route, who may use it. An allowed request must not answer 404 (nor
send the visitor to log in); a denied one answers 404, or, for an anonymous visitor, the login
page where the route is a members' page. A route missing from the table fails the test.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from theorembench.methods.improof.answers import record_answer
from theorembench.methods.improof.catalog import save_version, set_status
from theorembench.methods.improof.problems import Problem
from theorembench.store import open_store
from theorembench.store.accounts import AccountRepo
from theorembench.store.base import dumps
from theorembench.store.schema import web_flags, web_jobs, web_reviews
from theorembench.web import csrf, sessions
from theorembench.web.app import create_app
from theorembench.web.auth import hash_password
from theorembench.web.blind import assign

SECRET = "matrix secret"
RELATIONS = ("anonymous", "contributor", "author", "other_author", "reviewer", "grader", "other_grader", "admin")
ROLES = {"contributor": ("contributor",), "author": ("contributor",), "other_author": ("contributor",),
         "reviewer": ("reviewer",), "grader": ("grader",), "other_grader": ("grader",), "admin": ("admin",)}

ANYONE = frozenset(RELATIONS)
MEMBERS = ANYONE - {"anonymous"}
ADMIN = frozenset({"admin"})
NOBODY: frozenset[str] = frozenset()

# (method, path) -> who may use it. Written by hand from the rules, not read from policy.py.
EXPECTED: dict[tuple[str, str], frozenset[str]] = {
    # public pages
    ("GET", "/"): ANYONE,
    ("GET", "/healthz"): ANYONE,
    ("GET", "/guidelines"): ANYONE,
    ("GET", "/signup"): ANYONE,
    ("POST", "/signup"): ANYONE,
    ("GET", "/login"): ANYONE,
    ("POST", "/login"): ANYONE,
    ("POST", "/logout"): ANYONE,
    ("GET", "/verify/{token}"): NOBODY,  # an unknown token: 404 for everyone
    ("GET", "/invite/{token}"): NOBODY,
    ("POST", "/invite/{token}"): NOBODY,
    ("GET", "/review-guidelines"): ANYONE,
    ("GET", "/review-invitations/{token}"): NOBODY,  # an unknown token: 404 for everyone
    ("GET", "/review-invitations/{token}/decline"): NOBODY,
    ("POST", "/review-invitations/{token}/accept"): NOBODY,
    ("POST", "/review-invitations/{token}/decline"): NOBODY,
    ("GET", "/about"): ANYONE,
    ("GET", "/privacy"): ANYONE,
    ("GET", "/reset"): ANYONE,
    ("POST", "/reset"): ANYONE,  # the same answer for every address: an invalid one is told to fix it (400)
    ("GET", "/reset/{token}"): NOBODY,  # an unknown token
    ("POST", "/reset/{token}"): NOBODY,
    # any signed-in member
    ("POST", "/preview"): MEMBERS,
    ("GET", "/questions"): MEMBERS,
    ("GET", "/reviews"): MEMBERS,
    ("GET", "/grade"): MEMBERS,
    ("GET", "/profile"): MEMBERS,
    ("POST", "/profile/password"): MEMBERS,  # the current password is checked (400 without it)
    ("GET", "/contributors"): MEMBERS,
    # writing questions: contributors and admins
    ("GET", "/questions/new"): frozenset({"contributor", "author", "other_author", "admin"}),
    ("POST", "/questions/new"): frozenset({"contributor", "author", "other_author", "admin"}),
    # one question (the one under review, unless the path says otherwise in PATHS)
    ("GET", "/questions/{pid}"): frozenset({"author", "reviewer", "admin"}),
    ("GET", "/questions/{pid}/edit"): frozenset({"author"}),  # the draft
    ("POST", "/questions/{pid}/edit"): frozenset({"author"}),
    ("POST", "/questions/{pid}/submit"): frozenset({"author"}),  # the draft
    ("POST", "/questions/{pid}/status"): ADMIN,
    ("POST", "/questions/{pid}/test"): frozenset({"author", "admin"}),
    ("POST", "/questions/{pid}/reviews"): ADMIN,
    ("GET", "/questions/{pid}/reviews/{rid}"): frozenset({"reviewer"}),
    ("POST", "/questions/{pid}/reviews/{rid}"): frozenset({"reviewer"}),
    ("POST", "/questions/{pid}/reviews/{rid}/accept"): frozenset({"reviewer"}),
    ("POST", "/questions/{pid}/reviews/{rid}/decline"): frozenset({"reviewer"}),
    ("POST", "/questions/{pid}/reviews/{rid}/response"): frozenset({"author"}),
    # the review's discussion and a further round: its author, its reviewer, admins (400 here: not submitted yet)
    ("POST", "/questions/{pid}/reviews/{rid}/messages"): frozenset({"author", "reviewer", "admin"}),
    ("POST", "/questions/{pid}/reviews/{rid}/round"): frozenset({"author", "reviewer", "admin"}),
    # a job of the author's
    ("GET", "/jobs/{job_id}"): frozenset({"author", "admin"}),
    # blind grading of the active question: its assigned grader and its author (not even admins); the author's
    # answers have names of their own, so the grader's answer name is not theirs
    ("GET", "/grade/{pid}"): frozenset({"grader", "author"}),
    ("POST", "/grade/{pid}/notes"): frozenset({"grader", "author"}),
    ("POST", "/grade/{pid}/flag"): frozenset({"grader", "author"}),
    ("POST", "/grade/{pid}/{alias}"): frozenset({"grader"}),
    # administration
    ("GET", "/admin/outbox"): ADMIN,
    ("POST", "/admin/invite"): ADMIN,
    ("GET", "/admin/evaluations"): ADMIN,
    ("POST", "/admin/evaluations"): ADMIN,
    ("GET", "/admin/evaluations/{job_id}"): ADMIN,
    ("GET", "/admin/evaluations/runs/{run_id}"): ADMIN,
    ("POST", "/admin/answers/{answer_id}/verdicts/{sub_index}"): ADMIN,
    ("GET", "/admin/grading"): ADMIN,
    ("POST", "/admin/grading"): ADMIN,
    ("GET", "/admin/flags"): ADMIN,
    ("POST", "/admin/flags/{flag_id}/resolve"): ADMIN,
    ("GET", "/admin/stats"): ADMIN,
    ("GET", "/admin/stats/charts/{name}"): NOBODY,  # no chart on a store without grades: 404 for everyone
    ("GET", "/admin/export/{name}"): ADMIN,
    ("GET", "/admin/users"): ADMIN,
    ("GET", "/admin/assign"): ADMIN,
    ("POST", "/admin/assign"): ADMIN,
}

# Paths where {pid} is not the question under review.
DRAFT_ROUTES = {"/questions/{pid}/edit", "/questions/{pid}/submit"}
ACTIVE_ROUTES = {"/grade/{pid}", "/grade/{pid}/notes", "/grade/{pid}/flag", "/grade/{pid}/{alias}"}
# Admin pages and unknown tokens answer 404 to anonymous visitors; members' pages send them to log in.
LOGIN_FIRST_FOR_ANONYMOUS = {("GET", p) for p in ("/questions", "/reviews", "/grade", "/questions/new", "/profile",
                                                 "/contributors",
                                                 "/questions/{pid}", "/questions/{pid}/edit",
                                                 "/questions/{pid}/reviews/{rid}", "/jobs/{job_id}",
                                                 "/grade/{pid}")}  # fmt: skip


def _problem(pid: str, author: str, *, tags: tuple[str, ...] = ()) -> Problem:
    return Problem(id=pid, title=f"Question {pid}", statement="Show that $1 + 1 = 2$.", solution="Count.",
                   tags=list(tags), author=author,
                   difficulty={"background": 3, "reasoning": 3, "insight": 3, "compute": 1},
                   subquestions=[{"text": "What is $1+1$?", "answer": "2", "kind": "integer"}])  # fmt: skip


def _build_world(path: Path) -> dict[str, Any]:
    store = open_store(str(path))
    repo = AccountRepo(store)
    users = {rel: repo.create_user(f"{rel.replace('_', '-')}@example.org", hash_password("matrix password 1"),
                                   verified=True, roles=roles) for rel, roles in ROLES.items()}  # fmt: skip
    cookies = {}
    for rel, uid in users.items():
        cookies[rel] = sessions.start(repo, uid, None)
    author, other = users["author"], users["other_author"]
    for pid, owner, status in (("q-draft", author, "draft"), ("q-review", author, "under_review"),
                               ("q-active", author, "active"), ("q-other", other, "draft"),
                               ("q-other-active", other, "active")):  # fmt: skip
        save_version(store, _problem(pid, owner), actor=owner)
        path_to = {"draft": [], "under_review": ["under_review"], "active": ["under_review", "approved", "active"]}
        for to in path_to[status]:
            set_status(store, pid, to, actor=users["admin"])
    # the raw ids of improof_problems.author: the web user id
    store._execute(sa.text("UPDATE improof_problems SET author = :a WHERE id LIKE 'q-other%'"), {"a": other})
    store._execute(sa.text("UPDATE improof_problems SET author = :a WHERE id NOT LIKE 'q-other%'"), {"a": author})
    now = time.time()
    review_id = store._execute(web_reviews.insert().returning(web_reviews.c.id), {
        "problem_id": "q-review", "version": 1, "reviewer_id": users["reviewer"], "invited_by": users["admin"],
        "state": "accepted", "anonymous": 0, "created_at": now, "responded_at": now}).scalar_one()  # fmt: skip
    answers = {}
    for pid in ("q-active", "q-other-active"):
        answers[pid] = record_answer(store, run_id="run-matrix", problem_id=pid, version=1,
                                     model="openai-api/fake/matrix-model", tier=None, epoch=0, mode="agentic",
                                     main_answer="It is $2$.", sub_answers=["2"], stages=[])  # fmt: skip
    aliases = {}  # each answer's name is drawn at random: the one the grader got
    for pid, grader in (("q-active", "grader"), ("q-other-active", "other_grader")):
        [entry] = assign(store, pid, users[grader], by=users["admin"])
        aliases[pid] = entry["alias"]
    store._execute(web_jobs.insert(), {"id": "job-matrix", "kind": "test_model", "owner": author,
                                       "problem_id": "q-draft", "params": dumps({"model": "local/smollm2"}),
                                       "status": "done", "result": dumps({}), "timeout_s": 1800.0,
                                       "created_at": now, "finished_at": now})  # fmt: skip
    flag_id = store._execute(web_flags.insert().returning(web_flags.c.id), {
        "problem_id": "q-active", "answer_id": answers["q-active"], "user_id": users["grader"],
        "message": "garbled answer", "created_at": now}).scalar_one()  # fmt: skip
    store.close()
    return {"users": users, "cookies": cookies, "review_id": review_id, "answers": answers, "flag_id": flag_id,
            "alias": aliases["q-active"]}  # fmt: skip


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("matrix")
    facts = _build_world(folder / "world.db")
    return facts | {"db": folder / "world.db"}


def _fill(path: str, world: dict[str, Any]) -> str:
    pid = "q-draft" if path in DRAFT_ROUTES else "q-active" if path in ACTIVE_ROUTES else "q-review"
    if path == "/questions/{pid}/test":
        pid = "q-draft"
    values = {"pid": pid, "rid": str(world["review_id"]), "job_id": "job-matrix", "alias": world["alias"],
              "answer_id": world["answers"]["q-active"], "sub_index": "0", "flag_id": str(world["flag_id"]),
              "token": "no-such-token", "name": "grades.csv", "run_id": "run-matrix"}  # fmt: skip
    for key, value in values.items():
        path = path.replace("{" + key + "}", value)
    return path


def _app_routes(app: Any) -> set[tuple[str, str]]:
    found = set()
    for route in app.routes:
        if isinstance(route, APIRoute):
            for method in route.methods:
                if method != "HEAD":
                    found.add((method, route.path))
    return found


def test_the_matrix_names_every_route(tmp_path):
    app = create_app(str(tmp_path / "routes.db"), secret_key=SECRET, workers=0)
    try:
        routes = _app_routes(app)
    finally:
        app.state.store.close()
    assert routes - set(EXPECTED) == set(), "routes without an expected row in the matrix"
    assert set(EXPECTED) - routes == set(), "matrix rows for routes the app does not have"


CASES = [(method, path, rel) for (method, path) in sorted(EXPECTED) for rel in RELATIONS]


@pytest.mark.parametrize("method,path,rel", CASES, ids=[f"{m} {p} {r}" for m, p, r in CASES])
def test_authorisation_matrix(world, tmp_path, method, path, rel):
    db = tmp_path / "case.db"
    shutil.copy(world["db"], db)
    app = create_app(str(db), secret_key=SECRET, workers=0)
    try:
        client = TestClient(app)
        cookie = world["cookies"].get(rel) or sessions.new_id()
        client.cookies.set(sessions.COOKIE, cookie)
        token = csrf.token_for(SECRET.encode(), cookie)
        url = _fill(path, world)
        if method == "GET":
            response = client.get(url, follow_redirects=False)
        else:
            response = client.post(url, data={"csrf_token": token}, follow_redirects=False)
    finally:
        app.state.store.close()
    sent_to_login = response.status_code in (302, 303) and response.headers.get("location", "").endswith("/login")
    if rel in EXPECTED[(method, path)]:
        assert response.status_code != 404 and not sent_to_login, (response.status_code, response.text[:300])
        assert response.status_code < 500
    elif rel == "anonymous" and (method, path) in LOGIN_FIRST_FOR_ANONYMOUS:
        assert sent_to_login, response.status_code
    else:
        assert response.status_code == 404, (response.status_code, response.text[:300])
