"""Which answers go to human graders, and in which order (§3 and App. D of the paper).

Only agentic answers of models in tiers 1–3 are graded by humans, tier 1 first: the tier says how much
an answer matters when a grader's time is short. Tier 4 (legacy baselines) and single-turn answers (the
App. I.1 ablation, scored on its subquestions only) are left out. A model Table 1 does not list has no
tier: its answers are graded after tier 3's (record the answer with a tier to place it elsewhere), so a
user's own model, such as the demo's embedded one, can still be graded. An answer recorded without a
tier takes its model's Table 1 tier (answers recorded before dated ids matched Table 1).

The order decides *which* answers a grader gets when an assignment is capped (the top of the queue), and in
which rounds a question's author gets theirs (the highest rank first, the next once those are final: see
``web/blind.py``, ``author_rank``), never where they stand on the page: names and page order stay random (see
``web/aliases.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from theorembench.methods.improof.model_tiers import HUMAN_GRADED_TIERS, grading_priority, tier_of
from theorembench.store.db import Store
from theorembench.store.improof import ImproofRepo

UNTIERED_RANK = len(HUMAN_GRADED_TIERS) + 1  # after tier 3


def answer_tier(row: Mapping[str, Any]) -> int | None:
    """The answer's tier: the one recorded with it, else its model's in Table 1 (None: the table lists none)."""
    return row["tier"] if row.get("tier") is not None else tier_of(str(row["model"]))


def grading_rank(row: Mapping[str, Any]) -> int | None:
    """1 for tier 1, 2 for tier 2, 3 for tier 3, 4 for a model without a tier; None: not for human graders."""
    if row.get("mode") != "agentic":
        return None
    tier = answer_tier(row)
    return UNTIERED_RANK if tier is None else grading_priority(tier)


def left_out_reason(row: Mapping[str, Any]) -> str | None:
    """Why an answer is not graded by humans (None when it is)."""
    if row.get("mode") != "agentic":
        return f"{row.get('mode')} answer (scored on its subquestions only)"
    if grading_rank(row) is None:
        return f"tier {answer_tier(row)} (only tiers 1-3 are graded by humans)"
    return None


def newest_attempts(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One answer per (model, mode, epoch), the newest recorded (a rerun replaces an earlier run's answer)."""
    latest: dict[tuple[str, str, int], dict[str, Any]] = {}
    for row in rows:
        latest[(row["model"], row["mode"], row["epoch"])] = dict(row)
    return list(latest.values())


def in_priority_order(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The rows for human graders, tier 1 first (oldest first within a rank); the others left out."""
    ranked = [(rank, n, dict(r)) for n, r in enumerate(rows) if (rank := grading_rank(r)) is not None]
    return [r for _rank, _n, r in sorted(ranked, key=lambda t: (t[0], t[1]))]


def gradable_answers(store: Store, problem_id: str) -> list[dict[str, Any]]:
    """A question's answers for human graders: the newest per (model, mode, epoch), agentic, tiers 1–3 and
    untiered models, in priority order."""
    return in_priority_order(newest_attempts(ImproofRepo(store).answers(problem_id=problem_id)))


def left_out_answers(store: Store, problem_id: str) -> list[dict[str, Any]]:
    """The newest answers of a question that human graders never get, each with ``left_out`` (why)."""
    rows = newest_attempts(ImproofRepo(store).answers(problem_id=problem_id))
    return [r | {"left_out": why} for r in rows if (why := left_out_reason(r)) is not None]


__all__ = ["UNTIERED_RANK", "answer_tier", "gradable_answers", "grading_rank", "in_priority_order",
           "left_out_answers", "left_out_reason", "newest_attempts"]
