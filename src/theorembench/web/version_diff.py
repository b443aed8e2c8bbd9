"""What changed between two versions of a question, line by line, for the review page.

:func:`version_text` writes a version's fields as plain lines under headings (title, statement, solution, each
subquestion, tags, ratings); :func:`diff_rows` compares two such texts with :mod:`difflib` and keeps the changed
lines with a little context. The rows are plain text: the template escapes them, so nothing an author wrote is
ever interpreted as HTML.
"""

from __future__ import annotations

import difflib
from typing import Any

from theorembench.methods.improof.problems import DIFFICULTY

CONTEXT = 2


def _points(value: Any) -> str:
    number = float(value if value is not None else 1)
    return str(int(number)) if number.is_integer() else str(number)


def version_text(payload: dict[str, Any]) -> list[str]:
    """A version's reviewed fields as lines, each block under a heading such as ``## Statement``."""
    lines = ["## Title", str(payload.get("title") or ""), "", "## Statement"]
    lines += str(payload.get("statement") or "").splitlines() + ["", "## Solution"]
    lines += str(payload.get("solution") or "").splitlines()
    for n, sub in enumerate(payload.get("subquestions") or [], start=1):
        lines += ["", f"## Subquestion {n}"] + str(sub.get("text") or "").splitlines()
        lines.append(f"Answer ({sub.get('kind', '')}, {_points(sub.get('points'))} point(s)): {sub.get('answer', '')}")
        if sub.get("rationale"):
            lines += ["Rationale:"] + str(sub["rationale"]).splitlines()
    lines += ["", "## Tags", ", ".join(payload.get("tags") or [])]
    ratings = payload.get("difficulty") or {}
    lines += ["", "## Ratings", ", ".join(f"{name} {ratings.get(name, '–')}" for name in DIFFICULTY)]
    return lines


def diff_rows(old: dict[str, Any], new: dict[str, Any], context: int = CONTEXT) -> list[dict[str, Any]]:
    """The changed lines from ``old`` to ``new`` with ``context`` lines around them.

    Each row: ``op`` (``same``, ``del``, ``add`` or ``gap`` for skipped unchanged lines), ``old`` and ``new`` line
    numbers (None where the line is not on that side) and ``text``. Empty when nothing changed.
    """
    a, b = version_text(old), version_text(new)
    rows: list[dict[str, Any]] = []
    for group in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_grouped_opcodes(context):
        if rows:
            rows.append({"op": "gap", "old": None, "new": None, "text": "…"})
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                rows += [{"op": "same", "old": i + 1, "new": j1 + k + 1, "text": a[i]}
                         for k, i in enumerate(range(i1, i2))]  # fmt: skip
                continue
            rows += [{"op": "del", "old": i + 1, "new": None, "text": a[i]} for i in range(i1, i2)]
            rows += [{"op": "add", "old": None, "new": j + 1, "text": b[j]} for j in range(j1, j2)]
    return rows
