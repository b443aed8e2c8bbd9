"""The XSS corpus through every page that shows what authors, reviewers, graders and models wrote.

A question whose every field (title, statement, solution, tags, subquestions) carries the
corpus goes through review, activation, an evaluation answer and grading; then each page that
shows it is parsed: the only scripts are our own files, and no tag carries an event handler
or a ``javascript:`` link. The browser half (nothing runs in Chromium) is in
``tests/test_browser_core.py``; this half covers the pages of the whole workflow.
"""

from __future__ import annotations

import re

from fastapi.testclient import TestClient
from helpers.web import NESTED, XSS, parse_tags, sign_in

from theorembench.methods.improof.answers import record_answer
from theorembench.methods.improof.catalog import set_status
from theorembench.store.accounts import AccountRepo
from theorembench.web import reviews
from theorembench.web.app import create_app
from theorembench.web.auth import hash_password
from theorembench.web.authoring import create_question
from theorembench.web.blind import assign
from theorembench.web.question_form import read_form

PASSWORD = "xss pages password 1"
CORPUS = "\n\n".join(XSS) + "\n\n" + NESTED[0][:2000]
SHORT = "<img src=x onerror=alert(1)> $<script>alert(1)</script>$"


def _assert_no_live_code(html: str, where: str) -> None:
    parsed = parse_tags(html)
    assert not parsed.script_text, where  # no inline script at all
    for tag, attrs in parsed.tags:
        assert tag not in {"iframe", "object", "embed", "style", "svg", "base", "meta"} or (
            tag == "meta" and set(attrs) <= {"charset", "name", "content"}), (where, tag, attrs)  # fmt: skip
        if tag == "script":
            assert re.fullmatch(r"/static/[\w./-]+\.js", attrs.get("src", "")), (where, attrs)
        if tag == "img":
            assert attrs.get("src", "").startswith("/admin/stats/charts/"), (where, attrs)
        for name, value in attrs.items():
            assert not name.startswith("on"), (where, tag, name)
            squashed = re.sub(r"[\s\x00-\x1f]", "", value).lower()
            if name in {"href", "src", "action", "formaction", "xlink:href"}:
                assert not squashed.startswith(("javascript:", "vbscript:", "data:")), (where, tag, value)


def test_hostile_text_is_inert_on_every_page_of_the_workflow(tmp_path):
    app = create_app(str(tmp_path / "xss.db"), secret_key="xss", workers=0)
    store = app.state.store
    repo = AccountRepo(store)
    ids = {name: repo.create_user(f"{name}@example.org", hash_password(PASSWORD), verified=True, roles=roles)
           for name, roles in (("author", ("contributor",)), ("admin", ("admin",)), ("reviewer", ("reviewer",)),
                               ("grader", ("grader",)))}  # fmt: skip
    form = read_form({"title": "A <img src=x onerror=alert(1)> title", "statement": CORPUS, "solution": CORPUS,
                      "tags": "<script>alert(1)</script>, open problem", **{f"difficulty-{k}": "3" for k in
                      ("background", "reasoning", "insight", "compute")}, "sub-0-text": SHORT, "sub-0-answer": "2",
                      "sub-0-kind": "integer", "sub-0-points": "1", "sub-0-rationale": CORPUS})  # fmt: skip
    assert form.check() == {}
    pid = create_question(store, form, uid=ids["author"], author_name="author@example.org")
    set_status(store, pid, "under_review", actor=ids["author"])
    rid, _ = reviews.invite_reviewer(store, pid, "reviewer@example.org", by=ids["admin"])
    reviews.answer_invitation(store, rid, True)
    reviews.submit_review(store, rid, recommendation="recommend", anonymous=False, comment=CORPUS,
                          actor=ids["reviewer"])  # fmt: skip
    reviews.respond_to_review(store, rid, CORPUS)
    for to in ("approved", "active"):
        set_status(store, pid, to, actor=ids["admin"])
    record_answer(store, run_id="run-xss", problem_id=pid, version=1, model="openai-api/fake/xss", tier=None,
                  epoch=0, mode="agentic", main_answer=CORPUS, sub_answers=[SHORT], stages=[])  # fmt: skip
    [entry] = assign(store, pid, ids["grader"], by=ids["admin"])  # its name is drawn at random

    pages = {"author": [f"/questions/{pid}", "/questions", f"/questions/{pid}/edit"],
             "admin": [f"/questions/{pid}", "/questions", "/reviews", "/admin/grading", "/admin/stats",
                       "/admin/evaluations"],
             "reviewer": [f"/questions/{pid}/reviews/{rid}", "/reviews", f"/questions/{pid}"],
             "grader": ["/grade", f"/grade/{pid}", f"/grade/{pid}?answer={entry['alias']}"]}  # fmt: skip
    try:
        for who, paths in pages.items():
            client = TestClient(app)
            assert sign_in(client, f"{who}@example.org", PASSWORD).status_code == 303
            for path in paths:
                response = client.get(path)
                if path.endswith("/edit"):
                    assert response.status_code == 404  # the question is active: no editing, nothing shown
                    continue
                assert response.status_code == 200, (who, path, response.status_code)
                _assert_no_live_code(response.text, f"{who} {path}")
                if path.startswith(f"/questions/{pid}") or path.startswith("/grade/"):
                    assert "onerror=alert(1)" in response.text.replace("&lt;", "<").replace("&gt;", ">")  # shown as text
    finally:
        store.close()
