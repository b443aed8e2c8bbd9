"""Every run in the store that recorded IMProofBench answers, wherever it started, and one run's auto-grades.

A run launched on the evaluations page is a job whose result names its run; a run started with
``theorembench improof eval`` (or the Inspect task) has no job. Both are listed from the answers
table itself, so no answer escapes the administrators' check. Answers without a run (recorded by a
Python user with ``run_id=None``) are listed together under :data:`NO_RUN`.

Route: ``GET /admin/evaluations/runs/{run_id}`` (run_view); the verdict form posts to
``/admin/answers/{answer_id}/verdicts/{sub_index}`` (:mod:`theorembench.web.evaluations`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import FastAPI
from fastapi.responses import HTMLResponse

from theorembench.methods.improof import autograde
from theorembench.methods.improof.answers import list_answers
from theorembench.store import Store
from theorembench.store.jobs import JobRepo
from theorembench.web.context import Ctx, PageError, guard, page

NO_RUN = "-"


def _when(stamp: float | None) -> str:
    if not stamp:
        return "—"
    return datetime.fromtimestamp(float(stamp), tz=UTC).strftime("%Y-%m-%d %H:%M UTC")


def _launching_jobs(store: Store) -> dict[str, str]:
    """Run id -> the id of the evaluation job that recorded it (the newest, when several resumed one run)."""
    found: dict[str, str] = {}
    for job in JobRepo(store).jobs(kind="evaluation"):
        run_id = (job.get("result") or {}).get("run_id")
        if run_id:
            found.setdefault(str(run_id), job["id"])
    return found


def _run_facts(store: Store, run_id: str | None, answers: list[dict[str, Any]], job_id: str | None) -> dict[str, Any]:
    run = store.get_run(run_id) if run_id else None
    started = run["created_at"] if run else min(a["created_at"] for a in answers)
    name = (run["name"] if run else None) or (f"run {run_id}" if run_id else "answers without a run")
    return {"id": run_id or NO_RUN, "name": name, "status": run["status"] if run else "—", "started": _when(started), "stamp": float(started or 0),
            "models": sorted({a["model"] for a in answers}), "modes": sorted({a["mode"] for a in answers}),
            "answers": len(answers), "problems": len({a["problem_id"] for a in answers}), "job_id": job_id,
            "origin": "evaluations page" if job_id else "command line or Python"}  # fmt: skip


def store_runs(store: Store) -> list[dict[str, Any]]:
    """Every run with answers in the store, newest first, with its answer and question counts and its origin."""
    groups: dict[str | None, list[dict[str, Any]]] = {}
    for answer in list_answers(store):
        groups.setdefault(answer.get("run_id"), []).append(answer)
    jobs = _launching_jobs(store)
    rows = [_run_facts(store, run_id, found, jobs.get(run_id or "")) for run_id, found in groups.items()]
    return sorted(rows, key=lambda r: (-r["stamp"], r["id"]))


def graded_answers(store: Store, answers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each answer with its effective subquestion verdicts (overrides applied) and weighted score."""
    return [a | {"verdicts": autograde.effective_verdicts(store, a["id"]), "score": autograde.answer_score(store, a["id"])}
            for a in answers]  # fmt: skip


def run_answers(store: Store, run_id: str) -> list[dict[str, Any]]:
    """The answers of one run (or of no run, for :data:`NO_RUN`), oldest first."""
    if run_id == NO_RUN:
        return [a for a in list_answers(store) if a.get("run_id") is None]
    return list_answers(store, run_id=run_id)


def register(app: FastAPI) -> None:
    """Add the run page to ``app``."""

    @app.get("/admin/evaluations/runs/{run_id}", response_class=HTMLResponse)
    def run_view(run_id: str, ctx: Ctx = guard("admin_eval_view")) -> HTMLResponse:
        store = ctx.repo.store
        answers = run_answers(store, run_id)
        if not answers:
            raise PageError(404, "Not found", "No answers of that run are in the store.")
        facts = _run_facts(store, None if run_id == NO_RUN else run_id, answers,
                           _launching_jobs(store).get(run_id))  # fmt: skip
        return page(ctx, "admin_evaluation_run.html", run=facts, answers=graded_answers(store, answers),
                    back=f"/admin/evaluations/runs/{run_id}")  # fmt: skip
