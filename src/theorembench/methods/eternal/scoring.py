"""Accuracy per tier and per MSC class from per-instance sample outcomes: pure functions.

An item's score is the share of its samples that are correct. Every sample counts: one whose
model call failed counts as not correct, as in the released LMB protocol, so a model that
errors never scores higher than one that answers. Failed samples are shown apart: ``errors``
(refused for good, final) and ``pending`` (a transient failure the next run asks again). The
accuracy over answered samples only is a secondary figure, ``answered_only``, labelled so.
With one sample per item an accuracy is a proportion with its Wilson interval; with n > 1
samples it is mean@n with the Wilson interval at that mean over items (``wilson-mean``). Every
block is an estimate in the one shape (:meth:`theorembench.common.stats.Estimate.to_dict`:
value, ci95, n items, errors = samples without an answer, method) plus ``correct`` (items, or
the sum of item scores for mean@n). ``score`` is the headline: the overall block.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from theorembench.common.stats import bounded_mean, proportion

TIER_ORDER = ("easy", "medium", "hard", "untiered")


def item_score(item: Mapping[str, Any], *, answered_only: bool = False) -> float | None:
    """The share of an item's samples that are correct (a failed sample counts as not correct).

    With ``answered_only``, the share of its answered samples only; None when none was answered.
    """
    samples = list(item.get("samples", []))
    if answered_only:
        samples = [s for s in samples if s.get("status") == "ok"]
    if not samples:
        return None
    return sum(s.get("status") == "ok" and bool(s.get("correct")) for s in samples) / len(samples)


def msc_classes(codes: Iterable[Any] | None) -> list[str]:
    """Two-digit MSC top-level classes of an instance (``05C50`` -> ``05``), deduplicated, sorted."""
    found = set()
    for code in codes or []:
        text = str(code).strip()
        if len(text) >= 2 and text[:2].isdigit():
            found.add(text[:2])
    return sorted(found)


def block(scores: Sequence[float], samples_per_item: int, errors: int = 0) -> dict[str, Any]:
    """Accuracy of a group of items as an estimate (Wilson for one sample, Wilson at the mean for mean@n)."""
    if samples_per_item <= 1:
        correct = int(round(sum(scores)))
        est = proportion(correct, len(scores), errors=errors)
        count: float = correct
    else:
        est = bounded_mean(list(scores), errors=errors)
        count = round(float(sum(scores)), 3)
    return est.to_dict() | {"correct": count}


def _failed(item: Mapping[str, Any]) -> int:
    """The item's samples without an answer (refused for good or failed transiently): not correct, in n."""
    return sum(s.get("status") != "ok" for s in item.get("samples", []))


def summarize(items: Sequence[Mapping[str, Any]], samples_per_item: int) -> dict[str, Any]:
    """Overall, per-tier and per-MSC accuracy blocks over every item, the tiers' shares, and failure counts."""
    scored: list[tuple[Mapping[str, Any], float]] = []
    errors_of: dict[str, int] = {}
    for item in items:
        score = item_score(item)
        if score is not None:
            scored.append((item, score))
    answered = [x for x in (item_score(item, answered_only=True) for item in items) if x is not None]
    samples = [s for item in items for s in item.get("samples", [])]
    tiers: dict[str, list[float]] = {}
    classes: dict[str, list[float]] = {}
    for item, score in scored:
        tier = item.get("tier") or "untiered"
        tiers.setdefault(tier, []).append(score)
        errors_of[tier] = errors_of.get(tier, 0) + _failed(item)
        for code in msc_classes(item.get("msc")) or ["unclassified"]:
            classes.setdefault(code, []).append(score)
            errors_of["msc:" + code] = errors_of.get("msc:" + code, 0) + _failed(item)
    total = len(scored)
    by_tier = {t: block(tiers[t], samples_per_item, errors_of[t]) for t in TIER_ORDER if t in tiers}
    overall = block([s for _, s in scored], samples_per_item, sum(_failed(item) for item, _ in scored))
    share = {t: {"n": len(tiers[t]), "share": round(len(tiers[t]) / total, 4)} for t in TIER_ORDER if t in tiers}
    return {
        "items": len(items),
        "scored": total,
        "errors": sum(s.get("status") == "error" for s in samples),
        "pending": sum(s.get("status") == "pending" for s in samples),
        "failed_samples": sum(s.get("status") != "ok" for s in samples),
        "samples_per_item": samples_per_item,
        "score": {k: overall[k] for k in ("value", "ci95", "n", "errors", "method")},
        "overall": overall,
        "answered_only": {**block(answered, samples_per_item),
                          "note": "secondary: items with an answered sample, over their answered samples only"},
        "by_tier": by_tier,
        "tier_share": share,
        "by_msc": {code: block(classes[code], samples_per_item, errors_of["msc:" + code]) for code in sorted(classes)},
    }


__all__ = ["TIER_ORDER", "block", "item_score", "msc_classes", "summarize"]
