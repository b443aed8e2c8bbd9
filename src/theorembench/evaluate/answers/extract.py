"""The final answer in a reply: the last ``\\boxed{}``/``\\fbox{}``, else an "Answer:" line, else a short reply whole.

Pure string scanning in one pass (balanced braces counted, escaped braces skipped), so it is
safe to run in the calling process on any reply.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

WHOLE_REPLY_CHARS = 200
_BOX = re.compile(r"\\(?:boxed|fbox)(?![A-Za-z])")
_ANSWER_LINE = re.compile(
    r"^[\s*_#>-]*(?:the\s+)?(?:final\s+answer|answer)[\s*_]*(?:is[\s*_]*)?[:\uff1a][\s*_]*(.*)$"
    r"|^[\s*_#>-]*(?:so\s+|thus\s+|hence\s+|therefore,?\s+)?the\s+(?:final\s+)?answer\s+is[\s*_:]*(.*)$",
    re.IGNORECASE,
)
_PROSE = re.compile(r"[A-Za-z][A-Za-z][ \t][ \t]*[A-Za-z][A-Za-z]")  # two words; no nested repeats (linear)


@dataclass
class Extraction:
    """What was taken from a reply: the answer text, every distinct boxed answer, and where it came from."""

    text: str | None
    candidates: list[str] = field(default_factory=list)  # distinct answers, the final one last
    source: str | None = None  # "boxed", "answer-line", "whole" or None
    messages: list[str] = field(default_factory=list)


def _box_body(text: str, start: int) -> tuple[str, int] | None:
    """The body of the box whose command ends at ``start`` and the index after its closing brace (None: unbalanced)."""
    i = start
    while i < len(text) and text[i] in " \t\n":
        i += 1
    if i >= len(text) or text[i] != "{":
        return None
    depth, j = 0, i
    while j < len(text):
        ch = text[j]
        if ch == "\\":
            j += 2
            continue
        depth += ch == "{"
        depth -= ch == "}"
        if depth == 0:
            return text[i + 1 : j], j + 1
        j += 1
    return None


def boxed_contents(reply: str) -> tuple[list[str], int]:
    """Every top-level ``\\boxed{...}`` body in order (nested boxes stay inside), and how many were unbalanced."""
    found: list[str] = []
    unbalanced = 0
    pos = 0
    while m := _BOX.search(reply, pos):
        got = _box_body(reply, m.end())
        if got is None:
            unbalanced += reply[m.end() : m.end() + 50].lstrip(" \t\n").startswith("{")
            if unbalanced >= 20:  # each one scans to the end: stop before that turns quadratic
                break
            pos = m.end()
            continue
        found.append(_unbox(got[0].strip()))
        pos = got[1]
    return found, unbalanced


def _unbox(text: str) -> str:
    """``\\boxed{\\boxed{3}}`` read as ``3`` (a few levels at most)."""
    for _ in range(5):
        m = _BOX.match(text)
        got = _box_body(text, m.end()) if m else None
        if got is None or got[1] != len(text):
            break
        text = got[0].strip()
    return text


def _squash(text: str) -> str:
    return " ".join(text.split())


def _answer_line(reply: str) -> str | None:
    lines = reply.splitlines()
    for k in range(len(lines) - 1, -1, -1):
        if len(lines[k]) > 5000:
            continue
        m = _ANSWER_LINE.match(lines[k])
        if not m:
            continue
        text = (m[1] if m[1] is not None else m[2] or "").strip()
        if not text:  # "Answer:" alone on its line: the next non-empty line
            text = next((line.strip() for line in lines[k + 1 :] if line.strip()), "")
        text = text.strip().rstrip(".").strip("*_").strip()
        if len(text) >= 2 and text[0] == text[-1] == "$":
            text = text.strip("$").strip()
        if text:
            return text.rstrip(".").strip()
    return None


def extract_answer(reply: str) -> Extraction:
    """The final answer in ``reply`` (see the module docstring); ``text`` is None when there is none."""
    boxes, unbalanced = boxed_contents(reply)
    messages = [f"{unbalanced} unbalanced \\boxed"] if unbalanced else []
    if boxes:
        distinct: dict[str, None] = {}
        for box in boxes:
            key = _squash(box)
            distinct.pop(key, None)
            distinct[key] = None
        return Extraction(boxes[-1], list(distinct), "boxed", messages)
    line = _answer_line(reply)
    if line is not None:
        return Extraction(line, [line], "answer-line", messages)
    whole = reply.strip()
    if whole and (len(whole) <= WHOLE_REPLY_CHARS or ("\n" not in whole and not _PROSE.search(whole))):
        return Extraction(whole, [whole], "whole", messages)
    return Extraction(None, [], None, messages + ["no final answer found"])
