"""``calibrate``: every instance answered K times by every model of a suite, then tiered.

Each trial is a step (instance, model, trial index) of the pipeline
``eternal.calibrate/<settings digest>``; the suite is not part of the pipeline name, so a
calibration with a changed suite asks only the models that are new. A trial whose model
call was refused for good (a 400 such as "prompt is too long") is a final outcome, not
correct (status ``error``), as in evaluation. A trial whose call failed transiently is a
failed step: it has no outcome, its instance stays pending (listed in ``calibration.json``)
and the next run asks it again; finished trials are never asked twice.

Writes to ``out_dir``: ``calibrated.jsonl`` (the kept instances with ``tier``,
``n_models_correct`` and ``suite_size``), ``excluded.jsonl`` (by default: answered right by every
model in every trial, the paper's rule),
``trials.jsonl`` (one row per model per trial, from which ``difficulty.tiers_from_rows``
recomputes tiers for another suite or rule) and ``calibration.json`` (the tier table).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from theorembench.common.errors import InvalidSetting, UserError
from theorembench.common.outputs import write_json, write_jsonl
from theorembench.common.progress import OnCount
from theorembench.evaluate.answers import CHECKER_VERSION
from theorembench.evaluate.samples import Sample, Scored, run_samples
from theorembench.llm import LLM
from theorembench.llm.local import stop_private_servers
from theorembench.methods.eternal.answering import (
    AnswerTask,
    SharedChecker,
    Variant,
    answer_pipeline,
    answer_settings,
    load_instances,
    progress_counter,
    resolve_models,
    settings_digest,
)
from theorembench.methods.eternal.difficulty import (
    Assignment,
    check_exclusion,
    parse_rule,
    tier_ranges,
    tier_table,
    tiers_from_rows,
)
from theorembench.pipeline.steps import StepRunner
from theorembench.store import Store


EXCLUDED_BECAUSE = {"all_trials": "every model of the suite answered right in every trial (the paper's rule)",
                    "rule": "every model of the suite correct by the rule"}


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
              exclusion: str = "all_trials", out_dir: str | Path = Path("eternal_calibration"),
              progress: OnCount | None = None, max_tokens: int | None = None, temperature: float | None = None,
              seed: int | None = None, max_retries: int = 3, max_connections: int | None = None,
              reasoning_effort: str | None = None, thinking_budget: int | None = None, timeout: float | None = None,
              use_cache: bool = True) -> Calibration:  # fmt: skip
    """Answer every instance ``trials`` times with every model of ``suite``, grade, tier and write the files.

    A suite entry ``model@high`` (or ``@xhigh`` ...) is that model at that reasoning effort, as the paper's
    GPT-5.1-high. ``exclusion``: ``all_trials`` (the paper's rule: an instance every model answered right in
    every trial is excluded) or ``rule`` (every model correct by ``rule``). ``progress(done, total)`` is called
    once before the first request and after every trial (stored trials count at once). Resumable: run it again
    to retry failed trials.
    """
    try:
        parsed = parse_rule(rule)
        parsed.check(trials)
        check_exclusion(exclusion)
    except ValueError as exc:  # "<setting>: <problem>" (trials, rule or exclusion)
        setting, _, problem = str(exc).partition(": ")
        raise InvalidSetting(setting, problem) if problem else UserError(str(exc)) from None
    settings = answer_settings(max_tokens=max_tokens, temperature=temperature, seed=seed, max_retries=max_retries,
                               max_connections=max_connections, reasoning_effort=reasoning_effort,
                               thinking_budget=thinking_budget, timeout=timeout)  # fmt: skip
    instances = load_instances(instances_path)
    llm = LLM(store, use_cache=use_cache)
    specs = resolve_models(llm, suite, "suite", settings)
    names = [v.label for v in specs]
    pipeline = answer_pipeline("eternal.calibrate", settings)
    runner = StepRunner(store, pipeline)
    config = {"suite": names, "trials": trials, "rule": str(parsed), "exclusion": exclusion,
              "file": str(instances_path)}  # fmt: skip
    llm.run_id = store.create_run("eternal.calibrate", settings_digest(pipeline, config), name=str(instances_path),
                                  config=config)  # fmt: skip
    outcomes: dict[tuple[str, str, int], Scored] = {}
    note = progress_counter(progress, len(instances) * len(specs) * trials)

    async def go() -> None:
        checker = SharedChecker()
        try:
            async def one(v: Variant) -> None:  # one sample loop per model of the suite, all at once
                task = AnswerTask(runner, llm, v.spec, instances, v.settings, checker, purpose="eternal.calibrate",
                                  label=v.label)  # fmt: skip
                samples = [Sample(i, inst["instance_id"], k) for i, inst in enumerate(instances) for k in range(trials)]
                for sc in await run_samples(runner, task, samples, progress=note):
                    outcomes[(sc.sample.id, v.label, sc.sample.epoch)] = sc

            await asyncio.gather(*(one(spec) for spec in specs))
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
    assignments = tiers_from_rows(rows, [i["instance_id"] for i in instances], names, trials, parsed, exclusion)
    result = _write(Path(out_dir), instances, rows, assignments, names=names, trials=trials, rule=str(parsed),
                    exclusion=exclusion, pipeline=pipeline, calls=llm.calls_made - calls_before,
                    hits=llm.cache_hits - hits_before)  # fmt: skip
    store.set_run_status(llm.run_id, "finished", {"table": result.table, "failed_trials": result.failed_trials})
    return result


def _trial_rows(instances: list[dict[str, Any]], models: list[str], trials: int,
                outcomes: dict[tuple[str, str, int], Scored]) -> list[dict[str, Any]]:  # fmt: skip
    rows = []
    for inst in instances:
        for model in models:
            for k in range(trials):
                res = outcomes[(inst["instance_id"], model, k)]
                if res.answered:
                    out = res.detail
                    rows.append({"instance_id": inst["instance_id"], "model": model, "trial": k, "status": "ok",
                                 "correct": bool(out["correct"]), "extracted": out.get("extracted"),
                                 "unreadable": bool(out.get("unreadable")), "call_id": out.get("call_id")})  # fmt: skip
                else:  # refused for good (a 400): an outcome, not correct; a transient failure: no outcome yet
                    final = res.status == "error"
                    rows.append({"instance_id": inst["instance_id"], "model": model, "trial": k,
                                 "status": "error" if final else "failed", "correct": False if final else None,
                                 "reason": res.error, "call_id": res.call_ids[-1] if res.call_ids else None})  # fmt: skip
    return rows


def _write(out_dir: Path, instances: list[dict[str, Any]], rows: list[dict[str, Any]],
           assignments: list[Assignment], *, names: list[str], trials: int, rule: str, exclusion: str,
           pipeline: str,
           calls: int, hits: int) -> Calibration:  # fmt: skip
    by_id = {a.instance_id: a for a in assignments}
    kept, excluded = [], []
    for inst in instances:
        a = by_id[inst["instance_id"]]
        if a.status == "tiered":
            kept.append({**inst, "tier": a.tier, "n_models_correct": a.n_models_correct, "suite_size": a.suite_size})
        elif a.status == "excluded":
            excluded.append({**inst, "n_models_correct": a.n_models_correct, "suite_size": a.suite_size,
                             "excluded_because": EXCLUDED_BECAUSE[exclusion]})  # fmt: skip
    table = tier_table(assignments)
    pending = [a.instance_id for a in assignments if a.status == "pending"]
    failed = sum(r["status"] != "ok" for r in rows)
    per_model = {m: {"trials": sum(r["model"] == m and r["status"] == "ok" for r in rows),
                     "correct_trials": sum(r["model"] == m and r["correct"] is True for r in rows),
                     "instances_correct": sum(m in a.models_correct for a in assignments)} for m in names}  # fmt: skip
    summary = {"suite": names, "suite_size": len(names), "trials": trials, "rule": rule, "exclusion": exclusion,
               "excluded_because": EXCLUDED_BECAUSE[exclusion], "thresholds": tier_ranges(len(names), exclusion),
               "table": table, "per_model": per_model,
               "failed_trials": failed, "refused_trials": sum(r["status"] == "error" for r in rows),
               "pending": pending, "pipeline": pipeline, "checker_version": CHECKER_VERSION,
               "calls_made": calls, "cache_hits": hits}  # fmt: skip
    files = {"calibrated": write_jsonl(out_dir / "calibrated.jsonl", kept),
             "excluded": write_jsonl(out_dir / "excluded.jsonl", excluded),
             "trials": write_jsonl(out_dir / "trials.jsonl", rows),
             "calibration": write_json(out_dir / "calibration.json", summary)}  # fmt: skip
    return Calibration(table, out_dir, files, failed, calls, hits, pending, summary)


__all__ = ["Calibration", "calibrate"]
