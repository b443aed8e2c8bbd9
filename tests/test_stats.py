"""Intervals on quoted numbers, checked against published values (Newcombe 1998, Table I) and exact cases."""

from __future__ import annotations

import pytest

from theorembench.common.stats import (
    bootstrap_mean,
    paired_difference,
    proportion,
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
    assert est.to_dict() == {"value": 0.5517, "n": 29, "ci95": [0.3755, 0.7159], "ci_method": "wilson"}
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
