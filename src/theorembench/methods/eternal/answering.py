"""Asking a model for an instance's final answer and grading it: shared by ``calibrate`` and ``eval``.

One sample is one step of the step runner, keyed by the instance (with a digest of its
problem, expected value and kind, so a changed instance is asked anew), the model and
the sample index. The sample index goes into the LLM layer's cache key, so the K trials
of one model are K distinct samples, each cached on its own. A failed model call is a
failed step (asked again next time), never an incorrect answer.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from theorembench.common.digest import json_digest
from theorembench.common.errors import InvalidSetting, UserError
from theorembench.common.progress import OnCount
from theorembench.evaluate.answers import CHECKER_VERSION, KINDS, AnswerChecker
from theorembench.evaluate.samples import Sample, Scored, unanswered
from theorembench.llm import LLM, GenerateSettings, ModelSpec
from theorembench.pipeline.identity import pipeline_name
from theorembench.pipeline.steps import StepResult, StepRunner

PROMPT_VERSION = "eternal-answer-1"
EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")  # reasoning efforts the providers take
SYSTEM = ("You are a research mathematician. Work the problem out carefully, then state the final answer "
          "once, exactly and in closed form, inside \\boxed{}.")  # fmt: skip
USER = ("{problem}\n\n"
        "Give an exact answer (an integer in full, a fraction p/q, or a closed-form expression), not a decimal "
        "approximation unless the problem asks for one. End your reply with the final answer in "
        "\\boxed{{...}}.")  # fmt: skip


def answer_messages(problem: str) -> list[dict[str, str]]:
    """The messages that ask a model to solve one problem."""
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER.format(problem=problem)}]


def expected_of(instance: dict[str, Any]) -> tuple[str, str | None]:
    """The value a reply is graded against and the checker kind (None: guessed from the value)."""
    value = str(instance.get("numerical_value") or "").strip() or str(instance.get("exact_expression") or "").strip()
    kind = instance.get("answer_kind") or None
    return value, kind


def instance_digest(instance: dict[str, Any]) -> str:
    """Ten hex digits over what a sample's outcome depends on: the problem, the expected value and its kind."""
    value, kind = expected_of(instance)
    return json_digest([instance["problem"], value, kind], 10)


def sample_key(instance: dict[str, Any], model: str, sample: int) -> str:
    """The step key of one sample: instance id and digest, model, sample index."""
    return f"{instance['instance_id']}@{instance_digest(instance)}|{model}|{sample}"


def progress_counter(progress: OnCount | None, total: int) -> OnCount:
    """Reports ``(0, total)`` now, then ``(done, total)`` each time the returned callback sees a sample end (the
    callback takes the sample loop's ``(done, total)`` of one loop, so several loops can share one count)."""
    done = 0
    if progress is not None:
        progress(0, total)

    def note(_done: int, _total: int) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)

    return note


def settings_digest(*parts: Any) -> str:
    return json_digest(list(parts), 12)


def load_instances(path: str | Path, *, what: str = "instances file") -> list[dict[str, Any]]:
    """Instance lines from a JSONL file, checked for the fields grading needs; UserError with one line otherwise."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read the {what}: {getattr(exc, 'strerror', None) or exc}") from None
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise UserError(f"{path}:{number}: not JSON ({exc})") from None
        if not isinstance(row, dict):
            raise UserError(f"{path}:{number}: not a JSON object")
        for field in ("instance_id", "problem"):
            if not isinstance(row.get(field), str) or not row[field].strip():
                raise UserError(f"{path}:{number}: no {field}")
        if not expected_of(row)[0]:
            raise UserError(f"{path}:{number}: no numerical_value or exact_expression to grade against")
        kind = row.get("answer_kind")
        if kind is not None and kind not in KINDS:
            raise UserError(f"{path}:{number}: answer_kind {kind!r} is not one of {', '.join(KINDS)}")
        if row["instance_id"] in seen:
            raise UserError(f"{path}:{number}: instance_id {row['instance_id']!r} appears twice")
        seen.add(row["instance_id"])
        out.append(row)
    if not out:
        raise UserError(f"{path}: the {what} holds no instances")
    return out


class SharedChecker:
    """One answer-checker worker for a run's concurrent samples: checks go one at a time, off the event loop."""

    def __init__(self) -> None:
        self._checker = AnswerChecker()
        self._lock = asyncio.Lock()

    async def check(self, expected: str, reply: str, kind: str | None) -> dict[str, Any]:
        async with self._lock:
            verdict = await asyncio.to_thread(self._checker.check, expected, reply, kind)
        return verdict.to_dict()

    def close(self) -> None:
        self._checker.close()


def check_effort(effort: str | None, setting: str = "reasoning_effort") -> str | None:
    if effort is not None and effort not in EFFORTS:
        raise InvalidSetting(setting, f"{effort!r} is not one of {', '.join(EFFORTS)}")
    return effort


def answer_settings(*, max_tokens: int | None, temperature: float | None, seed: int | None, max_retries: int,
                    max_connections: int | None, reasoning_effort: str | None = None,
                    thinking_budget: int | None = None, timeout: float | None = None) -> GenerateSettings:  # fmt: skip
    if max_tokens is not None and max_tokens < 1:
        raise InvalidSetting("max_tokens", "must be positive")
    if max_connections is not None and max_connections < 1:
        raise InvalidSetting("max_connections", "must be positive")
    if thinking_budget is not None and thinking_budget < 1:
        raise InvalidSetting("thinking_budget", "must be a positive number of tokens")
    if timeout is not None and timeout <= 0:
        raise InvalidSetting("timeout", "must be a positive number of seconds")
    return GenerateSettings(max_tokens=max_tokens, temperature=temperature, seed=seed, max_retries=max_retries,
                            max_connections=max_connections, reasoning_effort=check_effort(reasoning_effort),
                            thinking_budget=thinking_budget, timeout=timeout)  # fmt: skip


def split_variant(name: str) -> tuple[str, str | None]:
    """``openai/gpt-5.1@high`` -> (``openai/gpt-5.1``, ``high``): a model and the reasoning effort of its variant,
    as the paper's suite names GPT-5.1-high and GPT-5.2-xhigh. A name without a known effort after its last ``@``
    is a plain model name."""
    model, sep, effort = name.rpartition("@")
    return (model, effort) if sep and model and effort in EFFORTS else (name, None)


@dataclass(frozen=True)
class Variant:
    """One model of an evaluation or a suite: its label (the name as given), its model and its settings."""

    label: str
    spec: ModelSpec
    settings: GenerateSettings


def resolve_models(llm: LLM, names: list[str], setting: str, settings: GenerateSettings) -> list[Variant]:
    """Every model checked (name, credentials, backend) before any work; duplicates refused (``setting``: the
    service's name for the list, e.g. ``suite``). ``model@high`` runs the model with that reasoning effort."""
    if not names:
        raise InvalidSetting(setting, "needs at least one model")
    if len(set(names)) != len(names):
        raise InvalidSetting(setting, "names a model twice")
    out = []
    for name in names:
        model, effort = split_variant(name)
        own = settings.model_copy(update={"reasoning_effort": effort}) if effort else settings
        out.append(Variant(name, llm.resolve(model), own))
    return out


def answer_pipeline(kind: str, settings: GenerateSettings) -> str:
    """The pipeline of answered samples (evaluation or calibration): the prompts and the sampling settings. The
    model is part of every sample's key; the grader is not part of either (a changed checker regrades)."""
    return pipeline_name(kind, version=PROMPT_VERSION, prompts=[SYSTEM, USER], settings=settings.cache_fields())


class AnswerTask:
    """EternalMath's sample for the one sample loop (:mod:`theorembench.evaluate.samples`): a problem asked once
    by one model, graded by final answer only.

    The stored output (stage ``answer``): ``correct`` (True/False; an unreadable answer counts as wrong and
    keeps the checker's warning), the extracted answer, the verdict's messages, the call id and the checker's
    version. A stored sample graded by another version of the answer checker is graded again from its
    stored reply when it is scored, without a model call (and asked again only if the reply is gone).
    """

    stage = "answer"

    def __init__(self, runner: StepRunner, llm: LLM, spec: ModelSpec, instances: list[dict[str, Any]],
                 settings: GenerateSettings, checker: SharedChecker, *, purpose: str,
                 label: str | None = None):  # fmt: skip
        self.runner, self.llm, self.spec, self.instances = runner, llm, spec, instances
        self.settings, self.checker, self.purpose = settings, checker, purpose
        self.label = label or spec.name  # a variant (model@high) is its own model in the keys

    def key(self, sample: Sample) -> str:
        return sample_key(self.instances[sample.index], self.label, sample.epoch)

    def target(self, sample: Sample) -> str:
        return expected_of(self.instances[sample.index])[0]

    async def _grade(self, sample: Sample, text: str, call_id: int | None, completion_tokens: Any) -> dict[str, Any]:
        expected, kind = expected_of(self.instances[sample.index])
        verdict = await self.checker.check(expected, text, kind)
        return {"correct": verdict["correct"] is True, "unreadable": verdict["correct"] is None,
                "extracted": verdict.get("extracted"), "kind": verdict.get("kind"),
                "warning": verdict.get("warning"), "messages": verdict.get("messages", []),
                "checker_version": verdict.get("checker_version"), "call_id": call_id,
                "completion_tokens": completion_tokens}  # fmt: skip

    async def ask(self, sample: Sample) -> dict[str, Any]:
        completion = await self.llm.generate(self.spec, answer_messages(self.instances[sample.index]["problem"]),
                                             self.settings, purpose=self.purpose, sample=sample.epoch)  # fmt: skip
        return await self._grade(sample, completion.text, completion.call_id, completion.completion_tokens)

    async def score(self, sample: Sample, output: dict[str, Any]) -> Scored:
        if output.get("checker_version") != CHECKER_VERSION:  # graded by another checker version
            key, reply = self.key(sample), response_text(self.llm, output.get("call_id"))
            if reply:  # the stored reply, graded again: no model call
                output = await self._grade(sample, reply, output.get("call_id"), output.get("completion_tokens"))
                self.runner.steps.put(key, self.stage, StepResult("ok", output, None, [output["call_id"]], True))
            else:  # the reply is gone: ask again
                self.runner.steps.put(key, self.stage, StepResult("failed", None, "reply gone; checker version changed"))
                step = await self.runner.run(key, self.stage, lambda: self.ask(sample))
                if not step.ok:
                    return unanswered(sample, step, self.target(sample))
                output = step.output
        return Scored(sample, "unparsed" if output.get("unreadable") else "ok", float(bool(output["correct"])),
                      self.target(sample), answer=output.get("extracted"),
                      explanation="; ".join(output.get("messages") or []) or "graded by the answer checker",
                      call_ids=[output["call_id"]] if output.get("call_id") is not None else [], detail=output)  # fmt: skip


def response_text(llm: LLM, call_id: int | None) -> str:
    """The reply of a stored call ("" when it is gone)."""
    row = llm.store.get_call(call_id) if call_id else None
    return (row["response_text"] or "") if row is not None else ""


__all__ = ["EFFORTS", "PROMPT_VERSION", "AnswerTask", "SharedChecker", "Variant", "answer_messages", "answer_pipeline",
           "answer_settings", "check_effort", "expected_of", "instance_digest", "load_instances", "progress_counter",
           "resolve_models", "response_text", "sample_key", "settings_digest", "split_variant"]  # fmt: skip
