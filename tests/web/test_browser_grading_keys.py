"""Grading with fewer clicks, in a real browser (issue 24 item 7): a grader grades an answer with the keyboard alone and
it is stored; "Submit and next" opens the next answer still to grade and the progress bar counts; the indicators'
help opens by keyboard and by a tap; focus mode keeps the reference solution at hand; the answer column uses a wide
screen; nothing overflows a 390 px phone. Screenshots of the grading page and the grading list at 390 and 1440 px."""

from __future__ import annotations

from typing import Any

from helpers.web import FirstOrder

from theorembench.methods.improof.answers import record_answer
from theorembench.methods.improof.catalog import import_problems
from theorembench.methods.improof.grades import get_grade
from theorembench.store.accounts import AccountRepo
from theorembench.web import blind
from theorembench.web.auth import hash_password

GRADER, PASSWORD = "grader.keys@example.org", "grader-keys-password"
PROBLEM = """\
id: squares
title: Sums of squares and a title long enough to wrap on a phone
statement: "Show that $n^2 \\\\ge n$ for every integer $n$."
solution: "Both sides agree at 0 and 1; otherwise $|n| \\\\ge 2$, so the reference solution is short."
difficulty: {background: 1, reasoning: 2, insight: 1, compute: 1}
status: active
subquestions:
  - text: "What is 3 squared?"
    answer: "9"
    kind: integer
"""
# the keys pressed for the eight indicators, in the page's order, and what each stores
KEYS = (("incorrect_logic", "f", "false"), ("hallucinated", "f", "false"), ("calculation", "s", "not_sure"),
        ("conceptual", "f", "false"), ("understanding", "t", "true"), ("correct_result", "t", "true"),
        ("insight", "s", "not_sure"), ("usefulness", "t", "true"))  # fmt: skip
COMMENT = "Typed with the keyboard: the base case is there."



def _world(platform: Any, tmp_path: Any) -> list[str]:
    store = platform.app.state.store
    path = tmp_path / "squares.yaml"
    path.write_text(PROBLEM)
    import_problems(store, path)
    answers = [record_answer(store, run_id=f"run-{n}", problem_id="squares", version=1, model=f"prov/m{n}", tier=1,
                             epoch=0, mode="agentic", main_answer=f"Proof number {n}: " + "a long line " * 40,
                             sub_answers=["9"], stages=[]) for n in range(3)]  # fmt: skip
    uid = AccountRepo(store).create_user(GRADER, hash_password(PASSWORD), verified=True, roles=("grader",))
    blind.assign(store, "squares", uid, rng=FirstOrder())
    return answers


def _log_in_by_keyboard(page: Any) -> None:
    page.goto("/login")
    page.get_by_test_id("login-email").focus()
    page.keyboard.type(GRADER)
    page.keyboard.press("Tab")
    page.keyboard.type(PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url("**/")


def _no_overflow(page: Any, width: int) -> None:
    scroll = page.evaluate("document.documentElement.scrollWidth")
    assert scroll <= width, f"the page is {scroll} px wide at a {width} px viewport"


def test_a_grader_grades_with_the_keyboard_alone_and_submit_and_next_moves_on(open_page: Any, platform: Any,
                                                                              browser_log: Any, tmp_path: Any) -> None:  # fmt: skip
    from playwright.sync_api import expect

    answers = _world(platform, tmp_path)
    page = open_page()
    _log_in_by_keyboard(page)
    page.goto("/grade/squares?answer=A")
    expect(page.get_by_test_id("grading-progress-text")).to_have_text("0 graded of 3 to grade")
    keyboard = page.keyboard
    keyboard.press("2")
    expect(page.get_by_test_id("grade-progress-2")).to_be_checked()
    for name, key, value in KEYS:
        keyboard.press(key)
        expect(page.get_by_test_id(f"indicator-{name}-{value}")).to_be_checked()
    keyboard.press("c")
    expect(page.get_by_test_id("grade-comment")).to_be_focused()
    keyboard.type(COMMENT + " 0123 jkft?")  # keys typed in the comment are text, not shortcuts
    expect(page.get_by_test_id("grade-progress-2")).to_be_checked()
    expect(page.get_by_test_id("keys-help")).to_be_hidden()
    keyboard.press("Escape")
    keyboard.press("?")  # the list of keys, by keyboard
    expect(page.get_by_test_id("keys-help")).to_be_visible()
    expect(page.get_by_test_id("keys-toggle")).to_have_attribute("aria-expanded", "true")
    browser_log.snap(page, "grade-keys-help-1280")
    keyboard.press("Escape")
    expect(page.get_by_test_id("keys-help")).to_be_hidden()
    keyboard.press("Control+Enter")  # submit and next: complete, saved, on to B
    page.wait_for_url("**/grade/squares?after=A")
    expect(page.get_by_test_id("current-alias")).to_have_text("Answer B")
    expect(page.get_by_test_id("grading-progress-text")).to_have_text("1 graded of 3 to grade")
    expect(page.get_by_test_id("grading-progress-bar")).to_have_attribute("value", "1")
    stored = get_grade(platform.app.state.store, answers[0], GRADER)
    assert (stored.status, stored.progress, stored.comment) == ("complete", 2, COMMENT + " 0123 jkft?")
    assert stored.indicators == {name: value for name, _key, value in KEYS}

    # "n": the next answer still to grade, without marking this one complete; A is final, so after C comes B again
    keyboard.press("1")
    expect(page.get_by_test_id("autosave-state")).to_have_text("Unsaved changes")
    keyboard.press("n")
    page.wait_for_url("**/grade/squares?after=B")
    expect(page.get_by_test_id("current-alias")).to_have_text("Answer C")
    assert get_grade(platform.app.state.store, answers[1], GRADER).progress == 1  # saved before leaving
    assert get_grade(platform.app.state.store, answers[1], GRADER).status == "incomplete"

    # Submit and next with fields missing stays on the answer, saves what was given and names what is missing
    keyboard.press("3")
    keyboard.press("Control+Enter")
    expect(page.get_by_test_id("grade-missing")).to_contain_text("Incorrect Logic")
    expect(page.get_by_test_id("current-alias")).to_have_text("Answer C")
    expect(page.get_by_test_id("indicator-incorrect_logic")).to_have_class("indicator missing key-active")
    assert get_grade(platform.app.state.store, answers[2], GRADER).progress == 3
    page.reload()  # the store has it: a reload shows the progress typed by key
    expect(page.get_by_test_id("grade-progress-3")).to_be_checked()
    expect(page.get_by_test_id("grading-progress-text")).to_have_text("1 graded of 3 to grade")


def test_help_opens_by_keyboard_and_by_tap_and_focus_mode_keeps_the_solution(open_page: Any, platform: Any,
                                                                             chromium: Any, browser_log: Any,
                                                                             tmp_path: Any) -> None:  # fmt: skip
    from playwright.sync_api import expect

    _world(platform, tmp_path)
    page = open_page()
    _log_in_by_keyboard(page)
    page.goto("/grade/squares?answer=A")
    tip, text = page.get_by_test_id("tip-insight"), page.get_by_test_id("tip-text-insight")
    expect(text).to_be_hidden()
    tip.focus()
    expect(tip).to_be_focused()  # a real control: it takes the keyboard focus (a hover-only tooltip does not)
    page.keyboard.press("Enter")
    expect(text).to_be_visible()
    expect(text).to_contain_text("an idea or approach")
    page.keyboard.press("Space")
    expect(text).to_be_hidden()
    page.keyboard.press("?")  # "?" on a focused help button opens that help
    expect(text).to_be_visible()
    expect(page.get_by_test_id("keys-help")).to_be_hidden()
    tip.blur()
    page.keyboard.press("h")  # "h": the help of the marked indicator (the first unset: Incorrect Logic)
    expect(page.get_by_test_id("tip-text-incorrect_logic")).to_be_visible()

    # focus mode hides the question column; the reference solution comes back with "r" and goes with the button
    page.get_by_test_id("focus-toggle").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("grading-question")).to_be_hidden()
    page.get_by_test_id("focus-toggle").blur()
    page.keyboard.press("r")
    expect(page.get_by_test_id("grading-solution")).to_be_visible()
    expect(page.get_by_test_id("reference-toggle")).to_have_attribute("aria-pressed", "true")
    page.set_viewport_size({"width": 1440, "height": 900})
    browser_log.snap(page, "grade-focus-reference-1440")
    page.get_by_test_id("reference-toggle").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("grading-question")).to_be_hidden()
    page.get_by_test_id("focus-toggle").focus()
    page.keyboard.press("Enter")  # focus mode off again
    expect(page.get_by_test_id("grading-question")).to_be_visible()

    # a wide screen: the answer column grows past the old cap of the page (72rem, 1152 px)
    page.set_viewport_size({"width": 1900, "height": 1000})
    box = page.get_by_test_id("grading-page").bounding_box()
    assert box is not None and box["width"] > 1700
    answer_box = page.locator(".grading-answer").bounding_box()
    assert answer_box is not None and answer_box["width"] > 800

    for name, url in (("grade", "/grade/squares?answer=A"), ("grade-list", "/grade")):
        page.goto(url)
        page.set_viewport_size({"width": 1440, "height": 900})
        browser_log.snap(page, f"{name}-1440")
        page.set_viewport_size({"width": 390, "height": 844})
        browser_log.snap(page, f"{name}-390")
        _no_overflow(page, 390)

    # a phone: a tap on the "?" shows the help, another tap hides it
    phone = chromium.new_context(base_url=platform.url, viewport={"width": 390, "height": 844}, has_touch=True,
                                 is_mobile=True, storage_state=page.context.storage_state())  # fmt: skip
    phone.on("console", lambda m: browser_log.console_errors.append(m.text) if m.type == "error" else None)
    phone.on("weberror", lambda web: browser_log.page_errors.append(f"{web.error.name}: {web.error.message}"))
    try:
        touch = phone.new_page()
        touch.goto("/grade/squares?answer=A")
        tip_text = touch.get_by_test_id("tip-text-hallucinated")
        touch.get_by_test_id("tip-hallucinated").tap()
        expect(tip_text).to_be_visible()
        expect(tip_text).to_contain_text("does not exist")
        touch.get_by_test_id("keys-toggle").tap()
        expect(touch.get_by_test_id("keys-help")).to_be_visible()
        browser_log.snap(touch, "grade-tap-help-390")
        _no_overflow(touch, 390)
        touch.get_by_test_id("tip-hallucinated").tap()
        expect(tip_text).to_be_hidden()
    finally:
        phone.close()
