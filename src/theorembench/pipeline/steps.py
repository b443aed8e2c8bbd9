"""The step runner: every stage of every method runs through it.

A stage is an async function that turns a typed input into a JSON-serialisable output.
The runner stores the stage's outcome under ``(pipeline, key, stage)``, where the
pipeline name is built from the inputs and settings that shape the output. It

* skips the stage when a final outcome is stored (``ok``, or ``rejected`` with its reason);
* runs it otherwise, collecting the id of every model call made inside it (also the calls
  made before an exception, and calls served from the cache), so every output can be
  traced to the calls that produced it and priced;
* stores ``ok`` with the output, ``rejected`` when the stage raised :class:`Rejected`
  (a rule or a judge found the input unusable: final), or ``failed`` with the reason when
  it raised :class:`StepFailed` or a model call failed for good (not final: the stage runs
  again on the next invocation);
* reports every outcome to an ``on_step(key, stage, status)`` callback (progress bars).

Exceptions of any other type are bugs: they propagate, and nothing is stored.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from theorembench.llm import LLMError, StructuredOutputError, record_calls
from theorembench.store import Store
from theorembench.store.steps import StepResult, Steps

OnStep = Callable[[str, str, str], None]


class Rejected(RuntimeError):
    """The input is unusable, by a rule or a judge's verdict (final: kept as the step's reason)."""


class StepFailed(RuntimeError):
    """The stage could not produce a usable output this time (the step runs again next time)."""


class StepRunner:
    """Runs stages for one pipeline over the store; share one per build."""

    def __init__(self, store: Store, pipeline: str, *, on_step: OnStep | None = None):
        self.store = store
        self.pipeline = pipeline
        self.steps = Steps(store, pipeline)
        self.on_step = on_step

    async def run(self, key: str, stage: str, fn: Callable[[], Awaitable[Any]]) -> StepResult:
        """The stored outcome of ``stage`` for ``key``, running ``fn`` unless a final one exists."""
        done = self.steps.done(key, stage)
        if done is not None:
            self._emit(key, stage, done.status)
            return done
        with record_calls() as calls:
            try:
                output = await fn()
                status, reason = "ok", None
            except Rejected as exc:
                output, status, reason = None, "rejected", str(exc)
            except StepFailed as exc:
                output, status, reason = None, "failed", str(exc)
            except StructuredOutputError as exc:
                output, status, reason = None, "failed", f"{stage}: malformed model output after bounded repairs ({exc})"
            except LLMError as exc:
                output, status, reason = None, "failed", f"{stage}: model call failed: {exc}"
        result = StepResult(status, output, reason, list(dict.fromkeys(calls)))
        self.steps.put(key, stage, result)
        self._emit(key, stage, status)
        return result

    def get(self, key: str, stage: str) -> StepResult | None:
        return self.steps.get(key, stage)

    def _emit(self, key: str, stage: str, status: str) -> None:
        if self.on_step is not None:
            self.on_step(key, stage, status)


__all__ = ["OnStep", "Rejected", "StepFailed", "StepResult", "StepRunner"]
