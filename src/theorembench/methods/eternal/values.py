"""A template's result as the host receives it: JSON data from the sandbox, read strictly, never evaluated.

The sandboxed child encodes its ``result`` (see ``harness.encode``): ``{"t": "int", "v": "123"}``,
``{"t": "frac", "v": "p/q"}``, ``{"t": "bool", "v": true}``, ``{"t": "float", "v": "0.5"}``,
``{"t": "str", "v": "..."}``, ``{"t": "expr", "text": "x**2 - 1", "latex": "x^{2} - 1", "float": false}``
and ``{"t": "tuple"|"list"|"set", "items": [...]}``. Here that becomes host values: ``int``,
``Fraction``, ``bool``, ``float``, ``str``, :class:`Expr`, ``tuple``, ``list`` and ``frozenset``.
Numbers are read with ``int``/``Fraction``/``float`` on checked digit strings; an expression stays
text, compared only through the answer checker's own parser (``evaluate.answers``).

``text`` is the stored answer (what the checker is given as the expected value), ``latex`` the
answer as a model would write it; ``inexact`` says whether a float is anywhere in it.
"""

from __future__ import annotations

import contextlib
import math
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

MAX_DEPTH = 8
MAX_ITEMS = 10_000
MAX_DIGITS = 200_000
_INT = re.compile(r"-?\d+")
_FRAC = re.compile(r"-?\d+/\d+")
_FLOAT = re.compile(r"-?(?:\d+\.?\d*(?:e[+-]?\d+)?|inf|nan)")
_DECIMAL = re.compile(r"\d\.\d|\d\.(?![\w])|(?<![\w.])\.\d")
TYPES = {int: "int", Fraction: "rational", bool: "bool", float: "float", str: "str", tuple: "tuple", list: "list",
         frozenset: "set"}  # fmt: skip


class BadValue(ValueError):
    """Data from the sandbox that is not a well-formed result."""


@dataclass(frozen=True)
class Expr:
    """A symbolic result: the text the checker parses (sympy's ``sstr``) and its LaTeX; ``floating``: holds a float."""

    text: str
    latex: str
    floating: bool = False


def _digits(text: Any, pattern: re.Pattern[str], what: str) -> str:
    if isinstance(text, str) and len(text) > MAX_DIGITS:  # reading more digits takes long, and is refused anyway
        raise BadValue(f"a number of more than {MAX_DIGITS} characters")
    if not isinstance(text, str) or not pattern.fullmatch(text):
        raise BadValue(f"not {what}: {str(text)[:60]!r}")
    return text


@contextlib.contextmanager
def _any_length() -> Iterator[None]:
    """Integers of any length to and from text (Python limits that to 4300 digits by default)."""
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        yield
    finally:
        sys.set_int_max_str_digits(limit)


def _int(text: str) -> int:
    with _any_length():
        return int(text)


def decode(obj: Any, depth: int = 0) -> Any:
    """The host value of one encoded result; ``BadValue`` when the data is not a result."""
    if depth > MAX_DEPTH or not isinstance(obj, dict) or not isinstance(obj.get("t"), str):
        raise BadValue("not an encoded result" if depth <= MAX_DEPTH else "nested too deeply")
    t = obj["t"]
    if t == "int":
        return _int(_digits(obj.get("v"), _INT, "an integer"))
    if t == "frac":
        num, den = _digits(obj.get("v"), _FRAC, "a fraction p/q").split("/")
        if int(den) == 0:
            raise BadValue("a fraction with denominator 0")
        return Fraction(_int(num), _int(den))
    if t == "bool" and isinstance(obj.get("v"), bool):
        return obj["v"]
    if t in ("float", "complex"):
        text = obj.get("v")
        if t == "complex":
            raise BadValue(f"a complex number {str(text)[:60]} (give the real value, or a tuple)")
        return float(_digits(text.lower() if isinstance(text, str) else text, _FLOAT, "a decimal number"))
    if t == "str" and isinstance(obj.get("v"), str):
        return obj["v"]
    if t == "expr" and isinstance(obj.get("text"), str) and isinstance(obj.get("latex"), str):
        return Expr(obj["text"], obj["latex"], obj.get("float") is True or bool(_DECIMAL.search(obj["text"])))
    if t in ("tuple", "list", "set") and isinstance(obj.get("items"), list):
        if len(obj["items"]) > MAX_ITEMS:
            raise BadValue(f"more than {MAX_ITEMS} items")
        items = [decode(v, depth + 1) for v in obj["items"]]
        if t == "set":
            try:
                return frozenset(items)
            except TypeError:
                raise BadValue("a set of unhashable items") from None
        return tuple(items) if t == "tuple" else items
    raise BadValue(f"an encoded result of unknown type {t!r}")


def type_of(value: Any) -> str:
    """int, rational, bool, float, str, expression, tuple, list or set (a rational with denominator 1 is an int)."""
    if isinstance(value, Expr):
        return "expression"
    if isinstance(value, Fraction):
        return "int" if value.denominator == 1 else "rational"
    return TYPES.get(type(value), type(value).__name__)


def inexact(value: Any) -> bool:
    """Whether a float is anywhere in the value."""
    if isinstance(value, float):
        return True
    if isinstance(value, Expr):
        return value.floating
    if isinstance(value, tuple | list | frozenset):
        return any(inexact(v) for v in value)
    return False


def text(value: Any) -> str:
    """The stored answer: 12, 3/4, True, 0.5, x**2 - 1, (1, 2), [1, 2], {1, 2} (set items sorted as text)."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        with _any_length():
            return str(value)
    if isinstance(value, Fraction):
        return text(value.numerator) + ("" if value.denominator == 1 else "/" + text(value.denominator))
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, Expr):
        return value.text
    if isinstance(value, str):
        return value
    if isinstance(value, frozenset):
        return "{" + ", ".join(text(v) for v in _ordered(value)) + "}"
    parts = [text(v) for v in value]
    if isinstance(value, list):
        return "[" + ", ".join(parts) + "]"
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def _ordered(items: frozenset) -> list[Any]:
    """A set's items in a fixed order: numbers by value first, then the rest by their text."""
    def number(v: Any) -> bool:
        return isinstance(v, int | Fraction | float) and not isinstance(v, bool)

    return sorted(v for v in items if number(v)) + sorted((v for v in items if not number(v)), key=text)


def _float_latex(x: float) -> str:
    if math.isinf(x):
        return "\\infty" if x > 0 else "-\\infty"
    mantissa, _, exponent = repr(x).partition("e")
    return mantissa if not exponent else f"{mantissa} \\times 10^{{{int(exponent)}}}"


def latex(value: Any) -> str:
    """The answer as a model would write it in LaTeX: 12, \\frac{3}{4}, \\text{Yes}, x^{2} - 1, \\left(1, 2\\right)."""
    if isinstance(value, bool):
        return "\\text{Yes}" if value else "\\text{No}"
    if isinstance(value, Fraction) and value.denominator != 1:
        sign = "-" if value < 0 else ""
        return f"{sign}\\frac{{{text(abs(value.numerator))}}}{{{text(value.denominator)}}}"
    if isinstance(value, int | Fraction | str):
        return text(value)
    if isinstance(value, float):
        return _float_latex(value)
    if isinstance(value, Expr):
        return value.latex
    if isinstance(value, frozenset):
        return "\\left\\{" + ", ".join(latex(v) for v in _ordered(value)) + "\\right\\}"
    parts = [latex(v) for v in value]
    left, right = ("\\left[", "\\right]") if isinstance(value, list) else ("\\left(", "\\right)")
    return left + ", ".join(parts) + right


def close(a: Any, b: Any, rel: float = 1e-9) -> bool:
    """Equal, with floats equal within ``rel`` (relative; absolute near zero), item by item."""
    if isinstance(a, float | int | Fraction) and isinstance(b, float | int | Fraction) and not (
            isinstance(a, bool) or isinstance(b, bool)) and (isinstance(a, float) or isinstance(b, float)):  # fmt: skip
        if math.isnan(a) or math.isnan(b):
            return False
        try:
            return math.isclose(float(a), float(b), rel_tol=rel, abs_tol=rel)
        except OverflowError:
            return False
    if isinstance(a, tuple | list) and isinstance(b, tuple | list):
        return type(a) is type(b) and len(a) == len(b) and all(close(x, y, rel) for x, y in zip(a, b))
    return type_of(a) == type_of(b) and a == b
