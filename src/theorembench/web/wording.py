"""Words the platform prints the same way on every page: subquestion points (a Jinja filter, ``points``).

The indicators' display names are defined once beside the indicators themselves
(:data:`theorembench.methods.improof.grades.INDICATOR_LABELS`): grading, statistics and exports use them.
"""

from __future__ import annotations

import math
from typing import Any


def points(value: Any) -> str:
    """``1`` -> "1 point", ``1.5`` -> "1.5 points", ``2.0`` -> "2 points" (never "1.0 point"); None counts as 1,
    the default weight of a subquestion."""
    number = 1.0 if value is None or value == "" else float(value)
    if not math.isfinite(number):
        raise ValueError(f"points must be a finite number, got {value!r}")
    text = str(int(number)) if number.is_integer() else f"{number:.6g}"
    return f"{text} point" if number == 1 else f"{text} points"
