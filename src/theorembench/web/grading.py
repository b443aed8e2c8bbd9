"""Blind grading pages: a grader's questions, the three-column grading page, autosave of grades and notes, flags.

Who grades: the graders an administrator assigns, and the question's author, as in the paper. An author needs no
assignment: their first visit makes one (:func:`theorembench.web.blind.author_assignment`), with aliases drawn for
them alone, and each visit adds the answers of the next model tier once the ones they hold are final; the models
stay hidden from them exactly as from any grader.

What a grader may see is decided in :mod:`theorembench.web.blind`: aliases only, until all of
their answers for the question are final; from then on their grades there are frozen and a save is
kept as a correction (``"correction": true`` in the answer). The save routes take JSON from
``static/grading.js`` and answer JSON: ``{"revision": n, "graded": g, "to_grade": m, ...}``, or 409 with the stored
values when the page's revision is stale. A grade marked complete before every field is set is saved as incomplete,
and the answer adds ``"missing"``: the fields still to fill in, named as the page labels them.

``GET /grade/{pid}?after=<alias>`` opens the next answer still to grade after that one in the grader's page order
(the "Submit and next" button and the ``n`` key); the page order stays the random one, so "next" says nothing
about the model or its tier.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import FastAPI
from fastapi.responses import HTMLResponse, JSONResponse, Response

from theorembench.methods.improof.catalog import get_problem, list_problems
from theorembench.methods.improof.grades import INDICATOR_HELP, INDICATOR_LABELS, PROGRESS, StaleGrade
from theorembench.methods.improof.grades import INDICATORS as INDICATOR_NAMES
from theorembench.store.grading import GradingRepo
from theorembench.web import admin_grading, blind
from theorembench.web.context import Ctx, PageError, finish, guard, page, redirect
from theorembench.web.policy import GRADABLE, Subject

# (name, label, help): the eight indicators, mistakes first; the labels are the platform's one set (grades.py)
INDICATORS = tuple((name, INDICATOR_LABELS[name], INDICATOR_HELP[name]) for name in INDICATOR_NAMES)
FIELD_LABELS = {"progress": "Overall progress"} | {name: label for name, label, _ in INDICATORS}
CHOICES = (("true", "True"), ("false", "False"), ("not_sure", "Not sure"))
STATUS_LABELS = (("incomplete", "Incomplete"), ("complete", "Complete"), ("given_up", "Given up"))
# the grading page's keys: (keys, what they do); grading.js acts on the same keys
SHORTCUTS = (
    ("0 1 2 3", "Overall progress 0/3 to 3/3"),
    ("j / k", "Next / previous indicator (the marked row)"),
    ("t f s", "True, False or Not sure for the marked indicator, then on to the next one"),
    ("a", "N/A for Correct Result (open problems)"),
    ("h", "Show or hide what the marked indicator means"),
    ("c", "Write the comment (Esc leaves the text box)"),
    ("Ctrl+Enter", "Submit and next: mark complete, save, open the next answer still to grade"),
    ("n", "Next answer still to grade (saves first, without marking complete)"),
    ("r", "Show or hide the question and reference solution in focus mode"),
    ("?", "Show or hide this list"),
)  # fmt: skip


def _json(ctx: Ctx, body: dict[str, Any], status: int = 200) -> Response:
    return finish(ctx, JSONResponse(body, status_code=status, headers={"cache-control": "no-store"}))


def _grader(ctx: Ctx) -> str:
    return ctx.user["email"]


def _assignment(ctx: Ctx, pid: str, subject: Subject, *, refresh: bool = False) -> dict[str, Any] | None:
    """The signed-in user's assignment on the question; for its author, made or refreshed first when ``refresh``
    (the pages do; a save works on the answers its page showed)."""
    store = ctx.repo.store
    if refresh and subject.author is not None and subject.author == ctx.uid:
        rng = getattr(ctx.request.app.state, "grading_rng", None)
        return blind.author_assignment(store, pid, ctx.uid, _grader(ctx), rng=rng)
    return GradingRepo(store).assignment(pid, ctx.uid)


def _slots(ctx: Ctx, pid: str, subject: Subject) -> list[blind.Slot]:
    """The signed-in grader's answers to a question (none when not assigned)."""
    return blind.slots(ctx.repo.store, _assignment(ctx, pid, subject), _grader(ctx))


def _slot(found: list[blind.Slot], alias: str) -> blind.Slot:
    for slot in found:
        if slot.alias == alias:
            return slot
    raise PageError(404, "Not found", "There is no such answer.")


def next_to_grade(found: list[blind.Slot], after: str | None) -> blind.Slot | None:
    """The first answer not yet final after ``after`` in page order (going round); None when every one is final."""
    aliases = [s.alias for s in found]
    start = aliases.index(after) + 1 if after in aliases else 0
    for slot in found[start:] + found[:start]:
        if not slot.final:
            return slot
    return None


def _counts(found: list[blind.Slot]) -> dict[str, int]:
    return {"graded": sum(s.final for s in found), "to_grade": len(found)}


def _view(ctx: Ctx, pid: str, alias: str | None, *, status: int = 200, error: str | None = None,
          after: str | None = None) -> HTMLResponse:  # fmt: skip
    row, subject = ctx.question(pid, "grading_view")
    store = ctx.repo.store
    assignment = _assignment(ctx, pid, subject, refresh=True)
    found = blind.slots(store, assignment, _grader(ctx))
    first = found[0] if found else None
    if after is not None:  # the next answer still to grade; when none is left, the one just graded
        current = next_to_grade(found, after) or next((s for s in found if s.alias == after), first)
    else:
        current = _slot(found, alias) if alias else first
    following = next_to_grade(found, current.alias) if current else None
    reveal = blind.revealed(store, assignment, found)
    payload = row["payload"]
    return page(ctx, "grade.html", status, pid=pid, title=payload.get("title") or pid,
                statement=payload.get("statement", ""), solution=payload.get("solution", ""),
                slots=[s.public() for s in found], current=current.public() if current else None, reveal=reveal,
                open_problem=subject.open_problem, indicators=INDICATORS, choices=CHOICES, statuses=STATUS_LABELS,
                progress=sorted(PROGRESS.items()), notes=assignment["notes"] or "" if assignment else "",
                notes_revision=assignment["notes_revision"] if assignment else 1, error=error,
                following=following.alias if following and following is not current else None,
                counts=_counts(found), shortcuts=SHORTCUTS, as_author=subject.author == ctx.uid,
                flagged=ctx.request.query_params.get("flagged") == "1")  # fmt: skip


def _list_item(ctx: Ctx, pid: str, found: list[blind.Slot], *, own: bool) -> dict[str, Any]:
    problem = get_problem(ctx.repo.store, pid)
    return {"pid": pid, "title": problem.title, "status": problem.status, "open": problem.status in GRADABLE,
            "answers": len(found), "final": sum(s.final for s in found), "own": own}  # fmt: skip


def register(app: FastAPI) -> None:
    """Add the grading routes, and the admin's assignment and flag pages, to ``app``."""

    @app.get("/grade", response_class=HTMLResponse)
    def grading_list(ctx: Ctx = guard("grading_list")) -> HTMLResponse:
        store = ctx.repo.store
        items: dict[str, dict[str, Any]] = {}
        rng = getattr(ctx.request.app.state, "grading_rng", None)
        for problem in list_problems(store):  # the user's own live questions first: they grade their answers
            if problem["author"] == ctx.uid and problem["status"] in GRADABLE:
                assignment = blind.author_assignment(store, problem["id"], ctx.uid, _grader(ctx), rng=rng)
                items[problem["id"]] = _list_item(ctx, problem["id"], blind.slots(store, assignment, _grader(ctx)),
                                                  own=True)  # fmt: skip
        for assignment in GradingRepo(store).assignments(grader_id=ctx.uid):
            pid = assignment["problem_id"]
            if pid not in items:
                items[pid] = _list_item(ctx, pid, blind.slots(store, assignment, _grader(ctx)), own=False)
        rows = list(items.values())
        total = {"graded": sum(i["final"] for i in rows if i["open"]),
                 "to_grade": sum(i["answers"] for i in rows if i["open"])}  # fmt: skip
        return page(ctx, "grade_list.html", items=rows, total=total)

    @app.get("/grade/{pid}", response_class=HTMLResponse)
    def grading_view(pid: str, ctx: Ctx = guard("grading_view")) -> HTMLResponse:
        query = ctx.request.query_params
        return _view(ctx, pid, query.get("answer"), after=query.get("after"))

    @app.post("/grade/{pid}/notes")
    def grading_notes(pid: str, ctx: Ctx = guard("grading_save")) -> Response:
        _, subject = ctx.question(pid)
        store = ctx.repo.store
        if _assignment(ctx, pid, subject, refresh=True) is None:
            return _json(ctx, {"error": "This question has no answers to grade yet: notes open with the first."}, 404)
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
        _, subject = ctx.question(pid)
        found = _slots(ctx, pid, subject)
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
        found = _slots(ctx, pid, subject)
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
                "correction": slot.frozen, "final": slot.final} | _counts(found)  # fmt: skip
        if missing:
            labels = [FIELD_LABELS[name] for name in missing]
            body |= {"missing": [{"name": n, "label": FIELD_LABELS[n]} for n in missing],
                     "message": "Saved, but not yet complete: fill in " + ", ".join(labels) + "."}  # fmt: skip
        return _json(ctx, body)

    admin_grading.register(app)
