"""How a request reaches a model.

Two backends sit behind the one client:

* ``inspect``: Inspect AI's model API, for every provider Inspect knows (OpenAI,
  Anthropic, Google, Mistral, Grok, Bedrock, ...). The default for hosted models.
* ``direct``: a lean OpenAI-compatible chat-completions client on one aiohttp
  connection pool, the default for servers you run yourself (``openai-api/...``,
  ``vllm/...``, ``sglang/...``, ``ollama/...``, ``local/...``), where hundreds of
  concurrent requests make per-call overhead matter (see bench/eval_throughput.py).

``THEOREMBENCH_BACKEND=inspect`` (or ``--backend inspect``) sends everything
through Inspect.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Protocol

DIRECT_PROVIDERS = frozenset({"openai-api", "local", "vllm", "sglang", "ollama", "llama-cpp-python"})
BACKENDS = ("auto", "inspect", "direct")


@dataclass
class RawOutput:
    text: str
    reasoning: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0
    finish_reason: str | None = None
    model: str | None = None
    payload: dict[str, Any] | None = None  # a call's whole answer where the text is not all (LLM.exchange)
    price_factor: float = 1.0  # what the call costs against the price table: 0.5 for a provider batch's request


class Backend(Protocol):
    name: str

    async def generate(
        self, messages: list[dict[str, str]], settings: Any, schema: dict[str, Any] | None,
        max_connections: int,
    ) -> RawOutput: ...  # fmt: skip

    async def aclose(self) -> None: ...


class HTTPStatusError(RuntimeError):
    """A non-2xx answer; carries what the retry policy needs."""

    def __init__(self, status_code: int, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.status_code = status_code
        self.retry_after = retry_after


class MalformedResponseError(ValueError):
    pass


def choose_backend(provider: str, preference: str | None = None) -> str:
    pref = (preference or os.environ.get("THEOREMBENCH_BACKEND") or "auto").lower()
    if pref not in BACKENDS:
        raise ValueError(f"unknown backend {pref!r}; choose one of {', '.join(BACKENDS)}")
    if pref == "direct" and provider not in DIRECT_PROVIDERS:
        raise ValueError(f"the direct backend speaks the OpenAI-compatible API only; {provider}/ needs inspect")
    if pref == "auto":
        return "direct" if provider in DIRECT_PROVIDERS else "inspect"
    return pref
