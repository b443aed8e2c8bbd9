"""The order of a theorem's stages, and Stage 6 (the hard pool, calibration, hardest selection).

Seed 002's order: each theorem first gets one question (its original distractor set),
which the rubric grades; that item is in the full split, and in ge5 when it passes.
Only an item that passed the rubric goes to the stem-only filter (Stage 5), and only a
stem-nontrivial item gets regenerated alternative distractor sets (Stage 6, step 1).
So the full and ge5 splits hold one item per theorem, with the theorem's id (no
variant suffix), and the hard pool holds ``<id>::orig`` and ``<id>::alt<k>``.

The calibration model answers every pooled item that meets the rubric minimum (step 2);
per theorem, the unsolved item with the best ranking is kept (step 3). The calibrator
then answers the kept items once more, with a fresh sample: that second pass gives the
summary's ``hard_accuracy`` (an item is kept because one sample missed it, so a second
sample measures how stable that miss is).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from theorembench.llm import GenerateSettings
from theorembench.methods.lmb.stages import Builder, Source, variant_name
from theorembench.pipeline.steps import StepResult

SOURCE_STAGES = ("sketch", "classify", "stem")


@dataclass
class BuildOutcome:
    items: list[dict[str, Any]] = field(default_factory=list)  # the full split: one item per theorem
    pool: list[dict[str, Any]] = field(default_factory=list)  # stem-nontrivial items and their alternatives
    sources: dict[str, dict[str, StepResult]] = field(default_factory=dict)
    variants: dict[str, dict[str, StepResult]] = field(default_factory=dict)


def rubric_passed(stages: dict[str, StepResult]) -> bool:
    rubric = stages.get("rubric")
    return rubric is not None and rubric.ok and bool(rubric.output["passed"])


async def build_items(builder: Builder, sources: list[Source], *, concurrency: int = 4) -> BuildOutcome:
    outcome = BuildOutcome()
    gate = asyncio.Semaphore(concurrency)

    async def variant(src: Source, v: int, shared: dict[str, StepResult], triviality: dict[str, Any] | None,
                      ) -> tuple[dict[str, StepResult], dict[str, Any] | None]:  # fmt: skip
        stages = await builder.variant_stages(src, v, shared)
        outcome.variants[f"{src.source_id}::{variant_name(v)}"] = stages
        if "mcq" not in stages:
            return stages, None
        return stages, builder.item(src, v, shared, stages, stem_triviality=triviality)

    async def one(src: Source) -> None:
        async with gate:
            shared = await builder.source_stages(src)
            outcome.sources[src.source_id] = shared
            if not all(shared.get(k) is not None and shared[k].ok for k in SOURCE_STAGES):
                return
            orig, item = await variant(src, 0, shared, None)
            if item is None:
                return
            released = dict(item, id=src.source_id)  # the full and ge5 splits name an item by its theorem
            outcome.items.append(released)
            if not rubric_passed(orig):
                return
            triviality = None
            if builder.cfg.filters.stem_only:
                st = await builder.stem_filter(src, shared, orig)
                shared["stem_only"] = st
                if not st.ok:
                    return
                triviality = released["stem_triviality"] = item["stem_triviality"] = st.output
                if st.output["match"]:
                    return
            outcome.pool.append(item)
            for v in range(1, builder.cfg.generation.variants):
                _stages, alt = await variant(src, v, shared, triviality)
                if alt is not None:
                    outcome.pool.append(alt)

    await asyncio.gather(*(one(s) for s in sources))
    outcome.items.sort(key=lambda it: it["id"])
    outcome.pool.sort(key=lambda it: it["id"])
    return outcome


def eligible(pool: list[dict[str, Any]], rubric_min: int) -> list[dict[str, Any]]:
    """The pooled items whose rubric total meets the minimum (the alternatives are graded on their own)."""
    return [it for it in pool if it.get("qa quality eval") and it["qa quality eval"]["total_score"] >= rubric_min]


async def calibrate(builder: Builder, items: list[dict[str, Any]], *, stage: str = "calibrate", sample: int = 0,
                    positions: dict[str, int] | None = None) -> dict[str, dict[str, Any]]:  # fmt: skip
    """The calibration model answers each item under the released protocol (Stage 6, step 2).

    An item is shown in the option order of its position in the calibrated pool
    (``positions``, default: its index in ``items``); ``sample`` > 0 asks for a fresh answer.
    """
    from theorembench.evaluate.mcq.items import Item
    from theorembench.evaluate.mcq.protocol import extract_answer, messages, shuffle_options

    cfg = builder.cfg.calibration
    settings = GenerateSettings(max_tokens=cfg.max_tokens, reasoning_effort=cfg.reasoning_effort or None)
    results: dict[str, dict[str, Any]] = {}

    async def one(index: int, item: dict[str, Any]) -> None:
        async def run() -> dict[str, Any]:
            parsed = Item.model_validate(item)
            presented = shuffle_options(parsed, index, cfg.seed)
            completion = await builder.llm.generate(builder.cfg.calibrator, messages(parsed, presented, sketch=False),
                                                    settings, purpose=f"lmb.{stage}", sample=sample)  # fmt: skip
            answer = extract_answer(completion.text)
            return {"model_answer": answer, "correct_answer": presented.correct_label,
                    "model_is_correct": answer == presented.correct_label}  # fmt: skip

        result = await builder.runner.run(item["id"], stage, run)
        if result.ok:
            results[item["id"]] = result.output | {"call_ids": result.call_ids}

    await asyncio.gather(*(one((positions or {}).get(it["id"], i), it) for i, it in enumerate(items)))
    return results


# the first element of the released ``selection_rank``: how the calibration model fared on the item. The release
# gives an unanswered item the level of a wrong one (2511.12549v2::orig: no answer, selection_rank [2, 7.0, 0])
SOLVED, MISSED = 0, 2


def variant_index(item: dict[str, Any]) -> int:
    name = item.get("variant") or "orig"
    return 0 if name == "orig" else int(name.removeprefix("alt") or 0)


def selection_rank(item: dict[str, Any], answer: dict[str, Any] | None) -> list[Any]:
    """The released ranking key ``[outcome, rubric total, variant index]``; the largest is kept.

    outcome: 2 when the calibrator did not answer correctly (a wrong answer, or none could be read
    from its reply, as in the release; also when the pool was not calibrated), 0 when it answered
    correctly (never kept).
    """
    level = SOLVED if answer is not None and answer["model_is_correct"] else MISSED
    return [level, float(item["qa quality eval"]["total_score"]), variant_index(item)]


def select_hard(pool: list[dict[str, Any]], answers: dict[str, dict[str, Any]] | None) -> list[dict[str, Any]]:
    """Stage 6, step 3: per theorem, the unsolved item with the largest ``selection_rank``; all-solved theorems go.

    ``pool`` holds the calibrated items (those meeting the rubric minimum); ``answers`` is
    None when calibration is off, and then every item counts as unsolved.
    """
    by_source: dict[str, list[dict[str, Any]]] = {}
    for item in pool:
        by_source.setdefault(item["source_id"], []).append(item)
    hard = []
    for source_id in sorted(by_source):
        group = by_source[source_id]
        answered = group if answers is None else [it for it in group if it["id"] in answers]
        ranked = [(selection_rank(it, None if answers is None else answers[it["id"]]), it) for it in answered]
        ranked = [(rank, it) for rank, it in ranked if rank[0] != SOLVED]
        if not ranked:
            continue
        rank, chosen = max(ranked, key=lambda pair: pair[0])
        best = dict(chosen)
        ans = (answers or {}).get(best["id"], {})
        best["hard_selection_meta"] = {
            "selected_from": len(group),
            "selected_variant": best["variant"],
            "model_is_correct": ans.get("model_is_correct"),
            "model_answer": ans.get("model_answer"),
            "correct_answer": ans.get("correct_answer"),
            "selection_rank": rank,
        }
        hard.append(best)
    return hard


__all__ = ["BuildOutcome", "build_items", "calibrate", "eligible", "select_hard", "selection_rank"]
