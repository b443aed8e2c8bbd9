"""Equivalence by kind: the judgement that runs inside the worker process.

``judge`` reads the expected answer and the reply's final answer (the last boxed answer,
when there are several: earlier boxes are drafts) into forms (``forms``) and compares them
(``scalars`` for values and equations, ``sequences`` for collections, ``textual`` for
option letters and words). It returns a plain dict that becomes a
:class:`~theorembench.evaluate.answers.verdict.Verdict`. Whatever cannot be judged with
confidence (an ambiguous bracket, names out of order, a hedged yes/no, two different
units) comes back as ``correct: None`` with a warning, never as True.
"""

from __future__ import annotations

from typing import Any

import sympy

from theorembench.evaluate.answers.extract import expected_answer
from theorembench.evaluate.answers.forms import Equation, Matrix, Seq, Several, Union, Value, read
from theorembench.evaluate.answers.normalize import boolean, clean, guess_kind
from theorembench.evaluate.answers.parser import ParseError, TooLarge
from theorembench.evaluate.answers.scalars import Notes, Tolerance, same_equation, same_value
from theorembench.evaluate.answers.sequences import same_matrix, same_seq, same_set, same_union
from theorembench.evaluate.answers.textual import as_text, expected_letter, letters, same_text

SHOW_CHARS = 300
UNREADABLE = (ParseError, RecursionError, ValueError, TypeError, AttributeError)

__all__ = ["Notes", "Tolerance", "judge", "show"]


def show(value: Any, kind: str = "") -> str:
    """A parsed value as a short string (huge integers by their size and last digits, never converted whole)."""
    if isinstance(value, Value):
        text = show(value.expr) + ("%" if value.trailers.percent else "")
        text = ("~" if value.approx else "") + text + (f" {value.trailers.unit}" if value.trailers.unit else "")
    elif isinstance(value, Seq):
        body = ", ".join(show(v) for v in value.items[:50]) + (", ..." if len(value.items) > 50 else "")
        text = (value.open or "") + body + (value.close or "")
    elif isinstance(value, Several):
        text = " or ".join(show(v) for v in value.items[:50])
    elif isinstance(value, Union):
        text = " U ".join(show(p) for p in value.parts[:50])
    elif isinstance(value, Matrix):
        text = "[" + "; ".join(", ".join(show(x) for x in row) for row in value.rows[:50]) + "]"
    elif isinstance(value, Equation):
        text = f"{show(value.lhs)} = {show(value.rhs)}"
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


def _as_equation(form: Any) -> tuple[Any, Any] | None:
    if isinstance(form, Equation):
        return form.lhs, form.rhs
    if isinstance(form, Value) and form.name and not form.approx:
        return sympy.Symbol(form.name), form.expr
    return None


def _values(e: Value, a: Value, kind: str, tol: Tolerance, notes: Notes) -> bool | None:
    if a.approx and kind != "real":
        notes.add("an approximation (\\approx) is not an exact answer")
        return False
    eu, au = e.trailers.unit, a.trailers.unit
    if eu and au and eu != au:
        notes.add(f"different units ({eu}, {au}): not compared", "high")
        return None
    if eu != au:
        notes.add(f"unit set aside: {eu or au}")
    if e.name and a.name and e.name != a.name:
        pair_e, pair_a = _as_equation(e), _as_equation(a)
        if (e.expr.free_symbols or a.expr.free_symbols) and pair_e and pair_a:  # "y = 2x + 1", "x = 2y + 1"
            return same_equation(pair_e, pair_a, notes)
        notes.add(f"the answer names {a.name}, the expected answer {e.name}")
    ev, av = e.expr, a.expr
    if e.trailers.percent == a.trailers.percent:
        return same_value(kind, ev, av, tol, notes)
    plain, scaled = (ev, av / 100) if a.trailers.percent else (ev / 100, av)
    verdict = same_value("real" if kind == "real" else "expression", plain, scaled, tol, notes)
    if verdict is not False:
        return verdict
    if ev == av:  # "28%" against "28": the same number with and without the percent sign
        number = ev if not e.trailers.percent else av
        if number.is_Integer and abs(number) > 1:  # 1% is not 1 (a fraction could be 1)
            notes.add("percent sign on one side only: the same whole number")
            return True
        notes.add("percent sign on one side only: a fraction or a percentage?", "high")
        return None
    return False


def equal_forms(e: Any, a: Any, kind: str, explicit: str | None, tol: Tolerance, notes: Notes) -> bool | None:
    """Whether answer form ``a`` is expected form ``e`` (None: not judged, with a note saying why)."""
    wants_set = explicit == "set" or (isinstance(e, Seq) and e.open in ("\\{", "{"))
    if isinstance(e, Several):
        e = Seq("\\{", "\\}", e.items)
        wants_set = True
    if isinstance(a, Several):
        if wants_set:
            a = Seq(None, None, a.items)
        else:
            notes.add("several candidates in one answer")
            return False
    if isinstance(e, Value) and isinstance(a, Value):
        return _values(e, a, kind, tol, notes)
    if isinstance(e, Equation) or isinstance(a, Equation):
        pair_e, pair_a = _as_equation(e), _as_equation(a)
        if pair_e is None or pair_a is None:
            notes.add("an equation against a value")
            return False
        return same_equation(pair_e, pair_a, notes)
    if isinstance(e, Matrix) or isinstance(a, Matrix):
        if isinstance(e, (Matrix, Seq)) and isinstance(a, (Matrix, Seq)):
            return same_matrix(e, a, notes)
        return False
    if isinstance(e, Union) or isinstance(a, Union):
        if isinstance(e, (Union, Seq)) and isinstance(a, (Union, Seq)):
            return same_union(e, a, notes)
        return False
    if isinstance(e, Seq) and isinstance(a, Seq):
        return same_seq(e, a, explicit, notes)
    if isinstance(e, Seq) and isinstance(a, Value):
        if (wants_set or kind == "set") and len(e.items) == 1:
            return same_set(e.items, [a], notes)
        notes.add("one value where a collection is expected")
        return False
    if isinstance(e, Value) and isinstance(a, Seq):
        notes.add("a collection where one value is expected")
        return False
    return False


def _words_or_letter(exp: str, answer: str, explicit: str | None, notes: Notes) -> tuple[bool, bool | None]:
    """(handled, verdict) for an option letter or a text answer; (False, None) when the expected is neither."""
    if explicit is None and (letter := expected_letter(exp)):
        named = letters(answer)
        if len(named) == 1:
            return True, named == {letter}
        notes.add("several option letters in the answer" if named else "no option letter in the answer", "high")
        return True, None
    text = as_text(exp, wrapped_only=True)
    if text is None and explicit in (None, "expression") and (words := as_text(exp)) is not None:
        try:  # words that read as a formula ("odd" is o*d*d, "pi") stay a formula
            read(exp, kind=explicit or "expression")
        except UNREADABLE + (TooLarge,):
            text = words
    if text is None:
        return False, None
    words = as_text(answer)
    if words is None:
        notes.add("a text answer was expected; the answer is not plain words", "high")
        return True, None
    verdict = same_text(text, words)
    if verdict is None:
        notes.add("two different texts: not judged", "high")
    return True, verdict


def judge(expected: str, candidates: list[str], kind: str | None, tol: Tolerance) -> dict[str, Any]:
    """The verdict, as a dict, on ``candidates[-1]``, the final answer (the caller sends only that one)."""
    notes = Notes()
    explicit = kind
    exp, boxed = expected_answer(expected)
    if boxed:
        notes.add("expected answer taken from its last \\boxed{}")
    kind = kind or guess_kind(exp)
    answer = candidates[-1]
    result: dict[str, Any] = {"kind": kind, "correct": None, "expected": None, "answer": None}
    if kind == "boolean":
        e_bool, a_bool = boolean(exp), boolean(answer)
        result.update(expected=str(e_bool), answer=str(a_bool))
        if e_bool is None:
            notes.add("expected answer unparsed: not Yes/No/True/False", "high")
        elif a_bool is None:
            notes.add("unparsed: not one plain, unconditional Yes/No/True/False", "high")
        else:
            result["correct"] = e_bool is a_bool
        return {**result, "warning": notes.level, "messages": notes.messages}
    handled, verdict = _words_or_letter(exp, answer, explicit, notes)
    if handled:
        result.update(correct=verdict, expected=clean(exp)[:SHOW_CHARS], answer=clean(answer)[:SHOW_CHARS])
        return {**result, "warning": notes.level, "messages": notes.messages}
    try:
        e_form = read(exp, kind=kind)
        result["expected"] = show(e_form, kind)
    except UNREADABLE + (TooLarge,) as exc:
        if clean(exp) == clean(answer):
            result.update(correct=True, expected=clean(exp)[:SHOW_CHARS], answer=clean(answer)[:SHOW_CHARS])
            notes.add(f"expected answer unparsed ({exc}); matched as text")
        else:
            notes.add(f"expected answer unparsed: {exc}", "high")
        return {**result, "warning": notes.level, "messages": notes.messages}
    try:
        a_form = read(answer, kind=kind)
    except TooLarge as exc:
        notes.add(f"too large: {exc}", "high")
        return {**result, "warning": notes.level, "messages": notes.messages}
    except UNREADABLE as exc:
        if clean(exp) == clean(answer):
            result["correct"] = True
        else:
            notes.add(f"unparsed: {exc}", "high")
        return {**result, "warning": notes.level, "messages": notes.messages}
    result["answer"] = show(a_form, kind)
    result["correct"] = equal_forms(e_form, a_form, kind, explicit, tol, notes)
    return {**result, "warning": notes.level, "messages": notes.messages}
