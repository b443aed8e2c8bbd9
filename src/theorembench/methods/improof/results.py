"""The results document of a harness run: per problem its stages, answers, verdicts and weighted score; per model
the mean weighted score as an estimate (Wilson interval at the mean over problems, see
:func:`theorembench.common.stats.bounded_mean`), tier metadata, token and tool usage, and the priced cost."""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from theorembench.common.stats import bounded_mean
from theorembench.methods.improof import autograde
from theorembench.methods.improof.model_tiers import generation_params, grading_priority, human_graded, match_model
from theorembench.methods.improof.problems import Problem
from theorembench.store import Store


def safe_name(model: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("_") or "model"


def results_name(model: str, mode: str, digest: str) -> str:
    """``results_<model>_<mode>_<digest>.json``: the settings digest (the run's pipeline identity) keeps apart the
    results of one model and mode under other settings (budgets, tools, wording, Table 1 parameters)."""
    return f"results_{safe_name(model)}_{mode}_{digest}.json"


def run_isolation(store: Store, run_id: str) -> dict[str, Any] | None:
    """The sandbox isolation this run recorded (the weakest of its invocations); None when it recorded none."""
    row = store.get_run(run_id)
    summary = row["summary"] if row is not None else None
    if isinstance(summary, str):
        summary = json.loads(summary)
    return summary.get("isolation") if isinstance(summary, dict) else None


def _verdicts(store: Store, answer_id: str) -> list[dict[str, Any]]:
    return [{k: v[k] for k in ("sub_index", "expected", "points", "correct", "warning", "extracted", "source",
                               "verified")} for v in autograde.effective_verdicts(store, answer_id)]  # fmt: skip


def _usage(conversations: list[dict[str, Any]]) -> dict[str, Any]:
    fields = ("input_tokens", "output_tokens", "reasoning_tokens", "turns")
    main: Counter[str] = Counter()
    subs: Counter[str] = Counter()
    tools: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    budget: Counter[str] = Counter()
    for c in conversations:
        for s in c["stages"]:
            budget["over_budget_answers"] += bool(s.get("over_budget"))
            budget["discarded_answers"] += s.get("discarded_answer") is not None
            target = main if s["stage"] == 0 else subs
            for f in fields:
                target[f] += int(s.get(f) or 0)
            tools.update(s.get("tool_calls") or {})
            outcomes[s["outcome"] or "error"] += 1
    return {"main_stage": {f: main[f] for f in fields}, "subquestion_stages": {f: subs[f] for f in fields},
            "tool_calls": dict(sorted(tools.items())), "stage_outcomes": dict(sorted(outcomes.items())),
            "over_budget_answers": budget["over_budget_answers"], "discarded_answers": budget["discarded_answers"],
            "note": "output_tokens include reasoning_tokens; the budgets meter output_tokens"}  # fmt: skip


def build_results(store: Store, *, run_id: str, model: str, endpoint: str, tier: int | None, settings: dict[str, Any],
                  problems: list[Problem], conversations: dict[tuple[str, int], dict[str, Any]], epochs: int,
                  pipeline: str, log: str | None, isolation: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    """The results JSON; ``conversations`` maps (problem id, epoch) to the solver's result (``answer_id`` added);
    ``isolation`` is the sandbox isolation of the tools (see ``theorembench.sandbox.isolation_record``)."""
    per_problem = []
    problem_means: list[float] = []
    for p in problems:
        runs = []
        for epoch in range(1, epochs + 1):
            c = conversations.get((p.id, epoch))
            if c is None:
                runs.append({"epoch": epoch, "complete": False, "error": "not run (the sample did not finish)"})
                continue
            entry = {"epoch": epoch, "complete": c["complete"], "answer_id": c.get("answer_id"), "stages": c["stages"],
                     "main_answer": c["main_answer"], "sub_answers": c["sub_answers"],
                     "turns_replayed": c["turns_replayed"], "turns_live": c["turns_live"]}  # fmt: skip
            if c.get("answer_id"):
                entry["verdicts"] = _verdicts(store, c["answer_id"])
                entry["weighted_score"] = autograde.answer_score(store, c["answer_id"])
            else:
                entry["error"] = next((s["error"] for s in c["stages"] if s.get("error")), None)
            runs.append(entry)
        # every epoch counts: one without a score (no answer: refused for good, or not finished yet) scores 0
        scores = [r.get("weighted_score") or 0.0 for r in runs]
        mean = sum(scores) / len(scores) if scores else None
        if mean is not None:
            problem_means.append(mean)
        per_problem.append({"problem_id": p.id, "version": p.version, "title": p.title,
                            "points": [s.points for s in p.subquestions], "epochs": runs,
                            "mean_weighted_score": mean})  # fmt: skip
    finished = list(conversations.values())
    failed = sum(1 for p in per_problem for r in p["epochs"] if r.get("weighted_score") is None)
    estimate = bounded_mean(problem_means, errors=failed)
    usage = _usage(finished)
    table1 = match_model(model)
    return {
        "kind": "improof.eval", "run_id": run_id, "pipeline": pipeline, "log": log,
        "model": {"name": model, "endpoint": endpoint, "tier": tier, "human_graded": human_graded(tier),
                  "grading_priority": grading_priority(tier), "table1_params": generation_params(model),
                  "table1": table1.to_dict() if table1 else None},
        "settings": settings, "epochs": epochs, "grader_version": autograde.GRADER_VERSION, "isolation": isolation,
        "checker_version": autograde.CHECKER_VERSION,
        "summary": {"mean_weighted_score": estimate.to_dict(), "score": estimate.to_dict(),
                    "score_metric": "mean weighted score", "problems_scored": len(problem_means),
                    "problems": len(problems), "conversations": len(finished),
                    "incomplete": sum(not c["complete"] for c in finished),
                    "interval": "Wilson at the mean over problems of each problem's mean weighted score over its "
                                "epochs; errors: epochs without a score (counted as 0, in n)"},
        "usage": usage,
        "problems": per_problem,
    }  # fmt: skip
