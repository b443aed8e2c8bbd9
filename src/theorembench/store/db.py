"""The theorembench store: runs, datasets, items, model calls and results, on SQLite or PostgreSQL.

``Store(location)`` opens a SQLite file (a path or ``sqlite:///PATH``; WAL mode) or a
PostgreSQL database (``postgresql://…``), see :mod:`theorembench.store.engine`, and brings its
schema up to date (:mod:`theorembench.store.migrations`). The same SQLAlchemy Core queries run
on both. Every write commits at once, so a process killed at any moment loses at most the call
that was in flight. One ``Store`` object is shared by all coroutines of a process; a lock makes
it safe to use from worker threads too.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql as pg_dialect
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.engine import Connection, CursorResult

from theorembench.store import engine as _engine
from theorembench.store import migrations
from theorembench.store.base import Row, StoreError, content_hash, dumps, loads, rows_of
from theorembench.store.prepared import Prepared
from theorembench.store.schema import TABLES, datasets, model_calls, results, runs
from theorembench.store.schema import items as items_table

__all__ = ["Row", "Store", "StoreError", "content_hash", "loads", "open_store"]
_dumps = dumps
IN_CHUNK = 500  # ids per IN (…) list: well under SQLite's and PostgreSQL's parameter limits

_mc = model_calls.c
_CACHED_CALL = (sa.select(model_calls).where(_mc.cache_key == sa.bindparam("key"), _mc.status == "ok")
                .order_by(_mc.id.desc()).limit(1))  # fmt: skip
_GET_CALL = sa.select(model_calls).where(_mc.id == sa.bindparam("id"))
_GET_RUN = sa.select(runs).where(runs.c.id == sa.bindparam("id"))
_RESULTS = (sa.select(results).where(results.c.run_id == sa.bindparam("run_id"))
            .order_by(results.c.idx, results.c.sample))  # fmt: skip


def _count_if(condition: sa.ColumnElement[bool]) -> sa.ColumnElement[int]:
    return sa.func.sum(sa.case((condition, 1), else_=0))


def _zero_sum(column: sa.ColumnElement[Any]) -> sa.ColumnElement[Any]:
    return sa.func.coalesce(sa.func.sum(column), 0)


class Store:
    """A connection to the store with typed helpers for each table.

    ``path`` is the SQLite file (a ``Path``), or for PostgreSQL the URL without its password;
    ``url`` is the location for messages, ``backend`` is ``"sqlite"`` or ``"postgresql"``.
    """

    def __init__(self, location: str | Path):
        where = _engine.parse_location(location)
        self.backend = where.backend
        self.url = where.display
        self.path: Path | str = where.path if where.path is not None else where.display
        self._engine, self._conn = _engine.connect(where)
        self._lock = threading.RLock()
        self._depth = 0
        self._last_created = 0.0
        self._prepared: dict[Any, Prepared] = {}
        self._dbapi = self._conn.connection.dbapi_connection
        self._closed = False
        try:
            self.migrate()
        except BaseException:
            self.close()
            raise

    # -- plumbing ---------------------------------------------------------

    def location(self) -> str | None:
        """Where another process opens this same store: the SQLite file, or the full PostgreSQL URL (with its
        password: never show it); None for an in-memory store, which no other process can reach."""
        if self.backend == "sqlite":
            return str(self.path) if isinstance(self.path, Path) else None
        return self._engine.url.render_as_string(hide_password=False)

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._conn.close()
                self._engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """Several statements as one transaction (``BEGIN IMMEDIATE`` on SQLite); nested calls join it."""
        with self._lock:
            if self._depth:
                self._depth += 1
                try:
                    yield self._conn
                finally:
                    self._depth -= 1
                return
            with _engine.transaction(self._conn, self.backend):
                self._depth = 1
                try:
                    yield self._conn
                finally:
                    self._depth = 0

    def _execute(self, statement: sa.Executable, params: Mapping[str, Any] | list | None = None) -> CursorResult:
        with self._lock:
            return self._conn.execute(statement, params)

    def _rows(self, statement: sa.Executable, params: Mapping[str, Any] | None = None) -> list[Row]:
        with self._lock:
            return rows_of(self._conn.execute(statement, params))

    def _first(self, statement: sa.Executable, params: Mapping[str, Any] | None = None) -> Row | None:
        found = self._rows(statement, params)
        return found[0] if found else None

    def _hot(self, key: Any, build: Callable[[], sa.Executable], values: Mapping[str, Any],
             columns: tuple[str, ...] | None = None) -> tuple[list[Row], Any]:  # fmt: skip
        """Run a hot-path statement (see :mod:`theorembench.store.prepared`): rows and ``lastrowid``."""
        with self._lock:
            prepared = self._prepared.get(key)
            if prepared is None:
                prepared = self._prepared[key] = Prepared(build(), self._conn.dialect, columns)
            return prepared.run(self._dbapi, values)

    def _upsert(self, table: sa.Table, values: Mapping[str, Any]) -> None:
        """Insert a row, or replace the non-key columns of the row with the same primary key."""
        columns = tuple(values)

        def build() -> sa.Executable:
            insert = (sqlite_dialect.insert if self.backend == "sqlite" else pg_dialect.insert)(table)
            pk = [c.name for c in table.primary_key.columns]
            return insert.on_conflict_do_update(index_elements=pk,
                                                set_={c: insert.excluded[c] for c in columns if c not in pk})  # fmt: skip

        self._hot(("upsert", table.name, columns), build, values, columns)

    def _insert_ignore(self, table: sa.Table, values: Mapping[str, Any]) -> bool:
        """Insert a row unless one with the same primary key exists; True if inserted."""
        insert = (sqlite_dialect.insert if self.backend == "sqlite" else pg_dialect.insert)(table)
        statement = insert.on_conflict_do_nothing().execution_options(preserve_rowcount=True)
        return self._execute(statement, dict(values)).rowcount == 1

    def fetch(self, statement: sa.Executable, params: Mapping[str, Any] | None = None) -> list[Row]:
        """Rows of an ad-hoc read: a Core ``select`` or ``sqlalchemy.text()`` with ``:named`` parameters."""
        if isinstance(statement, str):
            raise TypeError("Store.fetch takes sqlalchemy.text('… :name …') or a select(), not a string")
        return self._rows(statement, params)

    @property
    def schema_version(self) -> str | None:
        """The store's Alembic revision."""
        with self._lock:
            return migrations.current_revision(self._conn)

    def migrate(self) -> int:
        """Apply pending migrations; returns the number applied."""
        with self._lock:
            try:
                return migrations.ensure_schema(self._conn, self.backend, self.url)
            except sa.exc.SQLAlchemyError as exc:
                raise StoreError(f"cannot open store {self.url}: {_engine.describe_error(exc)}") from exc

    def table_counts(self, tables: Iterable[str] | None = None) -> dict[str, int]:
        """Rows per table (every table of the store unless ``tables`` names some)."""
        names = list(TABLES) if tables is None else list(tables)
        unknown = [n for n in names if n not in TABLES]
        if unknown:
            raise StoreError(f"no such store table: {', '.join(unknown)}")
        return {n: int(self._rows(sa.select(sa.func.count()).select_from(TABLES[n]))[0][0]) for n in names}

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
        with self._lock:
            # strictly increasing within a process, so "latest" never depends on a tie-break
            now = self._last_created = max(time.time(), self._last_created + 1e-6)
            self._execute(runs.insert(), {
                "id": run_id, "kind": kind, "signature": signature, "name": name, "model": model,
                "dataset_id": dataset_id, "status": "running", "config": _dumps(config or {}),
                "created_at": now, "updated_at": now,
            })  # fmt: skip
        return run_id

    def latest_run(self, kind: str, signature: str) -> Row | None:
        return self._first(sa.select(runs).where(runs.c.kind == kind, runs.c.signature == signature)
                           .order_by(runs.c.created_at.desc(), runs.c.id.desc()).limit(1))  # fmt: skip

    def get_run(self, run_id: str) -> Row | None:
        return self._first(_GET_RUN, {"id": run_id})

    def set_run_status(self, run_id: str, status: str, summary: dict[str, Any] | None = None) -> None:
        values: dict[str, Any] = {"status": status, "updated_at": time.time()}
        if summary is not None:
            values["summary"] = _dumps(summary)
        self._execute(runs.update().where(runs.c.id == run_id).values(**values))

    def runs(self, kind: str | None = None, limit: int = 50) -> list[Row]:
        statement = sa.select(runs).order_by(runs.c.created_at.desc(), runs.c.id.desc()).limit(limit)
        if kind:
            statement = statement.where(runs.c.kind == kind)
        return self._rows(statement)

    # -- datasets and items ----------------------------------------------

    def put_dataset(
        self, dataset_id: str, items: list[tuple[str, dict[str, Any]]], *, path: str, name: str
    ) -> None:
        """Store a dataset's items once (idempotent: same content, same id)."""
        if self._first(sa.select(datasets.c.id).where(datasets.c.id == dataset_id)):
            return
        with self.transaction():
            added = self._insert_ignore(datasets, {"id": dataset_id, "path": path, "name": name,
                                                   "n_items": len(items), "created_at": time.time()})  # fmt: skip
            if added and items:
                self._execute(items_table.insert(), [
                    {"dataset_id": dataset_id, "idx": idx, "item_id": item_id, "payload": _dumps(payload)}
                    for idx, (item_id, payload) in enumerate(items)
                ])  # fmt: skip

    # -- model calls (cache + usage ledger) ------------------------------

    def cached_call(self, cache_key: str) -> Row | None:
        """The latest answered call with this key; failed calls and replies marked invalid are never served."""
        rows, _ = self._hot("cached_call", lambda: _CACHED_CALL, {"key": cache_key})
        return rows[0] if rows else None

    def mark_call_invalid(self, call_id: int, reason: str) -> None:
        """Mark an answered call whose reply could not be used (it stays in the ledger, cost and all)."""
        self._execute(model_calls.update().where(_mc.id == call_id, _mc.status == "ok")
                      .values(status="invalid", error=reason[:2000]))  # fmt: skip

    def record_call(self, **fields: Any) -> int:
        fields.setdefault("created_at", time.time())
        for key in ("request", "response"):
            if key in fields and not isinstance(fields[key], str | None):
                fields[key] = _dumps(fields[key])
        columns = tuple(fields)

        def build() -> sa.Executable:  # the new id: RETURNING on PostgreSQL, the cursor's lastrowid on SQLite
            return model_calls.insert() if self.backend == "sqlite" else model_calls.insert().returning(_mc.id)

        rows, last = self._hot(("record_call", columns), build, fields, columns)
        return int(rows[0][0] if rows else last or 0)

    def get_call(self, call_id: int) -> Row | None:
        rows, _ = self._hot("get_call", lambda: _GET_CALL, {"id": call_id})
        return rows[0] if rows else None

    def usage(self, run_id: str | None = None) -> dict[str, Any]:
        """Totals of the calls actually made (cache hits are not calls).

        ``ok``: answered; ``invalid``: answered, but the reply could not be used; ``failed``: no answer.
        """
        statement = sa.select(
            sa.func.count().label("calls"), _count_if(_mc.status == "ok").label("ok"),
            _count_if(_mc.status == "invalid").label("invalid"),
            _count_if(_mc.status.not_in(("ok", "invalid"))).label("failed"),
            _zero_sum(_mc.prompt_tokens).label("prompt_tokens"),
            _zero_sum(_mc.completion_tokens).label("completion_tokens"),
            _zero_sum(_mc.reasoning_tokens).label("reasoning_tokens"),
            _zero_sum(_mc.cost_usd).label("cost_usd"), _zero_sum(_mc.latency_s).label("latency_s"),
        )  # fmt: skip
        if run_id:
            statement = statement.where(_mc.run_id == run_id)
        row = self._rows(statement)[0]
        return {k: row[k] or 0 for k in row.keys()}

    def usage_by_model(self) -> list[Row]:
        return self._rows(
            sa.select(
                _mc.model, _mc.provider, sa.func.count().label("calls"), _count_if(_mc.status == "ok").label("ok"),
                sa.func.sum(_mc.prompt_tokens).label("prompt_tokens"),
                sa.func.sum(_mc.completion_tokens).label("completion_tokens"),
                sa.func.sum(_mc.reasoning_tokens).label("reasoning_tokens"),
                sa.func.sum(_mc.cost_usd).label("cost_usd"),
            ).group_by(_mc.model, _mc.provider).order_by(sa.desc("calls"), _mc.model, _mc.provider)
        )  # fmt: skip

    def usage_of_calls(self, call_ids: Iterable[int]) -> dict[str, Any]:
        """Calls, prompt/completion tokens and cost (None when no call was priced) of these call ids.

        The ids are looked up in chunks of ``IN_CHUNK``, so any number of them works.
        """
        total: dict[str, Any] = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": None}
        statement = sa.select(sa.func.count(), _zero_sum(_mc.prompt_tokens), _zero_sum(_mc.completion_tokens),
                              sa.func.sum(_mc.cost_usd)).where(_mc.id.in_(sa.bindparam("ids", expanding=True)))  # fmt: skip
        ids = sorted({int(i) for i in call_ids})
        for start in range(0, len(ids), IN_CHUNK):
            chunk = ids[start:start + IN_CHUNK]
            calls, prompt, completion, cost = self._rows(statement, {"ids": chunk})[0]
            total["calls"] += int(calls)
            total["prompt_tokens"] += int(prompt)
            total["completion_tokens"] += int(completion)
            if cost is not None:
                total["cost_usd"] = (total["cost_usd"] or 0) + float(cost)
        return total

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
        self._upsert(results, {
            "run_id": run_id, "idx": idx, "sample": sample, "item_id": item_id, "call_id": call_id,
            "status": status, "answer": answer, "correct_label": correct_label,
            "is_correct": None if is_correct is None else int(is_correct), "error": error,
            "record": _dumps(record), "created_at": time.time(),
        })  # fmt: skip

    def results(self, run_id: str) -> list[Row]:
        return self._rows(_RESULTS, {"run_id": run_id})

    def delete_results(self, run_id: str, idx: int) -> None:
        self._execute(results.delete().where(results.c.run_id == run_id, results.c.idx == idx))


def open_store(location: str | Path | None = None) -> Store:
    """The store at ``location``, or at ``$THEOREMBENCH_DB`` / the default file."""
    from theorembench.common.paths import default_db

    return Store(location or default_db())
