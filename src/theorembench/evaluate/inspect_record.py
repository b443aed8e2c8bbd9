"""theorembench's Inspect tasks in the store: every finished ``inspect eval`` of one becomes a run.

A task of :mod:`theorembench.suite.inspect_tasks` opens a :class:`TaskRun` (:func:`open_task`): the run kind
of its method (``eval.mcq``, ``eval.hybrid``, ``eternal.eval``, ``improof.eval``), the store it writes to and
what closes its resources; the task's metadata carries its token. When Inspect ends the task, the hook
registered here (:func:`ensure_hook`, once per process, when the first such task is made) reads the task's log,
the one ``inspect view`` shows, turns each logged sample back into the core's
:class:`~theorembench.evaluate.samples.Scored` and stores them as the run's results, with the run's headline
:class:`~theorembench.common.stats.Estimate` in its summary: ``theorembench store runs`` lists it as it lists
the runs of ``theorembench eval``. A sample Inspect logged as errored (its model call failed) counts as not
correct, under ``errors``, as the core's failure rule counts a call refused for good.

:func:`score_of` is the other direction: the Inspect ``Score`` of a sample the method's own scoring judged, in
the shape :func:`~theorembench.evaluate.samples.log_samples` writes (``C``/``I``, or the graded value).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from theorembench.evaluate.samples import Sample, Scored, counts, headline
from theorembench.store import Store, open_store

META = "theorembench"  # the key of the task's metadata that holds its token, kind and store
SIGNATURE = "inspect/{eval_id}"  # a run's signature: never one of the commands' own, so no resume mixes them


def score_of(scored: Scored, *, binary: bool = True, metadata: dict[str, Any] | None = None) -> Any:
    """The Inspect ``Score`` of one judged sample: ``C``/``I`` (or the value in [0, 1] when not ``binary``), the
    extracted answer, the explanation, and the sample's status (ok, unparsed) with ``metadata`` beside it."""
    from inspect_ai.scorer import CORRECT, INCORRECT, Score

    value: Any = (CORRECT if scored.correct else INCORRECT) if binary else scored.value
    return Score(value=value, answer=scored.answer or "", explanation=scored.error or scored.explanation,
                 metadata={"status": scored.status, **(metadata or {})})  # fmt: skip


@dataclass
class TaskRun:
    """One Inspect task of ours: where its run goes and what it holds open until the task ends."""

    kind: str
    db: str | None  # a SQLite path or PostgreSQL URL; None: the default store
    name: str  # the run's name: the items file or dataset it evaluates
    config: dict[str, Any]
    binary: bool = True  # right/wrong samples (a Wilson interval), else scores in [0, 1]
    closers: list[Callable[[], None]] = field(default_factory=list)
    runs: dict[str, str] = field(default_factory=dict)  # model -> run id, once made
    token: str = field(default_factory=lambda: uuid.uuid4().hex)

    def metadata(self) -> dict[str, Any]:
        """What the task's metadata carries (and the log keeps): the token the hook finds this by."""
        return {META: {"token": self.token, "kind": self.kind, "db": self.db}}

    def run_for(self, store: Store, model: str, eval_id: str | None = None) -> str:
        """The run of ``model`` (made at its first use: a task that records as it goes, IMProofBench's answers)."""
        if model not in self.runs:
            self.runs[model] = store.create_run(self.kind, SIGNATURE.format(eval_id=eval_id or self.token),
                                                name=self.name, model=model,
                                                config={**self.config, "via": "inspect"})  # fmt: skip
        return self.runs[model]

    def close(self) -> None:
        while self.closers:
            self.closers.pop()()


_OPEN: dict[str, TaskRun] = {}
_HOOKED: list[bool] = []


def open_task(kind: str, *, db: str | None, name: str, config: dict[str, Any], binary: bool = True) -> TaskRun:
    """A task's run, recorded in the store when Inspect ends the task (the hook is registered on the first call)."""
    ensure_hook()
    task_run = TaskRun(kind, db, name, config, binary)
    _OPEN[task_run.token] = task_run
    return task_run


def model_name(log_model: str) -> str:
    """The model as the store names it: Inspect's name, without our provider's prefix (llm/inspect_provider)."""
    return log_model.removeprefix("theorembench/")


def _value(score: Any) -> float:
    value = score.value
    if value in ("C", True):
        return 1.0
    if value in ("I", False, "N", None):
        return 0.0
    try:
        return min(1.0, max(0.0, float(value)))
    except (TypeError, ValueError):
        return 0.0


def _scored(sample: Any, position: int) -> Scored:
    """A logged sample as the core's result: an errored one is an error (not correct), a scored one as scored."""
    meta = sample.metadata or {}
    at = Sample(int(meta.get("index", position)), str(meta.get("item_id", sample.id)), int(sample.epoch) - 1)
    target = sample.target if isinstance(sample.target, str) else ",".join(sample.target)
    score = next(iter(sample.scores.values())) if sample.scores else None
    if sample.error is not None:  # the model call (or the sample) failed: counts, as not correct
        return Scored(at, "error", 0.0, target, error=sample.error.message, explanation="counts as not correct")
    if score is None:  # run with --no-score: not correct here, scored by a later `inspect score`
        return Scored(at, "pending", 0.0, target, error="not scored", explanation="counts as not correct")
    status = (score.metadata or {}).get("status", "ok")
    return Scored(at, status, _value(score), target, answer=score.answer, explanation=score.explanation or "",
                  detail={"metadata": score.metadata or {}})  # fmt: skip


def record_log(store: Store, task_run: TaskRun, log: Any) -> str:
    """Store the ended task's samples as its run's results, and the headline in the run's summary; the run id."""
    samples = log.samples
    if samples is None and log.location:  # an eval set's hooks see the header only: read the log itself
        from inspect_ai.log import read_eval_log

        samples = read_eval_log(log.location).samples
    scored = [_scored(s, i) for i, s in enumerate(samples or [])]
    run_id = task_run.run_for(store, model_name(log.eval.model), log.eval.eval_id)
    for s in scored:
        store.put_result(run_id, s.sample.index, s.sample.epoch, item_id=s.sample.id, status=s.status,
                         record={"value": s.value, "explanation": s.explanation, "error": s.error, **s.detail},
                         answer=s.answer, correct_label=s.target, is_correct=s.correct if s.answered else False,
                         error=s.error)  # fmt: skip
    est = headline(scored, binary=task_run.binary)
    summary = {"score": est.to_dict(), "statuses": counts(scored), "errors": est.errors, "samples": len(scored),
               "log": log.location, "inspect": {"task": log.eval.task, "eval_id": log.eval.eval_id,
                                                "status": log.status, "task_args": log.eval.task_args}}  # fmt: skip
    store.set_run_status(run_id, "finished" if log.status == "success" else "interrupted", summary)
    return run_id


def finish(log: Any) -> str | None:
    """Record the log of one of our tasks (found by its token) and close what the task held; the run id."""
    token = ((log.eval.metadata or {}).get(META) or {}).get("token")
    task_run = _OPEN.pop(token, None) if token else None
    if task_run is None:
        return None
    try:
        store = open_store(task_run.db)
        try:
            return record_log(store, task_run, log)
        finally:
            store.close()
    finally:
        task_run.close()


def ensure_hook() -> None:
    """Register the hook that records our tasks when they end (once per process). Registered when a task is made,
    after Inspect announced its hooks, so other evaluations in the process print nothing of it."""
    if _HOOKED:
        return
    from inspect_ai.hooks import Hooks, RunEnd, TaskEnd, hooks

    @hooks(name="store_runs", description="records theorembench's tasks as runs in the theorembench store")
    class StoreRuns(Hooks):
        async def on_task_end(self, data: TaskEnd) -> None:
            finish(data.log)

        async def on_run_end(self, data: RunEnd) -> None:  # a task that failed has no task end: record it here
            for log in data.logs or []:
                finish(log)

    _HOOKED.append(True)


__all__ = ["META", "SIGNATURE", "TaskRun", "ensure_hook", "finish", "model_name", "open_task", "record_log",
           "score_of"]
