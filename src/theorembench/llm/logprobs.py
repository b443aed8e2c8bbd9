"""Prompt log-probabilities through the LLM layer: cache, usage ledger, cost and the shared retries.

Some evaluations (Proof2Hybrid's perplexity scoring) need the log-probability of every
token of a given text, not a reply. The OpenAI-compatible legacy endpoint
``POST {base_url}/completions`` with ``echo: true``, ``logprobs: 1`` and ``max_tokens: 1``
gives them, per token of the prompt (and of the one generated token): ``tokens``,
``token_logprobs`` (the first prompt token's is ``null``: nothing conditions it),
``text_offset`` and ``top_logprobs``. vLLM and llama-cpp-python's server both answer it;
chat-only APIs cannot.

:class:`LogprobsClient` sends that request for one model, as :meth:`LLM.generate` does a
chat call:

* the response cache: the key holds the model name, its endpoint (``ModelSpec.endpoint``:
  the base URL and any revision tag), the prompt and the request settings, so a rerun
  makes no request and two servers behind one name never share an answer;
* a row in the calls table for every request made (``purpose``, prompt and completion
  tokens, latency, cost from the price table), failed ones included; failed requests and
  answers without prompt log-probabilities are recorded but never served from the cache;
* the shared :class:`~theorembench.common.retry.RetryPolicy` for transient failures
  (connection errors, HTTP 408/409/429/5xx, ``Retry-After`` honoured);
* the ids of its calls reach :func:`theorembench.llm.record_calls`, so a step sees them.

A model whose server cannot give prompt log-probabilities raises
:class:`LogprobsUnsupported`: a model with no server address (a hosted provider's
default API), an HTTP 404/405/501, an answer without log-probabilities or one that
ignored ``echo``. Other failures raise :class:`LogprobsError`.

llama-cpp-python (0.3.x) gives log-probabilities only for a model loaded with
``logits_all``; a server started with ``--logits_all false`` answers HTTP 500
"logprobs is not supported for models created with logits_all=False", reported as
:class:`LogprobsUnsupported` naming the flag. ``local/<name>`` models get a private
server started with it.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

import aiohttp

from theorembench.common.retry import FailedAttempt, RetryPolicy, Verdict, retry_after_seconds
from theorembench.llm.client import LLM, _note_call, key_digest
from theorembench.llm.models import ModelSpec

#: The request settings sent with every prompt (part of the cache key).
REQUEST: dict[str, Any] = {"echo": True, "logprobs": 1, "max_tokens": 1, "temperature": 0.0}

NEED_SERVER = (
    "prompt log-probabilities need the legacy `/v1/completions` endpoint with `echo: true` and "
    "`logprobs` (vLLM, or llama-cpp-python's server with --logits_all true); chat-only APIs cannot give them"
)
_LOGITS_ALL_HINT = (
    "llama-cpp-python returns prompt log-probabilities only when the model is loaded with "
    "logits_all: start the server with `python -m llama_cpp.server ... --logits_all true` "
    "(that is the server's default)"
)


class LogprobsError(RuntimeError):
    """A prompt log-probability request that failed for good (after its retries)."""

    def __init__(self, message: str, *, call_id: int | None = None):
        super().__init__(message)
        self.call_id = call_id


class LogprobsUnsupported(LogprobsError):
    """The model's server cannot return log-probabilities of a given text."""


@dataclass(frozen=True)
class PromptLogprobs:
    """The first choice of the answer (``choice["logprobs"]`` holds the per-token values) and its call."""

    choice: dict[str, Any]
    call_id: int
    cached: bool
    prompt_tokens: int = 0
    cost_usd: float | None = None


def logprobs_cache_key(spec: ModelSpec, prompt: str, request: dict[str, Any] | None = None) -> str:
    """The cache key of one prompt: who answers (model name, endpoint with revision tag), the prompt, the settings."""
    payload = {"kind": "prompt_logprobs", "model": spec.name, "endpoint": spec.endpoint, "prompt": prompt,
               "settings": request or REQUEST}  # fmt: skip
    return key_digest(payload)


def unsupported_reason(spec: ModelSpec) -> str | None:
    """Why a model surely cannot give prompt log-probabilities, known without a request (None: ask its server)."""
    if spec.base_url or spec.is_local:
        return None
    return (f"{spec.name} has no server address for the legacy /completions endpoint (a hosted API); "
            f"{NEED_SERVER}")  # fmt: skip


class _Transient(Exception):
    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


def _judge(exc: Exception) -> Verdict:
    if isinstance(exc, _Transient):
        return Verdict(True, exc.retry_after)
    return Verdict(False)


class LogprobsClient:
    """Prompt log-probabilities of one model (an async context manager holding one HTTP session).

    ``concurrency`` bounds the requests in flight (cache look-ups do not wait for a slot).
    """

    def __init__(self, llm: LLM, spec: ModelSpec | str, *, concurrency: int | None = None, timeout: float = 120,
                 retries: int = 3, purpose: str = "logprobs"):  # fmt: skip
        self.llm = llm
        self.spec = spec if isinstance(spec, ModelSpec) else llm.resolve(spec)
        self.timeout = timeout
        self.retries = retries
        self.purpose = purpose
        self._semaphore = asyncio.Semaphore(concurrency) if concurrency else None
        self._session: aiohttp.ClientSession | None = None
        self._url: str | None = None
        self._starting = asyncio.Lock()

    async def __aenter__(self) -> LogprobsClient:
        reason = unsupported_reason(self.spec)
        if reason:
            raise LogprobsUnsupported(reason)
        if self.spec.base_url is not None:
            self._url = self.spec.base_url.rstrip("/") + "/completions"
        self._session = aiohttp.ClientSession()
        return self

    async def _endpoint(self) -> str:
        """The completions URL; for local/<name>, a private server that keeps every prompt token's logits, started
        on the first prompt the cache does not hold (a run answered from the cache starts no server)."""
        async with self._starting:
            if self._url is None:
                from theorembench.llm.local import ensure_local

                base_url = await asyncio.to_thread(ensure_local, self.spec.model, logits_all=True)
                self._url = base_url.rstrip("/") + "/completions"
        return self._url

    async def __aexit__(self, *exc: object) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def prompt(self, text: str, *, purpose: str | None = None) -> PromptLogprobs:
        """Log-probabilities of ``text``: from the cache when asked before, else one request (with retries)."""
        assert self._session is not None, "use LogprobsClient as `async with`"
        spec, llm = self.spec, self.llm
        key = logprobs_cache_key(spec, text)
        if llm.use_cache:
            row = llm.store.cached_call(key)
            if row is not None:
                llm.cache_hits += 1
                _note_call(row["id"])
                response = json.loads(row["response"]) if row["response"] else {}
                return PromptLogprobs(response.get("choice") or {}, row["id"], True, row["prompt_tokens"],
                                      row["cost_usd"])  # fmt: skip
        if self._semaphore is not None:
            async with self._semaphore:
                return await self._ask(key, text, purpose or self.purpose)
        return await self._ask(key, text, purpose or self.purpose)

    async def _ask(self, key: str, text: str, purpose: str) -> PromptLogprobs:
        spec, llm = self.spec, self.llm
        await self._endpoint()
        body = json.dumps({"model": spec.model, "prompt": text, **REQUEST}, ensure_ascii=False).encode()
        headers = {"Content-Type": "application/json"}
        api_key = spec.api_key or ("local" if spec.is_local else None)
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        failed: list[FailedAttempt[Any]] = []
        started = time.perf_counter()

        async def attempt() -> dict[str, Any]:
            nonlocal started
            started = time.perf_counter()
            return await self._post(body, headers)

        request = {"endpoint": "completions", "prompt": text, "settings": REQUEST}
        record = {"cache_key": key, "run_id": llm.run_id, "purpose": purpose, "model": spec.name,
                  "provider": spec.provider, "request": request}  # fmt: skip
        retrying = RetryPolicy(max_retries=self.retries, backoff_max_s=30.0).async_retrying(
            _judge, on_failure=failed.append)  # fmt: skip
        failures = lambda: [f"attempt {f.number}: {f.error}" for f in failed]
        try:
            data = await retrying(attempt)
        except (_Transient, LogprobsError) as exc:
            call_id = llm.store.record_call(**record, status="error", error="; ".join(failures()),
                                            attempts=len(failed), latency_s=time.perf_counter() - started)  # fmt: skip
            _note_call(call_id)
            cls = LogprobsUnsupported if isinstance(exc, LogprobsUnsupported) else LogprobsError
            raise cls(str(exc), call_id=call_id) from None
        latency = time.perf_counter() - started
        llm.calls_made += 1
        choice = data["choices"][0]
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        pt, ct = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
        cost = llm.prices.cost(spec.name, pt, ct)
        problem = _without_prompt_logprobs(choice, text)
        call_id = llm.store.record_call(
            **record, response_text=None, response={"choice": choice, "failed_attempts": failures()},
            status="invalid" if problem else "ok", error=problem, attempts=len(failed) + 1, prompt_tokens=pt,
            completion_tokens=ct, total_tokens=pt + ct, latency_s=latency, cost_usd=cost,
        )  # fmt: skip
        _note_call(call_id)
        if problem:
            raise LogprobsUnsupported(f"{self._url}: {problem}", call_id=call_id)
        return PromptLogprobs(choice, call_id, False, pt, cost)

    async def _post(self, body: bytes, headers: dict[str, str]) -> dict[str, Any]:
        assert self._session is not None and self._url is not None
        url = self._url
        timeout = aiohttp.ClientTimeout(total=self.timeout or None)
        try:
            async with self._session.post(url, data=body, headers=headers, timeout=timeout) as resp:
                status, text, after = resp.status, await resp.text(), retry_after_seconds(resp.headers)
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise _Transient(f"{url}: {type(exc).__name__}: {exc}") from None
        if status < 300:
            try:
                data = json.loads(text)
                choice = data["choices"][0]
            except (ValueError, KeyError, IndexError, TypeError):
                raise _Transient(f"{url}: unexpected response body {text[:200]!r}") from None
            if not isinstance(choice, dict):
                raise LogprobsError(f"{url}: unexpected choice {choice!r:.200}")
            return data
        message = _error_message(text, status)
        low = message.lower()
        if "logits_all" in low:
            raise LogprobsUnsupported(f"{url}: HTTP {status}: {message}. {_LOGITS_ALL_HINT}")
        if status in (404, 405, 501) or (status in (400, 422) and ("echo" in low or "logprob" in low)):
            raise LogprobsUnsupported(f"{url}: HTTP {status}: {message}. {NEED_SERVER}")
        if status == 429 or status in (408, 409) or status >= 500:
            raise _Transient(f"{url}: HTTP {status}: {message}", after)
        raise LogprobsError(f"{url}: HTTP {status}: {message}")


def _without_prompt_logprobs(choice: dict[str, Any], prompt: str) -> str | None:
    """Why an answer holds no log-probabilities of the prompt (None when it does)."""
    lp = choice.get("logprobs")
    if not isinstance(lp, dict):
        return f"the server returned no log-probabilities (logprobs: {lp!r:.60}). {NEED_SERVER}"
    tokens, values = lp.get("tokens"), lp.get("token_logprobs")
    if not isinstance(tokens, list) or not isinstance(values, list) or not tokens:
        return f"the server's logprobs have no tokens / token_logprobs. {NEED_SERVER}"
    if len("".join(t for t in tokens if isinstance(t, str))) < len(prompt) / 2:
        return ("the server returned log-probabilities of generated tokens only, not of the prompt "
                f"(echo ignored). {NEED_SERVER}")  # fmt: skip
    if len(values) > 2 and all(v is None for v in values):
        return f"the server echoed the prompt but gave no log-probabilities. {NEED_SERVER}"
    return None


def _error_message(text: str, status: int) -> str:
    try:
        data = json.loads(text)
    except ValueError:
        return text[:300] or f"HTTP {status}"
    err = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(err, dict):
        return str(err.get("message") or err.get("detail") or err)[:300]
    return str(err)[:300]


async def prompt_logprobs(llm: LLM, spec: ModelSpec | str, prompt: str, *, purpose: str = "logprobs",
                          timeout: float = 120, retries: int = 3) -> PromptLogprobs:  # fmt: skip
    """Log-probabilities of one prompt (see :class:`LogprobsClient`; open one for many prompts)."""
    async with LogprobsClient(llm, spec, timeout=timeout, retries=retries, purpose=purpose) as client:
        return await client.prompt(prompt)


__all__ = [
    "NEED_SERVER",
    "REQUEST",
    "LogprobsClient",
    "LogprobsError",
    "LogprobsUnsupported",
    "PromptLogprobs",
    "logprobs_cache_key",
    "prompt_logprobs",
    "unsupported_reason",
]
