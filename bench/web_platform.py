"""Autosave load on the grading platform: N simulated graders against the real server, on SQLite and PostgreSQL.

For each backend and each N the platform runs in its own process (uvicorn on loopback, workers off) over a fresh
store: a SQLite file in a temp folder, or a database on a throwaway PostgreSQL server started from Debian's
package (the tests' helper, tests/helpers/pg.py). One active question with three answers; N graders, each logged in with
their own session (all logins are done before the first save: argon2 is slow on purpose, and a storm of logins is
not autosave load) and assigned the question with their own alias order, autosave their grade of Answer A every
2 s (as static/grading.js does after its debounce) for --seconds, each save carrying the revision it last got.

  requests   saves sent;  p50 / p99   save latency in ms as the client saw it
  errors     saves answered other than 200 (a 409 counts: no grader shares a grade, so none should happen)
  lost       graders whose stored grade (read back from the store after the run) is not their last acknowledged
             write (its comment and revision)
  baseline   p50 of GET /healthz round trips on the same server just before the load; ratio = save p50 / it

Usage:  python bench/web_platform.py [--graders 10,25,50] [--seconds 60] [--backends sqlite,postgresql] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
PASSWORD = "bench-password-1"
INTERVAL_S = 2.0
P99_LIMIT_MS = 200.0
PROBLEM = """\
id: bench-grading
title: Bench question
statement: "Show that $1 + 1 = 2$."
solution: By definition.
difficulty: {background: 1, reasoning: 1, insight: 1, compute: 1}
status: active
subquestions:
  - text: "What is 1 + 1?"
    answer: "2"
    kind: integer
"""
SERVER = """
import sys, uvicorn
from theorembench.web.app import create_app
app = create_app(sys.argv[1], secret_key="bench secret", workers=0)
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning", access_log=False)
"""
_CSRF = re.compile(r'name="csrf[_-]token" (?:value|content)="([^"]+)"')
_REVISION = re.compile(r'id="grade-form"[^>]*data-revision="(\d+)"')


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _setup(db: str, graders: int) -> list[dict]:
    """The question, its answers and the graders, written through the project's services; returns the graders."""
    from theorembench.methods.improof.answers import record_answer
    from theorembench.methods.improof.catalog import import_problems
    from theorembench.store import open_store
    from theorembench.store.accounts import AccountRepo
    from theorembench.store.grading import GradingRepo
    from theorembench.web import blind
    from theorembench.web.auth import hash_password

    out = []
    with tempfile.TemporaryDirectory() as tmp, open_store(db) as store:
        (Path(tmp) / "q.yaml").write_text(PROBLEM)
        import_problems(store, Path(tmp) / "q.yaml")
        for n in range(3):
            record_answer(store, run_id="bench", problem_id="bench-grading", version=1, model=f"bench/model-{n}",
                          tier=None, epoch=0, mode="agentic", main_answer=f"Answer text {n}.", sub_answers=["2"],
                          stages=[])  # fmt: skip
        repo, hashed = AccountRepo(store), hash_password(PASSWORD)
        for g in range(graders):
            email = f"grader{g}@bench.example.org"
            uid = repo.create_user(email, hashed, verified=True, roles=("grader",))
            blind.assign(store, "bench-grading", uid)
            first = GradingRepo(store).assignment("bench-grading", uid)["answer_order"][0]
            out.append({"email": email, "uid": uid, "answer_id": first["answer_id"], "alias": first["alias"]})
    return out


class Platform:
    """The platform in a child process on a free loopback port."""

    def __init__(self, db: str):
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen([sys.executable, "-c", SERVER, db, str(self.port)], cwd=HERE.parent)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the platform exited with {self.proc.returncode} while starting")
            try:
                if httpx.get(self.url + "/healthz", trust_env=False, timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError("the platform did not answer /healthz within 60 s")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _baseline(url: str, n: int = 200) -> float:
    with httpx.Client(base_url=url, trust_env=False, timeout=10) as client:
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            client.get("/healthz").raise_for_status()
            times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def _grader(url: str, who: dict, ready: threading.Barrier, clock: dict, seconds: float, out: dict) -> None:
    latencies, errors, acked = [], 0, None
    with httpx.Client(base_url=url, trust_env=False, timeout=30) as client:
        try:
            token = _CSRF.search(client.get("/login").text).group(1)
            done = client.post("/login", data={"email": who["email"], "password": PASSWORD, "csrf_token": token})
            if done.status_code != 303:
                raise RuntimeError(f"login of {who['email']} answered {done.status_code}")
            page = client.get("/grade/bench-grading", params={"answer": who["alias"]})  # aliases are drawn per grader
            page.raise_for_status()
            token, revision = _CSRF.search(page.text).group(1), int(_REVISION.search(page.text).group(1))
        except BaseException:
            ready.abort()  # the others stop waiting (BrokenBarrierError): the run counts the missing graders as errors
            raise
        # every grader has logged in (argon2 is slow on purpose) before anyone saves: the run measures autosave alone
        ready.wait()
        start, stop = clock["start"], clock["start"] + seconds
        due = start + random.uniform(0, INTERVAL_S)  # graders do not all type in step
        k = 0
        while due < stop:
            time.sleep(max(0.0, due - time.monotonic()))
            k += 1
            comment = f"{who['email']} save {k}"
            body = {"progress": str(k % 4), "indicators": json.dumps({"insight": "not_sure"}), "comment": comment,
                    "status": "incomplete", "revision": str(revision)}  # fmt: skip
            t0 = time.perf_counter()
            try:
                answer = client.post(f"/grade/bench-grading/{who['alias']}", json=body,
                                     headers={"X-CSRF-Token": token})  # fmt: skip
            except httpx.HTTPError:
                errors += 1
            else:
                latencies.append((time.perf_counter() - t0) * 1000)
                if answer.status_code == 200:
                    revision = answer.json()["revision"]
                    acked = (comment, revision)
                else:
                    errors += 1
            due += INTERVAL_S
    out[who["email"]] = {"latencies": latencies, "errors": errors, "acked": acked}


def _lost(db: str, graders: list[dict], results: dict) -> int:
    from theorembench.methods.improof.grades import get_grade
    from theorembench.store import open_store

    lost = 0
    with open_store(db) as store:
        for who in graders:
            acked = results.get(who["email"], {}).get("acked")
            grade = get_grade(store, who["answer_id"], who["email"])
            stored = (grade.comment, grade.revision) if grade else None
            lost += acked is not None and stored != acked
    return lost


def run_one(db: str, graders: int, seconds: float) -> dict:
    people = _setup(db, graders)
    platform = Platform(db)
    try:
        baseline = _baseline(platform.url)
        results: dict = {}
        clock: dict = {}
        ready = threading.Barrier(len(people), action=lambda: clock.update(start=time.monotonic() + 0.5))
        threads = [threading.Thread(target=_grader, args=(platform.url, who, ready, clock, seconds, results))
                   for who in people]  # fmt: skip
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        platform.stop()
    latencies = [x for r in results.values() for x in r["latencies"]]
    failed = graders - len(results)  # a grader thread that died (login or page failed)
    errors = sum(r["errors"] for r in results.values()) + failed
    p50 = _pct(latencies, 0.5)
    return {"graders": graders, "requests": len(latencies) + sum(r["errors"] for r in results.values()),
            "p50_ms": p50, "p99_ms": _pct(latencies, 0.99), "errors": errors, "lost": _lost(db, people, results),
            "baseline_ms": baseline, "ratio": p50 / baseline}  # fmt: skip


def _postgres():
    sys.path.insert(0, str(HERE.parent / "tests"))
    from helpers.pg import PostgresServer  # the tests' throwaway server: initdb + pg_ctl from Debian's package

    server = PostgresServer()
    server.start()
    return server


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--graders", default="10,25,50")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--backends", default="sqlite,postgresql")
    ap.add_argument("--quick", action="store_true", help="2 and 5 graders for 6 s")
    ap.add_argument("--json")
    args = ap.parse_args()
    counts = [2, 5] if args.quick else [int(n) for n in args.graders.split(",")]
    seconds = 6.0 if args.quick else args.seconds
    rows = []
    for backend in args.backends.split(","):
        pg = _postgres() if backend == "postgresql" else None
        try:
            with tempfile.TemporaryDirectory(prefix="tb-bench-platform-") as tmp:
                for n in counts:
                    if pg is None:
                        db = os.path.join(tmp, f"platform-{n}.db")
                    else:
                        name = "bench_" + uuid.uuid4().hex[:12]
                        pg.admin(f"CREATE DATABASE {name}")
                        db = pg.url(name)
                    rows.append({"backend": backend} | run_one(db, n, seconds))
                    r = rows[-1]
                    print(f"{backend:10} N={n:3}  {r['requests']:6} saves  p50 {r['p50_ms']:7.1f} ms  "
                          f"p99 {r['p99_ms']:7.1f} ms  errors {r['errors']}  lost {r['lost']}  "
                          f"healthz p50 {r['baseline_ms']:.1f} ms  ratio {r['ratio']:.1f}x", flush=True)  # fmt: skip
        finally:
            if pg is not None:
                pg.stop()
    print(f"\nautosave every {INTERVAL_S:.0f} s per grader for {seconds:.0f} s; ratio = save p50 / GET /healthz p50")
    print(f"{'backend':10} {'N':>4} {'requests':>9} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7} {'lost':>5} "
          f"{'healthz':>8} {'ratio':>6}")  # fmt: skip
    for r in rows:
        print(f"{r['backend']:10} {r['graders']:4} {r['requests']:9} {r['p50_ms']:8.1f} {r['p99_ms']:8.1f} "
              f"{r['errors']:7} {r['lost']:5} {r['baseline_ms']:8.1f} {r['ratio']:5.1f}x")  # fmt: skip
    for backend in dict.fromkeys(r["backend"] for r in rows):
        ok = [r["graders"] for r in rows if r["backend"] == backend and r["p99_ms"] < P99_LIMIT_MS
              and r["errors"] == 0 and r["lost"] == 0]  # fmt: skip
        print(f"{backend}: largest N with p99 < {P99_LIMIT_MS:.0f} ms, 0 errors, 0 lost writes: "
              f"{max(ok) if ok else 'none of those measured'}")  # fmt: skip
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)
    if any(r["requests"] == 0 or r["lost"] for r in rows):  # no save got through, or a write was lost: broken
        sys.exit("a run saved nothing or lost a write: the bench or the platform is broken")


if __name__ == "__main__":
    main()
