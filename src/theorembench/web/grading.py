"""Blind grading pages: a grader's questions, the three-column grading page, autosave of grades and notes, flags.

What a grader may see is decided in :mod:`theorembench.web.blind`: aliases only, until all of
their answers for the question are final; from then on their grades there are frozen and a save is
kept as a correction (``"correction": true`` in the answer). The save routes take JSON from
``static/grading.js`` and answer JSON: ``{"revision": n, ...}``, or 409 with the stored values when the
page's revision is stale. A grade marked complete before every field is set is saved as incomplete, and the
answer adds ``"missing"``: the fields still to fill in, named as the page labels them.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import FastAPI
from fastapi.responses import HTMLResponse, JSONResponse, Response

from theorembench.methods.improof.catalog import get_problem
from theorembench.methods.improof.grades import PROGRESS, StaleGrade
from theorembench.store.grading import GradingRepo
from theorembench.web import admin_grading, blind
from theorembench.web.context import Ctx, PageError, finish, guard, page, redirect
from theorembench.web.policy import GRADABLE

# (name, label, tooltip): the eight indicators, mistakes first
INDICATORS = (
    ("incorrect_logic", "Incorrect logic", "A step does not follow, or the argument is invalid as written."),
    ("hallucinated", "Hallucinated", "Cites a theorem, paper or result that does not exist or says something else."),
    ("calculation", "Calculation", "An arithmetic or algebraic slip."),
    ("conceptual", "Conceptual", "Misunderstands a notion of the field at a basic level."),
    ("understanding", "Understanding", "States correctly what has to be shown or computed."),
    ("correct_result", "Correct result", "Reaches the right final answer (N/A: open problem, answer unknown)."),
    ("insight", "Insight", "Contains an idea or approach a mathematician would find worth noting."),
    ("usefulness", "Usefulness", "Would help someone working on or learning this problem."),
)  # fmt: skip
FIELD_LABELS = {"progress": "Overall progress"} | {name: label for name, label, _ in INDICATORS}
CHOICES = (("true", "True"), ("false", "False"), ("not_sure", "Not sure"))
STATUS_LABELS = (("incomplete", "Incomplete"), ("complete", "Complete"), ("given_up", "Given up"))


def _json(ctx: Ctx, body: dict[str, Any], status: int = 200) -> Response:
    return finish(ctx, JSONResponse(body, status_code=status, headers={"cache-control": "no-store"}))


def _grader(ctx: Ctx) -> str:
    return ctx.user["email"]


def _slots(ctx: Ctx, pid: str) -> list[blind.Slot]:
    """The signed-in grader's answers to a question (none when not assigned)."""
    return blind.slots(ctx.repo.store, GradingRepo(ctx.repo.store).assignment(pid, ctx.uid), _grader(ctx))


def _slot(found: list[blind.Slot], alias: str) -> blind.Slot:
    for slot in found:
        if slot.alias == alias:
            return slot
    raise PageError(404, "Not found", "There is no such answer.")


def _view(ctx: Ctx, pid: str, alias: str | None, *, status: int = 200, error: str | None = None) -> HTMLResponse:
    row, subject = ctx.question(pid, "grading_view")
    store = ctx.repo.store
    assignment = GradingRepo(store).assignment(pid, ctx.uid)
    found = blind.slots(store, assignment, _grader(ctx))
    current = _slot(found, alias) if alias else (found[0] if found else None)
    reveal = blind.revealed(store, assignment, found)
    payload = row["payload"]
    return page(ctx, "grade.html", status, pid=pid, title=payload.get("title") or pid,
                statement=payload.get("statement", ""), solution=payload.get("solution", ""),
                slots=[s.public() for s in found], current=current.public() if current else None, reveal=reveal,
                open_problem=subject.open_problem, indicators=INDICATORS, choices=CHOICES, statuses=STATUS_LABELS,
                progress=sorted(PROGRESS.items()), notes=assignment["notes"] or "",
                notes_revision=assignment["notes_revision"], error=error,
                flagged=ctx.request.query_params.get("flagged") == "1")  # fmt: skip


def register(app: FastAPI) -> None:
    """Add the grading routes, and the admin's assignment and flag pages, to ``app``."""

    @app.get("/grade", response_class=HTMLResponse)
    def grading_list(ctx: Ctx = guard("grading_list")) -> HTMLResponse:
        store = ctx.repo.store
        items = []
        for assignment in GradingRepo(store).assignments(grader_id=ctx.uid):
            pid = assignment["problem_id"]
            found = blind.slots(store, assignment, _grader(ctx))
            problem = get_problem(store, pid)
            items.append({"pid": pid, "title": problem.title, "status": problem.status,
                          "open": problem.status in GRADABLE, "answers": len(found),
                          "final": sum(s.final for s in found)})  # fmt: skip
        return page(ctx, "grade_list.html", items=items)

    @app.get("/grade/{pid}", response_class=HTMLResponse)
    def grading_view(pid: str, ctx: Ctx = guard("grading_view")) -> HTMLResponse:
        return _view(ctx, pid, ctx.request.query_params.get("answer"))

    @app.post("/grade/{pid}/notes")
    def grading_notes(pid: str, ctx: Ctx = guard("grading_save")) -> Response:
        ctx.question(pid)
        store = ctx.repo.store
        try:
            revision = blind.save_notes(store, pid, ctx.uid, ctx.form.get("notes", ""), ctx.form.get("revision"))
        except blind.BadGrade as exc:
            return _json(ctx, {"error": str(exc)}, 400)
        except StaleGrade:
            assignment = GradingRepo(store).assignment(pid, ctx.uid)
            return _json(ctx, {"error": "Your notes were changed elsewhere since this page was loaded: keep yours, take theirs or merge.",
                               "current": {"notes": assignment["notes"] or "",
                                           "revision": assignment["notes_revision"]}}, 409)  # fmt: skip
        return _json(ctx, {"revision": revision})

    @app.post("/grade/{pid}/flag")
    def grading_flag(pid: str, ctx: Ctx = guard("grading_flag")) -> Response:
        ctx.question(pid)
        found = _slots(ctx, pid)
        alias = ctx.form.get("alias", "")
        try:
            blind.flag(ctx.repo.store, pid, ctx.uid, found, alias, ctx.form.get("message", ""))
        except blind.BadGrade as exc:
            return _view(ctx, pid, alias if any(s.alias == alias for s in found) else None, status=400,
                         error=str(exc))  # fmt: skip
        where = f"answer={quote(alias)}&" if alias else ""
        return redirect(ctx, f"/grade/{quote(pid)}?{where}flagged=1")

    @app.post("/grade/{pid}/{alias}")
    def grading_save(pid: str, alias: str, ctx: Ctx = guard("grading_save")) -> Response:
        _, subject = ctx.question(pid)
        store = ctx.repo.store
        found = _slots(ctx, pid)
        slot = _slot(found, alias)
        try:
            grade, missing = blind.save(store, slot, _grader(ctx), ctx.form, open_problem=subject.open_problem)
        except blind.BadGrade as exc:
            return _json(ctx, {"error": str(exc)}, 400)
        except StaleGrade:
            return _json(ctx, {"error": f"Answer {alias} was saved elsewhere since this page was loaded: keep yours, take theirs or merge.",
                               "current": blind.current_grade(store, slot, _grader(ctx))}, 409)  # fmt: skip
        if slot.frozen:
            slot.correction = grade
        else:
            slot.grade = grade
        body = {"revision": grade.revision, "status": grade.status, "all_final": blind.all_final(found),
                "correction": slot.frozen}  # fmt: skip
        if missing:
            labels = [FIELD_LABELS[name] for name in missing]
            body |= {"missing": [{"name": n, "label": FIELD_LABELS[n]} for n in missing],
                     "message": "Saved, but not yet complete: fill in " + ", ".join(labels) + "."}  # fmt: skip
        return _json(ctx, body)

    admin_grading.register(app)
