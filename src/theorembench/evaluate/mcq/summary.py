"""Accuracy breakdowns for an MCQ run: overall, by category, month and choice style."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from theorembench.evaluate.mcq.items import Item, categories, is_substitution_resistant, month_of


def _acc(correct: int, total: int) -> dict[str, Any]:
    return {"correct": correct, "total": total, "accuracy": (correct / total) if total else 0.0}


def _group(pairs: list[tuple[str, bool]]) -> dict[str, dict[str, Any]]:
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for key, ok in pairs:
        counts[key][0] += int(ok)
        counts[key][1] += 1
    return {k: _acc(c, t) for k, (c, t) in sorted(counts.items())}


def summarize(
    items: dict[int, Item], records: dict[int, dict[str, Any]], dataset_month: str
) -> dict[str, Any]:
    """``records`` maps item index -> detailed result (first sample decides correctness)."""
    idxs = sorted(records)
    correct = sum(bool(records[i]["is_correct"]) for i in idxs)
    by_type: list[tuple[str, bool]] = []
    by_month: list[tuple[str, bool]] = []
    by_style: list[tuple[str, bool]] = []
    completion_tokens: list[int] = []
    reasoning_tokens: list[int] = []
    cost = 0.0
    cost_known = True
    for i in idxs:
        rec, item = records[i], items[i]
        ok = bool(rec["is_correct"])
        by_type += [(cat, ok) for cat in categories(item)]
        by_month.append((month_of(item.id) or dataset_month, ok))
        style = "substitution_resistant" if is_substitution_resistant(item) else "original"
        by_style.append((style, ok))
        if not rec.get("error"):
            completion_tokens.append(int(rec.get("completion_tokens") or 0))
            reasoning_tokens.append(int(rec.get("reasoning_tokens") or 0))
        for sample in rec.get("samples") or [rec]:
            if sample.get("cost_usd") is None:
                cost_known = cost_known and bool(sample.get("error"))
            else:
                cost += float(sample["cost_usd"])
    n_ok = len(completion_tokens)
    return {
        "all": _acc(correct, len(idxs)),
        "by_theorem_type": _group(by_type),
        "by_month": _group(by_month),
        "by_choice_style": _group(by_style),
        "unparsed": sum(records[i].get("status") == "unparsed" for i in idxs),
        "errors": sum(records[i].get("status") == "error" for i in idxs),
        "mean_completion_tokens": (sum(completion_tokens) / n_ok) if n_ok else 0.0,
        "mean_reasoning_tokens": (sum(reasoning_tokens) / n_ok) if n_ok else 0.0,
        "cost_usd": round(cost, 6) if cost_known else None,
    }


def sketch_gain(with_sketch: dict[str, Any], without: dict[str, Any]) -> dict[str, Any]:
    """Accuracy with the sketch minus without, overall and per breakdown (percentage points)."""

    def diff(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
        return {
            "with_sketch": a["accuracy"],
            "without_sketch": b["accuracy"],
            "gain_pp": round(100 * (a["accuracy"] - b["accuracy"]), 2),
        }

    gain: dict[str, Any] = {"all": diff(with_sketch["all"], without["all"])}
    for key in ("by_theorem_type", "by_choice_style", "by_month"):
        shared = sorted(set(with_sketch.get(key, {})) & set(without.get(key, {})))
        gain[key] = {k: diff(with_sketch[key][k], without[key][k]) for k in shared}
    return gain
