"""The radar indicators D1–D6 of the paper's Appendix A.1, computed from results of several models.

* D1 (difficulty) = 1 − μ, μ the mean of the models' overall accuracies;
* D2 (improvement space) = 1 − the best model's accuracy;
* D3 (discriminability) = σ / μ, σ the *population* standard deviation of the accuracies
  (divide by the number of models, not by one less); undefined when μ = 0;
* D4 (academic level) = 1.0: every instance comes from a research paper ("research level"
  in the paper's Table 2), a constant of this benchmark, not measured;
* D5 (coverage) = MSC2020 top-level classes covered by the instances / 63, the number of
  MSC2020 top-level classes (the paper's "first-level categories");
* D6 (originality) = instances not flagged as non-original / all instances, from the
  originality flags (``original`` or ``originality.original``) when instances carry them;
  otherwise assumed 1.0 and said so.

The models are the ones whose results are given; they are listed with the indicators.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from theorembench.methods.eternal.scoring import msc_classes

MSC_TOP_LEVEL_CLASSES = 63
ACADEMIC_LEVEL = 1.0
AXES = {"D1": "difficulty", "D2": "improvement space", "D3": "discriminability", "D4": "academic level",
        "D5": "coverage", "D6": "originality"}  # fmt: skip


def _flag(instance: Mapping[str, Any]) -> bool | None:
    """An instance's originality flag: True, False or None (no flag)."""
    if isinstance(instance.get("original"), bool):
        return instance["original"]
    review = instance.get("originality")
    if isinstance(review, Mapping) and isinstance(review.get("original"), bool):
        return review["original"]
    return None


def radar(accuracies: Mapping[str, float], instances: Sequence[Mapping[str, Any]], *,
          scope: str = "overall") -> dict[str, Any]:  # fmt: skip
    """D1–D6 from ``model -> accuracy`` (fractions, on ``scope``) and the instances scored, with the choices made."""
    values = [float(v) for v in accuracies.values()]
    if not values:
        raise ValueError("the radar needs the accuracy of at least one model")
    mu = sum(values) / len(values)
    sigma = math.sqrt(sum((v - mu) ** 2 for v in values) / len(values))
    covered = sorted({code for inst in instances for code in msc_classes(inst.get("msc"))})
    flags = [_flag(inst) for inst in instances]
    flagged = any(f is not None for f in flags)
    original = sum(f is not False for f in flags)
    d6 = original / len(instances) if flagged and instances else 1.0
    indicators = {
        "D1": round(1 - mu, 4),
        "D2": round(1 - max(values), 4),
        "D3": round(sigma / mu, 4) if mu > 0 else None,
        "D4": ACADEMIC_LEVEL,
        "D5": round(len(covered) / MSC_TOP_LEVEL_CLASSES, 4),
        "D6": round(d6, 4),
    }
    choices = [
        f"models: {', '.join(accuracies)} ({len(values)}); μ and the maximum are over their {scope} accuracies",
        "σ is the population standard deviation (divided by the number of models)"
        + ("" if mu > 0 else "; D3 is undefined because μ = 0")
        + ("; with one model σ = 0, so D3 says nothing" if len(values) == 1 else ""),
        "D4 = 1.0: research level for every instance (a constant of this benchmark, not measured)",
        f"D5: {len(covered)} MSC2020 top-level classes covered ({', '.join(covered) or 'none'}) of "
        f"{MSC_TOP_LEVEL_CLASSES}; the paper's first-level categories are taken to be these classes",
        (f"D6: {original} of {len(instances)} instances not flagged as non-original by the originality review"
         if flagged else "D6 = 1.0 assumed: the instances carry no originality flags (`eternal build` drops the "
         "templates its originality review flags before instantiating)"),
    ]  # fmt: skip
    return {"indicators": indicators, "axes": AXES, "scope": scope, "models": dict(accuracies), "mu": round(mu, 4),
            "sigma": round(sigma, 4), "sigma_kind": "population", "covered_classes": covered,
            "originality_flags": flagged, "instances": len(instances), "choices": choices}  # fmt: skip


__all__ = ["ACADEMIC_LEVEL", "AXES", "MSC_TOP_LEVEL_CLASSES", "radar"]
