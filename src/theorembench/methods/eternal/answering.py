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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from theorembench.common.digest import json_digest
from theorembench.common.errors import UserError
from theorembench.evaluate.answers import KINDS, AnswerChecker
from theorembench.llm import LLM, GenerateSettings, ModelSpec
from theorembench.pipeline.steps import StepResult, StepRunner

PROMPT_VERSION = "eternal-answer-1"
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


def progress_counter(progress: Callable[[int, int], None] | None, total: int) -> Callable[[StepResult], None]:
    """Reports ``(0, total)`` now, then ``(done, total)`` each time the returned callback sees a sample end."""
    done = 0
    if progress is not None:
        progress(0, total)

    def note(_: StepResult) -> None:
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


def answer_settings(*, max_tokens: int | None, temperature: float | None, seed: int | None, max_retries: int,
                    max_connections: int | None) -> GenerateSettings:  # fmt: skip
    if max_tokens is not None and max_tokens < 1:
        raise UserError("--max-tokens must be positive")
    if max_connections is not None and max_connections < 1:
        raise UserError("--max-connections must be positive")
    return GenerateSettings(max_tokens=max_tokens, temperature=temperature, seed=seed, max_retries=max_retries,
                            max_connections=max_connections)  # fmt: skip


def resolve_models(llm: LLM, names: list[str], option: str) -> list[ModelSpec]:
    """Every model checked (name, credentials, backend) before any work; duplicates refused."""
    if not names:
        raise UserError(f"give at least one {option}")
    if len(set(names)) != len(names):
        raise UserError(f"{option} names a model twice")
    return [llm.resolve(name) for name in names]


async def run_sample(runner: StepRunner, llm: LLM, spec: ModelSpec, instance: dict[str, Any], sample: int,
                     settings: GenerateSettings, checker: SharedChecker, *, purpose: str,
                     on_done: Callable[[StepResult], None] | None = None) -> StepResult:  # fmt: skip
    """Ask (or take from the store) one sample of one instance and grade it by final answer only.

    The step's output: ``correct`` (True/False; an unreadable answer counts as wrong and
    keeps the checker's warning), the extracted answer, the verdict's messages, the call id.
    """

    async def ask() -> dict[str, Any]:
        completion = await llm.generate(spec, answer_messages(instance["problem"]), settings, purpose=purpose,
                                        sample=sample)  # fmt: skip
        expected, kind = expected_of(instance)
        verdict = await checker.check(expected, completion.text, kind)
        return {"correct": verdict["correct"] is True, "unreadable": verdict["correct"] is None,
                "extracted": verdict.get("extracted"), "kind": verdict.get("kind"),
                "warning": verdict.get("warning"), "messages": verdict.get("messages", []),
                "call_id": completion.call_id, "completion_tokens": completion.completion_tokens}  # fmt: skip

    result = await runner.run(sample_key(instance, spec.name, sample), "answer", ask)
    if on_done is not None:
        on_done(result)
    return result


def response_text(llm: LLM, call_id: int | None) -> str:
    """The reply of a stored call ("" when it is gone)."""
    row = llm.store.get_call(call_id) if call_id else None
    return (row["response_text"] or "") if row is not None else ""


__all__ = ["PROMPT_VERSION", "SharedChecker", "answer_messages", "answer_settings", "expected_of", "instance_digest",
           "load_instances", "resolve_models",
           "progress_counter", "response_text", "run_sample", "sample_key", "settings_digest"]  # fmt: skip
