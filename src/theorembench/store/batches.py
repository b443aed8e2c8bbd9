"""Provider batches in the store (``llm_batches``, ``llm_batch_requests``): what a run handed to a batch API.

The order of writes is what keeps a killed run from paying twice: a batch is recorded ``submitting``
with every request's cache key before the provider is asked to make it, it becomes ``pending`` with
the provider's id before it is polled, and ``ended`` once its results were read (``failed`` when the
provider gave none, or never made it). A request whose cache key sits in a batch that is not
``failed`` is waited for there, never sent again.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa

from theorembench.store.base import Row, dumps
from theorembench.store.db import Store
from theorembench.store.schema import llm_batch_requests, llm_batches

STATUSES = ("submitting", "pending", "ended", "failed")
UNFINISHED = ("submitting", "pending")

_b = llm_batches.c
_r = llm_batch_requests.c


def record_batch(store: Store, batch_id: str, *, provider: str, endpoint: str, model: str,
                 requests: Iterable[tuple[str, str]], detail: dict[str, Any] | None = None,
                 now: float | None = None) -> None:  # fmt: skip
    """A batch about to be submitted (``submitting``) and its requests as ``(custom_id, cache_key)`` pairs."""
    now = time.time() if now is None else now
    pairs = [{"batch_id": batch_id, "custom_id": custom_id, "cache_key": key} for custom_id, key in requests]
    with store.transaction():
        store._execute(llm_batches.insert(), {
            "id": batch_id, "provider": provider, "endpoint": endpoint, "model": model, "status": "submitting",
            "n_requests": len(pairs), "detail": dumps(detail or {}), "created_at": now, "updated_at": now})  # fmt: skip
        if pairs:
            store._execute(llm_batch_requests.insert(), pairs)


def update_batch(store: Store, batch_id: str, *, status: str | None = None, remote_id: str | None = None,
                 input_file: str | None = None, detail: dict[str, Any] | None = None) -> None:  # fmt: skip
    """Change a batch's status, the provider's id or input file, or its detail (what is given)."""
    if status is not None and status not in STATUSES:
        raise ValueError(f"unknown batch status {status!r}; expected one of {', '.join(STATUSES)}")
    values: dict[str, Any] = {"updated_at": time.time()}
    for column, value in (("status", status), ("remote_id", remote_id), ("input_file", input_file)):
        if value is not None:
            values[column] = value
    if detail is not None:
        values["detail"] = dumps(detail)
    store._execute(llm_batches.update().where(_b.id == batch_id).values(**values))


def get_batch(store: Store, batch_id: str) -> Row | None:
    return store._first(sa.select(llm_batches).where(_b.id == batch_id))


def batch_of_request(store: Store, cache_key: str, *, provider: str, endpoint: str, model: str,
                     statuses: Iterable[str] = UNFINISHED) -> Row | None:  # fmt: skip
    """The newest batch of this model and endpoint in one of ``statuses`` that holds a request with this key:
    the batch's columns and the request's ``custom_id``."""
    statement = (sa.select(llm_batches, _r.custom_id).join(llm_batch_requests, _r.batch_id == _b.id)
                 .where(_r.cache_key == cache_key, _b.provider == provider, _b.endpoint == endpoint,
                        _b.model == model, _b.status.in_(list(statuses)))
                 .order_by(_b.created_at.desc()).limit(1))  # fmt: skip
    return store._first(statement)


def has_unfinished_batches(store: Store) -> bool:
    """Whether any batch is still ``submitting`` or ``pending`` (a cheap test before looking requests up)."""
    return store._first(sa.select(_b.id).where(_b.status.in_(UNFINISHED)).limit(1)) is not None


def batches(store: Store, *, status: str | None = None, limit: int = 200) -> list[Row]:
    """Batches, newest first."""
    statement = sa.select(llm_batches).order_by(_b.created_at.desc()).limit(limit)
    if status is not None:
        statement = statement.where(_b.status == status)
    return store._rows(statement)


def batch_requests(store: Store, batch_id: str) -> list[Row]:
    """A batch's requests, as ``custom_id`` and ``cache_key``."""
    return store._rows(sa.select(llm_batch_requests).where(_r.batch_id == batch_id).order_by(_r.custom_id))


__all__ = ["STATUSES", "UNFINISHED", "batch_of_request", "batch_requests", "batches", "get_batch",
           "has_unfinished_batches", "record_batch", "update_batch"]  # fmt: skip
