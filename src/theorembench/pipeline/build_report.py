"""What every build reports, made once from the step runner's own results: one result type, one cost table.

A build (LMB, Proof2Hybrid, EternalMath) runs its stages through step runners; each stored step
lists the ids of the model calls behind it. :func:`calls_by_stage` collects those ids per stage,
and :func:`stage_costs` prices them from the store's ledger into one row shape per stage plus a
``total`` row, with the per-output figures in the build's own unit (an accepted item, a
question, an instance). :class:`BuildResult` is what every build service returns.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from theorembench.store import Store
from theorembench.store.steps import StepResult


@dataclass
class BuildResult:
    """Where a build wrote its outputs, its funnel, rejections by stage, the cost of every stage, its summary."""

    out_dir: Path
    files: dict[str, Path]
    funnel: dict[str, int]
    costs: list[dict[str, Any]]
    summary: dict[str, Any]
    rejections: dict[str, Any] = field(default_factory=dict)
    label: str = ""  # the release's name for it, e.g. the month 202611


def calls_by_stage(results: Mapping[str, Iterable[StepResult]]) -> dict[str, list[int]]:
    """The model call ids behind each stage's stored steps."""
    return {stage: sorted({i for r in steps for i in r.call_ids}) for stage, steps in results.items()}


def _row(store: Store, stage: str, ids: list[int], outputs: int, unit: str) -> dict[str, Any]:
    u = store.usage_of_calls(ids)
    cost, tokens = u["cost_usd"], u["prompt_tokens"] + u["completion_tokens"]
    return {"stage": stage, "calls": u["calls"], "prompt_tokens": u["prompt_tokens"],
            "completion_tokens": u["completion_tokens"], "cost_usd": cost, "unit": unit,
            "calls_per_output": u["calls"] / outputs if outputs else None,
            "tokens_per_output": tokens / outputs if outputs else None,
            "cost_per_output": cost / outputs if outputs and cost is not None else None}  # fmt: skip


def stage_costs(store: Store, by_stage: Mapping[str, list[int]], outputs: int, *, unit: str,
                order: Iterable[str] = ()) -> list[dict[str, Any]]:  # fmt: skip
    """One row per stage that made calls (``order`` first, then the rest by name), then ``total``; the
    per-output figures divide by ``outputs`` (None when the build produced nothing)."""
    first = [s for s in order if s in by_stage]
    stages = [*first, *sorted(set(by_stage) - set(first))]
    rows = [_row(store, s, sorted(set(by_stage[s])), outputs, unit) for s in stages if by_stage[s]]
    every = sorted({i for ids in by_stage.values() for i in ids})
    if every:
        rows.append(_row(store, "total", every, outputs, unit))
    return rows


__all__ = ["BuildResult", "calls_by_stage", "stage_costs"]
