"""``use_store``: services take an open store, a path or URL, or nothing (the default store)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from theorembench.store.db import Store, open_store


@contextmanager
def use_store(db: Store | str | Path | None) -> Iterator[Store]:
    """The given store as it is, or one opened here (and closed on leaving) from a path, URL or the default."""
    if isinstance(db, Store):
        yield db
        return
    store = open_store(db)
    try:
        yield store
    finally:
        store.close()
