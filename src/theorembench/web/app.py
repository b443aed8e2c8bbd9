"""The IMProofBench platform as a FastAPI app: server-rendered pages over the store.

:func:`create_app` opens the store, mounts ``/static`` (``app.js``, CSS) and ``/static/katex``
(the local KaTeX install that :mod:`theorembench.latex.check` finds), and registers the routes.
Every route asks :func:`theorembench.web.context.guard` for its request context: the session's
user, the CSRF check of every POST, and the policy decision for its action.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Sequence
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.staticfiles import StaticFiles
from starlette.responses import HTMLResponse, PlainTextResponse, Response

from theorembench.common.errors import UserError
from theorembench.store.accounts import AccountRepo
from theorembench.store.db import Store
from theorembench.web import (
    admin_stats,
    assignments,
    authoring,
    evaluations,
    grading,
    jobs,
    pages,
    review_invitations,
    review_rounds,
    reviews,
)
from theorembench.web.context import HERE, Ctx, LoginFirst, PageError, anonymous_ctx, guard, page, redirect, templates
from theorembench.web.outbox import smtp_problem
from theorembench.web.ratelimit import DEFAULT_LIMITS
from theorembench.web.render import MAX_CHARS, render_markdown
from theorembench.web.security import SecurityHeaders


def _katex_dir(static_katex: str | Path | None) -> Path | None:
    if static_katex is not None:
        path = Path(static_katex)
        return path / "dist" if (path / "dist" / "katex.min.js").is_file() else path
    from theorembench.latex.check.engines import katex_dir

    found = katex_dir()
    return found / "dist" if found else None


MODELS_ENV = "THEOREMBENCH_PLATFORM_MODELS"
DEFAULT_MODEL = "local/smollm2"


def platform_models(models: Sequence[str] | None = None) -> list[str]:
    """The models authors and admins may pick: ``models``, else ``$THEOREMBENCH_PLATFORM_MODELS`` (comma-separated),
    else the embedded model."""
    if models:
        return list(dict.fromkeys(models))
    listed = [m.strip() for m in os.environ.get(MODELS_ENV, "").split(",") if m.strip()]
    return list(dict.fromkeys(listed)) or [DEFAULT_MODEL]


def create_app(db: str | None = None, *, secret_key: str | None = None, smtp_url: str | None = None,
               static_katex: str | Path | None = None, models: Sequence[str] | None = None, workers: int = 1,
               work_dir: str | Path | None = None) -> FastAPI:  # fmt: skip
    """The platform over the store ``db`` (a path or URL; the default store when None).

    ``secret_key`` keys the CSRF tokens (a random one per process when None: forms then expire
    on restart); ``smtp_url`` sends the outbox's mails too (see :mod:`theorembench.web.outbox`);
    ``static_katex`` is the KaTeX package or its ``dist`` folder (default: the local install).
    ``models`` are the models offered for tests and evaluations (see :func:`platform_models`);
    ``workers`` background threads run the queued jobs (0: none; tests then run them by hand);
    ``work_dir`` holds the jobs' output files (default: a ``platform`` folder in the project home).
    """
    problem = smtp_problem(smtp_url)
    if problem:
        raise UserError(problem)
    from theorembench.store import open_store

    store: Store = open_store(db)
    app = FastAPI(title="IMProofBench", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.store = store
    app.state.repo = AccountRepo(store)
    app.state.secret = (secret_key or secrets.token_hex(32)).encode()
    app.state.smtp_url = smtp_url
    app.state.limits = dict(DEFAULT_LIMITS)
    app.state.templates = templates()
    app.state.models = platform_models(models)
    app.state.work_dir = Path(work_dir) if work_dir is not None else None

    app.add_middleware(SecurityHeaders)
    katex = _katex_dir(static_katex)
    if katex is not None and katex.is_dir():
        app.mount("/static/katex", StaticFiles(directory=katex), name="katex")
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")

    @app.exception_handler(PageError)
    async def page_error(request: Request, exc: PageError) -> Response:
        ctx = getattr(request.state, "ctx", None) or anonymous_ctx(request)
        return page(ctx, "error.html", exc.status, title=exc.title, message=exc.message)

    @app.exception_handler(LoginFirst)
    async def login_first_handler(request: Request, exc: LoginFirst) -> Response:
        return redirect(request.state.ctx, "/login")

    @app.exception_handler(404)
    async def not_found(request: Request, exc: Exception) -> Response:
        return await page_error(request, PageError(404, "Not found", "There is no such page."))

    @app.get("/healthz", dependencies=[guard("healthz")])
    def healthz() -> PlainTextResponse:
        return PlainTextResponse("ok")

    @app.post("/preview")
    def preview(ctx: Ctx = guard("preview")) -> HTMLResponse:
        text = ctx.form.get("text", "")
        if len(text) > MAX_CHARS:
            raise PageError(413, "Too large", f"The text may have at most {MAX_CHARS} characters.")
        return HTMLResponse(render_markdown(text))

    for module in (pages, authoring, reviews, evaluations, grading, admin_stats):
        module.register(app)
    for module in (review_invitations, review_rounds, assignments):  # reviewing: invitations, rounds, bulk
        module.register(app)
    if workers > 0:
        app.router.on_startup.append(lambda: jobs.start_workers(app, workers))
        app.router.on_shutdown.append(lambda: jobs.stop_workers(app))
    app.router.on_shutdown.append(store.close)
    return app
