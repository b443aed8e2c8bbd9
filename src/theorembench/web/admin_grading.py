"""The organisers' side of grading: assign graders to active questions (and refresh their answers), see flags.

Only answers for human graders are assigned (agentic, tiers 1–3 and models without a tier; see
:mod:`theorembench.methods.improof.grading_queue`); the page counts those left out. An optional cap on a grader's
answers takes the highest-priority ones (tier 1 first). A question's author grades it without being assigned (see
:mod:`theorembench.web.grading`); the page lists them among its graders, marked.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import FastAPI
from fastapi.responses import HTMLResponse, Response

from theorembench.methods.improof.catalog import list_problems
from theorembench.methods.improof.grading_queue import left_out_answers
from theorembench.store.grading import GradingRepo
from theorembench.store.improof import Conflict, ImproofRepo
from theorembench.store.reviews import users_with_roles
from theorembench.web import blind
from theorembench.web.context import Ctx, PageError, guard, page, redirect
from theorembench.web.policy import GRADABLE


def _questions(ctx: Ctx) -> list[dict[str, Any]]:
    store = ctx.repo.store
    grading = GradingRepo(store)
    out = []
    for problem in list_problems(store, "active"):
        pid = problem["id"]
        graders = []
        for assignment in grading.assignments(problem_id=pid):
            user = ctx.repo.user(assignment["grader_id"])
            email = user["email"] if user else assignment["grader_id"]
            graders.append(blind.progress(store, assignment, email)
                           | {"author": assignment["grader_id"] == problem["author"]})  # the author grades too
        out.append({"id": pid, "title": problem["title"], "answers": len(blind.gradable_answers(store, pid)),
                    "left_out": len(left_out_answers(store, pid)), "graders": graders})  # fmt: skip
    return out


def _admin_page(ctx: Ctx, status: int = 200, error: str | None = None) -> HTMLResponse:
    graders = [u["email"] for u in users_with_roles(ctx.repo.store, "grader") if u["verified"]]  # the picker
    return page(ctx, "admin_grading.html", status, questions=_questions(ctx), error=error,
                assigned=ctx.request.query_params.get("assigned"), grader_choices=graders)  # fmt: skip


def register(app: FastAPI) -> None:
    """Add ``/admin/grading`` and ``/admin/flags`` to ``app``."""

    @app.get("/admin/grading", response_class=HTMLResponse)
    def admin_grading(ctx: Ctx = guard("admin_grading")) -> HTMLResponse:
        return _admin_page(ctx)

    @app.post("/admin/grading")
    def admin_grading_assign(ctx: Ctx = guard("admin_grading_assign")) -> Response:
        pid = ctx.form.get("problem_id", "").strip()
        email = ctx.form.get("email", "").strip().lower()
        problem = ImproofRepo(ctx.repo.store).problem(pid)
        if problem is None or problem["status"] not in GRADABLE:
            return _admin_page(ctx, 400, f"Question {pid!r} is not active: only active questions can be graded.")
        user = ctx.repo.user_by_email(email)
        if user is None or not user["verified"] or "grader" not in user["roles"]:
            return _admin_page(ctx, 400, f"{email or 'That address'} is not a verified user with the grader role: "
                                         "invite them as a grader from the outbox page first.")  # fmt: skip
        limit_text = ctx.form.get("limit", "").strip()
        if limit_text and (not limit_text.isdigit() or int(limit_text) < 1):
            return _admin_page(ctx, 400, "The number of answers per grader must be a whole number, at least 1.")
        rng = getattr(ctx.request.app.state, "grading_rng", None)
        try:
            blind.assign(ctx.repo.store, pid, user["id"], by=ctx.uid, rng=rng,
                         limit=int(limit_text) if limit_text else None)  # fmt: skip
        except Conflict:  # the grader's answers changed meanwhile (another refresh, or their reveal)
            return _admin_page(ctx, 409, f"The answers of {email} on {pid} changed meanwhile: assign again.")
        return redirect(ctx, f"/admin/grading?assigned={quote(email)}")

    @app.get("/admin/flags", response_class=HTMLResponse)
    def admin_flags(ctx: Ctx = guard("admin_flags")) -> HTMLResponse:
        store = ctx.repo.store
        rows = []
        for flag in GradingRepo(store).flags():
            user = ctx.repo.user(flag["user_id"])
            answer = ImproofRepo(store).answer(flag["answer_id"]) if flag["answer_id"] else None
            assignment = GradingRepo(store).assignment(flag["problem_id"], flag["user_id"])
            aliases = {e["answer_id"]: e["alias"] for e in (assignment["answer_order"] if assignment else [])}
            rows.append(flag | {"email": user["email"] if user else flag["user_id"],
                                "model": answer["model"] if answer else None,
                                "alias": aliases.get(flag["answer_id"]) if flag["answer_id"] else None})  # fmt: skip
        return page(ctx, "admin_flags.html", flags=rows)

    @app.post("/admin/flags/{flag_id}/resolve")
    def admin_flag_resolve(flag_id: int, ctx: Ctx = guard("admin_flag_resolve")) -> Response:
        repo = GradingRepo(ctx.repo.store)
        if repo.flag(flag_id) is None:
            raise PageError(404, "Not found", "There is no such flag.")
        repo.resolve_flag(flag_id, ctx.uid)
        return redirect(ctx, "/admin/flags")
