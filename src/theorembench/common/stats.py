"""Uncertainty for every number a user may quote: Wilson intervals, item bootstraps, paired differences.

Every accuracy theorembench prints or stores comes with its sample size and a 95%
interval. A proportion of ``k`` correct out of ``n`` items uses the Wilson score
interval (good at small ``n`` and near 0 or 1, where the normal approximation fails);
a mean of per-item scores in [0, 1] (mean@n, weighted scores) uses a percentile
bootstrap over items; a difference between two runs on the same items (the sketch
gain) uses a paired bootstrap over the items both runs answered.

Bootstraps are seeded, so the same data always gives the same interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

Z95 = 1.959963984540054  # the standard normal's 97.5% quantile
BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 20260101


def wilson(correct: float, n: int, *, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for ``correct`` successes out of ``n`` (fractions in [0, 1]); (0, 1) when n is 0."""
    if n <= 0:
        return (0.0, 1.0)
    p = correct / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass(frozen=True)
class Estimate:
    """A quoted figure: its value (a fraction), sample size, 95% interval and how the interval was made."""

    value: float | None
    n: int
    low: float
    high: float
    method: str

    @property
    def ci95(self) -> list[float]:
        return [round(self.low, 4), round(self.high, 4)]

    def to_dict(self) -> dict[str, Any]:
        return {"value": None if self.value is None else round(self.value, 4), "n": self.n, "ci95": self.ci95,
                "ci_method": self.method}  # fmt: skip

    def percent(self, digits: int = 1) -> str:
        """``61.0% [43.2–76.5] n=29``: the value, its interval and sample size, for tables."""
        if self.value is None or self.n == 0:
            return "n=0"
        return (f"{100 * self.value:.{digits}f}% [{100 * self.low:.{digits}f}–{100 * self.high:.{digits}f}] "
                f"n={self.n}")  # fmt: skip

    def points(self, digits: int = 1) -> str:
        """``±18.0 pts``: half the interval's width, in percentage points."""
        return f"±{50 * (self.high - self.low):.{digits}f} pts"


def proportion(correct: int, n: int) -> Estimate:
    """``correct`` of ``n`` with its Wilson interval."""
    low, high = wilson(correct, n)
    return Estimate(correct / n if n else None, n, low, high, "wilson")


def _rng(seed: int | None) -> np.random.Generator:
    return np.random.default_rng(BOOTSTRAP_SEED if seed is None else seed)


def bootstrap_mean(values: Sequence[float], *, resamples: int = BOOTSTRAP_RESAMPLES,
                   seed: int | None = None) -> Estimate:  # fmt: skip
    """The mean of per-item values with a percentile bootstrap interval over items."""
    data = np.asarray(values, dtype=float)
    n = len(data)
    if n == 0:
        return Estimate(None, 0, 0.0, 1.0, "bootstrap")
    idx = _rng(seed).integers(0, n, size=(resamples, n))
    means = data[idx].mean(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    return Estimate(float(data.mean()), n, float(low), float(high), "bootstrap")


def paired_difference(a: Sequence[float], b: Sequence[float], *, resamples: int = BOOTSTRAP_RESAMPLES,
                      seed: int | None = None) -> Estimate:  # fmt: skip
    """mean(b) − mean(a) over paired items (same index = same item), with a paired bootstrap interval.

    The value may be negative; the interval is in the same units (fractions, so −1..1).
    """
    if len(a) != len(b):
        raise ValueError(f"paired samples differ in length: {len(a)} and {len(b)}")
    diff = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    n = len(diff)
    if n == 0:
        return Estimate(None, 0, -1.0, 1.0, "paired bootstrap")
    idx = _rng(seed).integers(0, n, size=(resamples, n))
    means = diff[idx].mean(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    return Estimate(float(diff.mean()), n, float(low), float(high), "paired bootstrap")


def weighted_bootstrap(scores: Sequence[float], weights: Sequence[float], *, scale: float = 1.0,
                       resamples: int = BOOTSTRAP_RESAMPLES, seed: int | None = None) -> Estimate:  # fmt: skip
    """``scale * Σ wᵢ sᵢ / Σ wᵢ`` (e.g. weighted points) with a bootstrap interval over items."""
    s = np.asarray(scores, dtype=float)
    w = np.asarray(weights, dtype=float)
    n = len(s)
    if n == 0 or w.sum() <= 0:
        return Estimate(None, n, 0.0, scale, "bootstrap")
    idx = _rng(seed).integers(0, n, size=(resamples, n))
    ws = w[idx]
    totals = ws.sum(axis=1)
    totals[totals == 0] = 1.0
    values = scale * (ws * s[idx]).sum(axis=1) / totals
    low, high = np.quantile(values, [0.025, 0.975])
    return Estimate(float(scale * (w * s).sum() / w.sum()), n, float(low), float(high), "bootstrap")
