"""Equivalence by kind: the judgement that runs inside the worker process.

``judge`` parses the expected answer and the candidate answers (the last one is the answer;
the others are earlier boxed answers that must agree with it) and returns a plain dict that
becomes a :class:`~theorembench.evaluate.answers.verdict.Verdict`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

import sympy

from theorembench.evaluate.answers.normalize import boolean, clean, elements, guess_kind, strip_lhs
from theorembench.evaluate.answers.parser import ParseError, TooLarge, parse_math

SHOW_CHARS = 300
MAX_ELEMENTS = 2_000


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


def show(value: Any, kind: str = "") -> str:
    """A parsed value as a short string (huge integers by their size and last digits, never converted whole)."""
    if isinstance(value, list):
        left, right = {"set": "{}", "list": "[]"}.get(kind, "()")
        text = left + ", ".join(show(v) for v in value[:50]) + (", ..." if len(value) > 50 else "") + right
    elif isinstance(value, sympy.Integer) and abs(int(value)).bit_length() > 30_000:
        digits = int(abs(int(value)).bit_length() * 0.30103) + 1
        text = f"<integer of about {digits} digits ending ...{abs(int(value)) % 10**12:012d}>"
    elif isinstance(value, sympy.Basic) and value.is_Rational and _size(value) > 30_000:
        text = f"<rational of about {int(_size(value) * 0.30103)} digits>"
    else:
        text = str(value)
    return text if len(text) <= SHOW_CHARS else text[: SHOW_CHARS - 3] + "..."


def _size(value: sympy.Basic) -> int:
    p, q = value.as_numer_denom()
    return max(abs(int(p)).bit_length(), abs(int(q)).bit_length())


def parse(text: str, kind: str) -> Any:
    """The value of ``text`` read as ``kind``: a sympy object, a bool, or a list of (element kind, value)."""
    if kind == "boolean":
        value = boolean(text)
        if value is None:
            raise ParseError("not Yes/No/True/False")
        return value
    if kind in ("tuple", "list", "set"):
        parts, _ = elements(text)
        if len(parts) > MAX_ELEMENTS:
            raise TooLarge("too many elements")
        return [parse(p, "tuple" if guess_kind(p) in ("tuple", "list", "set") else "expression") for p in parts]
    return parse_math(strip_lhs(clean(text)))


def equal(kind: str, expected: Any, answer: Any, tol: Tolerance, notes: Notes) -> bool:
    """Whether ``answer`` equals ``expected`` as answers of ``kind``."""
    if kind == "boolean":
        return expected is answer
    if kind in ("tuple", "list", "set"):
        return _collection(kind, expected, answer, tol, notes)
    if kind in ("integer", "rational"):
        return bool(answer.is_Rational) and bool(expected == answer)
    if kind == "real" and (expected.free_symbols or answer.free_symbols):
        return False
    if kind == "real":
        return _real(expected, answer, tol, notes)
    return _expression(expected, answer, notes)


def _collection(kind: str, expected: list, answer: list, tol: Tolerance, notes: Notes) -> bool:
    def same(e: Any, a: Any) -> bool:
        if isinstance(e, list) or isinstance(a, list):
            return isinstance(e, list) and isinstance(a, list) and _collection("tuple", e, a, tol, notes)
        return _expression(e, a, notes)

    if kind != "set":
        return len(expected) == len(answer) and all(same(e, a) for e, a in zip(expected, answer, strict=True))
    if all(isinstance(v, sympy.Basic) and v.is_Rational for v in expected + answer):  # fast path: exact numbers
        return set(expected) == set(answer)
    return all(any(same(e, a) for e in expected) for a in answer) and all(
        any(same(e, a) for a in answer) for e in expected
    )


def _real(expected: sympy.Basic, answer: sympy.Basic, tol: Tolerance, notes: Notes) -> bool:
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


def _expression(expected: sympy.Basic, answer: sympy.Basic, notes: Notes) -> bool:
    if expected == answer:
        return True
    if expected.is_Rational and answer.is_Rational:
        return False
    diff = expected - answer
    symbols = sorted(diff.free_symbols, key=str)
    if not symbols:
        value = sympy.N(diff, 50)
        scale = max(1, abs(sympy.N(expected, 15))) if expected.is_number else sympy.Float(1)
        if value.is_finite is not True or scale.is_finite is not True or abs(value) > scale * sympy.Float(10) ** -40:
            return False
        if sympy.simplify(diff) == 0:
            return True
        notes.add("equal to 40 digits, not proved symbolically")
        return True
    rng = random.Random(0)
    for _ in range(5):  # a cheap numerical test first: most wrong answers end here
        point = {s: sympy.Rational(rng.randint(11, 299), 97) for s in symbols}
        value = diff.evalf(30, subs=point)  # floats at the point: never an exact huge power
        if not value.is_number or value.is_finite is not True or abs(value) > 1e-20:
            return False
    if sympy.expand(diff) == 0 or sympy.simplify(diff) == 0:
        return True
    notes.add("checked at random points, not proved symbolically")
    return True


def judge(expected: str, candidates: list[str], kind: str | None, tol: Tolerance) -> dict[str, Any]:
    """The verdict, as a dict, on ``candidates[-1]`` (earlier candidates: other boxed answers that must agree)."""
    notes = Notes()
    kind = kind or guess_kind(expected)
    result: dict[str, Any] = {"kind": kind, "correct": None, "expected": None, "answer": None}
    try:
        exp_value = parse(expected, kind)
        result["expected"] = show(exp_value, kind)
    except (ParseError, TooLarge, RecursionError, ValueError, TypeError) as exc:
        if clean(expected) == clean(candidates[-1]):
            result.update(correct=True, expected=clean(expected)[:SHOW_CHARS], answer=clean(candidates[-1])[:SHOW_CHARS])
            notes.add(f"expected answer unparsed ({exc}); matched as text")
        else:
            notes.add(f"expected answer unparsed: {exc}", "high")
        return {**result, "warning": notes.level, "messages": notes.messages}
    values = []
    for text in candidates[::-1]:
        try:
            values.append(parse(text, kind))
        except TooLarge as exc:
            notes.add(f"too large: {exc}", "high")
            values.append(None)
        except (ParseError, RecursionError, ValueError, TypeError) as exc:
            notes.add(f"unparsed: {exc}", "high")
            values.append(None)
    answer = values[0]
    if answer is not None:
        result["answer"] = show(answer, kind)
        result["correct"] = equal(kind, exp_value, answer, tol, notes)
        others = values[1:]
        if others and not all(v is not None and equal(kind, v, answer, tol, notes) for v in others):
            result["correct"] = False
            notes.add("two different boxed answers", "high")
    elif clean(expected) == clean(candidates[-1]):
        result["correct"] = True
    return {**result, "warning": notes.level, "messages": notes.messages}
