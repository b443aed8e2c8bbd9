"""Accuracy breakdowns for an MCQ run: overall, by category, month and choice style, each with its 95% interval.

Accuracy is first-sample accuracy (the released definition): correct / items, errors and
unparsed replies counting as wrong. Every block is an estimate in the one shape
(:meth:`theorembench.common.stats.Estimate.to_dict`: value, ci95 (Wilson), n, errors, method)
with the counts ``correct``/``total`` and ``accuracy`` (the released results' name for the
value; 0.0 when there are no items). With several samples per item, ``mean_at_n`` is the
mean over items of the fraction of correct samples, with the Wilson interval at that mean. The sketch gain is a paired difference
over the items both runs answered, with a paired-bootstrap interval.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

from theorembench.common.stats import bounded_mean, paired_difference, proportion
from theorembench.evaluate.mcq.items import Item, categories, is_substitution_resistant, month_of

BREAKDOWNS = ("by_theorem_type", "by_choice_style", "by_month")


def _acc(correct: int, total: int, errors: int = 0) -> dict[str, Any]:
    est = proportion(correct, total, errors=errors)
    return est.to_dict() | {"correct": correct, "total": total, "accuracy": (correct / total) if total else 0.0}


def _groups_of(item: Item, dataset_month: str) -> dict[str, list[str]]:
    style = "substitution_resistant" if is_substitution_resistant(item) else "original"
    return {"by_theorem_type": categories(item), "by_choice_style": [style],
            "by_month": [month_of(item.id) or dataset_month]}  # fmt: skip


def _breakdowns(items: dict[int, Item], idxs: list[int], dataset_month: str,
                block: Callable[[list[int]], dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:  # fmt: skip
    members: dict[str, dict[str, list[int]]] = {key: defaultdict(list) for key in BREAKDOWNS}
    for i in idxs:
        for key, names in _groups_of(items[i], dataset_month).items():
            for name in names:
                members[key][name].append(i)
    return {key: {name: block(group) for name, group in sorted(members[key].items())} for key in BREAKDOWNS}


def _sample_fraction(rec: dict[str, Any]) -> float:
    samples = rec.get("samples") or [rec]
    return sum(bool(s.get("is_correct")) for s in samples) / len(samples)


def summarize(
    items: dict[int, Item], records: dict[int, dict[str, Any]], dataset_month: str
) -> dict[str, Any]:
    """``records`` maps item index -> detailed result (first sample decides correctness)."""
    idxs = sorted(records)

    def block(group: list[int]) -> dict[str, Any]:
        return _acc(sum(bool(records[i]["is_correct"]) for i in group), len(group),
                    sum(records[i].get("status") == "error" for i in group))  # fmt: skip

    completion_tokens: list[int] = []
    reasoning_tokens: list[int] = []
    cost = 0.0
    cost_known = True
    for i in idxs:
        rec = records[i]
        if not rec.get("error"):
            completion_tokens.append(int(rec.get("completion_tokens") or 0))
            reasoning_tokens.append(int(rec.get("reasoning_tokens") or 0))
        for sample in rec.get("samples") or [rec]:
            if sample.get("cost_usd") is None:
                cost_known = cost_known and bool(sample.get("error"))
            else:
                cost += float(sample["cost_usd"])
    n_ok = len(completion_tokens)
    summary: dict[str, Any] = {"all": block(idxs), **_breakdowns(items, idxs, dataset_month, block)}
    summary["score"] = {k: summary["all"][k] for k in ("value", "ci95", "n", "errors", "method")}  # the headline
    per_sample = max((len(records[i].get("samples") or []) for i in idxs), default=0)
    if per_sample > 1:
        failed = sum(s.get("status") == "error" for i in idxs for s in records[i].get("samples") or [records[i]])
        est = bounded_mean([_sample_fraction(records[i]) for i in idxs], errors=failed)
        summary["mean_at_n"] = est.to_dict() | {"samples_per_item": per_sample}
    summary.update({
        "unparsed": sum(records[i].get("status") == "unparsed" for i in idxs),
        "errors": sum(records[i].get("status") == "error" for i in idxs),
        "mean_completion_tokens": (sum(completion_tokens) / n_ok) if n_ok else 0.0,
        "mean_reasoning_tokens": (sum(reasoning_tokens) / n_ok) if n_ok else 0.0,
        "cost_usd": round(cost, 6) if cost_known else None,
    })  # fmt: skip
    return summary


def sketch_gain(items: dict[int, Item], with_sketch: dict[int, bool], without: dict[int, bool],
                dataset_month: str) -> dict[str, Any]:  # fmt: skip
    """Accuracy with the sketch minus without, over the items both runs answered, overall and per breakdown.

    ``with_sketch`` and ``without`` map item index -> first-sample correctness. Items only
    one run answered (another ``--limit``, say) are left out of every figure. The gain is
    in percentage points with a paired-bootstrap 95% interval.
    """
    common = sorted(set(with_sketch) & set(without) & set(items))

    def block(group: list[int]) -> dict[str, Any]:
        a = [float(without[i]) for i in group]
        b = [float(with_sketch[i]) for i in group]
        est = paired_difference(a, b)
        return {
            "with_sketch": sum(b) / len(b) if b else 0.0,
            "without_sketch": sum(a) / len(a) if a else 0.0,
            "gain_pp": round(100 * est.value, 2) if est.value is not None else 0.0,
            "ci95_pp": [round(100 * est.low, 2), round(100 * est.high, 2)],
            "n": est.n,
            "ci_method": est.method,
        }

    return {"all": block(common), "items_compared": len(common),
            **_breakdowns(items, common, dataset_month, block)}  # fmt: skip
