"""`theorembench improof serve --processes N`: several server processes over one store share one secret key."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import httpx
from fastapi.testclient import TestClient
from helpers.web import PASSWORD, csrf_from, sign_in

from theorembench.store import open_store
from theorembench.store.accounts import AccountRepo
from theorembench.web.auth import hash_password
from theorembench.web.served import SECRET_ENV, app_from_env, serve_environment


def _user(db: str, email: str) -> None:
    with open_store(db) as store:
        AccountRepo(store).create_user(email, hash_password(PASSWORD), verified=True, roles=("grader",))


def test_a_form_made_by_one_process_is_accepted_by_another(db_url):
    _user(db_url, "ada@example.org")
    env = serve_environment(db_url, secret_key=None, smtp_url=None, models=None, job_workers=0)
    first, second = TestClient(app_from_env(env)), TestClient(app_from_env(env))
    token = csrf_from(first.get("/login").text)  # the login form as one process made it ...
    second.cookies.update(first.cookies)
    answer = second.post("/login", data={"email": "ada@example.org", "password": PASSWORD, "csrf_token": token},
                         follow_redirects=False)  # fmt: skip
    assert answer.status_code == 303  # ... is sent to the other one
    assert serve_environment(db_url, secret_key=None, smtp_url=None, models=None, job_workers=0)[SECRET_ENV] != \
        env[SECRET_ENV]  # a fresh key per serve when none is configured, never a fixed one


def test_a_process_started_without_the_shared_key_refuses_to_start(db_url):
    env = serve_environment(db_url, secret_key=None, smtp_url=None, models=None, job_workers=0)
    env.pop(SECRET_ENV)
    try:
        app_from_env(env)
    except RuntimeError as exc:
        assert "improof serve" in str(exc)
    else:
        raise AssertionError("a process made up its own key")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_serve_with_two_processes_answers_and_signs_in(tmp_path):
    db = str(tmp_path / "store.db")
    _user(db, "ada@example.org")
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "THEOREMBENCH_WEB_SECRET"}
    server = subprocess.Popen([sys.executable, "-m", "theorembench.cli", "improof", "serve", "--db", db, "--port",
                               str(port), "--processes", "2", "--workers", "0"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        seen = []
        for line in server.stdout:  # a process has started and its (shared) socket listens: the rest queue there
            seen.append(line)
            if "Application startup complete" in line:
                break
        else:
            raise AssertionError("the platform exited while starting: " + "".join(seen))
        assert httpx.get(url + "/healthz", trust_env=False, timeout=60).status_code == 200
        # a new connection for every request, so that the kernel may hand each to either process
        for _ in range(8):
            with httpx.Client(base_url=url, trust_env=False, timeout=30,
                              limits=httpx.Limits(max_keepalive_connections=0)) as client:  # fmt: skip
                assert sign_in(client, "ada@example.org").status_code == 303
                assert client.get("/").status_code == 200
    finally:
        server.terminate()
        rest, _ = server.communicate(timeout=30)
    assert "in 2 processes" in "".join(seen) + rest
