"""Uncertainty for every number a user may quote: one :class:`Estimate` shape, one formatter.

Every score theorembench prints or stores is an :class:`Estimate`: its value (a fraction),
a 95% interval, the sample size ``n``, ``errors`` (samples whose model call failed after its
retries in this run, refused or given up; they are counted in ``n`` as not correct) and ``method`` (how the interval was made).
In JSON it is always ``{"value", "ci95", "n", "errors", "method"}`` (:meth:`Estimate.to_dict`);
:meth:`Estimate.from_dict` also reads the shapes written before (``ci_method``, EternalMath's
``accuracy``/``percent`` blocks, MCQ blocks), and :func:`quote` is the one way to show one.

Intervals: a proportion of ``k`` correct out of ``n`` uses the Wilson score interval. A
mean of per-item scores bounded in [0, 1] (mean@n, partial credit, weighted scores) uses
the Wilson interval at the observed mean with the same n (method ``wilson-mean``): a
[0, 1] variable with mean p has variance at most p(1 − p), the variance of a 0/1 variable
with that mean, so this is conservative, and unlike a percentile bootstrap it never
collapses to a point when every score is equal (all zero at n=2 gives [0, 0.66], not
[0, 0]). A weighted mean uses Kish's effective sample size (Σw)²/Σw² as n
(``wilson-mean, effective n``). A mean on another bounded scale, e.g. progress grades on
0–3, is rescaled to [0, 1] for the interval and back (``scale=3``). A difference between two
runs on the same items (the sketch gain) uses a paired bootstrap, seeded, so the same data
always gives the same interval.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

Z95 = 1.959963984540054  # the standard normal's 97.5% quantile
BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 20260101


def wilson(correct: float, n: float, *, z: float = Z95) -> tuple[float, float]:
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
    """A quoted figure: its value (a fraction), n, 95% interval, how the interval was made, and failed samples."""

    value: float | None
    n: int
    low: float
    high: float
    method: str
    errors: int = 0

    @property
    def ci95(self) -> list[float]:
        return [round(self.low, 4), round(self.high, 4)]

    def to_dict(self) -> dict[str, Any]:
        """The one JSON shape of a score: ``{"value", "ci95", "n", "errors", "method"}``."""
        return {"value": None if self.value is None else round(self.value, 4), "ci95": self.ci95, "n": self.n,
                "errors": self.errors, "method": self.method}  # fmt: skip

    def with_errors(self, errors: int) -> Estimate:
        return replace(self, errors=int(errors))

    @classmethod
    def from_dict(cls, block: Mapping[str, Any] | None) -> Estimate | None:
        """An estimate from its JSON, or from a shape written before; None when ``block`` holds no score.

        Read: this shape; ``ci_method`` for ``method``; ``accuracy`` (EternalMath, MCQ blocks) or
        ``percent`` for ``value``; ``total`` for ``n``. A missing interval reads as [0, 1].
        """
        if not isinstance(block, Mapping):
            return None
        value = block.get("value", block.get("accuracy"))
        if value is None and block.get("percent") is not None:
            value = block["percent"] / 100
        n = block.get("n", block.get("total"))
        if n is None:
            return None
        low, high = block.get("ci95") or (0.0, 1.0)
        method = block.get("method") or block.get("ci_method") or "unknown"
        if not isinstance(method, str):
            method = "unknown"
        return cls(None if value is None else float(value), int(n), float(low), float(high), method,
                   int(block.get("errors") or 0) if isinstance(block.get("errors"), int | float) else 0)  # fmt: skip

    def percent(self, digits: int = 1) -> str:
        """``61.0% [43.2–76.5] n=29`` (``, 2 errors`` added when samples failed): the one formatter for scores."""
        if self.value is None or self.n == 0:
            return "n=0"
        text = (f"{100 * self.value:.{digits}f}% [{100 * self.low:.{digits}f}–{100 * self.high:.{digits}f}] "
                f"n={self.n}")  # fmt: skip
        if self.errors:
            text += f", {self.errors} error{'s' if self.errors != 1 else ''}"
        return text

    def points(self, digits: int = 1) -> str:
        """``±18.0 pts``: half the interval's width, in percentage points."""
        return f"±{50 * (self.high - self.low):.{digits}f} pts"


def quote(block: Mapping[str, Any] | Estimate | None, digits: int = 1) -> str:
    """The one way a score is shown (tables, reports, the web): ``61.0% [43.2–76.5] n=29``; ``n=0`` for none."""
    est = block if isinstance(block, Estimate) else Estimate.from_dict(block)
    return "n=0" if est is None else est.percent(digits)


def proportion(correct: int, n: int, *, errors: int = 0) -> Estimate:
    """``correct`` of ``n`` with its Wilson interval (``errors`` of the ``n`` failed, counted as not correct)."""
    low, high = wilson(correct, n)
    return Estimate(correct / n if n else None, n, low, high, "wilson", errors)


def bounded_mean(values: Sequence[float], weights: Sequence[float] | None = None, *,
                 errors: int = 0, scale: float = 1.0) -> Estimate:  # fmt: skip
    """The (weighted) mean of per-item scores in [0, ``scale``] with the Wilson interval at that mean (see the
    module notes); value and interval are in the scores' own units.

    Unweighted, n is the number of items (method ``wilson-mean``); weighted, the interval uses Kish's effective
    sample size (Σw)²/Σw² (method ``wilson-mean, effective n``), while ``n`` stays the number of items.
    """
    if scale != 1.0:
        if scale <= 0:
            raise ValueError(f"scale must be positive, not {scale}")
        unit = bounded_mean([v / scale for v in values], weights, errors=errors)
        return replace(unit, value=None if unit.value is None else unit.value * scale, low=unit.low * scale,
                       high=unit.high * scale, method=f"{unit.method}, scaled 0–{scale:g}")  # fmt: skip
    data = np.asarray(values, dtype=float)
    n = len(data)
    if weights is None:
        if n == 0:
            return Estimate(None, 0, 0.0, 1.0, "wilson-mean", errors)
        mean = float(data.mean())
        low, high = _wilson_at(mean, float(n))
        return Estimate(mean, n, low, high, "wilson-mean", errors)
    w = np.asarray(weights, dtype=float)
    if len(w) != n:
        raise ValueError(f"{n} scores but {len(w)} weights")
    method = "wilson-mean, effective n"
    if n == 0 or w.sum() <= 0:
        return Estimate(None, n, 0.0, 1.0, method, errors)
    mean = float((w * data).sum() / w.sum())
    low, high = _wilson_at(mean, float(w.sum() ** 2 / (w * w).sum()))
    return Estimate(mean, n, low, high, method, errors)


def _wilson_at(mean: float, n: float) -> tuple[float, float]:
    """The Wilson interval at an observed mean in [0, 1] (clipped there) with a possibly fractional n."""
    return wilson(min(1.0, max(0.0, mean)) * n, n)


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
