"""Comparing results and grading answers through the answer checker, never by evaluating their text here.

Two uses of ``evaluate.answers``: a result that is an expression is compared with another (the
small-case cross-check) by grading one against the other; and every instance's own answer,
written in LaTeX as a model would write it, must be graded correct against the stored answer,
with no warning, before the instance is kept (an answer no one can grade makes every model wrong).
One checker worker serves a whole instantiation; it starts at the first check.
"""

from __future__ import annotations

import threading
from fractions import Fraction
from typing import Any

from theorembench.evaluate.answers import AnswerChecker, Verdict
from theorembench.methods.eternal import values as V


class Checker:
    """The answer checker, started when first needed (or ahead, by :meth:`warm`); close it when done."""

    def __init__(self) -> None:
        self._checker: AnswerChecker | None = None
        self._lock = threading.Lock()
        self._warming: threading.Thread | None = None

    def check(self, expected: str, reply: str, kind: str) -> Verdict:
        with self._lock:
            if self._checker is None:
                self._checker = AnswerChecker()
            return self._checker.check(expected, reply, kind)

    def warm(self) -> None:
        """Start the worker in the background (it loads sympy), while the sandboxed runs go on."""
        if self._warming is None:
            self._warming = threading.Thread(target=self._start, daemon=True)
            self._warming.start()

    def _start(self) -> None:
        try:
            self.check("0", "0", "integer")
        except Exception:  # the first real check starts it again and reports why it cannot
            pass

    def close(self) -> None:
        if self._warming is not None:
            self._warming.join()
        with self._lock:
            if self._checker is not None:
                self._checker.close()
                self._checker = None

    def __enter__(self) -> Checker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def boxed(value: Any) -> str:
    return "\\boxed{" + V.latex(value) + "}"


def _has_expr(value: Any) -> bool:
    if isinstance(value, V.Expr):
        return True
    return isinstance(value, tuple | list | frozenset) and any(_has_expr(v) for v in value)


def _number(v: Any) -> bool:
    return isinstance(v, int | Fraction | float) and not isinstance(v, bool)


def agree(formula: Any, brute: Any, checker: Checker) -> bool:
    """Whether the formula's result is the brute force's: numbers equal (within 1e-9 relative when a float is
    involved), collections item by item, expressions graded equivalent by the answer checker."""
    if _number(formula) and _number(brute):
        return V.close(formula, brute)
    if isinstance(formula, tuple | list) and isinstance(brute, tuple | list):
        return type(formula) is type(brute) and len(formula) == len(brute) and \
            all(agree(f, b, checker) for f, b in zip(formula, brute))  # fmt: skip
    if V.close(formula, brute):
        return True
    if not (_has_expr(formula) or _has_expr(brute)):
        return False
    if V.text(formula) == V.text(brute):
        return True
    kind = "set" if isinstance(brute, frozenset) else "real" if V.inexact(formula) or V.inexact(brute) else "expression"
    return checker.check(V.text(brute), boxed(formula), kind).correct is True


def grading_failure(value: Any, kind: str, checker: Checker) -> str | None:
    """Why the stored answer cannot be graded: its own LaTeX is not graded correct, with no warning, against it."""
    stored, reply = V.text(value), boxed(value)
    verdict = checker.check(stored, reply, kind)
    if verdict.correct is True and verdict.warning == "none":
        return None
    said = "; ".join(verdict.messages)[:200] or "no reason given"
    outcome = {True: "correct only with a warning", False: "wrong", None: "ungradeable"}[verdict.correct]
    return (f"the answer checker cannot grade this answer: a reply {reply[:120]} against the stored answer "
            f"{stored[:120]} (kind {kind}) is {outcome} ({said})")  # fmt: skip
