"""The store: runs, datasets, items, model calls, results, papers and steps, on SQLite (default) or PostgreSQL."""

from theorembench.store.db import Row, Store, StoreError, content_hash, loads, open_store

__all__ = ["Row", "Store", "StoreError", "content_hash", "loads", "open_store"]
