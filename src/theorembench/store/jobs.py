"""The platform's background jobs (``web_jobs``): a queue with leases that works the same on SQLite and PostgreSQL.

A worker claims a job with a compare-and-set UPDATE (the row must still be queued, or running
under a lease that has expired), so two workers never hold the same job. While it runs, the
worker renews ``lease_until``; every write of a running job names the worker, so a worker that
lost its lease (another one took the job over) changes nothing. Times are seconds since the
epoch and always passed in by the caller (tests move the clock instead of sleeping).
"""

from __future__ import annotations

import uuid
from typing import Any, TypedDict, cast

import sqlalchemy as sa

from theorembench.store.base import dumps, loads
from theorembench.store.db import Store
from theorembench.store.schema import web_jobs

_j = web_jobs.c

STATUSES = ("queued", "running", "done", "failed", "timed_out")
FINISHED = ("done", "failed", "timed_out")
MAX_ATTEMPTS = 3


class Job(TypedDict):
    """A background job with its lease and progress, ``params`` and ``result`` decoded."""

    id: str
    kind: str
    owner: str
    problem_id: str | None
    params: dict[str, Any]
    status: str  # one of STATUSES
    attempts: int
    lease_owner: str | None
    lease_until: float | None
    progress_done: int
    progress_total: int
    result: dict[str, Any] | None
    error: str | None
    timeout_s: float
    created_at: float
    started_at: float | None
    finished_at: float | None


def _job(row: Any) -> Job:
    job = dict(row)
    job["params"] = loads(job["params"]) if job.get("params") else {}
    job["result"] = loads(job["result"]) if job.get("result") else None
    return cast(Job, job)


class JobRepo:
    """Typed access to ``web_jobs`` of one store."""

    def __init__(self, store: Store):
        self.store = store

    def create(self, kind: str, owner: str, *, params: dict[str, Any], timeout_s: float, now: float,
               problem_id: str | None = None) -> str:  # fmt: skip
        job_id = "j-" + uuid.uuid4().hex[:16]
        self.store._execute(web_jobs.insert(), {
            "id": job_id, "kind": kind, "owner": owner, "problem_id": problem_id, "params": dumps(params),
            "status": "queued", "timeout_s": float(timeout_s), "created_at": now})  # fmt: skip
        return job_id

    def get(self, job_id: str) -> Job | None:
        row = self.store._first(sa.select(web_jobs).where(_j.id == job_id))
        return _job(row) if row else None

    def jobs(self, *, kind: str | None = None, problem_id: str | None = None, owner: str | None = None,
             limit: int = 200) -> list[Job]:  # fmt: skip
        """Jobs, newest first."""
        statement = sa.select(web_jobs).order_by(_j.created_at.desc(), _j.id).limit(limit)
        for column, value in ((_j.kind, kind), (_j.problem_id, problem_id), (_j.owner, owner)):
            if value is not None:
                statement = statement.where(column == value)
        return [_job(r) for r in self.store._rows(statement)]

    def count_since(self, owner: str, kind: str, since: float) -> int:
        statement = sa.select(sa.func.count()).select_from(web_jobs).where(
            _j.owner == owner, _j.kind == kind, _j.created_at > since)  # fmt: skip
        return int(self.store._rows(statement)[0][0])

    # -- leases -------------------------------------------------------------

    def sweep(self, now: float) -> None:
        """Jobs whose lease expired: past their time limit → timed_out; out of attempts → failed."""
        expired = sa.and_(_j.status == "running", _j.lease_until < now)
        self.store._execute(web_jobs.update().where(expired, _j.started_at + _j.timeout_s < now).values(
            status="timed_out", error="the job ran past its time limit", lease_owner=None, lease_until=None,
            finished_at=now))  # fmt: skip
        self.store._execute(web_jobs.update().where(expired, _j.attempts >= MAX_ATTEMPTS).values(
            status="failed", lease_owner=None, lease_until=None, finished_at=now,
            error=sa.func.coalesce(_j.error, "") + f" (its worker stopped answering; {MAX_ATTEMPTS} attempts)"))

    def claim(self, worker: str, *, lease_s: float, now: float) -> Job | None:
        """Take the oldest queued job, or a running one whose lease expired; None when there is none."""
        self.sweep(now)
        claimable = sa.or_(_j.status == "queued", sa.and_(_j.status == "running", _j.lease_until < now))
        candidates = self.store._rows(sa.select(_j.id).where(claimable).order_by(_j.created_at, _j.id).limit(20))
        for (job_id,) in candidates:
            taken = self.store._execute(web_jobs.update().where(_j.id == job_id, claimable).values(
                status="running", lease_owner=worker, lease_until=now + lease_s, attempts=_j.attempts + 1,
                started_at=sa.func.coalesce(_j.started_at, now)))  # fmt: skip
            if taken.rowcount == 1:
                return self.get(job_id)
        return None

    def _mine(self, job_id: str, worker: str) -> sa.ColumnElement[bool]:
        return sa.and_(_j.id == job_id, _j.lease_owner == worker, _j.status == "running")

    def heartbeat(self, job_id: str, worker: str, *, lease_s: float, now: float) -> bool:
        """Renew the lease; False when the worker no longer holds it."""
        done = self.store._execute(web_jobs.update().where(self._mine(job_id, worker)).values(
            lease_until=now + lease_s))  # fmt: skip
        return done.rowcount == 1

    def progress(self, job_id: str, worker: str, done: int, total: int) -> bool:
        changed = self.store._execute(web_jobs.update().where(self._mine(job_id, worker)).values(
            progress_done=done, progress_total=total))  # fmt: skip
        return changed.rowcount == 1

    def finish(self, job_id: str, worker: str, status: str, *, now: float, result: dict[str, Any] | None = None,
               error: str | None = None) -> bool:  # fmt: skip
        """End the job (done, failed or timed_out) if the worker still holds it."""
        if status not in FINISHED:
            raise ValueError(f"not a final status: {status!r}")
        values: dict[str, Any] = {"status": status, "lease_owner": None, "lease_until": None, "finished_at": now,
                                  "error": error}  # fmt: skip
        if result is not None:
            values["result"] = dumps(result)
        return self.store._execute(web_jobs.update().where(self._mine(job_id, worker)).values(**values)).rowcount == 1

    def retry(self, job_id: str, worker: str, error: str) -> bool:
        """An attempt failed: back to the queue with its reason (kept for the page)."""
        return self.store._execute(web_jobs.update().where(self._mine(job_id, worker)).values(
            status="queued", lease_owner=None, lease_until=None, error=error)).rowcount == 1  # fmt: skip

    def give_back(self, job_id: str, worker: str) -> bool:
        """The worker stops (shutdown): the job goes back to the queue and this attempt does not count."""
        return self.store._execute(web_jobs.update().where(self._mine(job_id, worker)).values(
            status="queued", lease_owner=None, lease_until=None, attempts=_j.attempts - 1)).rowcount == 1  # fmt: skip
