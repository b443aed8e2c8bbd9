"""The one sample loop: every evaluation asks its samples and scores them here.

A method supplies a :class:`SampleTask`, which says only how one sample is asked (an async
function whose JSON output is stored) and how a stored output is scored. The loop does the
rest, the same way for every method:

* **resume**: each sample is a step of the step runner, keyed by the task's key for it, so
  a rerun finds every answered sample stored and asks only the others;
* **concurrency** and **progress**: at most ``concurrency`` samples are asked at a time, and
  ``progress(done, total)`` follows them;
* **the failure rule**: a sample whose model call was refused for good (a 400: the step is
  ``rejected``) is final, ``error``, and counts in n as not correct; one whose call failed
  transiently (429, 5xx, a timeout: the step is ``failed``) counts as not correct in this
  run's figures, as ``pending``, and is asked again by the next run;
* **the result contract**: every sample comes back as one :class:`Scored`, and
  :func:`headline` makes the run's score an :class:`~theorembench.common.stats.Estimate`
  (n, errors, a 95% interval that stays honest at small n); :func:`log_samples` makes the
  Inspect log's samples, each with its score.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from theorembench.common.progress import OnCount
from theorembench.common.stats import Estimate, bounded_mean, proportion
from theorembench.evaluate.inspect_log import LogSample
from theorembench.pipeline.steps import StepResult, StepRunner

STAGE = "sample"  # the steps' stage name, unless the task names its own (``task.stage``)
STATUSES = ("ok", "unparsed", "error", "pending")  # ok/unparsed: answered; error: refused for good; pending: retried


@dataclass(frozen=True)
class Sample:
    """One question asked once: the item's position and id, and which of its samples (epoch, from 0)."""

    index: int
    id: str
    epoch: int = 0


@dataclass
class Scored:
    """One sample's result, the same for every method.

    ``value`` is the score in [0, 1] (0 for a sample that was not answered); ``detail`` holds what
    the method adds (its own record of the sample)."""

    sample: Sample
    status: str  # one of STATUSES
    value: float
    target: str
    answer: str | None = None
    error: str | None = None
    explanation: str = ""
    call_ids: list[int] = field(default_factory=list)
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def answered(self) -> bool:
        return self.status in ("ok", "unparsed")

    @property
    def correct(self) -> bool:
        return self.answered and self.value >= 1.0


class SampleTask(Protocol):
    """What a method supplies: how a sample is asked and how its stored output is scored."""

    def key(self, sample: Sample) -> str:
        """The step key of a sample (what identifies it within the evaluation's pipeline)."""
        ...

    async def ask(self, sample: Sample) -> Any:
        """Ask the model; return the JSON output to store (raise the step runner's errors as stages do)."""
        ...

    def score(self, sample: Sample, output: Any) -> Scored | Awaitable[Scored]:
        """Score a stored output of :meth:`ask` (a coroutine when scoring waits, e.g. on the answer checker)."""
        ...

    def target(self, sample: Sample) -> str:
        """The expected answer, as text (also for samples that have no output)."""
        ...


def unanswered(sample: Sample, step: StepResult, target: str) -> Scored:
    """The failure rule: refused for good is a final error, anything else is pending; both score 0."""
    final = step.status == "rejected"
    return Scored(sample, "error" if final else "pending", 0.0, target, error=step.reason or "model call failed",
                  explanation="refused for good: counts as not correct" if final else
                  "failed this time: counts as not correct here, asked again next run",
                  call_ids=list(step.call_ids))  # fmt: skip


async def run_samples(runner: StepRunner, task: SampleTask, samples: Sequence[Sample], *,
                      concurrency: int | None = None,
                      progress: OnCount | None = None) -> list[Scored]:  # fmt: skip
    """Ask (or find stored) and score every sample, in the order given; at most ``concurrency`` at a time (None:
    all at once, bounded only by each model's connection limit in the LLM layer)."""
    gate = asyncio.Semaphore(max(1, concurrency or len(samples) or 1))
    done = 0

    async def one(sample: Sample) -> Scored:
        nonlocal done
        async with gate:
            step = await runner.run(task.key(sample), getattr(task, "stage", STAGE), _asker(task, sample))
        if step.ok:
            scored = task.score(sample, step.output)
            if inspect.isawaitable(scored):
                scored = await scored
            scored.call_ids = scored.call_ids or list(step.call_ids)
        else:
            scored = unanswered(sample, step, task.target(sample))
        done += 1
        if progress is not None:
            progress(done, len(samples))
        return scored

    return list(await asyncio.gather(*(one(s) for s in samples)))


def _asker(task: SampleTask, sample: Sample) -> Callable[[], Awaitable[Any]]:
    return lambda: task.ask(sample)


def headline(scored: Sequence[Scored], *, binary: bool = True) -> Estimate:
    """The run's score over every sample (unanswered ones count as 0), with its errors: a Wilson interval for
    right/wrong scores, the Wilson interval at the mean for scores in [0, 1]."""
    errors = sum(s.status == "error" for s in scored)
    if binary:
        return proportion(sum(s.correct for s in scored), len(scored), errors=errors)
    return bounded_mean([s.value if s.answered else 0.0 for s in scored], errors=errors)


def counts(scored: Sequence[Scored]) -> dict[str, int]:
    """How many samples ended in each status."""
    return {status: sum(s.status == status for s in scored) for status in STATUSES}


def log_samples(scored: Sequence[Scored], *, messages: Callable[[Sample], list[dict[str, Any]]],
                completion: Callable[[Scored], str], metadata: Callable[[Scored], dict[str, Any]] | None = None,
                binary: bool = True) -> list[LogSample]:  # fmt: skip
    """The Inspect log's samples: each answered one with its score (C/I, or the value for a graded score), each
    unanswered one as an errored sample."""
    out = []
    for s in scored:
        value: Any = ("C" if s.correct else "I") if binary else s.value
        out.append(LogSample(
            id=s.sample.id, epoch=s.sample.epoch + 1, messages=messages(s.sample), target=s.target,
            completion=completion(s) if s.answered else "", reasoning=None, score_value=value, answer=s.answer,
            explanation=s.error or s.explanation, metadata={"status": s.status, **(metadata(s) if metadata else {})},
            error=None if s.answered else s.error))  # fmt: skip
    return out


__all__ = ["STAGE", "STATUSES", "Sample", "SampleTask", "Scored", "counts", "headline", "log_samples", "run_samples",
           "unanswered"]
