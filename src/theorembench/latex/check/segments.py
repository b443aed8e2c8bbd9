"""The math segments of a string: ``$..$``, ``$$..$$``, ``\\(..\\)``, ``\\[..\\]`` and math environments.

:func:`scan_math` finds them the way KaTeX's auto-render does (a closer counts only
at brace depth 0), unclosed ones marked with an error; :func:`math_segments` gives the
TeX of the closed ones, as KaTeX parses them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from theorembench.latex.scan import is_escaped

__all__ = ["MATH_ENVS", "Segment", "find_env_end", "math_segments", "scan_math"]

# Environments that are math by themselves (outside $...$), checked as one display segment.
MATH_ENVS = {
    "equation", "equation*", "align", "align*", "alignat", "alignat*", "gather", "gather*",
    "multline", "multline*", "flalign", "flalign*", "eqnarray", "eqnarray*", "displaymath", "math",
    "split", "CD",
}  # fmt: skip
_BEGIN_ENV = re.compile(r"\\begin\s*\{([^{}\\]+)\}")
_END_ENV = re.compile(r"\\(begin|end)\s*\{([^{}\\]+)\}")
_LETTER = re.compile(r"[A-Za-z@]+")


@dataclass(frozen=True)
class Segment:
    tex: str  # what KaTeX parses: the inside of $..$, \(..\), \[..\], $$..$$, or a whole environment
    display: bool
    start: int  # offset of the opening delimiter in the string
    end: int  # offset after the closing delimiter (len(text) when unclosed)
    error: str | None = None  # set when the segment is not closed

    def source(self, text: str) -> str:
        return text[self.start : self.end]


def _find_closer(text: str, pos: int, closer: str) -> tuple[int, bool]:
    """Offset of closer at brace depth 0 from pos (as KaTeX's auto-render finds it); -1 if none.

    The flag says whether the offset was found only by ignoring braces (an unbalanced
    brace inside the segment): the segment then ends at the first closer.
    """
    n, depth, i = len(text), 0, pos
    first_any = -1
    while i < n:
        if text.startswith(closer, i):
            if depth <= 0:
                return i, False
            if first_any < 0:
                first_any = i
            i += len(closer)
            continue
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        i += 1
    return first_any, first_any >= 0


def find_env_end(text: str, pos: int, name: str) -> tuple[int, int]:
    """(start, end) of the \\end{name} closing an environment whose body starts at pos; (-1, -1) if none."""
    depth = 1
    for m in _END_ENV.finditer(text, pos):
        if is_escaped(text, m.start()) or m.group(2).strip() != name:
            continue
        depth += 1 if m.group(1) == "begin" else -1
        if depth == 0:
            return m.start(), m.end()
    return -1, -1


def scan_math(text: str) -> list[Segment]:
    """The math segments of a string, in order, unclosed ones with ``error`` set.

    Recognised: ``$..$``, ``$$..$$``, ``\\(..\\)``, ``\\[..\\]`` and the environments in
    :data:`MATH_ENVS`. ``\\$`` is a dollar sign, ``\\\\`` a line break (so ``\\\\$x$``
    opens math); a closing delimiter counts only at brace depth 0 of its segment, so
    ``$\\text{if $x>0$}$`` is one segment. Text-mode content between segments is not
    looked into further.
    """
    segments: list[Segment] = []
    n, i = len(text), 0
    while i < n:
        ch = text[i]
        if ch == "\\":
            if i + 1 >= n:
                break
            nxt = text[i + 1]
            if nxt in "([":
                closer = "\\)" if nxt == "(" else "\\]"
                j, unbalanced = _find_closer(text, i + 2, closer)
                if j < 0:
                    segments.append(Segment(text[i + 2 :], nxt == "[", i, n, f"\\{nxt} without a matching {closer}"))
                    return segments
                segments.append(Segment(text[i + 2 : j], nxt == "[", i, j + 2))
                i = j + 2
                continue
            m = _BEGIN_ENV.match(text, i)
            if m and m.group(1).strip() in MATH_ENVS:
                name = m.group(1).strip()
                s, e = find_env_end(text, m.end(), name)
                if s < 0:
                    why = f"\\begin{{{name}}} without a matching \\end{{{name}}}"
                    segments.append(Segment(text[i:], True, i, n, why))
                    return segments
                if name in ("math", "displaymath"):
                    segments.append(Segment(text[m.end() : s], name == "displaymath", i, e))
                else:
                    segments.append(Segment(text[i:e], True, i, e))
                i = e
                continue
            lm = _LETTER.match(text, i + 1)
            i = lm.end() if lm else i + 2  # a control word, or a control symbol such as \$ \\ \{
            continue
        if ch == "$":
            display = text.startswith("$$", i)
            opener = "$$" if display else "$"
            j, _ = _find_closer(text, i + len(opener), opener)
            if j < 0:
                why = f"{opener} opens math that is never closed"
                segments.append(Segment(text[i + len(opener) :], display, i, n, why))
                return segments
            segments.append(Segment(text[i + len(opener) : j], display, i, j + len(opener)))
            i = j + len(opener)
            continue
        i += 1
    return segments


def math_segments(text: str) -> list[str]:
    """The TeX of each closed math segment of text (see :func:`scan_math`).

    Delimiters are stripped (``$x$`` gives ``x``); a math environment such as
    ``align*`` is returned whole (``\\begin{align*}..\\end{align*}``), as KaTeX
    parses it.
    """
    return [s.tex for s in scan_math(text) if s.error is None]
