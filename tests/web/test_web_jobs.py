"""The platform's job queue: leases on SQLite and PostgreSQL, take-over without paying twice, time limits, retries."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from helpers.improof_samples import odd_sums_yaml, submit

from theorembench.methods.improof.catalog import import_problems
from theorembench.store import open_store
from theorembench.store.jobs import JobRepo
from theorembench.testing.fakellm import prompt_text
from theorembench.web import jobs

MODEL = "openai-api/fake/m"
MODELS = [MODEL]
T0 = 1_000_000.0
PROBLEM = odd_sums_yaml(author="author-1")
SCRIPT = {"rules": [
    {"match": "SUB-TWO", "reply": submit("100")},
    {"match": "SUB-ONE", "reply": submit("9")},
    {"match": "MAIN-Q", "reply": [{"tool_calls": [{"name": "python", "arguments": {"code": "print(6 * 7)"}}]},
                                  submit("By induction.")]},
]}  # fmt: skip


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, t: float):
        self.t = t

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def main(db_url, tmp_path: Path):
    store = open_store(db_url)
    path = tmp_path / "problem.yaml"
    path.write_text(PROBLEM)
    import_problems(store, path)
    try:
        yield store
    finally:
        store.close()


def _in_thread(target) -> tuple[threading.Thread, list]:
    out: list = []
    thread = threading.Thread(target=lambda: out.append(target()), daemon=True)
    thread.start()
    return thread, out


def _wait_held(fake) -> None:
    fake.wait_for(lambda s: s["held"] == 1, timeout=180)


def test_a_job_is_claimed_once_and_an_expired_lease_passes_to_another_worker(db_url):
    with open_store(db_url) as one, open_store(db_url) as two:
        a, b = JobRepo(one), JobRepo(two)
        jid = a.create("evaluation", "admin-1", params={"model": MODEL}, timeout_s=1000, now=T0)
        assert a.claim("worker-a", lease_s=60, now=T0)["id"] == jid
        assert b.claim("worker-b", lease_s=60, now=T0 + 1) is None
        assert a.heartbeat(jid, "worker-a", lease_s=60, now=T0 + 50)  # lease now ends at T0 + 110
        assert b.claim("worker-b", lease_s=60, now=T0 + 109) is None
        taken = b.claim("worker-b", lease_s=60, now=T0 + 111)
        assert (taken["id"], taken["lease_owner"], taken["attempts"], taken["started_at"]) == (jid, "worker-b", 2, T0)
        # the old holder can neither renew, report nor finish any more
        assert not a.heartbeat(jid, "worker-a", lease_s=60, now=T0 + 112)
        assert not a.progress(jid, "worker-a", 1, 1)
        assert not a.finish(jid, "worker-a", "done", now=T0 + 112, result={"x": 1})
        assert b.finish(jid, "worker-b", "done", now=T0 + 113, result={"x": 2})
        assert (a.get(jid)["status"], a.get(jid)["result"]) == ("done", {"x": 2})
        assert a.claim("worker-a", lease_s=60, now=T0 + 10_000) is None


def test_expired_leases_past_the_time_limit_or_out_of_attempts_are_ended(db_url):
    with open_store(db_url) as store:
        repo = JobRepo(store)
        late = repo.create("test_model", "u", params={}, timeout_s=50, now=T0)
        repo.claim("w1", lease_s=60, now=T0)
        tired = repo.create("test_model", "u", params={}, timeout_s=10_000, now=T0 + 1)
        for n in range(3):  # three workers each take it and vanish
            assert repo.claim(f"w{n}", lease_s=60, now=T0 + 1 + 61 * n)["id"] == tired
        assert repo.claim("w9", lease_s=60, now=T0 + 1000) is None
        assert (repo.get(late)["status"], repo.get(late)["error"]) == ("timed_out", "the job ran past its time limit")
        assert repo.get(tired)["status"] == "failed" and "3 attempts" in repo.get(tired)["error"]


def test_a_worker_whose_lease_expired_is_replaced_and_no_model_call_is_paid_twice(main, db_url, fake_env,
                                                                                 tmp_path: Path):  # fmt: skip
    work = tmp_path / "work"
    jid = jobs.enqueue_test(main, "author-1", "odd-sums", 1, MODEL, models=MODELS, now=T0)
    fake_env.set_script({**SCRIPT, "max_responses": 3})  # main question (2 turns) and SUB-ONE answered, then held
    thread_a, out_a = _in_thread(lambda: jobs.work_once(main, "worker-a", models=MODELS, work_dir=work,
                                                        now=Clock(T0), lease_s=60, heartbeat_s=0.05))  # fmt: skip
    _wait_held(fake_env)
    paid = {r["prompt_key"] for r in fake_env.requests if r["outcome"] == "ok"}
    assert len(paid) == 3
    fake_env.set_script(SCRIPT)
    fake_env.reset()
    with open_store(db_url) as other:  # worker B: its own connection, its clock past A's lease
        assert jobs.work_once(other, "worker-b", models=MODELS, work_dir=work, now=Clock(T0 + 61),
                              lease_s=60, heartbeat_s=0.05) == jid  # fmt: skip
    thread_a.join(timeout=120)
    assert not thread_a.is_alive() and out_a == [jid]  # A saw it lost the lease and stopped its process
    again = fake_env.requests
    assert len(again) == 1 and "SUB-TWO" in prompt_text(again[0]["body"]) and again[0]["prompt_key"] not in paid
    assert "42" in prompt_text(again[0]["body"])  # the python result was replayed from the scratch store
    job = JobRepo(main).get(jid)
    assert (job["status"], job["attempts"], job["lease_owner"], job["error"]) == ("done", 2, None, None)
    assert (job["progress_done"], job["progress_total"]) == (1, 1)
    result = job["result"]
    assert result["main_answer"] == "By induction." and result["model"] == MODEL and result["version"] == 1
    assert [(s["extracted"], s["expected"], s["correct"]) for s in result["subquestions"]] == [
        ("9", "9", True), ("100", "100", True)]  # fmt: skip
    assert result["weighted_score"] == 1.0 and result["usage"]["main_stage"]["turns"] == 2
    assert main.table_counts(["improof_answers"]) == {"improof_answers": 0}  # nothing reached the benchmark
    assert (work / "jobs" / f"{jid}.db").is_file()


def test_a_job_past_its_time_limit_is_stopped_and_marked_timed_out(main, fake_env, tmp_path: Path):
    jid = jobs.enqueue_test(main, "author-1", "odd-sums", 1, MODEL, models=MODELS, now=T0)
    fake_env.set_script({**SCRIPT, "max_responses": 0})  # the first model call is held: the job cannot finish
    clock = Clock(T0)
    thread, out = _in_thread(lambda: jobs.work_once(main, "worker-a", models=MODELS, work_dir=tmp_path / "w",
                                                    now=clock, heartbeat_s=0.05))  # fmt: skip
    _wait_held(fake_env)
    clock.t = T0 + 30 * 60 + 1
    thread.join(timeout=120)
    assert not thread.is_alive() and out == [jid]
    job = JobRepo(main).get(jid)
    assert (job["status"], job["error"], job["lease_owner"]) == (
        "timed_out", "stopped after its time limit of 30 minutes", None)  # fmt: skip
    assert job["result"] is None and job["finished_at"] == T0 + 30 * 60 + 1
    assert jobs.work_once(main, "worker-b", models=MODELS, work_dir=tmp_path / "w", now=Clock(T0 + 9999)) is None


def test_a_failing_job_is_retried_then_failed_with_its_reason(main, fake_env, tmp_path: Path):
    # a 401 (a key the provider refuses) is not final for the sample: the job fails, and is tried again
    # (a 400 would be final: the conversation would record the stage as unanswered and the job would finish)
    fake_env.set_script({"rules": [{"match": "MAIN-Q", "reply": "never", "faults": [{"kind": "401", "times": 99}]}]})
    jid = jobs.enqueue_test(main, "author-1", "odd-sums", 1, MODEL, models=MODELS, now=T0)
    run = {"models": MODELS, "work_dir": tmp_path / "w", "now": Clock(T0 + 1), "heartbeat_s": 0.05}
    for attempt in (1, 2):
        assert jobs.work_once(main, f"worker-{attempt}", **run) == jid
        job = JobRepo(main).get(jid)
        assert (job["status"], job["attempts"]) == ("queued", attempt)
        assert job["error"].startswith(f"attempt {attempt} failed: model call failed")
    assert jobs.work_once(main, "worker-3", **run) == jid
    job = JobRepo(main).get(jid)
    assert (job["status"], job["attempts"]) == ("failed", 3)
    assert job["error"].startswith("failed 3 times; last: model call failed")
    assert len(fake_env.requests) == 3  # one refused call per attempt
    assert jobs.work_once(main, "worker-4", **run) is None


def test_the_daily_limit_counts_the_last_24_hours_only(main):
    for n in range(19):
        jobs.enqueue_test(main, "author-1", "odd-sums", 1, MODEL, models=MODELS, now=T0 + n)
    jobs.enqueue_test(main, "author-1", "odd-sums", 1, MODEL, models=MODELS, now=T0 - 24 * 3600)  # a day old
    jobs.enqueue_test(main, "author-1", "odd-sums", 1, MODEL, models=MODELS, now=T0 + 100)  # the 20th today
    with pytest.raises(jobs.TooManyJobs, match="20 model tests in the last 24 hours"):
        jobs.enqueue_test(main, "author-1", "odd-sums", 1, MODEL, models=MODELS, now=T0 + 101)
    jobs.enqueue_test(main, "someone-else", "odd-sums", 1, MODEL, models=MODELS, now=T0 + 101)
    with pytest.raises(Exception, match="not offered"):
        jobs.enqueue_test(main, "someone-else", "odd-sums", 1, "openai-api/fake/other", models=MODELS, now=T0)
