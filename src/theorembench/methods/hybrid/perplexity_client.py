"""Where perplexity scoring gets its prompt log-probabilities: the LLM layer, and the perplexity errors.

The request itself (the legacy ``POST {base_url}/completions`` with ``echo: true`` and
``logprobs``), its response cache, usage ledger, cost and retries live in
:mod:`theorembench.llm.logprobs`. :class:`CompletionsClient` is that layer's client with
the purpose ``"perplexity"`` and a :meth:`~CompletionsClient.completion` that returns the
first choice; :class:`PerplexityError` and :class:`PerplexityUnsupported` are the layer's
:class:`~theorembench.llm.logprobs.LogprobsError` and
:class:`~theorembench.llm.logprobs.LogprobsUnsupported` under the names this method uses.
"""

from __future__ import annotations

from typing import Any

from theorembench.llm import LLM, ModelSpec
from theorembench.llm.logprobs import NEED_SERVER, LogprobsClient, LogprobsError, LogprobsUnsupported

PerplexityError = LogprobsError
"""One question (or option) could not be scored."""

PerplexityUnsupported = LogprobsUnsupported
"""The model's server cannot return log-probabilities of a given text."""


class CompletionsClient(LogprobsClient):
    """Prompt log-probabilities of one model for perplexity scoring (an async context manager)."""

    def __init__(self, llm: LLM, spec: ModelSpec | str, *, concurrency: int | None = None, timeout: float = 120,
                 retries: int = 3, purpose: str = "perplexity"):  # fmt: skip
        super().__init__(llm, spec, concurrency=concurrency, timeout=timeout, retries=retries, purpose=purpose)

    @property
    def key(self) -> tuple[str, str]:
        """Who answers: the model name and its endpoint (base URL and revision tag)."""
        return (self.spec.name, self.spec.endpoint)

    async def completion(self, prompt: str) -> dict[str, Any]:
        """The first choice of ``prompt``'s answer, with ``logprobs`` (from the cache when asked before)."""
        return (await self.prompt(prompt)).choice


__all__ = ["NEED_SERVER", "CompletionsClient", "PerplexityError", "PerplexityUnsupported"]
