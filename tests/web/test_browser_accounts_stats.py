"""Accounts, the project's pages and the statistics page in a real browser, at 390 and 1440 px: the profile with a
password change, the reset by e-mail from the outbox's link, contributors, About, privacy, and statistics that
never print "undefined" or NaN and whose per-model table fits its column at 1440 px."""

from __future__ import annotations

import re
from typing import Any

from helpers.browser import log_in

from theorembench.methods.improof import autograde
from theorembench.methods.improof.answers import record_answer
from theorembench.methods.improof.catalog import save_version, set_status
from theorembench.methods.improof.grades import INDICATORS, Grade, save_grade
from theorembench.methods.improof.problems import Problem
from theorembench.store.accounts import AccountRepo
from theorembench.web import accounts
from theorembench.web.auth import hash_password

ADMIN, AUTHOR, PASSWORD = "admin.stats@example.org", "ada.lovelace@example.org", "browser password 1"
NEW_PASSWORD, RESET_PASSWORD = "browser password 2", "browser password 3"
# long names, as providers write them: the per-model table must still fit at 1440 px
MODELS = ("anthropic/claude-opus-4-1-20250805", "google/gemini-2.5-pro-preview-06-05", "openai/gpt-5-2025-08-07")
SIZES = {"390": (390, 844), "1440": (1440, 900)}


def _problem(pid: str, author: str) -> Problem:
    return Problem(id=pid, title=f"Question {pid}", statement="Show that $1 + 1 = 2$.", solution="Count.",
                   author=author, difficulty={"background": 2, "reasoning": 2, "insight": 2, "compute": 1},
                   subquestions=[{"text": "What is $1+1$?", "answer": "2", "kind": "integer", "points": 1},
                                 {"text": "And $2+2$?", "answer": "4", "kind": "integer", "points": 2}])  # fmt: skip


def _world(store: Any) -> None:
    repo = AccountRepo(store)
    admin = accounts.create_admin(repo, ADMIN, PASSWORD)
    author = repo.create_user(AUTHOR, hash_password(PASSWORD), verified=True, roles=("contributor",))
    for pid in ("q1", "q2", "q3"):
        save_version(store, _problem(pid, author), actor=author)
        for to in ("under_review", "approved", "active"):
            set_status(store, pid, to, actor=admin)
    # the first model answers twice per question (σ(M) defined), the second once (σ needs repeats), the third is
    # never auto-graded (no score) and never graded
    for m, model in enumerate(MODELS):
        run_id = store.create_run("improof.eval", f"signature-{m}", name="improof agentic", model=model)
        for pid in ("q1", "q2", "q3"):
            for epoch in range(2 if m == 0 else 1):
                subs = ["2", "4"] if (epoch + len(pid) + m) % 2 else ["2", "5"]
                answer = record_answer(store, run_id=run_id, problem_id=pid, version=1, model=model, tier=m + 1,
                                       epoch=epoch, mode="agentic", main_answer="A proof.", sub_answers=subs,
                                       stages=[])  # fmt: skip
                if m < 2:
                    autograde.grade_answer(store, answer)
                    for g, grader in enumerate(("g1", "g2")):
                        save_grade(store, Grade(answer_id=answer, grader=grader, progress=(epoch + g + m) % 4,
                                                indicators=dict.fromkeys(INDICATORS, "true" if g else "false"),
                                                status="complete"))  # fmt: skip


def _both_sizes(page: Any, browser_log: Any, label: str) -> None:
    for name, (width, height) in SIZES.items():
        page.set_viewport_size({"width": width, "height": height})
        browser_log.snap(page, f"{label}-{name}")
        if name == "390":
            assert page.evaluate("document.documentElement.scrollWidth") <= 390, label


def test_profile_reset_contributors_about_privacy_at_both_sizes(open_page: Any, platform: Any,
                                                                browser_log: Any) -> None:  # fmt: skip
    from playwright.sync_api import expect

    _world(platform.app.state.store)
    page = open_page()
    for path, label in (("/about", "about"), ("/privacy", "privacy")):
        page.goto(path)
        expect(page.get_by_test_id(label)).to_be_visible()
        _both_sizes(page, browser_log, label)

    log_in(page, AUTHOR, PASSWORD)
    page.get_by_test_id("nav-user").click()
    expect(page.get_by_test_id("profile-email")).to_have_text(AUTHOR)
    expect(page.get_by_test_id("profile-questions")).to_have_text("3 written, 3 accepted")
    _both_sizes(page, browser_log, "profile")
    page.get_by_test_id("current-password").fill("not my password")
    page.get_by_test_id("new-password").fill(NEW_PASSWORD)
    page.get_by_test_id("new-password-again").fill(NEW_PASSWORD)
    page.get_by_test_id("password-submit").click()
    expect(page.get_by_test_id("form-error")).to_have_text("The current password is wrong.")
    page.get_by_test_id("current-password").fill(PASSWORD)
    page.get_by_test_id("new-password").fill(NEW_PASSWORD)
    page.get_by_test_id("new-password-again").fill(NEW_PASSWORD)
    page.get_by_test_id("password-submit").click()
    expect(page.get_by_test_id("password-changed")).to_be_visible()

    page.get_by_test_id("footer-contributors").click()
    expect(page.get_by_test_id("contributor-name")).to_have_text("ada.lovelace (you)")
    expect(page.get_by_test_id("contributor-accepted")).to_have_text("3")
    _both_sizes(page, browser_log, "contributors")

    visitor = open_page()
    visitor.goto("/login")
    visitor.get_by_test_id("login-reset").click()
    visitor.get_by_test_id("reset-email").fill(AUTHOR)
    _both_sizes(visitor, browser_log, "reset-request")
    visitor.get_by_test_id("reset-submit").click()
    expect(visitor.get_by_test_id("reset-sent")).to_contain_text(f"If an account uses {AUTHOR}")
    _both_sizes(visitor, browser_log, "reset-sent")
    [mail] = [m for m in AccountRepo(platform.app.state.store).mails() if m["to_addr"] == AUTHOR]
    link = re.search(r"https?://\S+/reset/\S+", mail["body"]).group(0)
    visitor.goto(link)
    visitor.get_by_test_id("new-password").fill(RESET_PASSWORD)
    visitor.get_by_test_id("new-password-again").fill(RESET_PASSWORD)
    _both_sizes(visitor, browser_log, "reset-choose")
    visitor.get_by_test_id("reset-password-submit").click()
    expect(visitor.get_by_test_id("reset-done")).to_be_visible()
    _both_sizes(visitor, browser_log, "reset-done")

    page.goto("/profile")  # the reset signed this browser out
    page.wait_for_url("**/login")
    log_in(page, AUTHOR, RESET_PASSWORD)


def test_statistics_say_what_is_missing_and_the_model_table_fits_at_1440(open_page: Any, platform: Any,
                                                                          browser_log: Any) -> None:  # fmt: skip
    from playwright.sync_api import expect

    _world(platform.app.state.store)
    page = open_page()
    log_in(page, ADMIN, PASSWORD)
    page.goto("/admin/stats")
    expect(page.get_by_test_id("stats-model")).to_have_count(3)
    text = page.locator("main").inner_text()
    for word in ("undefined", "NaN", "None"):
        assert re.search(rf"\b{word}\b", text) is None, word
    sigma = page.locator(f'[data-model="{MODELS[1]}"] [data-testid="stats-sigma"]')
    expect(sigma).to_have_text("one run per question: σ(M) needs repeats")
    ungraded = page.locator(f'[data-model="{MODELS[2]}"]')
    expect(ungraded.get_by_test_id("stats-score")).to_have_text("no auto-graded answers yet (n=0)")
    expect(ungraded.get_by_test_id("stats-mean-progress")).to_have_text("no complete grades yet (n=0)")
    for model in MODELS[:2]:  # every score shown has its interval
        row = page.locator(f'[data-testid="stats-model"][data-model="{model}"]')
        for testid in ("stats-score", "stats-all-correct", "stats-mean-progress"):
            assert re.search(r"\[\d+\.\d+–\d+\.\d+\] n=\d+", row.get_by_test_id(testid).inner_text()), (model, testid)

    page.set_viewport_size({"width": 1440, "height": 900})
    table = page.get_by_test_id("stats-models")
    widths = table.evaluate("t => [t.scrollWidth, t.parentElement.clientWidth]")
    assert widths[0] <= widths[1], widths
    mean = page.locator(f'[data-model="{MODELS[0]}"] [data-testid="stats-mean-progress"]')
    box, frame = mean.bounding_box(), table.evaluate("t => t.parentElement.getBoundingClientRect().right")
    assert box["x"] + box["width"] <= frame + 0.5  # the mean-progress column is not cut
    browser_log.snap(page, "stats-1440")
    page.set_viewport_size({"width": 390, "height": 844})
    browser_log.snap(page, "stats-390")  # the table scrolls inside its own box there; the page itself does not
    assert page.evaluate("document.documentElement.scrollWidth") <= 390

    page.goto("/admin/evaluations")
    expect(page.get_by_test_id("store-run")).to_have_count(3)
    _both_sizes(page, browser_log, "evaluations")
    page.get_by_test_id("store-run").filter(has_text=MODELS[0]).get_by_test_id("store-run-link").click()
    expect(page.get_by_test_id("eval-answer")).to_have_count(6)
    expect(page.get_by_test_id("run-models")).to_have_text(MODELS[0])
    _both_sizes(page, browser_log, "evaluation-run")
