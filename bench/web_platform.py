"""Autosave load on the grading platform: N simulated graders against the real server, on SQLite and PostgreSQL.

For each setup (a backend and a number of server processes) and each N the platform runs as
``theorembench improof serve --processes P`` (uvicorn on loopback, no job workers) over a fresh store: a SQLite file in
a temp folder, or a database on a throwaway PostgreSQL server started from Debian's package (the tests' helper,
tests/helpers/pg.py). One active question with three answers; N graders, each logged in with their own session (all
logins are done before the first save: argon2 is slow on purpose, and a storm of logins is not autosave load) and
assigned the question with their own alias order, autosave their grade of one answer every --interval seconds for
--seconds, each save carrying the revision it last got.

The conflict mix: a share of the graders (--conflicts) grade in two tabs at once, two sessions saving the same grade.
Their saves collide: a stale revision is answered 409 with the stored grade, and the tab merges as the page does
(the stored comment plus its own new words) and saves again. Each save's comment holds words ("<tab>:<k>"); a word
the server acknowledged must still be in the grade stored at the end.

  saves      requests sent;  p50 / p99   their latency in ms as the client saw it
  409        conflicts answered (only the two-tab graders can meet one)
  errors     answers other than 200 and 409, and transport failures
  lost       acknowledged words missing from the stored grade, plus graders whose stored revision is not the last
             one acknowledged to them (must be 0)
  baseline   p50 of GET /healthz round trips on the same server just before the load; ratio = save p50 / it

Usage:  python bench/web_platform.py [--graders 50,200] [--interval 0.5] [--seconds 30] [--conflicts 0.25]
                                     [--setups sqlite:1,postgresql:4] [--quick] [--json FILE]
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

    def __init__(self, db: str, processes: int):
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        command = [sys.executable, "-m", "theorembench.cli", "improof", "serve", "--db", db, "--port", str(self.port),
                   "--workers", "0", "--processes", str(processes)]  # fmt: skip
        env = os.environ | {"THEOREMBENCH_WEB_SECRET": "bench secret"}
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 - closed by stop(); the access log, shown if start fails
        self.proc = subprocess.Popen(command, cwd=HERE.parent, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.log.seek(0)
                sys.stderr.write(self.log.read().decode(errors="replace")[-4000:])
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
        self.log.close()


def _baseline(url: str, n: int = 200) -> float:
    with httpx.Client(base_url=url, trust_env=False, timeout=10) as client:
        for _ in range(50):  # every server process has answered once before the clock
            client.get("/healthz").raise_for_status()
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            client.get("/healthz").raise_for_status()
            times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def _login(client: httpx.Client, who: dict) -> tuple[str, int]:
    """Log in, open the grade's page: the CSRF token and the revision the page holds."""
    token = _CSRF.search(client.get("/login").text).group(1)
    done = client.post("/login", data={"email": who["email"], "password": PASSWORD, "csrf_token": token})
    if done.status_code != 303:
        raise RuntimeError(f"login of {who['email']} answered {done.status_code}")
    page = client.get("/grade/bench-grading", params={"answer": who["alias"]})  # aliases are drawn per grader
    page.raise_for_status()
    return _CSRF.search(page.text).group(1), int(_REVISION.search(page.text).group(1))


def _tab(url: str, who: dict, tab: str, load: dict, out: dict) -> None:
    """One browser tab of one grader: autosaves, merging on a conflict as static/grading.js lets the grader do."""
    latencies, errors, conflicts, acked_words, acked = [], 0, 0, set(), (None, 0)
    mine: list[str] = []  # the words this tab has typed
    with httpx.Client(base_url=url, trust_env=False, timeout=60) as client:
        try:
            token, revision = _login(client, who)
        except BaseException:
            load["ready"].abort()  # the others stop waiting (BrokenBarrierError): the missing tabs count as errors
            raise
        load["ready"].wait()  # every tab has logged in (argon2 is slow on purpose) before anyone saves
        interval = load["interval"]
        start, stop = load["start"], load["start"] + load["seconds"]
        due = start + random.uniform(0, interval)  # graders do not all type in step
        base: list[str] = []  # the words of the stored comment this tab last saw
        k = 0
        while due < stop:
            time.sleep(max(0.0, due - time.monotonic()))
            k += 1
            mine.append(f"{tab}:{k}")
            for _attempt in range(5):  # a conflict is merged and saved again at once
                words = list(dict.fromkeys(base + mine))
                body = {"progress": str(k % 4), "indicators": json.dumps({"insight": "not_sure"}),
                        "comment": " ".join(words), "status": "incomplete", "revision": str(revision)}  # fmt: skip
                t0 = time.perf_counter()
                try:
                    answer = client.post(f"/grade/bench-grading/{who['alias']}", json=body,
                                         headers={"X-CSRF-Token": token})  # fmt: skip
                except httpx.HTTPError:
                    errors += 1
                    break
                latencies.append((time.perf_counter() - t0) * 1000)
                if answer.status_code == 200:
                    revision = answer.json()["revision"]
                    acked_words.update(words)
                    acked = (" ".join(words), revision)
                    base = words
                    break
                if answer.status_code != 409:
                    errors += 1
                    break
                conflicts += 1
                current = answer.json()["current"]
                base, revision = current["comment"].split(), current["revision"]
            due += interval
    out[(who["email"], tab)] = {"latencies": latencies, "errors": errors, "conflicts": conflicts,
                                "words": acked_words, "acked": acked, "ended": time.monotonic()}  # fmt: skip


def _lost(db: str, graders: list[dict], results: dict) -> int:
    """Acknowledged words missing from the stored grades, and graders whose stored revision is not the last
    acknowledged one."""
    from theorembench.methods.improof.grades import get_grade
    from theorembench.store import open_store

    lost = 0
    with open_store(db) as store:
        for who in graders:
            tabs = [r for (email, _), r in results.items() if email == who["email"]]
            grade = get_grade(store, who["answer_id"], who["email"])
            stored_words = set(grade.comment.split()) if grade else set()
            lost += sum(len(r["words"] - stored_words) for r in tabs)
            last = max((r["acked"] for r in tabs), key=lambda acked: acked[1], default=(None, 0))
            if last[0] is not None and (grade is None or (grade.comment, grade.revision) != last):
                lost += 1
    return lost


def run_one(db: str, processes: int, graders: int, load: dict) -> dict:
    people = _setup(db, graders)
    two_tabs = round(graders * load["conflicts"])
    tabs = [(who, tab) for n, who in enumerate(people) for tab in ("a", "b")[: 2 if n < two_tabs else 1]]
    platform = Platform(db, processes)
    try:
        baseline = _baseline(platform.url)
        results: dict = {}
        load = load | {"ready": threading.Barrier(len(tabs), action=lambda: load.update(start=time.monotonic() + 0.5))}
        threads = [threading.Thread(target=_tab, args=(platform.url, who, tab, load, results)) for who, tab in tabs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        platform.stop()
    latencies = [x for r in results.values() for x in r["latencies"]]
    failed = len(tabs) - len(results)  # a tab whose thread died (login or page failed)
    errors = sum(r["errors"] for r in results.values()) + failed
    p50 = _pct(latencies, 0.5)
    # a server slower than the offered rate stretches the run: the rate is what it answered over the real time
    elapsed = max((r["ended"] for r in results.values()), default=load["start"] + 1) - load["start"]
    return {"graders": graders, "two_tab_graders": two_tabs, "processes": processes,
            "requests": len(latencies) + sum(r["errors"] for r in results.values()),
            "offered_per_s": len(tabs) / load["interval"], "rate_per_s": len(latencies) / elapsed, "conflicts": sum(r["conflicts"] for r in results.values()),
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
    ap.add_argument("--graders", default="50,200")
    ap.add_argument("--interval", type=float, default=0.5, help="seconds between one tab's saves")
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--conflicts", type=float, default=0.25, help="share of the graders saving from two tabs")
    ap.add_argument("--setups", default="sqlite:1,postgresql:4", help="backend:server processes, comma-separated")
    ap.add_argument("--quick", action="store_true", help="2 and 5 graders for 6 s")
    ap.add_argument("--json")
    args = ap.parse_args()
    counts = [2, 5] if args.quick else [int(n) for n in args.graders.split(",")]
    load = {"interval": args.interval, "seconds": 6.0 if args.quick else args.seconds, "conflicts": args.conflicts}
    setups = [(backend, int(processes or 1)) for backend, _, processes in
              (item.partition(":") for item in args.setups.split(","))]  # fmt: skip
    rows = []
    for backend, processes in setups:
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
                    rows.append({"backend": backend} | run_one(db, processes, n, load))
                    r = rows[-1]
                    print(f"{backend:10} P={processes} N={n:3}  {r['requests']:6} saves ({r['rate_per_s']:.0f}/s of "
                          f"{r['offered_per_s']:.0f}/s offered)  "
                          f"p50 {r['p50_ms']:7.1f} ms  p99 {r['p99_ms']:7.1f} ms  409 {r['conflicts']}  "
                          f"errors {r['errors']}  lost {r['lost']}  ratio {r['ratio']:.1f}x", flush=True)  # fmt: skip
        finally:
            if pg is not None:
                pg.stop()
    print(f"\none save every {load['interval']:g} s per tab for {load['seconds']:.0f} s; {load['conflicts']:.0%} of "
          "the graders in two tabs; ratio = save p50 / GET /healthz p50")  # fmt: skip
    print(f"{'backend':10} {'proc':>4} {'N':>4} {'saves':>7} {'offer/s':>8} {'/s':>5} {'p50 ms':>8} {'p99 ms':>8} {'409':>5} "
          f"{'errors':>7} {'lost':>5} {'healthz':>8} {'ratio':>6}")  # fmt: skip
    for r in rows:
        print(f"{r['backend']:10} {r['processes']:4} {r['graders']:4} {r['requests']:7} {r['offered_per_s']:8.0f} "
              f"{r['rate_per_s']:5.0f} "
              f"{r['p50_ms']:8.1f} {r['p99_ms']:8.1f} {r['conflicts']:5} {r['errors']:7} {r['lost']:5} "
              f"{r['baseline_ms']:8.1f} {r['ratio']:5.1f}x")  # fmt: skip
    for backend, processes in setups:
        ok = [r["graders"] for r in rows if (r["backend"], r["processes"]) == (backend, processes)
              and r["p99_ms"] < P99_LIMIT_MS and r["errors"] == 0 and r["lost"] == 0]  # fmt: skip
        print(f"{backend} ({processes} process{'es' if processes > 1 else ''}): largest N with p99 < {P99_LIMIT_MS:.0f} ms, 0 errors, 0 lost: "
              f"{max(ok) if ok else 'none of those measured'}")  # fmt: skip
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)
    if any(r["requests"] == 0 or r["lost"] for r in rows):  # no save got through, or a write was lost: broken
        sys.exit("a run saved nothing or lost a write: the bench or the platform is broken")


if __name__ == "__main__":
    main()
