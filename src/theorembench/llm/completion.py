"""What a model call gives back (:class:`Completion`, also rebuilt from a stored call), its cache key's digest, and
the ids of the calls made inside a block (:func:`record_calls`)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass
from typing import Any


@dataclass
class Completion:
    text: str
    model: str
    call_id: int
    cached: bool
    reasoning: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    total_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float | None = None
    attempts: int = 1
    finish_reason: str | None = None
    payload: dict[str, Any] | None = None
    """What a call of another shape than ``generate`` brings back besides its text (see :meth:`LLM.exchange`)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# The lists that receive the id of every model call made in the current context (a stage and
# the stages around it); asyncio tasks inherit the context, so calls made by sub-tasks are seen too.
_CALL_SINKS: ContextVar[tuple[list[int], ...]] = ContextVar("theorembench_call_sinks", default=())


@contextmanager
def record_calls() -> Iterator[list[int]]:
    """Collect the ids of every model call made inside the block: answered, failed or served from the cache.

    Ids are collected as each call ends, so the list holds the calls made before an
    exception too; blocks nest, and an inner block's calls also reach the outer ones.
    """
    sink: list[int] = []
    token = _CALL_SINKS.set((*_CALL_SINKS.get(), sink))
    try:
        yield sink
    finally:
        _CALL_SINKS.reset(token)


def _note_call(call_id: int | None) -> None:
    if call_id:
        for sink in _CALL_SINKS.get():
            sink.append(call_id)


def call_ids_of(exc: BaseException) -> list[int]:
    """The ids of the model calls behind a failure (a failed call, or every reply of a failed repair loop)."""
    ids = getattr(exc, "call_ids", None)
    if ids:
        return list(ids)
    call_id = getattr(exc, "call_id", None)
    return [call_id] if call_id else []


def key_digest(payload: dict[str, Any]) -> str:
    """The cache key of a request's identity: SHA-256 of its canonical JSON (every cached call kind uses this)."""
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()



def _completion_from_row(row: Any, *, cached: bool) -> Completion:
    response = json.loads(row["response"]) if row["response"] else {}
    return Completion(
        text=row["response_text"] or "", model=row["model"], call_id=row["id"], cached=cached,
        reasoning=response.get("reasoning"), prompt_tokens=row["prompt_tokens"],
        completion_tokens=row["completion_tokens"], reasoning_tokens=row["reasoning_tokens"],
        total_tokens=row["total_tokens"], latency_s=row["latency_s"], cost_usd=row["cost_usd"],
        attempts=row["attempts"], finish_reason=response.get("finish_reason"), payload=response.get("payload"),
    )  # fmt: skip
