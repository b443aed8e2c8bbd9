"""Text clean-up before parsing: math delimiters, spacing and font commands, digit separators, and the kind guess.

Every function here is linear string work (no backtracking regular expressions), so it is
safe on any input; it runs in the worker beside the parser.
"""

from __future__ import annotations

import re

KINDS = ("integer", "rational", "real", "boolean", "expression", "tuple", "list", "set")

_UNICODE = {"\u2212": "-", "\u2013": "-", "\u00d7": "*", "\u00b7": "*", "\u22c5": "*", "\u00f7": "/", "\u03c0": "\\pi ",
            "\u221a": "\\sqrt", "\u221e": "\\infty ", "\u00b0": "", "\u2009": "", "\u202f": "", "\u00a0": " "}  # fmt: skip
_DROP = re.compile(
    r"\\(?:left|right)\.|\\(?:left|right|bigl|bigr|Bigl|Bigr|biggl|biggr|Biggl|Biggr|big|Big|bigg|Bigg)(?![A-Za-z])"
    r"|\\(?:displaystyle|textstyle|quad|qquad|degree|mathrm|mathbf|mathit|mathsf|textbf|textit|textrm|text|mbox"
    r"|operatorname|boldsymbol)(?![A-Za-z])|\\[,;:! ]|\^\s*\{?\\circ\}?|\\%|%|\$|\\[()\[\]]"
)
_REPLACE = [
    (re.compile(r"\\[dtc]frac(?![A-Za-z])"), r"\\frac"),
    (re.compile(r"\\[dt]binom(?![A-Za-z])"), r"\\binom"),
    (re.compile(r"\\(?:cdot|times|ast)(?![A-Za-z])"), "*"),
    (re.compile(r"\\div(?![A-Za-z])"), "/"),
    (re.compile(r"\\approx(?![A-Za-z])"), "="),
    (re.compile(r"\\(?:emptyset|varnothing)(?![A-Za-z])"), "{}"),
    (re.compile(r"\\(?:langle|lbrace)(?![A-Za-z])"), "("),
    (re.compile(r"\\(?:rangle|rbrace)(?![A-Za-z])"), ")"),
    (re.compile(r"\\mathrm\s*\{\s*e\s*\}|\\mathrm\s*e(?![A-Za-z])"), "e"),
]
# thousands separators: groups of three digits after one to three, the same separator each time
_GROUPS = {
    "all": re.compile(r"(?<![\d.])(\d{1,3})(\{,\}|,|\s|')(\d{3}(?:\2\d{3})*)(?!\d)"),
    "no-comma": re.compile(r"(?<![\d.])(\d{1,3})(\{,\}|\s|')(\d{3}(?:\2\d{3})*)(?!\d)"),
}
_LHS = re.compile(r"\s*\\?[A-Za-z]+(?:_\{?[A-Za-z0-9]+\}?)?(?:\([A-Za-z, ]*\))?\s*=(?!=)")
_BOOLEAN = re.compile(r"[{(\s]*(yes|no|true|false)\b", re.IGNORECASE)


def clean(text: str, *, commas_separate_digits: bool = True) -> str:
    """LaTeX/Unicode noise removed: ``$``, ``\\left``, ``\\text``, spacing, ``\\dfrac`` to ``\\frac``, separators."""
    for old, new in _UNICODE.items():
        text = text.replace(old, new)
    text = _GROUPS["all" if commas_separate_digits else "no-comma"].sub(lambda m: m[1] + m[3].replace(m[2], ""), text)
    text = text.replace("\\,", "").replace("\\!", "")
    text = _DROP.sub(" ", text)
    for pattern, new in _REPLACE:
        text = pattern.sub(new, text)
    text = re.sub(r"\\frac\s*(\d)\s*(\d)", r"\\frac{\1}{\2}", text)
    return text.strip().rstrip(".;").strip()


def strip_lhs(text: str) -> str:
    """``x = 5`` as ``5``: a leading ``name =`` (or ``f(x) =``) before the value is dropped."""
    m = _LHS.match(text)
    if m and "=" not in text[m.end():]:
        return text[m.end():].strip()
    return text


def boolean(text: str) -> bool | None:
    """True for Yes/True, False for No/False (first word, case-insensitive), None otherwise."""
    m = _BOOLEAN.match(clean(text))
    if not m:
        return None
    return m[1].lower() in ("yes", "true")


def _outer(text: str) -> tuple[str, str] | None:
    """The delimiters around the whole of ``text`` when they match each other: ``(..)``, ``[..]``, ``{..}``, ``\\{..\\}``."""
    for left, right in (("\\{", "\\}"), ("(", ")"), ("[", "]"), ("{", "}"), ("(", "]"), ("[", ")")):
        if text.startswith(left) and text.endswith(right) and len(text) >= len(left) + len(right):
            inner = text[len(left): len(text) - len(right)]
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


def split_top(text: str, sep: str = ",") -> list[str]:
    """``text`` split at ``sep`` outside brackets and braces."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


def elements(text: str) -> tuple[list[str], str | None]:
    """The elements of a tuple, list or set, and its outer delimiter (None when bare: ``1, 2, 3``)."""
    text = clean(text, commas_separate_digits=False)
    outer = _outer(text)
    inner = text[len(outer[0]): len(text) - len(outer[1])].strip() if outer else text
    if not inner:
        return [], outer[0] if outer else None
    parts = split_top(inner)
    if len(parts) == 1 and ";" in inner:
        parts = split_top(inner, ";")
    return parts, outer[0] if outer else None


def guess_kind(expected: str) -> str:
    """The kind of answer ``expected`` is, when the caller does not say."""
    if boolean(expected) is not None and len(expected) < 40:
        return "boolean"
    raw = clean(expected, commas_separate_digits=False)
    outer = _outer(raw)
    has_comma = len(split_top(raw[1:-1] if outer else raw)) > 1
    if outer and outer[0] in ("\\{", "{"):
        return "set"
    if has_comma:
        body = clean(expected)
        if len(split_top(body)) > 1 or outer:
            return "list" if outer and outer[0] == "[" else "tuple"
    value = strip_lhs(clean(expected))
    if re.fullmatch(r"[+-]?\d+", value):
        return "integer"
    if re.fullmatch(r"[+-]?\d+\s*/\s*[+-]?\d+|[+-]?\\frac\{[+-]?\d+\}\{[+-]?\d+\}", value):
        return "rational"
    if re.fullmatch(r"[+-]?(\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?", value):
        return "real"
    return "expression"
