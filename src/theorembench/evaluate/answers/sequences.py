"""Equality of collections: sets, tuples and lists, intervals and their unions, matrices.

Brackets carry meaning. ``\\{..\\}`` is a set; ``(a, b]`` and ``[a, b)`` are intervals;
``(a, b)`` is a point or an open interval and ``[a, b]`` a list or a closed interval, so a
pair in one against a pair in the other is not judged (None) unless the kind says which.
An interval's ends must match bracket for bracket. Names left of ``=`` in an element are
kept: ``x=1, y=2`` equals ``y=2, x=1`` and not ``y=1, x=2``; names on one side only are
ignored when they are in alphabetical order (``x=1, y=2`` against ``(1, 2)``) and make the
answer unjudged otherwise. A verdict of None is returned as ``None`` with a note.
"""

from __future__ import annotations

import re
from typing import Any

from theorembench.evaluate.answers.forms import Matrix, Seq, Several, Union, Value
from theorembench.evaluate.answers.scalars import Notes, expression

ORDERED = ("tuple", "list")


def shape(seq: Seq) -> str:
    """``set``, ``interval`` (mixed brackets), ``paren``, ``bracket`` or ``bare``."""
    if seq.open in ("\\{", "{"):
        return "set"
    if seq.open is None:
        return "bare"
    if seq.open + (seq.close or "") in ("(]", "[)"):
        return "interval"
    return "paren" if seq.open == "(" else "bracket"


def flatten(items: list[Any]) -> list[Any]:
    """Items with every ``\\pm`` pair (and ``or``-joined candidates) spread out, for sets."""
    out: list[Any] = []
    for item in items:
        out.extend(flatten(item.items) if isinstance(item, Several) else [item])
    return out


def same_item(e: Any, a: Any, notes: Notes) -> bool | None:
    if isinstance(e, Value) and isinstance(a, Value):
        return expression(e.expr, a.expr, notes)
    if isinstance(e, Seq) and isinstance(a, Seq):
        return same_seq(e, a, None, notes)
    return False


def _natural(name: str) -> tuple[Any, ...]:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name))


def _names(items: list[Any]) -> list[str] | None:
    """The names of all items (None when some item has none, or every item has the same one)."""
    names = [i.name if isinstance(i, Value) else None for i in items]
    if any(n is None for n in names) or len(set(names)) == 1:
        return None
    return names  # type: ignore[return-value]


def _ordered(e: list[Any], a: list[Any], notes: Notes) -> bool | None:
    if len(e) != len(a):
        return False
    en, an = _names(e), _names(a)
    if en is not None and an is not None:
        if sorted(en) != sorted(an) or len(set(en)) != len(en):
            notes.add("the answer names other unknowns than the expected one", "high")
            return None
        by_name = {i.name: i for i in a}
        a = [by_name[i.name] for i in e]
    elif (en or an) is not None:
        names = en or an
        if names != sorted(names, key=_natural):  # type: ignore[arg-type]
            notes.add("values named out of alphabetical order, against unnamed ones: which is which?", "high")
            return None
        notes.add("names left of = set aside (they are in alphabetical order)")
    verdicts = [same_item(x, y, notes) for x, y in zip(e, a, strict=True)]
    return _all(verdicts)


def _all(verdicts: list[bool | None]) -> bool | None:
    if any(v is False for v in verdicts):
        return False
    return None if any(v is None for v in verdicts) else True


def same_set(e: list[Any], a: list[Any], notes: Notes) -> bool | None:
    e, a = flatten(e), flatten(a)
    if all(isinstance(v, Value) and v.expr.is_Rational for v in e + a):  # fast path: exact numbers
        return {v.expr for v in e} == {v.expr for v in a}
    cover_a = [any(same_item(x, y, notes) is True for x in e) for y in a]
    cover_e = [any(same_item(x, y, notes) is True for y in a) for x in e]
    return all(cover_a) and all(cover_e)


def same_seq(e: Seq, a: Seq, kind: str | None, notes: Notes) -> bool | None:
    """Whether collection ``a`` is collection ``e`` (``kind``: the kind the caller named, None when guessed)."""
    es, ash = shape(e), shape(a)
    if kind == "set" or (kind is None and es == "set"):
        if ash in ("set", "bare"):
            return same_set(e.items, a.items, notes)
        notes.add("a set was expected; the answer is written as a tuple, list or interval", "high")
        return None
    if kind == "interval" or (kind is None and es == "interval"):
        return same_interval(e, a, notes)
    if ash == "set":
        notes.add("a tuple or list was expected; the answer is written as a set", "high")
        return None
    if ash == "interval":
        notes.add("a tuple or list was expected; the answer is an interval")
        return False
    default = "paren" if kind == "tuple" else "bracket" if kind == "list" else None
    left, right = (es if es != "bare" else default), ash
    if left and right != "bare" and left != right:
        if len(e.items) == 2 == len(a.items):
            notes.add("( ) against [ ]: a pair or an interval? not judged", "high")
            return None
        notes.add("( ) and [ ] taken as the same ordered collection")
    return _ordered(e.items, a.items, notes)


def same_interval(e: Seq, a: Seq, notes: Notes) -> bool | None:
    if shape(a) in ("set", "bare") or len(a.items) != 2 or len(e.items) != 2:
        notes.add("an interval was expected; the answer is not one")
        return False
    if (e.open, e.close) != (a.open, a.close):
        notes.add("the interval's ends are open or closed differently")
        return False
    return _all([same_item(x, y, notes) for x, y in zip(e.items, a.items, strict=True)])


def same_union(e: Union | Seq, a: Union | Seq, notes: Notes) -> bool | None:
    """Two unions of intervals (a single interval is a union of one), in any order."""
    ep = e.parts if isinstance(e, Union) else [e]
    ap = a.parts if isinstance(a, Union) else [a]

    def same(x: Seq, y: Seq) -> bool:
        if shape(x) == "set" or shape(y) == "set":
            return shape(x) == shape(y) and same_set(x.items, y.items, notes) is True
        return same_interval(x, y, Notes()) is True

    if len(ep) != len(ap):
        return False
    return all(any(same(x, y) for y in ap) for x in ep) and all(any(same(x, y) for x in ep) for y in ap)


def same_matrix(e: Matrix | Seq, a: Matrix | Seq, notes: Notes) -> bool | None:
    """Matrices entry by entry; a row or column vector against a tuple, entry by entry."""
    if isinstance(e, Matrix) and isinstance(a, Matrix):
        if [len(r) for r in e.rows] != [len(r) for r in a.rows]:
            return False
        return _all([same_item(x, y, notes) for er, ar in zip(e.rows, a.rows, strict=True)
                     for x, y in zip(er, ar, strict=True)])  # fmt: skip
    matrix, seq = (e, a) if isinstance(e, Matrix) else (a, e)
    assert isinstance(matrix, Matrix) and isinstance(seq, Seq)
    if shape(seq) in ("set", "interval") or not (len(matrix.rows) == 1 or all(len(r) == 1 for r in matrix.rows)):
        return False
    entries = [x for row in matrix.rows for x in row]
    if len(entries) != len(seq.items):
        return False
    pairs = zip(entries, seq.items, strict=True) if matrix is e else zip(seq.items, entries, strict=True)
    return _all([same_item(x, y, notes) for x, y in pairs])
