"""One LLM client for everything: generation stages, judges and evaluated models.

Calls go through Inspect AI's model API (so every provider Inspect knows is
available under its usual name). Around it this module adds what a benchmark
pipeline needs:

* a response cache in the store: an identical request (same model, messages,
  generation settings and sample index) is answered from disk and never paid twice;
* bounded retries with exponential backoff that honours ``Retry-After`` (the shared
  :class:`~theorembench.common.retry.RetryPolicy`); every failed attempt is classified
  by :func:`classify` and the final failure is recorded with its reason;
* a per-model concurrency limit;
* a usage ledger: prompt, completion and reasoning tokens, latency, provider,
  model and cost (from the editable price table) for every call made.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from theorembench.common.retry import FailedAttempt, RetryPolicy, retry_after_seconds
from theorembench.llm.backends import choose_backend
from theorembench.llm.models import ModelSpec, resolve_model
from theorembench.llm.pricing import PriceTable
from theorembench.store import Store

Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": "..."}


class GenerateSettings(BaseModel):
    """Per-call generation settings. Only the first group changes what a model answers."""

    model_config = ConfigDict(extra="forbid")

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

    # memoised dumps: settings objects are shared by thousands of calls (treat them as immutable;
    # change one with model_copy, which starts with empty memos)
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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class LLMError(RuntimeError):
    """A call that failed for good, after its bounded retries."""

    def __init__(self, kind: str, message: str, *, attempts: int, call_id: int | None = None):
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message
        self.attempts = attempts
        self.call_id = call_id


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


@dataclass
class _Failure:
    kind: str
    retryable: bool
    message: str
    retry_after: float | None = None


def _unwrap(exc: BaseException) -> BaseException:
    seen = 0
    while seen < 10:
        seen += 1
        last = getattr(exc, "last_attempt", None)  # tenacity.RetryError
        if last is not None and hasattr(last, "exception") and last.exception() is not None:
            exc = last.exception()
            continue
        if type(exc).__name__ == "ModelGenerateError" and exc.__cause__ is not None:
            exc = exc.__cause__
            continue
        break
    return exc


def classify(exc: BaseException) -> _Failure:
    """Decide whether a failed attempt is worth retrying, and name its cause."""
    exc = _unwrap(exc)
    names = {cls.__name__ for cls in type(exc).__mro__}
    message = str(exc).strip().splitlines()[0][:500] if str(exc).strip() else type(exc).__name__
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        after = getattr(exc, "retry_after", None)
        if not isinstance(after, int | float):
            after = retry_after_seconds(getattr(getattr(exc, "response", None), "headers", None))
        if status == 429:
            return _Failure("rate_limited", True, f"HTTP 429: {message}", after)
        if status in (408, 409) or status >= 500:
            return _Failure("server_error", True, f"HTTP {status}: {message}", after)
        if status in (401, 403):
            return _Failure("auth_error", False, f"HTTP {status}: {message}")
        if status == 404:
            return _Failure("not_found", False, f"HTTP 404: {message}")
        return _Failure("bad_request", False, f"HTTP {status}: {message}")
    if names & {"APITimeoutError", "TimeoutException", "TimeoutError", "AttemptTimeoutError",
                 "ServerTimeoutError"}:  # fmt: skip
        return _Failure("timeout", True, message)
    if names & {"APIConnectionError", "TransportError", "ConnectionError", "RemoteProtocolError",
                 "ClientConnectionError", "ClientPayloadError", "ServerDisconnectedError"}:  # fmt: skip
        return _Failure("connection_error", True, message)
    if names & {"JSONDecodeError", "APIResponseValidationError", "ValidationError",
                 "MalformedResponseError", "ContentTypeError"}:  # fmt: skip
        return _Failure("malformed_response", True, message)
    return _Failure("error", False, f"{type(exc).__name__}: {message}")


def cache_key(spec: ModelSpec, messages: list[Message], settings: GenerateSettings,
              sample: int, schema: dict[str, Any] | None) -> str:  # fmt: skip
    payload = {
        "model": spec.name,
        "messages": messages,
        "settings": settings.cache_fields(),
        "sample": sample,
        "schema": schema,
    }
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


def check_model(name: str, *, base_url: str | None = None, api_key: str | None = None,
                backend: str | None = None) -> ModelSpec:  # fmt: skip
    """A model's spec, with its name, credentials and a backend that serves it checked now (no store needed)."""
    spec = resolve_model(name, base_url=base_url, api_key=api_key)
    choose_backend(spec.provider, backend)  # a bad choice fails now too
    return spec


@dataclass
class _Bound:
    spec: ModelSpec
    backend: Any
    semaphore: asyncio.Semaphore | None = None
    max_connections: int = 1
    loop: Any = None


class LLM:
    """The client. One per process (or per run); share it between stages."""

    def __init__(
        self,
        store: Store,
        *,
        prices: PriceTable | None = None,
        use_cache: bool = True,
        run_id: str | None = None,
        backend: str | None = None,
    ):
        self.store = store
        self.prices = prices or PriceTable.load()
        self.use_cache = use_cache
        self.run_id = run_id
        self.backend_preference = backend
        self._models: dict[tuple[str, str | None], _Bound] = {}
        self._inflight: dict[str, asyncio.Future[int | None]] = {}
        self.calls_made = 0
        self.cache_hits = 0

    # -- model resolution ---------------------------------------------------

    def resolve(self, name: str, *, base_url: str | None = None, api_key: str | None = None) -> ModelSpec:
        """Check a model name and its credentials now, before any work starts."""
        return check_model(name, base_url=base_url, api_key=api_key, backend=self.backend_preference)

    def _bound(self, spec: ModelSpec, settings: GenerateSettings) -> _Bound:
        key = (spec.name, spec.base_url)
        bound = self._models.get(key)
        loop = asyncio.get_running_loop()
        if bound is None:
            base_url, api_key = spec.base_url, spec.api_key
            if spec.is_local:
                from theorembench.llm.local import ensure_local

                base_url = base_url or ensure_local(spec.model)
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
        """Ask a model once; answered from the cache when this exact call was made before."""
        settings = settings or GenerateSettings()
        spec = model if isinstance(model, ModelSpec) else self.resolve(model)
        bound = self._bound(spec, settings)
        assert bound.semaphore is not None
        key = cache_key(spec, messages, settings, sample, schema)
        caching = self.use_cache if use_cache is None else use_cache
        if caching:
            # single flight: an identical call already under way is awaited, not paid for again
            pending = self._inflight.get(key)
            if pending is not None:
                call_id = await asyncio.shield(pending)
                row = self.store.get_call(call_id) if call_id else None
                if row is not None and row["status"] == "ok":
                    self.cache_hits += 1
                    _note_call(call_id)
                    return _completion_from_row(row, cached=True)
            future: asyncio.Future[int | None] = asyncio.get_running_loop().create_future()
            self._inflight[key] = future
        try:
            completion = await self._generate_once(spec, bound, key, messages, settings, purpose, sample, schema,
                                                   caching)  # fmt: skip
        except BaseException as exc:
            _note_call(getattr(exc, "call_id", None))
            if caching:
                self._inflight.pop(key, None)
                if not future.done():
                    future.set_result(getattr(exc, "call_id", None))
            raise
        _note_call(completion.call_id)
        if caching:
            self._inflight.pop(key, None)
            future.set_result(completion.call_id)
        return completion

    async def _generate_once(self, spec: ModelSpec, bound: _Bound, key: str, messages: list[Message],
                             settings: GenerateSettings, purpose: str, sample: int, schema: dict[str, Any] | None,
                             caching: bool) -> Completion:  # fmt: skip
        assert bound.semaphore is not None
        if settings.seed is not None and sample:
            # sample k of a seeded call samples with seed + k: distinct draws, each reproducible
            settings = settings.model_copy(update={"seed": settings.seed + sample})
        failed: list[FailedAttempt[_Failure]] = []
        error: tuple[_Failure, float] | None = None
        started = time.perf_counter()

        async def attempt() -> Any:
            nonlocal started
            started = time.perf_counter()
            return await bound.backend.generate(messages, settings, schema, bound.max_connections)

        # The connection slot is taken before the cache look-up, so that a burst of
        # thousands of queued calls does not delay the first requests (it spreads the
        # look-up work over the run); backoff sleeps keep the slot, easing a 429 storm.
        async with bound.semaphore:
            if caching:
                row = self.store.cached_call(key)
                if row is not None:
                    self.cache_hits += 1
                    return _completion_from_row(row, cached=True)
            retrying = RetryPolicy(max_retries=settings.max_retries).async_retrying(classify, on_failure=failed.append)
            try:
                raw = await retrying(attempt)
            except Exception as exc:  # noqa: BLE001 - every provider error was classified by the policy
                if not failed or failed[-1].error is not exc:
                    raise
                error = (failed[-1].judgement, time.perf_counter() - started)
        latency = time.perf_counter() - started
        failures = [f"attempt {f.number}: {f.judgement.kind}: {f.judgement.message}" for f in failed]
        attempts = len(failed) + (error is None)
        # let a call waiting for this connection slot send its request before the bookkeeping below
        await asyncio.sleep(0)
        request = {"messages": messages, "settings": settings.request_fields(),
                   "sample": sample, "schema": schema}  # fmt: skip
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
        total = raw.prompt_tokens + raw.completion_tokens
        response = {"text": raw.text, "reasoning": raw.reasoning, "finish_reason": raw.finish_reason,
                    "model": raw.model, "backend": bound.backend.name, "failed_attempts": failures}  # fmt: skip
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
            cost_usd=cost, attempts=attempts, finish_reason=raw.finish_reason,
        )  # fmt: skip

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
        validation error and ask for corrected JSON only.
        """
        from theorembench.llm.structured import StructuredOutputError, parse_and_validate

        completions: list[Completion] = []
        convo = list(messages)
        last_error = ""
        for repair in range(repair_attempts + 1):
            completion = await self.generate(
                model, convo, settings, purpose=purpose if repair == 0 else f"{purpose}.repair",
                sample=sample, schema=schema,
            )  # fmt: skip
            completions.append(completion)
            try:
                return parse_and_validate(completion.text, schema), completions
            except StructuredOutputError as exc:
                last_error = str(exc)
                convo = [*convo, {"role": "assistant", "content": completion.text},
                         {"role": "user", "content": _repair_prompt(last_error)}]  # fmt: skip
        raise StructuredOutputError(
            f"no valid JSON after {repair_attempts} repair attempts: {last_error}",
            raw=completions[-1].text if completions else "",
            call_ids=[c.call_id for c in completions],
        )


def _repair_prompt(error: str) -> str:
    return (
        "Your previous reply could not be used: "
        f"{error}\nReply again with only the corrected JSON value, no commentary and no code fence."
    )


def _completion_from_row(row: Any, *, cached: bool) -> Completion:
    response = json.loads(row["response"]) if row["response"] else {}
    return Completion(
        text=row["response_text"] or "", model=row["model"], call_id=row["id"], cached=cached,
        reasoning=response.get("reasoning"), prompt_tokens=row["prompt_tokens"],
        completion_tokens=row["completion_tokens"], reasoning_tokens=row["reasoning_tokens"],
        total_tokens=row["total_tokens"], latency_s=row["latency_s"], cost_usd=row["cost_usd"],
        attempts=row["attempts"], finish_reason=response.get("finish_reason"),
    )  # fmt: skip
