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

from typing import Any

from fastapi import FastAPI
from fastapi.responses import HTMLResponse, Response

from theorembench.common.errors import UserError
from theorembench.methods.improof.catalog import set_status
from theorembench.store.accounts import AccountRepo
from theorembench.store.db import Store
from theorembench.store.improof import ImproofRepo
from theorembench.store.reviews import ReviewRepo, users_with_roles
from theorembench.web.accounts import AccountError, normalise_email
from theorembench.web.context import Ctx, PageError, guard, page, redirect
from theorembench.web.outbox import send_mail
from theorembench.web.policy import Subject, allowed
from theorembench.web.render import MAX_CHARS

RECOMMENDATIONS = {"recommend": "Recommend", "needs_revision": "Needs revision", "not_suitable": "Not suitable"}
BACK_TO_DRAFT = ("needs_revision", "not_suitable")
ANONYMOUS = "Anonymous reviewer"
STATE_LABELS = {"invited": "Invited", "accepted": "Accepted", "declined": "Declined", "submitted": "Submitted"}


class ReviewError(ValueError):
    """A review action that cannot be done (one line, safe to show)."""


# -- services -------------------------------------------------------------------------------------------------


def invite_reviewer(store: Store, problem_id: str, email: str, *, by: str | None) -> tuple[int, dict[str, Any]]:
    """Invite the verified reviewer with ``email`` to review the question's current version; (review id, user)."""
    found = ImproofRepo(store).problem(problem_id)
    if found is None:
        raise ReviewError(f"no question {problem_id!r}")
    if found["status"] != "under_review":
        raise ReviewError(f"reviewers can be invited only while the question is under review (it is "
                          f"{found['status'].replace('_', ' ')})")  # fmt: skip
    try:
        address = normalise_email(email)
    except AccountError as exc:
        raise ReviewError(str(exc)) from None
    user = AccountRepo(store).user_by_email(address)
    if user is None or not user["verified"] or "reviewer" not in user["roles"]:
        raise ReviewError(f"{address} is not a verified reviewer: invite them to the platform as a reviewer first, "
                          "from the outbox page (/admin/outbox)")  # fmt: skip
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
    """The author's response to a submitted review (a later one replaces it)."""
    if not text.strip():
        raise ReviewError("write a response first")
    if len(text) > MAX_CHARS:
        raise ReviewError(f"the response may have at most {MAX_CHARS} characters")
    if not ReviewRepo(store).respond(review_id, text):
        raise ReviewError("only a submitted review can be answered")


# -- what pages show -------------------------------------------------------------------------------------------


def _shown(review: dict[str, Any], *, admin: bool, own: bool) -> dict[str, Any]:
    """A review as a page shows it; the reviewer's email only to admins, the reviewer, or when not anonymous."""
    known = admin or own or not review["anonymous"]
    return {"id": review["id"], "problem_id": review["problem_id"], "version": review["version"],
            "state": review["state"], "state_label": STATE_LABELS.get(review["state"], review["state"]),
            "recommendation": review["recommendation"],
            "recommendation_label": RECOMMENDATIONS.get(review["recommendation"] or "", ""),
            "anonymous": bool(review["anonymous"]), "reviewer": review["reviewer_email"] if known else ANONYMOUS,
            "comment": review["comment"] or "", "author_response": review["author_response"] or "",
            "created_at": review["created_at"], "submitted_at": review["submitted_at"],
            "own": own}  # fmt: skip


def question_reviews(ctx: Ctx, problem: dict[str, Any], subject: Subject) -> dict[str, Any]:
    """Template values for the reviews section of a question page (``_reviews_section.html``).

    Admins see every review with its reviewer; a reviewer sees their own; the author sees submitted
    reviews, an anonymous one as "Anonymous reviewer".
    """
    admin = allowed(ctx.user, "review_invite", subject)
    author = allowed(ctx.user, "question_respond", subject)
    items = []
    for review in ReviewRepo(ctx.repo.store).for_problem(problem["id"]):
        own = review["reviewer_id"] == ctx.uid
        if admin or own or (author and review["state"] == "submitted"):
            item = _shown(review, admin=admin, own=own)
            item["can_respond"] = author and review["state"] == "submitted"
            items.append(item)
    can_invite = admin and subject.status == "under_review"
    choices = [u["email"] for u in users_with_roles(ctx.repo.store, "reviewer") if u["verified"]] if can_invite else []
    return {"review_items": items, "review_can_invite": can_invite, "review_problem_id": problem["id"],
            "reviewer_choices": choices}  # fmt: skip


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
    review = ReviewRepo(store).get(rid)
    version = ImproofRepo(store).version(pid, review["version"])
    can_submit = review["state"] == "accepted" and allowed(ctx.user, "review_submit", subject)
    return page(ctx, "review.html", status, review=_shown(review, admin=False, own=True), problem_id=pid,
                payload=version["payload"], question_status=subject.status, can_submit=can_submit,
                recommendations=RECOMMENDATIONS, form=form or {}, errors=errors or {})  # fmt: skip


def register(app: FastAPI) -> None:
    """Add the review routes to ``app``."""

    @app.get("/reviews", response_class=HTMLResponse)
    def reviews_list(ctx: Ctx = guard("reviews")) -> HTMLResponse:
        admin = "admin" in (ctx.user.get("roles") or ())
        rows = ReviewRepo(ctx.repo.store).listing(None if admin else ctx.uid)
        items = []
        for row in rows:
            own = row["reviewer_id"] == ctx.uid
            item = _shown(row, admin=admin, own=own)
            item["title"] = _title(ctx.repo.store, row["problem_id"], row["version"])
            item["link"] = (f"/questions/{row['problem_id']}/reviews/{row['id']}" if own
                            else f"/questions/{row['problem_id']}#review-{row['id']}")  # fmt: skip
            items.append(item)
        return page(ctx, "reviews.html", items=items, admin=admin)

    @app.post("/questions/{pid}/reviews")
    def review_invite(pid: str, ctx: Ctx = guard("review_invite")) -> Response:
        ctx.question(pid)
        try:
            rid, user = invite_reviewer(ctx.repo.store, pid, ctx.form.get("email", ""), by=ctx.uid)
        except ReviewError as exc:
            raise PageError(400, "Cannot invite this reviewer", f"{exc}.") from None
        _mail(ctx, user["email"], "IMProofBench: invitation to review a question",
              f"You are invited to review the question \"{_title(ctx.repo.store, pid)}\".\n"
              f"Open it to accept or decline:\n{ctx.base_url()}/questions/{pid}/reviews/{rid}\n")  # fmt: skip
        return redirect(ctx, f"/questions/{pid}#reviews")

    @app.get("/questions/{pid}/reviews/{rid}", response_class=HTMLResponse)
    def review_view(pid: str, rid: str, ctx: Ctx = guard("review_respond")) -> HTMLResponse:
        number = _rid(rid)
        _, subject = ctx.question(pid, review_id=number)
        return _review_page(ctx, pid, number, subject)

    def _answer(pid: str, rid: str, ctx: Ctx, accept: bool) -> Response:
        number = _rid(rid)
        ctx.question(pid, review_id=number)
        try:
            answer_invitation(ctx.repo.store, number, accept)
        except ReviewError as exc:
            raise PageError(400, "Already answered", f"{exc}.") from None
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
        author = ctx.repo.user(problem["author"]) if problem["author"] else None
        if author is not None:
            then = ("It is back in draft: revise it and submit it for review again." if back
                    else "Its status is unchanged.")  # fmt: skip
            _mail(ctx, author["email"], "IMProofBench: your question was reviewed",
                  f"Your question \"{problem['payload'].get('title') or pid}\" received a review "
                  f"({RECOMMENDATIONS[form['recommendation']].lower()}). {then}\n"
                  f"Read it and respond:\n{ctx.base_url()}/questions/{pid}#review-{number}\n")  # fmt: skip
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
              f"{ctx.base_url()}/questions/{pid}/reviews/{number}\n")  # fmt: skip
        return redirect(ctx, f"/questions/{pid}#review-{number}")
