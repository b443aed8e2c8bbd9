"""The foundation's pages: dashboard, sign-up and verification, login and logout, invitations, the outbox.

The profile and password pages are :mod:`theorembench.web.account_pages`; About, privacy and the contributor
list are :mod:`theorembench.web.info_pages`.
"""

from __future__ import annotations

import re
from urllib.parse import quote

from fastapi import FastAPI
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from theorembench.methods.improof.problems import STATUSES
from theorembench.web import account_pages, accounts, info_pages, ratelimit, sessions
from theorembench.web.accounts import ROLES, AccountError
from theorembench.web.context import Ctx, PageError, guard, page, redirect
from theorembench.web.outbox import send_mail

_URL = re.compile(r"https?://[^\s<>\"']+")


def _ip(ctx: Ctx) -> str:
    client = ctx.request.client
    return client.host if client else "unknown"


def _limited(kind: str) -> PageError:
    return PageError(429, "Too many attempts", f"Too many {kind} attempts from here or for this address. "
                                               "Wait a minute and try again.")  # fmt: skip


def _mail(ctx: Ctx, to: str, subject: str, body: str) -> None:
    send_mail(ctx.repo, to, subject, body, ctx.request.app.state.smtp_url)


def register(app: FastAPI) -> None:
    """Add the foundation's routes to ``app``, with the account pages (profile, password) and the project's pages."""
    account_pages.register(app)
    info_pages.register(app)

    @app.get("/review-guidelines", response_class=HTMLResponse)
    def review_guidelines(ctx: Ctx = guard("review_guidelines")) -> HTMLResponse:
        return page(ctx, "review_guidelines.html")

    @app.get("/", response_class=HTMLResponse)
    def dashboard(ctx: Ctx = guard("dashboard")) -> HTMLResponse:
        counts = ctx.repo.problem_status_counts()
        statuses = [(s, counts.get(s, 0)) for s in STATUSES]
        return page(ctx, "dashboard.html", contributors=ctx.repo.count_role("contributor"), statuses=statuses,
                    total=sum(counts.values()))  # fmt: skip

    @app.get("/signup", response_class=HTMLResponse)
    def signup_form(ctx: Ctx = guard("signup")) -> HTMLResponse:
        return page(ctx, "signup.html", email="", error=None)

    @app.post("/signup", response_class=HTMLResponse)
    def signup(ctx: Ctx = guard("signup")) -> HTMLResponse:
        email, password = ctx.form.get("email", ""), ctx.form.get("password", "")
        if ratelimit.count(ctx.repo, "signup", ctx.request.app.state.limits["signup"], _ip(ctx), email):
            raise _limited("sign-up")
        try:
            address, token = accounts.sign_up(ctx.repo, email, password)
        except AccountError as exc:
            return page(ctx, "signup.html", 400, email=email, error=str(exc))
        if token is None:  # the address has an account: tell its owner, show the same page as for a new one
            _mail(ctx, address, "IMProofBench: sign-up attempt",
                  "Someone tried to sign up to IMProofBench with this address, which has an account already.\n"
                  f"If it was you, log in at {ctx.base_url()}/login\n")  # fmt: skip
        else:
            _mail(ctx, address, "IMProofBench: confirm your email address",
                  f"Open this link to confirm your address (valid for 2 days, once):\n"
                  f"{ctx.base_url()}/verify/{token}\n")  # fmt: skip
        return page(ctx, "signup_done.html", email=address)

    @app.get("/verify/{token}", response_class=HTMLResponse)
    def verify(token: str, ctx: Ctx = guard("verify")) -> HTMLResponse:
        user = accounts.verify_email(ctx.repo, token)
        return page(ctx, "verify.html", 200 if user else 404, verified=user is not None)

    @app.get("/login", response_class=HTMLResponse)
    def login_form(ctx: Ctx = guard("login")) -> HTMLResponse:
        return page(ctx, "login.html", email="", error=None)

    @app.post("/login")
    def login(ctx: Ctx = guard("login")) -> Response:
        email, password = ctx.form.get("email", ""), ctx.form.get("password", "")
        limit = ctx.request.app.state.limits["login"]
        if ratelimit.exceeded(ctx.repo, "login", limit, _ip(ctx), email):
            raise _limited("login")
        user = accounts.authenticate(ctx.repo, email, password)
        if user is None:
            ratelimit.count(ctx.repo, "login", limit, _ip(ctx), email)
            return page(ctx, "login.html", 401, email=email, error="Wrong email or password.")
        if not user["verified"]:
            return page(ctx, "login.html", 403, email=email,
                        error="Confirm your email address first: open the link in the mail we sent.")  # fmt: skip
        value = sessions.start(ctx.repo, user["id"], sessions.cookie_value(ctx.request))
        response = RedirectResponse("/", status_code=303)
        sessions.set_cookie(ctx.request, response, value, signed_in=True)
        return response

    @app.post("/logout")
    def logout(ctx: Ctx = guard("logout")) -> RedirectResponse:
        value = sessions.end(ctx.repo, sessions.cookie_value(ctx.request))
        response = RedirectResponse("/", status_code=303)
        sessions.set_cookie(ctx.request, response, value, signed_in=False)
        return response

    @app.get("/invite/{token}", response_class=HTMLResponse)
    def invite_form(token: str, ctx: Ctx = guard("invite")) -> HTMLResponse:
        row = accounts.invitation(ctx.repo, token)
        if row is None:
            raise PageError(404, "Invitation not found", "This invitation link is unknown, already used or expired.")
        has_account = ctx.repo.user_by_email(row["email"]) is not None
        return page(ctx, "invite.html", invitation=row, token=token, has_account=has_account, error=None)

    @app.post("/invite/{token}", response_class=HTMLResponse)
    def invite_accept(token: str, ctx: Ctx = guard("invite")) -> HTMLResponse:
        row = accounts.invitation(ctx.repo, token)
        if row is None:
            raise PageError(404, "Invitation not found", "This invitation link is unknown, already used or expired.")
        try:
            accounts.accept_invitation(ctx.repo, token, user=ctx.user, password=ctx.form.get("password"))
        except AccountError as exc:
            has_account = ctx.repo.user_by_email(row["email"]) is not None
            return page(ctx, "invite.html", 400, invitation=row, token=token, has_account=has_account,
                        error=str(exc))  # fmt: skip
        return page(ctx, "invite_done.html", invitation=row)

    @app.get("/admin/outbox", response_class=HTMLResponse)
    def admin_outbox(ctx: Ctx = guard("admin_outbox")) -> HTMLResponse:
        mails = [m | {"links": _URL.findall(m["body"])} for m in ctx.repo.mails()]
        invited = ctx.request.query_params.get("invited")
        return page(ctx, "outbox.html", mails=mails, roles=ROLES, invited=invited, error=None)

    @app.post("/admin/invite", response_class=HTMLResponse)
    def admin_invite(ctx: Ctx = guard("admin_invite")) -> Response:
        email, role = ctx.form.get("email", ""), ctx.form.get("role", "")
        try:
            token = accounts.invite(ctx.repo, email, role, by=ctx.user["id"])
        except AccountError as exc:
            mails = [m | {"links": _URL.findall(m["body"])} for m in ctx.repo.mails()]
            return page(ctx, "outbox.html", 400, mails=mails, roles=ROLES, invited=None, error=str(exc))
        address = accounts.normalise_email(email)
        _mail(ctx, address, f"IMProofBench: invitation as {role}",
              f"You are invited to IMProofBench as {role}. Open this link to accept (valid for 7 days, once):\n"
              f"{ctx.base_url()}/invite/{token}\n")  # fmt: skip
        return redirect(ctx, f"/admin/outbox?invited={quote(address)}")
