"""An MCQ run's documents: the results file (the released layout with theorembench's additions) and its Inspect
log, the same for one run and for the merge of its shards. ``cfg`` is the run's
:class:`~theorembench.evaluate.mcq.runner.MCQConfig`."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from theorembench.evaluate.inspect_log import LogSample, default_log_dir, write_inspect_log
from theorembench.evaluate.mcq.items import Dataset
from theorembench.llm import ModelSpec


def output_doc(cfg: Any, dataset: Dataset, spec: ModelSpec, indices: list[int],
                ordered: dict[int, dict[str, Any]], summary: dict[str, Any], started_at: datetime,
                run_id: str) -> dict[str, Any]:  # fmt: skip
    """The results file, in the released layout with theorembench's additions."""
    all_block = summary["all"]
    return {
        "test_info": {
            "date": started_at.strftime("%Y-%m-%d"),
            "model": cfg.model,
            "month": dataset.month,
            "reasoning_effort": cfg.settings.reasoning_effort,
            "max_tokens": cfg.settings.max_tokens or (cfg.settings.extra_body or {}).get("max_completion_tokens"),
            "seed": cfg.seed,
            "n_samples": cfg.n,
            "total_candidates": len(dataset.items),
            "total_tested": len(indices),
            "timestamp": started_at.isoformat(),
            "sketch": cfg.sketch,
            "prompt_style": cfg.prompt_style,
            "file": str(dataset.path),
            "dataset_sha256": dataset.id,
            "run_id": run_id,
            "endpoint": spec.endpoint,
            "revision": spec.revision,
            "temperature": cfg.settings.temperature,
            "top_p": cfg.settings.top_p,
            "preset": cfg.preset,
            "system_prompt": cfg.prompt_sources.get("system_prompt", f"theorembench ({cfg.prompt_style})"),
            "user_template": cfg.prompt_sources.get("user_template", "released layout"),
        },
        "summary": summary,
        "overall": dict(all_block),
        "detailed_results": [ordered[i] for i in indices],
    }


def write_log(cfg: Any, dataset: Dataset, indices: list[int], records: dict[int, dict[str, Any]],
               transcripts: dict[int, list[dict[str, str]]], summary: dict[str, Any],
               started_at: datetime, run_id: str) -> Path:  # fmt: skip
    samples: list[LogSample] = []
    for i in indices:
        rec = records[i]
        item = dataset.items[i]
        msgs = transcripts.get(i) or cfg.prompt_for(item, i)[1]
        per_sample = rec["samples"] or [rec]
        for epoch, s in enumerate(per_sample, start=1):
            samples.append(
                LogSample(
                    id=item.id, epoch=epoch, messages=msgs, target=rec["correct_answer"],
                    completion=s["raw_response"] or (f"[error] {s['error']}" if s.get("error") else ""),
                    reasoning=s.get("reasoning"), score_value="C" if s["is_correct"] else "I",
                    answer=s["model_answer"],
                    explanation=s.get("error") or f"extracted {s['model_answer']!r}, keyed {rec['correct_answer']}",
                    metadata={"index": i, "theorem_type": rec["theorem_type"], "status": s.get("status"),
                              "option_origin": rec["option_origin"]},
                    prompt_tokens=s["prompt_tokens"], completion_tokens=s["completion_tokens"],
                    reasoning_tokens=s["reasoning_tokens"], error=s.get("error"),
                    total_time=s.get("elapsed_seconds"),
                )
            )
    task = "theorembench/mcq" + ("_sketch" if cfg.sketch else "")
    overall = summary["all"]
    metrics = {"accuracy": overall["accuracy"], "ci95_low": overall["ci95"][0], "ci95_high": overall["ci95"][1],
               "n": float(overall["n"])}  # fmt: skip
    if "mean_at_n" in summary:
        metrics["mean_at_n"] = summary["mean_at_n"]["value"]
    return write_inspect_log(
        task=task, model=cfg.model, dataset_name=dataset.name, dataset_path=str(dataset.path),
        samples=samples, metrics=metrics, config={"run_id": run_id, "sketch": cfg.sketch},
        started_at=started_at, log_dir=cfg.log_dir or default_log_dir(), run_id=run_id,
    )  # fmt: skip


__all__ = ["output_doc", "write_log"]
