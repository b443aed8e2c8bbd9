"""The IMProofBench tables: problems and their immutable versions, status events, answers, verdicts, grades.

Plain rows in and out (dicts with JSON columns decoded); the rules (which fields a problem has,
which status moves are allowed, what a complete grade needs) live in
:mod:`theorembench.methods.improof`. Every write that touches several rows is one transaction.
Version rows, status events, verdicts, overrides and grade corrections are only ever inserted, never updated.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypedDict, cast

import sqlalchemy as sa

from theorembench.store.base import StoreError, dumps, loads
from theorembench.store.db import Store
from theorembench.store.schema import (
    improof_answers,
    improof_grade_corrections,
    improof_grades,
    improof_problem_versions,
    improof_problems,
    improof_status_events,
    improof_verdict_overrides,
    improof_verdicts,
)

_p, _v, _e = improof_problems.c, improof_problem_versions.c, improof_status_events.c
_a, _vd, _o, _g = improof_answers.c, improof_verdicts.c, improof_verdict_overrides.c, improof_grades.c
_c = improof_grade_corrections.c


class ProblemRow(TypedDict):
    """A problem: its status, author and current version number."""

    id: str
    status: str
    author: str | None
    current_version: int
    created_at: float
    updated_at: float


class ProblemWithPayload(ProblemRow):
    """A problem with its current version's payload (decoded), as :meth:`ImproofRepo.problems` lists it."""

    payload: dict[str, Any]


class ProblemVersion(TypedDict):
    """One immutable version of a problem, its payload (the problem file's fields) decoded."""

    problem_id: str
    version: int
    payload: dict[str, Any]
    created_by: str | None
    note: str | None
    created_at: float


class StatusEvent(TypedDict):
    """One status move of a problem (``from_status`` None at its creation)."""

    id: int
    problem_id: str
    from_status: str | None
    to_status: str
    actor: str | None
    note: str | None
    at: float


class AnswerRow(TypedDict):
    """One model's attempt at a problem version, ``sub_answers`` and ``stages`` decoded."""

    id: str
    run_id: str | None
    problem_id: str
    version: int
    model: str
    tier: int | None
    epoch: int
    mode: str
    main_answer: str | None
    sub_answers: list[str | None]
    stages: list[dict[str, Any]]
    created_at: float


class VerdictRow(TypedDict):
    """The automatic verdict on one subanswer under one grader version, ``parsed`` decoded."""

    answer_id: str
    sub_index: int
    grader_version: str
    correct: bool | None
    warning: str
    extracted: str | None
    parsed: dict[str, Any] | None
    created_at: float


class VerdictOverride(TypedDict):
    """A person's override of one subanswer's verdict (an audit-trail entry)."""

    id: int
    answer_id: str
    sub_index: int
    correct: bool | None
    verified: bool
    actor: str
    reason: str
    at: float


class GradeRow(TypedDict):
    """A human grade of an answer, ``indicators`` decoded."""

    answer_id: str
    grader: str
    progress: int | None
    indicators: dict[str, Any]
    notes: str | None
    comment: str | None
    status: str
    revision: int
    updated_at: float


class GradeCorrection(GradeRow):
    """A grade changed after the grader saw the model names: a grade's keys, ``updated_at`` when it was made."""


class Conflict(StoreError):
    """A compare-and-set write found the row changed since it was read (another writer came first)."""


def _bool(value: Any) -> bool | None:
    return None if value is None else bool(value)


def _int(value: bool | None) -> int | None:
    return None if value is None else int(bool(value))


class ImproofRepo:
    """Typed access to the ``improof_*`` tables of one store."""

    def __init__(self, store: Store):
        self.store = store

    # -- problems and versions ------------------------------------------------

    def problem(self, problem_id: str) -> ProblemRow | None:
        row = self.store._first(sa.select(improof_problems).where(_p.id == problem_id))
        return cast(ProblemRow, dict(row)) if row else None

    def problems(self, status: str | None = None) -> list[ProblemWithPayload]:
        """Problems with their current version's payload (``payload``), by id."""
        statement = (sa.select(improof_problems, _v.payload)
                     .join(improof_problem_versions, sa.and_(_v.problem_id == _p.id, _v.version == _p.current_version))
                     .order_by(_p.id))  # fmt: skip
        if status:
            statement = statement.where(_p.status == status)
        rows = self.store._rows(statement)
        return [cast(ProblemWithPayload, dict(r) | {"payload": loads(r["payload"])}) for r in rows]

    def version(self, problem_id: str, version: int | None = None) -> ProblemVersion | None:
        """One version row (the current one when ``version`` is None), its payload decoded."""
        if version is None:
            found = self.problem(problem_id)
            if found is None:
                return None
            version = found["current_version"]
        row = self.store._first(sa.select(improof_problem_versions)
                                .where(_v.problem_id == problem_id, _v.version == version))  # fmt: skip
        return cast(ProblemVersion, dict(row) | {"payload": loads(row["payload"])}) if row else None

    def versions(self, problem_id: str) -> list[ProblemVersion]:
        rows = self.store._rows(sa.select(improof_problem_versions).where(_v.problem_id == problem_id)
                                .order_by(_v.version))  # fmt: skip
        return [cast(ProblemVersion, dict(r) | {"payload": loads(r["payload"])}) for r in rows]

    def create_problem(self, problem_id: str, *, status: str, author: str | None, payload: Mapping[str, Any],
                       actor: str | None, note: str = "") -> None:  # fmt: skip
        """A new problem at version 1, with its first status event; one transaction."""
        now = time.time()
        with _unique(f"problem {problem_id} exists already"), self.store.transaction():
            if self.problem(problem_id) is not None:
                raise Conflict(f"problem {problem_id} exists already")
            self.store._execute(improof_problems.insert(), {
                "id": problem_id, "status": status, "author": author, "current_version": 1,
                "created_at": now, "updated_at": now})  # fmt: skip
            self.store._execute(improof_problem_versions.insert(), {
                "problem_id": problem_id, "version": 1, "payload": dumps(dict(payload)), "created_by": actor,
                "note": note, "created_at": now})  # fmt: skip
            self._event(problem_id, None, status, actor, note, now)

    def add_version(self, problem_id: str, payload: Mapping[str, Any], *, author: str | None, actor: str | None,
                    note: str = "") -> int:  # fmt: skip
        """Insert version k+1 and make it current; returns k+1. The problem row is updated first, so on
        PostgreSQL a concurrent writer waits on its row lock and then numbers its version k+2."""
        now = time.time()
        with self.store.transaction():
            done = self.store._execute(improof_problems.update().where(_p.id == problem_id)
                                       .values(current_version=_p.current_version + 1, author=author, updated_at=now)
                                       .execution_options(preserve_rowcount=True))  # fmt: skip
            if done.rowcount != 1:
                raise Conflict(f"no problem {problem_id}")
            number = int(self.store._rows(sa.select(_p.current_version).where(_p.id == problem_id))[0][0])
            self.store._execute(improof_problem_versions.insert(), {
                "problem_id": problem_id, "version": number, "payload": dumps(dict(payload)), "created_by": actor,
                "note": note, "created_at": now})  # fmt: skip
        return number

    def set_status(self, problem_id: str, old: str, new: str, *, actor: str | None, note: str = "") -> None:
        """Move ``old`` → ``new`` if the problem is still at ``old`` (else :class:`Conflict`), with its event."""
        now = time.time()
        with self.store.transaction():
            done = self.store._execute(improof_problems.update().where(_p.id == problem_id, _p.status == old)
                                       .values(status=new, updated_at=now)
                                       .execution_options(preserve_rowcount=True))  # fmt: skip
            if done.rowcount != 1:
                raise Conflict(f"problem {problem_id} is no longer {old}")
            self._event(problem_id, old, new, actor, note, now)

    def _event(self, problem_id: str, old: str | None, new: str, actor: str | None, note: str, at: float) -> None:
        self.store._execute(improof_status_events.insert(), {
            "problem_id": problem_id, "from_status": old, "to_status": new, "actor": actor, "note": note, "at": at})

    def status_events(self, problem_id: str) -> list[StatusEvent]:
        rows = self.store._rows(sa.select(improof_status_events).where(_e.problem_id == problem_id).order_by(_e.id))
        return [cast(StatusEvent, dict(r)) for r in rows]

    # -- answers ----------------------------------------------------------------

    def insert_answer(self, values: Mapping[str, Any]) -> bool:
        """Insert an answer row (``sub_answers`` and ``stages`` as Python values); False if its id exists."""
        row = dict(values)
        row["sub_answers"], row["stages"] = dumps(row["sub_answers"]), dumps(row["stages"])
        row.setdefault("created_at", time.time())
        return self.store._insert_ignore(improof_answers, row)

    def answer(self, answer_id: str) -> AnswerRow | None:
        row = self.store._first(sa.select(improof_answers).where(_a.id == answer_id))
        return _answer(row) if row else None

    def answers(self, *, run_id: str | None = None, problem_id: str | None = None,
                model: str | None = None) -> list[AnswerRow]:  # fmt: skip
        statement = sa.select(improof_answers).order_by(_a.created_at, _a.id)
        for column, value in ((_a.run_id, run_id), (_a.problem_id, problem_id), (_a.model, model)):
            if value is not None:
                statement = statement.where(column == value)
        return [_answer(r) for r in self.store._rows(statement)]

    def answers_without_verdicts(self, grader_version: str) -> list[str]:
        """Ids of the answers with no verdict of ``grader_version``."""
        graded = sa.select(_vd.answer_id).where(_vd.answer_id == _a.id, _vd.grader_version == grader_version)
        return [r[0] for r in self.store._rows(sa.select(_a.id).where(~graded.exists()).order_by(_a.created_at, _a.id))]

    # -- verdicts and overrides -----------------------------------------------------

    def put_verdicts(self, answer_id: str, grader_version: str, verdicts: Iterable[Mapping[str, Any]]) -> None:
        """The verdicts of one answer under one grader version, in one transaction; rows already there are kept."""
        now = time.time()
        with self.store.transaction():
            for v in verdicts:
                self.store._insert_ignore(improof_verdicts, {
                    "answer_id": answer_id, "sub_index": int(v["sub_index"]), "grader_version": grader_version,
                    "correct": _int(v["correct"]), "warning": v["warning"], "extracted": v.get("extracted"),
                    "parsed": dumps(v.get("parsed")), "created_at": now})  # fmt: skip

    def verdicts(self, answer_id: str, grader_version: str) -> list[VerdictRow]:
        rows = self.store._rows(sa.select(improof_verdicts).where(_vd.answer_id == answer_id,
                                                                 _vd.grader_version == grader_version)
                                .order_by(_vd.sub_index))  # fmt: skip
        return [cast(VerdictRow, dict(r) | {"correct": _bool(r["correct"]), "parsed": loads(r["parsed"])})
                for r in rows]

    def add_override(self, answer_id: str, sub_index: int, *, correct: bool | None, verified: bool, actor: str,
                     reason: str) -> None:  # fmt: skip
        self.store._execute(improof_verdict_overrides.insert(), {
            "answer_id": answer_id, "sub_index": sub_index, "correct": _int(correct), "verified": int(verified),
            "actor": actor, "reason": reason, "at": time.time()})  # fmt: skip

    def overrides(self, answer_id: str) -> list[VerdictOverride]:
        """Every override of an answer, oldest first (the audit trail)."""
        rows = self.store._rows(sa.select(improof_verdict_overrides).where(_o.answer_id == answer_id)
                                .order_by(_o.id))  # fmt: skip
        return [cast(VerdictOverride, dict(r) | {"correct": _bool(r["correct"]), "verified": bool(r["verified"])})
                for r in rows]

    # -- grades -----------------------------------------------------------------------

    def grade(self, answer_id: str, grader: str) -> GradeRow | None:
        row = self.store._first(sa.select(improof_grades).where(_g.answer_id == answer_id, _g.grader == grader))
        return _grade(row) if row else None

    def grades(self, *, answer_id: str | None = None, grader: str | None = None,
               problem_id: str | None = None) -> list[GradeRow]:  # fmt: skip
        statement = sa.select(improof_grades).order_by(_g.answer_id, _g.grader)
        if answer_id is not None:
            statement = statement.where(_g.answer_id == answer_id)
        if grader is not None:
            statement = statement.where(_g.grader == grader)
        if problem_id is not None:
            statement = statement.where(_g.answer_id.in_(sa.select(_a.id).where(_a.problem_id == problem_id)))
        return [_grade(r) for r in self.store._rows(statement)]

    def save_grade(self, values: Mapping[str, Any], expected_revision: int | None = None) -> int:
        """Insert or update one grade; returns its new revision.

        ``expected_revision`` is the revision the writer read (0: it saw no grade); a different
        one raises :class:`Conflict`. None writes whatever is there (last writer wins).
        """
        row = {k: values[k] for k in ("answer_id", "grader", "progress", "notes", "comment", "status")}
        row["indicators"], row["updated_at"] = dumps(dict(values["indicators"])), time.time()
        key = (_g.answer_id == row["answer_id"], _g.grader == row["grader"])
        changed = f"grade of {row['answer_id']} by {row['grader']} changed while saving"
        with _unique(changed), self.store.transaction():
            found = self.store._first(sa.select(_g.revision).where(*key))
            current = int(found[0]) if found else 0
            if expected_revision is not None and expected_revision != current:
                raise Conflict(f"grade of {row['answer_id']} by {row['grader']} is at revision {current}, "
                               f"not {expected_revision}")  # fmt: skip
            if found is None:
                self.store._execute(improof_grades.insert(), row | {"revision": 1})
                return 1
            done = self.store._execute(improof_grades.update().where(*key, _g.revision == current)
                                       .values(**{k: v for k, v in row.items() if k not in ("answer_id", "grader")},
                                               revision=current + 1)
                                       .execution_options(preserve_rowcount=True))  # fmt: skip
            if done.rowcount != 1:
                raise Conflict(changed)
            return current + 1

    # -- corrections: grades changed after the grader saw the model names (kept beside the blind grade) ---------

    def grade_corrections(self, *, answer_id: str | None = None, grader: str | None = None,
                          problem_id: str | None = None) -> list[GradeCorrection]:  # fmt: skip
        """Every correction, by answer, grader and revision (the oldest of each grade first)."""
        statement = sa.select(improof_grade_corrections).order_by(_c.answer_id, _c.grader, _c.revision)
        for column, value in ((_c.answer_id, answer_id), (_c.grader, grader)):
            if value is not None:
                statement = statement.where(column == value)
        if problem_id is not None:
            statement = statement.where(_c.answer_id.in_(sa.select(_a.id).where(_a.problem_id == problem_id)))
        return [_grade(r) for r in self.store._rows(statement)]

    def add_grade_correction(self, values: Mapping[str, Any], expected_revision: int) -> int:
        """Append a correction of one grade, leaving the grade itself as it is; returns the correction's revision.

        Revisions go on from the grade's: ``expected_revision`` is the newest one the writer read (the
        grade's, or its latest correction's); a different one raises :class:`Conflict`.
        """
        row = {k: values[k] for k in ("answer_id", "grader", "progress", "notes", "comment", "status")}
        row["indicators"], row["created_at"] = dumps(dict(values["indicators"])), time.time()
        changed = f"grade of {row['answer_id']} by {row['grader']} changed while saving"
        with _unique(changed), self.store.transaction():
            graded = self.store._first(sa.select(_g.revision).where(_g.answer_id == row["answer_id"],
                                                                    _g.grader == row["grader"]))  # fmt: skip
            latest = self.store._first(sa.select(sa.func.max(_c.revision)).where(
                _c.answer_id == row["answer_id"], _c.grader == row["grader"]))  # fmt: skip
            current = max(int(graded[0]) if graded else 0, int(latest[0]) if latest and latest[0] else 0)
            if expected_revision != current:
                raise Conflict(f"grade of {row['answer_id']} by {row['grader']} is at revision {current}, "
                               f"not {expected_revision}")  # fmt: skip
            self.store._execute(improof_grade_corrections.insert(), row | {"revision": current + 1})
        return current + 1


    def fingerprint(self) -> tuple[Any, ...]:
        """Counts and latest times of what the statistics read (answers, verdicts, overrides, grades and their
        corrections): equal fingerprints, equal figures."""
        parts: list[Any] = []
        for table, when in ((improof_answers, _a.created_at), (improof_verdicts, _vd.created_at),
                            (improof_verdict_overrides, _o.at), (improof_grades, _g.updated_at),
                            (improof_grade_corrections, _c.created_at)):  # fmt: skip
            parts.extend(self.store._rows(sa.select(sa.func.count(), sa.func.max(when)).select_from(table))[0])
        parts.extend(self.store._rows(sa.select(sa.func.sum(_g.revision)))[0])
        return tuple(parts)


@contextmanager
def _unique(message: str) -> Iterator[None]:
    """A unique-key violation (a concurrent writer inserted the same row first) as a :class:`Conflict`."""
    try:
        yield
    except sa.exc.IntegrityError as exc:
        if "unique" in str(exc.orig).lower() or "duplicate" in str(exc.orig).lower():
            raise Conflict(message) from exc
        raise


def _answer(row: Any) -> AnswerRow:
    return cast(AnswerRow, dict(row) | {"sub_answers": loads(row["sub_answers"]) or [],
                                        "stages": loads(row["stages"]) or []})


def _grade(row: Any) -> GradeRow:
    """A grade or correction row (a correction's ``created_at`` is its ``updated_at``)."""
    out = dict(row) | {"indicators": loads(row["indicators"]) or {}}
    if "created_at" in out:
        out["updated_at"] = out.pop("created_at")
    return cast(GradeRow, out)
