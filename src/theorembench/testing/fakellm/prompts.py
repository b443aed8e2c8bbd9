"""Request inspection: prompt text, last user message, prompt keys and pseudo-tokens of request bodies."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Mapping


def text_of(content: Any) -> str:
    """Flatten message content (string, list of parts/blocks, nested content) to text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(t for t in (text_of(c) for c in content) if t)
    if isinstance(content, dict):
        text = content.get("text")
        if isinstance(text, str):
            return text
        for key in ("content", "output"):
            if key in content:
                return text_of(content[key])
        return ""
    return ""


def messages_of(body: Mapping[str, Any]) -> list[Any]:
    """Conversation items of a request: ``messages`` or the Responses ``input``."""
    messages = body.get("messages")
    if isinstance(messages, list):
        return messages
    inp = body.get("input")
    if isinstance(inp, str):
        return [{"role": "user", "content": inp}]
    if isinstance(inp, list):
        return inp
    return []


def completion_prompts(body: Mapping[str, Any]) -> list[str]:
    """The legacy completions ``prompt`` as a list of strings ([] when absent)."""
    prompt = body.get("prompt")
    if isinstance(prompt, str):
        return [prompt]
    if isinstance(prompt, list):
        return [p if isinstance(p, str) else json.dumps(p) for p in prompt]
    return []


def prompt_text(body: Mapping[str, Any]) -> str:
    """All prompt text of a request body, joined with newlines.

    Covers the top-level Anthropic ``system`` (string or blocks), the Responses
    ``instructions``, every message / input item (string content or parts), and
    the legacy completions ``prompt`` (string or list of strings).  Tool results are
    part of it (OpenAI ``role: tool`` messages, Responses ``function_call_output``
    items, Anthropic ``tool_result`` blocks); the arguments of tool calls are not.
    """
    parts = [text_of(body.get("system")), text_of(body.get("instructions"))]
    parts.extend(text_of(m.get("content", m) if isinstance(m, dict) else m) for m in messages_of(body))
    parts.extend(completion_prompts(body))
    return "\n".join(p for p in parts if p)


def last_user_text(body: Mapping[str, Any]) -> str:
    """Text of the last ``role == "user"`` message/input item ("" if none)."""
    for m in reversed(messages_of(body)):
        if isinstance(m, dict) and m.get("role") == "user":
            return text_of(m.get("content"))
        if isinstance(m, str):
            return m
    prompts = completion_prompts(body)  # legacy completions: the (last) prompt
    return prompts[-1] if prompts else ""


def prompt_key(body: Mapping[str, Any]) -> str:
    """sha256 hex digest of the JSON of (model, system, instructions, messages, input),
    with the legacy completions ``prompt`` appended when the body has one."""
    payload = [
        body.get("model"),
        body.get("system"),
        body.get("instructions"),
        body.get("messages"),
        body.get("input"),
    ]
    if "prompt" in body:
        payload.append(body.get("prompt"))
    raw = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def approx_tokens(text: str) -> int:
    """Rough token count of ``text`` (4 characters a token, at least 1)."""
    return len(text) // 4 + 1


_PSEUDO_TOKEN = re.compile(r"\s*\w+|\s*[^\w\s]|\s+")


def pseudo_tokens(text: str) -> list[str]:
    """Cut ``text`` into the fake server's log-prob tokens; ``"".join(...) == text``.

    A token is a run of word characters or one other non-space character, each
    with the whitespace in front of it; trailing whitespace is a token of its own.
    """
    return _PSEUDO_TOKEN.findall(text)
