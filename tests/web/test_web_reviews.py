"""Reviews on the platform: invitation, accept or decline, the review and its effect on the question, the author's
response (the first message of the review's discussion), anonymity towards the author ("Reviewer 1"), the
administrator told of a finished review, and who may open or act on a review."""

from __future__ import annotations

import re

import pytest
from fastapi.responses import HTMLResponse
from fastapi.testclient import TestClient
from helpers.web import PASSWORD, parse_tags, post_form, signed_in

from theorembench.common.errors import UserError
from theorembench.methods.improof.catalog import set_status
from theorembench.methods.improof.problems import Problem
from theorembench.store.improof import ImproofRepo
from theorembench.store.review_rounds import MessageRepo
from theorembench.web import accounts, authoring, reviews
from theorembench.web.auth import hash_password
from theorembench.web.context import Ctx, finish, guard

ADMIN, AUTHOR, REVIEWER, OTHER = "admin@example.org", "author@example.org", "rev@example.org", "other@example.org"
PID = "stable-graphs"


def _with_question_page(app) -> None:
    """A stand-in question page showing only the reviews section (the real page includes the same partial)."""

    @app.get("/t/questions/{pid}")
    def view(pid: str, ctx: Ctx = guard("question_view")) -> HTMLResponse:
        problem, subject = ctx.question(pid)
        values = reviews.question_reviews(ctx, problem, subject)
        html = app.state.templates.get_template("_reviews_section.html").render(user=ctx.user, csrf_token=ctx.csrf,
                                                                                 **values)  # fmt: skip
        return finish(ctx, HTMLResponse(html))


def _setup(app) -> dict[str, str]:
    repo = app.state.repo
    ids = {"admin": accounts.create_admin(repo, ADMIN, PASSWORD)}
    for key, email, roles in (("author", AUTHOR, ("contributor",)), ("reviewer", REVIEWER, ("reviewer",)),
                              ("other", OTHER, ("reviewer", "contributor"))):  # fmt: skip
        ids[key] = repo.create_user(email, hash_password(PASSWORD), verified=True, roles=roles)
    problem = Problem(id=PID, title="Stable graphs", statement="Count the stable graphs of genus $g=2$.",
                      solution="There are **seven**.", difficulty={"background": 3, "reasoning": 4, "insight": 2,
                                                                   "compute": 1},
                      author=AUTHOR,
                      subquestions=[{"text": "How many?", "answer": "7", "kind": "integer"}])  # fmt: skip
    ImproofRepo(app.state.store).create_problem(PID, status="draft", author=ids["author"], payload=problem.content(),
                                                actor=ids["author"])  # fmt: skip
    set_status(app.state.store, PID, "under_review", ids["author"])
    _with_question_page(app)
    return ids


def _mails(app, to: str) -> list[dict]:
    return [m for m in app.state.repo.mails() if m["to_addr"] == to]



def test_invite_accept_not_suitable_back_to_draft_then_author_responds(any_app):
    app = any_app
    ids = _setup(app)
    admin, reviewer, author = signed_in(app, ADMIN), signed_in(app, REVIEWER), signed_in(app, AUTHOR)

    invited = post_form(admin, f"/questions/{PID}/reviews", {"email": "Rev@Example.org"})
    assert invited.status_code == 303 and invited.headers["location"] == f"/questions/{PID}#reviews"
    [mail] = _mails(app, REVIEWER)
    link = re.search(r"http://testserver(/questions/stable-graphs/reviews/(\d+))\n", mail["body"])
    path, rid = link.group(1), link.group(2)

    opened = reviewer.get(path)
    assert opened.status_code == 200 and 'data-testid="review-accept"' in opened.text
    assert "Count the stable graphs" in opened.text and 'data-math="inline"' in opened.text  # rendered statement
    assert 'data-testid="review-form"' not in opened.text
    early = post_form(reviewer, path, {"recommendation": "recommend", "comment": "Fine."})  # not accepted yet
    assert early.status_code == 400 and "accept the invitation first" in early.text

    assert post_form(reviewer, f"{path}/accept").headers["location"] == path
    assert post_form(reviewer, f"{path}/accept").status_code == 400  # answered already
    form = reviewer.get(path).text
    assert 'data-testid="review-form"' in form and 'data-preview-target="review-comment-preview"' in form
    missing = post_form(reviewer, path, {"recommendation": "not_suitable", "anonymous": "on", "comment": "  "})
    assert missing.status_code == 400 and 'data-testid="review-error-comment"' in missing.text
    assert 'value="not_suitable" checked data-testid="review-recommendation-not_suitable"' in missing.text
    assert 'value="on" checked data-testid="review-anonymous"' in missing.text  # nothing the reviewer chose is lost
    assert ImproofRepo(app.state.store).problem(PID)["status"] == "under_review"  # nothing happened

    done = post_form(reviewer, path, {"recommendation": "not_suitable", "anonymous": "on",
                                      "comment": "The count fails for $g=3$: see *Lemma 2*."})  # fmt: skip
    assert done.status_code == 303 and done.headers["location"] == path
    store = ImproofRepo(app.state.store)
    assert store.problem(PID)["status"] == "draft"
    last = store.status_events(PID)[-1]
    assert (last["from_status"], last["to_status"], last["actor"]) == ("under_review", "draft", ids["reviewer"])
    [to_author] = _mails(app, AUTHOR)
    assert "back in draft" in to_author["body"] and f"/questions/{PID}#review-{rid}" in to_author["body"]
    assert REVIEWER not in to_author["body"] and "rev@" not in to_author["body"]
    shown = reviewer.get(path).text
    assert 'data-testid="review-recommendation">Not suitable<' in shown and "<em>Lemma 2</em>" in shown
    changed = post_form(reviewer, path, {"recommendation": "recommend", "comment": "Changed my mind."})
    assert changed.status_code == 404  # draft

    [to_admin] = _mails(app, ADMIN)  # the administrator who invited is told the review is complete
    assert to_admin["subject"] == "IMProofBench: a review is complete" and "not suitable" in to_admin["body"]
    assert f"/questions/{PID}#review-{rid}" in to_admin["body"]

    # anonymity: the author's page never names the reviewer (only "Reviewer 1"); the admin's does
    author_page = author.get(f"/t/questions/{PID}").text
    assert 'data-testid="review-label">Reviewer 1<' in author_page and "<em>Lemma 2</em>" in author_page
    assert REVIEWER not in author_page and "rev@" not in author_page and ids["reviewer"] not in author_page
    assert 'data-testid="review-response-form"' in author_page
    admin_page = admin.get(f"/t/questions/{PID}").text
    assert REVIEWER in admin_page and "(anonymous to the author)" in admin_page
    real = author.get(f"/questions/{PID}")  # the question page itself (its status history names actors too)
    assert real.status_code == 200 and 'data-testid="review-label">Reviewer 1<' in real.text
    assert REVIEWER not in real.text and "rev@" not in real.text and ids["reviewer"] not in real.text
    assert REVIEWER in admin.get(f"/questions/{PID}").text

    answered = post_form(author, f"/questions/{PID}/reviews/{rid}/response",
                         {"response": "Fixed: the claim is now $g=2$."})  # fmt: skip
    assert answered.status_code == 303 and answered.headers["location"] == f"/questions/{PID}#review-{rid}"
    assert "Fixed: the claim is now" in author.get(f"/t/questions/{PID}").text
    seen = reviewer.get(path).text
    for html in (seen, form, author_page, reviewer.get("/reviews").text):  # nothing inline: the CSP refuses it
        parsed = parse_tags(html)
        assert parsed.script_text == [] and all(tag != "style" and "style" not in attrs for tag, attrs in parsed.tags)
    assert 'data-testid="review-author-response"' in seen and "Fixed: the claim is now" in seen
    assert 'data-testid="thread-who">Author<' in seen  # the reviewer reads it in the review's discussion
    assert [m["subject"] for m in _mails(app, REVIEWER)][0] == "IMProofBench: the author responded to your review"
    empty = post_form(author, f"/questions/{PID}/reviews/{rid}/response", {"response": " "})
    assert empty.status_code == 400


def test_decline_and_a_signed_recommendation(app):
    ids = _setup(app)
    admin, reviewer, other, author = (signed_in(app, e) for e in (ADMIN, REVIEWER, OTHER, AUTHOR))
    assert post_form(admin, f"/questions/{PID}/reviews", {"email": REVIEWER}).status_code == 303
    assert post_form(admin, f"/questions/{PID}/reviews", {"email": REVIEWER}).status_code == 400  # still open
    assert post_form(admin, f"/questions/{PID}/reviews", {"email": OTHER}).status_code == 303
    first, second = (r["id"] for r in reviews.ReviewRepo(app.state.store).for_problem(PID))

    assert reviewer.get(f"/t/questions/{PID}").status_code == 200  # invited reviewers see the question
    assert post_form(reviewer, f"/questions/{PID}/reviews/{first}/decline").status_code == 303
    assert reviews.ReviewRepo(app.state.store).get(first)["state"] == "declined"
    page = reviewer.get(f"/questions/{PID}/reviews/{first}")
    assert page.status_code == 200 and 'data-testid="review-declined"' in page.text
    assert 'data-testid="review-form"' not in page.text
    assert post_form(reviewer, f"/questions/{PID}/reviews/{first}/accept").status_code == 400
    assert post_form(reviewer, f"/questions/{PID}/reviews/{first}", {"recommendation": "recommend",
                                                                      "comment": "x"}).status_code == 400  # fmt: skip
    assert reviewer.get(f"/t/questions/{PID}").status_code == 404  # a declined reviewer no longer sees it

    assert post_form(other, f"/questions/{PID}/reviews/{second}/accept").status_code == 303
    signed = post_form(other, f"/questions/{PID}/reviews/{second}", {"recommendation": "recommend",
                                                                     "comment": "A good question."})  # fmt: skip
    assert signed.status_code == 303
    assert ImproofRepo(app.state.store).problem(PID)["status"] == "under_review"  # a recommendation moves nothing
    author_page = author.get(f"/t/questions/{PID}").text
    assert OTHER in author_page and 'data-testid="review-label">Reviewer 1<' in author_page  # signed: named too
    assert REVIEWER not in author_page  # the declined invitation is not shown to the author
    admin_page = admin.get(f"/t/questions/{PID}").text
    assert REVIEWER in admin_page and 'data-testid="review-state">Declined<' in admin_page
    assert ids["other"] not in author_page

    mine = reviewer.get("/reviews").text
    assert mine.count('data-testid="reviews-row"') == 1 and "Declined" in mine
    everyone = admin.get("/reviews").text
    assert everyone.count('data-testid="reviews-row"') == 2 and REVIEWER in everyone and OTHER in everyone
    assert 'data-testid="reviews-empty"' in author.get("/reviews").text
    [declined] = [m for m in _mails(app, ADMIN) if "declined" in m["subject"]]  # the inviting admin is told
    assert REVIEWER in declined["body"] and f"/questions/{PID}#reviews" in declined["body"]


def test_only_the_invited_reviewer_opens_and_acts_on_a_review(app):
    ids = _setup(app)
    admin = signed_in(app, ADMIN)
    assert post_form(admin, f"/questions/{PID}/reviews", {"email": REVIEWER}).status_code == 303
    [rid] = [r["id"] for r in reviews.ReviewRepo(app.state.store).for_problem(PID)]
    path = f"/questions/{PID}/reviews/{rid}"
    for email in (ADMIN, AUTHOR, OTHER):
        client = signed_in(app, email)
        assert client.get(path).status_code == 404, email
        for action in ("/accept", "/decline", ""):
            assert post_form(client, path + action, {"recommendation": "recommend", "comment": "x"}).status_code == 404
    assert reviews.ReviewRepo(app.state.store).get(rid)["state"] == "invited"
    anonymous = TestClient(app, raise_server_exceptions=False)
    seen = anonymous.get(path, follow_redirects=False)  # sent to log in (see the report: context's LoginFirst)
    assert seen.status_code != 200 and "stable graphs" not in seen.text.lower()
    assert post_form(anonymous, f"{path}/accept").status_code == 404
    reviewer = signed_in(app, REVIEWER)
    assert reviewer.get(f"/questions/{PID}/reviews/x1").status_code == 404
    assert reviewer.get(f"/questions/{PID}/reviews/{rid + 1}").status_code == 404
    assert reviewer.get(f"/questions/nope/reviews/{rid}").status_code == 404
    # the review's author only answers its own question's reviews, and only once submitted
    author = signed_in(app, AUTHOR)
    assert post_form(author, f"{path}/response", {"response": "hi"}).status_code == 400
    assert post_form(signed_in(app, OTHER), f"{path}/response", {"response": "hi"}).status_code == 404
    # only admins invite, never the author, only while under review; an address without a reviewer account
    # gets an invitation by e-mail (tests/web/test_web_review_rounds.py follows it)
    assert post_form(author, f"/questions/{PID}/reviews", {"email": OTHER}).status_code == 404
    refused = post_form(admin, f"/questions/{PID}/reviews", {"email": AUTHOR})
    assert refused.status_code == 400 and "cannot review it" in refused.text
    app.state.repo.add_role(ids["author"], "reviewer")
    assert "cannot review it" in post_form(admin, f"/questions/{PID}/reviews", {"email": AUTHOR}).text
    nobody = post_form(admin, f"/questions/{PID}/reviews", {"email": "nobody@example.org"})
    assert nobody.status_code == 303 and app.state.repo.user_by_email("nobody@example.org") is None
    assert "/review-invitations/" in _mails(app, "nobody@example.org")[0]["body"]
    bad = post_form(admin, f"/questions/{PID}/reviews", {"email": "not an address"})
    assert bad.status_code == 400 and "enter a valid email address" in bad.text
    set_status(app.state.store, PID, "draft", ids["admin"])
    late = post_form(admin, f"/questions/{PID}/reviews", {"email": OTHER})
    assert late.status_code == 400 and "only while the question is under review" in late.text


def test_review_services_without_http(app):
    ids = _setup(app)
    store = app.state.store
    rid, user = reviews.invite_reviewer(store, PID, REVIEWER, by=ids["admin"])
    assert user["id"] == ids["reviewer"]
    with pytest.raises(reviews.ReviewError, match="accept the invitation first"):
        reviews.submit_review(store, rid, recommendation="needs_revision", anonymous=False, comment="x",
                              actor=ids["reviewer"])  # fmt: skip
    reviews.answer_invitation(store, rid, accept=True)
    with pytest.raises(reviews.ReviewError, match="choose a recommendation"):
        reviews.submit_review(store, rid, recommendation="maybe", anonymous=False, comment="x", actor=ids["reviewer"])
    with pytest.raises(reviews.ReviewError, match="only a submitted review"):
        reviews.respond_to_review(store, rid, "thanks")
    moved = reviews.submit_review(store, rid, recommendation="needs_revision", anonymous=False, comment="Add a case.",
                                  actor=ids["reviewer"])  # fmt: skip
    assert moved is True and ImproofRepo(store).problem(PID)["status"] == "draft"
    with pytest.raises(reviews.ReviewError, match="submitted once"):
        reviews.submit_review(store, rid, recommendation="recommend", anonymous=False, comment="y",
                              actor=ids["reviewer"])  # fmt: skip
    reviews.respond_to_review(store, rid, "Added.")
    row = reviews.ReviewRepo(store).get(rid)
    assert (row["state"], row["recommendation"]) == ("submitted", "needs_revision")
    [message] = MessageRepo(store).for_reviews([rid])[rid]
    assert (message["side"], message["author_id"], message["body"]) == ("author", ids["author"], "Added.")


# -- approval: a reviewer and the administrator without remaining concerns -------------------------------------------


def _review(app, admin: TestClient, reviewer: TestClient, email: str, recommendation: str) -> None:
    """Invite ``email`` to review the question, accept, and submit ``recommendation``."""
    assert post_form(admin, f"/questions/{PID}/reviews", {"email": email}).status_code == 303
    rid = reviews.ReviewRepo(app.state.store).for_problem(PID)[-1]["id"]
    assert post_form(reviewer, f"/questions/{PID}/reviews/{rid}/accept").status_code == 303
    done = post_form(reviewer, f"/questions/{PID}/reviews/{rid}",
                     {"recommendation": recommendation, "comment": "My review."})  # fmt: skip
    assert done.status_code == 303


def test_approval_needs_a_recommendation_and_no_open_concern(any_app):
    app = any_app
    ids = _setup(app)
    admin, reviewer, other, author = (signed_in(app, e) for e in (ADMIN, REVIEWER, OTHER, AUTHOR))
    problems = ImproofRepo(app.state.store)
    events = len(problems.status_events(PID))

    def approve() -> str | None:
        """Try to approve; None when it worked, else the page's message (after checking that nothing changed)."""
        sent = post_form(admin, f"/questions/{PID}/status", {"to": "approved", "note": "accepted"})
        if sent.status_code == 303:
            return None
        assert sent.status_code == 400 and problems.problem(PID)["status"] == "under_review"
        assert len(problems.status_events(PID)) == events
        return re.search(r'data-testid="question-error">([^<]*)<', sent.text).group(1)

    # sent for review, nobody invited: the bug approved it here
    assert approve() == ("Status not changed: no reviewer has recommended version 1 yet: invite a reviewer and "
                         "approve once a review recommends it.")  # fmt: skip
    assert "Not ready for approval: no reviewer has recommended" in admin.get(f"/questions/{PID}").text
    # an accepted invitation is not a review; and the service refuses, whichever route calls it
    assert post_form(admin, f"/questions/{PID}/reviews", {"email": REVIEWER}).status_code == 303
    rid = reviews.ReviewRepo(app.state.store).for_problem(PID)[-1]["id"]
    assert post_form(reviewer, f"/questions/{PID}/reviews/{rid}/accept").status_code == 303
    assert approve().startswith("Status not changed: no reviewer has recommended version 1")
    with pytest.raises(UserError, match="no reviewer has recommended version 1"):
        authoring.move_status(app.state.store, PID, "approved", actor=ids["admin"], admin=True)

    # the reviewer asks for a revision (back to draft); the author resubmits version 1 as it is, with an answer;
    # a second reviewer recommends it: the first reviewer's concern is still open
    revise = post_form(reviewer, f"/questions/{PID}/reviews/{rid}", {"recommendation": "needs_revision",
                                                                      "comment": "Treat genus 3 too."})  # fmt: skip
    assert revise.status_code == 303
    assert post_form(author, f"/questions/{PID}/submit").status_code == 303
    events = len(problems.status_events(PID))
    _review(app, admin, other, OTHER, "recommend")
    assert approve() == ("Status not changed: a review of version 1 still has concerns (needs revision): the author "
                         "revises the question, or that reviewer recommends it in a new review.")  # fmt: skip
    # the same reviewer, invited again, now recommends it: no concern remains, and the admin decides
    _review(app, admin, reviewer, REVIEWER, "recommend")
    assert approve() is None
    assert problems.problem(PID)["status"] == "approved"
    assert problems.status_events(PID)[-1]["to_status"] == "approved"


def test_a_new_version_needs_its_own_recommendation(app):
    ids = _setup(app)
    admin, reviewer, author = (signed_in(app, e) for e in (ADMIN, REVIEWER, AUTHOR))
    store = app.state.store
    _review(app, admin, reviewer, REVIEWER, "recommend")  # of version 1
    assert post_form(admin, f"/questions/{PID}/status", {"to": "draft", "note": "one more change"}).status_code == 303
    payload = ImproofRepo(store).version(PID)["payload"] | {"solution": "There are **seven**: list them."}
    ImproofRepo(store).add_version(PID, payload, author=ids["author"], actor=ids["author"], note="listed them")
    assert post_form(author, f"/questions/{PID}/submit").status_code == 303
    refused = post_form(admin, f"/questions/{PID}/status", {"to": "approved"})
    assert refused.status_code == 400 and "no reviewer has recommended version 2 yet" in refused.text
    assert ImproofRepo(store).problem(PID)["status"] == "under_review"
    _review(app, admin, reviewer, REVIEWER, "recommend")  # of version 2
    assert post_form(admin, f"/questions/{PID}/status", {"to": "approved"}).status_code == 303
