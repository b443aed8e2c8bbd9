"""Writing questions: the guidelines, the author's list, the editor, the question page and its status moves.

The store work is in plain functions (:func:`create_question`, :func:`save_question`, :func:`move_status`,
:func:`visible_questions`, :func:`people`); the routes add the policy and the forms. A question written
here is a problem of the improof catalogue whose row's ``author`` is the web user's id and whose content
names the author by email; versions are only ever added, status moves follow the catalogue's workflow.
A draft may be saved incomplete (no solution or ratings yet); it must be complete to be sent for review.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from fastapi import FastAPI
from fastapi.responses import HTMLResponse, Response

from theorembench.common.errors import UserError
from theorembench.evaluate.answers import KINDS
from theorembench.methods.improof.catalog import set_status
from theorembench.methods.improof.problems import DIFFICULTY, OPEN_PROBLEM, STATUSES, Problem, slugify
from theorembench.store.db import Store
from theorembench.store.improof import Conflict, ImproofRepo
from theorembench.web import jobs, reviews
from theorembench.web.context import Ctx, PageError, guard, page, redirect
from theorembench.web.policy import QUESTION_RULES, Subject, allowed, roles_of
from theorembench.web.question_form import (
    DIFFICULTY_HELP,
    QuestionForm,
    blank_form,
    from_payload,
    missing_for_review,
    read_form,
)

PIPELINE = ("draft", "under_review", "approved", "active")
STATUS_LABELS = {"draft": "Draft", "under_review": "Under review", "approved": "Approved", "active": "Active",
                 "retired": "Retired", "withdrawn": "Withdrawn"}  # fmt: skip
ADMIN_MOVES = ("approved", "active", "retired", "draft", "withdrawn")
PAGE_ACTIONS = ("question_edit", "question_submit", "question_status", "question_test", "review_invite")


class StaleVersion(UserError):
    """The question got a newer version since the editor was opened."""


# -- services -------------------------------------------------------------------------------------------------


def _problem(pid: str, content: dict[str, Any]) -> Problem:
    """The content checked by the catalogue's model (the form has checked it already: this is the last word)."""
    return Problem(id=pid, **content)


def _content(pid: str, form: QuestionForm, author: str | None) -> dict[str, Any]:
    """What a version stores: a complete form's content as the catalogue's model reads it; an incomplete draft's
    as the draft checks left it (the model's checks come when it is sent for review)."""
    content = form.content(author)
    if replace(form, errors={}).check():
        return content
    return _problem(pid, content).content()


def create_question(store: Store, form: QuestionForm, *, uid: str, author_name: str) -> str:
    """Store a form that passed the draft checks as a new draft by ``uid`` (named ``author_name`` in the content); returns its id.

    The id is the title's slug, with ``-2``, ``-3``, ... appended when taken.
    """
    base = slugify(form.title)[:70].strip("-")
    repo = ImproofRepo(store)
    for n in range(1, 1000):
        pid = base if n == 1 else f"{base}-{n}"
        if repo.problem(pid) is not None:
            continue
        payload = _content(pid, form, author_name)
        try:
            repo.create_problem(pid, status="draft", author=uid, payload=payload, actor=uid,
                                note=form.note.strip() or "created")  # fmt: skip
        except Conflict:
            continue  # someone took this id meanwhile: try the next one
        return pid
    raise UserError(f"too many questions titled like {form.title!r}: choose another title")


def save_question(store: Store, pid: str, form: QuestionForm, *, uid: str, base_version: int | None) -> int:
    """Add a version with the content of a form that passed the draft checks; returns its number (the current one when nothing changed).

    ``base_version`` is the version the editor showed: a different current version raises :class:`StaleVersion`.
    """
    repo = ImproofRepo(store)
    row = repo.problem(pid)
    current = repo.version(pid)
    if row is None or current is None:
        raise UserError(f"no question {pid}")
    if base_version is not None and base_version != row["current_version"]:
        raise StaleVersion(f"this question has a newer version ({row['current_version']}) than the one you edited "
                           f"({base_version}): open the editor again and redo your changes there")  # fmt: skip
    content = _content(pid, form, current["payload"].get("author"))
    if content == current["payload"]:
        return int(row["current_version"])
    return repo.add_version(pid, content, author=row["author"], actor=uid, note=form.note.strip())


def move_status(store: Store, pid: str, to: str, *, actor: str, note: str = "", admin: bool = False) -> dict:
    """A status move through the catalogue's workflow; the author may only submit, admins make the other moves.

    Approval also needs the reviews to allow it (:func:`~theorembench.web.reviews.approval_blocker`); a review
    asking for changes moves the question back to draft in its own transaction, so a review racing with the
    approval makes the approval's compare-and-set on "under review" fail instead of slipping past it.
    """
    allowed_targets = ADMIN_MOVES if admin else ("under_review",)
    if to not in allowed_targets:
        raise UserError(f"choose a new status among: {', '.join(STATUS_LABELS[s] for s in allowed_targets)}")
    repo = ImproofRepo(store)
    row = repo.problem(pid)
    if to in ("under_review", "approved", "active") and row is not None and row["status"] == "draft":
        found = repo.version(pid)
        missing = missing_for_review(found["payload"]) if found else []
        if missing:
            raise UserError("the question is not complete yet: fill in " + ", ".join(missing) + " in the editor")
    if to == "approved":
        blocker = reviews.approval_blocker(store, pid)
        if blocker is not None:
            raise UserError(blocker)
    return set_status(store, pid, to, actor, note.strip())


def visible_questions(ctx: Ctx, status: str | None = None) -> list[dict[str, Any]]:
    """The questions ``ctx.user`` may open: all for admins (optionally of one status), else their own and those
    they are invited to review."""
    admin = "admin" in roles_of(ctx.user)
    out = []
    for row in ImproofRepo(ctx.repo.store).problems(status if admin else None):
        mine = row["author"] == ctx.uid
        if not (admin or mine):
            reviewers, _ = ctx.repo.problem_relations(row["id"])
            if ctx.uid not in reviewers:
                continue
        payload = row["payload"]
        out.append({"id": row["id"], "title": payload.get("title") or row["id"], "status": row["status"],
                    "version": row["current_version"], "tags": payload.get("tags") or [],
                    "subquestions": len(payload.get("subquestions") or []), "updated_at": row["updated_at"],
                    "relation": "author" if mine else "admin" if admin else "reviewer"})  # fmt: skip
    out.sort(key=lambda q: -q["updated_at"])
    return out


def people(ctx: Ctx, ids: set[str | None]) -> dict[str | None, str]:
    """How each actor is shown on a question page. Admins see emails; others see "you", "an organiser", or "a
    reviewer"/"another user" (a review may be anonymous, so reviewers are never named to others here)."""
    admin = "admin" in roles_of(ctx.user)
    names: dict[str | None, str] = {None: "the system"}
    for uid in ids:
        if uid is None:
            continue
        user = ctx.repo.user(uid)
        if uid == ctx.uid:
            names[uid] = "you" if not admin else f"you ({user['email']})" if user else "you"
        elif user is None:
            names[uid] = uid if admin else "an import"
        elif admin:
            names[uid] = user["email"]
        elif "admin" in user["roles"]:
            names[uid] = "an organiser"
        else:
            names[uid] = "a reviewer" if "reviewer" in user["roles"] else "another user"
    return names


# -- pages ----------------------------------------------------------------------------------------------------


def _editor(ctx: Ctx, form: QuestionForm, status: int = 200, *, pid: str | None = None,
            base_version: int | None = None, message: str | None = None) -> HTMLResponse:  # fmt: skip
    return page(ctx, "question_edit.html", status, form=form, pid=pid, base_version=base_version, kinds=KINDS,
                difficulty_names=DIFFICULTY, difficulty_help=DIFFICULTY_HELP, message=message,
                open_problem_tag=OPEN_PROBLEM)  # fmt: skip


def _can(ctx: Ctx, subject: Subject) -> dict[str, bool]:
    return {action: allowed(ctx.user, action, subject) for action in PAGE_ACTIONS if action in QUESTION_RULES}


def _version_number(text: str | None) -> int | None:
    if text is None or text == "":
        return None
    if not text.isdigit() or len(text) > 9:
        raise PageError(404, "Not found", "There is no such version.")
    return int(text)


def _question_page(ctx: Ctx, problem: dict[str, Any], subject: Subject, version: int | None,
                   status: int = 200, error: str | None = None) -> HTMLResponse:  # fmt: skip
    repo = ImproofRepo(ctx.repo.store)
    pid = problem["id"]
    shown = repo.version(pid, version) if version is not None else None
    if version is not None and shown is None:
        raise PageError(404, "Not found", f"This question has no version {version}.")
    payload = shown["payload"] if shown else problem["payload"]
    versions = repo.versions(pid)
    events = repo.status_events(pid)
    names = people(ctx, {v["created_by"] for v in versions} | {e["actor"] for e in events})
    versions = [v | {"when": _when(v["created_at"])} for v in versions]
    events = [e | {"when": _when(e["at"])} for e in events]
    subs = list(payload.get("subquestions") or [])  # points printed by the ``points`` filter (web/wording.py)
    stage = PIPELINE.index(subject.status) if subject.status in PIPELINE else None
    values = {"pid": pid, "problem": problem, "payload": payload, "subject": subject, "can": _can(ctx, subject),
              "shown_version": shown["version"] if shown else problem["current_version"],
              "current_version": problem["current_version"], "versions": versions, "events": events,
              "names": names, "pipeline": PIPELINE, "stage": stage, "labels": STATUS_LABELS,
              "admin_moves": ADMIN_MOVES, "difficulty_names": DIFFICULTY, "error": error,
              "open_problem_tag": OPEN_PROBLEM, "subquestions": subs}  # fmt: skip
    values |= jobs.question_tests(ctx, problem, subject)
    values |= reviews.question_reviews(ctx, problem, subject)
    blocked = values["can"].get("question_status") and subject.status == "under_review"
    values["approval_blocker"] = reviews.approval_blocker(ctx.repo.store, pid) if blocked else None
    return page(ctx, "question.html", status, **values)


def _when(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(at))


def _author_name(ctx: Ctx) -> str:
    user = ctx.user or {}
    return str(user.get("display_name") or user.get("email") or ctx.uid)


def _base_version(text: str | None) -> int | None:
    return int(text) if text and text.isdigit() and len(text) < 10 else None


def register(app: FastAPI) -> None:
    """Add the authoring routes to ``app``."""

    @app.get("/guidelines", response_class=HTMLResponse)
    def guidelines(ctx: Ctx = guard("guidelines")) -> HTMLResponse:
        return page(ctx, "guidelines.html", kinds=KINDS, difficulty_names=DIFFICULTY, difficulty_help=DIFFICULTY_HELP,
                    open_problem_tag=OPEN_PROBLEM)  # fmt: skip

    @app.get("/questions", response_class=HTMLResponse)
    def questions(ctx: Ctx = guard("questions")) -> HTMLResponse:
        admin = "admin" in roles_of(ctx.user)
        status = ctx.request.query_params.get("status") or None
        if status is not None and status not in STATUSES:
            raise PageError(400, "Unknown status", f"There is no status {status!r}: use one of {', '.join(STATUSES)}.")
        return page(ctx, "questions.html", items=visible_questions(ctx, status), admin=admin, status_filter=status,
                    statuses=STATUSES, labels=STATUS_LABELS,
                    can_write=allowed(ctx.user, "question_new"))  # fmt: skip

    @app.get("/questions/new", response_class=HTMLResponse)
    def question_new_form(ctx: Ctx = guard("question_new")) -> HTMLResponse:
        return _editor(ctx, blank_form())

    @app.post("/questions/new", response_class=HTMLResponse)
    def question_new(ctx: Ctx = guard("question_new")) -> Response:
        form = read_form(ctx.form)
        if form.check(draft=True):
            return _editor(ctx, form, 400, message="Some fields need attention: see the messages below.")
        try:
            pid = create_question(ctx.repo.store, form, uid=ctx.uid, author_name=_author_name(ctx))
        except UserError as exc:
            return _editor(ctx, form, 400, message=str(exc))
        return redirect(ctx, f"/questions/{pid}")

    @app.get("/questions/{pid}", response_class=HTMLResponse)
    def question_view(pid: str, ctx: Ctx = guard("question_view")) -> HTMLResponse:
        problem, subject = ctx.question(pid)
        return _question_page(ctx, problem, subject, _version_number(ctx.request.query_params.get("version")))

    @app.get("/questions/{pid}/edit", response_class=HTMLResponse)
    def question_edit_form(pid: str, ctx: Ctx = guard("question_edit")) -> HTMLResponse:
        problem, _ = ctx.question(pid)
        return _editor(ctx, from_payload(problem["payload"]), pid=pid, base_version=problem["current_version"])

    @app.post("/questions/{pid}/edit", response_class=HTMLResponse)
    def question_edit(pid: str, ctx: Ctx = guard("question_edit")) -> Response:
        problem, _ = ctx.question(pid)
        form = read_form(ctx.form)
        base = _base_version(ctx.form.get("base_version"))
        if form.check(draft=True):
            return _editor(ctx, form, 400, pid=pid, base_version=base,
                           message="Some fields need attention: see the messages below.")  # fmt: skip
        try:
            save_question(ctx.repo.store, pid, form, uid=ctx.uid, base_version=base)
        except StaleVersion as exc:
            return _editor(ctx, form, 409, pid=pid, base_version=base, message=str(exc))
        return redirect(ctx, f"/questions/{pid}")

    @app.post("/questions/{pid}/submit", response_class=HTMLResponse)
    def question_submit(pid: str, ctx: Ctx = guard("question_submit")) -> Response:
        problem, subject = ctx.question(pid)
        try:
            move_status(ctx.repo.store, pid, "under_review", actor=ctx.uid, note=ctx.form.get("note", ""))
        except UserError as exc:
            return _question_page(ctx, problem, subject, None, 400, error=str(exc))
        return redirect(ctx, f"/questions/{pid}")

    @app.post("/questions/{pid}/status", response_class=HTMLResponse)
    def question_status(pid: str, ctx: Ctx = guard("question_status")) -> Response:
        problem, subject = ctx.question(pid)
        to = ctx.form.get("to", "")
        try:
            move_status(ctx.repo.store, pid, to, actor=ctx.uid, note=ctx.form.get("note", "")[:2000], admin=True)
        except UserError as exc:
            return _question_page(ctx, problem, subject, None, 400, error=f"Status not changed: {exc}.")
        return redirect(ctx, f"/questions/{pid}")
