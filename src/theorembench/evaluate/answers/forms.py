"""Reading one answer into a form: a value, a collection, a union of intervals, a matrix or an equation.

The reader keeps what changes the meaning of an answer, so the comparison can judge it:
the brackets of a collection (``(0,9)``, ``[0,9)`` and ``\\{0,9\\}`` are three different
answers), the names left of ``=`` (``x=1, y=2`` is not ``y=1, x=2``), an approximation sign
(``N \\approx 114`` is not an exact answer), a percent sign, a unit, and several candidates
(``5 \\text{ or } 6``, ``1 \\pm \\sqrt{5}``). Numbers are read exactly: mixed numbers
(``4\\frac{4}{9}``, ``4 4/9``), a decimal comma where it cannot be a thousands separator
(``3,14``, ``0,111``), repeating decimals (``0.\\overline{3}``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import sympy

from theorembench.evaluate.answers.normalize import clean, outer, split_top, split_word
from theorembench.evaluate.answers.parser import ParseError, TooLarge, parse_math
from theorembench.evaluate.answers.units import Trailers, split_trailers

MAX_ELEMENTS = 2_000
MAX_CHAIN = 12  # sides of x = a = b = ...
MAX_NESTING = 40  # collections inside collections
_NOT_NAMES = {"pi", "e", "i", "infty", "infinity", "inf", "oo", "sqrt", "ln", "log", "exp", "sin", "cos", "tan"}
NAME = re.compile(r"\\?[A-Za-z]+(?:_\{?[A-Za-z0-9]+\}?|'+)?(?:\s*\([A-Za-z0-9, ]*\))?")
_NAMES = re.compile(r"\(\s*[A-Za-z](?:_\{?\w+\}?)?(?:\s*,\s*[A-Za-z](?:_\{?\w+\}?)?)+\s*\)")
_APPROX = re.compile(r"\\(?:approx|simeq|sim|thickapprox|thicksim|doteq)(?![A-Za-z])")
_EQUALS = re.compile(r"=(?!=)")
_OR = re.compile(r"\sor\s|\s*\\(?:lor|vee)(?![A-Za-z])\s*")
_AND = re.compile(r"\sand\s|\s*\\(?:land|wedge)(?![A-Za-z])\s*")
_THOUSANDS = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+")
_IN = re.compile(r"^\s*(\\?[A-Za-z]+(?:_\{?[A-Za-z0-9]+\}?)?)\s*\\in(?![A-Za-z])\s*")
_CUP = re.compile(r"\s*\\cup(?![A-Za-z])\s*")
_PM = re.compile(r"\\(?:pm|mp)(?![A-Za-z])")
_MATRIX = re.compile(r"^[(\[]?\s*\\begin\s*\{(pmatrix|bmatrix|Bmatrix|vmatrix|matrix|smallmatrix|array)\}"
                     r"(?:\s*\{[lcr|]*\})?(.*)\\end\s*\{\1\}\s*[)\]]?$", re.DOTALL)  # fmt: skip
_MIXED = re.compile(r"([+-]?)(\d+)\s*(?:\\frac\{(\d+)\}\{(\d+)\}|\s(\d+)\s*/\s*(\d+))")
# "3,14", "0,111", "1000,99", "2{,}74": a comma no thousands separator could be ("1,000" is one)
_COMMA_DECIMAL = re.compile(r"([+-]?(?:0|\d{4,}|[1-9]\d{0,2}(?=(?:\{,\}|,)(?:\d{1,2}|\d{4,})$)))(?:\{,\}|,)(\d+)")
_REPEAT = re.compile(r"(\d*)\.(\d*)\\overline\s*\{(\d{1,20})\}")
_MOD = re.compile(r"\s*(?:\\pmod\s*\{[^{}]*\}|\\pmod\s*\w+|\(\s*\\?(?:bmod|mod)\s*[^()]*\)|\\(?:bmod|mod)\s*\w+)\s*$")
_NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen "
    "eighteen nineteen twenty".split())}  # fmt: skip
_SIMPLE_NAME = re.compile(r"\\?[A-Za-z]+(?:_\{?[A-Za-z0-9]+\}?)?")


@dataclass
class Value:
    """One number or formula; ``name`` is what stood left of ``=``; ``approx`` when only ``\\approx`` gave it."""

    expr: Any
    name: str | None = None
    trailers: Trailers = field(default_factory=Trailers)
    approx: bool = False


@dataclass
class Seq:
    """A tuple, list, set or interval: its delimiters (None when bare) and items (Value or Seq)."""

    open: str | None
    close: str | None
    items: list[Any]


@dataclass
class Several:
    """Candidates offered together: ``5 \\text{ or } 6``, ``1 \\pm \\sqrt{5}``, ``x = 1, x = -2`` for one unknown."""

    items: list[Any]


@dataclass
class Union:
    parts: list[Seq]


@dataclass
class Matrix:
    rows: list[list[Any]]


@dataclass
class Equation:
    lhs: Any
    rhs: Any


def _strip_math(text: str) -> str:
    text = text.replace("\\$", "\x00")
    text = text.replace("$", " ").replace("\x00", "\\$")
    for mark in ("\\(", "\\)", "\\[", "\\]"):
        text = text.replace(mark, " ")
    return text.strip()


def is_name(text: str) -> bool:
    """``x``, ``N_8``, ``f(x)``, ``\\alpha``: what may stand left of ``=`` to name an answer."""
    text = text.strip()
    stem = re.sub(r"_.*|\(.*|'+", "", text.lstrip("\\")).strip()
    return bool(NAME.fullmatch(text)) and len(stem) <= 12 and stem not in _NOT_NAMES


def scalar(text: str) -> Any:
    """The sympy value of one cleaned number or formula (mixed numbers, decimal commas, repeating decimals)."""
    text = _MOD.sub("", text).strip()
    if text.lower() in _NUMBER_WORDS:
        return sympy.Integer(_NUMBER_WORDS[text.lower()])
    if m := _MIXED.fullmatch(text):
        whole, num, den = int(m[2]), int(m[3] or m[5]), int(m[4] or m[6])
        if 0 < num < den:
            value = sympy.Integer(whole) + sympy.Rational(num, den)
            return -value if m[1] == "-" else value
    if m := _COMMA_DECIMAL.fullmatch(text):
        return parse_math(f"{m[1]}.{m[2]}")
    if "\\overline" in text:
        text = _REPEAT.sub(_repeating, text)
    return parse_math(text)


def _repeating(m: re.Match[str]) -> str:
    whole, fixed, cycle = m[1] or "0", m[2], m[3]
    value = sympy.Integer(whole) + sympy.Rational(int(fixed or "0"), 10 ** len(fixed)) + sympy.Rational(
        int(cycle), (10 ** len(cycle) - 1) * 10 ** len(fixed))
    p, q = value.as_numer_denom()
    return f"({p}/{q})"


def read(text: str, *, kind: str) -> Any:
    """The form of one answer; :class:`ParseError` or :class:`TooLarge` when it cannot be read."""
    raw = _strip_math(text)
    if m := _IN.match(raw):  # "x \in [0, 1)": the set is the answer
        raw = raw[m.end() :]
    rest, trailers = split_trailers(raw)
    if not rest:
        raise ParseError("empty answer")
    collection = kind in ("tuple", "list", "set", "interval")
    if not collection and (m := _COMMA_DECIMAL.fullmatch(clean(rest, commas_separate_digits=False))):
        form: Any = Value(parse_math(f"{m[1]}.{m[2]}"))  # 3,14 or 0,111: no thousands separator reads so
    else:
        form = _read_clean(clean(rest, commas_separate_digits=not collection), kind)
    if trailers.unit or trailers.percent or trailers.currency:
        if not isinstance(form, Value):
            raise ParseError("a unit or percent sign after a collection")
        form.trailers = trailers
    return form


def _read_clean(t: str, kind: str) -> Any:
    if not t:
        raise ParseError("empty answer")
    parts = split_word(t, _APPROX)
    if len(parts) > 1:
        return _approximation(parts, kind)
    if len(pieces := split_word(t, _CUP)) > 1:
        return Union([_interval_part(p) for p in pieces])
    if m := _MATRIX.match(t):
        return _matrix(m[2])
    if kind == "interval" and re.search(r"<|>|\\[lg]e(?![A-Za-z])", t):
        return _inequality(t)
    options = split_word(t, _OR)
    if len(options) > 1:
        return Several([_read_clean(o, kind) for o in options])
    found = outer(t)
    items = split_top(t)
    if len(items) == 1 and len(both := split_word(t, _AND)) > 1:  # "-2 and 1": both, a collection
        items = both
    if len(items) > 1:  # bare: "1, 2, 3", "x = 1, y = 2"
        if _THOUSANDS.fullmatch(t):
            raise ParseError(f"{t} is ambiguous: a number with thousands separators, or a tuple?")
        return _collection(None, None, items, kind)
    sides = split_word(t, _EQUALS)
    if len(sides) > 1:
        return _equation(sides, kind)
    if len(split_word(t, _PM)) > 1:
        return _plus_minus(t)
    if found:
        inner = t[len(found[0]) : len(t) - len(found[1])]
        items = split_top(inner)
        if len(items) == 1 and ";" in inner:
            items = split_top(inner, ";")
        if len(items) > 1 or found[0] == "\\{" or found[0] + found[1] in ("(]", "[)"):
            return _collection(found[0], found[1], [] if items == [""] else items, kind)
    return Value(scalar(t))


def _collection(left: str | None, right: str | None, items: list[str], kind: str) -> Seq:
    if len(items) > MAX_ELEMENTS:
        raise TooLarge("too many elements")
    if any(not i for i in items):
        raise ParseError("an empty element")
    return Seq(left, right, [_element(i, kind) for i in items])


def _element(text: str, kind: str) -> Any:
    """One element of a collection: a value, a nested collection, ``x = 1`` (named) or ``1 \\pm 2`` (two)."""
    if text.count("\\{") + text.count("(") + text.count("[") > MAX_NESTING and _nesting(text) > MAX_NESTING:
        raise TooLarge("collections nested too deeply")
    sides = split_word(text, _EQUALS)
    if len(sides) == 2 and is_name(sides[0]):
        form = _element(sides[1], kind)
        if isinstance(form, Value):
            form.name = _canonical_name(sides[0])
        return form
    if _PM.search(text):
        return _plus_minus(text)
    found = outer(text)
    if found and (len(split_top(text[len(found[0]) : len(text) - len(found[1])])) > 1 or found[0] == "\\{"):
        return _read_clean(text, kind)
    return Value(scalar(text))


def _nesting(text: str) -> int:
    depth = deepest = 0
    for ch in text:
        depth += ch in "([{"
        depth -= ch in ")]}"
        deepest = max(deepest, depth)
    return deepest


def _canonical_name(text: str) -> str:
    return re.sub(r"[\s{}]", "", text).lstrip("\\")


def _approximation(parts: list[str], kind: str) -> Any:
    """``A \\approx B``: the exact ``A`` when it is a formula, else ``B`` marked approximate (``N \\approx 114``)."""
    head = parts[0].strip()
    if head and not is_name(head):
        return _read_clean(head, kind)
    form = _read_clean(parts[-1], kind)
    if not isinstance(form, Value):
        raise ParseError("an approximation of a collection")
    form.approx = True
    form.name = _canonical_name(head) if head else None
    return form


def _equation(sides: list[str], kind: str) -> Any:
    """``x = 5`` (a named value), ``(x, y) = (1, 2)``, ``x = 5 + 6 = 11`` (a chain that must agree), or an equation."""
    head = sides[0].strip()
    if len(sides) > MAX_CHAIN:
        raise TooLarge("too many = signs")
    if is_name(head) or _NAMES.fullmatch(head):
        values = [_read_clean(s, kind) for s in sides[1:]]
        _check_chain(values)
        form = values[-1]
        if isinstance(form, Value) and is_name(head):
            form.name = _canonical_name(head)
        elif isinstance(form, Seq) and _NAMES.fullmatch(head):
            names = [_canonical_name(n) for n in split_top(head[1:-1])]
            if len(names) != len(form.items):
                raise ParseError("names and values differ in number")
            for name, item in zip(names, form.items, strict=True):
                if isinstance(item, Value):
                    item.name = name
        return form
    if len(sides) == 2:
        lhs, rhs = scalar(sides[0]), scalar(sides[1])
        if lhs.free_symbols or rhs.free_symbols:
            return Equation(lhs, rhs)
        values = [Value(lhs), Value(rhs)]
    else:
        values = [_read_clean(s, kind) for s in sides]
    _check_chain(values)  # "2 + 3 = 5": the last side, when every side agrees
    return values[-1]


def _check_chain(values: list[Any]) -> None:
    if len(values) < 2:
        return
    if not all(isinstance(v, Value) for v in values):
        raise ParseError("a chain of equalities between collections")
    last = values[-1].expr
    for v in values[:-1]:
        diff = v.expr - last
        if diff.free_symbols or sympy.simplify(diff) != 0:
            raise ParseError("a chain of equalities whose sides differ")


def _plus_minus(text: str) -> Several:
    """``a \\pm b`` as the two values ``a + b`` and ``a - b`` (one sign only)."""
    pieces = split_word(text, _PM)
    if len(pieces) != 2:
        raise ParseError("more than one \\pm")
    base = scalar(pieces[0]) if pieces[0] else sympy.Integer(0)
    step = scalar(pieces[1])
    return Several([Value(base + step), Value(base - step)])


def _interval_part(text: str) -> Seq:
    form = _read_clean(text, "interval")
    if not isinstance(form, Seq) or not (form.open == "\\{" or (len(form.items) == 2 and form.open in ("(", "["))):
        raise ParseError("a union of things that are not intervals")
    return form


_FLIP = {">": "<", "\\ge": "\\le", "<": "<", "\\le": "\\le"}


def _inequality(text: str) -> Seq:
    """``a < x < b``, ``a \\le x``, ``x > a`` read as the interval they describe (for kind interval only)."""
    pieces = re.split(r"\s*(<|>|\\[lg]e)(?![A-Za-z])\s*", text.strip())
    values, ops = pieces[0::2], pieces[1::2]
    if len({op in (">", "\\ge") for op in ops}) != 1 or not 1 <= len(ops) <= 2:
        raise ParseError("not an inequality in one variable")
    if ops[0] in (">", "\\ge"):
        values, ops = values[::-1], [_FLIP[o] for o in ops[::-1]]
    if len(ops) == 2:
        if not _SIMPLE_NAME.fullmatch(values[1]):
            raise ParseError("not an inequality in one variable")
        low, high = Value(scalar(values[0])), Value(scalar(values[2]))
        left, right = ops
    elif _SIMPLE_NAME.fullmatch(values[0]):  # x < b
        low, high, left, right = Value(-sympy.oo), Value(scalar(values[1])), "<", ops[0]
    elif _SIMPLE_NAME.fullmatch(values[1]):  # a < x
        low, high, left, right = Value(scalar(values[0])), Value(sympy.oo), ops[0], "<"
    else:
        raise ParseError("not an inequality in one variable")
    return Seq("[" if left == "\\le" else "(", "]" if right == "\\le" else ")", [low, high])


def _matrix(body: str) -> Matrix:
    rows = [r for r in re.split(r"\\\\", body) if r.strip() and not re.fullmatch(r"\s*\\hline\s*", r)]
    if not rows or len(rows) > 200:
        raise ParseError("an empty or oversized matrix")
    table = [[Value(scalar(c.strip())) for c in row.split("&")] for row in rows]
    if len({len(r) for r in table}) != 1:
        raise ParseError("matrix rows of different lengths")
    return Matrix(table)
