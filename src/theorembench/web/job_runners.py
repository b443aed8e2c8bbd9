"""What each kind of background job does. A worker runs it in a child process (``python -m`` this module), so a job
past its time limit, or one whose lease another worker took over, can be stopped.

* ``test_model``: an author tries a model on a question before it is live. The harness runs on a
  scratch store (``<work_dir>/jobs/<job id>.db``) holding a copy of that question version, so no
  draft answer reaches the benchmark's tables; the scratch store also keeps the harness's replay
  of every model turn, so a worker taking the job over resumes without paying for a call twice.
* ``evaluation``: an administrator runs :func:`run_improof_eval` on the main store.

The child writes ``{"result": …}`` or ``{"error": "one line"}`` to its result file.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from theorembench.common.errors import UserError
from theorembench.common.progress import OnCount
from theorembench.methods.improof.config import harness_defaults
from theorembench.store import Store, open_store
from theorembench.store.jobs import JobRepo

# the harness settings a job passes: the paper's values, from HarnessSettings (epochs and retries: the harness's)
EVALUATION_DEFAULTS: dict[str, Any] = harness_defaults("mode", "main_tokens", "sub_tokens", "tool_timeout_s",
                                                       "tool_memory_mb")  # fmt: skip
# an author's quick try of a question: a deliberately smaller run than the paper's (no search, tighter budgets)
TEST_DEFAULTS: dict[str, Any] = {**EVALUATION_DEFAULTS, "tools": ["python", "bash"], "main_tokens": 100_000,
                                 "sub_tokens": 30_000, "tool_timeout_s": 120.0, "tool_memory_mb": 2048}  # fmt: skip


class JobFailed(Exception):
    """An attempt of a job failed; the message (one line) is shown on the job's page."""


def scratch_path(work_dir: Path, job_id: str) -> Path:
    return work_dir / "jobs" / f"{job_id}.db"


def _harness_args(params: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    keys = ("mode", "tools", "main_tokens", "sub_tokens", "tool_timeout_s", "tool_memory_mb", "max_retries", "epochs")
    return {k: params.get(k, defaults.get(k)) for k in keys if params.get(k, defaults.get(k)) is not None}


def _incomplete_reason(results: dict[str, Any]) -> str:
    for problem in results.get("problems", []):
        for epoch in problem.get("epochs", []):
            if not epoch.get("complete") and epoch.get("error"):
                return str(epoch["error"]).splitlines()[0]
    return "some conversations did not finish"


def run_test_model(store: Store, job: dict[str, Any], work_dir: Path, progress: OnCount) -> dict[str, Any]:
    """Run the harness on a copy of the question version in the job's scratch store; the answer and its grades."""
    from theorembench.methods.improof import autograde
    from theorembench.methods.improof.answers import get_answer
    from theorembench.methods.improof.catalog import get_problem, save_version
    from theorembench.methods.improof.harness import run_improof_eval

    params = job["params"]
    problem = get_problem(store, job["problem_id"], params.get("version"))
    folder = work_dir / "jobs" / job["id"]
    with open_store(scratch_path(work_dir, job["id"])) as scratch:
        save_version(scratch, problem, actor=None)
        copy = get_problem(scratch, problem.id)
        done = run_improof_eval(scratch, params["model"], problem_ids=[problem.id], out_dir=folder,
                                log_dir=folder / "logs", progress=progress,
                                **_harness_args(params, TEST_DEFAULTS))  # fmt: skip
        if done.incomplete or not done.detail["answer_ids"]:
            raise JobFailed(_incomplete_reason(done.results))
        answer = get_answer(scratch, done.detail["answer_ids"][0])
        verdicts = autograde.effective_verdicts(scratch, answer["id"])
        subs = [{"index": v["sub_index"], "text": copy.subquestions[v["sub_index"]].text,
                 "answer": answer["sub_answers"][v["sub_index"]], "extracted": v["extracted"],
                 "expected": v["expected"], "points": v["points"], "correct": v["correct"]}
                for v in verdicts]  # fmt: skip
        return {"model": params["model"], "mode": answer["mode"], "version": problem.version,
                "main_answer": answer["main_answer"], "subquestions": subs,
                "weighted_score": autograde.answer_score(scratch, answer["id"]),
                "usage": done.results["usage"], "status": "complete"}  # fmt: skip


def run_evaluation(store: Store, job: dict[str, Any], work_dir: Path, progress: OnCount) -> dict[str, Any]:
    """Evaluate a model on the chosen (or all active) problems of the main store."""
    from theorembench.methods.improof.harness import run_improof_eval

    params = job["params"]
    folder = work_dir / "evaluations" / job["id"]
    done = run_improof_eval(store, params["model"], problem_ids=params.get("problems") or None, out_dir=folder,
                            log_dir=folder / "logs", progress=progress,
                            **_harness_args(params, EVALUATION_DEFAULTS))  # fmt: skip
    if done.incomplete:
        raise JobFailed(f"{done.incomplete} conversation(s) did not finish: {_incomplete_reason(done.results)}")
    return {"run_id": done.run_id, "answer_ids": done.detail["answer_ids"], "summary": done.results["summary"],
            "usage": done.results["usage"]}  # fmt: skip


KINDS: dict[str, Callable[[Store, dict[str, Any], Path, OnCount], dict[str, Any]]] = {
    "test_model": run_test_model, "evaluation": run_evaluation}  # fmt: skip


def run_child(db: str, job_id: str, worker: str, work_dir: Path, result_file: Path) -> int:
    """The child process: run one attempt of the job and write its outcome to ``result_file``."""
    outcome: dict[str, Any]
    try:
        with open_store(db) as store:
            repo = JobRepo(store)
            job = repo.get(job_id)
            if job is None or job["kind"] not in KINDS:
                raise JobFailed(f"no job {job_id} of a known kind")

            def progress(done: int, total: int) -> None:
                repo.progress(job_id, worker, done, total)

            outcome = {"result": KINDS[job["kind"]](store, job, work_dir, progress)}
    except (JobFailed, UserError) as exc:
        outcome = {"error": str(exc).splitlines()[0] if str(exc) else type(exc).__name__}
    except Exception as exc:  # noqa: BLE001 - any crash of an attempt is reported on the job's page
        first = str(exc).splitlines()[0] if str(exc) else ""
        outcome = {"error": f"{type(exc).__name__}: {first}".rstrip(": ")}
    result_file.write_text(json.dumps(outcome, ensure_ascii=False, default=str), encoding="utf-8")
    return 0 if "result" in outcome else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run one attempt of a platform job (started by a worker).")
    for name in ("--db", "--job", "--worker", "--work-dir", "--result"):
        parser.add_argument(name, required=True)
    args = parser.parse_args(argv)
    return run_child(args.db, args.job, args.worker, Path(args.work_dir), Path(args.result))


if __name__ == "__main__":
    sys.exit(main())
