"""Intervals on quoted numbers, checked against published values (Newcombe 1998, Table I) and exact cases."""

from __future__ import annotations

import math

import pytest

from theorembench.common.stats import (
    Estimate,
    bootstrap_mean,
    bounded_mean,
    paired_difference,
    proportion,
    quote,
    weighted_bootstrap,
    wilson,
)


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [
        (81, 263, 0.2553, 0.3662),  # Newcombe (1998), Statistics in Medicine 17:857, method 3
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
        (5, 10, 0.2366, 0.7634),
        (10, 10, 0.7225, 1.0),
    ],
)
def test_wilson_matches_published_values(k: int, n: int, low: float, high: float) -> None:
    got = wilson(k, n)
    assert got == pytest.approx((low, high), abs=6e-5)


def test_proportion_carries_n_and_interval() -> None:
    est = proportion(16, 29)
    assert est.n == 29 and est.value == pytest.approx(16 / 29)
    # by hand: centre (p + z²/2n)/(1 + z²/n) = 0.5457, half-width 0.1702
    assert est.to_dict() == {"value": 0.5517, "ci95": [0.3755, 0.7159], "n": 29, "errors": 0, "method": "wilson"}
    assert est.percent() == "55.2% [37.5–71.6] n=29"
    assert est.points() == "±17.0 pts"  # the ~±18 points of the 29-item released split


def test_empty_sample_has_no_value() -> None:
    assert proportion(0, 0).value is None and proportion(0, 0).percent() == "n=0"
    assert bootstrap_mean([]).value is None


def test_bootstrap_of_constant_data_is_a_point() -> None:
    est = bootstrap_mean([1.0] * 12)
    assert (est.value, est.low, est.high) == (1.0, 1.0, 1.0)


def test_bootstrap_is_seeded_and_brackets_the_mean() -> None:
    values = [1, 0, 1, 1, 0, 0.5, 1, 0, 1, 1]
    a, b = bootstrap_mean(values), bootstrap_mean(values)
    assert a == b
    assert a.value == pytest.approx(0.65)
    assert a.low < 0.65 < a.high


def test_paired_difference_uses_pairs() -> None:
    # every item gains exactly one point: the paired difference has no spread at all,
    # although each run alone has a wide interval
    without = [0.0, 1.0, 0.0, 1.0, 0.0, 1.0]
    with_sketch = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    assert paired_difference([0.0] * 6, [1.0] * 6).ci95 == [1.0, 1.0]
    diff = paired_difference(without, with_sketch)
    assert diff.value == pytest.approx(0.5) and diff.n == 6 and diff.method == "paired bootstrap"
    with pytest.raises(ValueError, match="differ in length"):
        paired_difference([1.0], [1.0, 0.0])


def test_weighted_bootstrap_scales_and_weights() -> None:
    est = weighted_bootstrap([1, 0, 0], [2, 1, 1], scale=100)
    assert est.value == pytest.approx(50.0)
    assert 0 <= est.low <= est.value <= est.high <= 100


def test_all_zero_scores_at_n_2_give_an_honest_interval() -> None:
    # Wilson at p = 0 with n = 2, by hand with z = 1.96: high = (z²/2n + z·√(z²/4n²)) / (1 + z²/n) = z² / (n + z²)
    z, n = 1.96, 2
    high = (z * z / (2 * n) + z * math.sqrt(z * z / (4 * n * n))) / (1 + z * z / n)
    est = bounded_mean([0.0, 0.0])
    assert (est.value, est.n, est.low, est.method) == (0.0, 2, 0.0, "wilson-mean")
    assert est.high == pytest.approx(high, abs=1e-3) and est.high > 0.6  # not the bootstrap's point [0, 0]
    assert est.percent() == "0.0% [0.0–65.8] n=2"


def test_estimate_json_shape_errors_and_old_shapes() -> None:
    est = proportion(1, 4, errors=2)
    assert est.to_dict() == {"value": 0.25, "ci95": [0.0456, 0.6994], "n": 4, "errors": 2, "method": "wilson"}
    assert quote(est.to_dict()) == "25.0% [4.6–69.9] n=4, 2 errors"
    assert Estimate.from_dict(est.to_dict()) == Estimate(0.25, 4, 0.0456, 0.6994, "wilson", 2)
    # shapes written before: the old Estimate (ci_method), EternalMath's block (accuracy, percent), an MCQ block
    old = {"value": 0.5517, "n": 29, "ci95": [0.3755, 0.7159], "ci_method": "wilson"}
    assert quote(old) == "55.2% [37.5–71.6] n=29"
    eternal = {"n": 5, "correct": 3, "accuracy": 0.6, "percent": 60.0, "ci95": [0.2307, 0.8824], "ci_method": "wilson"}
    assert quote(eternal) == "60.0% [23.1–88.2] n=5"
    only_percent = {"n": 5, "percent": 60.0, "ci95": [0.2307, 0.8824]}
    assert Estimate.from_dict(only_percent).value == pytest.approx(0.6)
    mcq = {"correct": 4, "total": 29, "accuracy": 0.1379, "n": 29, "ci95": [0.055, 0.3056], "ci_method": "wilson"}
    assert quote(mcq) == "13.8% [5.5–30.6] n=29"
    assert quote(None) == "n=0" and Estimate.from_dict({"note": "no score"}) is None


def test_weighted_mean_uses_the_effective_sample_size() -> None:
    # weights 1 and 3 on scores 1 and 0: mean 0.25, effective n = 4² / (1 + 9) = 1.6, checked by hand with z = 1.96
    z, p, n = 1.96, 0.25, 1.6
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    est = bounded_mean([1.0, 0.0], [1.0, 3.0])
    assert (est.value, est.n, est.method) == (0.25, 2, "wilson-mean, effective n")
    assert (est.low, est.high) == pytest.approx((centre - half, centre + half), abs=1e-4)


def test_a_mean_on_a_0_to_3_scale_gets_the_wilson_interval_in_its_own_units() -> None:
    # one progress grade of 2 on 0–3: Wilson at p = 2/3 with n = 1, by hand with z = 1.96, then times 3
    z, p, n = 1.96, 2 / 3, 1
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    est = bounded_mean([2.0], scale=3.0)
    assert est.value == pytest.approx(2.0) and est.n == 1 and est.method == "wilson-mean, scaled 0–3"
    assert (est.low, est.high) == pytest.approx((3 * (centre - half), 3 * (centre + half)), abs=1e-3)
    assert 0.28 < est.low < 0.29 and 2.92 < est.high < 2.93  # not the bootstrap's point [2, 2]
    with pytest.raises(ValueError, match="scale"):
        bounded_mean([1.0], scale=0)
