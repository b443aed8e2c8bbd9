"""Authors grade their own questions' answers (§3 of the paper: "the question's author serves as grader"), beside the
graders an administrator assigns (issue 24 item 12): blind as for any grader, the most important tier first, and
human grading still limited to tiers 1–3."""

from __future__ import annotations

import json
import re
from typing import Any

from fastapi.testclient import TestClient
from helpers.web import PASSWORD, csrf_from, signed_in

from theorembench.methods.improof.answers import record_answer
from theorembench.methods.improof.grades import INDICATORS, get_grade, list_grades
from theorembench.methods.improof.problems import Problem
from theorembench.store.grading import GradingRepo
from theorembench.store.improof import ImproofRepo
from theorembench.store.schema import improof_problems
from theorembench.web import accounts, blind
from theorembench.web.auth import hash_password

AUTHOR, OTHER, GRADER = "author@example.org", "other.author@example.org", "grader@example.org"
ADMIN = "admin@example.org"
PID = "squares"
ALL_TRUE = json.dumps(dict.fromkeys(INDICATORS, "true"))
# (model, recorded tier, mode): tier 1 twice, tier 3, a model without a tier, tier 4, and a single-turn answer
ANSWERS = (("openai/gpt-5", 1, "agentic"), ("anthropic/claude-opus-4-1", 1, "agentic"),
           ("grok/grok-3", 3, "agentic"), ("openai-api/lab/own-model", None, "agentic"),
           ("openai/o3-2025-04-16", 4, "agentic"), ("google/gemini-2.5-pro", 1, "single-turn"))  # fmt: skip


def _world(app: Any, status: str = "active") -> dict[str, Any]:
    store, repo = app.state.store, app.state.repo
    ids = {email: repo.create_user(email, hash_password(PASSWORD), verified=True, roles=roles)
           for email, roles in ((AUTHOR, ("contributor",)), (OTHER, ("contributor",)), (GRADER, ("grader",)))}
    problem = Problem(id=PID, title="Sums of squares", statement="Show that $n^2 \\ge n$.", solution="Check.",
                      difficulty={"background": 1, "reasoning": 1, "insight": 1, "compute": 1},
                      subquestions=[{"text": "What is 3 squared?", "answer": "9", "kind": "integer"}])  # fmt: skip
    ImproofRepo(store).create_problem(PID, status=status, author=ids[AUTHOR], payload=problem.content(),
                                      actor=ids[AUTHOR])  # fmt: skip
    answers = {}
    for model, tier, mode in ANSWERS:
        answers[model] = record_answer(store, run_id=f"run-{model}", problem_id=PID, version=1, model=model,
                                       tier=tier, epoch=0, mode=mode, main_answer=f"Proof {len(answers)}.",
                                       sub_answers=["9"], stages=[])  # fmt: skip
    return {"ids": ids, "answers": answers}


def _aliases(html: str) -> list[str]:
    return re.findall(r'data-testid="answer-tab-([A-Z]+)"', html)


def _held(app: Any, uid: str) -> set[str]:
    return {e["answer_id"] for e in GradingRepo(app.state.store).assignment(PID, uid)["answer_order"]}


def _save(client: TestClient, alias: str, **fields: str) -> Any:
    page = client.get(f"/grade/{PID}?answer={alias}").text
    revision = re.search(r'data-save-url="/grade/squares/' + alias + r'" data-revision="(\d+)"', page).group(1)
    body = {"progress": "", "indicators": "{}", "comment": "", "status": "incomplete", "revision": revision}
    return client.post(f"/grade/{PID}/{alias}", json=body | fields, headers={"X-CSRF-Token": csrf_from(page)})


def _finish(client: TestClient, aliases: list[str]) -> None:
    for alias in aliases:
        done = _save(client, alias, progress="2", indicators=ALL_TRUE, status="complete", comment="Graded.")
        assert done.status_code == 200 and done.json()["status"] == "complete"


def test_the_author_grades_tier_by_tier_blind_and_never_tier_4(app):
    w = _world(app)
    a, uid = w["answers"], w["ids"][AUTHOR]
    author = signed_in(app, AUTHOR)
    listing = author.get("/grade").text
    assert f'data-testid="grading-own-{PID}"' in listing and f'data-testid="grading-link-{PID}"' in listing
    assert f'data-testid="grading-final-{PID}">0 of 2<' in listing  # tier 1 first: two answers
    assert _held(app, uid) == {a["openai/gpt-5"], a["anthropic/claude-opus-4-1"]}

    page = author.get(f"/grade/{PID}").text
    first = _aliases(page)
    assert len(first) == 2 and 'data-testid="grading-as-author"' in page
    for model, _tier, _mode in ANSWERS:  # blind: no model, run or answer id on the author's page
        assert model not in page and f"run-{model}" not in page and a[model] not in page
    assert 'data-testid="grading-progress-text"><span data-testid="grading-graded">0</span> graded of ' in page

    _finish(author, first)
    page = author.get(f"/grade/{PID}").text  # tier 1 is done: tier 3 joins before anything is revealed
    assert 'data-testid="reveal"' not in page and "grok" not in page
    assert _held(app, uid) == {a["openai/gpt-5"], a["anthropic/claude-opus-4-1"], a["grok/grok-3"]}
    second = [x for x in _aliases(page) if x not in first]
    assert len(second) == 1 and set(first) <= set(_aliases(page))  # the names already given stay
    assert '<span data-testid="grading-graded">2</span> graded of <span data-testid="grading-to-grade">3</span>' in page

    _finish(author, second)
    page = author.get(f"/grade/{PID}").text  # then the model without a tier
    assert 'data-testid="reveal"' not in page
    third = [x for x in _aliases(page) if x not in first + second]
    assert len(third) == 1 and a["openai-api/lab/own-model"] in _held(app, uid)

    _finish(author, third)
    page = author.get(f"/grade/{PID}").text  # everything final: revealed, as for any grader
    assert 'data-testid="reveal"' in page and "openai/gpt-5" in page
    held = _held(app, uid)
    assert a["openai/o3-2025-04-16"] not in held and a["google/gemini-2.5-pro"] not in held  # tier 4, single-turn
    assert len(held) == 4
    graded = {g.answer_id for g in list_grades(app.state.store, grader=AUTHOR, problem_id=PID)}
    assert graded == held and get_grade(app.state.store, a["grok/grok-3"], AUTHOR).status == "complete"


def test_the_author_and_an_assigned_grader_grade_apart(app):
    w = _world(app)
    a = w["answers"]
    order = blind.assign(app.state.store, PID, w["ids"][GRADER], limit=3)  # the admin's cap: tiers 1 and 3
    assert {e["answer_id"] for e in order} == {a["openai/gpt-5"], a["anthropic/claude-opus-4-1"], a["grok/grok-3"]}
    grader, author = signed_in(app, GRADER), signed_in(app, AUTHOR)
    graders_page = grader.get(f"/grade/{PID}").text
    assert len(_aliases(graders_page)) == 3 and 'data-testid="grading-as-author"' not in graders_page
    authors_page = author.get(f"/grade/{PID}").text
    assert len(_aliases(authors_page)) == 2
    alias = _aliases(authors_page)[0]
    saved = _save(author, alias, progress="1", comment="The author's own view.")
    assert saved.status_code == 200 and (saved.json()["graded"], saved.json()["to_grade"]) == (0, 2)
    [mine] = list_grades(app.state.store, grader=AUTHOR, problem_id=PID)
    assert (mine.progress, mine.comment) == (1, "The author's own view.")
    assert list_grades(app.state.store, grader=GRADER, problem_id=PID) == []  # nothing of it reaches the grader
    assert "The author's own view." not in grader.get(f"/grade/{PID}?answer={_aliases(graders_page)[0]}").text
    accounts.create_admin(app.state.repo, ADMIN, PASSWORD)
    progress = signed_in(app, ADMIN).get("/admin/grading").text  # the organisers see both, the author marked
    assert f"{AUTHOR} (the author): 0 / 2" in progress and f"{GRADER}: 0 / 3" in progress


def test_only_the_author_of_a_live_question_grades_it(app):
    w = _world(app, status="under_review")
    author, other = signed_in(app, AUTHOR), signed_in(app, OTHER)
    assert author.get(f"/grade/{PID}").status_code == 404  # not live yet
    assert GradingRepo(app.state.store).assignment(PID, w["ids"][AUTHOR]) is None
    assert f"grading-link-{PID}" not in author.get("/grade").text
    app.state.store._execute(improof_problems.update().values(status="active"))  # made live
    assert author.get(f"/grade/{PID}").status_code == 200
    assert other.get(f"/grade/{PID}").status_code == 404  # another author: not theirs
    token = csrf_from(other.get("/grade").text)
    assert other.post(f"/grade/{PID}/notes", json={"notes": "x"}, headers={"X-CSRF-Token": token}).status_code == 404
    assert GradingRepo(app.state.store).assignment(PID, w["ids"][OTHER]) is None


def test_author_rank_follows_the_tiers(app):
    w = _world(app)
    store, uid = app.state.store, w["ids"][AUTHOR]
    assert blind.author_rank(store, PID, uid, AUTHOR) == 1
    assert blind.author_rank(store, "no-such-question", uid, AUTHOR) is None


def test_after_opens_the_next_answer_still_to_grade_in_page_order(app):
    w = _world(app)
    order = blind.assign(app.state.store, PID, w["ids"][GRADER], limit=3)
    names = [e["alias"] for e in order]  # the grader's page order
    grader = signed_in(app, GRADER)

    def current(query: str) -> str:
        page = grader.get(f"/grade/{PID}?{query}").text
        return re.search(r'data-testid="current-alias">Answer ([A-Z]+)<', page).group(1)

    assert current(f"after={names[0]}") == names[1]
    assert current(f"after={names[2]}") == names[0]  # round the end
    _finish(grader, [names[1]])
    assert current(f"after={names[0]}") == names[2]  # a final answer is passed over
    _finish(grader, [names[0], names[2]])
    assert current(f"after={names[1]}") == names[1]  # none left: the page stays on the answer just graded
    assert current("after=ZZ") == names[0]  # an unknown name: the first answer
