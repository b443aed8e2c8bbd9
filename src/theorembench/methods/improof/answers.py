"""Model answers to IMProofBench problems: the main answer, one answer per subquestion, and per-stage usage.

An answer's id is derived from (run, problem, version, model, epoch, mode), so recording the
same attempt twice (a resumed run) returns the same id and stores nothing new, as long as the
answers are the same; different answers under the same key are refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from theorembench.common.errors import UserError
from theorembench.store.base import content_hash, dumps
from theorembench.store.db import Store
from theorembench.store.improof import ImproofRepo

MODES = ("agentic", "single-turn")
OUTCOMES = ("submitted", "limit_exceeded", "error")


def answer_id_for(run_id: str | None, problem_id: str, version: int, model: str, epoch: int, mode: str) -> str:
    """The id of one attempt: ``a-`` and 20 hex digits of a hash of what identifies it."""
    return "a-" + content_hash(dumps([run_id, problem_id, version, model, epoch, mode]))[:20]


def _check_stages(stages: Any) -> list[dict[str, Any]]:
    if not isinstance(stages, Sequence) or isinstance(stages, str):
        raise UserError("stages must be a list with one mapping per stage")
    out = []
    for n, stage in enumerate(stages):
        if not isinstance(stage, Mapping):
            raise UserError(f"stage {n} must be a mapping, got {type(stage).__name__}")
        outcome = stage.get("outcome")
        if outcome is not None and outcome not in OUTCOMES:
            raise UserError(f"stage {n}: outcome must be one of {', '.join(OUTCOMES)}, got {outcome!r}")
        out.append(dict(stage))
    return out


def record_answer(store: Store, *, run_id: str | None, problem_id: str, version: int, model: str, tier: int | None,
                  epoch: int, mode: str, main_answer: str | None, sub_answers: Sequence[str | None],
                  stages: Sequence[Mapping[str, Any]]) -> str:  # fmt: skip
    """Store one attempt at a problem version; returns the answer id.

    ``sub_answers`` holds one entry per subquestion of that version (None where the stage
    submitted nothing); ``stages`` one mapping per stage (stage, outcome, tokens, tool calls, turns, error).
    """
    if mode not in MODES:
        raise UserError(f"unknown mode {mode!r}: use one of {', '.join(MODES)}")
    if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 0:
        raise UserError(f"epoch must be an integer >= 0, got {epoch!r}")
    repo = ImproofRepo(store)
    row = repo.version(problem_id, version)
    if row is None:
        raise UserError(f"no version {version} of problem {problem_id!r} in the store")
    n_subs = len(row["payload"].get("subquestions", []))
    subs = list(sub_answers)
    if len(subs) != n_subs or not all(s is None or isinstance(s, str) for s in subs):
        raise UserError(f"problem {problem_id} v{version} has {n_subs} subquestions: give one text (or None) each, "
                        f"got {len(subs)} entries")  # fmt: skip
    answer_id = answer_id_for(run_id, problem_id, version, model, epoch, mode)
    values = {"id": answer_id, "run_id": run_id, "problem_id": problem_id, "version": version, "model": model,
              "tier": tier, "epoch": epoch, "mode": mode, "main_answer": main_answer, "sub_answers": subs,
              "stages": _check_stages(stages)}  # fmt: skip
    if not repo.insert_answer(values):
        existing = repo.answer(answer_id)
        if existing is None or (existing["main_answer"], existing["sub_answers"]) != (main_answer, subs):
            raise UserError(f"answer {answer_id} ({model} on {problem_id} v{version}, epoch {epoch}, run {run_id}) "
                            "was recorded before with different answers")  # fmt: skip
    return answer_id


def get_answer(store: Store, answer_id: str) -> dict[str, Any]:
    """One answer as a dict (``sub_answers`` and ``stages`` decoded)."""
    found = ImproofRepo(store).answer(answer_id)
    if found is None:
        raise UserError(f"no answer {answer_id!r} in the store")
    return found


def list_answers(store: Store, run_id: str | None = None, problem_id: str | None = None,
                 model: str | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """Answers, oldest first, filtered by run, problem and model."""
    return ImproofRepo(store).answers(run_id=run_id, problem_id=problem_id, model=model)
