"""Only tiers 1–3 go to human graders, tier 1 first (§3, App. D; issue 21 item 21): the web assignment and the demo's."""

from __future__ import annotations

import random

from fastapi.testclient import TestClient
from helpers.web import PASSWORD, csrf_from, signed_in

from theorembench.methods.improof.answers import record_answer
from theorembench.methods.improof.catalog import import_problems
from theorembench.store.grading import GradingRepo
from theorembench.web import accounts, blind
from theorembench.web.auth import hash_password
from theorembench.web.demo_platform import seed_demo_platform

PROBLEM = """\
id: squares
title: Squares
statement: "Show that $n^2 \\\\ge n$ for every integer $n$."
solution: "Check 0 and 1; otherwise $|n| \\\\ge 2$."
difficulty: {background: 1, reasoning: 1, insight: 1, compute: 1}
status: active
subquestions:
  - text: "What is 3 squared?"
    answer: "9"
    kind: integer
"""
ADMIN, GRADER = "admin@example.org", "grader@example.org"


def _world(app, tmp_path) -> dict[str, str]:
    """One active question and its answers: (model, tier recorded, mode) -> answer id."""
    path = tmp_path / "p.yaml"
    path.write_text(PROBLEM)
    import_problems(app.state.store, path)
    answers = {}
    for model, tier, mode in (("openai/o3-2025-04-16", 4, "agentic"),  # tier 4: never graded by humans
                              ("openai/gpt-5", 1, "single-turn"),  # the single-turn ablation: subquestions only
                              ("grok/grok-3", 3, "agentic"),
                              ("openai/gpt-5-2025-08-07", None, "agentic"),  # recorded without a tier: Table 1's 1
                              ("anthropic/claude-opus-4-1", 1, "agentic"),
                              ("openai-api/lab/own-model", None, "agentic")):  # not in Table 1: after tier 3
        answers[(model, mode)] = record_answer(
            app.state.store, run_id=f"run-{model}-{mode}", problem_id="squares", version=1, model=model, tier=tier,
            epoch=0, mode=mode, main_answer=f"A proof by {model}.", sub_answers=["9"], stages=[])  # fmt: skip
    return answers


def test_only_agentic_tier_1_to_3_answers_are_assigned_in_priority_order(app, tmp_path):
    a = _world(app, tmp_path)
    queue = [(r["model"], r["mode"]) for r in blind.gradable_answers(app.state.store, "squares")]
    # tier 1 (oldest first), tier 3, then the model without a tier; o3 (tier 4) and the single-turn answer left out
    assert queue == [("openai/gpt-5-2025-08-07", "agentic"), ("anthropic/claude-opus-4-1", "agentic"),
                     ("grok/grok-3", "agentic"), ("openai-api/lab/own-model", "agentic")]  # fmt: skip
    grader = app.state.repo.create_user(GRADER, hash_password(PASSWORD), verified=True, roles=("grader",))
    order = blind.assign(app.state.store, "squares", grader, rng=random.Random(7))
    assert {e["answer_id"] for e in order} == {a[k] for k in queue}
    assert a[("openai/o3-2025-04-16", "agentic")] not in {e["answer_id"] for e in order}


def test_a_capped_assignment_takes_the_highest_tiers_and_a_refresh_fills_up_to_the_cap(app, tmp_path):
    a = _world(app, tmp_path)
    store = app.state.store
    grader = app.state.repo.create_user(GRADER, hash_password(PASSWORD), verified=True, roles=("grader",))
    first = blind.assign(store, "squares", grader, rng=random.Random(1), limit=3)
    # the two tier-1 answers, then the one tier-3 answer: the untiered one waits
    assert {e["answer_id"] for e in first} == {a[("openai/gpt-5-2025-08-07", "agentic")],
                                               a[("anthropic/claude-opus-4-1", "agentic")],
                                               a[("grok/grok-3", "agentic")]}  # fmt: skip
    again = blind.assign(store, "squares", grader, rng=random.Random(2), limit=4)
    assert len(again) == 4 and a[("openai-api/lab/own-model", "agentic")] in {e["answer_id"] for e in again}
    assert {e["alias"] for e in first} <= {e["alias"] for e in again}  # names kept


def test_the_admin_page_counts_the_left_out_answers_and_caps_an_assignment(app, tmp_path):
    a = _world(app, tmp_path)
    accounts.create_admin(app.state.repo, ADMIN, PASSWORD)
    uid = app.state.repo.create_user(GRADER, hash_password(PASSWORD), verified=True, roles=("grader",))
    admin: TestClient = signed_in(app, ADMIN)
    page = admin.get("/admin/grading").text
    assert 'data-testid="admin-grading-answers-squares">4 <span' in page and "(2 left out)" in page
    token = csrf_from(page)
    bad = admin.post("/admin/grading", data={"problem_id": "squares", "email": GRADER, "limit": "0",
                                             "csrf_token": token})  # fmt: skip
    assert bad.status_code == 400 and "at least 1" in bad.text
    done = admin.post("/admin/grading", data={"problem_id": "squares", "email": GRADER, "limit": "2",
                                              "csrf_token": token}, follow_redirects=False)  # fmt: skip
    assert done.status_code == 303
    got = {e["answer_id"] for e in GradingRepo(app.state.store).assignment("squares", uid)["answer_order"]}
    assert got == {a[("openai/gpt-5-2025-08-07", "agentic")], a[("anthropic/claude-opus-4-1", "agentic")]}


def test_the_demo_platform_assigns_no_tier_4_or_single_turn_answer(app, tmp_path):
    a = _world(app, tmp_path)
    seeded = seed_demo_platform(app.state.store)
    assert seeded.assigned == {"squares": 4} and seeded.left_out == {"squares": 2}
    grader = app.state.repo.user_by_email(seeded.grader[0])
    got = {e["answer_id"] for e in GradingRepo(app.state.store).assignment("squares", grader["id"])["answer_order"]}
    assert a[("openai/gpt-5", "single-turn")] not in got and a[("openai/o3-2025-04-16", "agentic")] not in got
