"""Nothing a grader types is lost, in a real browser: two tabs saving the same grade (409: both versions shown, the
grader merges or chooses), a reload before the server has the text (restored from this browser), and "Complete"
chosen before every field is set (saved as incomplete, the missing fields named and highlighted)."""

from __future__ import annotations

from typing import Any

from helpers.browser import log_in
from helpers.web import FirstOrder

from theorembench.methods.improof.answers import record_answer
from theorembench.methods.improof.catalog import import_problems
from theorembench.methods.improof.grades import get_grade
from theorembench.store.accounts import AccountRepo
from theorembench.web import blind
from theorembench.web.auth import hash_password

GRADER, PASSWORD = "grader.tabs@example.org", "grader-tabs-password"
PROBLEM = """\
id: squares
title: Sums of squares
statement: "Show that $n^2 \\\\ge n$ for every integer $n$."
solution: "Both sides agree at 0 and 1; otherwise $|n| \\\\ge 2$."
difficulty: {background: 1, reasoning: 2, insight: 1, compute: 1}
status: active
subquestions:
  - text: "What is 3 squared?"
    answer: "9"
    kind: integer
"""
FIRST_TAB = "Tab one: the induction step is fine."
SECOND_TAB = (
    "Tab two, a long comment: the base case is missing, the bound in the second paragraph uses "
    "|n| >= 2 without saying why, and the final inequality needs n to be an integer."
)



def _world(platform: Any, tmp_path: Any) -> str:
    store = platform.app.state.store
    path = tmp_path / "squares.yaml"
    path.write_text(PROBLEM)
    import_problems(store, path)
    answer = record_answer(store, run_id="run-1", problem_id="squares", version=1, model="prov/m0", tier=1, epoch=0,
                           mode="agentic", main_answer="Proof text.", sub_answers=["9"],
                           stages=[{"stage": "main", "outcome": "submitted"}])  # fmt: skip
    uid = AccountRepo(store).create_user(GRADER, hash_password(PASSWORD), verified=True, roles=("grader",))
    blind.assign(store, "squares", uid, rng=FirstOrder())
    return answer


def _grading_tab(open_page: Any) -> Any:
    page = open_page()
    log_in(page, GRADER, PASSWORD)
    page.goto("/grade/squares?answer=A")
    return page


def test_a_save_conflict_keeps_both_versions_and_the_grader_merges(open_page: Any, platform: Any, browser_log: Any,
                                                                   tmp_path: Any) -> None:  # fmt: skip
    from playwright.sync_api import expect

    answer = _world(platform, tmp_path)
    one, two = _grading_tab(open_page), _grading_tab(open_page)
    one.get_by_test_id("grade-progress-1").check()
    one.get_by_test_id("grade-comment").fill(FIRST_TAB)
    expect(one.get_by_test_id("autosave-state")).to_have_text("Saved", timeout=15_000)

    two.get_by_test_id("grade-progress-2").check()
    two.get_by_test_id("grade-comment").fill(SECOND_TAB)
    state = two.get_by_test_id("autosave-state")
    expect(state).to_contain_text("Conflict", timeout=15_000)
    expect(two.get_by_test_id("grade-comment")).to_have_value(SECOND_TAB)  # the losing tab's text stays
    expect(two.get_by_test_id("conflict-panel")).to_be_visible()
    expect(two.get_by_test_id("conflict-grade-text-theirs")).to_have_text(FIRST_TAB)
    expect(two.get_by_test_id("conflict-grade-text-mine")).to_have_text(SECOND_TAB)
    expect(two.get_by_test_id("conflict-grade")).to_contain_text("1/3 minor progress")
    expect(two.get_by_test_id("conflict-grade")).to_contain_text("2/3 major progress")
    browser_log.snap(two, "conflict-panel")

    two.reload()  # before anything was chosen: the text comes back from this browser, and the conflict with it
    expect(two.get_by_test_id("grade-comment")).to_have_value(SECOND_TAB)
    expect(two.get_by_test_id("grade-progress-2")).to_be_checked()
    expect(two.get_by_test_id("conflict-grade-text-mine")).to_have_text(SECOND_TAB, timeout=15_000)
    assert get_grade(platform.app.state.store, answer, GRADER).comment == FIRST_TAB

    two.get_by_test_id("conflict-grade-merge").click()
    expect(two.get_by_test_id("conflict-panel")).to_be_hidden()
    expect(two.get_by_test_id("grade-comment")).to_have_value(SECOND_TAB + "\n\n" + FIRST_TAB)
    expect(state).to_have_text("Saved", timeout=15_000)
    stored = get_grade(platform.app.state.store, answer, GRADER)
    assert (stored.comment, stored.progress, stored.revision) == (SECOND_TAB + "\n\n" + FIRST_TAB, 2, 2)
    assert two.evaluate("Object.keys(localStorage).filter((k) => k.startsWith('tb-draft:'))") == []

    two.get_by_test_id("grade-comment").fill("Tab two wins this time.")
    expect(state).to_have_text("Saved", timeout=15_000)
    one.get_by_test_id("grade-comment").fill(FIRST_TAB + " Edited.")  # the first tab, still at its old revision
    expect(one.get_by_test_id("autosave-state")).to_contain_text("Conflict", timeout=15_000)
    one.get_by_test_id("conflict-grade-take-theirs").click()
    expect(one.get_by_test_id("grade-comment")).to_have_value("Tab two wins this time.")
    expect(one.get_by_test_id("grade-progress-2")).to_be_checked()
    assert one.evaluate("Object.keys(localStorage).filter((k) => k.startsWith('tb-draft:'))") == []
    one.reload()
    expect(one.get_by_test_id("grade-comment")).to_have_value("Tab two wins this time.")
    assert get_grade(platform.app.state.store, answer, GRADER).comment == "Tab two wins this time."
    conflicts = browser_log.take("409")  # the browser logs each refused save; the page handled them
    assert conflicts


def test_unsaved_text_is_restored_after_a_reload(open_page: Any, platform: Any, browser_log: Any,
                                                 tmp_path: Any) -> None:  # fmt: skip
    from playwright.sync_api import expect

    answer = _world(platform, tmp_path)
    page = _grading_tab(open_page)
    # signed out meanwhile (in another tab, say): the server refuses the saves, the page and this browser keep the text
    signed_out = page.evaluate("""() => fetch('/logout', {method: 'POST', credentials: 'same-origin',
        body: new URLSearchParams(new FormData(document.getElementById('logout-form')))})
        .then((r) => r.text()).then((html) => !html.includes('data-testid="logout"'))""")
    assert signed_out
    page.get_by_test_id("grade-comment").fill(SECOND_TAB)
    expect(page.get_by_test_id("autosave-state")).to_have_text(
        "Not saved (kept in this browser): you may be signed out: sign in again", timeout=15_000
    )
    page.reload()  # lands on the login page; the server never had the text
    assert get_grade(platform.app.state.store, answer, GRADER) is None
    log_in(page, GRADER, PASSWORD)
    page.goto("/grade/squares?answer=A")
    expect(page.get_by_test_id("grade-comment")).to_have_value(SECOND_TAB)
    expect(page.get_by_test_id("autosave-state")).to_have_text("Saved", timeout=15_000)
    assert get_grade(platform.app.state.store, answer, GRADER).comment == SECOND_TAB
    assert page.evaluate("Object.keys(localStorage).filter((k) => k.startsWith('tb-draft:'))") == []
    assert browser_log.take("403")  # the refused saves, which the page reported itself


def test_complete_too_early_names_and_highlights_the_missing_fields(open_page: Any, platform: Any,
                                                                    tmp_path: Any) -> None:  # fmt: skip
    from playwright.sync_api import expect

    answer = _world(platform, tmp_path)
    page = _grading_tab(open_page)
    page.get_by_test_id("indicator-hallucinated-false").check()
    page.get_by_test_id("grade-comment").fill("Started.")
    page.get_by_test_id("grade-status").select_option("complete")
    state = page.get_by_test_id("autosave-state")
    expect(state).to_have_text("Saved, not yet complete", timeout=15_000)
    note = page.get_by_test_id("grade-missing")
    expect(note).to_have_text("Saved, but not yet complete: fill in Overall progress, Incorrect Logic, Calculation, "
                              "Conceptual, Understanding, Correct Result, Insight, Usefulness.")  # fmt: skip
    expect(page.get_by_test_id("field-progress")).to_have_class("missing")
    expect(page.get_by_test_id("indicator-usefulness")).to_have_class("indicator missing")
    expect(page.get_by_test_id("indicator-hallucinated")).to_have_class("indicator")
    stored = get_grade(platform.app.state.store, answer, GRADER)
    assert (stored.status, stored.comment, stored.indicators) == ("incomplete", "Started.", {"hallucinated": "false"})

    page.get_by_test_id("grade-progress-2").check()
    expect(page.get_by_test_id("field-progress")).not_to_have_class("missing")
    for name in ("incorrect_logic", "calculation", "conceptual", "understanding", "correct_result", "insight",
                 "usefulness"):  # fmt: skip
        page.get_by_test_id(f"indicator-{name}-true").check()
    expect(state).to_have_text("Saved", timeout=15_000)
    expect(page.get_by_test_id("answer-tab-status-A")).to_have_text("complete")
    expect(note).to_be_hidden()
    expect(page.get_by_test_id("indicator-usefulness")).to_have_class("indicator")
    assert get_grade(platform.app.state.store, answer, GRADER).status == "complete"


def test_a_notes_conflict_lets_the_grader_keep_their_own(open_page: Any, platform: Any, browser_log: Any,
                                                         tmp_path: Any) -> None:  # fmt: skip
    from playwright.sync_api import expect

    from theorembench.store.grading import GradingRepo

    _world(platform, tmp_path)
    one, two = _grading_tab(open_page), _grading_tab(open_page)
    one.get_by_test_id("grading-notes").fill("Notes from tab one.")
    expect(one.get_by_test_id("autosave-state")).to_have_text("Saved", timeout=15_000)
    two.get_by_test_id("grading-notes").fill("Notes from tab two.")
    expect(two.get_by_test_id("autosave-state")).to_contain_text("Conflict", timeout=15_000)
    expect(two.get_by_test_id("conflict-notes-text-theirs")).to_have_text("Notes from tab one.")
    expect(two.get_by_test_id("conflict-notes-text-mine")).to_have_text("Notes from tab two.")
    two.get_by_test_id("conflict-notes-keep-mine").click()
    expect(two.get_by_test_id("autosave-state")).to_have_text("Saved", timeout=15_000)
    expect(two.get_by_test_id("conflict-panel")).to_be_hidden()
    store = platform.app.state.store
    uid = AccountRepo(store).user_by_email(GRADER)["id"]
    assert GradingRepo(store).assignment("squares", uid)["notes"] == "Notes from tab two."
    assert browser_log.take("409")
