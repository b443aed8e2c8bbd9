"""Equality of two numbers or formulas, exactly (rationals, integers), within a tolerance (reals), or symbolically.

``same_value`` is the one place that says when two sympy values are the same answer of a
kind: integers and rationals must be equal exact rationals; reals within the tolerance;
anything else is compared by its difference (exactly zero, proved by simplification, or,
with a warning, zero at 40 digits or at random points). Equations are the same when
``lhs - rhs`` of one is a non-zero constant multiple of the other's.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

import sympy


@dataclass
class Tolerance:
    rel: float = 1e-6
    abs: float = 1e-9


@dataclass
class Notes:
    """Warnings gathered while judging: each has a level (``low`` or ``high``)."""

    messages: list[str] = field(default_factory=list)
    level: str = "none"

    def add(self, message: str, level: str = "low") -> None:
        if message not in self.messages:
            self.messages.append(message)
        if level == "high" or self.level == "none":
            self.level = level


def same_value(kind: str, expected: Any, answer: Any, tol: Tolerance, notes: Notes) -> bool | None:
    """Whether ``answer`` equals ``expected`` as answers of ``kind``."""
    if kind in ("integer", "rational") and expected.is_Rational:
        return bool(answer.is_Rational) and bool(expected == answer)
    if kind == "real":
        if expected.free_symbols or answer.free_symbols:
            return False
        return real(expected, answer, tol, notes)
    return expression(expected, answer, notes)


def real(expected: sympy.Basic, answer: sympy.Basic, tol: Tolerance, notes: Notes) -> bool:
    if expected == answer:
        return True
    e, a = sympy.N(expected, 30), sympy.N(answer, 30)
    if not (e.is_real and a.is_real):
        return bool(e.is_finite and a.is_finite and abs(e - a) <= tol.abs)
    diff = abs(e - a)
    if diff <= max(tol.abs, tol.rel * abs(e)):
        if diff != 0:
            notes.add(f"tolerance used (difference {float(diff):.3g})")
        return True
    return False


def expression(expected: sympy.Basic, answer: sympy.Basic, notes: Notes) -> bool | None:
    if expected == answer:
        return True
    if expected.is_Rational and answer.is_Rational:
        return False
    diff = expected - answer
    symbols = sorted(diff.free_symbols, key=str)
    if not symbols:
        value = sympy.N(diff, 50)
        size = abs(sympy.N(expected, 15)) if expected.is_number else sympy.Float(1)
        scale = sympy.Max(sympy.Integer(1), size) if size.is_real else sympy.Float(1)  # never a plain int
        if value.is_finite is not True or scale.is_finite is not True or abs(value) > scale * sympy.Float(10) ** -40:
            return False
        if sympy.simplify(diff) == 0:
            return True
        notes.add("equal to 40 digits, not proved symbolically")
        return True
    if not _zero_at(diff, symbols, 1):  # a cheap numerical test first: most wrong answers end here
        return False
    if sympy.expand(diff) == 0 or sympy.simplify(diff) == 0:
        return True
    if not _zero_at(diff, symbols, -1):  # x against |x|, ln(xy) against ln x + ln y
        notes.add("equal for positive values of the variables only: not judged", "high")
        return None  # type: ignore[return-value]
    notes.add("checked at random points, not proved symbolically")
    return True


def _zero_at(diff: sympy.Basic, symbols: list[sympy.Symbol], sign: int) -> bool:
    """Whether ``diff`` is zero (to 20 digits) at five seeded random points: positive ones, or of mixed signs."""
    rng = random.Random(0 if sign > 0 else 2)
    for k in range(5):
        point = {s: sympy.Rational(rng.randint(11, 299), 97) * (1 if sign > 0 or (k + i) % 2 else -1)
                 for i, s in enumerate(symbols)}  # fmt: skip
        value = diff.evalf(30, subs=point)  # floats at the point: never an exact huge power
        if not value.is_number or value.is_finite is not True or abs(value) > 1e-20:
            return False
    return True


def same_equation(expected: tuple[Any, Any], answer: tuple[Any, Any], notes: Notes) -> bool | None:
    """Whether two equations ``lhs = rhs`` have the same solutions because one is a constant multiple of the other."""
    d1, d2 = expected[0] - expected[1], answer[0] - answer[1]
    if d2 == 0 or d1 == 0:
        return bool(d1 == d2 == 0)
    symbols = sorted(d1.free_symbols | d2.free_symbols, key=str)
    if not symbols or not _constant_ratio(d1, d2, symbols, 1):  # two numerical statements, or not proportional
        return False
    ratio = sympy.simplify(d1 / d2)
    if not ratio.free_symbols and ratio != 0:
        return True
    if not _constant_ratio(d1, d2, symbols, -1):  # y = |x| against y = x
        notes.add("equations agree for positive values of the variables only: not judged", "high")
        return None
    notes.add("equations checked at random points, not proved symbolically")
    return True


def _constant_ratio(d1: sympy.Basic, d2: sympy.Basic, symbols: list[sympy.Symbol], sign: int) -> bool:
    """Whether ``d1 / d2`` is the same non-zero number at five seeded random points (positive, or mixed signs)."""
    rng = random.Random(1 if sign > 0 else 3)
    ratios = []
    for k in range(5):
        point = {s: sympy.Rational(rng.randint(11, 299), 97) * (1 if sign > 0 or (k + i) % 2 else -1)
                 for i, s in enumerate(symbols)}  # fmt: skip
        top, bottom = d1.evalf(30, subs=point), d2.evalf(30, subs=point)
        if not (top.is_number and bottom.is_number) or bottom == 0 or top.is_finite is not True:
            return False
        ratios.append(top / bottom)
    first = ratios[0]
    return first != 0 and all(abs(r - first) <= 1e-20 * max(1, abs(first)) for r in ratios[1:])
