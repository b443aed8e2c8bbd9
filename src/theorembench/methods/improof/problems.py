"""IMProofBench problems: the fields, the status workflow, and the checks of a problem file.

A problem file (JSON or YAML) holds one problem object or a list of them. :func:`parse_problems`
checks every field and reports each bad one on its own line, naming the file, the problem
(position and id) and the field, e.g.
``problems.yaml: problem 2 (stable-graphs): difficulty.insight: must be 1..5, got 7``.
Unknown keys are errors. ``version`` and ``updated_at`` (written by export) are accepted and ignored.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from theorembench.common.errors import UserError
from theorembench.evaluate.answers import KINDS

STATUSES = ("draft", "under_review", "approved", "active", "retired", "withdrawn")
# forward along the pipeline, back to draft from review or approval; withdrawn is reachable from any other state
TRANSITIONS: dict[str, tuple[str, ...]] = {
    "draft": ("under_review", "withdrawn"),
    "under_review": ("approved", "draft", "withdrawn"),
    "approved": ("active", "draft", "withdrawn"),
    "active": ("retired", "withdrawn"),
    "retired": ("withdrawn",),
    "withdrawn": (),
}
OPEN_PROBLEM = "open problem"
DIFFICULTY = ("background", "reasoning", "insight", "compute")
SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
CONTENT = ("title", "statement", "solution", "tags", "difficulty", "author", "subquestions")
KEYS = ("id", *CONTENT, "status", "version", "updated_at")
SUB_KEYS = ("text", "answer", "kind", "points", "rationale")

Rating = Field(ge=1, le=5)


class Difficulty(BaseModel):
    """The author's four ratings, 1 (low) to 5 (high)."""

    model_config = ConfigDict(extra="forbid")
    background: int = Rating
    reasoning: int = Rating
    insight: int = Rating
    compute: int = Rating


class Subquestion(BaseModel):
    """A follow-up question with a unique answer that the answer checker grades."""

    model_config = ConfigDict(extra="forbid")
    text: str = Field(min_length=1)
    answer: str = Field(min_length=1)
    kind: Literal[KINDS]  # type: ignore[valid-type]
    points: float = Field(default=1, gt=0)
    rationale: str = ""


class Problem(BaseModel):
    """A problem as stored: content (versioned), status (not versioned), and, when read back, its version."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(pattern=SLUG.pattern)
    title: str = Field(min_length=1)
    statement: str = Field(min_length=1)
    solution: str = Field(min_length=1)
    tags: list[str] = Field(default_factory=list)
    difficulty: Difficulty
    author: str | None = None
    status: Literal[STATUSES] = "draft"  # type: ignore[valid-type]
    subquestions: list[Subquestion] = Field(default_factory=list)
    version: int | None = None
    updated_at: float | None = None
    _status_in_file: bool = PrivateAttr(default=False)

    @property
    def status_in_file(self) -> bool:
        """Whether the file this problem was read from named its status (else it is draft by default)."""
        return self._status_in_file

    @property
    def open_problem(self) -> bool:
        return OPEN_PROBLEM in self.tags

    @property
    def points(self) -> list[float]:
        return [s.points for s in self.subquestions]

    def content(self) -> dict[str, Any]:
        """The versioned fields (no id, status, version or time): what a version row stores."""
        return self.model_dump(include=set(CONTENT), mode="json")

    def export(self) -> dict[str, Any]:
        """Every field in file order, for export."""
        data = self.model_dump(mode="json")
        for sub in data["subquestions"]:
            if float(sub["points"]).is_integer():
                sub["points"] = int(sub["points"])
        return {k: data[k] for k in KEYS}


class ProblemFileError(UserError):
    """A problem file with bad fields; ``problems`` holds one line per bad field."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


def allowed(old: str, new: str) -> bool:
    """Whether a problem may move from status ``old`` to ``new``."""
    return new in TRANSITIONS.get(old, ())


def slugify(text: str) -> str:
    """A problem id from a title: lower-case ASCII letters and digits joined by hyphens."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return "-".join(re.findall(r"[a-z0-9]+", ascii_text.lower()))[:80].strip("-")


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class _Checker:
    """Collects one line per bad field of one problem."""

    def __init__(self, where: str):
        self.where = where
        self.lines: list[str] = []

    def bad(self, field: str, message: str) -> None:
        self.lines.append(f"{self.where}: {field}: {message}")

    def text(self, data: dict, field: str, *, required: bool, name: str | None = None) -> str | None:
        name = name or field
        value = data.get(field)
        if value is None:
            if required:
                self.bad(name, "missing")
            return None
        if not isinstance(value, str):
            self.bad(name, f"must be text, got {_show(value)}")
            return None
        if required and not value.strip():
            self.bad(name, "must not be empty")
            return None
        return value

    def unknown(self, data: dict, known: tuple[str, ...], prefix: str = "") -> None:
        for key in data:
            if key not in known:
                self.bad(f"{prefix}{key}", f"unknown field (known: {', '.join(known)})")


def _check_difficulty(check: _Checker, value: Any) -> dict | None:
    if value is None:
        check.bad("difficulty", f"missing ({', '.join(DIFFICULTY)}, each 1..5)")
        return None
    if not isinstance(value, dict):
        check.bad("difficulty", f"must be a mapping of {', '.join(DIFFICULTY)} to 1..5, got {_show(value)}")
        return None
    check.unknown(value, DIFFICULTY, "difficulty.")
    out = {}
    for name in DIFFICULTY:
        rating = value.get(name)
        if rating is None:
            check.bad(f"difficulty.{name}", "missing (1..5)")
        elif isinstance(rating, bool) or not isinstance(rating, int) or not 1 <= rating <= 5:
            check.bad(f"difficulty.{name}", f"must be 1..5, got {_show(rating)}")
        else:
            out[name] = rating
    return out


def _check_answer(check: _Checker, value: Any, name: str) -> str | None:
    """The expected answer as text: YAML integers and booleans are taken as written, decimals must be quoted."""
    if value is None:
        check.bad(name, "missing")
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        check.bad(name, f"write a decimal answer as text (quoted), got {_show(value)}")
        return None
    return check.text({"answer": value}, "answer", required=True, name=name)


def _check_subquestion(check: _Checker, value: Any, n: int) -> dict | None:
    at = f"subquestions[{n}]"
    if not isinstance(value, dict):
        check.bad(at, f"must be a mapping with text, answer, kind, got {_show(value)}")
        return None
    check.unknown(value, SUB_KEYS, f"{at}.")
    sub = {"text": check.text(value, "text", required=True, name=f"{at}.text"),
           "answer": _check_answer(check, value.get("answer"), f"{at}.answer"),
           "kind": value.get("kind"), "points": value.get("points", 1),
           "rationale": check.text(value, "rationale", required=False, name=f"{at}.rationale") or ""}  # fmt: skip
    if sub["kind"] is None:
        check.bad(f"{at}.kind", f"missing (one of {', '.join(KINDS)})")
    elif sub["kind"] not in KINDS:
        check.bad(f"{at}.kind", f"must be one of {', '.join(KINDS)}, got {_show(sub['kind'])}")
    points = sub["points"]
    if isinstance(points, bool) or not isinstance(points, int | float) or not points > 0:
        check.bad(f"{at}.points", f"must be a number > 0, got {_show(points)}")
    return sub


def _check_problem(data: Any, where: str) -> tuple[dict | None, list[str]]:
    check = _Checker(where)
    if not isinstance(data, dict):
        return None, [f"{where}: must be a mapping of fields, got {_show(data)}"]
    check.unknown(data, KEYS)
    out: dict[str, Any] = {}
    for field in ("title", "statement", "solution"):
        out[field] = check.text(data, field, required=True)
    out["author"] = check.text(data, "author", required=False)
    pid = data.get("id")
    if pid is None:
        pid = slugify(out["title"] or "")
        if out["title"] and not pid:
            check.bad("id", "missing, and the title gives no id: add an id of a-z, 0-9 and hyphens")
    elif not isinstance(pid, str) or not SLUG.match(pid):
        check.bad("id", f"must be lower-case letters, digits and single hyphens, got {_show(pid)}")
    out["id"] = pid
    tags = data.get("tags", [])
    if not isinstance(tags, list):
        check.bad("tags", f"must be a list of text, got {_show(tags)}")
    else:
        for n, tag in enumerate(tags):
            if not isinstance(tag, str) or not tag.strip():
                check.bad(f"tags[{n}]", f"must be non-empty text, got {_show(tag)}")
        out["tags"] = list(dict.fromkeys(t.strip() for t in tags if isinstance(t, str) and t.strip()))
    out["difficulty"] = _check_difficulty(check, data.get("difficulty"))
    status = data.get("status", "draft")
    if status not in STATUSES:
        check.bad("status", f"must be one of {', '.join(STATUSES)}, got {_show(status)}")
    out["status"] = status
    subs = data.get("subquestions", [])
    if not isinstance(subs, list):
        check.bad("subquestions", f"must be a list, got {_show(subs)}")
    else:
        out["subquestions"] = [_check_subquestion(check, s, n) for n, s in enumerate(subs, start=1)]
    for field in ("version", "updated_at"):
        value = data.get(field)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            check.bad(field, f"must be a number, got {_show(value)}")
    return (out if not check.lines else None), check.lines


def parse_problems(data: Any, source: str) -> list[Problem]:
    """The problems of a file's parsed content, or :class:`ProblemFileError` with one line per bad field."""
    items = data if isinstance(data, list) else [data]
    if data is None or not items:
        raise ProblemFileError([f"{source}: no problems (expected a problem mapping or a list of them)"])
    lines: list[str] = []
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for n, item in enumerate(items, start=1):
        pid = item.get("id") if isinstance(item, dict) else None
        if pid is None and isinstance(item, dict) and isinstance(item.get("title"), str):
            pid = slugify(item["title"]) or None
        where = f"{source}: problem {n}" + (f" ({pid})" if isinstance(pid, str) and pid else "")
        checked, bad = _check_problem(item, where)
        lines += bad
        if checked is None:
            continue
        if checked["id"] in seen:
            lines.append(f"{where}: id: {checked['id']} is also problem {seen[checked['id']]}")
            continue
        seen[checked["id"]] = n
        problem = Problem(**checked)
        problem._status_in_file = "status" in item
        problems.append(problem)
    if lines:
        raise ProblemFileError(lines)
    return problems
