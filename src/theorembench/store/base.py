"""Small pieces shared by the store's modules: its error, its row type, JSON and hash helpers."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from typing import Any


class StoreError(RuntimeError):
    """The store cannot be opened or used (bad location, unreachable server, unknown schema)."""


class Row:
    """One result row: ``row["col"]``, ``row[0]``, ``row.keys()`` and ``dict(row)`` all work.

    Rows of one result share a single column index, so a row costs one tuple and one small object.
    """

    __slots__ = ("_values", "_index")

    def __init__(self, values: Sequence[Any], index: dict[str, int]):
        self._values = tuple(values)
        self._index = index

    def __getitem__(self, key: str | int | slice) -> Any:
        if isinstance(key, str):
            try:
                return self._values[self._index[key]]
            except KeyError:
                raise KeyError(f"no column {key!r} (columns: {', '.join(self._index)})") from None
        return self._values[key]

    def get(self, key: str, default: Any = None) -> Any:
        i = self._index.get(key)
        return default if i is None else self._values[i]

    def keys(self) -> list[str]:
        return list(self._index)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, value: object) -> bool:
        return value in self._values

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Row):
            return self._values == other._values and list(self._index) == list(other._index)
        if isinstance(other, tuple):
            return self._values == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._values)

    def __repr__(self) -> str:
        return "Row(" + ", ".join(f"{k}={v!r}" for k, v in zip(self._index, self._values, strict=True)) + ")"


def rows_of(result: Any) -> list[Row]:
    """The rows of a SQLAlchemy result as :class:`Row` objects."""
    index = {key: i for i, key in enumerate(result.keys())}
    return [Row(values, index) for values in result]


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def loads(text: str | None) -> Any:
    return json.loads(text) if text else None


def content_hash(data: bytes | str) -> str:
    if isinstance(data, str):
        data = data.encode()
    return hashlib.sha256(data).hexdigest()
