"""Review rounds on the platform: an external expert invited by e-mail to review one question (the account made on
acceptance, a decline link that tells the administrator), the discussion between the author and "Reviewer 1",
further rounds with the same reviewer showing what changed between the versions, the review guidelines, the
reviewer and grader pickers and the bulk assignment of several questions to one person."""

from __future__ import annotations

import re
import time

import pytest
from fastapi.testclient import TestClient
from helpers.web import PASSWORD, parse_tags, post_form, signed_in

from theorembench.methods.improof.answers import record_answer
from theorembench.methods.improof.catalog import set_status
from theorembench.methods.improof.problems import Problem
from theorembench.store.grading import GradingRepo
from theorembench.store.improof import ImproofRepo
from theorembench.store.review_rounds import InvitationRepo, MessageRepo
from theorembench.web import review_invitations, reviews
from theorembench.web.auth import hash_password
from theorembench.web.sessions import COOKIE
from theorembench.web.version_diff import diff_rows

ADMIN, AUTHOR, REVIEWER, EXPERT = "admin@example.org", "author@example.org", "rev@example.org", "expert@uni.example"
GRADER = "grader@example.org"
PID = "stable-graphs"
V1 = {"title": "Stable graphs", "statement": "Count the stable graphs of genus $g=2$.", "solution": "There are **seven**.",
      "difficulty": {"background": 3, "reasoning": 4, "insight": 2, "compute": 1}, "author": AUTHOR,
      "subquestions": [{"text": "How many?", "answer": "7", "kind": "integer"}]}  # fmt: skip


def _question(app, pid: str, author_id: str, status: str = "under_review", **fields) -> None:
    problem = Problem(id=pid, **(V1 | fields))
    ImproofRepo(app.state.store).create_problem(pid, status="draft", author=author_id, payload=problem.content(),
                                                actor=author_id)  # fmt: skip
    for to in {"draft": [], "under_review": ["under_review"],
               "active": ["under_review", "approved", "active"]}[status]:  # fmt: skip
        set_status(app.state.store, pid, to, author_id)


def _setup(app) -> dict[str, str]:
    repo = app.state.repo
    ids = {"admin": repo.create_user(ADMIN, hash_password(PASSWORD), verified=True, roles=("admin",))}
    for key, email, roles in (("author", AUTHOR, ("contributor",)), ("reviewer", REVIEWER, ("reviewer",)),
                              ("grader", GRADER, ("grader",))):  # fmt: skip
        ids[key] = repo.create_user(email, hash_password(PASSWORD), verified=True, roles=roles)
    _question(app, PID, ids["author"])
    return ids


def _mails(app, to: str) -> list[dict]:
    return [m for m in app.state.repo.mails() if m["to_addr"] == to]


def _links(body: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"http://testserver(/\S+)", body)]


def _new_version(app, ids, **changes) -> int:
    store = ImproofRepo(app.state.store)
    payload = store.version(PID)["payload"] | changes
    return store.add_version(PID, payload, author=ids["author"], actor=ids["author"], note="revised")


# -- invitations by e-mail --------------------------------------------------------------------------------------


def test_an_external_expert_accepts_by_email_and_the_account_is_made_then(any_app):
    app = any_app
    _setup(app)
    admin = signed_in(app, ADMIN)
    sent = post_form(admin, f"/questions/{PID}/reviews", {"email": "Expert@Uni.Example"})
    assert sent.status_code == 303 and sent.headers["location"] == f"/questions/{PID}#reviews"
    assert app.state.repo.user_by_email(EXPERT) is None  # nothing is made before the answer
    assert reviews.ReviewRepo(app.state.store).for_problem(PID) == []
    [mail] = _mails(app, EXPERT)
    assert "Stable graphs" in mail["body"] and ADMIN in mail["body"] and "/review-guidelines" in mail["body"]
    accept, decline = [link for link in _links(mail["body"]) if link.startswith("/review-invitations/")]
    assert decline == accept + "/decline"
    assert post_form(admin, f"/questions/{PID}/reviews", {"email": EXPERT}).status_code == 400  # one at a time
    listed = admin.get(f"/questions/{PID}").text
    assert 'data-email="expert@uni.example"' in listed and 'data-state="pending"' in listed

    expert = TestClient(app)
    shown = expert.get(accept)
    assert shown.status_code == 200 and "Count the stable graphs" in shown.text  # the question, before accepting
    assert 'data-testid="review-invitation-accept"' in shown.text and 'href="/review-guidelines"' in shown.text
    weak = post_form(expert, accept + "/accept", {"password": "short"})
    assert weak.status_code == 400 and 'data-testid="form-error"' in weak.text
    assert app.state.repo.user_by_email(EXPERT) is None
    done = post_form(expert, accept + "/accept", {"password": ""})  # a password is optional
    [review] = reviews.ReviewRepo(app.state.store).for_problem(PID)
    assert done.status_code == 303 and done.headers["location"] == f"/questions/{PID}/reviews/{review['id']}"
    user = app.state.repo.user_by_email(EXPERT)
    assert user["verified"] and user["roles"] == {"reviewer"} and user["password_hash"] is None
    assert (review["reviewer_id"], review["state"], review["version"]) == (user["id"], "accepted", 1)
    [invitation] = InvitationRepo(app.state.store).for_problem(PID)
    assert (invitation["state"], invitation["review_id"]) == ("accepted", review["id"])
    assert COOKIE in done.headers["set-cookie"]  # signed in: the review form opens at once
    form = expert.get(done.headers["location"])
    assert 'data-testid="review-form"' in form.text and 'data-testid="review-label">Reviewer 1<' in form.text
    assert expert.get(accept).status_code == 404 and post_form(expert, accept + "/accept").status_code == 404
    assert post_form(expert, decline).status_code == 404  # answered: the decline link is dead too

    submitted = post_form(expert, f"/questions/{PID}/reviews/{review['id']}",
                          {"recommendation": "recommend", "comment": "Correct and well posed."})  # fmt: skip
    assert submitted.status_code == 303
    [complete] = [m for m in _mails(app, ADMIN) if m["subject"] == "IMProofBench: a review is complete"]
    assert EXPERT in complete["body"] and "recommend" in complete["body"]
    assert post_form(admin, f"/questions/{PID}/status", {"to": "approved"}).status_code == 303
    assert 'data-state="accepted"' in admin.get("/reviews").text


def test_declining_by_the_mailed_link_marks_it_declined_and_tells_the_admin(app):
    _setup(app)
    admin = signed_in(app, ADMIN)
    assert post_form(admin, f"/questions/{PID}/reviews", {"email": EXPERT}).status_code == 303
    decline = next(link for link in _links(_mails(app, EXPERT)[0]["body"]) if link.endswith("/decline"))
    visitor = TestClient(app)
    confirm = visitor.get(decline)  # a mail scanner opening the link declines nothing
    assert confirm.status_code == 200 and 'data-testid="review-invitation-decline-submit"' in confirm.text
    assert InvitationRepo(app.state.store).for_problem(PID)[0]["state"] == "pending"
    done = post_form(visitor, decline)
    assert done.status_code == 200 and 'data-testid="review-invitation-declined"' in done.text
    [invitation] = InvitationRepo(app.state.store).for_problem(PID)
    assert invitation["state"] == "declined" and invitation["review_id"] is None
    assert app.state.repo.user_by_email(EXPERT) is None
    [told] = [m for m in _mails(app, ADMIN) if "declined" in m["subject"]]
    assert EXPERT in told["body"] and f"/questions/{PID}#reviews" in told["body"]
    assert post_form(visitor, decline).status_code == 404
    assert 'data-state="declined"' in admin.get(f"/questions/{PID}").text
    assert post_form(admin, f"/questions/{PID}/reviews", {"email": EXPERT}).status_code == 303  # may ask again


def test_an_address_with_an_account_signs_in_first_and_an_old_link_expires(app):
    ids = _setup(app)
    other = app.state.repo.create_user("member@example.org", hash_password(PASSWORD), verified=True,
                                       roles=("contributor",))  # fmt: skip
    kind, token = review_invitations.invite_by_email(app.state.store, PID, "member@example.org", by=ids["admin"])
    assert kind == "email"  # a member without the reviewer role is invited by e-mail, not directly
    anonymous = TestClient(app)
    assert 'data-testid="review-invitation-login-first"' in anonymous.get(f"/review-invitations/{token}").text
    refused = post_form(anonymous, f"/review-invitations/{token}/accept")
    assert refused.status_code == 400 and "sign in as member@example.org" in refused.text
    member = signed_in(app, "member@example.org")
    assert post_form(member, f"/review-invitations/{token}/accept").status_code == 303
    assert app.state.repo.user(other)["roles"] == {"contributor", "reviewer"}
    with pytest.raises(reviews.ReviewError, match="cannot review it"):
        review_invitations.invite_by_email(app.state.store, PID, AUTHOR, by=ids["admin"])
    long_ago = time.time() - review_invitations.INVITE_TTL_S - 60
    _, old = review_invitations.invite_by_email(app.state.store, PID, "late@example.org", by=ids["admin"], now=long_ago)
    assert anonymous.get(f"/review-invitations/{old}").status_code == 404
    assert 'data-state="expired"' in signed_in(app, ADMIN).get(f"/questions/{PID}").text
    _, late = review_invitations.invite_by_email(app.state.store, PID, "late@example.org", by=ids["admin"])
    set_status(app.state.store, PID, "draft", ids["admin"])  # withdrawn from review before the answer
    closed = post_form(TestClient(app), f"/review-invitations/{late}/accept")
    assert closed.status_code == 400 and "no longer under review" in closed.text
    assert app.state.repo.user_by_email("late@example.org") is None


# -- discussion and rounds --------------------------------------------------------------------------------------


def test_discussion_and_a_second_round_with_the_diff(any_app):
    app = any_app
    ids = _setup(app)
    admin, reviewer, author = signed_in(app, ADMIN), signed_in(app, REVIEWER), signed_in(app, AUTHOR)
    assert post_form(admin, f"/questions/{PID}/reviews", {"email": REVIEWER}).status_code == 303
    [first] = [r["id"] for r in reviews.ReviewRepo(app.state.store).for_problem(PID)]
    path = f"/questions/{PID}/reviews/{first}"
    assert post_form(reviewer, f"{path}/accept").status_code == 303
    early = post_form(reviewer, f"{path}/messages", {"message": "A question first."})
    assert early.status_code == 400 and "once the review is submitted" in early.text
    assert post_form(reviewer, path, {"recommendation": "needs_revision", "anonymous": "on",
                                      "comment": "List the seven graphs."}).status_code == 303  # fmt: skip

    # the author replies, the reviewer answers, the admin joins; nobody names the anonymous reviewer to the author
    assert post_form(author, f"{path}/response", {"response": "Which *seven*?"}).status_code == 303
    said = post_form(reviewer, f"{path}/messages", {"message": "Those with $g=2$."})
    assert said.status_code == 303 and said.headers["location"] == f"{path}#discussion"
    assert post_form(admin, f"{path}/messages", {"message": "Please add the list."}).status_code == 303
    assert post_form(author, f"{path}/messages", {"message": " "}).status_code == 400
    page = author.get(f"/questions/{PID}").text
    assert re.findall(r'data-testid="thread-who">([^<]*)<', page) == ["You (author)", "Reviewer 1", "Administrator"]
    assert REVIEWER not in page and "rev@" not in page and ids["reviewer"] not in page
    assert "<em>seven</em>" in page and 'data-math="inline"' in page  # Markdown and LaTeX rendered
    seen = reviewer.get(path).text
    assert re.findall(r'data-testid="thread-who">([^<]*)<', seen) == ["Author", "You", "Administrator"]
    assert re.findall(r'data-testid="thread-who">([^<]*)<', admin.get(f"/questions/{PID}").text) == [
        "Author", f"Reviewer 1 ({REVIEWER})", "Administrator"]
    to_author = [m for m in _mails(app, AUTHOR) if "new message" in m["subject"]]
    assert len(to_author) == 2 and all(REVIEWER not in m["body"] for m in to_author)  # the reviewer's, the admin's
    messages = MessageRepo(app.state.store).for_reviews([first])[first]
    assert [m["side"] for m in messages] == ["author", "reviewer", "admin"]
    stranger = signed_in(app, GRADER)
    assert post_form(stranger, f"{path}/messages", {"message": "hi"}).status_code == 404

    # back in draft: no round yet; the author revises and resubmits, then asks Reviewer 1 for a second round
    assert post_form(author, f"{path}/round").status_code == 404  # draft
    _new_version(app, ids, solution="There are **seven**: list them.\n\n<script>alert(1)</script>")
    assert post_form(author, f"/questions/{PID}/submit").status_code == 303
    assert 'data-testid="review-round-start"' in author.get(f"/questions/{PID}").text
    started = post_form(author, f"{path}/round")
    assert started.status_code == 303
    second = reviews.ReviewRepo(app.state.store).for_problem(PID)[-1]
    assert (second["reviewer_id"], second["version"], second["state"], second["anonymous"]) == (
        ids["reviewer"], 2, "accepted", 1)
    assert post_form(author, f"{path}/round").status_code == 400  # that reviewer already has a later round
    [asked] = [m for m in _mails(app, REVIEWER) if "further round" in m["subject"]]
    assert f"/questions/{PID}/reviews/{second['id']}" in asked["body"]

    shown = reviewer.get(f"/questions/{PID}/reviews/{second['id']}").text
    assert 'data-testid="review-round">2<' in shown and 'data-testid="version-diff"' in shown
    rows = re.findall(r'data-op="(\w+)">.*?data-testid="diff-text">([^<]*)</td>', shown, re.DOTALL)
    assert ("del", "There are **seven**.") in rows and ("add", "There are **seven**: list them.") in rows
    assert ("add", "&lt;script&gt;alert(1)&lt;/script&gt;") in rows  # escaped, never markup
    assert parse_tags(shown).script_text == []
    assert post_form(reviewer, f"/questions/{PID}/reviews/{second['id']}",
                     {"recommendation": "recommend", "comment": "Good now."}).status_code == 303  # fmt: skip
    assert post_form(admin, f"/questions/{PID}/status", {"to": "approved"}).status_code == 303
    listing = reviewer.get("/reviews").text
    assert re.findall(r'data-testid="reviews-round">(\d)<', listing) == ["2", "1"]


def test_the_reviewer_starts_a_further_round_of_an_unchanged_version(app):
    ids = _setup(app)
    admin, reviewer = signed_in(app, ADMIN), signed_in(app, REVIEWER)
    rid, _ = reviews.invite_reviewer(app.state.store, PID, REVIEWER, by=ids["admin"])
    reviews.answer_invitation(app.state.store, rid, True)
    reviews.submit_review(app.state.store, rid, recommendation="recommend", anonymous=False, comment="Fine.",
                          actor=ids["reviewer"])  # fmt: skip
    started = post_form(reviewer, f"/questions/{PID}/reviews/{rid}/round")
    new = reviews.ReviewRepo(app.state.store).for_problem(PID)[-1]["id"]
    assert started.status_code == 303 and started.headers["location"] == f"/questions/{PID}/reviews/{new}"
    shown = reviewer.get(started.headers["location"]).text
    assert 'data-testid="review-no-changes"' in shown and 'data-testid="version-diff"' not in shown
    assert [m for m in _mails(app, REVIEWER) if "further round" in m["subject"]] == []  # they asked themselves
    assert 'data-testid="review-round-start"' not in admin.get(f"/questions/{PID}").text  # round 2 is open


def test_reviewers_are_numbered_by_their_first_submitted_review(app):
    ids = _setup(app)
    second = app.state.repo.create_user("second@example.org", hash_password(PASSWORD), verified=True,
                                        roles=("reviewer",))  # fmt: skip
    store = app.state.store
    early, _ = reviews.invite_reviewer(store, PID, REVIEWER, by=ids["admin"])
    late, _ = reviews.invite_reviewer(store, PID, "second@example.org", by=ids["admin"])
    for rid, who in ((late, second), (early, ids["reviewer"])):  # the later invitee submits first
        reviews.answer_invitation(store, rid, True)
        reviews.submit_review(store, rid, recommendation="recommend", anonymous=True, comment="ok", actor=who)
    page = signed_in(app, AUTHOR).get(f"/questions/{PID}").text
    labels = re.findall(r'data-review-id="(\d+)".*?data-testid="review-label">([^<]*)<', page, re.DOTALL)
    assert labels == [(str(early), "Reviewer 2"), (str(late), "Reviewer 1")]


def test_diff_rows_keep_context_and_mark_gaps():
    v1 = Problem(id="p", **V1).content()
    v2 = v1 | {"solution": "There are **seven**: list them."}
    assert diff_rows(v1, v2) == [
        {"op": "same", "old": 6, "new": 6, "text": ""},
        {"op": "same", "old": 7, "new": 7, "text": "## Solution"},
        {"op": "del", "old": 8, "new": None, "text": "There are **seven**."},
        {"op": "add", "old": None, "new": 8, "text": "There are **seven**: list them."},
        {"op": "same", "old": 9, "new": 9, "text": ""},
        {"op": "same", "old": 10, "new": 10, "text": "## Subquestion 1"},
    ]  # fmt: skip
    far = v1 | {"title": "Stable curves", "difficulty": v1["difficulty"] | {"compute": 2}}
    rows = diff_rows(v1, far, context=1)
    assert [r["op"] for r in rows] == ["same", "del", "add", "same", "gap", "same", "del", "add"]
    assert rows[-1]["text"] == "background 3, reasoning 4, insight 2, compute 2"
    assert diff_rows(v1, dict(v1)) == []


# -- guidelines, pickers, bulk assignment ------------------------------------------------------------------------


def test_review_guidelines_page_is_linked_from_the_review_pages(app):
    ids = _setup(app)
    guide = TestClient(app).get("/review-guidelines")
    assert guide.status_code == 200 and 'data-testid="review-guidelines"' in guide.text
    for heading in ("What to check", "Choosing a recommendation", "Rounds and discussion", "Anonymity"):
        assert f"<h2>{heading}</h2>" in guide.text
    rid, _ = reviews.invite_reviewer(app.state.store, PID, REVIEWER, by=ids["admin"])
    assert 'href="/review-guidelines"' in signed_in(app, REVIEWER).get(f"/questions/{PID}/reviews/{rid}").text
    assert 'href="/review-guidelines"' in signed_in(app, ADMIN).get(f"/questions/{PID}").text


def test_pickers_list_the_people_with_the_right_role(app):
    ids = _setup(app)
    _question(app, "live-one", ids["author"], "active", title="Live one")
    admin = signed_in(app, ADMIN)
    page = admin.get(f"/questions/{PID}").text
    choices = re.findall(r'<option value="([^"]+)" label="[^"]*\(([^)]*)\)">', page)
    assert choices[0] == (REVIEWER, "reviewer")  # reviewers first: they are invited in one step
    assert 'list="reviewer-choices"' in page
    grading = admin.get("/admin/grading").text
    assert re.findall(r'<datalist id="grader-choices"[^>]*>\s*(.*?)</datalist>', grading, re.DOTALL) == [
        f'<option value="{GRADER}">']
    assert 'list="grader-choices"' in grading
    people = admin.get("/admin/assign").text
    assert re.findall(r'<option value="([^"]+)" label="[^"]*\(([^)]*)\)">', people) == [
        (GRADER, "grader"), (REVIEWER, "reviewer")]
    assert 'href="/admin/assign?email=rev%40example.org"' in admin.get("/admin/users").text


def test_bulk_assignment_of_several_questions_to_one_person(any_app):
    app = any_app
    ids = _setup(app)
    _question(app, "second-question", ids["author"], title="Second question")
    for pid in ("live-one", "live-two"):
        _question(app, pid, ids["author"], "active", title=pid.replace("-", " ").capitalize())
        record_answer(app.state.store, run_id="run-bulk", problem_id=pid, version=1, model="openai-api/fake/m",
                      tier=None, epoch=0, mode="agentic", main_answer="Seven.", sub_answers=["7"], stages=[])  # fmt: skip
    admin = signed_in(app, ADMIN)
    prefilled = admin.get("/admin/assign?email=rev%40example.org").text
    assert 'value="rev@example.org"' in prefilled and 'data-testid="assign-review-second-question"' in prefilled
    nothing = post_form(admin, "/admin/assign", {"email": REVIEWER})
    assert nothing.status_code == 400 and "Tick at least one question" in nothing.text

    done = post_form(admin, "/admin/assign", {"email": REVIEWER, f"review:{PID}": "on",
                                              "review:second-question": "on", "grade:live-one": "on"})  # fmt: skip
    assert done.status_code == 200
    outcome = re.findall(r'data-problem="([^"]+)" data-task="(\w+)" data-ok="(\w+)">', done.text)
    assert outcome == [("second-question", "review", "yes"), (PID, "review", "yes"), ("live-one", "grade", "no")]
    assert "is not a verified grader" in done.text
    store = app.state.store
    assert {r["problem_id"] for r in reviews.ReviewRepo(store).listing(ids["reviewer"])} == {PID, "second-question"}
    assert len([m for m in _mails(app, REVIEWER) if "invitation to review" in m["subject"]]) == 2

    graded = post_form(admin, "/admin/assign", {"email": GRADER, "grade:live-one": "on", "grade:live-two": "on"})
    assert re.findall(r'data-problem="([^"]+)" data-task="grade" data-ok="yes">', graded.text) == ["live-one",
                                                                                                    "live-two"]
    assert {a["problem_id"] for a in GradingRepo(store).assignments(grader_id=ids["grader"])} == {"live-one",
                                                                                                  "live-two"}
    external = post_form(admin, "/admin/assign", {"email": EXPERT, f"review:{PID}": "on",
                                                  "review:second-question": "on"})  # fmt: skip
    assert "invited to review by e-mail" in external.text
    assert len(_mails(app, EXPERT)) == 2 and app.state.repo.user_by_email(EXPERT) is None
    again = post_form(admin, "/admin/assign", {"email": REVIEWER, f"review:{PID}": "on"})
    assert 'data-ok="no"' in again.text and "already has an open invitation" in again.text
