"""``theorembench lmb build``: theorems of a month -> full, ge5 and hard splits, funnel and costs."""

from __future__ import annotations

import asyncio
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from theorembench.common.digest import json_digest
from theorembench.common.errors import InvalidSetting
from theorembench.common.outputs import write_json
from theorembench.common.progress import OnStep
from theorembench.common.shard import Shard, shard_settings
from theorembench.common.stats import proportion
from theorembench.evaluate.shards import finished_shards, shard_signature
from theorembench.llm import LLM
from theorembench.llm.local import stop_private_servers
from theorembench.methods.lmb.config import LMBConfig, load_config
from theorembench.methods.lmb.funnel import build_items, calibrate, eligible, select_hard
from theorembench.methods.lmb.options_only import options_only_answers
from theorembench.methods.lmb.shortcuts import shortcut_audit
from theorembench.methods.lmb.stages import Builder, BuildEvents, Source, load_source
from theorembench.pipeline.build_report import BuildResult, stage_costs
from theorembench.pipeline.identity import package_modules, pipeline_name
from theorembench.store import Store
from theorembench.store.papers import PaperRepo

STAGE_ORDER = ("sketch", "classify", "stem", "distractors", "latex", "rubric", "stem_only", "calibrate", "recheck",
               "options_only")  # fmt: skip


def month_label(month: str) -> str:
    return month.replace("-", "")


def select_sources(repo: PaperRepo, month: str, paper_ids: list[str] | None) -> tuple[list[Source], list[str]]:
    papers = [repo.find(p) for p in paper_ids] if paper_ids else repo.list(month=month)
    sources, missing = [], []
    for paper in papers:
        if paper is None:
            continue
        theorem = repo.theorem(paper["id"])
        src = load_source(paper, theorem) if theorem else None
        if src is None:
            missing.append(paper["id"])
        else:
            sources.append(src)
    return sources, missing


VERSION = "1"  # bump when the stored outputs of the build's steps change shape
SHARD_KIND = "lmb.build.shard"  # the run of one shard's theorems (its stages' steps are the build's own)


def build_pipeline(cfg: LMBConfig, month: str) -> str:
    """The build's pipeline name: LMB's version, prompts, code and settings (edit any, and its steps run again)."""
    from theorembench.methods import lmb
    from theorembench.methods.lmb import check_prompts, prompt_parts, prompts, writing_prompts

    return pipeline_name("lmb", scope=month, version=VERSION, prompts=[prompts, writing_prompts, check_prompts,
                         prompt_parts], code=package_modules(lmb), settings=cfg.model_dump(mode="json"))  # fmt: skip


def tally(outcome: Any, answers: dict[str, Any] | None, rechecked: dict[str, Any] | None,
          rubric_min: float) -> tuple[dict[str, dict[str, int]], dict[str, list[int]]]:  # fmt: skip
    """Rejections by stage and reason, and the model calls behind every stage, from the stored steps."""
    rejections: dict[str, dict[str, int]] = defaultdict(Counter)  # type: ignore[arg-type]
    calls_by_stage: dict[str, list[int]] = defaultdict(list)
    for per_key in (*outcome.sources.values(), *outcome.variants.values()):
        for stage, result in per_key.items():
            calls_by_stage[stage].extend(result.call_ids)
            if result.status in ("rejected", "failed"):
                reason = (result.reason or "").split(":")[0]
                rejections[f"{stage} {result.status}"][reason] += 1
    for stages in outcome.variants.values():
        rubric = stages.get("rubric")
        if rubric is not None and rubric.ok and not rubric.output["passed"]:
            rejections["rubric rejected"][f"total score below {rubric_min}"] += 1
    for shared in outcome.sources.values():
        stem_only = shared.get("stem_only")
        if stem_only is not None and stem_only.ok and stem_only.output["match"]:
            rejections["stem_only rejected"]["answerable from the stem alone"] += 1
    for stage, results in (("calibrate", answers), ("recheck", rechecked)):
        for ans in (results or {}).values():
            calls_by_stage[stage].extend(ans.get("call_ids", []))
    if answers is not None:
        solved = sum(1 for a in answers.values() if a["model_is_correct"])
        rejections["calibrate solved"]["answered correctly by the calibrator"] = solved
    return rejections, calls_by_stage


def split_paths(out_dir: Path, label: str, layout: str) -> dict[str, Path]:
    """Where each split and the summary go: flat in ``out_dir``, or in the released repository's layout, whose loader
    reads ``data/<YYYYMM>/hard/qaEval_<YYYYMM>_ge5_hard.json``."""
    month_dir = out_dir / "data" / label if layout == "released" else out_dir
    names = {"full": f"qaEval_{label}_full.json", "ge5": f"qaEval_{label}_ge5.json",
             "pool": f"qaEval_{label}_pool.json", "summary": "summary.json",
             "shortcut_audit": "shortcut_audit.json"}  # fmt: skip
    paths = {name: month_dir / file for name, file in names.items()}
    hard = f"qaEval_{label}_ge5_hard.json"
    paths["hard"] = month_dir / "hard" / hard if layout == "released" else month_dir / hard
    return paths


async def run_build(
    store: Store,
    llm: LLM,
    cfg: LMBConfig,
    *,
    month: str,
    out_dir: Path,
    paper_ids: list[str] | None = None,
    events: BuildEvents | None = None,
    latex_checker: Any = None,
    concurrency: int = 4,
    on_sources: Any = None,
    shard: Shard | None = None,
    merge_shards: int | None = None,
) -> BuildResult:
    """The build (see :func:`build_lmb`); ``shard``: only the per-theorem stages of the shard's papers;
    ``merge_shards``: the whole build, once every one of that many shards has finished."""
    repo = PaperRepo(store)
    sources, missing = select_sources(repo, month, paper_ids)
    pipeline = build_pipeline(cfg, month)
    signature = json_digest({"pipeline": pipeline, "papers": sorted(paper_ids) if paper_ids else None}, 24)
    if merge_shards is not None:
        finished_shards(store, SHARD_KIND, signature, merge_shards, rerun="")
    if shard is not None:
        sources = shard.select(sources, key=lambda src: src.paper_id)
    if on_sources:
        on_sources(len(sources))
    builder = Builder(store, llm, cfg, pipeline=pipeline, events=events, latex_checker=latex_checker)
    if shard is not None:
        return await _shard_build(store, llm, builder, sources, shard, shard_signature(signature, shard),
                                  month=month, out_dir=out_dir, concurrency=concurrency)  # fmt: skip
    outcome = await build_items(builder, sources, concurrency=concurrency)
    full, pool = outcome.items, outcome.pool
    ge5 = eligible(full, cfg.filters.rubric_min)
    calibrated = eligible(pool, cfg.filters.rubric_min)
    answers = await calibrate(builder, calibrated) if cfg.calibration.enabled else None
    hard = select_hard(calibrated, answers)
    rechecked = None
    if answers is not None and cfg.calibration.recheck:
        positions = {it["id"]: i for i, it in enumerate(calibrated)}  # the option order of the first pass
        rechecked = await calibrate(builder, hard, stage="recheck", sample=1, positions=positions)

    # the shortcut audit of the hard split: what answers that never read a stem get (methods/lmb/shortcuts.py)
    judge = cfg.judges[0]
    blind = (await options_only_answers(llm, builder.runner, hard, model=judge, settings=builder.judge_settings,
                                        seed=cfg.calibration.seed, concurrency=concurrency)
             if cfg.audit.options_only else None)  # fmt: skip

    label = month_label(month)
    paths = split_paths(out_dir, label, cfg.output.layout)
    files = {name: write_json(paths[name], split) for name, split in
             (("full", full), ("ge5", ge5), ("hard", hard), ("pool", pool))}  # fmt: skip
    audit = shortcut_audit(hard, options_only=blind, options_only_model=judge if blind is not None else None,
                           skipped_reason="audit.options_only is off", source=str(paths["hard"]))  # fmt: skip
    files["shortcut_audit"] = write_json(paths["shortcut_audit"], audit)
    audit_digest = {"flagged": audit["flagged"], "meta_option": audit["meta_option"], "skipped": audit["skipped"],
                    "baselines": {name: entry["estimate"] for name, entry in audit["baselines"].items()}}  # fmt: skip
    stem_nontrivial = sum(1 for it in pool if it["variant"] == "orig")
    funnel = {"theorems": len(sources), "generated": len(full), "rubric": len(ge5), "stem_nontrivial": stem_nontrivial,
              "pool": len(pool), "eligible": len(calibrated), "hard": len(hard)}  # fmt: skip

    rejections, calls_by_stage = tally(outcome, answers, rechecked, cfg.filters.rubric_min)
    for ans in (blind or {}).values():
        calls_by_stage["options_only"].extend(ans.get("call_ids", []))
    costs = stage_costs(store, calls_by_stage, len(hard), unit="accepted hard item", order=STAGE_ORDER)
    groups = len({it["source_id"] for it in calibrated})
    # as in the release: the calibrator's accuracy on the hard split in a second, independent answer
    hard_correct = sum(1 for a in rechecked.values() if a["model_is_correct"]) if rechecked is not None else None
    accuracy = proportion(hard_correct, len(rechecked)) if rechecked is not None else None
    summary = {
        "month": label,
        "full_count": len(full),
        "ge5_count": len(ge5),
        "hard_count": len(hard),
        "hard_accuracy": accuracy.value if accuracy else None,
        "hard_accuracy_ci95": accuracy.ci95 if accuracy and accuracy.n else None,
        "hard_correct": hard_correct,
        "hard_total": len(rechecked) if rechecked is not None else None,
        "funnel": funnel,
        "rejections": {k: dict(v) for k, v in rejections.items()},
        "papers_without_theorem": missing,
        "hard_selection_summary": {
            "pool_size": len(pool),
            "eligible_after_min_score": len(calibrated),
            "source_groups": groups,
            "selected_count": len(hard),
            "dropped_solved_sources": groups - len(hard),
            "min_score": float(cfg.filters.rubric_min),
        },
        "costs": costs,
        "shortcut_audit": audit_digest,
        "config": cfg.model_dump(),
    }
    if answers is not None:
        summary["calibrator_accuracy_on_pool"] = (
            sum(1 for a in answers.values() if a["model_is_correct"]) / len(answers) if answers else None
        )
    files["summary"] = write_json(paths["summary"], summary)
    return BuildResult(out_dir, files, funnel, costs, summary, rejections={k: dict(v) for k, v in rejections.items()},
                       label=label)  # fmt: skip


async def _shard_build(store: Store, llm: LLM, builder: Builder, sources: list[Source], shard: Shard, signature: str,
                       *, month: str, out_dir: Path, concurrency: int) -> BuildResult:  # fmt: skip
    """One shard's part of a build: every stage of its theorems up to the hard pool, stored as the build's own
    steps, in a run of the shard's own. Calibration, the hard split, the audit and the files need the whole pool:
    the merge makes them (it finds every theorem's steps stored and pays for none of them again)."""
    llm.run_id = run_id = store.create_run(SHARD_KIND, signature, name=f"lmb {month} shard {shard}",
                                           config={"month": month, "shard": shard.label})  # fmt: skip
    try:
        outcome = await build_items(builder, sources, concurrency=concurrency)
    except BaseException:
        store.set_run_status(run_id, "interrupted")
        raise
    funnel = {"theorems": len(sources), "generated": len(outcome.items), "pool": len(outcome.pool)}
    rejections, calls_by_stage = tally(outcome, None, None, builder.cfg.filters.rubric_min)
    costs = stage_costs(store, calls_by_stage, len(outcome.pool), unit="pooled item", order=STAGE_ORDER)
    summary = {"month": month_label(month), "shard": shard.label, "run_id": run_id, "funnel": funnel, "costs": costs}
    store.set_run_status(run_id, "finished", summary)
    return BuildResult(out_dir, {}, funnel, costs, summary, rejections={k: dict(v) for k, v in rejections.items()},
                       label=month_label(month))  # fmt: skip


def build_lmb(store: Store, *, month: str, config: Path | None = None, generator: str | None = None,
              judges: list[str] | None = None, calibrator: str | None = None, papers: list[str] | None = None,
              out_dir: Path | None = None, overrides: dict[str, Any] | None = None, concurrency: int = 4,
              on_sources: Callable[[int, int], None] | None = None, on_step: OnStep | None = None,
              shard: str | Shard | None = None, merge_shards: int | None = None) -> BuildResult:  # fmt: skip
    """Build a month's splits from the stored theorems (or the given papers'); resumable.

    Settings come from the defaults, then ``config``, then the explicit arguments and
    ``overrides`` (dotted keys). Every model is checked before any work starts; a bad
    setting or model raises ``UserError``. ``on_sources(n_sources, stages_per_source)``
    is called once, ``on_step(key, stage, status)`` after every stage (as in every build).

    ``shard="i/N"`` runs only the per-theorem stages of the papers shard i of N owns (by a hash of the paper
    id), writing no file; ``merge_shards=N``, once the N shards have finished on this store, runs the build
    over every paper: it finds their steps stored, makes the stages over the whole pool, and writes the files.
    """
    shard, merge = shard_settings(shard, merge_shards)
    if not re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])", month):
        raise InvalidSetting("month", f"must be YYYY-MM, got {month!r}")
    cfg = load_config(config, **{"models.generator": generator, "models.judges": judges or None,
                                 "models.calibrator": calibrator, **(overrides or {})})  # fmt: skip
    checker = None
    if cfg.latex.check:  # an item the check could not check is never stored: refuse now, before any call
        from theorembench.latex.check import available
        from theorembench.latex.check import check_item_async as checker

        missing = {engine: why for engine, why in available().items() if why}
        if missing:
            raise InvalidSetting("latex.check=false", template=f"the LaTeX check cannot run: {'; '.join(missing.values())}."
                                 " Install what is missing, or turn the check off ({setting})")  # fmt: skip
    llm = LLM(store)
    for name in {cfg.models.generator, *cfg.judges, cfg.calibrator}:
        llm.resolve(name)
    stages_per_source = 4 + cfg.generation.variants * 4  # an upper bound: alternatives only for pooled items

    def sources_found(n: int) -> None:
        if on_sources is not None:
            on_sources(n, stages_per_source)

    async def go() -> BuildResult:
        try:
            return await run_build(store, llm, cfg, month=month, out_dir=out_dir or Path("lmb") / month_label(month),
                                   paper_ids=papers, events=BuildEvents(on_step=on_step), latex_checker=checker,
                                   concurrency=concurrency, on_sources=sources_found, shard=shard,
                                   merge_shards=merge)  # fmt: skip
        finally:
            await llm.aclose()

    try:
        return asyncio.run(go())
    finally:
        stop_private_servers()
