"""The reviewing workflow in a real browser, at 390 and 1440 px: the administrator invites an external expert by
e-mail from the question's page (one step, a picker of users); the expert opens the mailed link, reads the question
and accepts (the account is made then, and they are signed in); reviews; the author replies in the discussion,
where the reviewer is "Reviewer 1"; the author saves a new version and asks for a second round, whose page shows
the diff; the review guidelines, the reviews list and the bulk assignment page. A second expert declines by the
mailed link and the administrator sees it."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa
from helpers.browser import log_in

from theorembench.methods.improof.catalog import save_version, set_status
from theorembench.methods.improof.problems import Problem
from theorembench.store.accounts import AccountRepo
from theorembench.store.reviews import ReviewRepo
from theorembench.web import accounts
from theorembench.web.auth import hash_password

pytestmark = pytest.mark.browser

ADMIN, AUTHOR, PASSWORD = "admin.reviews@example.org", "emmy.noether@example.org", "browser password 1"
EXPERT, DECLINER = "expert@uni.example", "busy.expert@uni.example"
PID = "sums-of-two-squares"
SIZES = {"390": (390, 844), "1440": (1440, 900)}
SOLUTION = "Write $n = a^2 + b^2$ and reduce modulo $4$."
NEW_LINE = "Squares are $0$ or $1$ modulo $4$, so a sum of two squares is never $3$ modulo $4$."


def _world(store: Any) -> None:
    repo = AccountRepo(store)
    accounts.create_admin(repo, ADMIN, PASSWORD)
    author = repo.create_user(AUTHOR, hash_password(PASSWORD), verified=True, roles=("contributor",))
    repo.create_user("known.reviewer@example.org", hash_password(PASSWORD), verified=True, roles=("reviewer",))
    problem = Problem(id=PID, title="Sums of two squares", author="Emmy Noether",
                      statement="Show that no integer $n \\equiv 3 \\pmod 4$ is a sum of two squares.",
                      solution=SOLUTION, difficulty={"background": 2, "reasoning": 2, "insight": 2, "compute": 1},
                      subquestions=[{"text": "Is $7$ a sum of two squares?", "answer": "no", "kind": "boolean"}])
    save_version(store, problem, actor=author)
    store._execute(sa.text("UPDATE improof_problems SET author = :a"), {"a": author})
    set_status(store, PID, "under_review", actor=author)


def _both_sizes(page: Any, browser_log: Any, label: str) -> None:
    for name, (width, height) in SIZES.items():
        page.set_viewport_size({"width": width, "height": height})
        browser_log.snap(page, f"{label}-{name}")
        if name == "390":
            assert page.evaluate("document.documentElement.scrollWidth") <= 390, label


def _mail_links(admin: Any, to: str) -> list[str]:
    admin.goto("/admin/outbox")
    row = admin.locator(f'[data-testid="outbox-row"][data-to="{to}"]').first
    return [a.get_attribute("href") for a in row.get_by_test_id("outbox-link").all()]


def _invite(admin: Any, email: str) -> None:
    admin.goto(f"/questions/{PID}")
    admin.get_by_test_id("review-invite-email").fill(email)
    admin.get_by_test_id("review-invite-submit").click()
    admin.wait_for_url(f"**/questions/{PID}#reviews")


def test_invite_by_email_accept_review_discuss_revise_and_a_second_round(open_page: Any, platform: Any,
                                                                         browser_log: Any) -> None:  # fmt: skip
    from playwright.sync_api import expect

    store = platform.app.state.store
    _world(store)
    admin = open_page()
    log_in(admin, ADMIN, PASSWORD)
    admin.goto(f"/questions/{PID}")
    options = admin.locator('[data-testid="reviewer-choices"] option')
    assert options.first.get_attribute("value") == "known.reviewer@example.org"  # the picker: reviewers first
    _invite(admin, EXPERT)
    expect(admin.locator(f'[data-testid="review-invitation-row"][data-email="{EXPERT}"]')).to_contain_text(
        "Sent, not answered")
    assert AccountRepo(store).user_by_email(EXPERT) is None
    admin.locator("#reviews").scroll_into_view_if_needed()
    _both_sizes(admin, browser_log, "question-reviews-admin-invited")
    accept, decline = _mail_links(admin, EXPERT)[:2]
    assert "/review-invitations/" in accept and decline == accept + "/decline"

    # -- the expert reads the question from the mailed link and accepts: the account is made, they are signed in
    expert = open_page()
    expert.goto(accept)
    expect(expert.get_by_test_id("review-statement").locator(".katex")).to_have_count(1)
    _both_sizes(expert, browser_log, "review-invitation")
    expert.get_by_test_id("review-invitation-accept").click()
    expert.wait_for_url(f"**/questions/{PID}/reviews/*")
    assert EXPERT in expert.get_by_test_id("nav-user").text_content()
    assert AccountRepo(store).user_by_email(EXPERT)["roles"] == {"reviewer"}
    assert expert.get_by_test_id("review-label").text_content() == "Reviewer 1"
    expert.get_by_test_id("review-recommendation-needs_revision").check()
    expert.get_by_test_id("review-anonymous").check()
    expert.get_by_test_id("review-comment").fill("Explain why squares are $0$ or $1$ modulo $4$.")
    expect(expert.get_by_test_id("review-comment-preview").locator(".katex")).to_have_count(3)
    _both_sizes(expert, browser_log, "review-form-round-1")
    expert.get_by_test_id("review-submit").click()
    expect(expert.get_by_test_id("review-submitted")).to_be_visible()

    # -- the author replies; the reviewer is only "Reviewer 1" to them
    author = open_page()
    log_in(author, AUTHOR, PASSWORD)
    author.goto(f"/questions/{PID}")
    expect(author.get_by_test_id("question-status")).to_have_text("Draft")
    assert author.get_by_test_id("review-label").all_text_contents() == ["Reviewer 1"]
    assert EXPERT not in author.content() and "expert@" not in author.content()
    author.get_by_test_id("review-response").fill("Good point: I will add the residues of $x^2$.")
    author.get_by_test_id("review-response-submit").click()
    expect(author.get_by_test_id("thread-who")).to_have_text(["You (author)"])
    author.get_by_test_id("review-thread").scroll_into_view_if_needed()
    _both_sizes(author, browser_log, "question-reviews-author-thread")

    expert.reload()
    expect(expert.get_by_test_id("thread-who")).to_have_text(["Author"])
    expert.get_by_test_id("thread-reply").fill("Thanks, that settles it.")
    expert.get_by_test_id("thread-reply-submit").click()
    expect(expert.get_by_test_id("thread-who")).to_have_text(["Author", "You"])

    # -- a new version, sent for review again, and a second round with the same reviewer
    author.goto(f"/questions/{PID}/edit")
    author.get_by_test_id("question-solution").fill(SOLUTION + "\n\n" + NEW_LINE)
    author.get_by_test_id("question-note").fill("Explained the residues")
    author.get_by_test_id("question-save").click()
    author.wait_for_url(f"**/questions/{PID}")
    assert author.get_by_test_id("question-version").text_content() == "2"
    author.get_by_test_id("submit-for-review").click()
    expect(author.get_by_test_id("question-status")).to_have_text("Under review")
    expect(author.get_by_test_id("thread-who")).to_have_text(["You (author)", "Reviewer 1"])
    author.get_by_test_id("review-round-start").click()
    author.wait_for_url(f"**/questions/{PID}#review-*")
    expect(author.get_by_test_id("review-round-start")).to_have_count(0)

    expert.goto("/reviews")
    rounds = expert.get_by_test_id("reviews-round")
    expect(rounds).to_have_text(["2", "1"])
    _both_sizes(expert, browser_log, "reviews-list-reviewer")
    expert.get_by_test_id("reviews-link").first.click()
    expect(expert.get_by_test_id("review-round")).to_have_text("2")
    diff = expert.get_by_test_id("version-diff")
    expect(diff.locator('[data-op="add"] [data-testid="diff-text"]')).to_contain_text([NEW_LINE])
    assert diff.locator('[data-op="del"]').count() == 0  # only lines were added
    assert expert.get_by_test_id("review-anonymous").is_checked()  # the round keeps the reviewer's choice
    expert.get_by_test_id("review-changes").scroll_into_view_if_needed()
    _both_sizes(expert, browser_log, "review-round-2-diff")
    expert.get_by_test_id("review-recommendation-recommend").check()
    expert.get_by_test_id("review-comment").fill("Complete now.")
    expert.get_by_test_id("review-submit").click()
    expect(expert.get_by_test_id("review-recommendation")).to_have_text("Recommend")
    expert.goto("/review-guidelines")
    expect(expert.get_by_test_id("review-guidelines")).to_be_visible()
    _both_sizes(expert, browser_log, "review-guidelines")

    # -- the administrator is told; sees both rounds; another expert declines by the mailed link
    admin.goto("/admin/outbox")
    done = admin.locator(f'[data-testid="outbox-row"][data-to="{ADMIN}"]').filter(has_text="a review is complete")
    expect(done).to_have_count(2)
    admin.goto(f"/questions/{PID}")
    expect(admin.get_by_test_id("review-round")).to_have_text(["1", "2"])
    expect(admin.get_by_test_id("review-recommendation")).to_have_text(["Needs revision", "Recommend"])
    _invite(admin, DECLINER)
    _, no = _mail_links(admin, DECLINER)[:2]
    busy = open_page()
    busy.goto(no)
    _both_sizes(busy, browser_log, "review-invitation-decline")
    busy.get_by_test_id("review-invitation-decline-submit").click()
    expect(busy.get_by_test_id("review-invitation-declined")).to_be_visible()
    admin.goto("/reviews")
    expect(admin.locator(f'[data-testid="invitations-row"][data-email="{DECLINER}"]')).to_contain_text("Declined")
    _both_sizes(admin, browser_log, "reviews-list-admin")
    assert AccountRepo(store).user_by_email(DECLINER) is None
    assert [r["state"] for r in ReviewRepo(store).for_problem(PID)] == ["submitted", "submitted"]


def test_bulk_assignment_page_with_the_picker(open_page: Any, platform: Any, browser_log: Any) -> None:
    from playwright.sync_api import expect

    store = platform.app.state.store
    _world(store)
    for n in (2, 3):
        problem = Problem(id=f"{PID}-{n}", title=f"Sums of two squares, part {n}", statement="Prove it.",
                          solution="Done.", difficulty={"background": 1, "reasoning": 1, "insight": 1, "compute": 1})
        save_version(store, problem, actor=None)
        set_status(store, problem.id, "under_review", actor=None)
    admin = open_page()
    log_in(admin, ADMIN, PASSWORD)
    admin.goto("/admin/users")
    _both_sizes(admin, browser_log, "admin-users")
    admin.locator('[data-testid="users-row"][data-email="known.reviewer@example.org"]').get_by_test_id(
        "users-assign").click()
    admin.wait_for_url("**/admin/assign?email=*")
    assert admin.get_by_test_id("assign-person").input_value() == "known.reviewer@example.org"
    for pid in (PID, f"{PID}-2", f"{PID}-3"):
        admin.get_by_test_id(f"assign-review-{pid}").check()
    _both_sizes(admin, browser_log, "admin-assign-form")
    admin.get_by_test_id("assign-bulk-submit").click()
    rows = admin.get_by_test_id("assign-outcome-row")
    expect(rows).to_have_count(3)
    assert [r.get_attribute("data-ok") for r in rows.all()] == ["yes", "yes", "yes"]
    _both_sizes(admin, browser_log, "admin-assign-done")
    assert len(ReviewRepo(store).listing()) == 3
