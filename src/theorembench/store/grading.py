"""The blind-grading tables: who grades which question (with their private answer order and notes), and flags.

Plain rows in and out; the rules (aliases, shuffling, when identities are revealed) live in
:mod:`theorembench.web.blind`. ``answer_order`` is a JSON list of ``{"answer_id", "alias"}``
objects in the order the grader sees them; an answer whose model was revealed to the grader also has
``"revealed": true``, which stays when the order changes.
"""

from __future__ import annotations

import time
from typing import Any, TypedDict, cast

import sqlalchemy as sa

from theorembench.store.base import dumps, loads
from theorembench.store.db import Store
from theorembench.store.improof import Conflict
from theorembench.store.schema import web_flags, web_grading

_g, _f = web_grading.c, web_flags.c


class Assignment(TypedDict):
    """Who grades which question: the grader's answer order (decoded), private notes and reveal time."""

    problem_id: str
    grader_id: str
    answer_order: list[dict[str, Any]]
    notes: str | None
    notes_revision: int
    assigned_by: str | None
    assigned_at: float
    revealed_at: float | None


class Flag(TypedDict):
    """A user's flag on a question or one of its answers (``resolved_at`` None while open)."""

    id: int
    problem_id: str
    answer_id: str | None
    user_id: str
    message: str
    created_at: float
    resolved_at: float | None
    resolved_by: str | None


def _assignment(row: Any) -> Assignment:
    return cast(Assignment, dict(row) | {"answer_order": loads(row["answer_order"]) or []})


class GradingRepo:
    """Typed access to ``web_grading`` and ``web_flags``."""

    def __init__(self, store: Store):
        self.store = store

    # -- assignments ------------------------------------------------------------

    def assignment(self, problem_id: str, grader_id: str) -> Assignment | None:
        row = self.store._first(sa.select(web_grading).where(_g.problem_id == problem_id, _g.grader_id == grader_id))
        return _assignment(row) if row else None

    def assignments(self, *, problem_id: str | None = None, grader_id: str | None = None) -> list[Assignment]:
        statement = sa.select(web_grading).order_by(_g.problem_id, _g.assigned_at, _g.grader_id)
        if problem_id is not None:
            statement = statement.where(_g.problem_id == problem_id)
        if grader_id is not None:
            statement = statement.where(_g.grader_id == grader_id)
        return [_assignment(r) for r in self.store._rows(statement)]

    def assign(self, problem_id: str, grader_id: str, order: list[dict[str, str]], *, by: str | None) -> bool:
        """A new assignment with its answer order; False (nothing written) when the grader has one already."""
        return self.store._insert_ignore(web_grading, {
            "problem_id": problem_id, "grader_id": grader_id, "answer_order": dumps(order), "notes": "",
            "notes_revision": 1, "assigned_by": by, "assigned_at": time.time(), "revealed_at": None})  # fmt: skip

    def set_order(self, problem_id: str, grader_id: str, old: list[dict[str, str]], new: list[dict[str, str]]) -> None:
        """Replace the answer order if it is still ``old`` (else :class:`Conflict`); hides identities again (the
        reveal marks in the entries stay)."""
        done = self.store._execute(web_grading.update().where(
            _g.problem_id == problem_id, _g.grader_id == grader_id, _g.answer_order == dumps(old))
            .values(answer_order=dumps(new), revealed_at=None).execution_options(preserve_rowcount=True))  # fmt: skip
        if done.rowcount != 1:
            raise Conflict(f"the answer order of {problem_id} changed meanwhile")

    def set_revealed(self, problem_id: str, grader_id: str, old: list[dict[str, Any]], marked: list[dict[str, Any]],
                     at: float) -> bool:  # fmt: skip
        """Record the reveal: the order with its answers marked, if it is still ``old`` and not revealed; whether
        it was recorded (False: another request changed the order or revealed it first)."""
        done = self.store._execute(web_grading.update().where(
            _g.problem_id == problem_id, _g.grader_id == grader_id, _g.answer_order == dumps(old),
            _g.revealed_at.is_(None)).values(answer_order=dumps(marked), revealed_at=at)
            .execution_options(preserve_rowcount=True))  # fmt: skip
        return done.rowcount == 1

    def save_notes(self, problem_id: str, grader_id: str, notes: str, expected_revision: int) -> int:
        """Compare-and-set the grader's notes; returns the new revision, :class:`Conflict` when stale."""
        done = self.store._execute(web_grading.update().where(
            _g.problem_id == problem_id, _g.grader_id == grader_id, _g.notes_revision == expected_revision)
            .values(notes=notes, notes_revision=expected_revision + 1)
            .execution_options(preserve_rowcount=True))  # fmt: skip
        if done.rowcount != 1:
            raise Conflict(f"the notes of {problem_id} changed meanwhile")
        return expected_revision + 1

    # -- flags --------------------------------------------------------------------

    def add_flag(self, problem_id: str, answer_id: str | None, user_id: str, message: str) -> int:
        done = self.store._execute(web_flags.insert().returning(_f.id), {
            "problem_id": problem_id, "answer_id": answer_id, "user_id": user_id, "message": message,
            "created_at": time.time(), "resolved_at": None, "resolved_by": None})  # fmt: skip
        return int(done.scalar_one())

    def flag(self, flag_id: int) -> Flag | None:
        row = self.store._first(sa.select(web_flags).where(_f.id == flag_id))
        return cast(Flag, dict(row)) if row else None

    def flags(self, *, open_only: bool = False, user_id: str | None = None) -> list[Flag]:
        """Flags, open ones first, newest first."""
        statement = sa.select(web_flags).order_by(_f.resolved_at.is_not(None), _f.id.desc())
        if open_only:
            statement = statement.where(_f.resolved_at.is_(None))
        if user_id is not None:
            statement = statement.where(_f.user_id == user_id)
        return [cast(Flag, dict(r)) for r in self.store._rows(statement)]

    def resolve_flag(self, flag_id: int, by: str) -> bool:
        """Mark an open flag resolved; False when it is unknown or resolved already."""
        done = self.store._execute(web_flags.update().where(_f.id == flag_id, _f.resolved_at.is_(None))
                                   .values(resolved_at=time.time(), resolved_by=by)
                                   .execution_options(preserve_rowcount=True))  # fmt: skip
        return done.rowcount == 1
