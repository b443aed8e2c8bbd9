"""One LLM client for everything: generation stages, judges and evaluated models.

Calls go through Inspect AI's model API (so every provider Inspect knows is
available under its usual name). Around it this module adds what a benchmark
pipeline needs:

* a response cache in the store: an identical request (same model, endpoint and
  revision tag, messages, generation settings and sample index) is answered from
  disk and never paid twice; failed calls and replies marked invalid are never served;
* bounded retries with exponential backoff that honours ``Retry-After`` (the shared
  :class:`~theorembench.common.retry.RetryPolicy`); every failed attempt is classified
  by :func:`classify` and the final failure is recorded with its reason;
* single flight: identical concurrent calls make one request, and share its answer or its failure;
* a per-model concurrency limit;
* a usage ledger: prompt, completion and reasoning tokens, latency, provider,
  model and cost (from the editable price table) for every call made;
* the command's spending policy (:mod:`spending`): a cost cap checked before each request,
  a forecast that counts calls instead of making them, the providers' batch APIs.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from theorembench.common.retry import FailedAttempt, RetryPolicy
from theorembench.llm.backends import RawOutput, choose_backend
from theorembench.llm.batch import batch_route
from theorembench.llm.completion import (  # noqa: F401 - re-exported: the client's public names
    Completion,
    _completion_from_row,
    _note_call,
    call_ids_of,
    key_digest,
    record_calls,
)
from theorembench.llm.failures import LLMError, _Failure, classify
from theorembench.llm.models import ModelSpec, resolve_model
from theorembench.llm.pricing import PriceTable
from theorembench.llm.spending import current_spending
from theorembench.llm.structured import ask_for_json
from theorembench.store import Store

Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": "..."}


class GenerateSettings(BaseModel):
    """Per-call generation settings, immutable. Only the first group changes what a model answers.

    Change one with ``model_copy(update={...})``, which gives a new object.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    reasoning_effort: str | None = None
    thinking_budget: int | None = None
    seed: int | None = None
    extra_body: dict[str, Any] | None = None
    # transport settings: not part of the cache key
    timeout: float | None = Field(default=None, description="seconds per attempt")
    max_retries: int = Field(default=3, ge=0, le=20)
    max_connections: int | None = Field(default=None, ge=1)

    # memoised dumps: settings objects are shared by thousands of calls (a copy starts with empty memos)
    _cache_fields: dict[str, Any] | None = PrivateAttr(default=None)
    _request_fields: dict[str, Any] | None = PrivateAttr(default=None)

    def cache_fields(self) -> dict[str, Any]:
        if self._cache_fields is None:
            self._cache_fields = self.model_dump(exclude={"timeout", "max_retries", "max_connections"})
        return self._cache_fields

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> GenerateSettings:
        copy = super().model_copy(update=update, deep=deep)
        copy._cache_fields = None
        copy._request_fields = None
        return copy

    def request_fields(self) -> dict[str, Any]:
        if self._request_fields is None:
            self._request_fields = self.model_dump(exclude_none=True)
        return self._request_fields


def cache_key(spec: ModelSpec, messages: list[Message], settings: GenerateSettings,
              sample: int, schema: dict[str, Any] | None) -> str:  # fmt: skip
    """The response-cache key of a call: who answers (model name, endpoint and revision tag) and what is asked."""
    payload = {
        "model": spec.name,
        "endpoint": spec.endpoint,
        "messages": messages,
        "settings": settings.cache_fields(),
        "sample": sample,
        "schema": schema,
    }
    return key_digest(payload)


def check_model(name: str, *, base_url: str | None = None, api_key: str | None = None,
                backend: str | None = None, revision: str | None = None) -> ModelSpec:  # fmt: skip
    """A model's spec, with its name, credentials and a backend that serves it checked now (no store needed)."""
    spec = resolve_model(name, base_url=base_url, api_key=api_key, revision=revision)
    choose_backend(spec.provider, backend)  # a bad choice fails now too
    return spec


@dataclass
class _Bound:
    spec: ModelSpec
    backend: Any
    semaphore: asyncio.Semaphore | None = None
    max_connections: int = 1
    loop: Any = None


@dataclass
class _Flight:
    """How the leading call of a set of identical concurrent calls ended: its call id, and its failure if any."""

    call_id: int | None
    error: LLMError | None = None


def _start_local_server(model: str) -> str:
    from theorembench.llm.local import ensure_local

    return ensure_local(model)


class LLM:
    """The client. One per process (or per run); share it between stages.

    ``start_local`` gives the base URL of a running server for ``local/<model>`` (by default
    :func:`theorembench.llm.local.ensure_local`, which may start one); it runs in a worker
    thread, once at a time, so starting the embedded model never stalls calls in flight.
    """

    def __init__(
        self,
        store: Store,
        *,
        prices: PriceTable | None = None,
        use_cache: bool = True,
        run_id: str | None = None,
        backend: str | None = None,
        start_local: Callable[[str], str] | None = None,
    ):
        self.store = store
        self.prices = prices or PriceTable.load()
        self.use_cache = use_cache
        self.run_id = run_id
        self.backend_preference = backend
        self._start_local = start_local or _start_local_server
        self._local_lock = threading.Lock()
        self._local_urls: dict[str, str] = {}
        self._models: dict[tuple[str, str | None], _Bound] = {}
        self._inflight: dict[str, asyncio.Future[_Flight | None]] = {}
        self.calls_made = 0
        self.cache_hits = 0
        self.spending = current_spending()  # the command's cost cap, forecast and batch mode

    # -- model resolution ---------------------------------------------------

    def resolve(self, name: str, *, base_url: str | None = None, api_key: str | None = None) -> ModelSpec:
        """Check a model name and its credentials now, before any work starts."""
        return check_model(name, base_url=base_url, api_key=api_key, backend=self.backend_preference)

    def _local_url(self, model: str) -> str:
        """The embedded model's base URL, started at most once at a time (blocking: call it off the event loop)."""
        with self._local_lock:
            url = self._local_urls.get(model)
            if url is None:
                url = self._local_urls[model] = self._start_local(model)
            return url

    def address(self, spec: ModelSpec) -> tuple[str | None, str | None]:
        """The base URL and key that reach ``spec``; a local model's server is found or started (blocking)."""
        if not spec.is_local:
            return spec.base_url, spec.api_key
        return spec.base_url or self._local_url(spec.model), spec.api_key or "local"

    async def bind(self, spec: ModelSpec, settings: GenerateSettings) -> _Bound:
        """The backend and connection slots of a model; a local model's server is found or started off the loop."""
        if (spec.name, spec.base_url) not in self._models and spec.is_local and not spec.base_url:
            await asyncio.to_thread(self._local_url, spec.model)
        return self._bound(spec, settings)

    def _bound(self, spec: ModelSpec, settings: GenerateSettings) -> _Bound:
        key = (spec.name, spec.base_url)
        bound = self._models.get(key)
        loop = asyncio.get_running_loop()
        if bound is None:
            base_url, api_key = spec.base_url, spec.api_key
            if spec.is_local:
                base_url = base_url or self._local_url(spec.model)  # at once after bind(): started already
                api_key = api_key or "local"
            llama_cpp = spec.is_local or spec.provider == "llama-cpp-python"
            kind = choose_backend(spec.provider, self.backend_preference)
            backend: Any
            if kind == "direct":
                from theorembench.llm.backends.openai_compat import OpenAICompatBackend

                assert base_url is not None
                backend = OpenAICompatBackend(base_url, api_key, spec.model, llama_cpp=llama_cpp)
            else:
                from theorembench.llm.backends.inspect_backend import InspectBackend

                backend = InspectBackend(spec.inspect_name, spec.provider, base_url, api_key, llama_cpp=llama_cpp)
            default_conns = 1 if spec.is_local else 16
            bound = _Bound(spec, backend, max_connections=settings.max_connections or default_conns)
            self._models[key] = bound
        if bound.semaphore is None or bound.loop is not loop:
            if settings.max_connections:
                bound.max_connections = settings.max_connections
            bound.semaphore = asyncio.Semaphore(bound.max_connections)
            bound.loop = loop
        return bound

    async def aclose(self) -> None:
        for bound in self._models.values():
            await bound.backend.aclose()

    # -- generation -----------------------------------------------------------

    async def generate(
        self,
        model: str | ModelSpec,
        messages: list[Message],
        settings: GenerateSettings | None = None,
        *,
        purpose: str = "generate",
        sample: int = 0,
        schema: dict[str, Any] | None = None,
        use_cache: bool | None = None,
    ) -> Completion:
        """Ask a model once; answered from the cache when this exact call was made before.

        Single flight: while an identical call is under way, a duplicate waits for it and gets
        its answer, or its failure (an :class:`LLMError` carrying the leading call's id), and
        never sends a request of its own; a leading call that was cancelled hands over to a waiter.
        """
        settings = settings or GenerateSettings()
        spec = model if isinstance(model, ModelSpec) else self.resolve(model)
        key = cache_key(spec, messages, settings, sample, schema)
        caching = self.use_cache if use_cache is None else use_cache
        if self.spending.forecast is not None:
            return self._forecast(spec, key, {"messages": messages, "schema": schema}, settings.max_tokens, purpose,
                                  caching, schema=schema)  # fmt: skip
        if (hit := self._before_start(spec, key, caching)) is not None:
            return hit
        bound = await self.bind(spec, settings)
        if settings.seed is not None and sample:
            # sample k of a seeded call samples with seed + k: distinct draws, each reproducible
            settings = settings.model_copy(update={"seed": settings.seed + sample})
        request = {"messages": messages, "settings": settings.request_fields(), "sample": sample, "schema": schema}
        send = partial(bound.backend.generate, messages, settings, schema, bound.max_connections)
        # a provider batch (--batch), or the batch a killed run left holding this request (see llm/batch)
        if (batched := batch_route(self, spec, bound, key, messages, settings, schema, caching, send)) is not None:
            bound, send = batched
        return await self._flight(spec, bound, key, request, send, settings, purpose, caching)

    async def exchange(self, model: str | ModelSpec, identity: dict[str, Any], request: dict[str, Any],
                       send: Callable[[], Awaitable[RawOutput]], settings: GenerateSettings | None = None, *,
                       purpose: str, use_cache: bool | None = None, max_tokens: int | None = None,
                       placeholder: Callable[[str], dict[str, Any]] | None = None) -> Completion:  # fmt: skip
        """A call of another shape than :meth:`generate` (a conversation with tools, say), with the same cache,
        single flight, retries, connection limit, ledger and prices.

        ``identity`` is what is asked besides the model and its endpoint: it makes the cache key, so it holds
        everything that changes the answer, a sample index included. ``request`` is what the ledger records
        of it; ``send()`` makes one attempt. The :class:`RawOutput`'s ``payload`` comes back as
        :attr:`Completion.payload`, from the cache too. Only the transport fields of ``settings`` count.
        ``max_tokens`` (the reply's cap) and ``placeholder(text) -> payload`` (a stand-in answer's payload)
        serve a forecast, which counts ``identity`` as the prompt.
        """
        settings = settings or GenerateSettings()
        spec = model if isinstance(model, ModelSpec) else self.resolve(model)
        key = key_digest({"model": spec.name, "endpoint": spec.endpoint, **identity})
        caching = self.use_cache if use_cache is None else use_cache
        if self.spending.forecast is not None:
            return self._forecast(spec, key, identity, max_tokens or settings.max_tokens, purpose, caching,
                                  placeholder=placeholder)  # fmt: skip
        if (hit := self._before_start(spec, key, caching)) is not None:
            return hit
        bound = await self.bind(spec, settings)
        return await self._flight(spec, bound, key, request, send, settings, purpose, caching)

    def _forecast(self, spec: ModelSpec, key: str, asked: dict[str, Any], max_tokens: int | None, purpose: str,
                  caching: bool, *, schema: dict[str, Any] | None = None,
                  placeholder: Callable[[str], dict[str, Any]] | None = None) -> Completion:  # fmt: skip
        """A forecast's call (see :mod:`forecast`): free when cached, else counted and answered by a placeholder,
        which is stored (in the forecast's scratch store) so that an identical call is counted as cached."""
        forecast = self.spending.forecast
        assert forecast is not None
        if caching and (row := self.store.cached_call(key)) is not None:
            forecast.cached(purpose, spec.name)
            self.cache_hits += 1
            return _completion_from_row(row, cached=True)
        forecast.plan(self.store, spec.provider, spec.name, purpose, asked, max_tokens)
        text, payload = forecast.placeholder(self.store, purpose, spec.name, schema)
        if payload is None and placeholder is not None:
            payload = placeholder(text)
        response = {"text": text, "finish_reason": "stop", "backend": "forecast", "failed_attempts": []}
        if payload is not None:
            response["payload"] = payload
        call_id = self.store.record_call(
            cache_key=key, run_id=self.run_id, purpose=purpose, model=spec.name, provider=spec.provider,
            request={"forecast": True}, response_text=text, response=response, status="ok", attempts=0,
            latency_s=0.0, cost_usd=0.0,
        )  # fmt: skip
        return Completion(text=text, model=spec.name, call_id=call_id, cached=False, latency_s=0.0, cost_usd=0.0,
                          attempts=0, finish_reason="stop", payload=payload)  # fmt: skip

    def _before_start(self, spec: ModelSpec, key: str, caching: bool) -> Completion | None:
        """The cached answer of a local model not started yet: its server starts on the first call the cache does
        not hold, so a run answered from the cache starts none."""
        if caching and spec.is_local and (spec.name, spec.base_url) not in self._models:
            row = self.store.cached_call(key)
            if row is not None:
                self.cache_hits += 1
                _note_call(row["id"])
                return _completion_from_row(row, cached=True)
        return None

    async def _flight(self, spec: ModelSpec, bound: _Bound, key: str, request: dict[str, Any],
                      send: Callable[[], Awaitable[RawOutput]], settings: GenerateSettings, purpose: str,
                      caching: bool) -> Completion:  # fmt: skip
        """One call under single flight (see :meth:`generate`)."""
        future: asyncio.Future[_Flight | None] | None = None
        if caching:
            loop = asyncio.get_running_loop()
            while (pending := self._inflight.get(key)) is not None and pending.get_loop() is loop:
                flight = await asyncio.shield(pending)
                if flight is not None:
                    return self._follow(flight)
            future = self._inflight[key] = loop.create_future()
        flight = None
        try:
            completion = await self._generate_once(spec, bound, key, request, send, settings, purpose, caching)
            flight = _Flight(completion.call_id)
        except BaseException as exc:
            _note_call(getattr(exc, "call_id", None))
            if isinstance(exc, LLMError):
                flight = _Flight(exc.call_id, exc)
            raise
        finally:
            if future is not None:
                if self._inflight.get(key) is future:  # only the owner removes its own entry
                    del self._inflight[key]
                if not future.done():
                    future.set_result(flight)
        _note_call(completion.call_id)
        return completion

    def _follow(self, flight: _Flight) -> Completion:
        """A duplicate call's outcome: the leading call's answer, or its failure."""
        _note_call(flight.call_id)
        if flight.error is not None:
            error = flight.error
            raise LLMError(error.kind, error.message, attempts=error.attempts, call_id=flight.call_id)
        row = self.store.get_call(flight.call_id) if flight.call_id else None
        if row is None:
            raise LLMError("error", f"the answer of call {flight.call_id} is missing from the store",
                           attempts=0, call_id=flight.call_id)  # fmt: skip
        self.cache_hits += 1
        return _completion_from_row(row, cached=True)

    async def _generate_once(self, spec: ModelSpec, bound: _Bound, key: str, request: dict[str, Any],
                             send: Callable[[], Awaitable[RawOutput]], settings: GenerateSettings, purpose: str,
                             caching: bool) -> Completion:  # fmt: skip
        assert bound.semaphore is not None
        failed: list[FailedAttempt[_Failure]] = []
        error: tuple[_Failure, float] | None = None
        started = time.perf_counter()
        reservation, paid = 0.0, None

        async def attempt() -> Any:
            nonlocal started
            started = time.perf_counter()
            return await send()

        try:
            # The connection slot is taken before the cache look-up, so that a burst of
            # thousands of queued calls does not delay the first requests (it spreads the
            # look-up work over the run); backoff sleeps keep the slot, easing a 429 storm.
            async with bound.semaphore:
                if caching:
                    row = self.store.cached_call(key)
                    if row is not None:
                        self.cache_hits += 1
                        return _completion_from_row(row, cached=True)
                # under a cost cap, what the call may cost is held before it starts (CostCapReached: nothing is sent)
                reservation = self._reserve(spec, bound, request, settings, purpose)
                retrying = RetryPolicy(max_retries=settings.max_retries).async_retrying(classify,
                                                                                        on_failure=failed.append)
                try:
                    raw = await retrying(attempt)
                except Exception as exc:
                    if not failed or failed[-1].error is not exc:
                        raise
                    error = (failed[-1].judgement, time.perf_counter() - started)
            latency = time.perf_counter() - started
            failures = [f"attempt {f.number}: {f.judgement.kind}: {f.judgement.message}" for f in failed]
            attempts = len(failed) + (error is None)
            # let a call waiting for this connection slot send its request before the bookkeeping below
            await asyncio.sleep(0)
            if error is not None:
                failure, latency = error
                call_id = self.store.record_call(
                    cache_key=key, run_id=self.run_id, purpose=purpose, model=spec.name,
                    provider=spec.provider, request=request, status="error",
                    error="; ".join(failures), attempts=attempts, latency_s=latency,
                )  # fmt: skip
                raise LLMError(failure.kind, failure.message, attempts=attempts, call_id=call_id)

            self.calls_made += 1
            cost = self.prices.cost(spec.name, raw.prompt_tokens, raw.completion_tokens, raw.cached_tokens)
            if cost is not None and raw.price_factor != 1.0:
                cost *= raw.price_factor
            paid = cost
            total = raw.prompt_tokens + raw.completion_tokens
            response = {"text": raw.text, "reasoning": raw.reasoning, "finish_reason": raw.finish_reason,
                        "model": raw.model, "backend": bound.backend.name, "failed_attempts": failures}  # fmt: skip
            if raw.payload is not None:
                response["payload"] = raw.payload
            if raw.price_factor != 1.0:
                response["price_factor"] = raw.price_factor
            call_id = self.store.record_call(
                cache_key=key, run_id=self.run_id, purpose=purpose, model=spec.name,
                provider=spec.provider, request=request, response_text=raw.text, response=response,
                status="ok", attempts=attempts, prompt_tokens=raw.prompt_tokens,
                completion_tokens=raw.completion_tokens, reasoning_tokens=raw.reasoning_tokens,
                total_tokens=total, latency_s=latency, cost_usd=cost,
            )  # fmt: skip
            return Completion(
                text=raw.text, model=spec.name, call_id=call_id, cached=False, reasoning=raw.reasoning,
                prompt_tokens=raw.prompt_tokens, completion_tokens=raw.completion_tokens,
                reasoning_tokens=raw.reasoning_tokens, total_tokens=total, latency_s=latency,
                cost_usd=cost, attempts=attempts, finish_reason=raw.finish_reason, payload=raw.payload,
            )  # fmt: skip
        finally:
            if reservation or paid:
                self.spending.settle(reservation, paid)

    def _reserve(self, spec: ModelSpec, bound: _Bound, request: dict[str, Any], settings: GenerateSettings,
                 purpose: str) -> float:
        """Hold a call's most likely high cost under the command's cost cap (0 without a cap)."""
        if self.spending.max_cost is None:
            return 0.0
        from theorembench.llm.forecast import plan_call, reserve_cost
        from theorembench.store.history import output_history

        # the token cap bounds the reply (reasoning included), so a call never costs more than it held; without
        # one, the stage's history says how long a reply runs
        history = None if settings.max_tokens else output_history(self.store, spec.name, purpose)
        plan = plan_call(spec.provider, spec.name, request, settings.max_tokens, history)
        factor = getattr(bound.backend, "price_factor", 1.0)  # a provider batch's price, where the call is batched
        return self.spending.reserve(spec.name, reserve_cost(self.prices, spec.name, plan, factor))

    # -- structured output -------------------------------------------------------

    async def generate_json(
        self,
        model: str | ModelSpec,
        messages: list[Message],
        schema: dict[str, Any],
        settings: GenerateSettings | None = None,
        *,
        purpose: str = "generate_json",
        sample: int = 0,
        repair_attempts: int = 2,
    ) -> tuple[Any, list[Completion]]:
        """Ask for JSON matching ``schema``; returns the validated object and every completion.

        An invalid reply gets up to ``repair_attempts`` follow-up turns that quote the
        validation error and ask for corrected JSON only. Invalid replies stay in the usage
        ledger, marked invalid, and are never served from the cache again: a rerun asks anew.
        """
        return await ask_for_json(self, model, messages, schema, settings, purpose=purpose, sample=sample,
                                  repair_attempts=repair_attempts)  # fmt: skip
