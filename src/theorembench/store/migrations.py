"""Schema migrations: Alembic revisions in ``store/alembic/versions``, applied when a store opens.

:func:`ensure_schema` brings the store to the newest revision this code knows:

* a store at that revision is left alone (one read, no lock);
* otherwise the version check and the upgrade run in ONE transaction that holds the store's
  write lock: ``BEGIN IMMEDIATE`` on SQLite, ``pg_advisory_xact_lock`` on PostgreSQL. Processes
  that open a new store at the same moment queue there; the first creates the tables, the
  others find them made;
* a SQLite store made before Alembic (``PRAGMA user_version`` 1 to 3, no ``alembic_version``
  table) is adopted: the tables its version lacked are created, and it is stamped at the first
  revision, whose schema is the one ``user_version`` 3 stood for; no data is touched;
* a store at a revision this code does not know (made by a newer theorembench) is refused.

SQLite stores managed by Alembic carry ``PRAGMA user_version`` 4, so a theorembench from before
Alembic refuses them ("newer than this theorembench knows") instead of failing half-way.

A new revision: copy ``versions/0001_initial.py`` to ``versions/NNNN_what.py`` with
``revision = "NNNN"`` and ``down_revision`` the previous one (or run
``alembic.command.revision(alembic_config(), "what", rev_id="NNNN")``), and change
:mod:`theorembench.store.schema` to match. File names start with their revision id, so the
newest one is known without loading Alembic (which costs a third of a second per process):
opening a store that is up to date reads one row and imports nothing from Alembic.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from theorembench.store.base import StoreError
from theorembench.store.engine import transaction

SCRIPTS = Path(__file__).with_name("alembic")
FIRST = "0001"
LEGACY_VERSION = 3  # PRAGMA user_version of the newest store made before Alembic
ALEMBIC_USER_VERSION = 4  # PRAGMA user_version of SQLite stores managed by Alembic
ADVISORY_LOCK = int.from_bytes(b"tbstore1", "big")  # PostgreSQL advisory lock of schema upgrades

if TYPE_CHECKING:
    from alembic.config import Config
    from alembic.script import ScriptDirectory


def alembic_config(connection: Connection | None = None) -> Config:
    """An Alembic configuration for the packaged scripts (no ``alembic.ini``)."""
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(SCRIPTS))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


@functools.cache
def scripts() -> ScriptDirectory:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config())


@functools.cache
def head() -> str:
    """The newest revision: the largest id among the file names in ``versions/`` (a test checks it is Alembic's head)."""
    ids = [p.name.split("_", 1)[0] for p in (SCRIPTS / "versions").glob("[0-9]*_*.py")]
    assert ids, f"no store revisions in {SCRIPTS / 'versions'}"
    return max(ids)


@functools.cache
def known_revisions() -> tuple[str, ...]:
    """Every revision, newest first."""
    return tuple(s.revision for s in scripts().walk_revisions())


def current_revision(conn: Connection) -> str | None:
    """The store's revision (None for a store without an ``alembic_version`` table)."""
    if not sa.inspect(conn).has_table("alembic_version"):
        return None
    return conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()


def _legacy_version(conn: Connection) -> int:
    return int(conn.exec_driver_sql("PRAGMA user_version").scalar() or 0)


def _pending(rev: str | None) -> int:
    known = known_revisions()
    return known.index(rev) if rev is not None else len(known)


def ensure_schema(conn: Connection, backend: str, where: str) -> int:
    """Upgrade the store on ``conn`` to :func:`head`; returns the number of revisions applied."""
    target = head()
    if current_revision(conn) == target:
        return 0
    with transaction(conn, backend, advisory_lock=ADVISORY_LOCK):
        rev = current_revision(conn)
        if rev == target:
            return 0  # another process upgraded it while we waited for the lock
        if rev is not None and rev not in known_revisions():
            raise StoreError(f"store {where} has schema revision {rev!r}, newer than this theorembench knows "
                             f"({target!r}); upgrade theorembench")  # fmt: skip
        if rev is None and backend == "sqlite":
            legacy = _legacy_version(conn)
            if legacy > LEGACY_VERSION:
                raise StoreError(f"store {where} has schema version {legacy} but no Alembic revision, newer than "
                                 f"this theorembench knows; upgrade theorembench")  # fmt: skip
            if legacy > 0:
                from alembic.runtime.migration import MigrationContext

                scripts().get_revision(FIRST).module.create_missing(conn)
                MigrationContext.configure(conn).stamp(scripts(), FIRST)
                rev = FIRST
        applied = _pending(rev)
        if rev != target:
            from alembic import command

            command.upgrade(alembic_config(conn), target)
        if backend == "sqlite":
            conn.exec_driver_sql(f"PRAGMA user_version = {ALEMBIC_USER_VERSION}")
    return applied
