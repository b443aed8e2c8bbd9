"""Blind grading without HTTP: per-grader shuffled aliases, saving grades and notes, the reveal, flags.

A grader sees a question's answers as "Answer A", "Answer B", … in an order drawn for them
alone (``secrets.SystemRandom`` unless a test passes its own RNG). The alias → answer map is
stored in ``web_grading.answer_order``; nothing else about an answer (model, id, run, mode,
stages, usage) leaves this module in a :class:`Slot`'s public view. Once every answer of the
grader's is final (complete or given up) the assignment is revealed and the page may show
alias → model, to that grader only. Grades are stored under the grader's email.
"""

from __future__ import annotations

import json
import secrets
import string
import time
from dataclasses import dataclass
from typing import Any, Protocol

from theorembench.methods.improof.grades import Grade, StaleGrade, get_grade, grade_from_row, list_grades, save_grade
from theorembench.store.db import Store
from theorembench.store.improof import Conflict, ImproofRepo
from theorembench.store.web_grading import GradingRepo

FINAL = ("complete", "given_up")


class Shuffler(Protocol):
    """What the assignment needs from a random source (``random.Random`` and ``secrets.SystemRandom`` fit)."""

    def shuffle(self, x: list[Any]) -> None: ...

    def randint(self, a: int, b: int) -> int: ...


class BadGrade(ValueError):
    """A save the grader must fix: the message names the field, never the answer."""


def alias(n: int) -> str:
    """The n-th alias (0-based): A … Z, then AA, AB, …"""
    letters = string.ascii_uppercase
    return letters[n] if n < 26 else alias(n // 26 - 1) + letters[n % 26]


def gradable_answers(store: Store, problem_id: str) -> list[dict[str, Any]]:
    """A question's answers to grade: one per (model, mode, epoch), the newest recorded."""
    latest: dict[tuple[str, str, int], dict[str, Any]] = {}
    for row in ImproofRepo(store).answers(problem_id=problem_id):
        latest[(row["model"], row["mode"], row["epoch"])] = row
    return list(latest.values())


def assign(store: Store, problem_id: str, grader_id: str, *, by: str | None = None,
           rng: Shuffler | None = None) -> list[dict[str, str]]:  # fmt: skip
    """Assign a grader to a question, or refresh their assignment; returns their answer order.

    A new assignment shuffles all answers. A refresh keeps the existing aliases and their order,
    and inserts answers recorded since at random positions under new aliases.
    """
    rng = rng or secrets.SystemRandom()
    repo = GradingRepo(store)
    answers = gradable_answers(store, problem_id)
    found = repo.assignment(problem_id, grader_id)
    if found is None:
        ids = [a["id"] for a in answers]
        rng.shuffle(ids)
        order = [{"answer_id": a, "alias": alias(k)} for k, a in enumerate(ids)]
        if repo.assign(problem_id, grader_id, order, by=by):
            return order
        found = repo.assignment(problem_id, grader_id)  # assigned meanwhile: refresh that one
    old = found["answer_order"]
    known = {e["answer_id"] for e in old}
    rows = [ImproofRepo(store).answer(a) for a in known]
    keys = {(r["model"], r["mode"], r["epoch"]) for r in rows if r}
    new = [a["id"] for a in answers if a["id"] not in known and (a["model"], a["mode"], a["epoch"]) not in keys]
    if not new:
        return old
    rng.shuffle(new)
    order = list(old)
    for k, answer_id in enumerate(new):
        order.insert(rng.randint(0, len(order)), {"answer_id": answer_id, "alias": alias(len(old) + k)})
    repo.set_order(problem_id, grader_id, old, order)
    return order


@dataclass
class Slot:
    """One answer as one grader sees it. ``answer_id`` and ``model`` stay on the server (see :meth:`public`)."""

    alias: str
    answer_id: str
    model: str
    text: str | None
    grade: Grade | None

    @property
    def status(self) -> str:
        return self.grade.status if self.grade else "not started"

    @property
    def final(self) -> bool:
        return self.grade is not None and self.grade.status in FINAL

    def public(self) -> dict[str, Any]:
        """What a page may show before the reveal: the alias, the answer text, this grader's grade."""
        return {"alias": self.alias, "text": self.text, "status": self.status, "final": self.final,
                "grade": grade_view(self.grade)}  # fmt: skip


def grade_view(grade: Grade | None) -> dict[str, Any]:
    """A grade as the page and its JSON see it (no answer id, no grader)."""
    if grade is None:
        return {"progress": None, "indicators": {}, "comment": "", "status": "incomplete", "revision": 0}
    return {"progress": grade.progress, "indicators": dict(grade.indicators), "comment": grade.comment,
            "status": grade.status, "revision": grade.revision}  # fmt: skip


def slots(store: Store, assignment: dict[str, Any] | None, grader: str) -> list[Slot]:
    """The answers of one assignment in the grader's order, each with the grader's own grade (``grader``: their
    email); none when ``assignment`` is None (not assigned)."""
    if assignment is None:
        return []
    problem_id = assignment["problem_id"]
    rows = {row["id"]: row for row in ImproofRepo(store).answers(problem_id=problem_id)}  # one query, not one each
    mine = {g.answer_id: g for g in list_grades(store, grader=grader, problem_id=problem_id)}
    out = []
    for entry in assignment["answer_order"]:
        row = rows.get(entry["answer_id"])
        if row is not None:
            out.append(Slot(entry["alias"], row["id"], row["model"], row["main_answer"], mine.get(row["id"])))
    return out


def all_final(found: list[Slot]) -> bool:
    return bool(found) and all(s.final for s in found)


def revealed(store: Store, assignment: dict[str, Any] | None, found: list[Slot]) -> dict[str, str] | None:
    """alias → model once all of this grader's answers are final (recording the reveal), else None."""
    if assignment is None:
        return None
    if assignment["revealed_at"] is None:
        if not all_final(found):
            return None
        GradingRepo(store).set_revealed(assignment["problem_id"], assignment["grader_id"], time.time())
    return {s.alias: s.model for s in found}


def _blank(value: str | None) -> str:
    return "" if value is None or value.strip() in ("", "None", "null") else value.strip()


def save(store: Store, slot: Slot, grader: str, values: dict[str, str], *, open_problem: bool) -> Grade:
    """Save the grader's grade of one slot from the page's fields (strings); :class:`BadGrade` or
    :class:`StaleGrade` (nothing written) when they cannot be saved."""
    try:
        revision = int(_blank(values.get("revision")) or "0")
        indicators = json.loads(_blank(values.get("indicators")) or "{}")
    except ValueError:
        raise BadGrade("revision must be a number and indicators a JSON object") from None
    if not isinstance(indicators, dict):
        raise BadGrade("indicators must be a JSON object")
    existing = slot.grade  # read with the slot, in this request
    row = {"answer_id": slot.answer_id, "grader": grader, "progress": _blank(values.get("progress")) or None,
           "indicators": indicators, "comment": values.get("comment") or "",
           "status": _blank(values.get("status")) or "incomplete", "notes": existing.notes if existing else ""}
    try:
        grade = grade_from_row(row)
    except ValueError as exc:
        raise BadGrade(str(exc)) from None
    if grade.indicators.get("correct_result") == "na" and not open_problem:
        raise BadGrade("N/A for Correct Result is only for open problems")
    return save_grade(store, grade, expected_revision=revision)


def current_grade(store: Store, slot: Slot, grader: str) -> dict[str, Any]:
    return grade_view(get_grade(store, slot.answer_id, grader))


def save_notes(store: Store, problem_id: str, grader_id: str, notes: str, revision: str | None) -> int:
    """Compare-and-set the grader's notes for a question; :class:`StaleGrade` when someone saved in between."""
    try:
        expected = int(_blank(revision) or "1")
    except ValueError:
        raise BadGrade("revision must be a number") from None
    try:
        return GradingRepo(store).save_notes(problem_id, grader_id, notes, expected)
    except Conflict:
        raise StaleGrade("the notes changed since they were loaded") from None


def flag(store: Store, problem_id: str, grader_id: str, found: list[Slot], alias_: str, message: str) -> int:
    """A flag for the organisers on the question, or on one answer given by its alias."""
    message = message.strip()
    if not message:
        raise BadGrade("write what the organisers should look at")
    answer_id = None
    if alias_.strip():
        match = [s for s in found if s.alias == alias_.strip()]
        if not match:
            raise BadGrade(f"there is no answer {alias_.strip()} for you on this question")
        answer_id = match[0].answer_id
    return GradingRepo(store).add_flag(problem_id, answer_id, grader_id, message)


def progress(store: Store, assignment: dict[str, Any], grader: str) -> dict[str, Any]:
    """One assignment's progress for the admin page: answers, final ones, revealed or not."""
    found = slots(store, assignment, grader)
    return {"grader": grader, "answers": len(found), "final": sum(s.final for s in found),
            "revealed": assignment["revealed_at"] is not None}  # fmt: skip
