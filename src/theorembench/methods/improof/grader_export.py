"""Answers for graders who grade outside the platform, blind: what ``improof export-answers`` writes.

The same answers the platform would assign (:mod:`grading_queue`: agentic, tiers 1–3 and models without a tier;
the newest per model, mode and epoch) of the chosen problems (default: every active one). Nothing names a model,
run, tier, mode or usage: an answer is known by its id alone (a hash, ``a-`` and 20 hex digits), and the answers
of a problem are listed in the order of their ids, which follows neither the model nor the tier. Written:

- ``<problem>.md`` per problem: the statement, the sample solution and each answer under its id;
- ``answers.jsonl``: the same, one answer a line (``answer_id, problem_id, version, title, main_answer``);
- ``grades_template.csv``: one row per answer with the columns ``improof grades import`` reads, the answer id
  filled in and status ``incomplete``; a grader fills in their name, the grade and the status.

Answers recorded with a problem version other than the current one carry that version and its own text.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from theorembench.common.errors import UserError
from theorembench.common.outputs import write_jsonl, write_text
from theorembench.methods.improof.catalog import get_problem, list_problems
from theorembench.methods.improof.grades import COLUMNS
from theorembench.methods.improof.grading_queue import gradable_answers, left_out_answers
from theorembench.store.db import Store


@dataclass
class GraderExport:
    paths: dict[str, Path] = field(default_factory=dict)
    answers: int = 0
    left_out: int = 0  # answers of the problems that human graders never get (tier 4, single-turn)
    problems: list[str] = field(default_factory=list)


def _markdown(problem: Any, answers: list[dict[str, Any]]) -> str:
    lines = [f"# {problem.title} ({problem.id}, version {problem.version})", "", "## Problem", "",
             problem.statement.strip(), "", "## Sample solution", "", problem.solution.strip(), ""]  # fmt: skip
    for a in answers:
        lines += [f"## Answer {a['id']}", "", (a.get("main_answer") or "(no answer submitted)").strip(), ""]
    return "\n".join(lines)


def _template(rows: list[dict[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(COLUMNS), lineterminator="\n")
    writer.writeheader()
    for r in rows:
        writer.writerow({c: "" for c in COLUMNS} | {"answer_id": r["answer_id"], "status": "incomplete"})
    return buffer.getvalue()


def export_for_graders(store: Store, out_dir: str | Path, problem_ids: Sequence[str] | None = None) -> GraderExport:
    """Write the blind answers of the problems (default: every active one) for offline graders into ``out_dir``."""
    ids = list(dict.fromkeys(problem_ids)) if problem_ids else [p["id"] for p in list_problems(store, "active")]
    if not ids:
        raise UserError("no active problems in the store, and none named: nothing to export")
    out, done = Path(out_dir), GraderExport()
    lines: list[dict[str, Any]] = []
    for pid in ids:
        answers = sorted(gradable_answers(store, get_problem(store, pid).id), key=lambda a: a["id"])
        done.left_out += len(left_out_answers(store, pid))
        if not answers:
            continue
        by_version: dict[int, list[dict[str, Any]]] = {}
        for a in answers:
            by_version.setdefault(int(a["version"]), []).append(a)
        for version, group in sorted(by_version.items()):
            problem = get_problem(store, pid, version)
            name = f"{pid}.md" if len(by_version) == 1 else f"{pid}.v{version}.md"
            done.paths[name] = write_text(out / name, _markdown(problem, group))
            lines += [{"answer_id": a["id"], "problem_id": pid, "version": version, "title": problem.title,
                       "main_answer": a.get("main_answer")} for a in group]  # fmt: skip
        done.problems.append(pid)
    if not lines:
        raise UserError(f"no answers for human graders on {', '.join(ids)} (tier 4 and single-turn answers are "
                        "scored on their subquestions only): run `theorembench improof eval` first")  # fmt: skip
    done.answers = len(lines)
    done.paths["answers.jsonl"] = write_jsonl(out / "answers.jsonl", lines)
    done.paths["grades_template.csv"] = write_text(out / "grades_template.csv", _template(lines))
    return done


__all__ = ["GraderExport", "export_for_graders"]
