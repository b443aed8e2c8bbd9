"""Hot-path statements: a Core statement compiled once for the store's dialect, run on the driver's cursor.

The LLM client looks up the cache and records every model call, and evaluations store every
result: a few statements run thousands of times per run. Going through SQLAlchemy's execution
layer costs about 50 µs each on SQLite, five times the statement itself; these statements skip
it. The SQL is still SQLAlchemy's, compiled for each dialect from the same ``Table`` objects,
so both backends run the same code; parameters get the dialect's bind processors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Dialect

from theorembench.store.base import Row


class Prepared:
    """One compiled statement; ``columns`` fixes the parameter names of an INSERT's VALUES."""

    def __init__(self, statement: sa.Executable, dialect: Dialect, columns: Sequence[str] | None = None):
        kwargs = {"column_keys": list(columns)} if columns is not None else {}
        self.compiled = statement.compile(dialect=dialect, **kwargs)
        self.sql = str(self.compiled)
        self.order = self.compiled.positiontup  # None for named parameter styles
        self.processors = dict(getattr(self.compiled, "_bind_processors", {}) or {})
        self.index: dict[str, int] | None = None

    def params(self, values: Mapping[str, Any]) -> Sequence[Any] | dict[str, Any]:
        full = self.compiled.construct_params(dict(values))
        for name, process in self.processors.items():
            if name in full and full[name] is not None:
                full[name] = process(full[name])
        return tuple(full[name] for name in self.order) if self.order is not None else full

    def run(self, dbapi_connection: Any, values: Mapping[str, Any]) -> tuple[list[Row], Any]:
        """Execute; returns the rows (for statements that return any) and the cursor's ``lastrowid``."""
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(self.sql, self.params(values))
            last = getattr(cursor, "lastrowid", None)
            if cursor.description is None:
                return [], last
            if self.index is None:
                self.index = {d[0]: i for i, d in enumerate(cursor.description)}
            return [Row(row, self.index) for row in cursor.fetchall()], last
        finally:
            cursor.close()
