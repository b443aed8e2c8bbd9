"""The request context every route gets from :func:`guard`: the session's user, the checked form, the policy decision.

:func:`guard` reads the form, finds the session, refuses a POST without the session's CSRF
token (403), and asks :func:`theorembench.web.policy.allowed` about the route's action (404
when denied, or the login page for an anonymous visitor who needs to sign in). A question
action is decided once the route has loaded its question: :meth:`Ctx.question` loads it and
asks the policy; a page of a question action that never asked is a programming error.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from fastapi import Depends, Request
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup
from starlette.concurrency import run_in_threadpool
from starlette.responses import HTMLResponse, RedirectResponse, Response

from theorembench.methods.improof.problems import OPEN_PROBLEM
from theorembench.store.accounts import AccountRepo
from theorembench.store.improof import ImproofRepo
from theorembench.web import csrf, sessions
from theorembench.web.policy import QUESTION_RULES, Subject, allowed, login_first, signed_in_enough
from theorembench.web.render import render_markdown
from theorembench.web.wording import points

HERE = Path(__file__).parent
MAX_BODY = 1_000_000
BASE_URL_ENV = "THEOREMBENCH_WEB_BASE_URL"


@dataclass
class Ctx:
    """What a route knows about its request: the user (None when anonymous), the form, the CSRF token."""

    request: Request
    repo: AccountRepo
    user: dict[str, Any] | None
    cookie: str
    csrf: str
    form: dict[str, str] = field(default_factory=dict)
    new_cookie: bool = False
    action: str = ""
    checked: bool = False

    @property
    def uid(self) -> str | None:
        return self.user["id"] if self.user else None

    def authorise(self, subject: Subject, action: str | None = None) -> None:
        """Ask the policy about this route's question action (or ``action``) on ``subject``: 404 when denied."""
        self.checked = True
        if not allowed(self.user, action or self.action, subject):
            raise PageError(404, "Not found", "There is no such page.")

    def question(self, problem_id: str, action: str | None = None, *,
                 review_id: int | None = None) -> tuple[dict[str, Any], Subject]:  # fmt: skip
        """Load a question (its row with the current ``payload``) and authorise ``action`` on it; 404 otherwise.

        With ``review_id`` the subject carries that review's reviewer (the review must belong to the question).
        """
        improof = ImproofRepo(self.repo.store)
        row = improof.problem(problem_id)
        version = improof.version(problem_id, row["current_version"]) if row else None
        review = self.repo.review_row(review_id) if review_id is not None else None
        if row is None or version is None or (review_id is not None and (review is None
                                                                       or review["problem_id"] != problem_id)):
            self.checked = True
            raise PageError(404, "Not found", "There is no such page.")
        reviewers, graders = self.repo.problem_relations(problem_id)
        payload = version["payload"]
        subject = Subject(author=row["author"], status=row["status"],
                          open_problem=OPEN_PROBLEM in (payload.get("tags") or []), reviewers=reviewers,
                          graders=graders, review_owner=review["reviewer_id"] if review else None)  # fmt: skip
        self.authorise(subject, action)
        return row | {"payload": payload}, subject

    def base_url(self) -> str:
        return (os.environ.get(BASE_URL_ENV) or str(self.request.base_url)).rstrip("/")


class PageError(Exception):
    """Answer with an error page: status, title and a one-line message."""

    def __init__(self, status: int, title: str, message: str):
        super().__init__(message)
        self.status, self.title, self.message = status, title, message


def templates() -> Environment:
    env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(default=True),
                      trim_blocks=True, lstrip_blocks=True)  # fmt: skip
    env.filters["markdown"] = lambda text: Markup(render_markdown(text))
    env.filters["points"] = points  # "1 point", "1.5 points": one wording everywhere
    return env


def page(ctx: Ctx, template: str, status: int = 200, **values: Any) -> HTMLResponse:
    """A full page from ``templates/`` (it extends ``base.html``), with the session cookie when it is new."""
    env: Environment = ctx.request.app.state.templates
    html = env.get_template(template).render(user=ctx.user, csrf_token=ctx.csrf, **values)
    return finish(ctx, HTMLResponse(html, status_code=status))


def redirect(ctx: Ctx, url: str) -> RedirectResponse:
    return finish(ctx, RedirectResponse(url, status_code=303))


def finish(ctx: Ctx, response: Response) -> Any:
    if ctx.action in QUESTION_RULES and not ctx.checked and response.status_code < 400:
        raise RuntimeError(f"route for {ctx.action!r} answered without asking the policy about its question")
    if ctx.new_cookie:
        sessions.set_cookie(ctx.request, response, ctx.cookie, signed_in=False)
    return response


async def _read_form(request: Request) -> dict[str, str]:
    if request.method != "POST":
        return {}
    body = await request.body()
    if len(body) > MAX_BODY:
        raise PageError(413, "Too large", "The submitted text is too long.")
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    text = body.decode("utf-8", errors="replace")
    if kind == "application/json":
        try:
            data = json.loads(text or "{}")
        except ValueError:
            raise PageError(400, "Bad request", "The request body is not valid JSON.") from None
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}
    try:
        return dict(parse_qsl(text, keep_blank_values=True, max_num_fields=200))
    except ValueError:
        raise PageError(413, "Too large", "The form has too many fields.") from None


def guard(action: str) -> Any:
    """The dependency of a route doing ``action``: session, CSRF check on POST, then the policy."""

    async def dependency(request: Request) -> Ctx:
        form = await _read_form(request)
        state = request.app.state
        cookie = sessions.cookie_value(request)
        user = await run_in_threadpool(sessions.session_user, state.repo, cookie)
        ctx = Ctx(request, state.repo, user, cookie or sessions.new_id(), "", form, new_cookie=cookie is None,
                  action=action)  # fmt: skip
        ctx.csrf = csrf.token_for(state.secret, ctx.cookie)
        request.state.ctx = ctx
        if request.method == "POST":
            sent = form.get(csrf.FIELD) or request.headers.get(csrf.HEADER)
            if not csrf.valid(state.secret, cookie, sent):
                raise PageError(403, "Form expired", "This form has expired or did not come from this site. "
                                                     "Reload the page and try again.")  # fmt: skip
        if not signed_in_enough(user, action):
            if login_first(user, action) and request.method == "GET":
                ctx.checked = True  # nothing of the question is shown: the visitor is sent to log in
                raise LoginFirst()
            raise PageError(404, "Not found", "There is no such page.")
        return ctx

    dependency.policy_action = action  # type: ignore[attr-defined] - read by the tests: every route is guarded
    return Depends(dependency)


class LoginFirst(Exception):
    """An anonymous visitor asked for a members' page: send them to the login page."""


def anonymous_ctx(request: Request) -> Ctx:
    """A context for pages answered before :func:`guard` ran (errors of unknown routes)."""
    cookie = sessions.cookie_value(request)
    state = request.app.state
    ctx = Ctx(request, state.repo, None, cookie or sessions.new_id(), "", new_cookie=cookie is None)
    ctx.csrf = csrf.token_for(state.secret, ctx.cookie)
    return ctx
