"""Reviews of questions under review: invitations, the reviewer's answer and review, the author's response.

The state moves are plain functions over the store (:func:`invite_reviewer`, :func:`answer_invitation`,
:func:`submit_review`, :func:`respond_to_review`); the routes add the policy, the forms and the mails.
A review recommending a revision, or finding the question not suitable, sends the question back to
draft through the catalogue's :func:`~theorembench.methods.improof.catalog.set_status`, in the same
transaction as the review. An anonymous review never shows its reviewer to the author.

Approval (:func:`approval_blocker`, which the status move to "approved" consults) follows the paper: a
question is accepted only when a reviewer and the administrator have no remaining concerns. Only reviews
of the current version count, since a revision changes what was judged; among them each reviewer's latest
submitted review is their standing. At least one reviewer must recommend it, and none may still ask for
revision or find it not suitable (a concern is withdrawn by the same reviewer's later recommendation, or
made moot by a new version). The administrator's decision is the move itself.
"""

from __future__ import annotations

import time
from typing import Any

from fastapi import FastAPI
from fastapi.responses import HTMLResponse, Response

from theorembench.common.errors import UserError
from theorembench.methods.improof.catalog import set_status
from theorembench.store.accounts import AccountRepo
from theorembench.store.db import Store
from theorembench.store.improof import ImproofRepo
from theorembench.store.review_rounds import InvitationRepo, MessageRepo
from theorembench.store.reviews import Review, ReviewRepo, users_with_roles
from theorembench.web.accounts import AccountError, normalise_email
from theorembench.web.context import Ctx, PageError, guard, page, redirect
from theorembench.web.outbox import send_mail
from theorembench.web.policy import Subject, allowed
from theorembench.web.render import MAX_CHARS
from theorembench.web.review_rounds import (
    ReviewError,
    changes_since_previous,
    post_message,
    reviewer_labels,
    round_blocker,
    round_numbers,
    thread,
)

RECOMMENDATIONS = {"recommend": "Recommend", "needs_revision": "Needs revision", "not_suitable": "Not suitable"}
BACK_TO_DRAFT = ("needs_revision", "not_suitable")
STATE_LABELS = {"invited": "Invited", "accepted": "Accepted", "declined": "Declined", "submitted": "Submitted"}


# -- services -------------------------------------------------------------------------------------------------


def question_open_to_review(store: Store, problem_id: str) -> dict[str, Any]:
    """The question, while reviewers may be invited to it (it is under review); else :class:`ReviewError`."""
    found = ImproofRepo(store).problem(problem_id)
    if found is None:
        raise ReviewError(f"no question {problem_id!r}")
    if found["status"] != "under_review":
        raise ReviewError(f"reviewers can be invited only while the question is under review (it is "
                          f"{found['status'].replace('_', ' ')})")  # fmt: skip
    return found


def reviewer_address(email: str) -> str:
    """``email`` normalised, a bad one as :class:`ReviewError`."""
    try:
        return normalise_email(email)
    except AccountError as exc:
        raise ReviewError(str(exc)) from None


def invite_reviewer(store: Store, problem_id: str, email: str, *, by: str | None) -> tuple[int, dict[str, Any]]:
    """Invite the verified reviewer with ``email`` to review the question's current version; (review id, user)."""
    found = question_open_to_review(store, problem_id)
    address = reviewer_address(email)
    user = AccountRepo(store).user_by_email(address)
    if user is None or not user["verified"] or "reviewer" not in user["roles"]:
        raise ReviewError(f"{address} is not a verified reviewer: invite them by e-mail from the question's page "
                          "(the account is made when they accept)")  # fmt: skip
    if user["id"] == found["author"]:
        raise ReviewError("the author of a question cannot review it")
    reviews = ReviewRepo(store)
    if reviews.open_for(problem_id, user["id"]):
        raise ReviewError(f"{address} already has an open invitation for this question")
    return reviews.create(problem_id, int(found["current_version"]), user["id"], by), user


def answer_invitation(store: Store, review_id: int, accept: bool) -> None:
    """Accept or decline an invitation; ReviewError when it was answered already."""
    if not ReviewRepo(store).move(review_id, "invited", "accepted" if accept else "declined"):
        raise ReviewError("this invitation was answered already")


def review_problems(recommendation: str, comment: str) -> dict[str, str]:
    """What is wrong with a review form, by field (empty when it can be saved)."""
    errors = {}
    if recommendation not in RECOMMENDATIONS:
        errors["recommendation"] = "choose a recommendation: " + ", ".join(RECOMMENDATIONS.values()).lower()
    if not comment.strip():
        errors["comment"] = "write a comment for the author"
    elif len(comment) > MAX_CHARS:
        errors["comment"] = f"the comment may have at most {MAX_CHARS} characters"
    return errors


def submit_review(store: Store, review_id: int, *, recommendation: str, anonymous: bool, comment: str,
                  actor: str) -> bool:  # fmt: skip
    """Save an accepted invitation's review; returns whether the question went back to draft."""
    errors = review_problems(recommendation, comment)
    if errors:
        raise ReviewError("; ".join(errors.values()))
    reviews = ReviewRepo(store)
    review = reviews.get(review_id)
    if review is None:
        raise ReviewError(f"no review {review_id}")
    back = recommendation in BACK_TO_DRAFT
    try:
        with store.transaction():
            if not reviews.submit(review_id, recommendation=recommendation, anonymous=anonymous, comment=comment):
                raise ReviewError("this review cannot be submitted: accept the invitation first (a review is "
                                  "submitted once)")  # fmt: skip
            if back:
                set_status(store, review["problem_id"], "draft", actor,
                           f"review {review_id}: {RECOMMENDATIONS[recommendation].lower()}")  # fmt: skip
    except UserError as exc:
        raise ReviewError(str(exc)) from None
    return back


def approval_blocker(store: Store, problem_id: str) -> str | None:
    """Why the question cannot be approved now (one line), or None when the reviews allow it (see the module)."""
    found = ImproofRepo(store).problem(problem_id)
    if found is None:
        return f"no question {problem_id!r}"
    version = int(found["current_version"])
    standing: dict[str, str] = {}
    found = ReviewRepo(store).for_problem(problem_id)
    done = [r for r in found if r["state"] == "submitted" and r["version"] == version]
    for review in sorted(done, key=lambda r: (r["submitted_at"] or 0, r["id"])):
        standing[review["reviewer_id"]] = review["recommendation"]
    concerns = sorted(RECOMMENDATIONS[r].lower() for r in standing.values() if r in BACK_TO_DRAFT)
    if concerns:
        return (f"a review of version {version} still has concerns ({', '.join(concerns)}): the author revises the "
                "question, or that reviewer recommends it in a new review")  # fmt: skip
    if "recommend" not in standing.values():
        return (f"no reviewer has recommended version {version} yet: invite a reviewer and approve once a review "
                "recommends it")  # fmt: skip
    return None


def respond_to_review(store: Store, review_id: int, text: str) -> None:
    """The author's reply to a submitted review: a message of its discussion, written by the question's author."""
    review = ReviewRepo(store).get(review_id)
    found = ImproofRepo(store).problem(review["problem_id"]) if review else None
    author = AccountRepo(store).user(found["author"]) if found and found["author"] else None
    if review is None or review["state"] != "submitted" or author is None:
        raise ReviewError("only a submitted review can be answered")
    if not text.strip():
        raise ReviewError("write a response first")
    post_message(store, review_id, dict(author), text)


def admin_addresses(store: Store, invited_by: str | None) -> list[str]:
    """Whom to tell about a review or an invitation: the admin who invited, else every admin."""
    inviter = AccountRepo(store).user(invited_by) if invited_by else None
    if inviter is not None and "admin" in inviter["roles"]:
        return [inviter["email"]]
    return [u["email"] for u in users_with_roles(store, "admin")]


# -- what pages show -------------------------------------------------------------------------------------------


def _shown(review: Review, label: str, rounds: dict[int, int], *, admin: bool, own: bool) -> dict[str, Any]:
    """A review as a page shows it: labelled "Reviewer N"; the reviewer's email only to admins, the reviewer, or
    when the review is signed (not anonymous)."""
    known = admin or own or not review["anonymous"]
    return {"id": review["id"], "problem_id": review["problem_id"], "version": review["version"],
            "state": review["state"], "state_label": STATE_LABELS.get(review["state"], review["state"]),
            "recommendation": review["recommendation"],
            "recommendation_label": RECOMMENDATIONS.get(review["recommendation"] or "", ""),
            "anonymous": bool(review["anonymous"]), "label": label, "round": rounds.get(review["id"]),
            "reviewer": review["reviewer_email"] if known else label, "named": known,
            "comment": review["comment"] or "", "author_response": review["author_response"] or "",
            "created_at": review["created_at"], "submitted_at": review["submitted_at"],
            "own": own}  # fmt: skip


def question_reviews(ctx: Ctx, problem: dict[str, Any], subject: Subject) -> dict[str, Any]:
    """Template values for the reviews section of a question page (``_reviews_section.html``).

    Admins see every review with its reviewer and the invitations by e-mail; a reviewer sees their own; the
    author sees submitted reviews, each reviewer as "Reviewer N" (named too when the review is signed), with
    their discussions.
    """
    store = ctx.repo.store
    admin = allowed(ctx.user, "review_invite", subject)
    author = allowed(ctx.user, "question_respond", subject)
    found = ReviewRepo(store).for_problem(problem["id"])
    labels, rounds = reviewer_labels(found), round_numbers(found)
    messages = MessageRepo(store).for_reviews([r["id"] for r in found])
    items = []
    for review in found:
        own = review["reviewer_id"] == ctx.uid
        if admin or own or (author and review["state"] == "submitted"):
            label = labels[review["reviewer_id"]]
            item = _shown(review, label, rounds, admin=admin, own=own)
            submitted = review["state"] == "submitted"
            item["thread"] = thread(messages[review["id"]], review, label, viewer=ctx.uid, admin=admin)
            can_reply = submitted and (author or admin) and not own
            base = f"/questions/{problem['id']}/reviews/{review['id']}"
            item["reply_action"] = (base + ("/response" if author else "/messages")) if can_reply else ""
            item["reply_field"] = "response" if author else "message"
            item["can_round"] = (author or admin) and round_blocker(found, review, subject.status) is None
            items.append(item)
    can_invite = admin and subject.status == "under_review"
    invitations = InvitationRepo(store).for_problem(problem["id"]) if admin else []
    return {"review_items": items, "review_can_invite": can_invite, "review_problem_id": problem["id"],
            "reviewer_choices": reviewer_choices(store) if can_invite else [],
            "review_invitations": [invitation_shown(i) for i in invitations]}  # fmt: skip


def reviewer_choices(store: Store) -> list[dict[str, str]]:
    """The picker's entries: verified reviewers first (one step: the invitation goes straight to them)."""
    users = [u for u in users_with_roles(store) if u["verified"]]
    users.sort(key=lambda u: ("reviewer" not in u["roles"], u["email"]))
    return [{"email": u["email"], "roles": ", ".join(u["roles"]) or "no role"} for u in users]


INVITATION_LABELS = {"pending": "Sent, not answered", "accepted": "Accepted", "declined": "Declined"}


def invitation_shown(invitation: dict[str, Any], now: float | None = None) -> dict[str, Any]:
    """An invitation by e-mail for the admin's lists; a pending one past its expiry shows as expired."""
    expired = invitation["state"] == "pending" and invitation["expires_at"] <= (now or time.time())
    return invitation | {"label": "Expired" if expired else INVITATION_LABELS.get(invitation["state"], ""),
                         "shown_state": "expired" if expired else invitation["state"]}  # fmt: skip


# -- routes ----------------------------------------------------------------------------------------------------


def _rid(text: str) -> int:
    if not text.isdigit() or len(text) > 18:
        raise PageError(404, "Not found", "There is no such page.")
    return int(text)


def _mail(ctx: Ctx, to: str, subject: str, body: str) -> None:
    send_mail(ctx.repo, to, subject, body, ctx.request.app.state.smtp_url)


def _title(store: Store, problem_id: str, version: int | None = None) -> str:
    row = ImproofRepo(store).version(problem_id, version)
    return str((row or {}).get("payload", {}).get("title") or problem_id)


def _review_page(ctx: Ctx, pid: str, rid: int, subject: Subject, status: int = 200, *,
                 form: dict[str, str] | None = None, errors: dict[str, str] | None = None) -> HTMLResponse:  # fmt: skip
    store = ctx.repo.store
    found = ReviewRepo(store).for_problem(pid)
    review = next(r for r in found if r["id"] == rid)
    labels, rounds = reviewer_labels(found), round_numbers(found)
    version = ImproofRepo(store).version(pid, review["version"])
    can_submit = review["state"] == "accepted" and allowed(ctx.user, "review_submit", subject)
    shown = _shown(review, labels[review["reviewer_id"]], rounds, admin=False, own=True)
    messages = MessageRepo(store).for_reviews([rid])[rid]
    return page(ctx, "review.html", status, review=shown, problem_id=pid, payload=version["payload"],
                question_status=subject.status, can_submit=can_submit, recommendations=RECOMMENDATIONS,
                form=form or {}, errors=errors or {}, changes=changes_since_previous(store, found, review),
                thread=thread(messages, review, shown["label"], viewer=ctx.uid, admin=False),
                can_round=round_blocker(found, review, subject.status) is None)  # fmt: skip


def register(app: FastAPI) -> None:
    """Add the review routes to ``app``."""

    @app.get("/reviews", response_class=HTMLResponse)
    def reviews_list(ctx: Ctx = guard("reviews")) -> HTMLResponse:
        store = ctx.repo.store
        admin = "admin" in (ctx.user.get("roles") or ())
        rows = ReviewRepo(store).listing(None if admin else ctx.uid)
        per_problem: dict[str, list[Review]] = {}
        items = []
        for row in rows:
            found = per_problem.setdefault(row["problem_id"], ReviewRepo(store).for_problem(row["problem_id"]))
            own = row["reviewer_id"] == ctx.uid
            item = _shown(row, reviewer_labels(found)[row["reviewer_id"]], round_numbers(found), admin=admin, own=own)
            item["title"] = _title(store, row["problem_id"], row["version"])
            item["link"] = (f"/questions/{row['problem_id']}/reviews/{row['id']}" if own
                            else f"/questions/{row['problem_id']}#review-{row['id']}")  # fmt: skip
            items.append(item)
        invitations = []
        for invitation in InvitationRepo(store).listing() if admin else []:
            invitations.append(invitation_shown(invitation) | {"title": _title(store, invitation["problem_id"])})
        return page(ctx, "reviews.html", items=items, admin=admin, invitations=invitations)

    @app.get("/questions/{pid}/reviews/{rid}", response_class=HTMLResponse)
    def review_view(pid: str, rid: str, ctx: Ctx = guard("review_respond")) -> HTMLResponse:
        number = _rid(rid)
        _, subject = ctx.question(pid, review_id=number)
        return _review_page(ctx, pid, number, subject)

    def _answer(pid: str, rid: str, ctx: Ctx, accept: bool) -> Response:
        number = _rid(rid)
        problem, _ = ctx.question(pid, review_id=number)
        try:
            answer_invitation(ctx.repo.store, number, accept)
        except ReviewError as exc:
            raise PageError(400, "Already answered", f"{exc}.") from None
        if not accept:
            review = ReviewRepo(ctx.repo.store).get(number)
            for to in admin_addresses(ctx.repo.store, review["invited_by"]):
                _mail(ctx, to, "IMProofBench: a review invitation was declined",
                      f"{review['reviewer_email']} declined to review \"{problem['payload'].get('title') or pid}\". "
                      f"Invite another reviewer:\n{ctx.base_url()}/questions/{pid}#reviews\n")  # fmt: skip
        return redirect(ctx, f"/questions/{pid}/reviews/{number}")

    @app.post("/questions/{pid}/reviews/{rid}/accept")
    def review_accept(pid: str, rid: str, ctx: Ctx = guard("review_respond")) -> Response:
        return _answer(pid, rid, ctx, True)

    @app.post("/questions/{pid}/reviews/{rid}/decline")
    def review_decline(pid: str, rid: str, ctx: Ctx = guard("review_respond")) -> Response:
        return _answer(pid, rid, ctx, False)

    @app.post("/questions/{pid}/reviews/{rid}")
    def review_submit(pid: str, rid: str, ctx: Ctx = guard("review_submit")) -> Response:
        number = _rid(rid)
        problem, subject = ctx.question(pid, review_id=number)
        form = {"recommendation": ctx.form.get("recommendation", ""), "comment": ctx.form.get("comment", ""),
                "anonymous": "on" if ctx.form.get("anonymous") else ""}  # fmt: skip
        errors = review_problems(form["recommendation"], form["comment"])
        if errors:
            return _review_page(ctx, pid, number, subject, 400, form=form, errors=errors)
        try:
            back = submit_review(ctx.repo.store, number, recommendation=form["recommendation"],
                                 anonymous=bool(form["anonymous"]), comment=form["comment"], actor=ctx.uid)  # fmt: skip
        except ReviewError as exc:
            return _review_page(ctx, pid, number, subject, 400, form=form, errors={"form": str(exc)})
        title = problem["payload"].get("title") or pid
        verdict = RECOMMENDATIONS[form["recommendation"]].lower()
        author = ctx.repo.user(problem["author"]) if problem["author"] else None
        if author is not None:
            then = ("It is back in draft: revise it and submit it for review again." if back
                    else "Its status is unchanged.")  # fmt: skip
            _mail(ctx, author["email"], "IMProofBench: your question was reviewed",
                  f"Your question \"{title}\" received a review ({verdict}). {then}\n"
                  f"Read it and respond:\n{ctx.base_url()}/questions/{pid}#review-{number}\n")  # fmt: skip
        review = ReviewRepo(ctx.repo.store).get(number)
        for to in admin_addresses(ctx.repo.store, review["invited_by"]):
            _mail(ctx, to, "IMProofBench: a review is complete",
                  f"{review['reviewer_email']} reviewed version {review['version']} of \"{title}\": {verdict}"
                  f"{' (the question is back in draft)' if back else ''}.\n"
                  f"{ctx.base_url()}/questions/{pid}#review-{number}\n")  # fmt: skip
        return redirect(ctx, f"/questions/{pid}/reviews/{number}")

    @app.post("/questions/{pid}/reviews/{rid}/response")
    def review_response(pid: str, rid: str, ctx: Ctx = guard("question_respond")) -> Response:
        number = _rid(rid)
        problem, _ = ctx.question(pid, review_id=number)
        try:
            respond_to_review(ctx.repo.store, number, ctx.form.get("response", ""))
        except ReviewError as exc:
            raise PageError(400, "Cannot respond", f"{exc}.") from None
        review = ReviewRepo(ctx.repo.store).get(number)
        _mail(ctx, review["reviewer_email"], "IMProofBench: the author responded to your review",
              f"The author of \"{problem['payload'].get('title') or pid}\" responded to your review:\n"
              f"{ctx.base_url()}/questions/{pid}/reviews/{number}#discussion\n")  # fmt: skip
        return redirect(ctx, f"/questions/{pid}#review-{number}")
