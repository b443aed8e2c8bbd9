"""Model tests of a question, job pages, and the administrators' evaluations with verdict checks.

Routes: ``POST /questions/{pid}/test`` (question_test), ``GET /jobs/{job_id}`` (job_view),
``GET|POST /admin/evaluations`` (admin_evaluations, admin_eval_launch: the jobs launched here and every run in the
store, :mod:`theorembench.web.evaluation_runs`), ``GET /admin/evaluations/{job_id}`` (admin_eval_view) and ``POST /admin/answers/{answer_id}/verdicts/{sub_index}`` (admin_verdict).
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.responses import HTMLResponse, Response

from theorembench.common.errors import UserError
from theorembench.methods.improof import autograde
from theorembench.methods.improof.answers import get_answer
from theorembench.methods.improof.catalog import list_problems
from theorembench.store.jobs import JobRepo
from theorembench.web import evaluation_runs, jobs
from theorembench.web.context import Ctx, PageError, guard, page, redirect
from theorembench.web.policy import Subject

_NOT_FOUND = ("Not found", "There is no such page.")
_VERDICTS = {"true": True, "false": False, "none": None}


def _line(exc: Exception) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _eval_list(ctx: Ctx, status: int = 200, error: str | None = None, form: dict[str, str] | None = None) -> Any:
    store = ctx.repo.store
    evaluations = [jobs.job_view(j) for j in JobRepo(store).jobs(kind="evaluation")]
    return page(ctx, "admin_evaluations.html", status, evaluations=evaluations, runs=evaluation_runs.store_runs(store),
                models=ctx.request.app.state.models,
                modes=jobs.MODES, problems=list_problems(store, status="active"), error=error,
                form=form or {"main_tokens": "300000", "sub_tokens": "100000", "epochs": "1", "scope": "all"})


def evaluation_answers(store: Any, job: dict[str, Any]) -> list[dict[str, Any]]:
    """The answers a finished evaluation recorded, each with its effective subquestion verdicts."""
    answers = [get_answer(store, answer_id) for answer_id in (job.get("result") or {}).get("answer_ids", [])]
    return evaluation_runs.graded_answers(store, answers)


def register(app: FastAPI) -> None:
    """Add this module's routes to ``app``, and the run pages of :mod:`theorembench.web.evaluation_runs`."""
    evaluation_runs.register(app)

    @app.post("/questions/{pid}/test")
    def question_test(pid: str, ctx: Ctx = guard("question_test")) -> Response:
        row, _subject = ctx.question(pid)
        try:
            job_id = jobs.enqueue_test(ctx.repo.store, ctx.uid, pid, int(row["current_version"]),
                                       ctx.form.get("model", ""), models=ctx.request.app.state.models)  # fmt: skip
        except jobs.TooManyJobs as exc:
            raise PageError(429, "Too many model tests", _line(exc)) from None
        except UserError as exc:
            raise PageError(400, "Cannot start the test", _line(exc)) from None
        return redirect(ctx, f"/jobs/{job_id}")

    @app.get("/jobs/{job_id}", response_class=HTMLResponse)
    def job_page(job_id: str, ctx: Ctx = guard("job_view")) -> HTMLResponse:
        job = JobRepo(ctx.repo.store).get(job_id)
        if job is None:
            ctx.checked = True
            raise PageError(404, *_NOT_FOUND)
        ctx.authorise(Subject(author=job["owner"], status=job["status"]))
        return page(ctx, "job.html", job=jobs.job_view(job))

    @app.get("/admin/evaluations", response_class=HTMLResponse)
    def admin_evaluations(ctx: Ctx = guard("admin_evaluations")) -> HTMLResponse:
        return _eval_list(ctx)

    @app.post("/admin/evaluations")
    def admin_eval_launch(ctx: Ctx = guard("admin_eval_launch")) -> Response:
        form = ctx.form
        chosen = [key.removeprefix("problem:") for key, value in form.items() if key.startswith("problem:") and value]
        if form.get("scope") == "chosen" and not chosen:
            return _eval_list(ctx, 400, "Choose at least one question, or evaluate all active ones.", form)
        try:
            job_id = jobs.enqueue_evaluation(
                ctx.repo.store, ctx.uid, model=form.get("model", ""), mode=form.get("mode", ""),
                problems=chosen if form.get("scope") == "chosen" else (), main_tokens=form.get("main_tokens"),
                sub_tokens=form.get("sub_tokens"), epochs=form.get("epochs"),
                models=ctx.request.app.state.models)  # fmt: skip
        except UserError as exc:
            return _eval_list(ctx, 400, _line(exc), form)
        return redirect(ctx, f"/admin/evaluations/{job_id}")

    @app.get("/admin/evaluations/{job_id}", response_class=HTMLResponse)
    def admin_eval_view(job_id: str, ctx: Ctx = guard("admin_eval_view")) -> HTMLResponse:
        job = JobRepo(ctx.repo.store).get(job_id)
        if job is None:  # any job: admins may also look at a question's model test here
            raise PageError(404, *_NOT_FOUND)
        return page(ctx, "admin_evaluation.html", job=jobs.job_view(job), back=f"/admin/evaluations/{job_id}",
                    answers=evaluation_answers(ctx.repo.store, job))  # fmt: skip

    @app.post("/admin/answers/{answer_id}/verdicts/{sub_index}")
    def admin_verdict(answer_id: str, sub_index: int, ctx: Ctx = guard("admin_verdict")) -> Response:
        value = ctx.form.get("correct", "")
        if value not in _VERDICTS:
            raise PageError(400, "Bad verdict", "The verdict must be true, false or none.")
        try:
            autograde.override_verdict(ctx.repo.store, answer_id, sub_index, correct=_VERDICTS[value], verified=True,
                                       actor=ctx.user["email"], reason=ctx.form.get("reason", ""))  # fmt: skip
        except UserError as exc:
            raise PageError(400, "Cannot record the verdict", _line(exc)) from None
        back = ctx.form.get("back", "")
        safe = back.startswith("/admin/evaluations/") and "//" not in back and "\\" not in back
        return redirect(ctx, f"{back if safe else '/admin/evaluations'}#answer-{answer_id}")
