"""Where a store lives, and the one connection a :class:`~theorembench.store.Store` holds to it.

A store location is a plain file path or ``sqlite:///PATH`` (a SQLite file in WAL mode,
``synchronous=NORMAL``, foreign keys on, a 30 s busy timeout) or ``postgresql://…`` /
``postgresql+psycopg://…`` (PostgreSQL through psycopg 3). Any other value that looks like a
URL (``scheme:/…``, ``mysql://…``, ``postgres://…``) is refused with a one-line
:class:`StoreError`: it never becomes a file name.

The connection runs in driver-level autocommit on both backends, so a single statement commits
at once; :func:`transaction` wraps several statements in an explicit ``BEGIN`` (``BEGIN
IMMEDIATE`` on SQLite, which takes the write lock up front, so it never fails half-way on a
lock upgrade), optionally holding a PostgreSQL advisory lock until it ends.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.pool import NullPool, StaticPool

from theorembench.store.base import StoreError

# `scheme:/…` or `scheme://…` (a scheme of two letters or more, so `C:/x` stays a path)
_URL_LIKE = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]+:/")
# `scheme:` alone is URL-like too when the scheme names a database
_DB_SCHEMES = {"sqlite", "postgresql", "postgres", "pgsql", "psql", "pg", "mysql", "mariadb", "oracle", "mssql",
               "duckdb", "cockroachdb", "redshift"}  # fmt: skip
_POSTGRES_DRIVERS = {"postgresql", "postgresql+psycopg"}
_SQLITE_DRIVERS = {"sqlite", "sqlite+pysqlite"}
BUSY_TIMEOUT_S = 30
USAGE = "use a file path, sqlite:///PATH or postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE"


@dataclass(frozen=True)
class Location:
    backend: str  # "sqlite" | "postgresql"
    url: URL
    path: Path | None  # the SQLite file (None for PostgreSQL and for :memory:)
    display: str  # the location for messages (no password)


def _one_line(text: str) -> str:
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    return lines[0] if lines else ""


def looks_like_url(value: str) -> bool:
    if _URL_LIKE.match(value):
        return True
    scheme, sep, _ = value.partition(":")
    return bool(sep) and scheme.split("+", 1)[0].lower() in _DB_SCHEMES


def parse_location(location: str | Path) -> Location:
    """A path or URL as a :class:`Location`; refuses every URL that is not SQLite or PostgreSQL."""
    text = str(location)
    if text == ":memory:":
        return Location("sqlite", URL.create("sqlite+pysqlite", database=":memory:"), None, ":memory:")
    if not looks_like_url(text):
        path = Path(text).expanduser()
        return Location("sqlite", URL.create("sqlite+pysqlite", database=str(path)), path, str(path))
    try:
        url = make_url(text)
    except Exception:  # noqa: BLE001 - any parse failure is the same refusal
        hint = " (did you mean postgresql://…?)" if text.lower().startswith(("postgres", "pg")) else ""
        raise StoreError(f"not a valid store URL: {_one_line(text)!r}{hint}: {USAGE}") from None
    display = url.render_as_string(hide_password=True)
    driver = url.drivername.lower()
    if driver in _SQLITE_DRIVERS:
        if url.query or url.host or url.username:
            raise StoreError(f"unsupported SQLite store URL {display!r}: {USAGE}")
        database = url.database or ":memory:"
        path = None if database == ":memory:" else Path(database).expanduser()
        return Location("sqlite", URL.create("sqlite+pysqlite", database=str(path or database)), path,
                        str(path or database))  # fmt: skip
    if driver in _POSTGRES_DRIVERS:
        return Location("postgresql", url.set(drivername="postgresql+psycopg"), None, display)
    hint = " (did you mean postgresql://?)" if driver.split("+", 1)[0] in {"postgres", "pgsql", "psql", "pg"} else ""
    if driver.startswith("postgresql+"):
        hint = " (PostgreSQL is reached through psycopg 3: postgresql:// or postgresql+psycopg://)"
    raise StoreError(f"unsupported store URL {display!r}{hint}: {USAGE}")


def _sqlite_pragmas(dbapi_connection, _record) -> None:  # noqa: ANN001 - SQLAlchemy event signature
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_S * 1000}")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.execute("PRAGMA foreign_keys = ON")
    finally:
        cursor.close()


def connect(location: Location) -> tuple[Engine, Connection]:
    """An engine and its one open connection (autocommit), or a one-line :class:`StoreError`."""
    if location.backend == "sqlite":
        if location.path is not None:
            try:
                location.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create the folder of store {location.display}: {exc}") from exc
        engine = sa.create_engine(
            location.url, isolation_level="AUTOCOMMIT",
            poolclass=NullPool if location.path is not None else StaticPool,
            connect_args={"check_same_thread": False, "timeout": BUSY_TIMEOUT_S},
        )  # fmt: skip
        sa.event.listen(engine, "connect", _sqlite_pragmas)
        what = "store"
    else:
        try:
            import psycopg  # noqa: F401
        except ImportError:
            raise StoreError("a PostgreSQL store needs psycopg 3: pip install 'psycopg[binary]'") from None
        args: dict[str, object] = {}
        if "connect_timeout" not in location.url.query:
            args["connect_timeout"] = 10
        if "application_name" not in location.url.query:
            args["application_name"] = "theorembench"
        engine = sa.create_engine(location.url, isolation_level="AUTOCOMMIT", poolclass=NullPool, connect_args=args)
        what = "PostgreSQL store"
    try:
        conn = engine.connect()
    except sa.exc.SQLAlchemyError as exc:
        engine.dispose()
        cause = _one_line(getattr(exc, "orig", None) or exc)
        raise StoreError(f"cannot open {what} {location.display}: {cause}") from exc
    return engine, conn


@contextlib.contextmanager
def transaction(conn: Connection, backend: str, *, advisory_lock: int | None = None) -> Iterator[Connection]:
    """``BEGIN`` … ``COMMIT`` on the autocommit connection (``ROLLBACK`` on any exception).

    On SQLite it is ``BEGIN IMMEDIATE``: the write lock is held from the start, so concurrent
    writers queue on the busy timeout. On PostgreSQL, ``advisory_lock`` names a
    transaction-scoped advisory lock taken first (released by the commit or rollback).
    """
    conn.exec_driver_sql("BEGIN IMMEDIATE" if backend == "sqlite" else "BEGIN")
    try:
        if advisory_lock is not None and backend == "postgresql":
            conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({int(advisory_lock)})")
        yield conn
    except BaseException:
        with contextlib.suppress(Exception):  # the error that got us here matters more
            conn.exec_driver_sql("ROLLBACK")
        raise
    conn.exec_driver_sql("COMMIT")


def describe_error(exc: BaseException) -> str:
    """A database error as one line (the driver's first line, without SQLAlchemy's extras)."""
    return _one_line(getattr(exc, "orig", None) or exc)
