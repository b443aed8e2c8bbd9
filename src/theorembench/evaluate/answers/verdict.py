"""The verdict on one answer: correct (True, False, or None when it could not be read), warnings, parsed forms."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

LEVELS = ("none", "low", "high")
# The checker's version, stored with every verdict and results file: a change to extraction,
# parsing or comparison bumps it, so stored verdicts of another version are graded again
# instead of being mixed with new ones. 2: the last box counts; brackets, names, approximations,
# hedged yes/no, units, percents, mixed numbers, equations, matrices and intervals are read.
CHECKER_VERSION = "2"


@dataclass
class Verdict:
    """``correct`` is None when the answer (or the expected one) could not be parsed or judged in time.

    ``warning`` is ``none``, ``low`` (judged, with a caveat: a tolerance, a numerical check) or
    ``high`` (no answer found, unparsed, too large, timeout, an ambiguous or hedged answer);
    ``messages`` say which. ``expected`` and ``answer`` are the parsed forms, shortened;
    ``extracted`` is the answer text taken from the reply and ``source`` where it came from;
    ``checker_version`` is the :data:`CHECKER_VERSION` that judged it.
    """

    correct: bool | None
    kind: str
    warning: str = "none"
    messages: list[str] = field(default_factory=list)
    expected: str | None = None
    answer: str | None = None
    extracted: str | None = None
    source: str | None = None
    checker_version: str = CHECKER_VERSION

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def warn(self, message: str, level: str = "high") -> None:
        if message not in self.messages:
            self.messages.append(message)
        if LEVELS.index(level) > LEVELS.index(self.warning):
            self.warning = level
