"""The HTTP client that asks a server for prompt log-probabilities, and the perplexity errors.

The OpenAI-compatible legacy endpoint ``POST {base_url}/completions`` with
``echo: true``, ``logprobs: 1`` and ``max_tokens: 1`` returns, per token of the
prompt (and of the one generated token), ``tokens``, ``token_logprobs`` (the
first prompt token's is ``null``: nothing conditions it), ``text_offset`` and
``top_logprobs``. vLLM and llama-cpp-python's server both answer this.
:class:`CompletionsClient` sends that request (retrying transient failures with
the shared :class:`~theorembench.common.retry.RetryPolicy`) and returns the
first choice; an answer that shows the server cannot give prompt log-probs
raises :class:`PerplexityUnsupported`.

llama-cpp-python (0.3.x) needs its model loaded with ``logits_all`` for any
logprobs; its server's default is ``--logits_all true`` (a server started with
``--logits_all false`` answers HTTP 500 "logprobs is not supported for models
created with logits_all=False", reported as :class:`PerplexityUnsupported`).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from theorembench.common.retry import RetryPolicy

_LOGITS_ALL_HINT = (
    "llama-cpp-python returns prompt log-probabilities only when the model is loaded with "
    "logits_all: start the server with `python -m llama_cpp.server ... --logits_all true` "
    "(that is the server's default)"
)
NEED_SERVER = (
    "perplexity-based evaluation needs prompt log-probabilities from the legacy "
    "`/v1/completions` endpoint with `echo: true` and `logprobs` (vLLM, or llama-cpp-python's "
    "server with --logits_all true); chat-only APIs cannot give them"
)
"""What a server must offer; appended to :class:`PerplexityUnsupported` messages."""


class PerplexityError(RuntimeError):
    """One question (or option) could not be scored."""


class PerplexityUnsupported(PerplexityError):
    """The server cannot return log-probabilities of a given text."""


@dataclass
class CompletionsClient:
    """``/completions`` with echo + logprobs for one server and model (an async context manager).

    Without a ``session`` it opens (and closes) its own; a ``semaphore`` bounds
    the requests in flight.
    """

    base_url: str
    model: str
    api_key: str | None
    timeout: float
    retries: int = 3
    session: aiohttp.ClientSession | None = None
    semaphore: asyncio.Semaphore | None = None
    _own: bool = field(default=False, repr=False)

    async def __aenter__(self) -> CompletionsClient:
        if self.session is None:
            self.session = aiohttp.ClientSession()
            self._own = True
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._own and self.session is not None:
            await self.session.close()
            self.session = None

    async def completion(self, prompt: str) -> dict[str, Any]:
        """POST /completions with echo + logprobs; the first choice, with retries on transient errors."""
        body = {"model": self.model, "prompt": prompt, "echo": True, "logprobs": 1, "max_tokens": 1,
                "temperature": 0.0}  # fmt: skip
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        url = self.base_url.rstrip("/") + "/completions"
        payload = json.dumps(body, ensure_ascii=False).encode()

        async def attempt() -> dict[str, Any]:
            try:
                if self.semaphore is not None:
                    async with self.semaphore:
                        status, text = await self._post(url, payload, headers)
                else:
                    status, text = await self._post(url, payload, headers)
            except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
                raise _Transient(f"{url}: {type(exc).__name__}: {exc}") from None
            if status < 300:
                try:
                    data = json.loads(text)
                    choice = data["choices"][0]
                except (ValueError, KeyError, IndexError, TypeError):
                    raise _Transient(f"{url}: unexpected response body {text[:200]!r}") from None
                if not isinstance(choice, dict):
                    raise PerplexityError(f"{url}: unexpected choice {choice!r:.200}")
                return choice
            message = _error_message(text, status)
            low = message.lower()
            if "logits_all" in low:
                raise PerplexityUnsupported(f"{url}: HTTP {status}: {message}. {_LOGITS_ALL_HINT}")
            if status in (404, 405, 501):
                raise PerplexityUnsupported(f"{url}: HTTP {status}: {message}. {NEED_SERVER}")
            if status in (400, 422) and ("echo" in low or "logprob" in low):
                raise PerplexityUnsupported(f"{url}: HTTP {status}: {message}. {NEED_SERVER}")
            if status == 429 or status in (408, 409) or status >= 500:
                raise _Transient(f"{url}: HTTP {status}: {message}")
            raise PerplexityError(f"{url}: HTTP {status}: {message}")

        retrying = RetryPolicy(max_retries=self.retries, backoff_max_s=30.0).async_retrying(
            lambda exc: isinstance(exc, _Transient))
        try:
            return await retrying(attempt)
        except _Transient as exc:
            raise PerplexityError(str(exc)) from None

    async def _post(self, url: str, payload: bytes, headers: dict[str, str]) -> tuple[int, str]:
        assert self.session is not None
        timeout = aiohttp.ClientTimeout(total=self.timeout) if self.timeout else aiohttp.ClientTimeout(total=None)
        async with self.session.post(url, data=payload, headers=headers, timeout=timeout) as resp:
            return resp.status, await resp.text()


class _Transient(Exception):
    """A failed attempt worth retrying; its message is the PerplexityError raised when the retries run out."""


def _error_message(text: str, status: int) -> str:
    try:
        data = json.loads(text)
    except ValueError:
        return text[:300] or f"HTTP {status}"
    err = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(err, dict):
        return str(err.get("message") or err.get("detail") or err)[:300]
    return str(err)[:300]


__all__ = ["NEED_SERVER", "CompletionsClient", "PerplexityError", "PerplexityUnsupported"]
