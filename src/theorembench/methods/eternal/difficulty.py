"""Difficulty tiers from a model suite's per-trial correctness: pure functions, no I/O.

A model is correct on an instance by a rule over its K trials:

* ``majority`` (default): more than half of the K trials are correct (2 of 3, 3 of 4);
* ``any``: at least one; ``all``: every one; ``at_least:k``: at least k (1 <= k <= K).

Which instances are excluded (``exclusion``):

* ``all_trials`` (default, the paper's rule): every model of the suite answered right in every one
  of its K trials ("solved correctly by all models across multiple trials");
* ``rule``: every model is correct by the per-model rule above (e.g. a majority of its trials):
  stricter, it also drops an instance one model got wrong once.

The others are tiered by the number c of models correct (by the rule), scaling the paper's
five-model thresholds by the suite size S:

* hard   when c < 2/5 * S,
* easy   when c >= 4/5 * S,
* medium otherwise.

At S = 5 this is the paper's Hard = 0–1, Medium = 2–3, Easy = 4+ (c = 5 is easy unless the
instance is excluded; with ``rule`` it always is); at S = 10 it gives hard 0–3, medium 4–7,
easy 8–10. The comparisons are done in integers (5c < 2S, 5c >= 4S), so no rounding is involved.

Tiers are recomputed from stored per-model, per-trial rows (``tiers_from_rows``) whenever
the suite or the rule changes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

DIFFICULTY_TIERS = ("easy", "medium", "hard")
RULES = ("majority", "any", "all", "at_least:k")
EXCLUSIONS = ("all_trials", "rule")


@dataclass(frozen=True)
class Rule:
    """How a model's K trials on one instance make it correct."""

    name: str  # majority | any | all | at_least
    k: int = 0  # for at_least

    def __str__(self) -> str:
        return f"at_least:{self.k}" if self.name == "at_least" else self.name

    def check(self, trials: int) -> None:
        """Raise ValueError when the rule cannot be applied to ``trials`` trials per model."""
        if trials < 1:
            raise ValueError("trials: must be at least 1")
        if self.name == "at_least" and not 1 <= self.k <= trials:
            raise ValueError(f"rule: at_least:{self.k} needs 1 <= k <= trials ({trials})")

    def correct(self, outcomes: Sequence[bool]) -> bool:
        """Whether a model with these per-trial outcomes counts as correct."""
        right, total = sum(bool(x) for x in outcomes), len(outcomes)
        if self.name == "majority":
            return 2 * right > total
        if self.name == "any":
            return right >= 1
        if self.name == "all":
            return total > 0 and right == total
        return right >= self.k


def parse_rule(text: str) -> Rule:
    """``majority``, ``any``, ``all`` or ``at_least:k``; ValueError otherwise."""
    value = text.strip().lower()
    if value in ("majority", "any", "all"):
        return Rule(value)
    if value.startswith("at_least:"):
        number = value.split(":", 1)[1]
        if number.isdigit() and int(number) >= 1:
            return Rule("at_least", int(number))
    raise ValueError(f"rule: unknown rule {text!r}: use majority, any, all or at_least:k (k a positive integer)")


def tier_of(n_correct: int, suite_size: int) -> str | None:
    """The tier for ``n_correct`` of ``suite_size`` models correct; None when every model was correct (excluded)."""
    if suite_size < 1 or not 0 <= n_correct <= suite_size:
        raise ValueError(f"{n_correct} models correct out of a suite of {suite_size}")
    if n_correct == suite_size:
        return None
    if 5 * n_correct < 2 * suite_size:
        return "hard"
    if 5 * n_correct >= 4 * suite_size:
        return "easy"
    return "medium"


def band(n_correct: int, suite_size: int) -> str:
    """The tier by the thresholds alone (``n_correct == suite_size`` is easy)."""
    return tier_of(n_correct, suite_size) or "easy"


def check_exclusion(exclusion: str) -> None:
    if exclusion not in EXCLUSIONS:
        raise ValueError(f"exclusion: unknown exclusion {exclusion!r}: use {' or '.join(EXCLUSIONS)}")


def tier_ranges(suite_size: int, exclusion: str = "all_trials") -> dict[str, list[int]]:
    """The numbers of models correct that give each tier (and ``excluded``), for tables and docs. With
    ``all_trials``, ``suite_size`` models correct is easy, or excluded when every trial was right."""
    out: dict[str, list[int]] = {t: [] for t in (*DIFFICULTY_TIERS, "excluded")}
    for c in range(suite_size + 1):
        out[tier_of(c, suite_size) or "excluded"].append(c)
    if exclusion == "all_trials":
        out["easy"].append(suite_size)
    return out


@dataclass(frozen=True)
class Assignment:
    """One instance's calibration: its tier (None: excluded or pending), models correct, missing trials."""

    instance_id: str
    status: str  # tiered | excluded | pending
    tier: str | None
    n_models_correct: int | None
    suite_size: int
    models_correct: tuple[str, ...] = ()
    missing: int = 0  # trials without an outcome (their model call failed): the instance is pending


def assign(instance_id: str, outcomes: Mapping[str, Sequence[bool]], suite: Sequence[str], trials: int,
           rule: Rule, exclusion: str = "all_trials") -> Assignment:  # fmt: skip
    """The tier of one instance from ``model -> per-trial outcomes`` (only finished trials; K expected each)."""
    missing = sum(max(0, trials - len(outcomes.get(m, ()))) for m in suite)
    if missing:
        return Assignment(instance_id, "pending", None, None, len(suite), missing=missing)
    right = tuple(m for m in suite if rule.correct(list(outcomes[m])[:trials]))
    if exclusion == "all_trials":
        every = all(all(list(outcomes[m])[:trials]) for m in suite)
        tier = None if every else band(len(right), len(suite))
    else:
        tier = tier_of(len(right), len(suite))
    return Assignment(instance_id, "tiered" if tier else "excluded", tier, len(right), len(suite), right)


def tiers_from_rows(rows: Iterable[Mapping[str, Any]], instance_ids: Sequence[str], suite: Sequence[str],
                    trials: int, rule: Rule, exclusion: str = "all_trials") -> list[Assignment]:  # fmt: skip
    """Assignments from per-trial rows ``{instance_id, model, trial, status, correct}`` (as in trials.jsonl).

    Rows of models outside ``suite``, trials at or past ``trials``, and rows of a transient
    failure (status ``failed``: no outcome yet) are ignored. A row ``error`` (a call refused
    for good) is an outcome, not correct.
    """
    chosen = set(suite)
    table: dict[str, dict[str, dict[int, bool]]] = {}
    for row in rows:
        if row.get("status", "ok") not in ("ok", "error") or row["model"] not in chosen \
                or not 0 <= int(row["trial"]) < trials:
            continue
        correct = row.get("status", "ok") == "ok" and bool(row["correct"])
        table.setdefault(row["instance_id"], {}).setdefault(row["model"], {})[int(row["trial"])] = correct
    out = []
    for iid in instance_ids:
        per_model = {m: [v for _, v in sorted(t.items())] for m, t in table.get(iid, {}).items()}
        out.append(assign(iid, per_model, suite, trials, rule, exclusion))
    return out


def tier_table(assignments: Sequence[Assignment]) -> dict[str, Any]:
    """Counts per tier with the share of tiered instances, plus excluded and pending counts."""
    tiered = [a for a in assignments if a.status == "tiered"]
    counts = {t: sum(a.tier == t for a in tiered) for t in DIFFICULTY_TIERS}
    return {
        "tiers": {t: {"n": counts[t], "share": round(counts[t] / len(tiered), 4) if tiered else None} for t in DIFFICULTY_TIERS},
        "tiered": len(tiered),
        "excluded": sum(a.status == "excluded" for a in assignments),
        "pending": sum(a.status == "pending" for a in assignments),
        "instances": len(assignments),
    }


__all__ = ["DIFFICULTY_TIERS", "EXCLUSIONS", "RULES", "Assignment", "Rule", "assign", "band", "check_exclusion",
           "parse_rule", "tier_of", "tier_ranges", "tier_table", "tiers_from_rows"]  # fmt: skip
