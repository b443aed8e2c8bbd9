"""Auto-grading of subquestion answers with the answer checker, administrator overrides, weighted scores.

Each subquestion answer gets a verdict from :mod:`theorembench.evaluate.answers` (correct
True/False/None, warning level none/low/high, the extracted and parsed answer), stored under
:data:`GRADER_VERSION`, which is the checker's own ``CHECKER_VERSION``: a change to the checker
(extraction, parsing, comparison, tolerances) bumps that, and a change to how replies are
passed to it here must bump it too. Verdicts of another version are never used: a run, or
:func:`regrade`, grades every such answer again from its stored reply, and the verdicts of
older versions stay in the store for comparison.

An administrator can verify or override a verdict: overrides are appended, never changed,
and the latest one for a subquestion wins over the automatic verdict
(:func:`effective_verdicts`). Subquestions are numbered from 0.

The weighted score of an answer is Σ pᵢcᵢ / Σ pᵢ with pᵢ the subquestion's points and cᵢ = 1
when its effective verdict is correct; a verdict of None (unreadable answer, no answer, not
graded yet) counts as not correct.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from theorembench.common.errors import UserError
from theorembench.common.progress import OnCount
from theorembench.evaluate.answers import CHECKER_VERSION, AnswerChecker, Verdict
from theorembench.methods.improof.answers import get_answer
from theorembench.methods.improof.catalog import get_problem
from theorembench.store.db import Store
from theorembench.store.improof import ImproofRepo

GRADER_VERSION = f"checker-{CHECKER_VERSION}"  # the answer checker's version: a new one grades every answer again
NO_ANSWER = "no answer submitted"


def _to_row(index: int, verdict: Verdict) -> dict[str, Any]:
    parsed = {"kind": verdict.kind, "expected": verdict.expected, "answer": verdict.answer,
              "messages": verdict.messages, "source": verdict.source,
              "checker_version": verdict.checker_version}  # fmt: skip
    return {"sub_index": index, "correct": verdict.correct, "warning": verdict.warning,
            "extracted": verdict.extracted, "parsed": parsed}  # fmt: skip


def _from_row(row: dict[str, Any]) -> Verdict:
    parsed = row.get("parsed") or {}
    return Verdict(row["correct"], parsed.get("kind", "unknown"), row["warning"], list(parsed.get("messages", [])),
                   parsed.get("expected"), parsed.get("answer"), row.get("extracted"), parsed.get("source"),
                   parsed.get("checker_version", CHECKER_VERSION))  # fmt: skip


def grade_answer(store: Store, answer_id: str, checker: AnswerChecker | None = None) -> list[Verdict]:
    """The verdicts of one answer's subquestions under the current :data:`GRADER_VERSION`.

    Verdicts already stored for this version are returned as they are; otherwise each
    subquestion answer is checked (a missing one gets correct None, warning high) and stored.
    Pass an open ``checker`` to grade many answers through one worker.
    """
    version = GRADER_VERSION
    answer = get_answer(store, answer_id)
    problem = get_problem(store, answer["problem_id"], answer["version"])
    repo = ImproofRepo(store)
    stored = repo.verdicts(answer_id, version)
    if len(stored) == len(problem.subquestions):
        return [_from_row(r) for r in stored]
    own = checker is None
    checker = checker or AnswerChecker()
    try:
        verdicts = []
        for index, sub in enumerate(problem.subquestions):
            reply = answer["sub_answers"][index] if index < len(answer["sub_answers"]) else None
            if reply is None or not reply.strip():
                verdicts.append(Verdict(None, sub.kind, "high", [NO_ANSWER]))
            else:
                verdicts.append(checker.check(sub.answer, reply, sub.kind))
    finally:
        if own:
            checker.close()
    repo.put_verdicts(answer_id, version, [_to_row(i, v) for i, v in enumerate(verdicts)])
    return [_from_row(r) for r in repo.verdicts(answer_id, version)]


def regrade(store: Store, progress: OnCount | None = None) -> int:
    """Grade every answer that has no verdicts of the current :data:`GRADER_VERSION`; returns how many were graded.

    ``progress(done, total)`` is called after each answer. Answers to problems without
    subquestions have nothing to grade and are not counted.
    """
    pending = ImproofRepo(store).answers_without_verdicts(GRADER_VERSION)
    graded = 0
    if not pending:
        return 0
    with AnswerChecker() as checker:
        for done, answer_id in enumerate(pending, start=1):
            if grade_answer(store, answer_id, checker):
                graded += 1
            if progress:
                progress(done, len(pending))
    return graded


def override_verdict(store: Store, answer_id: str, sub_index: int, *, correct: bool | None, verified: bool,
                     actor: str, reason: str) -> None:  # fmt: skip
    """Append an administrator's verdict on a subquestion answer to the audit trail (``verified``: checked by hand)."""
    answer = get_answer(store, answer_id)
    n = len(get_problem(store, answer["problem_id"], answer["version"]).subquestions)
    if isinstance(sub_index, bool) or not isinstance(sub_index, int) or not 0 <= sub_index < n:
        raise UserError(f"answer {answer_id} has subquestions 0..{n - 1}, not {sub_index!r}")
    if correct not in (True, False, None):
        raise UserError(f"correct must be true, false or null, got {correct!r}")
    if not actor or not actor.strip() or not reason or not reason.strip():
        raise UserError("an override needs an actor and a reason (they are kept in the audit trail)")
    ImproofRepo(store).add_override(answer_id, sub_index, correct=correct, verified=bool(verified),
                                    actor=actor.strip(), reason=reason.strip())  # fmt: skip


def effective_verdicts(store: Store, answer_id: str) -> list[dict[str, Any]]:
    """One dict per subquestion: the automatic verdict of the current version, with the latest override applied.

    Keys: sub_index, points, kind, expected, correct, auto_correct, warning, extracted, parsed,
    grader_version, source ("override", "auto" or "ungraded": no verdict of this version yet),
    verified, and override (actor, reason, at of the winning override, or None).
    """
    answer = get_answer(store, answer_id)
    problem = get_problem(store, answer["problem_id"], answer["version"])
    repo = ImproofRepo(store)
    auto = {r["sub_index"]: r for r in repo.verdicts(answer_id, GRADER_VERSION)}
    latest = {o["sub_index"]: o for o in repo.overrides(answer_id)}  # oldest first: the last one per index wins
    out = []
    for index, sub in enumerate(problem.subquestions):
        row, over = auto.get(index), latest.get(index)
        item = {"sub_index": index, "points": sub.points, "kind": sub.kind, "expected": sub.answer,
                "auto_correct": row["correct"] if row else None, "warning": row["warning"] if row else None,
                "extracted": row["extracted"] if row else None, "parsed": row["parsed"] if row else None,
                "grader_version": GRADER_VERSION if row else None, "verified": False, "override": None}  # fmt: skip
        item["correct"], item["source"] = (row["correct"], "auto") if row else (None, "ungraded")
        if over is not None:
            item.update(correct=over["correct"], source="override", verified=over["verified"],
                        override={"actor": over["actor"], "reason": over["reason"], "at": over["at"]})  # fmt: skip
        out.append(item)
    return out


def override_history(store: Store, answer_id: str) -> list[dict[str, Any]]:
    """Every override of an answer, oldest first: the audit trail."""
    get_answer(store, answer_id)
    return ImproofRepo(store).overrides(answer_id)


def weighted_score(points: Sequence[float], correct: Sequence[bool | None]) -> float:
    """Σ pᵢcᵢ / Σ pᵢ, with cᵢ = 1 only when ``correct[i]`` is True (None counts as not correct)."""
    if len(points) != len(correct):
        raise ValueError(f"{len(points)} points but {len(correct)} verdicts")
    if not points or any(p <= 0 for p in points):
        raise ValueError("weighted score needs at least one subquestion and points > 0")
    return sum(p for p, c in zip(points, correct, strict=True) if c is True) / sum(points)


def answer_score(store: Store, answer_id: str) -> float | None:
    """The weighted score of an answer from its effective verdicts (None when the problem has no subquestions)."""
    verdicts = effective_verdicts(store, answer_id)
    if not verdicts:
        return None
    return weighted_score([v["points"] for v in verdicts], [v["correct"] for v in verdicts])
