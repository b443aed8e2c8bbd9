"""Text clean-up before parsing: math delimiters, spacing and font commands, digit separators, and the kind guess.

Every function here is linear string work (no backtracking regular expressions), so it is
safe on any input; it runs in the worker beside the parser. What carries meaning is kept:
brackets (``(0,9)`` and ``[0,9)`` differ), ``\\approx`` (an approximation is not an exact
answer), ``%`` and the names left of ``=``; the readers in ``forms`` decide what they mean.
"""

from __future__ import annotations

import re
from functools import lru_cache

KINDS = ("integer", "rational", "real", "boolean", "expression", "tuple", "list", "set", "interval")

_UNICODE = {"\u2212": "-", "\u2013": "-", "\u00d7": "*", "\u00b7": "*", "\u22c5": "*", "\u00f7": "/", "\u03c0": "\\pi ",
            "\u221a": "\\sqrt", "\u221e": "\\infty ", "\u00b0": "\\degree ", "\u2009": "\\,", "\u202f": "\\,",
            "\u00a0": " ", "\u2248": "\\approx ", "\u2264": "\\le ", "\u2265": "\\ge ", "\u2260": "\\neq ",
            "\u222a": "\\cup ", "\u2208": "\\in ", "\u00b1": "\\pm ", "\u2205": "\\emptyset ", "\u2026": "\\ldots ",
            "\u20ac": "", "\u00a3": ""}  # fmt: skip
# font and text commands whose braced argument is kept as plain text (``\text{ cm}`` is `` cm``)
_TEXT_COMMANDS = re.compile(
    r"\\(?:text|textbf|textit|textrm|textsf|texttt|textnormal|textup|mbox|mathrm|mathbf|mathit|mathsf|mathtt"
    r"|mathnormal|boldsymbol|bm|emph|operatorname|rm|bf)\s*\{"
)
_DROP = re.compile(
    r"\\(?:left|right)\.|\\(?:left|right|bigl|bigr|Bigl|Bigr|biggl|biggr|Biggl|Biggr|big|Big|bigg|Bigg)(?![A-Za-z])"
    r"|\\(?:displaystyle|textstyle|scriptstyle|quad|qquad|limits|nolimits)(?![A-Za-z])|\\\$|\$|(?<!\\)\\[()\[\]]"
)
_REPLACE = [
    (re.compile(r"\\[dtc]frac(?![A-Za-z])"), "\\frac"),
    (re.compile(r"\\[dt]binom(?![A-Za-z])"), "\\binom"),
    (re.compile(r"\\(?:cdot|times|ast)(?![A-Za-z])"), "*"),
    (re.compile(r"\\div(?![A-Za-z])"), "/"),
    (re.compile(r"\\(?:emptyset|varnothing)(?![A-Za-z])"), "\\{\\}"),
    (re.compile(r"\\lbrace(?![A-Za-z])"), "\\{"),
    (re.compile(r"\\rbrace(?![A-Za-z])"), "\\}"),
    (re.compile(r"\\langle(?![A-Za-z])"), "("),
    (re.compile(r"\\rangle(?![A-Za-z])"), ")"),
    (re.compile(r"\\(?:lbrack)(?![A-Za-z])"), "["),
    (re.compile(r"\\(?:rbrack)(?![A-Za-z])"), "]"),
    (re.compile(r"\^\s*\{\s*\\circ\s*\}|\^\s*\\circ(?![A-Za-z])|\\circ(?![A-Za-z])"), " \\degree "),
    (re.compile(r"\\(?:leq|leqslant)(?![A-Za-z])|<="), "\\le "),
    (re.compile(r"\\(?:geq|geqslant)(?![A-Za-z])|>="), "\\ge "),
    (re.compile(r"\\lt(?![A-Za-z])"), "<"),
    (re.compile(r"\\gt(?![A-Za-z])"), ">"),
    (re.compile(r"\\ne(?![A-Za-z])"), "\\neq "),
    (re.compile(r"\\(?:dots|ldots|cdots|dotsc|dotsb)(?![A-Za-z])|\.\.\."), "\\ldots "),
    (re.compile(r"\\%|%"), "%"),
]
# a number's digit groups: "1,000", "1{,}000", "1\,000", "1 000", "1'000" (the same separator each time)
_SEPARATORS = r"\{,\}|,|\\,|\\!|\\ |\s|'"
_GROUPS = {
    "all": re.compile(rf"(?<![\d.])([1-9]\d{{0,2}})({_SEPARATORS})(\d{{3}}(?:\2\d{{3}})*)(?![\d]|\s*/)"),
    "no-comma": re.compile(r"(?<![\d.])([1-9]\d{0,2})(\{,\}|\\,|\\!|\\ |\s|')(\d{3}(?:\2\d{3})*)(?![\d]|\s*/)"),
}
_BRACED_COMMA = re.compile(r"\s*\{\s*,\s*\}\s*|,\s*\\!\s*")
_SPACES = re.compile(r"(?<!\\)\\[,;:! ]|~")
_BOOLEAN_WORDS = {"yes": True, "true": True, "no": False, "false": False}
# words that make a yes/no answer conditional or unsure: such an answer is not judged
_HEDGES = {"depend", "depends", "depending", "unless", "if", "whether", "maybe", "perhaps", "possibly", "probably",
           "likely", "unlikely", "unclear", "unknown", "sometimes", "either", "or", "but", "however", "wait",
           "although", "though", "otherwise", "except", "not sure", "cannot", "can't", "undetermined",
           "undecidable"}  # fmt: skip
_HEDGE_PHRASES = ("not sure", "not always", "not necessarily", "not in general", "in some cases", "not known")
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


def _unwrap_text(text: str) -> str:
    """``\\text{...}``-like commands replaced by their argument between spaces (braces balanced, linear)."""
    out, pos = [], 0
    while m := _TEXT_COMMANDS.search(text, pos):
        out.append(text[pos : m.start()])
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += text[j] == "{"
            depth -= text[j] == "}"
            j += 1
        if depth:  # unbalanced: leave the rest as it is
            out.append(text[m.start() :])
            return "".join(out)
        out.append(" " + text[m.end() : j - 1] + " ")
        pos = j
    out.append(text[pos:])
    return "".join(out)


@lru_cache(maxsize=64)  # one judgement cleans the same texts several times
def clean(text: str, *, commas_separate_digits: bool = True) -> str:
    """LaTeX/Unicode noise removed: ``$``, ``\\left``, ``\\text``, spacing, ``\\dfrac`` to ``\\frac``, separators."""
    for old, new in _UNICODE.items():
        text = text.replace(old, new)
    text = _unwrap_text(text)
    text = _BRACED_COMMA.sub("{,}", text)
    text = _GROUPS["all" if commas_separate_digits else "no-comma"].sub(lambda m: m[1] + m[3].replace(m[2], ""), text)
    text = _SPACES.sub(" ", text)
    text = _DROP.sub(" ", text)
    for pattern, new in _REPLACE:
        text = pattern.sub(lambda _, new=new: new, text)  # type: ignore[misc]
    text = re.sub(r"\\frac\s*(\d)\s*(\d)", r"\\frac{\1}{\2}", text)
    text = " ".join(text.split())
    return text.strip().rstrip(".;,").strip()


def boolean(text: str) -> bool | None:
    """True for Yes/True, False for No/False, None when the text is not one plain, unconditional yes or no.

    The first word decides, and every other yes/no/true/false word must agree with it; a
    hedge ("if", "depends", "or", "wait", ...) makes it None: "No. Wait, ... so Yes" and
    "Yes or no, depending on G" are not answers.
    """
    lowered = clean(text).lower().replace("*", " ")
    words = _WORD.findall(lowered)
    if not words or words[0] not in _BOOLEAN_WORDS or len(words) > 60:
        return None
    first = _BOOLEAN_WORDS[words[0]]
    if any(_BOOLEAN_WORDS.get(w, first) is not first for w in words):
        return None
    if any(w in _HEDGES for w in words) or "?" in lowered or any(p in lowered for p in _HEDGE_PHRASES):
        return None
    return first


def outer(text: str) -> tuple[str, str] | None:
    """The delimiters enclosing all of ``text``: ``(..)``, ``[..]``, ``{..}``, ``\\{..\\}``, ``(..]``, ``[..)``."""
    for left, right in (("\\{", "\\}"), ("(", ")"), ("[", "]"), ("{", "}"), ("(", "]"), ("[", ")")):
        if text.startswith(left) and text.endswith(right) and len(text) >= len(left) + len(right):
            inner = text[len(left) : len(text) - len(right)]
            depth = 0
            for ch in inner:
                depth += ch in "([{"
                depth -= ch in ")]}"
                if depth < 0:
                    break
            else:
                if depth == 0:
                    return left, right
    return None


def _depth(text: str) -> int:
    return sum(text.count(c) for c in "([{") - sum(text.count(c) for c in ")]}")


def split_top(text: str, sep: str = ",") -> list[str]:
    """``text`` split at ``sep`` outside brackets and braces."""
    if sep not in text:
        return [text.strip()]
    parts, depth, start, last = [], 0, 0, 0
    for i in (i for i, ch in enumerate(text) if ch == sep):
        depth += _depth(text[last:i])
        last = i
        if depth == 0 and text[i - 1 : i] != "\\":
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


def split_word(text: str, pattern: re.Pattern[str]) -> list[str]:
    """``text`` split where ``pattern`` matches outside brackets and braces."""
    parts, depth, start, last = [], 0, 0, 0
    for m in pattern.finditer(text):
        if m.end() == m.start():
            continue
        depth += _depth(text[last : m.start()])
        last = m.start()
        if depth == 0:
            parts.append(text[start : m.start()])
            start = m.end()
    parts.append(text[start:])
    return [p.strip() for p in parts]


def guess_kind(expected: str) -> str:
    """The kind of answer ``expected`` is, when the caller does not say."""
    if boolean(expected) is not None and len(expected) < 40:
        return "boolean"
    raw = clean(expected, commas_separate_digits=False)
    if m := re.match(r"\\?[A-Za-z]+(?:_\{?[A-Za-z0-9]+\}?)?\s*\\in(?![A-Za-z])\s*", raw):  # "x \in [0, 1)"
        raw = raw[m.end() :]
    if re.fullmatch(r"[+-]?(?:0|\d{4,}|[1-9]\d{0,2}(?=,\d{4,}$))(?:\{,\}|,)\d+", raw):  # 0,111 or 2,7182
        return "real"
    found = outer(raw)
    if "\\cup" in raw or (found and found[0] + found[1] in ("(]", "[)") and len(split_top(raw[1:-1])) == 2):
        return "interval"
    has_comma = len(split_top(raw[len(found[0]) : len(raw) - len(found[1])] if found else raw)) > 1
    if found and found[0] in ("\\{", "{") and (has_comma or found[0] == "\\{"):
        return "set"
    if has_comma:
        body = clean(expected)
        if len(split_top(body)) > 1 or found:
            return "list" if found and found[0] == "[" else "tuple"
    value = clean(expected)
    m = re.match(r"\s*\\?[A-Za-z]+(?:_\{?[A-Za-z0-9]+\}?)?(?:\([A-Za-z, ]*\))?\s*=(?!=)", value)
    if m and "=" not in value[m.end() :]:
        value = value[m.end() :].strip()
    if re.fullmatch(r"[+-]?\d+", value):
        return "integer"
    if re.fullmatch(r"[+-]?\d+\s*/\s*[+-]?\d+|[+-]?\\frac\{[+-]?\d+\}\{[+-]?\d+\}", value):
        return "rational"
    if re.fullmatch(r"[+-]?(\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?", value):
        return "real"
    return "expression"
