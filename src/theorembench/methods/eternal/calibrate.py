"""``calibrate``: every instance answered K times by every model of a suite, then tiered.

Each trial is a step (instance, model, trial index) of the pipeline
``eternal.calibrate/<settings digest>``; the suite is not part of the pipeline name, so a
calibration with a changed suite asks only the models that are new. A trial whose model
call failed is a failed step: it has no outcome, its instance stays pending (in neither
output file) and the next run asks it again; finished trials are never asked twice.

Writes to ``out_dir``: ``calibrated.jsonl`` (the kept instances with ``tier``,
``n_models_correct`` and ``suite_size``), ``excluded.jsonl`` (solved by every model),
``trials.jsonl`` (one row per model per trial, from which ``tiers.tiers_from_rows``
recomputes tiers for another suite or rule) and ``calibration.json`` (the tier table).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from theorembench.common.errors import UserError
from theorembench.common.outputs import write_json, write_jsonl
from theorembench.llm import LLM, ModelSpec
from theorembench.llm.local import stop_private_servers
from theorembench.methods.eternal.answering import (
    PROMPT_VERSION,
    SYSTEM,
    USER,
    SharedChecker,
    answer_settings,
    load_instances,
    progress_counter,
    resolve_models,
    run_sample,
    settings_digest,
)
from theorembench.methods.eternal.tiers import Assignment, parse_rule, tier_ranges, tier_table, tiers_from_rows
from theorembench.pipeline.steps import StepResult, StepRunner
from theorembench.store import Store

Progress = Callable[[int, int], None]


@dataclass
class Calibration:
    """What a calibration run produced: the tier table, where the files are, and what is still pending."""

    table: dict[str, Any]
    out_dir: Path
    files: dict[str, Path]
    failed_trials: int
    calls_made: int
    cache_hits: int
    pending: list[str] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)


def calibrate(store: Store, instances_path: str | Path, suite: list[str], trials: int, *, rule: str = "majority",
              out_dir: str | Path = Path("eternal_calibration"), progress: Progress | None = None,
              max_tokens: int | None = None, temperature: float | None = None, seed: int | None = None,
              max_retries: int = 3, max_connections: int | None = None,
              use_cache: bool = True) -> Calibration:  # fmt: skip
    """Answer every instance ``trials`` times with every model of ``suite``, grade, tier and write the files.

    ``progress(done, total)`` is called once before the first request and after every trial
    (stored trials count at once). Resumable: run it again to retry failed trials.
    """
    try:
        parsed = parse_rule(rule)
        parsed.check(trials)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    settings = answer_settings(max_tokens=max_tokens, temperature=temperature, seed=seed, max_retries=max_retries,
                               max_connections=max_connections)  # fmt: skip
    instances = load_instances(instances_path)
    llm = LLM(store, use_cache=use_cache)
    specs = resolve_models(llm, suite, "--suite")
    names = [s.name for s in specs]
    pipeline = "eternal.calibrate/" + settings_digest(PROMPT_VERSION, SYSTEM, USER, settings.cache_fields())
    runner = StepRunner(store, pipeline)
    config = {"suite": names, "trials": trials, "rule": str(parsed), "file": str(instances_path)}
    llm.run_id = store.create_run("eternal.calibrate", settings_digest(pipeline, config), name=str(instances_path),
                                  config=config)  # fmt: skip
    outcomes: dict[tuple[str, str, int], StepResult] = {}
    note = progress_counter(progress, len(instances) * len(specs) * trials)

    async def go() -> None:
        checker = SharedChecker()
        try:
            async def one(inst: dict[str, Any], spec: ModelSpec, k: int) -> None:
                outcomes[(inst["instance_id"], spec.name, k)] = await run_sample(
                    runner, llm, spec, inst, k, settings, checker, purpose="eternal.calibrate", on_done=note)

            await asyncio.gather(*(one(inst, spec, k) for inst in instances for spec in specs for k in range(trials)))
        finally:
            checker.close()
            await llm.aclose()

    calls_before, hits_before = llm.calls_made, llm.cache_hits
    try:
        asyncio.run(go())
    except BaseException:
        store.set_run_status(llm.run_id, "interrupted")
        raise
    finally:
        stop_private_servers()
    rows = _trial_rows(instances, names, trials, outcomes)
    assignments = tiers_from_rows(rows, [i["instance_id"] for i in instances], names, trials, parsed)
    result = _write(Path(out_dir), instances, rows, assignments, names=names, trials=trials, rule=str(parsed),
                    pipeline=pipeline, calls=llm.calls_made - calls_before,
                    hits=llm.cache_hits - hits_before)  # fmt: skip
    store.set_run_status(llm.run_id, "finished", {"table": result.table, "failed_trials": result.failed_trials})
    return result


def _trial_rows(instances: list[dict[str, Any]], models: list[str], trials: int,
                outcomes: dict[tuple[str, str, int], StepResult]) -> list[dict[str, Any]]:  # fmt: skip
    rows = []
    for inst in instances:
        for model in models:
            for k in range(trials):
                res = outcomes[(inst["instance_id"], model, k)]
                if res.ok:
                    out = res.output
                    rows.append({"instance_id": inst["instance_id"], "model": model, "trial": k, "status": "ok",
                                 "correct": bool(out["correct"]), "extracted": out.get("extracted"),
                                 "unreadable": bool(out.get("unreadable")), "call_id": out.get("call_id")})  # fmt: skip
                else:  # a failed model call: no outcome
                    rows.append({"instance_id": inst["instance_id"], "model": model, "trial": k, "status": "failed",
                                 "correct": None, "reason": res.reason,
                                 "call_id": res.call_ids[-1] if res.call_ids else None})  # fmt: skip
    return rows


def _write(out_dir: Path, instances: list[dict[str, Any]], rows: list[dict[str, Any]],
           assignments: list[Assignment], *, names: list[str], trials: int, rule: str, pipeline: str,
           calls: int, hits: int) -> Calibration:  # fmt: skip
    by_id = {a.instance_id: a for a in assignments}
    kept, excluded = [], []
    for inst in instances:
        a = by_id[inst["instance_id"]]
        if a.status == "tiered":
            kept.append({**inst, "tier": a.tier, "n_models_correct": a.n_models_correct, "suite_size": a.suite_size})
        elif a.status == "excluded":
            excluded.append({**inst, "n_models_correct": a.n_models_correct, "suite_size": a.suite_size,
                             "excluded_because": "solved by every model of the suite"})  # fmt: skip
    table = tier_table(assignments)
    pending = [a.instance_id for a in assignments if a.status == "pending"]
    failed = sum(r["status"] == "failed" for r in rows)
    per_model = {m: {"trials": sum(r["model"] == m and r["status"] == "ok" for r in rows),
                     "correct_trials": sum(r["model"] == m and r["correct"] is True for r in rows),
                     "instances_correct": sum(m in a.models_correct for a in assignments)} for m in names}  # fmt: skip
    summary = {"suite": names, "suite_size": len(names), "trials": trials, "rule": rule,
               "thresholds": tier_ranges(len(names)), "table": table, "per_model": per_model,
               "failed_trials": failed, "pending": pending, "pipeline": pipeline,
               "calls_made": calls, "cache_hits": hits}  # fmt: skip
    files = {"calibrated": write_jsonl(out_dir / "calibrated.jsonl", kept),
             "excluded": write_jsonl(out_dir / "excluded.jsonl", excluded),
             "trials": write_jsonl(out_dir / "trials.jsonl", rows),
             "calibration": write_json(out_dir / "calibration.json", summary)}  # fmt: skip
    return Calibration(table, out_dir, files, failed, calls, hits, pending, summary)


__all__ = ["Calibration", "calibrate"]
