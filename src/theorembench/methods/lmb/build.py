"""``theorembench lmb build``: theorems of a month -> full, ge5 and hard splits, funnel and costs."""

from __future__ import annotations

import asyncio
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from theorembench.common.errors import UserError
from theorembench.common.outputs import write_json
from theorembench.common.stats import proportion
from theorembench.llm import LLM
from theorembench.llm.local import stop_private_servers
from theorembench.methods.lmb.config import LMBConfig, load_config
from theorembench.methods.lmb.funnel import build_items, calibrate, eligible, select_hard
from theorembench.methods.lmb.pipeline import Builder, BuildEvents, Source, load_source
from theorembench.store import Store
from theorembench.store.papers import PaperRepo

STAGE_ORDER = ("sketch", "classify", "stem", "distractors", "latex", "rubric", "stem_only", "calibrate", "recheck")


@dataclass
class BuildResult:
    month: str
    files: dict[str, Path]
    funnel: dict[str, int]
    rejections: dict[str, dict[str, int]]
    costs: list[dict[str, Any]]
    summary: dict[str, Any]


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


def stage_costs(store: Store, calls_by_stage: dict[str, list[int]], accepted: int) -> list[dict[str, Any]]:
    rows = []
    for stage in [*STAGE_ORDER, *sorted(set(calls_by_stage) - set(STAGE_ORDER))]:
        ids = sorted(set(calls_by_stage.get(stage, [])))
        if not ids:
            continue
        u = store.usage_of_calls(ids)
        rows.append({
            "stage": stage, "calls": u["calls"], "prompt_tokens": u["prompt_tokens"],
            "completion_tokens": u["completion_tokens"], "cost_usd": u["cost_usd"],
            "calls_per_accepted": u["calls"] / accepted if accepted else None,
            "tokens_per_accepted": (u["prompt_tokens"] + u["completion_tokens"]) / accepted if accepted else None,
            "cost_per_accepted": (u["cost_usd"] / accepted) if accepted and u["cost_usd"] is not None else None,
        })  # fmt: skip
    return rows


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
) -> BuildResult:
    repo = PaperRepo(store)
    sources, missing = select_sources(repo, month, paper_ids)
    if on_sources:
        on_sources(len(sources))
    builder = Builder(store, llm, cfg, pipeline=f"lmb/{month}/{cfg.key()}", events=events,
                      latex_checker=latex_checker)  # fmt: skip
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

    label = month_label(month)
    files = {
        "full": write_json(out_dir / f"qaEval_{label}_full.json", full),
        "ge5": write_json(out_dir / f"qaEval_{label}_ge5.json", ge5),
        "hard": write_json(out_dir / f"qaEval_{label}_ge5_hard.json", hard),
        "pool": write_json(out_dir / f"qaEval_{label}_pool.json", pool),
    }
    stem_nontrivial = sum(1 for it in pool if it["variant"] == "orig")
    funnel = {"theorems": len(sources), "generated": len(full), "rubric": len(ge5), "stem_nontrivial": stem_nontrivial,
              "pool": len(pool), "eligible": len(calibrated), "hard": len(hard)}  # fmt: skip

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
            rejections["rubric rejected"][f"total score below {cfg.filters.rubric_min}"] += 1
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
    costs = stage_costs(store, calls_by_stage, len(hard))
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
        "config": cfg.model_dump(),
    }
    if answers is not None:
        summary["calibrator_accuracy_on_pool"] = (
            sum(1 for a in answers.values() if a["model_is_correct"]) / len(answers) if answers else None
        )
    files["summary"] = write_json(out_dir / "summary.json", summary)
    return BuildResult(label, files, funnel, {k: dict(v) for k, v in rejections.items()}, costs, summary)


def build_lmb(store: Store, *, month: str, config: Path | None = None, generator: str | None = None,
              judges: list[str] | None = None, calibrator: str | None = None, papers: list[str] | None = None,
              out_dir: Path | None = None, overrides: dict[str, Any] | None = None, concurrency: int = 4,
              on_sources: Callable[[int, int], None] | None = None,
              on_stage: Callable[[str, str, str], None] | None = None) -> BuildResult:  # fmt: skip
    """Build a month's splits from the stored theorems (or the given papers'); resumable.

    Settings come from the defaults, then ``config``, then the explicit arguments and
    ``overrides`` (dotted keys). Every model is checked before any work starts; a bad
    setting or model raises ``UserError``. ``on_sources(n_sources, stages_per_source)``
    is called once, ``on_stage(key, stage, status)`` after every stage.
    """
    if not re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])", month):
        raise UserError(f"--month must be YYYY-MM, got {month!r}")
    cfg = load_config(config, **{"models.generator": generator, "models.judges": judges or None,
                                 "models.calibrator": calibrator, **(overrides or {})})  # fmt: skip
    checker = None
    if cfg.latex.check:  # an item the check could not check is never stored: refuse now, before any call
        from theorembench.latex.check import available
        from theorembench.latex.check import check_item_async as checker

        missing = {engine: why for engine, why in available().items() if why}
        if missing:
            raise UserError(f"the LaTeX check cannot run: {'; '.join(missing.values())}. Install what is "
                            "missing, or turn the check off (--no-latex-check, or check = false under [latex])")  # fmt: skip
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
                                   paper_ids=papers, events=BuildEvents(on_stage=on_stage), latex_checker=checker,
                                   concurrency=concurrency, on_sources=sources_found)  # fmt: skip
        finally:
            await llm.aclose()

    try:
        return asyncio.run(go())
    finally:
        stop_private_servers()
