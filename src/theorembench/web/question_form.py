"""The question editor's form: read the posted fields, check each one, and turn them into a problem's content.

Subquestion rows are posted as ``sub-<i>-text``, ``sub-<i>-answer``, ``sub-<i>-kind``, ``sub-<i>-points`` and
``sub-<i>-rationale``; the numbers may have gaps (rows removed in the browser), and rows left entirely
blank are dropped. A form with bad fields keeps everything that was typed and carries one message per
field, keyed by the field's name in the re-rendered form.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from theorembench.evaluate.answers import KINDS
from theorembench.evaluate.answers.normalize import boolean, clean
from theorembench.methods.improof.problems import DIFFICULTY, slugify
from theorembench.web.render import MAX_CHARS

MAX_TITLE = 200
MAX_TAG = 60
MAX_TAGS = 20
MAX_SUBQUESTIONS = 15  # the form parser reads at most 100 fields: 15 rows of 5 plus the others fit
MAX_NOTE = 2_000
SUB_FIELDS = ("text", "answer", "kind", "points", "rationale")
_SUB_KEY = re.compile(r"^sub-(\d{1,4})-(text|answer|kind|points|rationale)$")
_INTEGER = re.compile(r"^[+-]?\d+$")
DIFFICULTY_HELP = {
    "background": "how much specialised knowledge the question needs",
    "reasoning": "how long and intricate the argument is",
    "insight": "how much a new idea or a non-obvious trick is needed",
    "compute": "how much calculation (by hand or with software) it takes",
}


@dataclass
class QuestionForm:
    """What the editor shows and posts: every field as typed, and one error message per bad field."""

    title: str = ""
    statement: str = ""
    solution: str = ""
    tags: str = ""
    difficulty: dict[str, str] = field(default_factory=lambda: {name: "" for name in DIFFICULTY})
    subquestions: list[dict[str, str]] = field(default_factory=list)
    note: str = ""
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def tag_list(self) -> list[str]:
        return list(dict.fromkeys(t.strip() for t in self.tags.split(",") if t.strip()))

    def check(self, *, draft: bool = False) -> dict[str, str]:
        """Fill :attr:`errors` (field name → message) and return it; empty when the form is good.

        ``draft``: the checks for saving a draft, which may still lack its statement, solution, ratings and the
        subquestions' texts and answers; what is typed must still be valid. The full checks apply when the
        question is sent for review (:func:`missing_for_review`)."""
        errors: dict[str, str] = {}
        if not self.title.strip():
            errors["title"] = "Give the question a title."
        elif len(self.title) > MAX_TITLE:
            errors["title"] = f"The title may have at most {MAX_TITLE} characters."
        elif not slugify(self.title):
            errors["title"] = "The title needs at least one letter or digit (a-z, 0-9): the question's id comes from it."
        for name, label in (("statement", "statement"), ("solution", "reference solution")):
            text = getattr(self, name)
            if not text.strip():
                if not draft:
                    errors[name] = f"Write the {label}."
            elif len(text) > MAX_CHARS:
                errors[name] = f"The {label} may have at most {MAX_CHARS} characters."
        tags = self.tag_list
        if len(tags) > MAX_TAGS:
            errors["tags"] = f"Use at most {MAX_TAGS} tags."
        elif any(len(t) > MAX_TAG for t in tags):
            errors["tags"] = f"A tag may have at most {MAX_TAG} characters."
        for name in DIFFICULTY:
            value = self.difficulty.get(name, "").strip()
            if value not in ("1", "2", "3", "4", "5") and not (draft and not value):
                errors[f"difficulty-{name}"] = "Choose a rating from 1 (low) to 5 (high)."
        if len(self.subquestions) > MAX_SUBQUESTIONS:
            errors["subquestions"] = f"Use at most {MAX_SUBQUESTIONS} subquestions."
        for i, sub in enumerate(self.subquestions):
            errors.update(_check_sub(i, sub, draft=draft))
        if len(self.note) > MAX_NOTE:
            errors["note"] = f"The note may have at most {MAX_NOTE} characters."
        self.errors = errors
        return errors

    def content(self, author: str | None) -> dict[str, Any]:
        """The problem content (title, statement, solution, tags, difficulty, author, subquestions) of a good form;
        a draft's leaves out the ratings not given yet."""
        subs = [{"text": s["text"].strip(), "answer": s["answer"].strip(), "kind": s["kind"],
                 "points": _number(s["points"]) or 1.0, "rationale": s["rationale"].strip()}
                for s in self.subquestions]  # fmt: skip
        return {"title": self.title.strip(), "statement": self.statement, "solution": self.solution,
                "tags": self.tag_list,
                "difficulty": {n: int(self.difficulty[n]) for n in DIFFICULTY if self.difficulty.get(n, "").strip()},
                "author": author, "subquestions": subs}  # fmt: skip


def _number(text: str) -> float | None:
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _check_sub(i: int, sub: Mapping[str, str], *, draft: bool = False) -> dict[str, str]:
    """One subquestion row's errors: text and answer needed (not yet in a draft), a known kind, points > 0, an
    answer of that kind."""
    errors: dict[str, str] = {}
    at = f"sub-{i}-"
    if not sub["text"].strip():
        if not draft:
            errors[at + "text"] = "Write the subquestion."
    elif len(sub["text"]) > MAX_CHARS:
        errors[at + "text"] = f"The subquestion may have at most {MAX_CHARS} characters."
    answer = sub["answer"].strip()
    if sub["kind"] not in KINDS:
        errors[at + "kind"] = f"Choose how the answer is checked: one of {', '.join(KINDS)}."
    if not answer:
        if not draft:
            errors[at + "answer"] = "Give the expected answer."
    elif len(answer) > 2_000:
        errors[at + "answer"] = "The expected answer may have at most 2000 characters."
    elif sub["kind"] == "integer" and not _INTEGER.match(clean(answer)):
        errors[at + "answer"] = "An integer answer must be a whole number, like 42 or -3."
    elif sub["kind"] == "boolean" and boolean(answer) is None:
        errors[at + "answer"] = "A yes/no answer must be one of: yes, no, true, false."
    points = sub["points"].strip()
    if points:
        value = _number(points)
        if value is None or value <= 0 or value > 1000:
            errors[at + "points"] = "Points must be a number greater than 0 (at most 1000)."
    if len(sub["rationale"]) > MAX_CHARS:
        errors[at + "rationale"] = f"The rationale may have at most {MAX_CHARS} characters."
    return errors


def _blank_row(row: Mapping[str, str]) -> bool:
    return not any(row[k].strip() for k in ("text", "answer", "rationale")) and row["points"].strip() in ("", "1")


def read_form(form: Mapping[str, str]) -> QuestionForm:
    """The editor's posted fields as a :class:`QuestionForm` (not yet checked); blank subquestion rows are dropped."""
    rows: dict[int, dict[str, str]] = {}
    for key, value in form.items():
        m = _SUB_KEY.match(key)
        if m:
            rows.setdefault(int(m[1]), {k: "" for k in SUB_FIELDS})[m[2]] = value
    subs = [rows[i] for i in sorted(rows) if not _blank_row(rows[i])]
    return QuestionForm(title=form.get("title", ""), statement=form.get("statement", ""),
                        solution=form.get("solution", ""), tags=form.get("tags", ""),
                        difficulty={n: form.get(f"difficulty-{n}", "") for n in DIFFICULTY},
                        subquestions=subs, note=form.get("note", ""))  # fmt: skip


def _points(value: Any) -> str:
    number = float(value if value is not None else 1)
    return str(int(number)) if number.is_integer() else str(number)


def from_payload(payload: Mapping[str, Any]) -> QuestionForm:
    """The editor prefilled with a stored version's content."""
    difficulty = payload.get("difficulty") or {}
    subs = [{"text": s.get("text", ""), "answer": str(s.get("answer", "")), "kind": s.get("kind", ""),
             "points": _points(s.get("points")), "rationale": s.get("rationale", "")}
            for s in payload.get("subquestions") or []]  # fmt: skip
    return QuestionForm(title=payload.get("title", ""), statement=payload.get("statement", ""),
                        solution=payload.get("solution", ""), tags=", ".join(payload.get("tags") or []),
                        difficulty={n: str(difficulty.get(n, "")) for n in DIFFICULTY}, subquestions=subs)  # fmt: skip


def blank_form() -> QuestionForm:
    """A new question's editor: empty fields and one empty subquestion row."""
    return QuestionForm(subquestions=[{"text": "", "answer": "", "kind": "integer", "points": "1", "rationale": ""}])


def _field_label(key: str) -> str:
    """A form field's name as the editor labels it: ``difficulty-insight`` → "the Insight rating"."""
    if key.startswith("difficulty-"):
        return f"the {key.removeprefix('difficulty-').capitalize()} rating"
    m = re.match(r"^sub-(\d+)-(\w+)$", key)
    if m:
        part = {"text": "text", "answer": "expected answer", "kind": "answer kind", "points": "points",
                "rationale": "rationale"}[m[2]]  # fmt: skip
        return f"the {part} of subquestion {int(m[1]) + 1}"
    return {"solution": "the reference solution", "subquestions": "the subquestions"}.get(key, f"the {key}")


def missing_for_review(payload: Mapping[str, Any]) -> list[str]:
    """What a stored draft lacks before it can be sent for review, named as the editor labels it (empty: ready)."""
    return [_field_label(key) for key in from_payload(payload).check()]
