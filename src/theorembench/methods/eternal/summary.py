"""The build's output files, its funnel and the cost of every stage (``summary.json``).

Files written to the output folder:

* ``templates.json``: the templates that passed every check and review (a JSON list, the
  input format of ``theorembench eternal instantiate``);
* ``instances.jsonl``: their instances; ``rejections.jsonl``: every rejected template or
  instance with its stage and reason (the instantiate stages, plus ``translation``,
  ``screening``, ``originality`` and ``validity``);
* ``papers.jsonl``: each paper's checks, classes, and the stage that stopped it;
* ``summary.json``: the funnel, rejections by stage, failed steps, usage and cost by stage
  (from the usage ledger, through the ids each step keeps), notes and the settings.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from theorembench.common.outputs import write_json, write_jsonl
from theorembench.methods.eternal.config import EternalConfig
from theorembench.store import Store

FUNNEL = (
    ("papers", "papers"), ("recent", "recent"), ("authoritative", "authoritative"),
    ("classified", "classified (not excluded)"), ("in_scope", "in --msc scope"), ("computable", "computable"),
    ("templates", "templates"), ("well_formed", "well-formed"), ("validated_templates", "validated templates"),
    ("reviewed_templates", "reviewed templates"), ("instances", "instances"),
)  # fmt: skip
_PAPER_STAGES = ("recency", "authority", "classify", "msc", "computability", "templates")


@dataclass
class BuildResult:
    out_dir: Path
    files: dict[str, Path]
    funnel: dict[str, int]
    costs: list[dict[str, Any]]
    summary: dict[str, Any]


def funnel_counts(papers: list[Any], c: Any) -> dict[str, int]:
    """How many papers got past each paper stage, then the template and instance counts."""

    def past(stage: str) -> int:
        cut = _PAPER_STAGES.index(stage)
        return sum(1 for p in papers if p.stopped is None or _PAPER_STAGES.index(p.stopped) > cut)

    return {
        "papers": len(papers), "recent": past("recency"), "authoritative": past("authority"),
        "classified": past("classify"), "in_scope": past("msc"), "computable": past("computability"),
        "templates": len(c.generated), "well_formed": len(c.parsed), "validated_templates": len(c.validated),
        "reviewed_templates": len(c.reviewed), "instances": len(c.instances),
    }  # fmt: skip


def stage_costs(store: Store, builder: Any, instances: int) -> list[dict[str, Any]]:
    rows = []
    for stage, results in builder.results.items():
        ids = sorted({i for r in results.values() for i in r.call_ids})
        if not ids:
            continue
        u = store.usage_of_calls(ids)
        rows.append({"stage": stage, "calls": u["calls"], "prompt_tokens": u["prompt_tokens"],
                     "completion_tokens": u["completion_tokens"], "cost_usd": u["cost_usd"],
                     "cost_per_instance": u["cost_usd"] / instances if instances and u["cost_usd"] is not None
                     else None})  # fmt: skip
    all_ids = sorted({i for results in builder.results.values() for r in results.values() for i in r.call_ids})
    if all_ids:
        u = store.usage_of_calls(all_ids)
        rows.append({"stage": "total", "calls": u["calls"], "prompt_tokens": u["prompt_tokens"],
                     "completion_tokens": u["completion_tokens"], "cost_usd": u["cost_usd"],
                     "cost_per_instance": u["cost_usd"] / instances if instances and u["cost_usd"] is not None
                     else None})  # fmt: skip
    return rows


def failed_steps(builder: Any) -> dict[str, list[str]]:
    """Steps whose model calls failed for good: not outcomes, they run again on the next build."""
    out = {stage: sorted(k for k, r in results.items() if r.status == "failed")
           for stage, results in builder.results.items()}  # fmt: skip
    return {k: v for k, v in out.items() if v}


def write_outputs(store: Store, builder: Any, c: Any, out_dir: Path, *, restrict: list[str],
                  month: str | None) -> BuildResult:  # fmt: skip
    cfg: EternalConfig = builder.cfg
    funnel = funnel_counts(c.papers, c)
    costs = stage_costs(store, builder, funnel["instances"])
    papers = [{"paper_id": p.paper_id, "title": p.title, "msc": p.msc, "checks": p.checks, "stopped_at": p.stopped,
               "status": p.status, "reason": p.reason, "templates": [t["template_id"] for t in p.templates]}
              for p in c.papers]  # fmt: skip
    by_stage = Counter(r.get("stage") for r in c.rejections)
    stopped = Counter(f"{p.stopped} {p.status}" for p in c.papers if p.stopped)
    files = {
        "templates": write_json(out_dir / "templates.json", [t.to_dict() for t in c.reviewed]),
        "instances": write_jsonl(out_dir / "instances.jsonl", c.instances),
        "rejections": write_jsonl(out_dir / "rejections.jsonl", c.rejections),
        "papers": write_jsonl(out_dir / "papers.jsonl", papers),
    }
    summary = {
        "month": month, "msc": restrict, "reference_date": cfg.filter.reference().isoformat(),
        "funnel": funnel, "papers_stopped": dict(sorted(stopped.items())),
        "rejections_by_stage": dict(sorted(by_stage.items(), key=lambda kv: str(kv[0]))),
        "failed_steps": failed_steps(builder), "costs": costs, "instantiate": c.run_summary, "notes": c.notes,
        "config": cfg.model_dump(),
    }  # fmt: skip
    files["summary"] = write_json(out_dir / "summary.json", summary)
    return BuildResult(out_dir, files, funnel, costs, summary)


__all__ = ["FUNNEL", "BuildResult", "failed_steps", "funnel_counts", "stage_costs", "write_outputs"]
