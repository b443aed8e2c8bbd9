"""Surface anti-gaming constraints, computed rather than only requested.

A distractor that can be rejected without reading the mathematics (much longer or
shorter than option A, far more or less LaTeX, a different logical shape) gives
the answer away. These checks measure each option against A; the pipeline sends
offenders back for revision and flags (``surface_flags``) the items that still fail.

As in the paper's Stage 4b, the false options (B, D, E) must match A in length,
LaTeX density and logical shape, while the weaker-but-true option may be shorter:
it is only held to the upper length bound. Ratios between short texts say little
(one added clause doubles a 40-character statement), so an option A shorter than
``short_chars`` counts as ``short_chars`` long for the upper length bound, and the
density gap allowed grows by ``short_chars / length`` for the shorter of the two.

How the defaults were chosen: the former ones (ratio 0.6 to 1.6, density gap 0.15 also on
the weaker option) were loosened until every item of the released 202511 hard split that
still carries its option A passed (15 items; the former defaults rejected 7 of them), so
those 15 were the fitting data and cannot by themselves say how the values generalise.
``tests/methods/lmb/test_surface_release.py`` therefore holds half of them out: thresholds
fitted on 8 of the 15 (the loosest measured values rounded outward: 0.7, 1.7, 0.2) accept
all 7 held-out items, and the shipped values are looser than those on every bound. The 14
substitution-resistant items, never used for fitting, pass 12 of 14 (measured against the
weaker option, the closest stand-in for their lost option A).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_MATH = re.compile(r"\$\$.*?\$\$|\$[^$]*\$|\\\[.*?\\\]|\\\(.*?\\\)", re.DOTALL)
_COMMAND = re.compile(r"\\[A-Za-z]+")

SHAPE_MARKERS: dict[str, re.Pattern[str]] = {
    "universal": re.compile(r"\bfor (all|every|each|any)\b|\\forall|\bevery\b|\ball\b", re.IGNORECASE),
    "existential": re.compile(r"\bthere (exist|exists|is|are)\b|\\exists|\bsome\b", re.IGNORECASE),
    "equivalence": re.compile(r"\bif and only if\b|\biff\b|\\iff|\\Leftrightarrow|\bequivalent\b", re.IGNORECASE),
    "conditional": re.compile(r"\bif\b|\bthen\b|\bwhenever\b|\\Rightarrow|\\implies", re.IGNORECASE),
    "uniqueness": re.compile(r"\bunique(ly)?\b|\\exists!", re.IGNORECASE),
    "negation": re.compile(r"\bno\b|\bnot\b|\bcannot\b|\bnever\b|\bnone\b|\\neg", re.IGNORECASE),
}

# calibrated defaults (see the module docstring); the [surface] section of the LMB config overrides them
MIN_LENGTH_RATIO = 0.5
MAX_LENGTH_RATIO = 1.8
MAX_LATEX_DENSITY_GAP = 0.25
MAX_SHAPE_DIFFERENCE = 2
SHORT_CHARS = 120


def latex_density(text: str) -> float:
    """Share of characters that are math or LaTeX commands."""
    if not text:
        return 0.0
    math_chars = sum(len(m.group(0)) for m in _MATH.finditer(text))
    outside = _MATH.sub("", text)
    command_chars = sum(len(m.group(0)) for m in _COMMAND.finditer(outside))
    return min(1.0, (math_chars + command_chars) / len(text))


def logical_shape(text: str) -> frozenset[str]:
    return frozenset(name for name, pat in SHAPE_MARKERS.items() if pat.search(text))


@dataclass
class SurfaceReport:
    problems: list[str]
    measures: dict[str, dict[str, float | list[str]]]

    @property
    def ok(self) -> bool:
        return not self.problems


def check_surface(
    correct: str,
    choices: dict[str, str],
    *,
    weaker_true: str | None,
    min_length_ratio: float = MIN_LENGTH_RATIO,
    max_length_ratio: float = MAX_LENGTH_RATIO,
    max_latex_density_gap: float = MAX_LATEX_DENSITY_GAP,
    max_shape_difference: int = MAX_SHAPE_DIFFERENCE,
    short_chars: int = SHORT_CHARS,
) -> SurfaceReport:
    """Measure each option against the correct one; the weaker-true option is held to the upper length bound only."""
    problems: list[str] = []
    measures: dict[str, dict[str, float | list[str]]] = {}
    a_len = max(1, len(correct))
    a_density = latex_density(correct)
    a_shape = logical_shape(correct)
    longest = max_length_ratio * max(a_len, short_chars)
    for label, text in sorted(choices.items()):
        ratio = len(text) / a_len
        density = latex_density(text)
        shape = logical_shape(text)
        diff = sorted(shape ^ a_shape)
        measures[label] = {"length_ratio": round(ratio, 3), "latex_density": round(density, 3),
                           "shape_difference": diff}  # fmt: skip
        if len(text) > longest:
            bound = f"at most {max_length_ratio:g}x" if a_len >= short_chars else f"at most {longest:.0f} characters"
            problems.append(f"option {label} is {ratio:.1f}x as long as option A ({bound})")
        if label == weaker_true:
            continue  # the weaker option drops a component: it may be shorter, sparser and simpler than A
        if ratio < min_length_ratio:
            problems.append(f"option {label} is {ratio:.1f}x as long as option A (at least {min_length_ratio:g}x)")
        allowed = max_latex_density_gap * max(1.0, short_chars / max(1, min(len(text), a_len)))
        if abs(density - a_density) > allowed:
            problems.append(f"option {label} has LaTeX density {density:.2f} against {a_density:.2f} for option A "
                            f"(gap at most {allowed:.2g})")  # fmt: skip
        if len(diff) > max_shape_difference:
            problems.append(f"option {label} differs from option A in logical shape: {', '.join(diff)}")
    return SurfaceReport(problems, measures)
