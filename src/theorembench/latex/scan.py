"""Low-level LaTeX scanning: brace groups, optional arguments, environments.

These helpers work on raw LaTeX text with character offsets, so callers can keep
a source map. They understand escapes (``\\{``, ``\\}``, ``\\%``) but are not a
TeX engine: catcode changes are ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CONTROL_WORD = re.compile(r"\\([A-Za-z@]+\*?|.)")


class ScanError(ValueError):
    pass


def skip_space(text: str, pos: int, *, newlines: bool = True) -> int:
    """Skip spaces (and, by default, line breaks and TeX comments) from pos."""
    n = len(text)
    while pos < n:
        ch = text[pos]
        if ch in " \t" or (newlines and ch in "\r\n"):
            pos += 1
        elif ch == "%" and newlines:
            end = text.find("\n", pos)
            pos = n if end < 0 else end + 1
        else:
            break
    return pos


def read_group(text: str, pos: int, open_: str = "{", close: str = "}") -> tuple[str, int]:
    """Read a balanced group starting at text[pos] == open_; returns (inner text, index after it)."""
    if pos >= len(text) or text[pos] != open_:
        raise ScanError(f"expected {open_!r} at offset {pos}")
    depth = 0
    i = pos
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "%":
            end = text.find("\n", i)
            i = n if end < 0 else end + 1
            continue
        if ch == open_:
            depth += 1
        elif ch == close:
            depth -= 1
            if depth == 0:
                return text[pos + 1 : i], i + 1
        i += 1
    raise ScanError(f"unbalanced {open_!r} opened at offset {pos}")


def read_optional(text: str, pos: int) -> tuple[str | None, int]:
    """An optional ``[...]`` argument at pos (after spaces), brace-aware; (None, pos) if absent."""
    p = skip_space(text, pos)
    if p >= len(text) or text[p] != "[":
        return None, pos
    depth_brace = 0
    i = p + 1
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "{":
            depth_brace += 1
        elif ch == "}":
            depth_brace -= 1
        elif ch == "]" and depth_brace == 0:
            return text[p + 1 : i], i + 1
        i += 1
    raise ScanError(f"unclosed '[' at offset {p}")


def read_argument(text: str, pos: int) -> tuple[str, int]:
    """A mandatory argument: a brace group, or a single token (``\\cmd`` or one character)."""
    p = skip_space(text, pos)
    if p >= len(text):
        raise ScanError(f"missing argument at offset {pos}")
    if text[p] == "{":
        return read_group(text, p)
    m = CONTROL_WORD.match(text, p)
    if m:
        return m.group(0), m.end()
    return text[p], p + 1


@dataclass(frozen=True)
class EnvSpan:
    name: str
    start: int  # offset of "\begin"
    body_start: int  # after "\begin{name}" (and nothing else)
    body_end: int  # offset of "\end{name}"
    end: int  # after "\end{name}"


_BEGIN_END = re.compile(r"\\(begin|end)\s*\{([^{}]+)\}")


def find_environments(text: str, names: set[str] | None = None) -> list[EnvSpan]:
    """All environments (or those named), matched with nesting; unclosed ones are skipped."""
    stack: list[tuple[str, int, int]] = []
    spans: list[EnvSpan] = []
    for m in _BEGIN_END.finditer(text):
        kind, name = m.group(1), m.group(2).strip()
        if is_escaped(text, m.start()):
            continue
        if kind == "begin":
            stack.append((name, m.start(), m.end()))
            continue
        # close the innermost open environment of that name
        for k in range(len(stack) - 1, -1, -1):
            if stack[k][0] == name:
                _, start, body_start = stack[k]
                del stack[k:]
                if names is None or name in names:
                    spans.append(EnvSpan(name, start, body_start, m.start(), m.end()))
                break
    spans.sort(key=lambda s: s.start)
    return spans


def is_escaped(text: str, pos: int) -> bool:
    """Whether the character at pos is escaped by an odd run of backslashes before it."""
    backslashes = 0
    i = pos - 1
    while i >= 0 and text[i] == "\\":
        backslashes += 1
        i -= 1
    return backslashes % 2 == 1


def line_starts(text: str) -> list[int]:
    starts = [0]
    starts.extend(m.end() for m in re.finditer("\n", text))
    return starts
