"""The Inspect task ``theorembench/improof``: IMProofBench's harness, single-turn, under ``inspect eval``.

The task runs the harness's own pieces: the problems as the store holds them, the staged conversation of
:mod:`theorembench.methods.improof.conversation` in single-turn mode (one reply per stage, the subquestions'
answers in \\boxed{}), every finished conversation recorded with :func:`~theorembench.methods.improof.answers.
record_answer` under the task's run, and scored by the harness's Inspect scorer (the weighted score of the
auto-graded subquestions). The model is the eval's: the first sample of each model sets up its conversations,
whose turns are stored under a pipeline of the settings and that model (a rerun replays them, as the harness
does), and its run.
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task

from theorembench.common.errors import UserError
from theorembench.evaluate.answers import CHECKER_VERSION
from theorembench.evaluate.inspect_record import model_name, open_task
from theorembench.methods.improof.answers import record_answer
from theorembench.methods.improof.catalog import get_problem, list_problems
from theorembench.methods.improof.config import HarnessSettings
from theorembench.methods.improof.conversation import Plan, improof_solver
from theorembench.methods.improof.harness import KIND
from theorembench.methods.improof.inspect_scorer import weighted_score_scorer
from theorembench.methods.improof.model_tiers import tier_of
from theorembench.methods.improof.problems import Problem
from theorembench.store import Store, open_store


def _problems(store: Store, problems: str | list[str] | None) -> list[Problem]:
    ids = [p.strip() for p in problems.split(",")] if isinstance(problems, str) else list(problems or [])
    ids = [p for p in dict.fromkeys(ids) if p] or [p["id"] for p in list_problems(store, status="active")]
    if not ids:
        raise UserError("theorembench/improof: no problems given (-T problems=ID,ID) and no active problems in the "
                        "store: import some (theorembench improof import) or give -T db= of a store that has them")
    return [get_problem(store, pid) for pid in ids]


def improof_task(problems: str | list[str] | None, *, db: str | None, main_tokens: int | None = None,
                 sub_tokens: int | None = None) -> Task:  # fmt: skip
    """The task over ``problems`` (ids; default every active one) of the store at ``db`` (see the module notes)."""
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.scorer import mean, scorer, stderr
    from inspect_ai.solver import solver

    store = open_store(db)
    try:
        chosen = _problems(store, problems)
        budgets = {k: v for k, v in (("main_tokens", main_tokens), ("sub_tokens", sub_tokens)) if v is not None}
        settings = HarnessSettings.from_args(mode="single-turn", tools=(), **{k: int(v) for k, v in budgets.items()})
    except BaseException:
        store.close()
        raise
    by_id = {p.id: p for p in chosen}
    conversations: dict[tuple[str, int], dict[str, Any]] = {}
    run = open_task(KIND, db=db, name=f"improof {settings.mode}", binary=False,
                    config={"settings": settings.model_dump(mode="json"), "problems": list(by_id)})  # fmt: skip
    solvers: dict[str, Any] = {}

    def conversations_of(model: str, endpoint: str) -> Any:
        """The harness's solver for ``model``: its pipeline (turns stored and replayed) and its run's answers."""
        run_id = run.run_for(store, model)

        def on_done(problem: Problem, epoch: int, result: dict[str, Any]) -> None:
            if result["complete"]:
                result["answer_id"] = record_answer(
                    store, run_id=run_id, problem_id=problem.id, version=problem.version or 1, model=model,
                    tier=tier_of(model), epoch=epoch, mode=settings.mode, main_answer=result["main_answer"],
                    sub_answers=result["sub_answers"], stages=result["stages"])  # fmt: skip
            conversations[(problem.id, epoch)] = result

        pipeline = f"{KIND}/{settings.pipeline_digest(model, endpoint)}"
        return improof_solver(Plan(store, pipeline, settings, by_id, [], [], on_done, set()))

    @solver(name="improof_single_turn")
    def stages() -> Any:
        async def solve(state: Any, generate: Any) -> Any:
            from inspect_ai.model import get_model

            model = model_name(str(state.model))
            if model not in solvers:
                solvers[model] = conversations_of(model, str(getattr(get_model().api, "base_url", None) or ""))
            return await solvers[model](state, generate)

        return solve

    weighted = weighted_score_scorer(store, conversations)
    graded = weighted()

    @scorer(metrics=[mean(), stderr()], name="improof_weighted_score")
    def improof_score() -> Any:
        async def score(state: Any, target: Any) -> Any:
            result = await graded(state, target)
            found = conversations.get((str(state.metadata["problem_id"]), state.epoch)) or {}
            result.metadata = {"status": "ok" if found.get("answer_id") else "pending", "item_id": state.sample_id,
                               "index": state.metadata["index"], "answer_id": found.get("answer_id"),
                               "checker_version": CHECKER_VERSION}  # fmt: skip
            return result

        return score

    run.closers += [store.close, weighted.close]
    samples = [Sample(id=p.id, input=p.statement, metadata={"index": i, "item_id": p.id, "problem_id": p.id,
                                                            "version": p.version, "title": p.title})
               for i, p in enumerate(chosen)]  # fmt: skip
    return Task(dataset=MemoryDataset(samples, name="improof"), solver=stages(),
                scorer=improof_score(), metadata={**run.metadata(), "mode": settings.mode})  # fmt: skip


__all__ = ["improof_task"]
