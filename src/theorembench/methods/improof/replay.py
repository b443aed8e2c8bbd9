"""Turns of a harness conversation kept in the store, so a killed run resumes without paying twice.

Every turn (the model's message, the tool results, the notes added after it) is stored as it
happens under the pipeline of the run's settings and model, key ``<problem>@<version>#<epoch>``
and stage ``stage<k>:turn<t>``; the end of a stage (its outcome and usage) under
``stage<k>:end``. On a rerun the stored turns are put back into the conversation as they were,
with no model call and no tool run, and the conversation goes on from the first missing turn.
A failed model call is never stored, so it is asked again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter

from theorembench.store import Store
from theorembench.store.steps import StepResult, Steps


def _adapter() -> TypeAdapter[Any]:
    from inspect_ai.model import ChatMessage

    return TypeAdapter(ChatMessage)


_ADAPTER: TypeAdapter[Any] | None = None


def dump_messages(messages: list[Any]) -> list[dict[str, Any]]:
    """Inspect chat messages as JSON-able dicts."""
    return [m.model_dump(mode="json", exclude_none=True) for m in messages]


def load_messages(data: list[dict[str, Any]]) -> list[Any]:
    """Inspect chat messages back from :func:`dump_messages`."""
    global _ADAPTER
    if _ADAPTER is None:
        _ADAPTER = _adapter()
    return [_ADAPTER.validate_python(d) for d in data]


@dataclass
class Turn:
    """One stored turn: the messages it added (model message first, unless a note came before it) and its usage."""

    messages: list[dict[str, Any]]
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    tool_calls: dict[str, int] = field(default_factory=dict)
    malformed: bool = False
    submitted: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"messages": self.messages, "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "reasoning_tokens": self.reasoning_tokens, "tool_calls": self.tool_calls, "malformed": self.malformed,
                "submitted": self.submitted}  # fmt: skip

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Turn:
        return cls(list(d["messages"]), int(d.get("input_tokens", 0)), int(d.get("output_tokens", 0)),
                   int(d.get("reasoning_tokens", 0)), dict(d.get("tool_calls") or {}), bool(d.get("malformed")),
                   d.get("submitted"))  # fmt: skip


class TurnLog:
    """The stored turns and stage ends of one conversation (one problem version and epoch)."""

    def __init__(self, store: Store, pipeline: str, key: str):
        self.steps = Steps(store, pipeline)
        self.key = key

    def turn(self, stage: int, turn: int) -> Turn | None:
        found = self.steps.get(self.key, f"stage{stage}:turn{turn}")
        return Turn.from_dict(found.output) if found is not None and found.ok else None

    def put_turn(self, stage: int, turn: int, record: Turn) -> None:
        self.steps.put(self.key, f"stage{stage}:turn{turn}", StepResult("ok", record.to_dict()))

    def end(self, stage: int) -> dict[str, Any] | None:
        found = self.steps.get(self.key, f"stage{stage}:end")
        return found.output if found is not None and found.ok else None

    def put_end(self, stage: int, record: dict[str, Any]) -> None:
        self.steps.put(self.key, f"stage{stage}:end", StepResult("ok", record))


def conversation_key(problem_id: str, version: int, epoch: int) -> str:
    return f"{problem_id}@{version}#{epoch}"
