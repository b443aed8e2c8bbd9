"""Token budgets of the harness's stages, metered with Inspect's own token limit.

A stage's budget counts output tokens, reasoning included, for every provider: ``output_tokens``
holds every generated token, with ``reasoning_tokens`` as the part spent on reasoning. The OpenAI
and Anthropic APIs report it so, Inspect adds Google's thoughts in, and the model provider
``theorembench/<model>`` adds reasoning in where the API counts it apart (xAI's Grok:
:func:`theorembench.llm.inspect_provider.reasoning_in_output`), so Inspect's token limit, the
ledger and these records all see it. Input tokens never count. Each model call runs under
``token_limit(remaining, type="output")``, where
``remaining`` is the stage's budget less what its earlier turns (stored ones included) used.

Inspect raises ``LimitExceededError`` from the call whose usage passes the limit, after the call
(it was made and paid) and without handing back its output; the harness reads that output from
Inspect's transcript. Its tokens always count in the stage's usage. When it carries an answer (a
well-formed ``submit`` call; in single-turn mode, its reply), the setting ``over_budget_answer``
decides, since the paper counts budgets but does not say what happens to such an answer:

- ``keep`` (the default): the answer was produced and paid for, so it is registered. Only the call's
  ``submit`` enters the conversation (no other tool of it runs); the stage ends ``submitted`` and its
  record says ``over_budget: true`` (output tokens above the budget: at most one call's worth).
- ``discard``: what Inspect's token limit alone does (and an Inspect harness like the paper's would):
  the stage ends ``limit_exceeded``, nothing is scored, and the answer is kept in the stage record as
  ``discarded_answer``, so that nothing paid for is lost from the record.

Without an answer, the call's message never enters the conversation and the stage ends
``limit_exceeded``. A stage whose budget is used up exactly ends before the next call is made.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any


@dataclass
class StageRecord:
    """What a stage did: outcome, tokens (``output_tokens`` includes ``reasoning_tokens``), tool calls, turns."""

    stage: int
    budget: int
    outcome: str | None = None  # submitted | limit_exceeded | error (None while running)
    answer: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    tool_calls: dict[str, int] = field(default_factory=dict)
    turns: int = 0
    error: str | None = None
    final: bool = True  # False: a failed model call, asked again by the next run
    discarded_answer: str | None = None  # the answer of the call that passed the budget, when discarded

    @property
    def over_budget(self) -> bool:
        """A submitted answer whose stage used more than its budget (the call that passed it answered)."""
        return self.outcome == "submitted" and self.used > self.budget

    @property
    def used(self) -> int:
        """The tokens that count against the budget."""
        return self.output_tokens

    @property
    def remaining(self) -> int:
        return self.budget - self.used

    def add(self, input_tokens: int, output_tokens: int, reasoning_tokens: int,
            tool_calls: dict[str, int] | None = None) -> None:  # fmt: skip
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens
        self.reasoning_tokens += reasoning_tokens
        for name, n in (tool_calls or {}).items():
            self.tool_calls[name] = self.tool_calls.get(name, 0) + n

    def to_dict(self) -> dict[str, Any]:
        """The stage as ``improof_answers.stages`` stores it."""
        return {"stage": self.stage, "outcome": self.outcome, "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens, "reasoning_tokens": self.reasoning_tokens,
                "tool_calls": dict(sorted(self.tool_calls.items())), "turns": self.turns, "error": self.error,
                "budget": self.budget, "over_budget": self.over_budget,
                "discarded_answer": self.discarded_answer}  # fmt: skip

    def end_record(self) -> dict[str, Any]:
        """What ``stage<k>:end`` stores: the outcome, the answer and the usage of the calls that left no turn."""
        return {"outcome": self.outcome, "answer": self.answer, "error": self.error, "usage": self.to_dict()}


def usage_of(output: Any) -> tuple[int, int, int]:
    """(input, output, reasoning) tokens of a ``ModelOutput``; input counts cached prompt tokens too, output counts
    reasoning (also where the usage gave it apart)."""
    from theorembench.llm.inspect_provider import reasoning_in_output  # Inspect loads only when a model runs

    usage = reasoning_in_output(getattr(output, "usage", None))
    if usage is None:
        return 0, 0, 0
    prompt = usage.input_tokens + (usage.input_tokens_cache_read or 0) + (usage.input_tokens_cache_write or 0)
    return prompt, usage.output_tokens, usage.reasoning_tokens or 0


def hosted_uses(message: Any) -> Counter[str]:
    """The provider-side tool uses in a reply (single-turn with the provider's own tools), by tool type."""
    content = getattr(message, "content", None)
    if not isinstance(content, list):
        return Counter()
    return Counter(str(c.tool_type) for c in content if getattr(c, "type", None) == "tool_use")


def crossing_call(metered: float) -> tuple[tuple[int, int, int], Any | None]:
    """(input, output, reasoning) tokens of the call that passed a stage's limit, and a copy of its output.

    Inspect keeps that call's output in its transcript only; it is read from the latest model
    event there. ``metered`` (the limit's count, i.e. this call's output tokens) is the fallback, without output.
    """
    try:
        from inspect_ai.log import transcript

        for event in reversed(list(transcript().history.recent_events(20))):
            if getattr(event, "event", None) == "model" and getattr(event, "output", None) is not None:
                found = usage_of(event.output)
                if found[1]:
                    return found, event.output.model_copy(deep=True)
                break
    except Exception:  # noqa: BLE001 - outside a sample, or a transcript without the event: use the count
        pass
    return (0, int(metered), 0), None
