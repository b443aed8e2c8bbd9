"""A throwaway PostgreSQL server for the tests, and the ``db_url`` fixture that runs a test on both backends.

The server is made once per test session: ``initdb`` into a fresh temporary folder, then
``pg_ctl start`` on a free 127.0.0.1 port with its socket in that folder (no system service,
no durability: ``fsync=off``). Every test that asks for ``pg_url`` gets a database of its own.
``initdb`` refuses to run as root, so as root the server runs as the ``postgres`` user (Debian's
package makes it). Without the binaries (``/usr/lib/postgresql/*/bin``, from the ``postgresql``
package that ``scripts/setup.sh`` installs) the tests that need them FAIL: they are not skipped.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest


def pg_bindir() -> Path:
    found = sorted((Path(p).parent for p in glob.glob("/usr/lib/postgresql/*/bin/initdb")),
                   key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0)  # fmt: skip
    if found:
        return found[-1]
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).parent
    pytest.fail("PostgreSQL server binaries not found (no /usr/lib/postgresql/*/bin/initdb, no initdb on PATH): "
                "install them with scripts/setup.sh (apt-get install postgresql)", pytrace=False)  # fmt: skip


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    def __init__(self) -> None:
        self.bindir = pg_bindir()
        self.user = None
        if os.geteuid() == 0:
            self.user = "postgres"
            try:
                pwd.getpwnam(self.user)
            except KeyError:
                self.user = "nobody"
        self.root = Path(tempfile.mkdtemp(prefix="tb-pg-"))
        self.data = self.root / "data"
        self.port = 0
        if self.user:
            entry = pwd.getpwnam(self.user)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)

    def _run(self, *args: str) -> subprocess.CompletedProcess:
        prefix = ["runuser", "-u", self.user, "--"] if self.user else []
        return subprocess.run([*prefix, *args], capture_output=True, text=True, timeout=120, cwd=self.root)

    def start(self) -> None:
        done = self._run(str(self.bindir / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust",
                         "-E", "UTF8", "--locale=C", "--no-sync")  # fmt: skip
        if done.returncode != 0:
            pytest.fail(f"initdb failed: {done.stdout}{done.stderr}", pytrace=False)
        for _attempt in range(3):  # a free port can be taken between the probe and the start
            self.port = _free_port()
            options = (f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
                       "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200")  # fmt: skip
            done = self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "log"),
                             "-w", "-t", "60", "-o", options, "start")  # fmt: skip
            if done.returncode == 0:
                return
        log = (self.root / "log").read_text() if (self.root / "log").exists() else ""
        pytest.fail(f"pg_ctl start failed: {done.stdout}{done.stderr}{log[-2000:]}", pytrace=False)

    def stop(self) -> None:
        if self.data.exists():
            self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(sql)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PostgresServer]:
    server = PostgresServer()
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture
def pg_url(pg_server: PostgresServer) -> Iterator[str]:
    """The URL of a fresh, empty database on the session's server."""
    name = "t_" + uuid.uuid4().hex[:16]
    pg_server.admin(f"CREATE DATABASE {name}")
    yield pg_server.url(name)
    pg_server.admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new store location on each backend: a SQLite file, then a PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "store.db")
    return request.getfixturevalue("pg_url")
