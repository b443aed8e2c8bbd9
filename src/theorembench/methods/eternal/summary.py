"""The build's output files, its funnel and the cost of every stage (``summary.json``).

Files written to the output folder:

* ``templates.json``: the templates that passed every check and review (a JSON list, the
  input format of ``theorembench eternal instantiate``);
* ``instances.jsonl``: their instances; ``rejections.jsonl``: every rejected template or
  instance with its stage and reason (the instantiate stages, plus ``translation``,
  ``screening``, ``originality`` and ``validity``);
* ``papers.jsonl``: each paper's checks, classes, and the stage that stopped it;
* ``summary.json``: the funnel, how many papers each authority rule passes, Table 1 (the share of
  the instances' papers per MSC class), rejections by stage, failed steps, usage and cost by stage
  (from the usage ledger, through the ids each step keeps), notes, the settings, and the sandbox
  isolation the code was validated under (also on every instance: :func:`stamp_isolation`).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from theorembench.common.outputs import write_json, write_jsonl
from theorembench.methods.eternal.authority import rule_counts
from theorembench.methods.eternal.config import EternalConfig
from theorembench.methods.eternal.release import msc_table
from theorembench.pipeline.build_report import BuildResult, calls_by_stage, stage_costs
from theorembench.sandbox import describe
from theorembench.store import Store

FUNNEL = (
    ("papers", "papers"), ("recent", "recent"), ("authoritative", "authoritative"),
    ("classified", "classified (not excluded)"), ("in_scope", "in the requested classes"), ("computable", "computable"),
    ("templates", "templates"), ("well_formed", "well-formed"), ("validated_templates", "validated templates"),
    ("reviewed_templates", "reviewed templates"), ("instances", "instances"),
)  # fmt: skip
_PAPER_STAGES = ("recency", "authority", "classify", "msc", "computability", "templates")


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


def build_costs(store: Store, builder: Any, instances: int) -> list[dict[str, Any]]:
    """The cost table of the build's stages (the one shape of every build), per instance."""
    return stage_costs(store, calls_by_stage({stage: r.values() for stage, r in builder.results.items()}), instances,
                       unit="instance", order=builder.results)  # fmt: skip


def failed_steps(builder: Any) -> dict[str, list[str]]:
    """Steps whose model calls failed for good: not outcomes, they run again on the next build."""
    out = {stage: sorted(k for k, r in results.items() if r.status == "failed")
           for stage, results in builder.results.items()}  # fmt: skip
    return {k: v for k, v in out.items() if v}


def stamp_isolation(instances: list[dict[str, Any]], record: dict[str, Any]) -> None:
    """Each instance says under which sandbox isolation it was validated: the layers of its own run (else the
    record's), whether they were full, and whether weaker isolation was accepted for it."""
    for inst in instances:
        ex = inst.setdefault("execution", {})
        found = describe(ex.get("isolation") or record["layers"], bool(record.get("weak_isolation_accepted")))
        ex.update(isolation=found["layers"], full_isolation=found["full"],
                  weak_isolation_accepted=found["weak_isolation_accepted"])  # fmt: skip


def write_outputs(store: Store, builder: Any, c: Any, out_dir: Path, *, restrict: list[str],
                  month: str | None, isolation: dict[str, Any] | None = None) -> BuildResult:  # fmt: skip
    cfg: EternalConfig = builder.cfg
    if isolation is not None:
        stamp_isolation(c.instances, isolation)
    funnel = funnel_counts(c.papers, c)
    costs = build_costs(store, builder, funnel["instances"])
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
        "authority_rules": rule_counts(list(c.sources.values()), cfg.filter),
        "msc_table": msc_table(c.instances),
        "failed_steps": failed_steps(builder), "costs": costs, "instantiate": c.run_summary, "notes": c.notes,
        "isolation": isolation, "config": cfg.model_dump(),
    }  # fmt: skip
    files["summary"] = write_json(out_dir / "summary.json", summary)
    return BuildResult(out_dir, files, funnel, costs, summary, rejections=summary.get("rejections_by_stage") or {})


__all__ = ["FUNNEL", "BuildResult", "build_costs", "failed_steps", "funnel_counts", "stamp_isolation", "write_outputs"]
