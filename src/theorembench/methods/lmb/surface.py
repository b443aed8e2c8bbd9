"""Surface anti-gaming constraints, computed rather than only requested.

A distractor that can be rejected without reading the mathematics (much longer or
shorter than option A, far more or less LaTeX, a different logical shape) gives
the answer away. These checks measure each option against A; the pipeline sends
offenders back for revision and rejects items that still fail.
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
    min_length_ratio: float = 0.6,
    max_length_ratio: float = 1.6,
    max_latex_density_gap: float = 0.15,
    max_shape_difference: int = 2,
) -> SurfaceReport:
    """Measure each option against the correct one; the weaker-true option may be shorter."""
    problems: list[str] = []
    measures: dict[str, dict[str, float | list[str]]] = {}
    a_len = max(1, len(correct))
    a_density = latex_density(correct)
    a_shape = logical_shape(correct)
    for label, text in sorted(choices.items()):
        ratio = len(text) / a_len
        density = latex_density(text)
        shape = logical_shape(text)
        diff = sorted(shape ^ a_shape)
        measures[label] = {"length_ratio": round(ratio, 3), "latex_density": round(density, 3),
                           "shape_difference": diff}  # fmt: skip
        if ratio > max_length_ratio:
            problems.append(f"option {label} is {ratio:.1f}x as long as option A (at most {max_length_ratio:g}x)")
        if ratio < min_length_ratio and label != weaker_true:
            problems.append(f"option {label} is {ratio:.1f}x as long as option A (at least {min_length_ratio:g}x)")
        if abs(density - a_density) > max_latex_density_gap:
            problems.append(
                f"option {label} has LaTeX density {density:.2f} against {a_density:.2f} for option A "
                f"(gap at most {max_latex_density_gap:g})"
            )
        if len(diff) > max_shape_difference:
            problems.append(f"option {label} differs from option A in logical shape: {', '.join(diff)}")
    return SurfaceReport(problems, measures)
