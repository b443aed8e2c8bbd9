"""LaTeX environments written bare in Markdown (``\\begin{align}…\\end{align}``, no ``$$``) are math.

Authors write ``align``, ``gather``, ``cases`` and the matrices as in a LaTeX file. Read as Markdown, such
text lost its rows (``\\\\`` became ``\\``) and its ``&``, ``_`` and ``*`` were Markdown's. Two rules keep
the environment's source as it was typed, from ``\\begin{name}`` to its matching ``\\end{name}``:

* a block rule for an environment that starts a line (it may span lines, and may interrupt a paragraph):
  one displayed formula, the token ``math_block``;
* an inline rule for one inside a line: ``math_inline``, or ``math_inline_double`` (displayed) for the
  environments KaTeX sets only in display mode (:data:`DISPLAY_ONLY`).

They make the dollar plugin's tokens, so render.py escapes the source and static/app.js typesets it with
KaTeX. An environment that is never closed, or that is not in :data:`ENVIRONMENTS`, stays Markdown text.
"""

from __future__ import annotations

import re
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline

_MATRICES = ("matrix", "pmatrix", "bmatrix", "Bmatrix", "vmatrix", "Vmatrix")
DISPLAY_ONLY = frozenset({"align", "align*", "alignat", "alignat*", "gather", "gather*", "equation", "equation*",
                          "split", "CD", "multline", "multline*", "eqnarray", "eqnarray*"})  # fmt: skip
# multline and eqnarray are not KaTeX's: kept as math, they show KaTeX's error in place instead of mangled text
ENVIRONMENTS = DISPLAY_ONLY | frozenset({"aligned", "alignedat", "gathered", "cases", "dcases", "rcases", "drcases",
                                         "array", "darray", "smallmatrix", "subarray", *_MATRICES,
                                         *(name + "*" for name in _MATRICES)})  # fmt: skip
_BEGIN = re.compile(r"\\begin\{([A-Za-z]+\*?)\}")
_MARK = re.compile(r"\\(begin|end)\{([A-Za-z]+\*?)\}")
_CACHE = "theorembench_math_env_pairs"


def needs_display(tex: str) -> bool:
    """Whether ``tex`` opens with an environment that KaTeX sets only in display mode (``align``, ``gather``…)."""
    found = _BEGIN.match(tex.strip())
    return bool(found) and found.group(1) in DISPLAY_ONLY


def environment_pairs(text: str) -> dict[int, int]:
    """Where each known ``\\begin{name}`` in ``text`` starts -> just after the ``\\end{name}`` that closes it.

    One pass with a stack per name, so text with many unclosed environments costs no more than other text.
    """
    open_at: dict[str, list[int]] = {}
    pairs: dict[int, int] = {}
    for mark in _MARK.finditer(text):
        kind, name = mark.groups()
        if name not in ENVIRONMENTS:
            continue
        if kind == "begin":
            open_at.setdefault(name, []).append(mark.start())
        elif open_at.get(name):
            pairs[open_at[name].pop()] = mark.end()
    return pairs


def _pairs(env: Any, text: str) -> dict[int, int]:
    cache = env.setdefault(_CACHE, {}) if isinstance(env, dict) else {}
    if text not in cache:
        cache[text] = environment_pairs(text)
    return cache[text]


def _known_begin(text: str, pos: int) -> bool:
    found = _BEGIN.match(text, pos)
    return bool(found) and found.group(1) in ENVIRONMENTS


def _block_rule(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    if state.sCount[start_line] - state.blkIndent >= 4:  # an indented code block
        return False
    begin = state.bMarks[start_line] + state.tShift[start_line]
    if not _known_begin(state.src, begin):
        return False
    close = _pairs(state.env, state.src).get(begin)
    if close is None or close > state.eMarks[end_line - 1]:
        return False
    last = start_line
    while state.eMarks[last] < close:
        last += 1
        blank = state.isEmpty(last)
        if not blank and state.sCount[last] < state.blkIndent:  # the environment would leave its container
            return False
    if state.src[close : state.eMarks[last]].strip():  # text after \end{…}: the inline rule takes the environment
        return False
    if silent:
        return True
    source = state.getLines(start_line, last + 1, state.blkIndent, False).strip()
    token = state.push("math_block", "math", 0)
    token.block = True
    token.content = source
    token.markup = "\\begin"
    token.map = [start_line, last + 1]
    state.line = last + 1
    return True


def _inline_rule(state: StateInline, silent: bool) -> bool:
    if state.src[state.pos] != "\\" or not _known_begin(state.src, state.pos):
        return False
    close = _pairs(state.env, state.src).get(state.pos)
    if close is None or close > state.posMax:
        return False
    if not silent:
        source = state.src[state.pos : close]
        token = state.push("math_inline_double" if needs_display(source) else "math_inline", "math", 0)
        token.content = source
        token.markup = "\\begin"
    state.pos = close
    return True


def math_env_plugin(md: MarkdownIt) -> None:
    """Add the two rules to ``md`` (before fences and before backslash escapes, so ``\\\\`` stays as typed)."""
    md.block.ruler.before("fence", "math_env_block", _block_rule,
                          {"alt": ["paragraph", "reference", "blockquote", "list"]})  # fmt: skip
    md.inline.ruler.before("escape", "math_env_inline", _inline_rule)
