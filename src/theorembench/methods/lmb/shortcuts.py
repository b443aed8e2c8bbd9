"""The shortcut audit: how far answers that never read the question get on a split.

A multiple-choice benchmark is only as hard as its weakest cue. The released November 2025
hard split keys the meta-option ("One of the remaining options is correct, but a stronger result
can be proven.") in all 14 of its items that show it, so a solver that picks it whenever it is
shown gets 14 of 29 items without reading a stem. This module measures such cues on any item
file, each as an :class:`~theorembench.common.stats.Estimate` against chance (1 / number of
options):

* ``meta_option``: pick the meta-option when shown, else guess uniformly (expected accuracy);
* ``meta_option_when_shown``: P(correct | meta-option shown), over the items that show it;
* ``longest`` and ``shortest``: pick the longest (shortest) option; the length checks of
  ``methods/lmb/surface.py`` bound the distractors against option A, but the meta-option has
  one fixed length;
* ``most_similar``: pick the option closest to the others (mean token-set Jaccard): a keyed
  answer that distractors were written around tends to share most of their words;
* ``options_only``: a model given the options without the stem (``methods/lmb/options_only.py``
  asks it; here its answers are only scored).

Ties count fractionally (a heuristic that ties k options, one of them correct, scores 1/k), so
every heuristic gives its expected accuracy under a uniform tie-break and needs no seed. A
baseline whose 95% interval lies above chance (lower bound > chance) is listed in ``flagged``.
Pure Python, no model calls: the audit of a released file is reproducible anywhere.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from theorembench.common.stats import Estimate, bounded_mean, proportion
from theorembench.evaluate.mcq.items import META_OPTION

_TOKEN = re.compile(r"\\[A-Za-z]+|[A-Za-z]+|\d+|[^\sA-Za-z\d]")

DESCRIPTIONS = {
    "meta_option": "pick the meta-option when shown, else guess uniformly (expected accuracy)",
    "meta_option_when_shown": "P(correct | meta-option shown): the items that show it",
    "longest": "pick the longest option (ties split)",
    "shortest": "pick the shortest option (ties split)",
    "most_similar": "pick the option with the highest mean token-set Jaccard to the others (ties split)",
    "options_only": "a model shown the options without the question stem",
}


def normalized(text: str) -> str:
    return " ".join(str(text).split())


def is_meta(text: str) -> bool:
    return normalized(text) == META_OPTION


def options_of(item: Mapping[str, Any]) -> list[str]:
    """The item's option texts, the keyed one first (index 0), then its distractors in label order."""
    mcq = item["mcq"]
    rest = sorted(mcq["choices"], key=lambda c: str(c["label"]))
    return [normalized(mcq["correct_choice"]["text"]), *(normalized(c["text"]) for c in rest)]


def tokens(text: str) -> frozenset[str]:
    """Lower-cased words, numbers, LaTeX commands and single symbols: what two statements can share."""
    return frozenset(_TOKEN.findall(text.lower()))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def similarity_to_others(options: Sequence[str]) -> list[float]:
    """Each option's mean token-set Jaccard similarity to the other options."""
    sets = [tokens(t) for t in options]
    k = len(sets)
    return [sum(jaccard(sets[i], sets[j]) for j in range(k) if j != i) / max(1, k - 1) for i in range(k)]


def tie_score(values: Sequence[float], *, best: Callable[[Sequence[float]], float] = max) -> float:
    """The expected score of picking an option with the ``best`` value (index 0 is correct), ties split."""
    target = best(values)
    tied = [i for i, v in enumerate(values) if abs(v - target) < 1e-12]
    return (1.0 / len(tied)) if 0 in tied else 0.0


def meta_score(options: Sequence[str]) -> float:
    """Pick the meta-option when shown (1 when it is the keyed one, 0 when a distractor), else guess: 1/k."""
    shown = [i for i, t in enumerate(options) if t == META_OPTION]
    if not shown:
        return 1.0 / len(options)
    return 1.0 / len(shown) if 0 in shown else 0.0


def _entry(name: str, estimate: Estimate, chance: float) -> dict[str, Any]:
    flagged = estimate.value is not None and estimate.n > 0 and estimate.low > chance
    return {"description": DESCRIPTIONS[name], "estimate": estimate.to_dict(), "chance": round(chance, 4),
            "flagged": flagged}  # fmt: skip


def shortcut_audit(items: Sequence[Mapping[str, Any]], *, options_only: Mapping[str, Any] | None = None,
                   options_only_model: str | None = None, skipped_reason: str = "no model given",
                   source: str = "") -> dict[str, Any]:  # fmt: skip
    """The audit of ``items`` (dicts in the released layout) as a JSON-ready dict with a top-level ``flagged`` list.

    ``options_only`` maps item ids to the options-only answers (``{"model_is_correct": bool}``,
    or ``{"error": reason}`` for a call that failed; see ``options_only.py``); None skips
    that baseline (``skipped`` says why).
    """
    opts = [options_of(it) for it in items]
    n = len(opts)
    chance = sum(1.0 / len(o) for o in opts) / n if n else 0.0
    shown = [o for o in opts if META_OPTION in o]
    keyed = sum(1 for o in shown if o[0] == META_OPTION)
    baselines: dict[str, dict[str, Any]] = {}
    baselines["meta_option"] = _entry("meta_option", bounded_mean([meta_score(o) for o in opts]), chance)
    shown_chance = sum(1.0 / len(o) for o in shown) / len(shown) if shown else chance
    baselines["meta_option_when_shown"] = _entry("meta_option_when_shown", proportion(keyed, len(shown)), shown_chance)
    lengths = [[float(len(t)) for t in o] for o in opts]
    baselines["longest"] = _entry("longest", bounded_mean([tie_score(v) for v in lengths]), chance)
    baselines["shortest"] = _entry("shortest", bounded_mean([tie_score(v, best=min) for v in lengths]), chance)
    similar = [tie_score(similarity_to_others(o)) for o in opts]
    baselines["most_similar"] = _entry("most_similar", bounded_mean(similar), chance)
    skipped: dict[str, str] = {}
    if options_only is None:
        skipped["options_only"] = skipped_reason
    else:
        ids = [str(it["id"]) for it in items]
        answers = [options_only.get(i) or {"error": "not asked"} for i in ids]
        correct = sum(1 for a in answers if a.get("model_is_correct"))
        errors = sum(1 for a in answers if "error" in a)
        baselines["options_only"] = _entry("options_only", proportion(correct, n, errors=errors), chance)
        baselines["options_only"]["model"] = options_only_model
    return {
        "source": source,
        "items": n,
        "chance": round(chance, 4),
        "meta_option": {"shown": len(shown), "keyed": keyed, "as_distractor": len(shown) - keyed},
        "baselines": baselines,
        "skipped": skipped,
        "flagged": [name for name, entry in baselines.items() if entry["flagged"]],
    }


__all__ = ["DESCRIPTIONS", "is_meta", "jaccard", "meta_score", "options_of", "shortcut_audit",
           "similarity_to_others", "tie_score", "tokens"]  # fmt: skip
