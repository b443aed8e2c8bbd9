"""The theorembench store: one SQLite file holding runs, items, model calls and results.

SQLite runs in WAL mode and every write commits at once, so a process killed at
any moment loses at most the call that was in flight. One ``Store`` object is
shared by all coroutines of a process; a lock makes it safe to use from worker
threads too.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from theorembench.store.migrations import MIGRATIONS


class StoreError(RuntimeError):
    pass


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def content_hash(data: bytes | str) -> str:
    if isinstance(data, str):
        data = data.encode()
    return hashlib.sha256(data).hexdigest()


class Store:
    """A connection to the store with typed helpers for each table."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._conn = sqlite3.connect(
                str(path), check_same_thread=False, isolation_level=None, timeout=30
            )
        except sqlite3.Error as exc:  # pragma: no cover - depends on filesystem
            raise StoreError(f"cannot open store {path}: {exc}") from exc
        self._conn.row_factory = sqlite3.Row
        self._lock = threading.RLock()
        with self._lock:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("PRAGMA foreign_keys=ON")
        self.migrate()

    # -- plumbing ---------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def execute(self, sql: str, params: Iterable[Any] = ()) -> sqlite3.Cursor:
        with self._lock:
            return self._conn.execute(sql, tuple(params))

    def query(self, sql: str, params: Iterable[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self._conn.execute(sql, tuple(params)).fetchall()

    @property
    def schema_version(self) -> int:
        return int(self.query("PRAGMA user_version")[0][0])

    def migrate(self) -> int:
        """Apply pending migrations; returns the number applied."""
        applied = 0
        with self._lock:
            current = self.schema_version
            if current > len(MIGRATIONS):
                raise StoreError(
                    f"store {self.path} has schema version {current}, newer than this "
                    f"theorembench knows ({len(MIGRATIONS)}); upgrade theorembench"
                )
            for version, (_title, sql) in enumerate(MIGRATIONS[current:], start=current + 1):
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    # executescript would commit on its own; run statements one by one
                    for statement in _split_sql(sql):
                        self._conn.execute(statement)
                    self._conn.execute(f"PRAGMA user_version = {version}")
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise
                self._conn.execute("COMMIT")
                applied += 1
        return applied

    # -- runs -------------------------------------------------------------

    def create_run(
        self,
        kind: str,
        signature: str,
        *,
        name: str | None = None,
        model: str | None = None,
        dataset_id: str | None = None,
        config: dict[str, Any] | None = None,
    ) -> str:
        run_id = time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:8]
        now = time.time()
        self.execute(
            "INSERT INTO runs (id, kind, signature, name, model, dataset_id, status, config,"
            " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?, ?)",
            (run_id, kind, signature, name, model, dataset_id, _dumps(config or {}), now, now),
        )
        return run_id

    def latest_run(self, kind: str, signature: str) -> sqlite3.Row | None:
        rows = self.query(
            "SELECT * FROM runs WHERE kind = ? AND signature = ? ORDER BY created_at DESC, rowid DESC LIMIT 1",
            (kind, signature),
        )
        return rows[0] if rows else None

    def get_run(self, run_id: str) -> sqlite3.Row | None:
        rows = self.query("SELECT * FROM runs WHERE id = ?", (run_id,))
        return rows[0] if rows else None

    def set_run_status(
        self, run_id: str, status: str, summary: dict[str, Any] | None = None
    ) -> None:
        if summary is None:
            self.execute(
                "UPDATE runs SET status = ?, updated_at = ? WHERE id = ?",
                (status, time.time(), run_id),
            )
        else:
            self.execute(
                "UPDATE runs SET status = ?, summary = ?, updated_at = ? WHERE id = ?",
                (status, _dumps(summary), time.time(), run_id),
            )

    def runs(self, kind: str | None = None, limit: int = 50) -> list[sqlite3.Row]:
        if kind:
            return self.query(
                "SELECT * FROM runs WHERE kind = ? ORDER BY created_at DESC LIMIT ?", (kind, limit)
            )
        return self.query("SELECT * FROM runs ORDER BY created_at DESC LIMIT ?", (limit,))

    # -- datasets and items ----------------------------------------------

    def put_dataset(
        self, dataset_id: str, items: list[tuple[str, dict[str, Any]]], *, path: str, name: str
    ) -> None:
        """Store a dataset's items once (idempotent: same content, same id)."""
        if self.query("SELECT 1 FROM datasets WHERE id = ?", (dataset_id,)):
            return
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO datasets (id, path, name, n_items, created_at) VALUES (?, ?, ?, ?, ?)",
                (dataset_id, path, name, len(items), time.time()),
            )
            conn.executemany(
                "INSERT INTO items (dataset_id, idx, item_id, payload) VALUES (?, ?, ?, ?)",
                [
                    (dataset_id, idx, item_id, _dumps(payload))
                    for idx, (item_id, payload) in enumerate(items)
                ],
            )

    # -- model calls (cache + usage ledger) ------------------------------

    def cached_call(self, cache_key: str) -> sqlite3.Row | None:
        rows = self.query(
            "SELECT * FROM model_calls WHERE cache_key = ? AND status = 'ok' ORDER BY id DESC LIMIT 1",
            (cache_key,),
        )
        return rows[0] if rows else None

    def record_call(self, **fields: Any) -> int:
        fields.setdefault("created_at", time.time())
        for key in ("request", "response"):
            if key in fields and not isinstance(fields[key], str | None):
                fields[key] = _dumps(fields[key])
        columns = ", ".join(fields)
        marks = ", ".join("?" for _ in fields)
        cur = self.execute(
            f"INSERT INTO model_calls ({columns}) VALUES ({marks})", tuple(fields.values())
        )
        return int(cur.lastrowid or 0)

    def get_call(self, call_id: int) -> sqlite3.Row | None:
        rows = self.query("SELECT * FROM model_calls WHERE id = ?", (call_id,))
        return rows[0] if rows else None

    def usage(self, run_id: str | None = None) -> dict[str, Any]:
        """Totals of the calls actually made (cache hits are not calls)."""
        where, params = ("WHERE run_id = ?", (run_id,)) if run_id else ("", ())
        row = self.query(
            "SELECT COUNT(*) AS calls, SUM(status = 'ok') AS ok, SUM(status != 'ok') AS failed,"
            " COALESCE(SUM(prompt_tokens), 0) AS prompt_tokens,"
            " COALESCE(SUM(completion_tokens), 0) AS completion_tokens,"
            " COALESCE(SUM(reasoning_tokens), 0) AS reasoning_tokens,"
            " COALESCE(SUM(cost_usd), 0) AS cost_usd,"
            " COALESCE(SUM(latency_s), 0) AS latency_s"
            f" FROM model_calls {where}",
            params,
        )[0]
        return {k: row[k] or 0 for k in row.keys()}

    def usage_by_model(self) -> list[sqlite3.Row]:
        return self.query(
            "SELECT model, provider, COUNT(*) AS calls, SUM(status = 'ok') AS ok,"
            " SUM(prompt_tokens) AS prompt_tokens, SUM(completion_tokens) AS completion_tokens,"
            " SUM(reasoning_tokens) AS reasoning_tokens, SUM(cost_usd) AS cost_usd"
            " FROM model_calls GROUP BY model, provider ORDER BY calls DESC"
        )

    # -- results ------------------------------------------------------------

    def put_result(
        self,
        run_id: str,
        idx: int,
        sample: int,
        *,
        item_id: str,
        status: str,
        record: dict[str, Any],
        call_id: int | None = None,
        answer: str | None = None,
        correct_label: str | None = None,
        is_correct: bool | None = None,
        error: str | None = None,
    ) -> None:
        self.execute(
            "INSERT OR REPLACE INTO results (run_id, idx, sample, item_id, call_id, status, answer,"
            " correct_label, is_correct, error, record, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run_id,
                idx,
                sample,
                item_id,
                call_id,
                status,
                answer,
                correct_label,
                None if is_correct is None else int(is_correct),
                error,
                _dumps(record),
                time.time(),
            ),
        )

    def results(self, run_id: str) -> list[sqlite3.Row]:
        return self.query(
            "SELECT * FROM results WHERE run_id = ? ORDER BY idx, sample", (run_id,)
        )

    def delete_results(self, run_id: str, idx: int) -> None:
        self.execute("DELETE FROM results WHERE run_id = ? AND idx = ?", (run_id, idx))


def _split_sql(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]


def open_store(path: str | Path | None = None) -> Store:
    from theorembench.common.paths import default_db

    return Store(path or default_db())


def loads(text: str | None) -> Any:
    return json.loads(text) if text else None
