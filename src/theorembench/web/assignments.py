"""Bulk assignment: several questions at once to one person, to review (questions under review) or to grade
(active questions).

The person is picked from the platform's users (a list filtered as one types) or, for reviews, typed as any
address: each review then goes through the one-step invitation of :mod:`theorembench.web.review_invitations` (a
verified reviewer is invited directly, anyone else by e-mail, one invitation per question). Grading needs a
verified grader and uses the blind assignment of :mod:`theorembench.web.blind`. Every question gets its own line
in the outcome, so one refusal never hides the others.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.responses import HTMLResponse

from theorembench.methods.improof.catalog import list_problems
from theorembench.store.improof import Conflict
from theorembench.store.reviews import users_with_roles
from theorembench.web import blind
from theorembench.web.accounts import AccountError, normalise_email
from theorembench.web.context import Ctx, guard, page
from theorembench.web.review_invitations import invite_by_email, mail_invitation
from theorembench.web.reviews import ReviewError

TASKS = {"review": "under_review", "grade": "active"}


def people(ctx: Ctx) -> list[dict[str, str]]:
    """The picker's entries: verified users holding the reviewer or grader role, by email."""
    out = []
    for user in users_with_roles(ctx.repo.store):
        roles = [r for r in user["roles"] if r in ("reviewer", "grader")]
        if user["verified"] and roles:
            out.append({"email": user["email"], "roles": ", ".join(roles)})
    return out


def _questions(ctx: Ctx) -> dict[str, list[dict[str, Any]]]:
    return {task: list_problems(ctx.repo.store, status) for task, status in TASKS.items()}


def _assign_grading(ctx: Ctx, pid: str, email: str) -> str:
    user = ctx.repo.user_by_email(email)
    if user is None or not user["verified"] or "grader" not in user["roles"]:
        return f"not assigned to grade: {email} is not a verified grader (invite them as a grader first)"
    rng = getattr(ctx.request.app.state, "grading_rng", None)
    try:
        order = blind.assign(ctx.repo.store, pid, user["id"], by=ctx.uid, rng=rng)
    except Conflict:
        return "not assigned to grade: its answers changed meanwhile, assign again"
    return f"assigned to grade ({len(order)} answer{'' if len(order) == 1 else 's'})"


def _invite_review(ctx: Ctx, pid: str, email: str) -> str:
    try:
        kind, ref = invite_by_email(ctx.repo.store, pid, email, by=ctx.uid)
    except ReviewError as exc:
        return f"not invited: {exc}"
    mail_invitation(ctx, pid, email, kind, ref)
    return "invited to review" if kind == "review" else "invited to review by e-mail (no account yet)"


def register(app: FastAPI) -> None:
    """Add ``/admin/assign`` to ``app``."""

    def show(ctx: Ctx, status: int = 200, *, email: str = "", outcome: list[dict[str, str]] | None = None,
             error: str | None = None, ticked: frozenset[str] = frozenset()) -> HTMLResponse:  # fmt: skip
        return page(ctx, "admin_assign.html", status, people=people(ctx), questions=_questions(ctx), email=email,
                    outcome=outcome or [], error=error, ticked=ticked)  # fmt: skip

    @app.get("/admin/assign", response_class=HTMLResponse)
    def admin_assign_form(ctx: Ctx = guard("admin_assign")) -> HTMLResponse:
        return show(ctx, email=ctx.request.query_params.get("email", "")[:254])

    @app.post("/admin/assign", response_class=HTMLResponse)
    def admin_assign(ctx: Ctx = guard("admin_assign")) -> HTMLResponse:
        ticked = frozenset(k for k, v in ctx.form.items() if v and k.partition(":")[0] in TASKS)
        try:
            email = normalise_email(ctx.form.get("email", ""))
        except AccountError:
            return show(ctx, 400, email=ctx.form.get("email", "")[:254], ticked=ticked,
                        error="Pick a person: enter the e-mail address of the reviewer or grader.")  # fmt: skip
        if not ticked:
            return show(ctx, 400, email=email, error="Tick at least one question to review or to grade.")
        outcome = []
        for task, status in TASKS.items():
            live = {q["id"]: q for q in list_problems(ctx.repo.store, status)}
            for key in sorted(k for k in ticked if k.startswith(task + ":")):
                pid = key.partition(":")[2]
                if pid not in live:
                    done = f"not done: the question is no longer {status.replace('_', ' ')}"
                elif task == "review":
                    done = _invite_review(ctx, pid, email)
                else:
                    done = _assign_grading(ctx, pid, email)
                ok = not done.startswith("not ")
                outcome.append({"id": pid, "title": (live.get(pid) or {}).get("title") or pid, "task": task,
                                "text": done, "ok": "yes" if ok else "no"})  # fmt: skip
        return show(ctx, email=email, outcome=outcome)
