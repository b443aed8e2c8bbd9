"""``run_improof_eval``: evaluate a model on IMProofBench problems with Inspect AI, agentic or single-turn.

One Inspect sample per problem × epoch runs the staged conversation of :mod:`conversation`
(main question, then each subquestion once the previous stage ended) with per-stage token
budgets (:mod:`budget`), the tools of :mod:`agent_tools` in the ``theorembench`` sandbox, and
every turn stored and replayed on a rerun (:mod:`replay`). The run id is the same for every
invocation with the same settings and model, so a resumed or repeated run records the same
answers (one per problem version × epoch) instead of new ones.

A finished conversation is recorded with :func:`answers.record_answer` and auto-graded with
:func:`autograde.grade_answer`; one whose model call failed after Inspect's retries is left out
(listed as incomplete) and continued by the next run. Writes the Inspect log and
``results_<model>_<mode>.json`` (see :mod:`results`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from theorembench.common.errors import UserError
from theorembench.common.outputs import write_json
from theorembench.evaluate.answers import AnswerChecker
from theorembench.evaluate.inspect_log import default_log_dir
from theorembench.llm import ModelSpec, check_model
from theorembench.llm.backends.inspect_backend import SDK_RETRY_ARG
from theorembench.methods.improof import autograde
from theorembench.methods.improof.agent_tools import build_tools, offered_names
from theorembench.methods.improof.answers import record_answer
from theorembench.methods.improof.catalog import get_problem, list_problems
from theorembench.methods.improof.config import HarnessSettings, check_settings, default_tools
from theorembench.methods.improof.conversation import Plan, improof_solver
from theorembench.methods.improof.problems import Problem
from theorembench.methods.improof.results import build_results, safe_name
from theorembench.methods.improof.search import ensure_index
from theorembench.methods.improof.tiers import generation_params, tier_of
from theorembench.store import Store

KIND = "improof.eval"


@dataclass
class ImproofEvalResult:
    results: dict[str, Any]
    path: Path
    log: Path | None
    run_id: str
    answer_ids: list[str] = field(default_factory=list)
    incomplete: int = 0


def _problems(store: Store, problem_ids: Sequence[str] | None) -> list[Problem]:
    if problem_ids:
        return [get_problem(store, pid) for pid in dict.fromkeys(problem_ids)]
    active = [p["id"] for p in list_problems(store, status="active")]
    if not active:
        raise UserError("no active problems in the store: import some (theorembench improof import) or name them "
                        "with --problem")  # fmt: skip
    return [get_problem(store, pid) for pid in active]


def _check_generate(params: dict[str, Any]) -> None:
    from inspect_ai.model import GenerateConfig
    from pydantic import ValidationError

    try:
        GenerateConfig(**params)
    except (ValidationError, TypeError) as exc:
        raise UserError(f"generation settings {sorted(params)}: {str(exc).splitlines()[0]}") from None


def inspect_model(spec: ModelSpec, settings: HarnessSettings, *, max_retries: int, timeout_s: float | None,
                  max_connections: int | None, model_args: dict[str, Any] | None = None) -> Any:  # fmt: skip
    """The Inspect model for ``spec`` (not memoized): Table 1's and the user's generation settings, bounded retries."""
    from inspect_ai.model import GenerateConfig, get_model

    base_url, api_key = spec.base_url, spec.api_key
    if spec.is_local:
        from theorembench.llm.local import ensure_local

        base_url, api_key = base_url or ensure_local(spec.model), api_key or "local"
    config = GenerateConfig(**{**settings.generate, "max_retries": max_retries,
                               "timeout": int(timeout_s) if timeout_s else None,
                               "max_connections": max_connections or (1 if spec.is_local else 10)})  # fmt: skip
    # an SDK client that would retry on its own is told not to: the retries are Inspect's (max_retries)
    args: dict[str, Any] = {"max_retries": 0} if spec.provider in SDK_RETRY_ARG else {}
    args.update(model_args or {})
    return get_model(spec.inspect_name, base_url=base_url, api_key=api_key, config=config, memoize=False, **args)


def run_improof_eval(store: Store, model: str, *, problem_ids: Sequence[str] | None = None,
                     tools: Sequence[str] | str | None = None, main_tokens: int = 300_000, sub_tokens: int = 100_000,
                     epochs: int = 1, mode: str = "agentic", out_dir: str | Path = Path("improof_eval"),
                     log_dir: str | Path | None = None, progress: Callable[[int, int], None] | None = None,
                     search_provider: str | None = None, tool_timeout_s: float = 900.0, tool_memory_mb: int = 8192,
                     max_malformed: int = 3, max_turns: int = 200, generate: dict[str, Any] | None = None,
                     max_retries: int = 3, timeout_s: float | None = None, max_connections: int | None = None,
                     max_samples: int | None = None, base_url: str | None = None, api_key: str | None = None,
                     model_args: dict[str, Any] | None = None) -> ImproofEvalResult:  # fmt: skip
    """Run (or resume) the evaluation of ``model`` on the problems (default: every active one).

    ``progress(done, total)`` is called as conversations finish. ``generate`` adds Inspect
    ``GenerateConfig`` fields over Table 1's for the model. Model calls are retried by Inspect
    ``max_retries`` times; ``tool_timeout_s``/``tool_memory_mb`` bound each tool call (E.1).
    ``model_args`` go to Inspect's model (e.g. ``{"responses_api": True}``, ``{"stream": True}``).
    """
    spec = check_model(model, base_url=base_url, api_key=api_key)
    gen = {**generation_params(spec.name), **(generate or {})}
    _check_generate(gen)
    settings = check_settings(mode=mode, tools=default_tools() if tools is None else tools, main_tokens=main_tokens,
                              sub_tokens=sub_tokens, epochs=epochs, tool_timeout_s=tool_timeout_s,
                              tool_memory_mb=tool_memory_mb, max_malformed=max_malformed, max_turns=max_turns,
                              search_provider=search_provider, generate=gen)  # fmt: skip
    problems = _problems(store, problem_ids)
    index = ensure_index(store) if "search" in settings.tools and not search_provider else None
    tool_list = build_tools(settings, search_index=index, model_provider=spec.provider)
    tier = tier_of(spec.name)
    digest = settings.digest(spec.name, spec.endpoint)
    pipeline = f"{KIND}/{digest}"
    found = store.latest_run(KIND, digest)
    run_id = found["id"] if found is not None else store.create_run(
        KIND, digest, name=f"improof {settings.mode}", model=spec.name,
        config={"settings": settings.model_dump(mode="json"), "endpoint": spec.endpoint})  # fmt: skip
    store.set_run_status(run_id, "running")
    conversations: dict[tuple[str, int], dict[str, Any]] = {}
    total = len(problems) * epochs
    if progress is not None:
        progress(0, total)

    def on_done(problem: Problem, epoch: int, result: dict[str, Any]) -> None:
        if result["complete"]:
            result["answer_id"] = record_answer(
                store, run_id=run_id, problem_id=problem.id, version=problem.version or 1, model=spec.name, tier=tier,
                epoch=epoch, mode=settings.mode, main_answer=result["main_answer"], sub_answers=result["sub_answers"],
                stages=result["stages"])  # fmt: skip
        conversations[(problem.id, epoch)] = result
        if progress is not None:
            progress(len(conversations), total)

    from inspect_ai.tool import ToolDef

    plan = Plan(store, pipeline, settings, {p.id: p for p in problems}, tool_list, offered_names(settings), on_done,
                {ToolDef(t).name for t in tool_list})  # fmt: skip
    try:
        model_obj = inspect_model(spec, settings, max_retries=max_retries, timeout_s=timeout_s,
                                  max_connections=max_connections, model_args=model_args)  # fmt: skip
        log = _run_inspect(plan, problems, model_obj, settings, epochs=epochs, log_dir=log_dir,
                           max_samples=max_samples)  # fmt: skip
    except BaseException:
        store.set_run_status(run_id, "interrupted")
        raise
    answer_ids = [c["answer_id"] for c in conversations.values() if c.get("answer_id")]
    if answer_ids:
        with AnswerChecker() as checker:
            for aid in answer_ids:
                autograde.grade_answer(store, aid, checker)
    doc = build_results(store, run_id=run_id, model=spec.name, endpoint=spec.endpoint, tier=tier,
                        settings=settings.model_dump(mode="json"), problems=problems, conversations=conversations,
                        epochs=epochs, pipeline=pipeline, log=str(log) if log else None)  # fmt: skip
    path = write_json(Path(out_dir) / f"results_{safe_name(spec.name)}_{settings.mode}.json", doc)
    incomplete = doc["summary"]["incomplete"] + (total - len(conversations))
    store.set_run_status(run_id, "finished" if incomplete == 0 else "incomplete", doc["summary"])
    return ImproofEvalResult(doc, path, log, run_id, answer_ids, incomplete)


def _run_inspect(plan: Plan, problems: list[Problem], model: Any, settings: HarnessSettings, *, epochs: int,
                 log_dir: str | Path | None, max_samples: int | None) -> Path | None:  # fmt: skip
    """Run the Inspect task; returns the log's path. A sample that raised (a bug, not a model failure) raises here."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample

    from theorembench.sandbox.inspect_env import InspectSandboxConfig

    samples = [Sample(id=p.id, input=p.statement, metadata={"problem_id": p.id, "version": p.version,
                                                            "title": p.title}) for p in problems]  # fmt: skip
    sandbox = InspectSandboxConfig(timeout_s=settings.tool_timeout_s, memory_mb=settings.tool_memory_mb)
    task = Task(dataset=samples, solver=improof_solver(plan), epochs=epochs, sandbox=("theorembench", sandbox),
                name=f"improof_{settings.mode.replace('-', '_')}",
                metadata={"pipeline": plan.pipeline, "mode": settings.mode})  # fmt: skip
    [log] = inspect_eval(task, model=model, log_dir=str(log_dir or default_log_dir()), display="none",
                         max_samples=max_samples, score=False)  # fmt: skip
    if log.status == "error" or log.error:
        raise RuntimeError(f"the IMProofBench harness failed: {log.error.message if log.error else log.status}")
    return Path(log.location) if log.location else None


__all__ = ["KIND", "ImproofEvalResult", "inspect_model", "run_improof_eval"]
