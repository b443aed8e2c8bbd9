"""Every page of the platform in a real browser, at a phone's width (390 px) and a desktop's (1440 px).

A small world (an author's question under review with an accepted review, an active question with answers from a
tier-1 model, a grader assigned, an evaluation queued) lets each GET route of the app be opened by the role that
may see it. Each page is photographed at both widths (the harness's screenshot folder), must not scroll sideways
at 390 px (wide tables scroll inside their own box), and must not log a console error (the harness fails the test
at teardown). A GET route added to the app without a place here fails :func:`test_the_tour_covers_every_page`.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from fastapi.testclient import TestClient
from helpers.browser import log_in
from helpers.web import PASSWORD, FirstOrder, post_form, signed_in

from theorembench.methods.improof.answers import record_answer
from theorembench.methods.improof.catalog import import_problems, set_status
from theorembench.methods.improof.problems import Problem
from theorembench.store.improof import ImproofRepo
from theorembench.web import accounts, blind, jobs
from theorembench.web.auth import hash_password

ADMIN, AUTHOR, REVIEWER, GRADER = ("admin@tour.example", "author@tour.example", "reviewer@tour.example",
                                   "grader@tour.example")  # fmt: skip
DRAFT, OWN = "tour-draft", "tour-own"  # under review; a draft the author still edits
ACTIVE = """\
id: tour-active
title: Sums of squares
statement: "Show that $n^2 \\\\ge n$ for every integer $n$, and that
  \\\\begin{align} a &= b \\\\\\\\ c &= d \\\\end{align}"
solution: "Both sides agree at 0 and 1; otherwise $|n| \\\\ge 2$."
difficulty: {background: 1, reasoning: 2, insight: 1, compute: 1}
status: active
subquestions:
  - text: "What is 3 squared?"
    answer: "9"
    kind: integer
"""
# GET routes that are not pages: a probe, tokens mailed to one person (opened by their own tests), files
NOT_PAGES = {"/healthz", "/verify/{token}", "/invite/{token}", "/admin/stats/charts/{name}", "/admin/export/{name}"}
NOT_PAGES |= {"/review-invitations/{token}", "/review-invitations/{token}/decline"}  # test_browser_reviews.py
NOT_PAGES |= {"/reset/{token}"}  # test_browser_accounts_stats.py


@pytest.fixture
def platform_app(platform_db: str) -> Any:
    from theorembench.web.app import create_app

    return create_app(db=platform_db, secret_key="browser-tests-secret", workers=0)



def _world(app: Any, tmp_path: Any) -> dict[str, str]:
    """The accounts, two questions, answers, a grader's assignment, a review and a queued evaluation."""
    store, repo = app.state.store, app.state.repo
    ids = {"admin": accounts.create_admin(repo, ADMIN, PASSWORD)}
    for key, email, roles in (("author", AUTHOR, ("contributor",)), ("reviewer", REVIEWER, ("reviewer",)),
                              ("grader", GRADER, ("grader",))):  # fmt: skip
        ids[key] = repo.create_user(email, hash_password(PASSWORD), verified=True, roles=roles)
    problem = Problem(id=DRAFT, title="Stable graphs", statement="Count the stable graphs of genus $g=2$.",
                      solution="There are **seven**.", author=AUTHOR,
                      difficulty={"background": 3, "reasoning": 4, "insight": 2, "compute": 1},
                      subquestions=[{"text": "How many?", "answer": "7", "kind": "integer"}])  # fmt: skip
    ImproofRepo(store).create_problem(DRAFT, status="draft", author=ids["author"], payload=problem.content(),
                                      actor=ids["author"])  # fmt: skip
    set_status(store, DRAFT, "under_review", ids["author"])
    ImproofRepo(store).create_problem(OWN, status="draft", author=ids["author"],
                                      payload=problem.content() | {"id": OWN}, actor=ids["author"])  # fmt: skip
    path = tmp_path / "active.yaml"
    path.write_text(ACTIVE)
    import_problems(store, path, actor=ids["admin"])
    for n in range(2):
        record_answer(store, run_id="cli-run", problem_id="tour-active", version=1, model=f"prov/model-{n}", tier=1,
                      epoch=0, mode="agentic", main_answer=f"Proof number {n}: by induction on $n$.",
                      sub_answers=["9"], stages=[{"stage": "main", "outcome": "submitted"}])  # fmt: skip
    blind.assign(store, "tour-active", ids["grader"], by=ids["admin"], rng=FirstOrder())
    ids["job"] = jobs.enqueue_evaluation(store, ids["admin"], model="local/smollm2", mode="agentic",
                                         problems=["tour-active"], models=app.state.models)  # fmt: skip
    admin = signed_in(app, ADMIN)
    assert post_form(admin, f"/questions/{DRAFT}/reviews", {"email": REVIEWER}).status_code == 303
    reviewer = signed_in(app, REVIEWER)
    link = re.search(rf'href="(/questions/{DRAFT}/reviews/(\d+))"', reviewer.get("/reviews").text)
    ids["review"] = link.group(2)
    assert post_form(reviewer, f"{link.group(1)}/accept").status_code == 303
    return ids


def _pages(ids: dict[str, str]) -> dict[str, list[str]]:
    """Who opens which page: route pattern -> [role, path]."""
    return {
        "/": ["anonymous", "/"], "/signup": ["anonymous", "/signup"], "/login": ["anonymous", "/login"],
        "/guidelines": ["anonymous", "/guidelines"],
        "/questions": ["author", "/questions"], "/questions/new": ["author", "/questions/new"],
        "/questions/{pid}": ["author", f"/questions/{DRAFT}"], "/questions/{pid}/edit": ["author", f"/questions/{OWN}/edit"],
        "/reviews": ["reviewer", "/reviews"],
        "/questions/{pid}/reviews/{rid}": ["reviewer", f"/questions/{DRAFT}/reviews/{ids['review']}"],
        "/grade": ["grader", "/grade"], "/grade/{pid}": ["grader", "/grade/tour-active?answer=A"],
        "/jobs/{job_id}": ["admin", f"/jobs/{ids['job']}"],
        "/admin/outbox": ["admin", "/admin/outbox"], "/admin/evaluations": ["admin", "/admin/evaluations"],
        "/admin/evaluations/{job_id}": ["admin", f"/admin/evaluations/{ids['job']}"],
        "/admin/evaluations/runs/{run_id}": ["admin", "/admin/evaluations/runs/cli-run"],
        "/admin/grading": ["admin", "/admin/grading"], "/admin/flags": ["admin", "/admin/flags"],
        "/admin/stats": ["admin", "/admin/stats"], "/admin/users": ["admin", "/admin/users"],
        "/review-guidelines": ["anonymous", "/review-guidelines"], "/admin/assign": ["admin", "/admin/assign"],
        "/about": ["anonymous", "/about"], "/privacy": ["anonymous", "/privacy"], "/reset": ["anonymous", "/reset"],
        "/profile": ["grader", "/profile"], "/contributors": ["author", "/contributors"],
    }  # fmt: skip


def _get_routes(app: Any) -> set[str]:
    return {r.path for r in app.routes if "GET" in (getattr(r, "methods", None) or ())}


def test_the_tour_covers_every_page(app: Any) -> None:
    ids = {"review": "1", "job": "j"}
    assert _get_routes(app) - NOT_PAGES == set(_pages(ids)), "a page has no place in the tour (_pages)"


EMAILS = {"admin": ADMIN, "author": AUTHOR, "reviewer": REVIEWER, "grader": GRADER}


def test_every_page_at_390_and_1440_px(open_page: Any, platform: Any, browser_log: Any, tmp_path: Any) -> None:
    ids = _world(platform.app, tmp_path)
    tabs: dict[str, Any] = {}
    wide: list[str] = []
    for route, (role, path) in _pages(ids).items():
        if role not in tabs:
            tabs[role] = open_page()
            if role != "anonymous":
                log_in(tabs[role], EMAILS[role], PASSWORD)
        page = tabs[role]
        for width, height in ((390, 844), (1440, 900)):
            page.set_viewport_size({"width": width, "height": height})
            answer = page.goto(path)
            assert answer is not None and answer.status == 200, f"{path} as {role}: {answer and answer.status}"
            page.wait_for_load_state("load")
            browser_log.snap(page, f"{route.strip('/').replace('/', '-') or 'home'}-{width}")
            scroll = page.evaluate("document.documentElement.scrollWidth")
            if scroll > width + 1:
                wide.append(f"{path} at {width} px is {scroll} px wide")
    assert not wide, wide


def test_the_client_tour_setup_matches_the_server(app: Any, tmp_path: Any) -> None:
    """The world the tour stands on, checked without a browser: each page answers 200 to its role."""
    ids = _world(app, tmp_path)
    clients = {"anonymous": TestClient(app)} | {role: signed_in(app, email) for role, email in EMAILS.items()}
    for role, path in _pages(ids).values():
        assert clients[role].get(path).status_code == 200, (role, path)
