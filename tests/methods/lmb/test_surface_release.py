"""The computed surface checks accept the paper's own released items (issue 9, item 20).

Every released item file under ../shared/data/lmb/202511 is measured with the default
settings. An item that keeps its option A is measured as the pipeline measures it. A
substitution-resistant item no longer carries its original option A (its keyed answer
is the meta-option), so its false options are measured against the weaker-but-true
option, the closest released stand-in (A with one component dropped).

Pass rates with the defaults (min ratio 0.5, max ratio 1.8, density gap 0.25, short
texts 120 characters, shape difference 2), counted by hand from the printout of
``.venv/bin/python -m pytest tests/test_surface_release.py -s``:

    qaEval_202511_ge5_hard.json: 27 of 29 (93.1%); 15 of 15 with option A, 12 of 14 against the stand-in

With the former defaults (0.6 to 1.6, gap 0.15 also applied to the weaker option) 7 of the 15 items with
option A failed.
"""

from __future__ import annotations

import json
import math

import pytest
from helpers.paths import SHARED

from theorembench.evaluate.mcq.items import META_OPTION
from theorembench.methods.lmb.config import load_config
from theorembench.methods.lmb.surface import check_surface, latex_density

RELEASE = SHARED / "data" / "lmb" / "202511"

# (passed, total, passed with option A, total with option A), per released item file, counted by hand
EXPECTED = {"qaEval_202511_ge5_hard.json": (27, 29, 15, 15)}
FORMER = {"min_length_ratio": 0.6, "max_length_ratio": 1.6, "max_latex_density_gap": 0.15, "short_chars": 0}


def _files():
    if not RELEASE.is_dir():
        pytest.skip(f"shared data not found at {RELEASE}")
    return sorted(p for p in RELEASE.glob("qaEval_*.json"))


def _measure(item: dict, weaker_check: bool = False, **settings):
    mcq = item["mcq"]
    choices = {c["label"]: c["text"] for c in mcq["choices"]}
    weaker = mcq["meta"]["weaker_true_label"]
    a_text = mcq["correct_choice"]["text"]
    resistant = " ".join(a_text.split()) == META_OPTION
    if resistant:
        a_text = choices.pop(weaker)
    report = check_surface(a_text, choices, weaker_true=weaker, **settings)
    return resistant, report


def _defaults() -> dict:
    s = load_config().surface
    return {"min_length_ratio": s.min_length_ratio, "max_length_ratio": s.max_length_ratio,
            "max_latex_density_gap": s.max_latex_density_gap, "short_chars": s.short_chars}  # fmt: skip


def test_every_released_file_is_covered():
    assert sorted(p.name for p in _files()) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_release_pass_rate_with_the_defaults(name):
    path = RELEASE / name
    if not path.is_file():
        pytest.skip(f"shared data not found at {path}")
    items = json.loads(path.read_text())
    counts = [0, 0, 0, 0]
    for item in items:
        resistant, report = _measure(item, **_defaults())
        counts[0] += report.ok
        counts[1] += 1
        if not resistant:
            counts[2] += report.ok
            counts[3] += 1
        if not report.ok:
            print(item["id"], "substitution-resistant" if resistant else "with A", report.problems)
    print(f"{name}: {counts[0]}/{counts[1]} pass ({counts[0] / counts[1]:.1%}); "
          f"{counts[2]}/{counts[3]} with option A")  # fmt: skip
    assert tuple(counts) == EXPECTED[name]
    assert counts[0] / counts[1] >= 0.9


def test_former_defaults_rejected_half_the_items_with_option_a(lmb_hard):
    items = [it for it in json.loads(lmb_hard.read_text()) if " ".join(
        it["mcq"]["correct_choice"]["text"].split()) != META_OPTION]  # fmt: skip
    failed = [it["id"] for it in items if not _measure_former(it).ok]
    assert len(items) == 15 and len(failed) == 7


def _measure_former(item: dict):
    """The former rule: every option held to every bound, the weaker one too (except the lower length bound)."""
    mcq = item["mcq"]
    choices = {c["label"]: c["text"] for c in mcq["choices"]}
    a_text = mcq["correct_choice"]["text"]
    report = check_surface(a_text, choices, weaker_true=None, **FORMER)
    weaker = mcq["meta"]["weaker_true_label"]
    keep = [p for p in report.problems if not (p.startswith(f"option {weaker} is") and "at least" in p)]
    report.problems[:] = keep
    return report


def test_defaults_still_catch_giveaways():
    a = r"For every integer $n \ge 1$ one has $|D_n - n!/e| < 1/(n+1)$ and the sign of $D_n - n!/e$ is $(-1)^n$."
    near = a.replace("n+1", "n+2")
    assert check_surface(a, {"B": near, "C": "For every $n$, $D_n$ is near $n!/e$.", "D": near, "E": near},
                         weaker_true="C").ok  # fmt: skip
    cases = {
        "No.": "option B is 0.0x as long as option A (at least 0.5x)",
        " ".join([a] * 3): "option B is 3.0x as long as option A (at most 216 characters)",
        "For every integer n at least one, the distance from D_n to n!/e stays below one over n plus one.":
            "option B has LaTeX density",
        "There exists a unique $n$ with no bound whatsoever, if and only if $n$ is not prime.":
            "option B differs from option A in logical shape",
    }  # fmt: skip
    for text, problem in cases.items():
        report = check_surface(a, {"B": text}, weaker_true="C")
        assert any(p.startswith(problem) for p in report.problems), (text, report.problems)
    # a short option A: one added clause is not a giveaway, four times the length is
    short = r"$\mathsf{F}$ is a Poisson embedding."
    assert check_surface(short, {"B": r"$\mathsf{F}$ is a Poisson embedding onto a leaf of the smooth locus."},
                         weaker_true="C").ok  # fmt: skip
    long = check_surface(short, {"B": "x" * 230}, weaker_true="C")
    assert any("at most 216 characters" in p for p in long.problems)
    long_a = " ".join([a] * 2)  # 209 characters: the ratio itself is the bound
    assert check_surface(long_a, {"B": " ".join([a] * 4)}, weaker_true="C").problems[0] == (
        "option B is 2.0x as long as option A (at most 1.8x)")  # fmt: skip
    # the weaker-true option may be shorter and sparser; it is held only to the upper length bound
    assert check_surface(a, {"C": "Always $D_n \\approx n!/e$, roughly."}, weaker_true="C").ok
    assert not check_surface(a, {"C": " ".join([a] * 3)}, weaker_true="C").ok


# -- how well the thresholds generalise (issue 21, item 8) ---------------------------------------------------------
# The shipped thresholds were chosen by loosening the former ones until all 15 released items with option A passed,
# so those 15 cannot tell how well they generalise. Held out: the 15 sorted by id, every second one is a fitting
# item (8), the others held out (7). The rule below fits thresholds on the fitting items only (the loosest measured
# value, rounded outward: ratios to 0.1, the density gap to 0.05), and the held-out items are checked with them.


def _items_with_option_a() -> list[dict]:
    items = json.loads((RELEASE / "qaEval_202511_ge5_hard.json").read_text())
    return sorted((it for it in items if " ".join(it["mcq"]["correct_choice"]["text"].split()) != META_OPTION),
                  key=lambda it: it["id"])  # fmt: skip


def _fit(items: list[dict], short: int = 120) -> dict:
    lows, highs, gaps = [], [], []
    for it in items:
        report = check_surface(it["mcq"]["correct_choice"]["text"], {c["label"]: c["text"] for c in it["mcq"]["choices"]},
                               weaker_true=None, min_length_ratio=0, max_length_ratio=99, max_latex_density_gap=9,
                               short_chars=short)  # fmt: skip
        a = it["mcq"]["correct_choice"]["text"]
        for c in it["mcq"]["choices"]:
            text, weaker = c["text"], c["label"] == it["mcq"]["meta"]["weaker_true_label"]
            highs.append(len(text) / max(len(a), short))
            if not weaker:
                lows.append(report.measures[c["label"]]["length_ratio"])
                gap = abs(report.measures[c["label"]]["latex_density"] - latex_density(a))
                gaps.append(gap / max(1.0, short / max(1, min(len(text), len(a)))))
    return {"min_length_ratio": math.floor(10 * min(lows)) / 10, "max_length_ratio": math.ceil(10 * max(highs)) / 10,
            "max_latex_density_gap": math.ceil(20 * max(gaps)) / 20, "short_chars": short}  # fmt: skip


def _passed(items: list[dict], settings: dict) -> int:
    return sum(_measure(it, **settings)[1].ok for it in items)


def test_thresholds_fitted_on_half_the_items_accept_the_held_out_half():
    items = _items_with_option_a()
    fitting, held_out = items[0::2], items[1::2]
    assert (len(fitting), len(held_out)) == (8, 7)
    fitted = _fit(fitting)
    # the fitting items' extremes (printed once): false options at least 0.80x as long as A, every option at most
    # 1.61x max(len A, 120), density gap at most 0.18 after the short-text allowance; rounded outward
    assert fitted == {"min_length_ratio": 0.7, "max_length_ratio": 1.7, "max_latex_density_gap": 0.2, "short_chars": 120}
    assert (_passed(fitting, fitted), _passed(held_out, fitted)) == (8, 7)  # held out: 7 of 7
    # the shipped thresholds are looser than the fitted ones on every bound, and pass both halves
    shipped = _defaults()
    assert shipped["min_length_ratio"] <= fitted["min_length_ratio"] and \
        shipped["max_length_ratio"] >= fitted["max_length_ratio"] and \
        shipped["max_latex_density_gap"] >= fitted["max_latex_density_gap"]  # fmt: skip
    assert (_passed(fitting, shipped), _passed(held_out, shipped)) == (8, 7)
