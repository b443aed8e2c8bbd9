"""Inviting a reviewer in one step, and invitations by e-mail to review one question (external experts).

The administrator names a person on the question's page (a picker of the platform's users, or any address).
A verified reviewer gets the review invitation directly (:func:`theorembench.web.reviews.invite_reviewer`).
Anyone else gets a mail with an accept link and a decline link; nothing else is made yet. Accepting
(:func:`accept_by_email`) creates the account (verified, with the reviewer role; the password is optional, as
the reviewer may set one later) or, for an address with an account, asks its owner to sign in first; it makes
the review, already accepted, signs the new reviewer in and opens the review page. Declining marks the invitation
declined and mails the administrator who sent it. Links are random tokens stored as their SHA-256 digest, once,
expiring after :data:`INVITE_TTL_S`.
"""

from __future__ import annotations

import time
from typing import Any

import sqlalchemy as sa
from fastapi import FastAPI
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from theorembench.store.accounts import AccountRepo
from theorembench.store.db import Store
from theorembench.store.improof import ImproofRepo
from theorembench.store.review_rounds import Invitation, InvitationRepo
from theorembench.store.reviews import ReviewRepo
from theorembench.web import sessions
from theorembench.web.accounts import new_token, normalise_email, token_hash
from theorembench.web.auth import hash_password, password_problem
from theorembench.web.context import Ctx, PageError, guard, page, redirect
from theorembench.web.outbox import send_mail
from theorembench.web.reviews import (
    ReviewError,
    admin_addresses,
    invite_reviewer,
    question_open_to_review,
    reviewer_address,
)

INVITE_TTL_S = 14 * 24 * 3600
GONE = "This invitation link is unknown, already answered or expired."


def invite_by_email(store: Store, problem_id: str, email: str, *, by: str | None,
                    now: float | None = None) -> tuple[str, int | str]:  # fmt: skip
    """One step: ("review", review id) for a verified reviewer, else ("email", the token of the mailed link)."""
    found = question_open_to_review(store, problem_id)
    address = reviewer_address(email)
    user = AccountRepo(store).user_by_email(address)
    if user is not None and user["id"] == found["author"]:
        raise ReviewError("the author of a question cannot review it")
    if user is not None and user["verified"] and "reviewer" in user["roles"]:
        review_id, _ = invite_reviewer(store, problem_id, address, by=by)
        return "review", review_id
    now = now or time.time()
    invitations = InvitationRepo(store)
    if invitations.pending_for(problem_id, address, now):
        raise ReviewError(f"{address} already has an unanswered invitation to review this question")
    token, digest = new_token()
    invitations.create(digest, problem_id, int(found["current_version"]), address, by, now + INVITE_TTL_S)
    return "email", token


def live_invitation(store: Store, token: str, now: float | None = None) -> Invitation | None:
    """The pending, unexpired invitation of a link's token, or None."""
    found = InvitationRepo(store).get(token_hash(token))
    if found is None or found["state"] != "pending" or found["expires_at"] <= (now or time.time()):
        return None
    return found


def accept_by_email(store: Store, token: str, *, user: dict[str, Any] | None, password: str = "",
                    now: float | None = None) -> tuple[str, int, bool]:  # fmt: skip
    """Accept an invitation: (user id, review id, whether the account was made now).

    :class:`ReviewError` for a dead link, a question no longer under review, an address whose account is not the
    signed-in one, or a password that is given but too weak.
    """
    now = now or time.time()
    invitation = live_invitation(store, token, now)
    if invitation is None:
        raise ReviewError(GONE[:-1].lower())
    found = ImproofRepo(store).problem(invitation["problem_id"])
    if found is None or found["status"] != "under_review":
        raise ReviewError("this question is no longer under review, so there is nothing to review now; thank you")
    accounts = AccountRepo(store)
    existing = accounts.user_by_email(invitation["email"])
    if existing is not None and (user is None or user["id"] != existing["id"]):
        raise ReviewError(f"this address has an account: sign in as {invitation['email']}, then open the link again")
    if existing is not None and existing["id"] == found["author"]:
        raise ReviewError("the author of a question cannot review it")
    problem = password_problem(password) if password else None
    if problem:
        raise ReviewError(problem)
    try:
        return _accept(store, token, invitation, found, existing, password, now)
    except sa.exc.IntegrityError:  # a concurrent acceptance of the same link made the account first
        raise ReviewError(GONE[:-1].lower()) from None


def _accept(store: Store, token: str, invitation: Invitation, found: dict[str, Any], existing: dict[str, Any] | None,
            password: str, now: float) -> tuple[str, int, bool]:  # fmt: skip
    accounts = AccountRepo(store)
    with store.transaction():
        if existing is None:
            user_id = accounts.create_user(invitation["email"], hash_password(password) if password else None,
                                           verified=True, roles=("reviewer",), granted_by=invitation["invited_by"])
        else:
            user_id = existing["id"]
            accounts.add_role(user_id, "reviewer", granted_by=invitation["invited_by"])
            accounts.set_verified(user_id)
        review_id = ReviewRepo(store).create(invitation["problem_id"], int(found["current_version"]), user_id,
                                             invitation["invited_by"], state="accepted")  # fmt: skip
        if not InvitationRepo(store).answer(token_hash(token), "accepted", now, review_id):
            raise ReviewError(GONE[:-1].lower())
    return user_id, review_id, existing is None


def decline_by_email(store: Store, token: str, now: float | None = None) -> Invitation:
    """Decline an invitation (once); returns it. :class:`ReviewError` for a dead link."""
    invitation = live_invitation(store, token, now)
    if invitation is None or not InvitationRepo(store).answer(token_hash(token), "declined", now or time.time()):
        raise ReviewError(GONE[:-1].lower())
    return invitation


# -- routes ----------------------------------------------------------------------------------------------------


def _mail(ctx: Ctx, to: str, subject: str, body: str) -> None:
    send_mail(ctx.repo, to, subject, body, ctx.request.app.state.smtp_url)


def _title(store: Store, problem_id: str) -> str:
    row = ImproofRepo(store).version(problem_id)
    return str((row or {}).get("payload", {}).get("title") or problem_id)


def mail_invitation(ctx: Ctx, problem_id: str, email: str, kind: str, ref: int | str) -> None:
    """The invitation mail: for a reviewer with an account, a link to the review; else accept and decline links."""
    inviter = ctx.user["email"] if ctx.user else "the IMProofBench team"
    base, title = ctx.base_url(), _title(ctx.repo.store, problem_id)
    tasks = ("- check that the statement is well posed and unambiguous,\n- check that the solution is correct,\n"
             "- suggest improvements, such as further subquestions with unique answers.\n")  # fmt: skip
    if kind == "review":
        _mail(ctx, email, "IMProofBench: invitation to review a question",
              f"{inviter} invites you to review the question \"{title}\" on IMProofBench:\n{tasks}"
              f"Open it to accept or decline:\n{base}/questions/{problem_id}/reviews/{ref}\n"
              f"Review guidelines: {base}/review-guidelines\n")  # fmt: skip
        return
    _mail(ctx, email, "IMProofBench: would you review a mathematics question?",
          f"{inviter} asks for your help with IMProofBench, a benchmark of research-level mathematics questions "
          f"for AI models. Would you review the question \"{title}\"?\n{tasks}Most reviews take 10 to 30 minutes.\n\n"
          f"Read the question and accept (valid for 14 days):\n{base}/review-invitations/{ref}\n\n"
          f"Or decline:\n{base}/review-invitations/{ref}/decline\n\n"
          "Accepting creates an account for this address on the platform, so that you can follow the author's "
          f"replies; a password is optional.\nReview guidelines: {base}/review-guidelines\n")  # fmt: skip


def register(app: FastAPI) -> None:
    """Add the one-step invitation and the e-mail invitation pages to ``app``."""

    @app.post("/questions/{pid}/reviews")
    def review_invite(pid: str, ctx: Ctx = guard("review_invite")) -> Response:
        ctx.question(pid)
        email = ctx.form.get("email", "")
        try:
            kind, ref = invite_by_email(ctx.repo.store, pid, email, by=ctx.uid)
        except ReviewError as exc:
            raise PageError(400, "Cannot invite this reviewer", f"{exc}.") from None
        mail_invitation(ctx, pid, normalise_email(email), kind, ref)
        return redirect(ctx, f"/questions/{pid}#reviews")

    def _page(ctx: Ctx, token: str, invitation: Invitation, *, decline: bool, status: int = 200,
              error: str | None = None) -> HTMLResponse:  # fmt: skip
        version = ImproofRepo(ctx.repo.store).version(invitation["problem_id"])
        has_account = ctx.repo.user_by_email(invitation["email"]) is not None
        return page(ctx, "review_invitation.html", status, invitation=invitation, token=token, decline=decline,
                    payload=version["payload"], has_account=has_account, error=error)  # fmt: skip

    def _live(ctx: Ctx, token: str) -> Invitation:
        found = live_invitation(ctx.repo.store, token)
        if found is None:
            raise PageError(404, "Invitation not found", GONE)
        return found

    @app.get("/review-invitations/{token}", response_class=HTMLResponse)
    def review_invitation(token: str, ctx: Ctx = guard("review_invitation")) -> HTMLResponse:
        return _page(ctx, token, _live(ctx, token), decline=False)

    @app.get("/review-invitations/{token}/decline", response_class=HTMLResponse)
    def review_invitation_decline_form(token: str, ctx: Ctx = guard("review_invitation")) -> HTMLResponse:
        return _page(ctx, token, _live(ctx, token), decline=True)

    @app.post("/review-invitations/{token}/accept")
    def review_invitation_accept(token: str, ctx: Ctx = guard("review_invitation")) -> Response:
        invitation = _live(ctx, token)
        try:
            user_id, review_id, _ = accept_by_email(ctx.repo.store, token, user=ctx.user,
                                                    password=ctx.form.get("password", ""))  # fmt: skip
        except ReviewError as exc:
            return _page(ctx, token, invitation, decline=False, status=400, error=f"{exc}.")
        target = f"/questions/{invitation['problem_id']}/reviews/{review_id}"
        if ctx.uid == user_id:
            return redirect(ctx, target)
        value = sessions.start(ctx.repo, user_id, sessions.cookie_value(ctx.request))
        response = RedirectResponse(target, status_code=303)
        sessions.set_cookie(ctx.request, response, value, signed_in=True)
        return response

    @app.post("/review-invitations/{token}/decline", response_class=HTMLResponse)
    def review_invitation_decline(token: str, ctx: Ctx = guard("review_invitation")) -> HTMLResponse:
        _live(ctx, token)
        try:
            invitation = decline_by_email(ctx.repo.store, token)
        except ReviewError:
            raise PageError(404, "Invitation not found", GONE) from None
        title = _title(ctx.repo.store, invitation["problem_id"])
        for to in admin_addresses(ctx.repo.store, invitation["invited_by"]):
            _mail(ctx, to, "IMProofBench: a review invitation was declined",
                  f"{invitation['email']} declined to review \"{title}\". Invite another reviewer:\n"
                  f"{ctx.base_url()}/questions/{invitation['problem_id']}#reviews\n")  # fmt: skip
        return page(ctx, "review_invitation_done.html", invitation=invitation, title=title)
