"""Where the client hands a call to a batcher: which models can batch, and each request's body for its API."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

from theorembench.llm.backends import RawOutput
from theorembench.store.batches import has_unfinished_batches

if TYPE_CHECKING:  # aiohttp is imported only once a batcher is made
    from theorembench.llm.batch.batcher import Batcher
    from theorembench.llm.batch.wire import BatchAPI

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: providers whose batch API theorembench speaks (``openai-api``: a server with OpenAI's ``/files`` and ``/batches``)
BATCH_PROVIDERS = ("openai", "openai-api", "anthropic")


class _Batchers:
    """One client's batchers (one per model, endpoint and event loop), and whether its store holds batches
    still running (asked once: a call outside ``--batch`` looks its request up only then)."""

    def __init__(self) -> None:
        self.batchers: dict[tuple[str, str], Batcher] = {}
        self.unfinished: bool | None = None


_CLIENTS: weakref.WeakKeyDictionary[Any, _Batchers] = weakref.WeakKeyDictionary()


def batch_route(llm: Any, spec: Any, bound: Any, key: str, messages: list[dict[str, str]], settings: Any,
                schema: dict[str, Any] | None, caching: bool,
                send: Callable[[], Awaitable[RawOutput]]) -> tuple[Any, Callable[[], Awaitable[RawOutput]]] | None:  # fmt: skip
    """The connection slots and ``send`` of a call that goes to (or waits for) a provider batch; None for a call
    sent as usual.

    Under ``--batch`` every call of a model that can batch goes to its batcher. Without it, a call whose
    request sits in a batch still running (a killed ``--batch`` run's) waits for that batch, so it is never
    paid twice; every other call is sent as usual (``send``)."""
    policy = llm.spending
    if spec.provider not in BATCH_PROVIDERS or not (policy.batch or policy.resume_batches):
        return None
    clients = _CLIENTS.get(llm)
    if clients is None:
        clients = _CLIENTS[llm] = _Batchers()
    if not policy.batch:
        if clients.unfinished is None:
            clients.unfinished = has_unfinished_batches(llm.store)
        if not clients.unfinished:
            return None
    body = request_body(spec, bound, messages, settings, schema)
    if body is None:
        return None
    batcher = _batcher(clients, llm, spec)
    if not policy.batch:
        if batcher.stored(key, caching=False) is None:
            return None
        ask = partial(batcher.ask, key, body, caching=caching, fallback=send)
    else:  # without resume_batches, a fresh start: the requests of earlier batches are asked again
        ask = partial(batcher.ask, key, body, caching=caching, resume=policy.resume_batches)
    return replace(bound, backend=batcher, semaphore=batcher.semaphore), ask


def _batcher(clients: _Batchers, llm: Any, spec: Any) -> Batcher:
    from theorembench.llm.batch.batcher import Batcher

    loop = asyncio.get_running_loop()
    batcher = clients.batchers.get((spec.name, spec.endpoint))
    if batcher is None or batcher.loop is not loop:
        batcher = clients.batchers[(spec.name, spec.endpoint)] = Batcher(
            batch_api(spec.provider, spec.base_url, spec.api_key), llm.store,
            provider=spec.provider, endpoint=spec.endpoint, model=spec.name)  # fmt: skip
    return batcher


def batch_api(provider: str, base_url: str | None, api_key: str | None) -> BatchAPI:
    if provider == "anthropic":
        from theorembench.llm.batch.anthropic_batch import AnthropicBatches

        return AnthropicBatches(base_url, api_key)
    from theorembench.llm.batch.openai_batch import OpenAIBatches

    return OpenAIBatches(base_url or OPENAI_DEFAULT_BASE_URL, api_key)


def request_body(spec: Any, bound: Any, messages: list[dict[str, str]], settings: Any,
                 schema: dict[str, Any] | None) -> dict[str, Any] | None:  # fmt: skip
    """One request's body as the provider's batch API takes it; None for a call it cannot batch."""
    if spec.provider == "anthropic":
        if schema is not None:  # structured output goes through Inspect's own handling: sent as usual
            return None
        from theorembench.llm.batch.anthropic_batch import messages_body

        return messages_body(spec.model, messages, settings)
    from theorembench.llm.backends.openai_compat import OpenAICompatBackend

    backend = bound.backend if isinstance(bound.backend, OpenAICompatBackend) else \
        OpenAICompatBackend(spec.base_url or OPENAI_DEFAULT_BASE_URL, None, spec.model)  # fmt: skip
    body = backend.body(messages, settings, schema)
    if spec.provider == "openai" and "max_tokens" in body:  # OpenAI's reasoning models take only the new name
        body["max_completion_tokens"] = body.pop("max_tokens")
    return body


__all__ = ["BATCH_PROVIDERS", "batch_api", "batch_route", "request_body"]
