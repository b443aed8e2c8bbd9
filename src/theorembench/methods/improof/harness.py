"""``run_improof_eval``: evaluate a model on IMProofBench problems with Inspect AI, agentic or single-turn.

One Inspect sample per problem × epoch runs the staged conversation of :mod:`conversation`
(main question, then each subquestion once the previous stage ended) with per-stage token
budgets (:mod:`budget`), the tools of :mod:`agent_tools` in the ``theorembench`` sandbox, and
every turn stored and replayed on a rerun (:mod:`replay`). The run id is the same for every
invocation with the same settings and model, so a resumed or repeated run records the same
answers (one per problem version × epoch) instead of new ones.

Every model call goes through theorembench's :class:`~theorembench.llm.LLM` (the Inspect provider
``theorembench/<model>`` of :mod:`theorembench.llm.inspect_provider`): answered from the response cache
when made before, retried by the LLM layer, recorded in the usage ledger under the run with its cost.

A finished conversation is recorded with :func:`answers.record_answer` and auto-graded with
:func:`autograde.grade_answer`; one whose model call failed after the retries is left out
(listed as incomplete) and continued by the next run. Writes the Inspect log and
``results_<model>_<mode>_<digest>.json`` (see :mod:`results`; the digest is the run's settings', so
a run with other settings never overwrites it), which records the tools' sandbox isolation and the
run's cost.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from theorembench.common.errors import InvalidSetting
from theorembench.common.outputs import write_json
from theorembench.common.progress import OnCount
from theorembench.common.stats import Estimate
from theorembench.evaluate.answers import AnswerChecker
from theorembench.evaluate.cutoff import Selection, check_guard, cutoff_guard, select
from theorembench.evaluate.inspect_log import default_log_dir
from theorembench.evaluate.item_dates import UNKNOWN, from_timestamp
from theorembench.evaluate.result import EvalResult
from theorembench.evaluate.scorecard import scored
from theorembench.llm import LLM, ModelSpec, check_model
from theorembench.methods.improof import autograde
from theorembench.methods.improof.agent_tools import build_tools, offered_names
from theorembench.methods.improof.answers import record_answer
from theorembench.methods.improof.config import HarnessSettings
from theorembench.methods.improof.conversation import SANDBOX_TOOLS, Plan, improof_solver
from theorembench.methods.improof.harness_setup import prepare
from theorembench.methods.improof.inspect_scorer import weighted_score_scorer
from theorembench.methods.improof.model_tiers import tier_of
from theorembench.methods.improof.problems import Problem
from theorembench.methods.improof.results import build_results, results_name, run_isolation
from theorembench.sandbox import combine
from theorembench.sandbox.providers import check_kind, inspect_sandbox, require_sandbox
from theorembench.store import Store
from theorembench.store.improof import ImproofRepo

KIND = "improof.eval"


def inspect_model(llm: LLM, spec: ModelSpec, settings: HarnessSettings, *, max_retries: int,
                  timeout_s: float | None, max_connections: int | None,
                  model_args: dict[str, Any] | None = None) -> Any:  # fmt: skip
    """The Inspect model for ``spec``, every call through ``llm`` (cache, retries, ledger, prices), recorded under
    the purpose ``improof.eval.<mode>``: Table 1's and the user's generation settings; ``max_retries`` retries
    and ``timeout_s`` seconds per attempt are the LLM layer's."""
    from inspect_ai.model import GenerateConfig

    from theorembench.llm.inspect_provider import inspect_model as through_llm

    config = GenerateConfig(**{**settings.generate, "max_connections": max_connections or (1 if spec.is_local else 10)})
    return through_llm(llm, spec, purpose=f"{KIND}.{settings.mode}", config=config, retries=max_retries,
                       attempt_timeout_s=timeout_s, model_args=model_args)  # fmt: skip


def run_improof_eval(store: Store, model: str, *, problem_ids: Sequence[str] | None = None,
                     tools: Sequence[str] | str | None = None, main_tokens: int | None = None,
                     sub_tokens: int | None = None, epochs: int = 1, mode: str = "agentic",
                     out_dir: str | Path = Path("improof_eval"), log_dir: str | Path | None = None,
                     progress: OnCount | None = None, search_provider: str | None = None,
                     tool_timeout_s: float | None = None, tool_memory_mb: int | None = None,
                     max_malformed: int | None = None, max_turns: int | None = None,
                     generate: dict[str, Any] | None = None,
                     max_retries: int = 3, timeout_s: float | None = None, max_connections: int | None = None,
                     max_samples: int | None = None, base_url: str | None = None, api_key: str | None = None,
                     model_args: dict[str, Any] | None = None, paper_settings: bool = False,
                     wording: str | None = None, hosted_tools: Sequence[str] | str | None = None,
                     over_budget_answer: str | None = None,
                     accept_weak_isolation: bool | None = None, cutoff_guard_mode: str | None = None,
                     models_file: Path | None = None, sandbox: str | None = None) -> EvalResult:  # fmt: skip
    """Run (or resume) the evaluation of ``model`` on the problems (default: every active one).

    The harness settings left None (``main_tokens``, ``sub_tokens``, ``tool_timeout_s``, ``tool_memory_mb``,
    ``max_malformed``, ``max_turns``) take :class:`HarnessSettings`' values, the paper's.
    ``progress(done, total)`` is called as conversations finish. ``generate`` adds Inspect
    ``GenerateConfig`` fields over Table 1's for the model. Model calls go through the LLM layer, which
    retries a failed one ``max_retries`` times (``timeout_s`` bounds each attempt) and answers a call
    made before from the cache; ``tool_timeout_s``/``tool_memory_mb`` bound each tool call (E.1).
    ``model_args`` go to Inspect's provider (e.g. ``{"responses_api": True}``, ``{"stream": True}``).
    An agentic run with python, bash or sage refuses to start below full isolation unless
    ``accept_weak_isolation`` (or the sandbox's setting) accepts it; the isolation used is recorded.
    ``sandbox`` (theorembench, the default; docker; k8s) is where the tools run (:mod:`theorembench.sandbox.providers`).
    A model id is found in Table 1 as a dated id or an alias (``openai/gpt-5-2025-08-07``, ``grok/grok-4``), which
    gives its tier and parameters; ``paper_settings`` refuses a model Table 1 does not list, and any change to its
    parameters, the budgets or the tool limits. ``wording`` ("ours" or "paper": App. H's prompts and tool names),
    ``hosted_tools`` (single-turn: the provider's own web_search, code_execution; Table 2) and
    ``over_budget_answer`` ("keep" or "discard" an answer in the call that passes a budget) are harness settings.
    The search tool is left out, with a note in the results, when the store holds no papers to search.
    ``cutoff_guard_mode`` (exclude, flag, off; None: flag) is the contamination guard
    (:mod:`theorembench.evaluate.cutoff`), by the date each problem's version was written; the results' ``cutoff``
    says which problems counted.
    """
    check_guard(cutoff_guard_mode)
    spec = check_model(model, base_url=base_url, api_key=api_key)
    given = {"main_tokens": main_tokens, "sub_tokens": sub_tokens, "tool_timeout_s": tool_timeout_s,
             "tool_memory_mb": tool_memory_mb, "max_malformed": max_malformed, "max_turns": max_turns,
             "wording": wording, "hosted_tools": hosted_tools, "over_budget_answer": over_budget_answer}
    ready = prepare(store, spec, problem_ids, tools=tools, mode=mode, epochs=epochs, search_provider=search_provider,
                    generate=generate, given=given, paper_settings=paper_settings)  # fmt: skip
    settings, problems = ready.settings, ready.problems
    selection = _selection(store, cutoff_guard_mode, spec.name, models_file, problems)
    problems = [p for p in problems if selection.keeps(p.id)]
    if not problems:
        raise InvalidSetting("cutoff_guard", template=f"no problem was written after {spec.name}'s training-data "
                             f"cutoff {selection.guard.cutoff}: nothing to evaluate ({{setting}} flag evaluates every "
                             "problem and reports both sides)")  # fmt: skip
    isolation = tool_isolation(settings, accept_weak_isolation, sandbox)  # before any work: a refusal costs nothing
    tool_list = build_tools(settings, search_index=ready.search_index, model_provider=spec.provider)
    tier = tier_of(spec.name)
    digest = settings.pipeline_digest(spec.name, spec.endpoint)
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
    llm = LLM(store, run_id=run_id)
    try:
        model_obj = inspect_model(llm, spec, settings, max_retries=max_retries, timeout_s=timeout_s,
                                  max_connections=max_connections, model_args=model_args)  # fmt: skip
        scorer = weighted_score_scorer(store, conversations)
        try:
            log = _run_inspect(plan, problems, model_obj, settings, epochs=epochs, log_dir=log_dir,
                               max_samples=max_samples, sandboxed=isolation.get("used", True),
                               accept_weak_isolation=isolation.get("weak_isolation_accepted"), scorer=scorer(),
                               sandbox=sandbox)  # fmt: skip
        finally:
            scorer.close()
    except BaseException:
        store.set_run_status(run_id, "interrupted")
        raise
    answer_ids = [c["answer_id"] for c in conversations.values() if c.get("answer_id")]
    doc = _results(store, llm, spec, settings, problems, conversations, answer_ids, run_id=run_id, tier=tier,
                   epochs=epochs, pipeline=pipeline, log=log, isolation=isolation)  # fmt: skip
    doc["paper_settings"] = paper_settings
    doc["transport"] = {"max_retries": max_retries, "timeout_s": timeout_s, "max_samples": max_samples,
                        "max_connections": max_connections}  # how calls travelled: not in the settings digest
    doc["notes"] = ready.notes
    doc["cutoff"] = selection.block({p["problem_id"]: p["mean_weighted_score"] for p in doc["problems"]},
                                    binary=False)  # fmt: skip
    path = write_json(Path(out_dir) / results_name(spec.name, settings.mode, digest), doc)
    incomplete = doc["summary"]["incomplete"] + (total - len(conversations))
    store.set_run_status(run_id, "finished" if incomplete == 0 else "incomplete",
                         doc["summary"] | {"isolation": doc["isolation"]})  # fmt: skip
    calls = doc["usage"]["model_calls"]
    return scored(store, EvalResult(KIND, run_id, doc, path, log, Estimate.from_dict(doc["summary"]["score"]),
                      calls_made=llm.calls_made, cache_hits=calls["cached"], incomplete=incomplete,
                      detail={"answer_ids": answer_ids, "cutoff": doc["cutoff"]}))  # fmt: skip


def _selection(store: Store, mode: str | None, model: str, models_file: Path | None,
               problems: list[Problem]) -> Selection:  # fmt: skip
    """The guard's split of the problems by when the version asked was written (problems are not papers)."""
    guard = cutoff_guard(mode, model, models_file=models_file)
    repo = ImproofRepo(store)
    dates = {}
    for p in problems if guard.mode != "off" else []:
        row = repo.version(p.id, p.version)
        dates[p.id] = from_timestamp(row["created_at"], "problem version") if row else UNKNOWN
    return select(guard, [p.id for p in problems], dates)


def _results(store: Store, llm: LLM, spec: ModelSpec, settings: HarnessSettings, problems: list[Problem],
             conversations: dict[tuple[str, int], dict[str, Any]], answer_ids: list[str], *, run_id: str,
             tier: int | None, epochs: int, pipeline: str, log: Path | None,
             isolation: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    """Every answer auto-graded, then the results document with what the run paid (from the ledger)."""
    if answer_ids:
        with AnswerChecker() as checker:
            for aid in answer_ids:
                autograde.grade_answer(store, aid, checker)
    doc = build_results(store, run_id=run_id, model=spec.name, endpoint=spec.endpoint, tier=tier,
                        settings=settings.model_dump(mode="json"), problems=problems, conversations=conversations,
                        epochs=epochs, pipeline=pipeline, log=str(log) if log else None,
                        isolation=combine([run_isolation(store, run_id), isolation]))  # fmt: skip
    doc["usage"]["model_calls"] = model_calls(store, llm, run_id, spec)
    doc["summary"]["cost_usd"] = doc["usage"]["model_calls"]["cost_usd"]
    return doc


def model_calls(store: Store, llm: LLM, run_id: str, spec: ModelSpec) -> dict[str, Any]:
    """The model calls the run paid for, over all its invocations (the ledger's rows under the run), and their cost
    (None when the price table has no price for the model); ``cached``: this invocation's answers from the cache."""
    paid = store.usage(run_id)
    priced = llm.prices.lookup(spec.name) is not None
    return {"calls": int(paid["calls"]), "failed": int(paid["failed"]), "cached": llm.cache_hits,
            "prompt_tokens": int(paid["prompt_tokens"]), "completion_tokens": int(paid["completion_tokens"]),
            "cost_usd": float(paid["cost_usd"]) if priced else None}  # fmt: skip


def tool_isolation(settings: HarnessSettings, accept_weak_isolation: bool | None,
                   sandbox: str | None = None) -> dict[str, Any]:  # fmt: skip
    """The isolation record of the run's tools in ``sandbox`` (theorembench, docker, k8s); a one-line SandboxError
    when it is not available, or when they would run below full isolation without acceptance. Single-turn runs and
    runs without python, bash or sage run no code."""
    check_kind(sandbox)
    if settings.mode != "agentic" or not set(settings.tools) & set(SANDBOX_TOOLS):
        return {"used": False, "reason": "single-turn: no tools" if settings.mode != "agentic" else "no code tools"}
    return require_sandbox(sandbox, accept_weak_isolation, purpose="IMProofBench's python, bash and sage tools")


def _run_inspect(plan: Plan, problems: list[Problem], model: Any, settings: HarnessSettings, *, epochs: int,
                 log_dir: str | Path | None, max_samples: int | None, sandboxed: bool = True,
                 accept_weak_isolation: bool | None = None, scorer: Any = None,
                 sandbox: str | None = None) -> Path | None:  # fmt: skip
    """Run the Inspect task; returns the log's path. A sample that raised (a bug, not a model failure) raises here.
    Without code tools (``sandboxed`` False) the task has no sandbox, so none is started or checked."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample

    samples = [Sample(id=p.id, input=p.statement, metadata={"problem_id": p.id, "version": p.version,
                                                            "title": p.title}) for p in problems]  # fmt: skip
    where = inspect_sandbox(sandbox, timeout_s=settings.tool_timeout_s, memory_mb=settings.tool_memory_mb,
                            accept_weak_isolation=accept_weak_isolation) if sandboxed else None  # fmt: skip
    task = Task(dataset=samples, solver=improof_solver(plan), epochs=epochs, scorer=scorer, sandbox=where,
                name=f"improof_{settings.mode.replace('-', '_')}",
                metadata={"pipeline": plan.pipeline, "mode": settings.mode})  # fmt: skip
    [log] = inspect_eval(task, model=model, log_dir=str(log_dir or default_log_dir()), display="none",
                         max_samples=max_samples, score=scorer is not None)  # fmt: skip
    if log.status == "error" or log.error:
        raise RuntimeError(f"the IMProofBench harness failed: {log.error.message if log.error else log.status}")
    return Path(log.location) if log.location else None


__all__ = ["KIND", "inspect_model", "model_calls", "run_improof_eval", "tool_isolation"]
