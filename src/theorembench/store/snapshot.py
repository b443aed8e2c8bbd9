"""A copy of a store in a new SQLite file: what a cost forecast runs on, so that the real store is not touched.

A SQLite store is copied with SQLite's online backup (consistent while other processes write); a PostgreSQL
store's tables are read in dependency order into a fresh SQLite store of the same schema.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import sqlalchemy as sa

from theorembench.store.db import Store
from theorembench.store.schema import metadata

CHUNK = 1000  # rows per insert when copying from PostgreSQL


def snapshot_to(store: Store, path: Path) -> Path:
    """Copy ``store`` into the SQLite file ``path`` (which must not exist yet); returns ``path``."""
    path = Path(path)
    if path.exists():
        raise FileExistsError(f"{path} exists: a snapshot goes to a new file")
    if store.backend == "sqlite":
        source = sqlite3.connect(str(store.path))
        target = sqlite3.connect(str(path))
        try:
            source.backup(target)
        finally:
            target.close()
            source.close()
        return path
    copy = Store(path)  # the schema, brought up to date, then every table's rows
    try:
        for table in reversed(metadata.sorted_tables):  # rows a migration may have seeded give way to the source's
            copy._execute(table.delete())
        for table in metadata.sorted_tables:
            rows = [dict(row._mapping) for row in store._execute(sa.select(table))]
            for start in range(0, len(rows), CHUNK):
                copy._execute(table.insert(), rows[start:start + CHUNK])
    finally:
        copy.close()
    return path


__all__ = ["snapshot_to"]
