"""Human grades of main answers: one per grader and answer, with optimistic locking, and import from files.

A grade holds the overall progress (0..3: none, minor, major, full), the eight indicators
(four mistakes, four achievements; each "true", "false" or "not_sure", and Correct Result
may also be "na"), the grader's notes, a comment on this answer, and a status. While the
status is ``incomplete`` anything may be missing; a ``complete`` grade needs a progress value
and all eight indicators; ``given_up`` marks an answer that cannot be meaningfully graded, and a grade
given up on the platform or in a grades file says why in its comment (grades stored before that rule
are read as they are).

Every save bumps the grade's ``revision``. A writer passes the revision it read as
``expected_revision``; if someone saved in between, :class:`StaleGrade` is raised and nothing
is written.

A grade changed after its grader saw which model wrote each answer is a *correction*
(:func:`correct_grade`): a new revision stored beside the grade, which stays as it was.
:func:`list_grades` returns the grades only (the blind ones, which the statistics use);
:func:`list_corrections` the corrections.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from theorembench.common.errors import UserError
from theorembench.common.inputs import read_rows
from theorembench.store.db import Store
from theorembench.store.improof import Conflict, ImproofRepo

MISTAKES = ("incorrect_logic", "hallucinated", "calculation", "conceptual")
ACHIEVEMENTS = ("understanding", "correct_result", "insight", "usefulness")
INDICATORS = MISTAKES + ACHIEVEMENTS
VALUES = ("true", "false", "not_sure")
NA = "na"  # only for correct_result: open-ended problems, or the answer is unknown
GRADE_STATUSES = ("incomplete", "complete", "given_up")
PROGRESS = {0: "no progress", 1: "minor progress", 2: "major progress", 3: "full solution"}
# the one set of display names of the indicators (the grading form's, App. B.4): grading, statistics, exports
INDICATOR_LABELS = {
    "incorrect_logic": "Incorrect Logic", "hallucinated": "Hallucinated", "calculation": "Calculation",
    "conceptual": "Conceptual", "understanding": "Understanding", "correct_result": "Correct Result",
    "insight": "Insight", "usefulness": "Usefulness",
}  # fmt: skip
# what each indicator means, as the grading page explains it
INDICATOR_HELP = {
    "incorrect_logic": "A step does not follow, or the argument is invalid as written.",
    "hallucinated": "Cites a theorem, paper or result that does not exist or says something else.",
    "calculation": "An arithmetic or algebraic slip.",
    "conceptual": "Misunderstands a notion of the field at a basic level.",
    "understanding": "States correctly what has to be shown or computed.",
    "correct_result": "Reaches the right final answer (N/A: open problem, answer unknown).",
    "insight": "Contains an idea or approach a mathematician would find worth noting.",
    "usefulness": "Would help someone working on or learning this problem.",
}
COLUMNS = ("answer_id", "grader", "progress", *INDICATORS, "notes", "comment", "status")
REQUIRED_COLUMNS = ("answer_id", "grader", "status")
_SPELLINGS = {"true": "true", "yes": "true", "false": "false", "no": "false", "not_sure": "not_sure",
              "not sure": "not_sure", "unsure": "not_sure", "na": "na", "n/a": "na"}  # fmt: skip


class StaleGrade(UserError):
    """The grade changed since the writer read it (optimistic locking)."""


class Grade(BaseModel):
    """One grader's grade of one answer. ``revision`` and ``updated_at`` are set by the store."""

    model_config = ConfigDict(extra="forbid")
    answer_id: str = Field(min_length=1)
    grader: str = Field(min_length=1)
    progress: int | None = Field(default=None, ge=0, le=3)
    indicators: dict[str, str] = Field(default_factory=dict)
    notes: str = ""
    comment: str = ""
    status: Literal[GRADE_STATUSES] = "incomplete"  # type: ignore[valid-type]
    revision: int = 0
    updated_at: float | None = None

    @model_validator(mode="after")
    def _check(self) -> Grade:
        for name, value in self.indicators.items():
            if name not in INDICATORS:
                raise ValueError(f"unknown indicator {name!r} (known: {', '.join(INDICATORS)})")
            allowed = VALUES + (NA,) if name == "correct_result" else VALUES
            if value not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
        if self.status == "complete":
            missing = [n for n in INDICATORS if n not in self.indicators]
            if self.progress is None or missing:
                what = (["progress"] if self.progress is None else []) + missing
                raise ValueError("a complete grade needs progress and all eight indicators; missing: "
                                 + ", ".join(what))
        return self


GIVEN_UP_REASON = "a given-up grade needs a reason: say in the comment why this answer cannot be graded"


def _message(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error["loc"])
        text = error["msg"].removeprefix("Value error, ")
        parts.append(f"{where}: {text}" if where else text)
    return "; ".join(parts)


def _grade(row: dict[str, Any]) -> Grade:
    keys = ("answer_id", "grader", "progress", "indicators", "status", "revision", "updated_at")
    return Grade(**{k: row[k] for k in keys}, notes=row["notes"] or "", comment=row["comment"] or "")


def get_grade(store: Store, answer_id: str, grader: str) -> Grade | None:
    row = ImproofRepo(store).grade(answer_id, grader)
    return _grade(row) if row else None


def list_grades(store: Store, answer_id: str | None = None, grader: str | None = None,
                problem_id: str | None = None) -> list[Grade]:  # fmt: skip
    """Grades by answer and grader, optionally only one answer's, one grader's or one problem's (no corrections)."""
    return [_grade(r) for r in ImproofRepo(store).grades(answer_id=answer_id, grader=grader, problem_id=problem_id)]


def list_corrections(store: Store, answer_id: str | None = None, grader: str | None = None,
                     problem_id: str | None = None) -> list[Grade]:  # fmt: skip
    """Corrections (grades changed after the reveal), by answer, grader and revision; the same filters."""
    repo = ImproofRepo(store)
    return [_grade(r) for r in repo.grade_corrections(answer_id=answer_id, grader=grader, problem_id=problem_id)]


def correct_grade(store: Store, grade: Grade, expected_revision: int) -> Grade:
    """Store ``grade`` as a correction of the stored grade, which is kept unchanged; returns it with its revision.

    ``expected_revision``: the newest revision the caller read (the grade's or its latest correction's);
    when another was saved meanwhile, :class:`StaleGrade` is raised and nothing is written.
    """
    repo = ImproofRepo(store)
    if repo.answer(grade.answer_id) is None:
        raise UserError(f"no answer {grade.answer_id!r} in the store")
    try:
        revision = repo.add_grade_correction(grade.model_dump(), expected_revision)
    except Conflict as exc:
        raise StaleGrade(f"{exc}: reload it and save again") from None
    return grade.model_copy(update={"revision": revision})


def save_grade(store: Store, grade: Grade, expected_revision: int | None = None) -> Grade:
    """Save a grade; returns it with its new revision.

    ``expected_revision``: the revision the caller read (0 for a grade it saw missing); when the
    stored one differs, :class:`StaleGrade` is raised. None saves over whatever is stored.
    """
    repo = ImproofRepo(store)
    if repo.answer(grade.answer_id) is None:
        raise UserError(f"no answer {grade.answer_id!r} in the store")
    try:
        revision = repo.save_grade(grade.model_dump(), expected_revision)
    except Conflict as exc:
        raise StaleGrade(f"{exc}: reload it and save again") from None
    return get_grade(store, grade.answer_id, grade.grader) or grade.model_copy(update={"revision": revision})


def _indicator(value: Any) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    key = str(value).strip().lower().replace("-", "_")
    return _SPELLINGS.get(key, _SPELLINGS.get(key.replace("_", " "), key))


def _progress(value: Any) -> Any:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, str):
        text = value.strip().removesuffix("/3")
        return int(text) if text.isdigit() else value
    return value


def grade_from_row(row: dict[str, Any]) -> Grade:
    """A grade from a flat row (CSV or JSON): indicators as their own columns, or as an ``indicators`` mapping.

    Empty cells mean "not set". Indicator values: true/false/not_sure/na (also yes/no, "not sure", n/a,
    JSON booleans). Progress: 0..3 (also "2/3"). A given-up grade needs a comment (its reason). Raises ValueError
    with what is wrong.
    """
    unknown = [k for k in row if k not in COLUMNS and k != "indicators"]
    if unknown:
        raise ValueError(f"unknown columns {', '.join(map(str, unknown))}")
    nested = row.get("indicators") or {}
    if not isinstance(nested, dict):
        raise ValueError("indicators must be a mapping of indicator names to values")
    indicators = {str(k): _indicator(v) for k, v in nested.items()}
    indicators |= {n: _indicator(row.get(n)) for n in INDICATORS if n in row}
    values = {"answer_id": str(row.get("answer_id") or "").strip(), "grader": str(row.get("grader") or "").strip(),
              "progress": _progress(row.get("progress")), "notes": row.get("notes") or "",
              "comment": row.get("comment") or "", "status": (str(row.get("status") or "").strip() or "incomplete"),
              "indicators": {k: v for k, v in indicators.items() if v is not None}}  # fmt: skip
    try:
        grade = Grade(**values)
    except ValidationError as exc:
        raise ValueError(_message(exc)) from None
    if grade.status == "given_up" and not grade.comment.strip():
        raise ValueError(GIVEN_UP_REASON)
    return grade


def import_grades(store: Store, path: str | Path) -> int:
    """Import grades from a JSON list of objects or a CSV with the grade columns; all or nothing.

    Each bad row (bad value, unknown answer, the same answer and grader twice) gets one line
    in the error; a good file overwrites the stored grades of its (answer, grader) pairs in
    one transaction. Returns the number of grades saved.
    """
    rows = read_rows(path, REQUIRED_COLUMNS)
    repo = ImproofRepo(store)
    problems: list[str] = []
    grades: list[Grade] = []
    seen: dict[tuple[str, str], str] = {}
    for where, row in rows:
        try:
            grade = grade_from_row(row)
        except ValueError as exc:
            problems.append(f"{where}: {exc}")
            continue
        key = (grade.answer_id, grade.grader)
        if key in seen:
            problems.append(f"{where}: answer {grade.answer_id} by {grade.grader} is also at {seen[key]}")
            continue
        seen[key] = where.rsplit(": ", 1)[-1]
        if repo.answer(grade.answer_id) is None:
            problems.append(f"{where}: no answer {grade.answer_id!r} in the store")
            continue
        grades.append(grade)
    if problems:
        raise UserError("\n".join(problems))
    if not grades:
        raise UserError(f"{path}: no grades")
    with store.transaction():
        for grade in grades:
            repo.save_grade(grade.model_dump(), None)
    return len(grades)
