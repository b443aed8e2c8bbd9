"""Pieces every LiveMathematicianBench prompt is built from.

Chat messages (a system and a user message), titled input blocks, the closing "reply
with one JSON object of exactly this shape" line (every user message ends with it, so
that small local models see it last), and the rule against referring to the source.
"""

from __future__ import annotations

import json
from typing import Any

Messages = list[dict[str, str]]


def chat_messages(system: str, user: str) -> Messages:
    """A system and a user message, stripped."""
    return [{"role": "system", "content": system.strip()}, {"role": "user", "content": user.strip()}]


def block(title: str, text: str | None, missing: str = "(none given)") -> str:
    """A titled input block (``## title``), ``missing`` when the text is empty."""
    body = (text or "").strip()
    return f"## {title}\n{body or missing}"


def reply_shape(example: str) -> str:
    """The closing line of a user message: the JSON shape expected."""
    return "Reply with one JSON object of exactly this shape and nothing else:\n" + example.strip()


def dump(obj: Any) -> str:
    """JSON for a prompt (non-ASCII kept, lightly indented)."""
    return json.dumps(obj, ensure_ascii=False, indent=1)


def question_parts(question: dict[str, Any]) -> tuple[str, str]:
    """(stem, text of the keyed option) of a drafted question."""
    stem = str(question.get("question") or "")
    correct = question.get("correct_choice") or {}
    text = str(correct.get("text") or "") if isinstance(correct, dict) else str(correct)
    return stem, text


SOURCE_BAN = (
    "Never refer to the source: no 'the theorem', 'the paper', 'the authors', 'the main result', 'as proved', "
    "no numbered references such as 'Theorem 2.1' or 'Lemma 3', no \\ref or \\cite, and nothing about a proof "
    "or a sketch."
)


__all__ = ["SOURCE_BAN", "Messages", "block", "chat_messages", "dump", "question_parts", "reply_shape"]
