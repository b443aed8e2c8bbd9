"""The step runner: every stage of every method runs through it.

A stage is an async function that turns a typed input into a JSON-serialisable output.
The runner stores the stage's outcome under ``(pipeline, key, stage)``, where the
pipeline name is built from the inputs and settings that shape the output. It

* skips the stage when a final outcome is stored (``ok``, or ``rejected`` with its reason);
* runs it otherwise, collecting the id of every model call made inside it (also the calls
  made before an exception, and calls served from the cache), so every output can be
  traced to the calls that produced it and priced;
* stores ``ok`` with the output, ``rejected`` when the stage raised :class:`Rejected`
  (a rule or a judge found the input unusable: final) or a model call was refused for a
  reason of the request itself (``LLMError.final``: a 400 such as "prompt is too long",
  which asking again cannot cure), or ``failed`` with the reason when it raised
  :class:`StepFailed` or a model call failed after its retries for a transient or
  endpoint reason (429, 5xx, timeouts, a wrong key: not final, the stage runs again on
  the next invocation);
* counts the model's unusable replies, kept with the step across runs: every reply of a
  :class:`StructuredOutputError` (an ask and its bounded repair turns, each invalid) and one for
  a stage raising :class:`MalformedOutput`. While the count is below ``max_output_attempts``
  (the argument, else ``$THEOREMBENCH_MAX_OUTPUT_ATTEMPTS``, else 2) the step is ``failed`` and
  runs again next time; then it is ``rejected`` (final, marked with cause ``output``), so a reply
  that stays malformed is not paid for on every rerun. With the default repairs, one ask and
  two repair turns are already three attempts: such a step is final after its first run. ``theorembench store retry`` makes those steps run
  again. Transport failures never count toward this limit;
* reports every outcome to an ``on_step(key, stage, status)`` callback (progress bars).

Exceptions of any other type are bugs: they propagate, and nothing is stored.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any

from theorembench.common.errors import UserError
from theorembench.common.progress import OnStep
from theorembench.llm import LLMError, StructuredOutputError, record_calls
from theorembench.store import Store
from theorembench.store.steps import FINAL, OUTPUT_CAUSE, StepResult, Steps

MAX_OUTPUT_ATTEMPTS_ENV = "THEOREMBENCH_MAX_OUTPUT_ATTEMPTS"
DEFAULT_MAX_OUTPUT_ATTEMPTS = 2


class Rejected(RuntimeError):
    """The input is unusable, by a rule or a judge's verdict (final: kept as the step's reason)."""


class StepFailed(RuntimeError):
    """The stage could not produce a usable output this time (the step runs again next time)."""


class MalformedOutput(StepFailed):
    """The model's own reply was unusable: counts toward the step's output-attempt limit (``replies`` of them:
    an ask and its repair turns count one each)."""

    def __init__(self, message: str, *, replies: int = 1):
        super().__init__(message)
        self.replies = replies


def output_attempt_limit(value: int | None = None) -> int:
    """The argument, else ``$THEOREMBENCH_MAX_OUTPUT_ATTEMPTS``, else 2 (at least 1)."""
    raw = value if value is not None else os.environ.get(MAX_OUTPUT_ATTEMPTS_ENV) or DEFAULT_MAX_OUTPUT_ATTEMPTS
    try:
        limit = int(raw)
    except ValueError:
        limit = 0
    if limit < 1:
        source = "max_output_attempts" if value is not None else MAX_OUTPUT_ATTEMPTS_ENV
        raise UserError(f"{source} must be a whole number of at least 1, got {raw!r}")
    return limit


class MemorySteps:
    """Step outcomes kept in memory: the same interface as :class:`~theorembench.store.steps.Steps`."""

    def __init__(self) -> None:
        self._results: dict[tuple[str, str], StepResult] = {}

    def get(self, key: str, stage: str) -> StepResult | None:
        return self._results.get((key, stage))

    def put(self, key: str, stage: str, result: StepResult) -> StepResult:
        self._results[(key, stage)] = result
        return result


class StepRunner:
    """Runs stages for one pipeline over the store; share one per build."""

    def __init__(self, store: Store | None, pipeline: str, *, on_step: OnStep | None = None,
                 max_output_attempts: int | None = None):  # fmt: skip
        self.store = store
        self.pipeline = pipeline
        # without a store (an evaluation that keeps its own records), outcomes live for this run only
        self.steps: Steps | MemorySteps = Steps(store, pipeline) if store is not None else MemorySteps()
        self.on_step = on_step
        self.max_output_attempts = output_attempt_limit(max_output_attempts)

    async def run(self, key: str, stage: str, fn: Callable[[], Awaitable[Any]]) -> StepResult:
        """The stored outcome of ``stage`` for ``key``, running ``fn`` unless a final one exists."""
        stored = self.steps.get(key, stage)
        if stored is not None and stored.status in FINAL:
            self._emit(key, stage, stored.status)
            return stored
        attempts = stored.output_attempts if stored is not None else 0
        cause = None
        with record_calls() as calls:
            try:
                output = await fn()
                status, reason = "ok", None
            except Rejected as exc:
                output, status, reason = None, "rejected", str(exc)
            except (StructuredOutputError, MalformedOutput) as exc:  # the model's own replies: counted, then final
                # every unusable reply counts: an ask and its repair turns are as many attempts
                replies = len(exc.call_ids) if isinstance(exc, StructuredOutputError) else exc.replies
                output, cause, attempts = None, OUTPUT_CAUSE, attempts + max(1, replies)
                status, reason = self._output_outcome(stage, attempts, exc)
            except StepFailed as exc:
                output, status, reason = None, "failed", str(exc)
            except LLMError as exc:  # final when the request itself is refused (a 400): asking again cannot cure it
                output, status = None, "rejected" if exc.final else "failed"
                reason = (f"{stage}: model call failed{' for good' if exc.final else ''}: {exc} "
                          f"(after {exc.attempts} attempt{'s' if exc.attempts != 1 else ''})")
        result = StepResult(status, output, reason, list(dict.fromkeys(calls)), output_attempts=attempts, cause=cause)
        self.steps.put(key, stage, result)
        self._emit(key, stage, status)
        return result

    def get(self, key: str, stage: str) -> StepResult | None:
        return self.steps.get(key, stage)

    def _output_outcome(self, stage: str, attempts: int, exc: Exception) -> tuple[str, str]:
        """``failed`` while attempts remain, then ``rejected``; the reason names the model's output either way."""
        structured = isinstance(exc, StructuredOutputError)
        if attempts < self.max_output_attempts:
            what = "malformed model output after bounded repairs" if structured else "unusable model output"
            return "failed", f"{stage}: {what} ({exc}); attempt {attempts} of {self.max_output_attempts}"
        what = "malformed (each time after bounded repairs)" if structured else "unusable"
        return "rejected", (f"{stage}: the model's output was {what} in {attempts} attempts; not asked again "
                            f"until `theorembench store retry` ({exc})")  # fmt: skip

    def _emit(self, key: str, stage: str, status: str) -> None:
        if self.on_step is not None:
            self.on_step(key, stage, status)


__all__ = ["MalformedOutput", "MemorySteps", "OnStep", "Rejected", "StepFailed", "StepResult", "StepRunner", "output_attempt_limit"]
