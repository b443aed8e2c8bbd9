"""The whole platform in a real browser: write, review, revise, activate, evaluate, grade blind, read the statistics.

One test walks the life of a question through the pages, as each user sees them in their own browser context: an
author writes it (live KaTeX preview), an invited reviewer sends it back, the author revises it, a second review
recommends it, the admin activates it and evaluates two fake models (jobs in the platform's worker, the models
answered by the loopback fake LLM server), two graders grade the answers blind in different orders (a change after
the reveal is kept as a correction), and the admin reads the statistics. Screenshots of every page land in the harness's folder (labels such as 'grading-page' and
'stats-page').
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from helpers.browser import add_user, log_in

from theorembench.methods.improof.grades import INDICATORS

pytestmark = pytest.mark.browser

ADMIN = ("admin@example.org", "admin-password-1")
AUTHOR = ("author@example.org", "author-password-1")
REVIEWER = ("reviewer@example.org", "reviewer-password-1")
GRADER_1 = ("grader.one@example.org", "grader-password-1")
GRADER_2 = ("grader.two@example.org", "grader-password-2")
ALPHA, BETA = "openai-api/fake/alpha-prover", "openai-api/fake/beta-prover"
SECRETS = ("alpha-prover", "beta-prover", "openai-api")  # nothing of these may reach a grader before the reveal
LONG = 180_000  # ms: jobs start a child process each and run the harness
ENDED = re.compile(r"^(done|failed|timed_out)$")

TITLE = "Ratios of positive integers"
PID = "ratios-of-positive-integers"
STATEMENT = ("MAIN-MARK. Let $a, b$ be positive integers with $\\frac{a}{b} = 3$. Prove that $b$ divides $a$, "
             "and recall\n\n$$\\sum_{k=1}^{n} k = \\frac{n(n+1)}{2}.$$\n")  # fmt: skip
SOLUTION = "Multiply by $b$: $a = 3b$, so $b \\mid a$."
ALPHA_TEXT = "Write $a = 3b$; hence *b divides a* (alpha reasoning)."
BETA_TEXT = "The quotient $\\frac{a}{b}$ is an integer, so *b divides a* (beta reasoning)."


def submit(answer: str) -> dict:
    return {"tool_calls": [{"name": "submit", "arguments": {"answer": answer}}]}


SCRIPT = {"rules": [
    {"match": "SUBQ-TWO", "model": "alpha-prover", "reply": submit("1/3")},
    {"match": "SUBQ-TWO", "model": "beta-prover", "reply": submit("1/2")},
    {"match": "SUBQ-ONE", "reply": submit("6")},
    {"match": "MAIN-MARK", "model": "alpha-prover", "reply": submit(ALPHA_TEXT)},
    {"match": "MAIN-MARK", "model": "beta-prover", "reply": submit(BETA_TEXT)},
]}  # fmt: skip


class Orders:
    """A stand-in grading RNG: the n-th assignment applies the n-th permutation (positions), so orders differ, and
    names the answers A, B, … in that order (the platform draws the names at random)."""

    def __init__(self, *perms: list[int]):
        self.perms = list(perms)

    def shuffle(self, x: list[Any]) -> None:
        perm = self.perms.pop(0)
        x[:] = [x[i] for i in perm]

    def sample(self, population: list[str], k: int) -> list[str]:
        return list(population[:k])


@pytest.fixture
def platform_app(platform_db: str, fake_env: Any, tmp_path: Path) -> Any:
    """The platform with one job worker and two fake models; the fake server's address is in the environment
    before the app starts, so the workers' child processes inherit it."""
    from theorembench.web.app import create_app

    fake_env.set_script(SCRIPT)
    app = create_app(db=platform_db, secret_key="browser-flow-secret", models=[ALPHA, BETA], workers=1,
                     work_dir=tmp_path / "work")  # fmt: skip
    app.state.grading_rng = Orders([0, 1], [1, 0])  # grader one: alpha, beta; grader two: beta, alpha
    return app


def add_grader(platform: Any, email: str, password: str) -> None:
    from theorembench.store import open_store
    from theorembench.store.accounts import AccountRepo
    from theorembench.web.auth import hash_password

    store = open_store(platform.db)
    try:
        AccountRepo(store).create_user(email, hash_password(password), verified=True, roles=("grader",))
    finally:
        store.close()


def fill_grade(page: Any, progress: int, status: str, comment: str) -> None:
    page.get_by_test_id(f"grade-progress-{progress}").check()
    for n, name in enumerate(INDICATORS):
        page.get_by_test_id(f"indicator-{name}-{'true' if n % 2 else 'false'}").check()
    page.get_by_test_id("grade-comment").fill(comment)
    page.get_by_test_id("grade-status").select_option(status)  # last: a complete grade needs all the above


def wait_for_job(page: Any, status: str = "done") -> None:
    """Reload the job page until it shows the job ended (each reload waits up to 5 s for it), then check how."""
    from playwright.sync_api import expect

    shown = page.get_by_test_id("job-status")
    for _ in range(LONG // 5_000):
        try:
            expect(shown).to_have_text(ENDED, timeout=5_000)
            break
        except AssertionError:
            page.reload()
    assert shown.text_content() == status, page.locator("main").inner_text()


def test_question_life_from_editor_to_statistics(open_page: Any, platform: Any, browser_log: Any) -> None:
    from playwright.sync_api import expect

    add_user(platform, *ADMIN, admin=True)
    add_user(platform, *AUTHOR)
    add_grader(platform, *GRADER_1)
    add_grader(platform, *GRADER_2)

    # -- 1. the author writes the question, sees the math typeset live, saves it and submits it -------------------
    author = open_page()
    log_in(author, *AUTHOR)
    author.goto("/questions/new")
    author.get_by_test_id("question-title").fill(TITLE)
    author.get_by_test_id("question-statement").fill(STATEMENT)
    preview = author.get_by_test_id("statement-preview")
    expect(preview.locator(".katex-display")).to_have_count(1)  # the displayed sum
    expect(preview.locator(".katex")).to_have_count(5)  # $a, b$, $\frac{a}{b} = 3$, $b$, $a$ and the display
    expect(preview.locator(".katex .mfrac")).to_have_count(2)
    assert preview.locator(".katex-error").count() == 0
    assert "\\frac{a}{b} = 3" in preview.locator(".katex annotation").nth(1).text_content()
    author.get_by_test_id("question-solution").fill(SOLUTION)
    expect(author.get_by_test_id("solution-preview").locator(".katex")).to_have_count(3)
    author.get_by_test_id("question-tags").fill("number theory, divisibility")
    for name, value in (("background", "1"), ("reasoning", "2"), ("insight", "2"), ("compute", "1")):
        author.get_by_test_id(f"difficulty-{name}").select_option(value)
    rows = author.get_by_test_id("sub-row")
    expect(rows).to_have_count(1)
    rows.nth(0).get_by_test_id("sub-text").fill("SUBQ-ONE: if $b = 2$, what is $a$?")
    rows.nth(0).get_by_test_id("sub-answer").fill("6")
    rows.nth(0).get_by_test_id("sub-kind").select_option("integer")
    author.get_by_test_id("add-subquestion").click()
    expect(rows).to_have_count(2)
    rows.nth(1).get_by_test_id("sub-text").fill("SUBQ-TWO: what is $\\frac{b}{a}$?")
    rows.nth(1).get_by_test_id("sub-answer").fill("1/3")
    rows.nth(1).get_by_test_id("sub-kind").select_option("rational")
    rows.nth(1).get_by_test_id("sub-rationale").fill("Invert $\\frac{a}{b} = 3$.")
    browser_log.snap(author, "editor-filled-with-preview")
    author.get_by_test_id("question-save").click()
    author.wait_for_url(f"**/questions/{PID}")
    assert author.get_by_test_id("question-status").text_content() == "Draft"
    assert author.get_by_test_id("question-version").text_content() == "1"
    assert author.get_by_test_id("question-statement").locator(".katex").count() == 5
    assert author.get_by_test_id("subquestion-answer").all_text_contents() == ["6", "1/3"]
    assert author.get_by_test_id("subquestion-kind").all_text_contents() == ["integer", "rational"]
    assert author.get_by_test_id("question-tag").all_text_contents() == ["number theory", "divisibility"]
    assert author.get_by_test_id("rating-reasoning").text_content() == "2"
    browser_log.snap(author, "question-draft-v1")
    author.get_by_test_id("submit-for-review").click()
    expect(author.get_by_test_id("question-status")).to_have_text("Under review")

    # -- 2. the admin invites a reviewer to the platform, who sets a password; then to review the question --------
    admin = open_page()
    log_in(admin, *ADMIN)
    admin.goto("/admin/outbox")
    admin.get_by_test_id("invite-email").fill(REVIEWER[0])
    admin.get_by_test_id("invite-role-select").select_option("reviewer")
    admin.get_by_test_id("invite-submit").click()
    expect(admin.get_by_test_id("invite-sent")).to_contain_text(REVIEWER[0])
    row = admin.locator(f'[data-testid="outbox-row"][data-to="{REVIEWER[0]}"]')
    link = row.get_by_test_id("outbox-link").first.get_attribute("href")
    assert link.startswith(platform.url + "/invite/")
    browser_log.snap(admin, "outbox-with-invitation")

    reviewer = open_page()
    reviewer.goto(link)
    assert reviewer.get_by_test_id("invite-role").text_content() == "reviewer"
    reviewer.get_by_test_id("invite-password").fill(REVIEWER[1])
    reviewer.get_by_test_id("invite-accept").click()
    expect(reviewer.get_by_test_id("invite-done")).to_contain_text(REVIEWER[0])
    log_in(reviewer, *REVIEWER)
    assert "reviewer" in reviewer.get_by_test_id("nav-user").text_content()

    def invite_reviewer() -> None:
        admin.goto(f"/questions/{PID}")
        admin.get_by_test_id("review-invite-email").fill(REVIEWER[0])
        admin.get_by_test_id("review-invite-submit").click()
        admin.wait_for_url(f"**/questions/{PID}#reviews")

    def open_invitation() -> None:
        reviewer.goto("/reviews")
        browser_log.snap(reviewer, "reviewer-invitations")
        invited = reviewer.get_by_test_id("reviews-row").filter(has_text="Invited")
        expect(invited).to_have_count(1)
        invited.get_by_test_id("reviews-link").click()
        reviewer.get_by_test_id("review-accept").click()
        expect(reviewer.get_by_test_id("review-state")).to_have_text("Accepted")

    invite_reviewer()
    assert admin.get_by_test_id("review-reviewer").all_text_contents() == [REVIEWER[0]]
    assert admin.get_by_test_id("review-state").all_text_contents() == ["Invited"]

    # -- 3. the reviewer finds it not suitable; the author responds, revises and resubmits; a second review ------
    open_invitation()
    assert reviewer.get_by_test_id("review-statement").locator(".katex").count() == 5
    reviewer.get_by_test_id("review-recommendation-not_suitable").check()
    reviewer.get_by_test_id("review-comment").fill("The claim is immediate from $a = 3b$; explain the solution more.")
    expect(reviewer.get_by_test_id("review-comment-preview").locator(".katex")).to_have_count(1)
    browser_log.snap(reviewer, "review-form-not-suitable")
    reviewer.get_by_test_id("review-submit").click()
    expect(reviewer.get_by_test_id("review-submitted")).to_be_visible()
    assert reviewer.get_by_test_id("review-question-status").text_content() == "draft"

    author.goto("/questions")
    qrow = author.locator(f'[data-testid="question-row"][data-question-id="{PID}"]')
    assert qrow.get_by_test_id("question-row-status").text_content() == "Draft"
    qrow.get_by_test_id("question-link").click()
    assert author.get_by_test_id("question-status").text_content() == "Draft"
    assert author.get_by_test_id("review-recommendation").text_content() == "Not suitable"
    assert author.get_by_test_id("review-reviewer").text_content() == REVIEWER[0]  # not anonymous
    assert "explain the solution more" in author.get_by_test_id("review-comment-text").text_content()
    author.get_by_test_id("review-response").fill("Thank you: the solution now explains each step.")
    author.get_by_test_id("review-response-submit").click()
    expect(author.get_by_test_id("review-author-response")).to_contain_text("explains each step")
    browser_log.snap(author, "question-back-in-draft-with-review")

    author.get_by_test_id("edit-question").click()
    author.wait_for_url(f"**/questions/{PID}/edit")
    author.get_by_test_id("question-solution").fill(SOLUTION + " Indeed $\\frac{a}{b} = 3$ means $a = 3 \\cdot b$.")
    author.get_by_test_id("question-note").fill("Explained the solution step by step")
    author.get_by_test_id("question-save").click()
    author.wait_for_url(f"**/questions/{PID}")
    assert author.get_by_test_id("question-version").text_content() == "2"
    notes = author.get_by_test_id("version-note").all_text_contents()
    assert notes == ["Explained the solution step by step", "created"]
    assert "3 \\cdot b" in author.get_by_test_id("question-solution").locator("annotation").last.text_content()
    author.get_by_test_id("submit-for-review").click()
    expect(author.get_by_test_id("question-status")).to_have_text("Under review")
    browser_log.snap(author, "question-v2-resubmitted")

    invite_reviewer()
    open_invitation()
    assert "3 \\cdot b" in reviewer.get_by_test_id("review-solution").text_content()  # reviews version 2
    reviewer.get_by_test_id("review-recommendation-recommend").check()
    reviewer.get_by_test_id("review-comment").fill("Clear now.")
    reviewer.get_by_test_id("review-submit").click()
    expect(reviewer.get_by_test_id("review-recommendation")).to_have_text("Recommend")
    assert reviewer.get_by_test_id("review-question-status").text_content() == "under review"

    admin.goto(f"/questions/{PID}")
    assert admin.get_by_test_id("review-recommendation").all_text_contents() == ["Not suitable", "Recommend"]
    for to, label in (("approved", "Approved"), ("active", "Active")):
        admin.get_by_test_id("status-to").select_option(to)
        admin.get_by_test_id("status-note").fill(f"{label} after the second review")
        admin.get_by_test_id("status-submit").click()
        expect(admin.get_by_test_id("question-status")).to_have_text(label)
    assert admin.get_by_test_id("status-event-to").all_text_contents() == [
        "Draft", "Under review", "Draft", "Under review", "Approved", "Active"]
    browser_log.snap(admin, "question-active")

    # -- 4. the admin evaluates both models; the worker runs the jobs; the answers come with auto-grades -----------
    jobs = {}
    for model in (ALPHA, BETA):
        admin.goto("/admin/evaluations")
        admin.get_by_test_id("eval-model").select_option(model)
        admin.get_by_test_id("eval-mode").select_option("agentic")
        admin.get_by_test_id("eval-scope-chosen").check()
        admin.get_by_test_id(f"eval-problem-{PID}").check()
        admin.get_by_test_id("eval-launch").click()
        admin.wait_for_url(re.compile(r".*/admin/evaluations/j-[^/]+$"))
        jobs[model] = admin.url
    expected = {ALPHA: (["6", "1/3"], ["correct", "correct"], "alpha reasoning"),
                BETA: (["6", "1/2"], ["correct", "wrong"], "beta reasoning")}  # fmt: skip
    for model, url in jobs.items():
        admin.goto(url)
        wait_for_job(admin)
        answer = admin.get_by_test_id("eval-answer")
        expect(answer).to_have_count(1)
        extracted, verdicts, text = expected[model]
        assert answer.get_by_test_id("eval-extracted").all_text_contents() == extracted
        assert answer.get_by_test_id("eval-expected").all_text_contents() == ["6", "1/3"]
        assert answer.get_by_test_id("eval-verdict").all_text_contents() == verdicts
        assert text in answer.get_by_test_id("eval-main-answer").text_content()
        assert answer.get_by_test_id("eval-main-answer").locator("em").first.text_content() == "b divides a"
        assert admin.get_by_test_id("job-progress-count").text_content() == "1 of 1"
        browser_log.snap(admin, f"evaluation-done-{model.rsplit('/', 1)[-1]}")
    admin.goto("/admin/evaluations")
    assert admin.get_by_test_id("eval-status").all_text_contents() == ["done", "done"]
    browser_log.snap(admin, "evaluations-list")

    # -- 5. two graders, blind, in different orders; autosave; reveal for one grader only -----------------------
    admin.goto("/admin/grading")
    assert admin.get_by_test_id(f"admin-grading-answers-{PID}").text_content() == "2"
    for email, _ in (GRADER_1, GRADER_2):
        admin.get_by_test_id(f"assign-email-{PID}").fill(email)
        admin.get_by_test_id(f"assign-submit-{PID}").click()
        expect(admin.get_by_test_id("grading-assigned")).to_contain_text(email)
    expect(admin.get_by_test_id("admin-grader-progress")).to_have_text([f"{GRADER_1[0]}: 0 / 2",
                                                                        f"{GRADER_2[0]}: 0 / 2"])  # fmt: skip
    browser_log.snap(admin, "admin-grading-assigned")

    def blind(page: Any) -> None:
        html = page.content()
        assert [s for s in SECRETS if s in html] == []
        assert page.get_by_test_id("reveal").count() == 0

    one, two = open_page(), open_page()
    for page, user in ((one, GRADER_1), (two, GRADER_2)):
        log_in(page, *user)
        page.get_by_test_id("nav-grade").click()
        assert page.get_by_test_id(f"grading-final-{PID}").text_content() == "0 of 2"
        page.get_by_test_id(f"grading-link-{PID}").click()
        page.wait_for_url(f"**/grade/{PID}")
        expect(page.get_by_test_id("current-alias")).to_have_text("Answer A")
        blind(page)
    assert "alpha reasoning" in one.get_by_test_id("answer-text").text_content()  # grader one's A: alpha
    assert "beta reasoning" in two.get_by_test_id("answer-text").text_content()  # grader two's A: beta
    assert one.get_by_test_id("grading-statement").locator(".katex").count() == 5
    browser_log.snap(one, "grading-page")
    browser_log.snap(two, "grading-page-second-grader")

    fill_grade(one, 2, "complete", "Correct and short.")
    one.get_by_test_id("grading-notes").fill("Both answers use a = 3b.")
    state = one.get_by_test_id("autosave-state")
    expect(state).to_have_text("Unsaved changes")
    expect(state).to_have_text("Saved", timeout=15_000)
    expect(one.get_by_test_id("answer-tab-status-A")).to_have_text("complete")
    one.reload()
    expect(one.get_by_test_id("grade-progress-2")).to_be_checked()
    for n, name in enumerate(INDICATORS):
        expect(one.get_by_test_id(f"indicator-{name}-{'true' if n % 2 else 'false'}")).to_be_checked()
    expect(one.get_by_test_id("grade-comment")).to_have_value("Correct and short.")
    expect(one.get_by_test_id("grade-status")).to_have_value("complete")
    expect(one.get_by_test_id("grading-notes")).to_have_value("Both answers use a = 3b.")
    blind(one)  # one answer final of two: still blind
    browser_log.snap(one, "grading-page-after-reload")

    one.get_by_test_id("answer-tab-B").click()
    one.wait_for_url(f"**/grade/{PID}?answer=B")
    assert "beta reasoning" in one.get_by_test_id("answer-text").text_content()
    blind(one)
    one.get_by_test_id("grade-progress-1").check()
    one.get_by_test_id("grade-comment").fill("The second step cannot be followed.")  # giving up needs a reason
    one.get_by_test_id("grade-status").select_option("given_up")
    expect(one.get_by_test_id("autosave-state")).to_have_text("Saved", timeout=15_000)
    one.reload()
    expect(one.get_by_test_id("reveal")).to_be_visible()
    assert one.get_by_test_id("reveal-model-A").text_content() == ALPHA
    assert one.get_by_test_id("reveal-model-B").text_content() == BETA
    expect(one.get_by_test_id("grade-status")).to_have_value("given_up")
    expect(one.get_by_test_id("grade-frozen")).to_be_visible()
    browser_log.snap(one, "grading-page-revealed")
    # with the names known, a change is kept as a correction beside the grade; the statistics keep the grade
    fill_grade(one, 3, "complete", "On reflection, a full solution.")
    expect(one.get_by_test_id("autosave-state")).to_have_text("Saved as a correction", timeout=15_000)
    one.reload()
    expect(one.get_by_test_id("grade-status")).to_have_value("complete")
    assert one.get_by_test_id("grade-blind-value").text_content() == "progress 1/3, given up"
    browser_log.snap(one, "grading-page-correction")

    two.goto(f"/grade/{PID}?answer=B")  # the answer grader one saw as A
    assert "alpha reasoning" in two.get_by_test_id("answer-text").text_content()
    fill_grade(two, 2, "complete", "Fine.")
    expect(two.get_by_test_id("autosave-state")).to_have_text("Saved", timeout=15_000)
    two.reload()
    expect(two.get_by_test_id("grade-status")).to_have_value("complete")
    expect(two.get_by_test_id("answer-tab-status-A")).to_have_text("not started")
    blind(two)  # grader one's reveal is theirs alone; grader two's answer A is not final
    two.goto(f"/grade/{PID}?answer=A")
    blind(two)
    browser_log.snap(two, "grading-page-second-grader-still-blind")

    admin.goto("/admin/grading")
    expect(admin.get_by_test_id("admin-grader-progress")).to_have_text([
        f"{GRADER_1[0]}: 2 / 2 (revealed) (1 corrected after the reveal)", f"{GRADER_2[0]}: 1 / 2"])

    # -- 6. the statistics: both models, the graded results with n and intervals ---------------------------------
    admin.get_by_test_id("nav-stats").click()
    admin.wait_for_url("**/admin/stats")
    browser_log.snap(admin, "stats-page")
    admin.locator(".stats-scroll", has=admin.get_by_test_id("stats-models")).evaluate(
        "(el) => { el.scrollLeft = el.scrollWidth; }")  # the per-model table's right part
    browser_log.snap(admin, "stats-page-per-model-table-right")
    models = admin.get_by_test_id("stats-model")
    assert models.get_by_test_id("stats-model-name").all_text_contents() == [ALPHA, BETA]
    alpha = admin.locator(f'[data-testid="stats-model"][data-model="{ALPHA}"]')
    beta = admin.locator(f'[data-testid="stats-model"][data-model="{BETA}"]')
    assert " ".join(admin.get_by_test_id("stats-counts").text_content().split()) == (
        "2 answers on 1 question by 2 models; 2 complete grades (1 incomplete or given up, left out).")
    assert admin.get_by_test_id("stats-corrections").text_content().startswith(
        "Grades changed after their grader saw the model names: 1.")
    # alpha: both subquestions right, two complete grades of progress 2 (one per grader)
    assert alpha.get_by_test_id("stats-answers").text_content() == "1"
    assert alpha.get_by_test_id("stats-score").text_content() == "100.0% [20.6–100.0] n=1"  # Wilson at the mean
    assert alpha.get_by_test_id("stats-all-correct").text_content() == "100.0% [20.6–100.0] n=1"  # Wilson, 1 of 1
    assert alpha.get_by_test_id("stats-mean-progress").text_content() == "2.00 [0.28–2.92] n=1 questions"  # Wilson at 2/3, ×3
    assert alpha.get_by_test_id("stats-grades").text_content() == "2"
    assert alpha.get_by_test_id("stats-progress-counts").text_content() == "0 / 0 / 2 / 0"
    # beta: one subquestion of two right; grader one gave up on it, so no complete grade
    assert beta.get_by_test_id("stats-score").text_content() == "50.0% [5.5–94.5] n=1"
    assert beta.get_by_test_id("stats-all-correct").text_content() == "0.0% [0.0–79.3] n=1"
    assert beta.get_by_test_id("stats-mean-progress").text_content() == "no complete grades yet (n=0)"
    assert beta.get_by_test_id("stats-grades").text_content() == "0 (+1 left out)"
    # the indicators of alpha's two grades: the first false both times, the second true both times (Wilson, n=2)
    ind = admin.locator(f'[data-testid="stats-indicators"][data-model="{ALPHA}"]')
    assert ind.get_by_test_id(f"stats-indicator-{INDICATORS[0]}").text_content() == "0.0% [0.0–65.8] n=2"
    assert ind.get_by_test_id(f"stats-indicator-{INDICATORS[1]}").text_content() == "100.0% [34.2–100.0] n=2"
    # both graders graded alpha's answer: one pair, agreeing on everything
    assert admin.get_by_test_id("stats-agreement-summary").text_content() == (
        "1 answer graded by two or more of 2 graders: 1 pair.")
    assert admin.get_by_test_id("stats-agreement-rate").first.text_content() == "100.0% [20.6–100.0] n=1"
    charts = admin.get_by_test_id("stats-chart")
    assert charts.count() >= 1
    assert admin.evaluate("""() => [...document.querySelectorAll('[data-testid="stats-chart"]')]
                                      .every((img) => img.complete && img.naturalWidth > 0)""")
