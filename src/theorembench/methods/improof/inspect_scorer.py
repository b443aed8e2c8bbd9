"""The Inspect scorer of IMProofBench runs: each sample's weighted auto-graded score, so ``inspect view`` shows it.

A conversation that ended with an answer is auto-graded (its subquestions through the answer
checker, as :func:`~theorembench.methods.improof.autograde.grade_answer` does after the run) and
scored by its weighted score in [0, 1]; one without an answer scores 0, with the stage's error as
the explanation, as the results file counts it. Grading is idempotent: the harness's own grading
after the run finds these verdicts stored.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

from theorembench.evaluate.answers import AnswerChecker
from theorembench.methods.improof import autograde
from theorembench.store import Store

Conversations = dict[tuple[str, int], dict[str, Any]]


def weighted_score_scorer(store: Store, conversations: Conversations) -> Callable[[], Any]:
    """An Inspect scorer (registered as ``improof_weighted_score``) over the harness's finished conversations."""
    from inspect_ai.scorer import Score, mean, scorer, stderr

    lock = threading.Lock()
    holder: dict[str, AnswerChecker] = {}

    def grade(answer_id: str) -> float:
        with lock:  # one checker worker, one answer at a time
            checker = holder.setdefault("checker", AnswerChecker())
            autograde.grade_answer(store, answer_id, checker)
        return autograde.answer_score(store, answer_id) or 0.0

    @scorer(metrics=[mean(), stderr()], name="improof_weighted_score")
    def improof_weighted_score() -> Any:
        async def score(state: Any, target: Any) -> Any:
            found = conversations.get((str(state.metadata.get("problem_id", state.sample_id)), state.epoch))
            if not found or not found.get("answer_id"):
                why = next((s.get("error") for s in (found or {}).get("stages", []) if s.get("error")), None)
                return Score(value=0.0, explanation=f"no answer ({why or 'the conversation did not finish'}): "
                                                    "counts as 0")  # fmt: skip
            value = await asyncio.to_thread(grade, found["answer_id"])
            return Score(value=value, answer=str(found.get("main_answer") or "")[:2000],
                         explanation="weighted score of the auto-graded subquestions")  # fmt: skip

        return score

    def close() -> None:
        if "checker" in holder:
            holder.pop("checker").close()

    improof_weighted_score.close = close  # type: ignore[attr-defined]
    return improof_weighted_score


__all__ = ["weighted_score_scorer"]
