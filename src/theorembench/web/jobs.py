"""Background jobs of the platform: enqueueing (with the per-user limit), the workers, and the question page's section.

:func:`work_once` claims one job (see :class:`theorembench.store.jobs.JobRepo`), runs one
attempt of it in a child process (:mod:`theorembench.web.job_runners`) and watches it: the lease
is renewed every ``heartbeat_s``; a job past its ``timeout_s`` (counted from its first start) is
stopped and marked timed_out; a worker whose lease was taken over stops its child and leaves the
job to the new holder; a failed attempt goes back to the queue until the third, which fails the
job with its reason. The clock is a parameter (``now``) so tests move time instead of sleeping.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from fastapi import FastAPI

from theorembench.common.errors import UserError
from theorembench.common.paths import home
from theorembench.store import Store
from theorembench.store.jobs import MAX_ATTEMPTS, JobRepo
from theorembench.web.policy import allowed

TEST_LIMIT = 20  # test jobs per user in any 24 hours
TEST_WINDOW_S = 24 * 3600.0
TEST_TIMEOUT_S = 30 * 60.0
EVAL_TIMEOUT_S = 24 * 3600.0
LEASE_S = 120.0
HEARTBEAT_S = 10.0
POLL_S = 5.0
MODES = ("agentic", "single-turn")
Clock = Callable[[], float]


class TooManyJobs(UserError):
    """The user started as many test jobs as the rolling 24-hour window allows."""


def default_work_dir(work_dir: str | Path | None = None) -> Path:
    """``work_dir``, else the ``platform`` folder in the project home."""
    return Path(work_dir) if work_dir is not None else home() / "platform"


def store_location(store: Store) -> str:
    """Where a job's child process opens the same store (:meth:`Store.location`); in-memory stores are refused."""
    location = store.location()
    if location is None:
        raise UserError("background jobs need a store file or PostgreSQL, not an in-memory store")
    return location


def _check_model(model: str, models: Sequence[str]) -> None:
    if model not in models:
        raise UserError(f"model {model!r} is not offered here; choose one of: {', '.join(models)}")


def enqueue_test(store: Store, owner: str, problem_id: str, version: int, model: str, *, models: Sequence[str],
                 now: float | None = None) -> str:  # fmt: skip
    """Queue a "test with a model" job for one question version; :class:`TooManyJobs` past the daily limit."""
    _check_model(model, models)
    now = time.time() if now is None else now
    repo = JobRepo(store)
    if repo.count_since(owner, "test_model", now - TEST_WINDOW_S) >= TEST_LIMIT:
        raise TooManyJobs(f"you started {TEST_LIMIT} model tests in the last 24 hours, the most allowed; "
                          "try again later")  # fmt: skip
    return repo.create("test_model", owner, problem_id=problem_id, params={"model": model, "version": version},
                       timeout_s=TEST_TIMEOUT_S, now=now)  # fmt: skip


def _positive(name: str, value: Any) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise UserError(f"{name} must be a whole number, got {value!r}") from None
    if number < 1:
        raise UserError(f"{name} must be at least 1, got {number}")
    return number


def enqueue_evaluation(store: Store, owner: str, *, model: str, mode: str, problems: Sequence[str] = (),
                       main_tokens: Any = None, sub_tokens: Any = None, epochs: Any = 1,
                       models: Sequence[str], now: float | None = None) -> str:  # fmt: skip
    """Queue an evaluation of ``model`` on ``problems`` (empty: every active question at run time); budgets left
    out take the harness's defaults (the paper's)."""
    from theorembench.methods.improof.catalog import get_problem
    from theorembench.methods.improof.config import harness_defaults

    paper = harness_defaults("main_tokens", "sub_tokens")
    main_tokens = paper["main_tokens"] if main_tokens in (None, "") else main_tokens
    sub_tokens = paper["sub_tokens"] if sub_tokens in (None, "") else sub_tokens

    _check_model(model, models)
    if mode not in MODES:
        raise UserError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    chosen = list(dict.fromkeys(p for p in problems if p))
    for pid in chosen:
        get_problem(store, pid)
    params = {"model": model, "mode": mode, "problems": chosen, "main_tokens": _positive("main budget", main_tokens),
              "sub_tokens": _positive("subquestion budget", sub_tokens), "epochs": _positive("epochs", epochs)}
    return JobRepo(store).create("evaluation", owner, params=params, timeout_s=EVAL_TIMEOUT_S,
                                 now=time.time() if now is None else now)  # fmt: skip


# -- workers ------------------------------------------------------------------------------------------------------


def _kill(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def _attempt_error(result_file: Path, log_file: Path, code: int) -> str:
    try:
        outcome = json.loads(result_file.read_text(encoding="utf-8"))
        if outcome.get("error"):
            return str(outcome["error"])
    except (OSError, ValueError):
        pass
    lines = [ln for ln in log_file.read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip()] \
        if log_file.exists() else []  # fmt: skip
    return f"the job's process ended with code {code}" + (f": {lines[-1][:300]}" if lines else "")


def work_once(store: Store, worker_id: str, *, models: Sequence[str] | None = None, work_dir: str | Path | None = None,
              now: Clock = time.time, lease_s: float = LEASE_S, heartbeat_s: float = HEARTBEAT_S,
              stop: threading.Event | None = None) -> str | None:  # fmt: skip
    """Claim one job and run one attempt of it to its end; returns its id, or None when nothing was waiting.

    ``models``: the models still offered (a job naming another one fails at once).
    """
    location = store_location(store)
    repo = JobRepo(store)
    job = repo.claim(worker_id, lease_s=lease_s, now=now())
    if job is None:
        return None
    job_id = job["id"]
    model = job["params"].get("model")
    if models is not None and model not in models:
        repo.finish(job_id, worker_id, "failed", now=now(), error=f"model {model!r} is not offered any more")
        return job_id
    work = default_work_dir(work_dir).absolute()
    folder = work / "jobs"
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{job_id}-attempt{job['attempts']}-{uuid.uuid4().hex[:6]}"
    result_file, log_file = folder / f"{stem}.json", folder / f"{stem}.log"
    argv = [sys.executable, "-m", "theorembench.web.job_runners", "--db", location, "--job", job_id,
            "--worker", worker_id, "--work-dir", str(work), "--result", str(result_file)]  # fmt: skip
    with log_file.open("wb") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    deadline = float(job["started_at"]) + float(job["timeout_s"])
    try:
        while True:
            if now() > deadline:
                _kill(proc)
                repo.finish(job_id, worker_id, "timed_out", now=now(),
                            error=f"stopped after its time limit of {job['timeout_s'] / 60:g} minutes")  # fmt: skip
                return job_id
            if not repo.heartbeat(job_id, worker_id, lease_s=lease_s, now=now()):
                _kill(proc)  # another worker holds the job now
                return job_id
            if stop is not None and stop.is_set():
                _kill(proc)
                repo.give_back(job_id, worker_id)
                return job_id
            try:
                code = proc.wait(timeout=heartbeat_s)
                break
            except subprocess.TimeoutExpired:
                continue
    except BaseException:
        _kill(proc)
        raise
    if code == 0:
        result = json.loads(result_file.read_text(encoding="utf-8"))["result"]
        repo.finish(job_id, worker_id, "done", now=now(), result=result)
        return job_id
    error = _attempt_error(result_file, log_file, code)
    error = error if len(error) <= 300 else error[:299] + "…"
    if job["attempts"] >= MAX_ATTEMPTS:
        repo.finish(job_id, worker_id, "failed", now=now(), error=f"failed {MAX_ATTEMPTS} times; last: {error}")
    else:
        repo.retry(job_id, worker_id, f"attempt {job['attempts']} failed: {error}")
    return job_id


def _worker_loop(app: FastAPI, worker_id: str, stop: threading.Event) -> None:
    state = app.state
    while not stop.is_set():
        try:
            ran = work_once(state.store, worker_id, models=state.models, work_dir=state.work_dir, stop=stop)
        except Exception as exc:  # noqa: BLE001 - a worker keeps going; the job keeps its lease and is taken over
            print(f"platform worker {worker_id}: {type(exc).__name__}: {exc}", file=sys.stderr)
            ran = None
        if ran is None:
            stop.wait(POLL_S)


def start_workers(app: FastAPI, n: int) -> None:
    """Start ``n`` worker threads that run the store's queued jobs."""
    try:
        store_location(app.state.store)
    except UserError as exc:
        print(f"platform: no background workers: {exc}", file=sys.stderr)
        return
    stop = threading.Event()
    base = f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    threads = [threading.Thread(target=_worker_loop, args=(app, f"{base}-{i}", stop), name=f"platform-worker-{i}",
                                daemon=True) for i in range(n)]  # fmt: skip
    app.state.job_workers = (stop, threads)
    for thread in threads:
        thread.start()


def stop_workers(app: FastAPI) -> None:
    """Stop the worker threads (each finishes or gives back its lease)."""
    stop, threads = getattr(app.state, "job_workers", (None, []))
    if stop is None:
        return
    stop.set()
    for thread in threads:
        thread.join(timeout=HEARTBEAT_S * 3)
    app.state.job_workers = (None, [])


# -- the question page's section -----------------------------------------------------------------------------------


def job_view(job: dict[str, Any]) -> dict[str, Any]:
    """A job with what its page shows: the percentage done."""
    total = job.get("progress_total") or 0
    return job | {"percent": int(100 * job.get("progress_done", 0) / total) if total else 0}


def question_tests(ctx: Any, problem: dict[str, Any], subject: Any) -> dict[str, Any]:
    """Template values for the "test with a model" section of a question page (``_model_tests_section.html``)."""
    can_test = allowed(ctx.user, "question_test", subject)
    if not can_test:
        return {"can_test": False, "tests": [], "models": [], "problem_id": problem["id"]}
    repo = JobRepo(ctx.repo.store)
    tests = [job_view(j) for j in repo.jobs(kind="test_model", problem_id=problem["id"])]
    used = repo.count_since(ctx.user["id"], "test_model", time.time() - TEST_WINDOW_S)
    return {"can_test": True, "tests": tests, "models": list(ctx.request.app.state.models),
            "problem_id": problem["id"], "test_limit": TEST_LIMIT, "tests_left": max(0, TEST_LIMIT - used)}  # fmt: skip
