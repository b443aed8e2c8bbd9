"""A member's own account: the profile page, the password change, and the password reset by e-mail.

Routes: ``GET /profile`` (profile), ``POST /profile/password`` (password_change), ``GET|POST /reset``
(password_reset: ask for a link) and ``GET|POST /reset/{token}`` (password_reset: set the new password).

A reset request answers the same page whether or not the address has an account, and is rate-limited per
client address and per e-mail; the link goes through the outbox (and SMTP when configured), is single-use
and expires after an hour. Setting a new password, by reset or by change, ends every session of the user;
after a change this browser is signed in again with a fresh session.
"""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import FastAPI
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from theorembench.store.improof import ImproofRepo
from theorembench.web import accounts, ratelimit, sessions
from theorembench.web.accounts import AccountError
from theorembench.web.context import Ctx, PageError, guard, page
from theorembench.web.outbox import send_mail
from theorembench.web.ratelimit import Limit

ACCEPTED = ("approved", "active", "retired")  # passed review: counted as accepted questions


def _ip(ctx: Ctx) -> str:
    client = ctx.request.client
    return client.host if client else "unknown"


def _day(stamp: float | None) -> str:
    return datetime.fromtimestamp(float(stamp), tz=UTC).strftime("%Y-%m-%d") if stamp else "—"


def _profile(ctx: Ctx, status: int = 200, *, error: str | None = None, changed: bool = False) -> HTMLResponse:
    user = ctx.user or {}
    mine = [p for p in ImproofRepo(ctx.repo.store).problems() if p["author"] == user.get("id")]
    return page(ctx, "profile.html", status, profile=user, since=_day(user.get("created_at")),
                roles=sorted(user.get("roles") or ()), questions=len(mine),
                accepted=sum(1 for p in mine if p["status"] in ACCEPTED), error=error, changed=changed)  # fmt: skip


def _reset_mail(ctx: Ctx, email: str, token: str | None) -> None:
    if token is None:
        return  # no account: nothing is sent, and the page says the same as when a mail went out
    body = ("Someone (we hope you) asked to reset the password of your IMProofBench account.\n"
            f"Open this link to choose a new one (valid for one hour, once):\n{ctx.base_url()}/reset/{token}\n"
            "If you did not ask for this, ignore this mail: your password stays as it is.\n")  # fmt: skip
    send_mail(ctx.repo, email, "IMProofBench: reset your password", body, ctx.request.app.state.smtp_url)


def _live_reset_link(ctx: Ctx, token: str) -> None:
    """A 404 page unless ``token`` is a reset link still usable."""
    if not accounts.reset_link_live(ctx.repo, token):
        raise PageError(404, "Reset link not found", "This reset link is unknown, already used or expired: "
                                                     "ask for a new one at /reset.")  # fmt: skip


def register(app: FastAPI) -> None:
    """Add the profile and password routes to ``app``."""

    @app.get("/profile", response_class=HTMLResponse)
    def profile(ctx: Ctx = guard("profile")) -> HTMLResponse:
        return _profile(ctx, changed=ctx.request.query_params.get("changed") == "1")

    @app.post("/profile/password")
    def password_change(ctx: Ctx = guard("password_change")) -> Response:
        new, again = ctx.form.get("new_password", ""), ctx.form.get("new_password_again", "")
        if new != again:
            return _profile(ctx, 400, error="The two new passwords differ: type the same one twice.")
        try:
            accounts.change_password(ctx.repo, ctx.user or {}, ctx.form.get("current_password", ""), new)
        except AccountError as exc:
            message = str(exc)
            return _profile(ctx, 400, error=message[:1].upper() + message[1:] + ".")
        sessions.end_all(ctx.repo, ctx.user["id"])  # other browsers signed in as this user are signed out
        value = sessions.start(ctx.repo, ctx.user["id"], None)
        response = RedirectResponse("/profile?changed=1", status_code=303)
        sessions.set_cookie(ctx.request, response, value, signed_in=True)
        return response

    @app.get("/reset", response_class=HTMLResponse)
    def reset_form(ctx: Ctx = guard("password_reset")) -> HTMLResponse:
        return page(ctx, "reset.html", email="", error=None, sent=False)

    @app.post("/reset", response_class=HTMLResponse)
    def reset_request(ctx: Ctx = guard("password_reset")) -> HTMLResponse:
        email = ctx.form.get("email", "")
        limit = ctx.request.app.state.limits.get("reset", Limit(limit=3))
        if ratelimit.count(ctx.repo, "reset", limit, _ip(ctx), email):
            raise PageError(429, "Too many requests", "Too many reset requests from here or for this address. "
                                                      "Wait a minute and try again.")  # fmt: skip
        try:
            address, token = accounts.request_password_reset(ctx.repo, email)
        except AccountError as exc:
            return page(ctx, "reset.html", 400, email=email, error=f"Enter a valid e-mail address ({exc}).",
                        sent=False)  # fmt: skip
        _reset_mail(ctx, address, token)
        return page(ctx, "reset.html", email=address, error=None, sent=True)

    @app.get("/reset/{token}", response_class=HTMLResponse)
    def reset_choose(token: str, ctx: Ctx = guard("password_reset")) -> HTMLResponse:
        _live_reset_link(ctx, token)
        return page(ctx, "reset_password.html", token=token, error=None, done=False)

    @app.post("/reset/{token}", response_class=HTMLResponse)
    def reset_set(token: str, ctx: Ctx = guard("password_reset")) -> HTMLResponse:
        _live_reset_link(ctx, token)
        new, again = ctx.form.get("new_password", ""), ctx.form.get("new_password_again", "")
        if new != again:
            return page(ctx, "reset_password.html", 400, token=token, done=False,
                        error="The two new passwords differ: type the same one twice.")  # fmt: skip
        try:
            user_id = accounts.reset_password(ctx.repo, token, new)
        except AccountError as exc:
            message = str(exc)
            return page(ctx, "reset_password.html", 400, token=token, done=False,
                        error=message[:1].upper() + message[1:] + ".")  # fmt: skip
        sessions.end_all(ctx.repo, user_id)
        if ctx.uid == user_id:
            ctx.user = None  # this browser's session ended too
        return page(ctx, "reset_password.html", token="", error=None, done=True)

