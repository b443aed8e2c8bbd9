"""The results document of a harness run: per problem its stages, answers, verdicts and weighted score; per model
the mean weighted score with a bootstrap 95% interval over problems, tier metadata, and token and tool usage."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from theorembench.common.stats import bootstrap_mean
from theorembench.methods.improof import autograde
from theorembench.methods.improof.problems import Problem
from theorembench.methods.improof.tiers import generation_params, grading_priority, human_graded
from theorembench.store import Store


def safe_name(model: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("_") or "model"


def _verdicts(store: Store, answer_id: str) -> list[dict[str, Any]]:
    return [{k: v[k] for k in ("sub_index", "expected", "points", "correct", "warning", "extracted", "source",
                               "verified")} for v in autograde.effective_verdicts(store, answer_id)]  # fmt: skip


def _usage(conversations: list[dict[str, Any]]) -> dict[str, Any]:
    fields = ("input_tokens", "output_tokens", "reasoning_tokens", "turns")
    main: Counter[str] = Counter()
    subs: Counter[str] = Counter()
    tools: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    for c in conversations:
        for s in c["stages"]:
            target = main if s["stage"] == 0 else subs
            for f in fields:
                target[f] += int(s.get(f) or 0)
            tools.update(s.get("tool_calls") or {})
            outcomes[s["outcome"] or "error"] += 1
    return {"main_stage": {f: main[f] for f in fields}, "subquestion_stages": {f: subs[f] for f in fields},
            "tool_calls": dict(sorted(tools.items())), "stage_outcomes": dict(sorted(outcomes.items())),
            "note": "output_tokens include reasoning_tokens; the budgets meter output_tokens"}  # fmt: skip


def build_results(store: Store, *, run_id: str, model: str, endpoint: str, tier: int | None, settings: dict[str, Any],
                  problems: list[Problem], conversations: dict[tuple[str, int], dict[str, Any]], epochs: int,
                  pipeline: str, log: str | None) -> dict[str, Any]:  # fmt: skip
    """The results JSON; ``conversations`` maps (problem id, epoch) to the solver's result (``answer_id`` added)."""
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
        scores = [r["weighted_score"] for r in runs if r.get("weighted_score") is not None]
        mean = sum(scores) / len(scores) if scores else None
        if mean is not None:
            problem_means.append(mean)
        per_problem.append({"problem_id": p.id, "version": p.version, "title": p.title,
                            "points": [s.points for s in p.subquestions], "epochs": runs,
                            "mean_weighted_score": mean})  # fmt: skip
    finished = list(conversations.values())
    estimate = bootstrap_mean(problem_means)
    return {
        "kind": "improof.eval", "run_id": run_id, "pipeline": pipeline, "log": log,
        "model": {"name": model, "endpoint": endpoint, "tier": tier, "human_graded": human_graded(tier),
                  "grading_priority": grading_priority(tier), "table1_params": generation_params(model)},
        "settings": settings, "epochs": epochs, "grader_version": autograde.GRADER_VERSION,
        "summary": {"mean_weighted_score": estimate.to_dict(), "problems_scored": len(problem_means),
                    "problems": len(problems), "conversations": len(finished),
                    "incomplete": sum(not c["complete"] for c in finished),
                    "interval": "bootstrap over problems of each problem's mean weighted score over its epochs"},
        "usage": _usage(finished),
        "problems": per_problem,
    }  # fmt: skip
