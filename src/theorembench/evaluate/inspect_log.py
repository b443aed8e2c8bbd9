"""Write a finished run as an Inspect AI eval log, so ``inspect view`` shows every transcript.

A sample whose model call failed (``LogSample.error`` set) is written as Inspect writes
an errored sample: its ``error`` field holds the message and it carries no score, so
the viewer shows it as an error and never as a scored answer. It still counts as wrong
in the run's own accuracy, which the log's metrics quote with their 95% interval.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import theorembench


@dataclass
class LogSample:
    id: str
    epoch: int
    messages: list[dict[str, str]]
    target: str
    completion: str
    reasoning: str | None
    score_value: str | float  # "C" correct, "I" incorrect, or a graded score in [0, 1] (ignored when ``error`` is set)
    answer: str | None
    explanation: str
    metadata: dict[str, Any] = field(default_factory=dict)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    error: str | None = None  # the call failed: written as an errored, unscored sample
    total_time: float | None = None


def default_log_dir() -> Path:
    return Path(os.environ.get("INSPECT_LOG_DIR", "logs"))


def _eval_sample(s: LogSample, model: str, scorer: str) -> tuple[Any, Any]:
    """One sample as Inspect writes it (an errored one carries no score), and its model usage."""
    from inspect_ai.log import EvalError, EvalSample
    from inspect_ai.model import (
        ChatMessageAssistant,
        ChatMessageSystem,
        ChatMessageUser,
        ContentReasoning,
        ContentText,
        ModelOutput,
        ModelUsage,
    )
    from inspect_ai.scorer import Score

    kinds = {"system": ChatMessageSystem, "user": ChatMessageUser}
    msgs: list[Any] = [kinds[m["role"]](content=m["content"]) for m in s.messages]
    content: list[Any] = [ContentReasoning(reasoning=s.reasoning)] if s.reasoning else []
    content.append(ContentText(text=s.completion))
    msgs.append(ChatMessageAssistant(content=content, model=model))
    usage = ModelUsage(input_tokens=s.prompt_tokens, output_tokens=s.completion_tokens,
                       total_tokens=s.prompt_tokens + s.completion_tokens,
                       reasoning_tokens=s.reasoning_tokens or None)  # fmt: skip
    output = ModelOutput.from_content(model=model, content=s.completion)
    output.usage = usage
    sample = EvalSample(
        id=s.id, epoch=s.epoch, input=list(msgs[:-1]), target=s.target, messages=msgs, output=output,
        scores=None if s.error else {scorer: Score(value=s.score_value, answer=s.answer or "",
                                                   explanation=s.explanation)},
        metadata=s.metadata, model_usage={model: usage}, total_time=s.total_time,
        error=EvalError(message=s.error, traceback="", traceback_ansi="") if s.error else None,
    )  # fmt: skip
    return sample, usage


def write_inspect_log(
    *,
    task: str,
    model: str,
    dataset_name: str,
    dataset_path: str,
    samples: list[LogSample],
    metrics: dict[str, float],
    config: dict[str, Any],
    started_at: datetime,
    log_dir: Path,
    run_id: str,
    scorer: str = "mcq_match",
) -> Path:
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalMetric,
        EvalResults,
        EvalScore,
        EvalSpec,
        EvalStats,
        write_eval_log,
    )
    from inspect_ai.model import ModelUsage

    eval_samples = []
    usage_total = ModelUsage()
    for s in samples:
        sample, usage = _eval_sample(s, model, scorer)
        eval_samples.append(sample)
        usage_total = usage_total + usage
    now = datetime.now(UTC)
    spec = EvalSpec(
        run_id=run_id,
        created=started_at.isoformat(),
        task=task,
        task_version=0,
        dataset=EvalDataset(
            name=dataset_name,
            location=dataset_path,
            samples=len({s.id for s in samples}),
            sample_ids=sorted({s.id for s in samples}),
            shuffled=False,
        ),
        model=model,
        config=EvalConfig(epochs=max((s.epoch for s in samples), default=1)),
        packages={"theorembench": theorembench.__version__},
        metadata=config,
    )
    results = EvalResults(
        total_samples=len(samples),
        completed_samples=sum(s.error is None for s in samples),
        scores=[
            EvalScore(
                name=scorer,
                scorer=scorer,
                metrics={name: EvalMetric(name=name, value=value) for name, value in metrics.items()},
            )
        ],
    )
    log = EvalLog(
        status="success",
        eval=spec,
        results=results,
        stats=EvalStats(
            started_at=started_at.isoformat(),
            completed_at=now.isoformat(),
            model_usage={model: usage_total},
        ),
        samples=eval_samples,
    )
    log_dir.mkdir(parents=True, exist_ok=True)
    stamp = started_at.strftime("%Y-%m-%dT%H-%M-%S+00-00")
    safe_task = task.replace("/", "-")
    path = log_dir / f"{stamp}_{safe_task}_{run_id}.eval"
    write_eval_log(log, str(path))
    return path
