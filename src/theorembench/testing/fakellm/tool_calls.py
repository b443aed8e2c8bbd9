"""Scripted replies with tool calls: reply specs, call ids, and the tools a request offers."""

from __future__ import annotations

import json
from typing import Any, Mapping

_REPLY_KEYS = frozenset({"content", "tool_calls"})
_CALL_KEYS = frozenset({"name", "arguments", "raw_arguments", "id"})


class ToolCall:
    """One scripted tool call: the tool's name, its arguments and an optional fixed id.

    ``arguments`` is a JSON object; ``raw`` (from ``raw_arguments``) is a string sent verbatim
    instead, so a script can send arguments that are not valid JSON.
    """

    __slots__ = ("name", "arguments", "id", "raw")

    def __init__(self, name: str, arguments: dict[str, Any], id: str | None = None, raw: str | None = None):
        self.name = name
        self.arguments = arguments
        self.id = id
        self.raw = raw

    def arguments_json(self) -> str:
        """The arguments as the string the OpenAI protocols carry (the raw string when scripted)."""
        return self.raw if self.raw is not None else json.dumps(self.arguments, ensure_ascii=False)

    def anthropic_input(self) -> Any:
        """Anthropic's ``input``: the arguments object, or the raw string (a real server always sends an object)."""
        return self.raw if self.raw is not None else self.arguments

    def with_id(self, default: str) -> ToolCall:
        """This call with its scripted id, or ``default`` when none was scripted."""
        return ToolCall(self.name, self.arguments, self.id or default, self.raw)


class Reply:
    """One scripted answer: text content and the tool calls that follow it (none for a plain text reply)."""

    __slots__ = ("content", "tool_calls")

    def __init__(self, content: str, tool_calls: list[ToolCall] | None = None):
        self.content = content
        self.tool_calls = list(tool_calls or [])


def parse_reply(spec: Any, where: str) -> Reply:
    """A :class:`Reply` from a script ``reply`` element: a string (or scalar) or ``{"content", "tool_calls"}``.

    Raises ``ValueError`` naming ``where`` for an unknown key, a call without a name,
    arguments that are not a JSON object, or ``raw_arguments`` that are not a string.
    """
    if not isinstance(spec, Mapping):
        return Reply("" if spec is None else str(spec))
    unknown = set(spec) - _REPLY_KEYS
    if unknown:
        raise ValueError(f"{where}: unknown reply keys {sorted(unknown)}; allowed: {sorted(_REPLY_KEYS)}")
    content = spec.get("content")
    calls_spec = spec.get("tool_calls") or []
    if not isinstance(calls_spec, list):
        raise ValueError(f"{where}: tool_calls must be a list, got {type(calls_spec).__name__}")
    calls = [_parse_call(c, f"{where} tool call {i}") for i, c in enumerate(calls_spec)]
    return Reply("" if content is None else str(content), calls)


def _parse_call(spec: Any, where: str) -> ToolCall:
    if not isinstance(spec, Mapping):
        raise ValueError(f"{where} must be a JSON object, got {type(spec).__name__}")
    unknown = set(spec) - _CALL_KEYS
    if unknown:
        raise ValueError(f"{where}: unknown keys {sorted(unknown)}; allowed: {sorted(_CALL_KEYS)}")
    name = spec.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{where} needs a 'name' (a non-empty string)")
    raw = spec.get("raw_arguments")
    if raw is not None and "arguments" in spec:
        raise ValueError(f"{where}: give 'arguments' or 'raw_arguments', not both")
    if raw is not None and not isinstance(raw, str):
        raise ValueError(f"{where}: 'raw_arguments' must be a string, got {type(raw).__name__}")
    arguments = spec.get("arguments", {})
    if not isinstance(arguments, Mapping):
        raise ValueError(f"{where}: 'arguments' must be a JSON object, got {type(arguments).__name__}")
    call_id = spec.get("id")
    if call_id is not None and (not isinstance(call_id, str) or not call_id):
        raise ValueError(f"{where}: 'id' must be a non-empty string")
    return ToolCall(name, dict(arguments), call_id, raw)


def with_ids(reply: Reply, rule_label: str, answer: int) -> Reply:
    """``reply`` with every unscripted call id filled as ``call_<rule>_<answer>_<index>``."""
    calls = [c.with_id(f"call_{rule_label}_{answer}_{i}") for i, c in enumerate(reply.tool_calls)]
    return Reply(reply.content, calls)


def calls_tokens(calls: list[ToolCall]) -> int:
    """Rough completion tokens of tool calls (4 characters a token over name and JSON arguments)."""
    return sum((len(c.name) + len(c.arguments_json())) // 4 + 1 for c in calls)


def offered_tools(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The tools a request offers, in one shape for every protocol: ``{"name", "description", "parameters"}``.

    Reads chat completions (``{"type": "function", "function": {...}}``), Responses
    (``{"type": "function", "name": ...}``) and Anthropic (``{"name", "input_schema"}``)
    tool lists; a built-in tool without a name is listed under its ``type``.
    """
    tools = body.get("tools")
    if not isinstance(tools, list):
        return []
    out: list[dict[str, Any]] = []
    for tool in tools:
        if not isinstance(tool, Mapping):
            continue
        fn = tool.get("function") if isinstance(tool.get("function"), Mapping) else tool
        parameters = fn.get("parameters", fn.get("input_schema"))
        out.append(
            {
                "name": str(fn.get("name") or tool.get("type") or ""),
                "description": fn.get("description"),
                "parameters": parameters,
            }
        )
    return out
