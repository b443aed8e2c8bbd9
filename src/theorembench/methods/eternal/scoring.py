"""Accuracy per tier and per MSC class from per-instance sample outcomes: pure functions.

An item's score is the share of its answered samples that are correct (a sample whose
model call failed is no answer: it is left out, and an item with no answered sample is
counted under ``errors`` and left out of every n). With one sample per item an accuracy is
a proportion with its Wilson interval; with n > 1 samples it is mean@n with a bootstrap
interval over items. Every block carries its sample size (items) and 95% interval.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from theorembench.common.stats import bootstrap_mean, proportion

TIER_ORDER = ("easy", "medium", "hard", "untiered")


def item_score(item: Mapping[str, Any]) -> float | None:
    """The share of an item's answered samples that are correct; None when none was answered."""
    answered = [s for s in item.get("samples", []) if s.get("status") == "ok"]
    if not answered:
        return None
    return sum(bool(s.get("correct")) for s in answered) / len(answered)


def msc_classes(codes: Iterable[Any] | None) -> list[str]:
    """Two-digit MSC top-level classes of an instance (``05C50`` -> ``05``), deduplicated, sorted."""
    found = set()
    for code in codes or []:
        text = str(code).strip()
        if len(text) >= 2 and text[:2].isdigit():
            found.add(text[:2])
    return sorted(found)


def block(scores: Sequence[float], samples_per_item: int) -> dict[str, Any]:
    """Accuracy of a group of items with n and a 95% interval (Wilson for one sample, bootstrap for mean@n)."""
    if samples_per_item <= 1:
        correct = int(round(sum(scores)))
        est = proportion(correct, len(scores))
        count: float = correct
    else:
        est = bootstrap_mean(list(scores))
        count = round(float(sum(scores)), 3)
    value = est.value
    return {"n": est.n, "correct": count, "accuracy": None if value is None else round(value, 4),
            "percent": None if value is None else round(100 * value, 1), "ci95": est.ci95,
            "ci_method": est.method}  # fmt: skip


def summarize(items: Sequence[Mapping[str, Any]], samples_per_item: int) -> dict[str, Any]:
    """Overall, per-tier and per-MSC accuracy blocks, the tiers' shares of the scored items, and error counts."""
    scored: list[tuple[Mapping[str, Any], float]] = []
    errors = 0
    for item in items:
        score = item_score(item)
        if score is None:
            errors += 1
        else:
            scored.append((item, score))
    tiers: dict[str, list[float]] = {}
    classes: dict[str, list[float]] = {}
    for item, score in scored:
        tiers.setdefault(item.get("tier") or "untiered", []).append(score)
        for code in msc_classes(item.get("msc")) or ["unclassified"]:
            classes.setdefault(code, []).append(score)
    total = len(scored)
    by_tier = {t: block(tiers[t], samples_per_item) for t in TIER_ORDER if t in tiers}
    share = {t: {"n": len(tiers[t]), "share": round(len(tiers[t]) / total, 4)} for t in TIER_ORDER if t in tiers}
    return {
        "items": len(items),
        "scored": total,
        "errors": errors,
        "failed_samples": sum(s.get("status") != "ok" for item in items for s in item.get("samples", [])),
        "samples_per_item": samples_per_item,
        "overall": block([s for _, s in scored], samples_per_item),
        "by_tier": by_tier,
        "tier_share": share,
        "by_msc": {code: block(classes[code], samples_per_item) for code in sorted(classes)},
    }


__all__ = ["TIER_ORDER", "block", "item_score", "msc_classes", "summarize"]
