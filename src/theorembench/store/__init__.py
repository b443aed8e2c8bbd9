"""The store: SQLite (default) holding runs, datasets, items, model calls and results."""

from theorembench.store.db import Store, StoreError, content_hash, loads, open_store

__all__ = ["Store", "StoreError", "content_hash", "loads", "open_store"]
