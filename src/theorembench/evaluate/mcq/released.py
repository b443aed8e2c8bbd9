"""The released results flavour: a results file exactly as the authors' evaluation scripts write it.

theorembench's own results file is a superset of the released one, with a few fields written differently.
``results_flavour = "released"`` writes what the released scripts write, so a user can hand our results to the
authors' analysis scripts (and theirs to ours: :func:`theorembench.common.stats.Estimate.from_dict` reads both):

- ``test_info`` holds only the released keys, with ``date`` as ``%m%d_%H%M%S``;
- every detailed result has ``theorem_type`` ``"all"``, ``score`` from the item's ``mcq.meta.score`` (None when
  the item has none), ``samples`` None when one sample was asked, and only the released keys;
- ``summary`` and ``overall`` hold ``all: {correct, total, accuracy}`` only.

theorembench's full results (intervals, errors, costs, prompts) go beside it, in ``<name>.theorembench.json``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

FLAVOURS = ("theorembench", "released")
TEST_INFO_KEYS = ("date", "model", "month", "reasoning_effort", "max_tokens", "seed", "n_samples",
                  "total_candidates", "total_tested", "timestamp")  # fmt: skip
RESULT_KEYS = ("id", "theorem_type", "score", "correct_answer", "model_answer", "raw_response", "is_correct",
               "reasoning_effort", "prompt_tokens", "completion_tokens", "total_tokens", "reasoning_tokens",
               "elapsed_seconds", "error", "n_samples", "samples")  # fmt: skip


def _meta_score(raw: dict[str, Any] | None) -> Any:
    mcq = (raw or {}).get("mcq")
    meta = mcq.get("meta") if isinstance(mcq, dict) else None
    return meta.get("score") if isinstance(meta, dict) else None


def released_results(doc: dict[str, Any], raw_items: dict[str, dict[str, Any]], started_at: datetime) -> dict[str, Any]:
    """The released scripts' results file made from theorembench's ``doc`` (``raw_items``: the items by id)."""
    info = {key: doc["test_info"].get(key) for key in TEST_INFO_KEYS}
    info["date"] = started_at.strftime("%m%d_%H%M%S")
    rows = []
    for rec in doc["detailed_results"]:
        row = {key: rec.get(key) for key in RESULT_KEYS}
        row["theorem_type"] = "all"
        row["score"] = _meta_score(raw_items.get(rec["id"]))
        row["samples"] = rec.get("samples") if (rec.get("n_samples") or 1) > 1 else None
        rows.append(row)
    overall = doc["summary"]["all"]
    counts = {"correct": overall["correct"], "total": overall["total"], "accuracy": overall["accuracy"]}
    return {"test_info": info, "summary": {"all": counts}, "overall": dict(counts), "detailed_results": rows}


__all__ = ["FLAVOURS", "RESULT_KEYS", "TEST_INFO_KEYS", "released_results"]
