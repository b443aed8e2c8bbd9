"""The shortcut audit's options-only baseline, and ``theorembench lmb audit`` on any item file.

A model sees an item's five options, shuffled as the released protocol shuffles them (seed +
position in the file), and no question stem; its boxed letter is read by the protocol's own
answer extraction. If it beats chance, the options give the answer away without the mathematics.
Every answer is a step (``StepRunner``) keyed by the item id under stage ``options_only``: in a
build under the build's pipeline, on a file under an audit pipeline named by the file's content
and the settings, so an interrupted audit resumes and a rerun pays for no call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from theorembench.common.errors import InvalidSetting
from theorembench.common.outputs import write_json
from theorembench.evaluate.mcq.items import Item, load_dataset
from theorembench.evaluate.mcq.protocol import extract_answer, shuffle_options
from theorembench.llm import LLM, GenerateSettings, check_model
from theorembench.llm.local import stop_private_servers
from theorembench.methods.lmb import check_prompts
from theorembench.methods.lmb.shortcuts import shortcut_audit
from theorembench.pipeline.identity import pipeline_name
from theorembench.pipeline.steps import StepRunner
from theorembench.store import Store
from theorembench.store.use import use_store

STAGE = "options_only"
VERSION = "1"  # bump when the stored answers change shape


async def options_only_answers(llm: LLM, runner: StepRunner, items: Sequence[Mapping[str, Any]], *, model: str,
                               settings: GenerateSettings, seed: int = 42,
                               concurrency: int = 4) -> dict[str, dict[str, Any]]:  # fmt: skip
    """Each item's options-only answer, ``{"model_answer", "correct_answer", "model_is_correct", "call_ids"}``;
    ``{"error": reason}`` for an item whose step did not finish (it counts as an error, not as correct)."""
    gate = asyncio.Semaphore(concurrency)
    results: dict[str, dict[str, Any]] = {}

    async def one(index: int, raw: Mapping[str, Any]) -> None:
        item = Item.model_validate(raw)

        async def ask() -> dict[str, Any]:
            presented = shuffle_options(item, index, seed)
            completion = await llm.generate(model, check_prompts.options_only_messages(presented.options), settings,
                                            purpose="lmb.options_only")  # fmt: skip
            answer = extract_answer(completion.text)
            return {"model_answer": answer, "correct_answer": presented.correct_label,
                    "model_is_correct": answer == presented.correct_label}  # fmt: skip

        async with gate:
            result = await runner.run(item.id, STAGE, ask)
        results[item.id] = (result.output | {"call_ids": result.call_ids} if result.ok
                            else {"error": result.reason or result.status})  # fmt: skip

    await asyncio.gather(*(one(i, it) for i, it in enumerate(items)))
    return results


def audit_file(path: str | Path, *, model: str | None = None, db: Store | str | Path | None = None,
               out: Path | None = None, seed: int = 42, max_tokens: int = 2048,
               concurrency: int = 4) -> dict[str, Any]:  # fmt: skip
    """The shortcut audit of an item file (released layout, JSON or JSONL), written to ``out`` when given.

    Without ``model`` the options-only baseline is skipped (and the store is never opened);
    with one, the model is checked before any call. Bad input raises ``UserError``.
    """
    for setting, value in (("max_tokens", max_tokens), ("concurrency", concurrency)):
        if value < 1:
            raise InvalidSetting(setting, f"must be positive, got {value}")
    dataset = load_dataset(Path(path))
    items = dataset.raw
    if model is None:
        report = shortcut_audit(items, source=str(path), skipped_reason="no --model given")
    else:
        check_model(model)  # before the store opens or any call
        settings = GenerateSettings(temperature=0.0, max_tokens=max_tokens)
        pipeline = pipeline_name("lmb-audit", scope=dataset.id[:16], version=VERSION, prompts=[check_prompts],
                                 settings={"model": model, "seed": seed, "max_tokens": max_tokens})  # fmt: skip

        async def go(store: Store) -> dict[str, dict[str, Any]]:
            llm = LLM(store)
            try:
                return await options_only_answers(llm, StepRunner(store, pipeline), items, model=model,
                                                  settings=settings, seed=seed, concurrency=concurrency)  # fmt: skip
            finally:
                await llm.aclose()

        with use_store(db) as store:
            try:
                answers = asyncio.run(go(store))
            finally:
                stop_private_servers()
        report = shortcut_audit(items, options_only=answers, options_only_model=model, source=str(path))
    if out is not None:
        write_json(out, report)
    return report


__all__ = ["STAGE", "audit_file", "options_only_answers"]
