"""Blind grading without HTTP: per-grader random aliases, saving grades and notes, the reveal and the freeze, flags.

A grader sees a question's answers as "Answer A", "Answer K", … under names drawn for them alone
(see :mod:`theorembench.web.aliases` for why the names and the page order reveal nothing, also about
answers added later; ``secrets.SystemRandom`` unless a test passes its own RNG). The alias → answer map
is stored in ``web_grading.answer_order``; nothing else about an answer (model, id, run, mode, stages,
usage) leaves this module in a :class:`Slot`'s public view. Grades are stored under the grader's email.

The reveal. Once every answer of the grader's is final (complete, or given up with a reason), the
page shows alias → model, to that grader only, and each answer so revealed is marked in the
assignment (``"revealed": true``); the mark stays when answers are added later. A revealed answer's
grade is frozen: a save from then on is stored as a *correction*, a new revision beside the grade
(:func:`~theorembench.methods.improof.grades.correct_grade`), which the statistics leave out and the
exports flag. So marking everything "given up" to see the names, then regrading with the names
known, changes no figure. The freeze is decided from the assignment read at the start of the save:
the names are only ever sent in a response after the reveal is committed, so any save written with
the names known starts after it and sees the mark.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass
from typing import Any

from theorembench.methods.improof import grading_queue
from theorembench.methods.improof.grades import (
    INDICATORS,
    Grade,
    StaleGrade,
    correct_grade,
    get_grade,
    grade_from_row,
    list_corrections,
    list_grades,
    save_grade,
)
from theorembench.store.db import Store
from theorembench.store.grading import GradingRepo
from theorembench.store.improof import Conflict, ImproofRepo
from theorembench.web.aliases import Drawer, first_names, in_page_order, more_names

FINAL = ("complete", "given_up")


class BadGrade(ValueError):
    """A save the grader must fix: the message names the field, never the answer."""


def gradable_answers(store: Store, problem_id: str) -> list[dict[str, Any]]:
    """A question's answers for human graders (:mod:`~theorembench.methods.improof.grading_queue`): the newest per
    (model, mode, epoch), agentic ones of tiers 1–3 (and of models without a tier), tier 1 first."""
    return grading_queue.gradable_answers(store, problem_id)


def _top(answers: list[dict[str, Any]], limit: int | None, rng: Drawer) -> list[dict[str, Any]]:
    """The first ``limit`` answers of the priority queue; where the cut falls inside a rank, a random part of it."""
    if limit is None or len(answers) <= limit:
        return answers
    if limit <= 0:
        return []
    rank = grading_queue.grading_rank
    cut = rank(answers[limit - 1])
    above = [a for a in answers[:limit] if rank(a) != cut]  # the queue is sorted by rank: these rank higher
    tied = [a for a in answers if rank(a) == cut]
    rng.shuffle(tied)
    return above + tied[: limit - len(above)]


def assign(store: Store, problem_id: str, grader_id: str, *, by: str | None = None, rng: Drawer | None = None,
           limit: int | None = None, up_to_rank: int | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """Assign a grader to a question, or refresh their assignment; returns their answer order (the page's).

    Only answers for human graders are assigned (tiers 1–3, agentic). A new assignment gives every answer a
    random alias. A refresh keeps the existing aliases (and their reveal marks) and gives the answers recorded
    since random unused aliases. ``limit`` caps the grader's answers: the highest-priority ones are taken (tier 1
    first; at random within the tier where the cap falls), and a refresh fills up to the cap the same way.
    ``up_to_rank`` leaves out the answers of a lower priority (:func:`~grading_queue.grading_rank` above it).
    """
    if limit is not None and limit < 1:
        raise BadGrade("the number of answers per grader must be at least 1")
    rng = rng or secrets.SystemRandom()
    repo = GradingRepo(store)
    answers = gradable_answers(store, problem_id)
    if up_to_rank is not None:
        answers = [a for a in answers if (grading_queue.grading_rank(a) or 0) <= up_to_rank]
    found = repo.assignment(problem_id, grader_id)
    if found is None:
        ids = [a["id"] for a in _top(answers, limit, rng)]
        rng.shuffle(ids)
        order = in_page_order([{"answer_id": a, "alias": n} for a, n in zip(ids, first_names(rng, len(ids)))])
        if repo.assign(problem_id, grader_id, order, by=by):
            return order
        found = repo.assignment(problem_id, grader_id)  # assigned meanwhile: refresh that one
    old = found["answer_order"]
    known = {e["answer_id"] for e in old}
    rows = [ImproofRepo(store).answer(a) for a in known]
    keys = {(r["model"], r["mode"], r["epoch"]) for r in rows if r}
    fresh = [a for a in answers if a["id"] not in known and (a["model"], a["mode"], a["epoch"]) not in keys]
    new = [a["id"] for a in _top(fresh, None if limit is None else max(0, limit - len(old)), rng)]
    if not new:
        return old
    rng.shuffle(new)
    names = more_names(rng, {e["alias"] for e in old}, len(new))
    order = in_page_order(old + [{"answer_id": a, "alias": n} for a, n in zip(new, names)])
    repo.set_order(problem_id, grader_id, old, order)
    return order


def author_rank(store: Store, problem_id: str, author_id: str, author: str) -> int | None:
    """Up to which priority the author of a question grades now: the highest rank (tier 1 first) with an answer the
    author has not yet graded to the end (complete or given up); None when the question has no answer to grade.

    So an author whose time is short grades the most important answers first, as the paper's tiers intend, and
    the answers of the next tier join their page once those are final (before any model is revealed)."""
    answers = gradable_answers(store, problem_id)
    if not answers:
        return None
    assignment = GradingRepo(store).assignment(problem_id, author_id)
    rows = {r["id"]: r for r in ImproofRepo(store).answers(problem_id=problem_id)}
    done = {(rows[s.answer_id]["model"], rows[s.answer_id]["mode"], rows[s.answer_id]["epoch"])
            for s in slots(store, assignment, author) if s.final}  # fmt: skip
    ranks = sorted({rank for a in answers if (rank := grading_queue.grading_rank(a)) is not None})
    for rank in ranks:
        if any((a["model"], a["mode"], a["epoch"]) not in done for a in answers
               if grading_queue.grading_rank(a) == rank):  # fmt: skip
            return rank
    return ranks[-1]


def author_assignment(store: Store, problem_id: str, author_id: str, author: str, *,
                      rng: Drawer | None = None) -> dict[str, Any] | None:  # fmt: skip
    """The author's own assignment on their question (``author``: their email), made or refreshed on each visit:
    the answers for human graders up to :func:`author_rank`, under aliases drawn for the author alone, like any
    grader's. None while the question has no answer to grade (no assignment is made)."""
    rank = author_rank(store, problem_id, author_id, author)
    repo = GradingRepo(store)
    if rank is not None:
        try:
            assign(store, problem_id, author_id, by=author_id, rng=rng, up_to_rank=rank)
        except Conflict:  # refreshed meanwhile by another request of theirs: that one's order stands
            pass
    return repo.assignment(problem_id, author_id)


@dataclass
class Slot:
    """One answer as one grader sees it. ``answer_id`` and ``model`` stay on the server (see :meth:`public`).

    ``grade`` is the grader's blind grade (the one the statistics use), ``correction`` their latest
    correction of it when there is one, and ``frozen`` whether the model was revealed to them.
    """

    alias: str
    answer_id: str
    model: str
    text: str | None
    grade: Grade | None
    correction: Grade | None = None
    frozen: bool = False

    @property
    def shown(self) -> Grade | None:
        """The newest revision: what the grading panel shows and a save must name."""
        return self.correction or self.grade

    @property
    def status(self) -> str:
        return self.shown.status if self.shown else "not started"

    @property
    def final(self) -> bool:
        return self.grade is not None and self.grade.status in FINAL

    def public(self) -> dict[str, Any]:
        """What a page may show before the reveal: the alias, the answer text, this grader's grade."""
        return {"alias": self.alias, "text": self.text, "status": self.status, "final": self.final,
                "grade": grade_view(self.shown), "frozen": self.frozen,
                "blind": grade_view(self.grade) if self.correction else None}  # fmt: skip


def grade_view(grade: Grade | None) -> dict[str, Any]:
    """A grade as the page and its JSON see it (no answer id, no grader)."""
    if grade is None:
        return {"progress": None, "indicators": {}, "comment": "", "status": "incomplete", "revision": 0}
    return {"progress": grade.progress, "indicators": dict(grade.indicators), "comment": grade.comment,
            "status": grade.status, "revision": grade.revision}  # fmt: skip


def _frozen(assignment: dict[str, Any], entry: dict[str, Any]) -> bool:
    """Whether the grader has seen the model of this entry's answer (an assignment revealed before the marks
    existed counts as revealed for every answer it held)."""
    return bool(entry.get("revealed")) or assignment["revealed_at"] is not None


def slots(store: Store, assignment: dict[str, Any] | None, grader: str) -> list[Slot]:
    """The answers of one assignment in page order, each with the grader's own grade and correction (``grader``:
    their email); none when ``assignment`` is None (not assigned)."""
    if assignment is None:
        return []
    problem_id = assignment["problem_id"]
    rows = {row["id"]: row for row in ImproofRepo(store).answers(problem_id=problem_id)}  # one query, not one each
    mine = {g.answer_id: g for g in list_grades(store, grader=grader, problem_id=problem_id)}
    fixed = {g.answer_id: g for g in list_corrections(store, grader=grader, problem_id=problem_id)}  # the newest
    out = []
    for entry in in_page_order(assignment["answer_order"]):
        row = rows.get(entry["answer_id"])
        if row is not None:
            out.append(Slot(entry["alias"], row["id"], row["model"], row["main_answer"], mine.get(row["id"]),
                            fixed.get(row["id"]), _frozen(assignment, entry)))  # fmt: skip
    return out


def all_final(found: list[Slot]) -> bool:
    return bool(found) and all(s.final for s in found)


def revealed(store: Store, assignment: dict[str, Any] | None, found: list[Slot]) -> dict[str, str] | None:
    """alias → model once all of this grader's answers are final, else None.

    The first time, the reveal is recorded with a mark on every answer, which freezes their grades
    (``found`` is updated to match); it is committed before the caller can show any name.
    """
    if assignment is None:
        return None
    if assignment["revealed_at"] is None:
        if not all_final(found):
            return None
        order = assignment["answer_order"]
        marked = [e | {"revealed": True} for e in order]
        if not GradingRepo(store).set_revealed(assignment["problem_id"], assignment["grader_id"], order, marked,
                                               time.time()):  # fmt: skip
            return None  # the answers changed meanwhile (a refresh): nothing is shown
        for slot in found:
            slot.frozen = True
    return {s.alias: s.model for s in found}


def _blank(value: str | None) -> str:
    return "" if value is None or value.strip() in ("", "None", "null") else value.strip()


def missing_for_complete(progress: str | None, indicators: dict[str, Any]) -> list[str]:
    """What a grade marked complete still lacks: ``progress`` and the names of unset indicators, in page order."""
    return (["progress"] if progress is None else []) + [n for n in INDICATORS if n not in indicators]


def save(store: Store, slot: Slot, grader: str, values: dict[str, str], *,
         open_problem: bool) -> tuple[Grade, list[str]]:  # fmt: skip
    """Save the grader's grade of one slot from the page's fields (strings): the grade itself before the reveal,
    a correction beside it after; :class:`BadGrade` or :class:`StaleGrade` (nothing written) when it cannot be.

    Returns the saved grade and what it lacks to be complete: a grade marked complete too early is saved as
    incomplete, with everything that was given, and the missing fields are returned (else the list is empty)."""
    try:
        revision = int(_blank(values.get("revision")) or "0")
        indicators = json.loads(_blank(values.get("indicators")) or "{}")
    except ValueError:
        raise BadGrade("revision must be a number and indicators a JSON object") from None
    if not isinstance(indicators, dict):
        raise BadGrade("indicators must be a JSON object")
    existing = slot.shown  # read with the slot, in this request
    progress = _blank(values.get("progress")) or None
    status = _blank(values.get("status")) or "incomplete"
    given = {k: v for k, v in indicators.items() if v not in (None, "")}
    missing = missing_for_complete(progress, given) if status == "complete" else []
    row = {"answer_id": slot.answer_id, "grader": grader, "progress": progress, "indicators": indicators,
           "comment": values.get("comment") or "", "status": "incomplete" if missing else status,
           "notes": existing.notes if existing else ""}  # fmt: skip
    try:
        grade = grade_from_row(row)
    except ValueError as exc:
        raise BadGrade(str(exc)) from None
    if grade.indicators.get("correct_result") == "na" and not open_problem:
        raise BadGrade("N/A for Correct Result is only for open problems")
    if slot.frozen:
        return correct_grade(store, grade, expected_revision=revision), missing
    return save_grade(store, grade, expected_revision=revision), missing


def current_grade(store: Store, slot: Slot, grader: str) -> dict[str, Any]:
    """The newest revision of the grader's grade of ``slot`` as stored now (its latest correction, if any)."""
    fixed = list_corrections(store, answer_id=slot.answer_id, grader=grader)
    return grade_view(fixed[-1] if fixed else get_grade(store, slot.answer_id, grader))


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
    """One assignment's progress for the admin page: answers, final ones, revealed or not, corrected grades."""
    found = slots(store, assignment, grader)
    return {"grader": grader, "answers": len(found), "final": sum(s.final for s in found),
            "revealed": assignment["revealed_at"] is not None,
            "corrections": sum(s.correction is not None for s in found)}  # fmt: skip
