"""The radar indicators D1–D6 of the paper's Appendix A.1, computed from results of several models.

* D1 (difficulty) = 1 − μ, μ the mean of the models' overall accuracies;
* D2 (improvement space) = 1 − the best model's accuracy;
* D3 (discriminability) = σ / μ, σ the *population* standard deviation of the accuracies
  (divide by the number of models, not by one less); undefined when μ = 0;
* D4 (academic level) = the mean, over the instances, of each one's score in Table 2 (research 1.0,
  graduate 0.8, undergraduate 0.7, olympiad 0.6, middle/high school 0.4, primary school 0.2). An
  instance's level is its ``academic_level`` (from its template), else *research* when it comes from a
  research paper (it names its ``paper_id`` or ``theorem``); an instance with neither has no level and
  is left out of D4 (said so; D4 is undefined when no instance has a level);
* D5 (coverage) = first-level MSC2020 classes the instances cover / the classes an instance can have:
  the 63 top-level classes less the three excluded by construction (00, 01, 97: see :mod:`msc`), so
  60. A class outside those 60 (a hand-written template may carry one) is not counted;
* D6 (originality) = original instances / instances with an originality measurement. The evaluation
  measures it (:func:`~.originality.measure_instances`): an instance is not original when its problem
  is a near-duplicate of a corpus text the user gave or of an instance of another template. D6 is
  undefined when no instance carries a measurement (results written before it existed).

The models are the ones whose results are given; they are listed with the indicators.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from theorembench.methods.eternal import msc as M
from theorembench.methods.eternal.scoring import msc_classes

# Table 2: academic level -> score; names as a template's academic_level gives them (the table's labels also read)
ACADEMIC_LEVELS = {"research": 1.0, "graduate": 0.8, "undergraduate": 0.7, "olympiad": 0.6, "school": 0.4,
                   "primary": 0.2}  # fmt: skip
_LABELS = {"research-level mathematics": "research", "graduate-level mathematics": "graduate",
           "undergraduate mathematics": "undergraduate", "high-school mathematics olympiad": "olympiad",
           "middle / high school": "school", "middle school": "school", "high school": "school",
           "primary school": "primary"}  # fmt: skip
MSC_TOP_LEVEL_CLASSES = 63
AXES = {"D1": "difficulty", "D2": "improvement space", "D3": "discriminability", "D4": "academic level",
        "D5": "coverage", "D6": "originality"}  # fmt: skip


def academic_level(name: Any) -> str | None:
    """The Table 2 level a name means (``research``, ``Graduate-level mathematics`` ...), or None."""
    key = " ".join(str(name or "").lower().split())
    return key if key in ACADEMIC_LEVELS else _LABELS.get(key)


def level_of(instance: Mapping[str, Any]) -> str | None:
    """An instance's academic level: its own, else research when it comes from a paper, else None."""
    given = academic_level(instance.get("academic_level"))
    if given:
        return given
    return "research" if instance.get("paper_id") or instance.get("theorem") else None


def eligible_classes() -> list[str]:
    """The first-level classes an instance can carry: MSC2020's 63 less the ones excluded by construction."""
    return [c for c in M.top_level() if c not in M.EXCLUDED]


def _flag(instance: Mapping[str, Any]) -> bool | None:
    """An instance's measured originality: True, False or None (not measured)."""
    review = instance.get("originality")
    if isinstance(review, Mapping) and isinstance(review.get("original"), bool) and review.get("measured"):
        return review["original"]
    return None


def _d4(instances: Sequence[Mapping[str, Any]]) -> tuple[float | None, str]:
    levels = [level_of(inst) for inst in instances]
    known = [ACADEMIC_LEVELS[lv] for lv in levels if lv]
    if not known:
        return None, "D4 undefined: no instance has an academic level (academic_level, or a paper it comes from)"
    shown = ", ".join(f"{lv} {levels.count(lv)}" for lv in ACADEMIC_LEVELS if levels.count(lv))
    left = len(levels) - len(known)
    return sum(known) / len(known), (f"D4: mean Table 2 score of {len(known)} instances ({shown})"
                                     + (f"; {left} without a level left out" if left else ""))  # fmt: skip


def _d6(instances: Sequence[Mapping[str, Any]]) -> tuple[float | None, str]:
    flags = [f for f in (_flag(inst) for inst in instances) if f is not None]
    if not flags:
        return None, "D6 undefined: the instances carry no originality measurement"
    against = next((inst["originality"].get("against") for inst in instances if _flag(inst) is not None), "")
    return sum(flags) / len(flags), (f"D6: {sum(flags)} of {len(flags)} measured instances original "
                                     f"(near-duplicates sought {against})")  # fmt: skip


def radar(accuracies: Mapping[str, float], instances: Sequence[Mapping[str, Any]], *,
          scope: str = "overall") -> dict[str, Any]:  # fmt: skip
    """D1–D6 from ``model -> accuracy`` (fractions, on ``scope``) and the instances scored, with the choices made."""
    values = [float(v) for v in accuracies.values()]
    if not values:
        raise ValueError("the radar needs the accuracy of at least one model")
    mu = sum(values) / len(values)
    sigma = math.sqrt(sum((v - mu) ** 2 for v in values) / len(values))
    eligible = eligible_classes()
    covered = sorted({c for inst in instances for c in msc_classes(inst.get("msc")) if c in eligible})
    d4, d4_choice = _d4(instances)
    d6, d6_choice = _d6(instances)
    indicators = {
        "D1": round(1 - mu, 4),
        "D2": round(1 - max(values), 4),
        "D3": round(sigma / mu, 4) if mu > 0 else None,
        "D4": None if d4 is None else round(d4, 4),
        "D5": round(len(covered) / len(eligible), 4),
        "D6": None if d6 is None else round(d6, 4),
    }
    choices = [
        f"models: {', '.join(accuracies)} ({len(values)}); μ and the maximum are over their {scope} accuracies",
        "σ is the population standard deviation (divided by the number of models)"
        + ("" if mu > 0 else "; D3 is undefined because μ = 0")
        + ("; with one model σ = 0, so D3 says nothing" if len(values) == 1 else ""),
        d4_choice,
        f"D5: {len(covered)} first-level MSC2020 classes covered ({', '.join(covered) or 'none'}) of {len(eligible)} "
        f"(the {MSC_TOP_LEVEL_CLASSES} top-level classes less {', '.join(M.EXCLUDED)}, excluded by construction)",
        d6_choice,
    ]  # fmt: skip
    return {"indicators": indicators, "axes": AXES, "scope": scope, "models": dict(accuracies), "mu": round(mu, 4),
            "sigma": round(sigma, 4), "sigma_kind": "population", "covered_classes": covered,
            "d5_denominator": len(eligible), "instances": len(instances), "choices": choices}  # fmt: skip


__all__ = ["ACADEMIC_LEVELS", "AXES", "MSC_TOP_LEVEL_CLASSES", "academic_level", "eligible_classes", "level_of",
           "radar"]  # fmt: skip
