"""What a LaTeX check reports: one :class:`LatexIssue` per problem, collected in a :class:`LatexReport`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Engine", "LatexIssue", "LatexReport", "short"]

Engine = Literal["katex", "pdflatex"]


@dataclass
class LatexIssue:
    where: str  # the key of the string: "question", "choice B", or "preamble"
    segment: str  # the offending math segment (KaTeX) or source line (pdflatex), shortened
    engine: Engine
    message: str

    def __str__(self) -> str:
        return f"[{self.engine}] {self.where}: {self.message}"


@dataclass
class LatexReport:
    """Issues found, and how much was checked: passing is not the same as having been checked.

    ``passed``: no issue in what was checked. ``complete``: nothing was left unchecked
    (every engine ran on every segment or string; ``skipped`` says what was not and why).
    ``ok`` is both: only a complete, clean check is a pass.
    """

    issues: list[LatexIssue] = field(default_factory=list)
    checked: dict[str, int] = field(default_factory=dict)  # segments (KaTeX) / strings (pdflatex) checked
    skipped: list[str] = field(default_factory=list)  # "engine: why it did not run (fully)"

    @property
    def passed(self) -> bool:
        return not self.issues

    @property
    def complete(self) -> bool:
        return not self.skipped

    @property
    def ok(self) -> bool:
        return self.passed and self.complete

    def add(self, issue: LatexIssue) -> None:
        self.issues.append(issue)

    def merge(self, other: LatexReport) -> LatexReport:
        self.issues.extend(other.issues)
        for engine, n in other.checked.items():
            self.checked[engine] = self.checked.get(engine, 0) + n
        self.skipped.extend(other.skipped)
        return self

    def wheres(self, engine: str | None = None) -> set[str]:
        """The keys of the strings with an issue (from one engine, or any)."""
        return {i.where for i in self.issues if engine is None or i.engine == engine}

    def to_dict(self) -> dict:
        return {
            "ok": self.ok,
            "passed": self.passed,
            "complete": self.complete,
            "issues": [vars(i).copy() for i in self.issues],
            "checked": dict(self.checked),
            "skipped": list(self.skipped),
        }


def short(text: str, limit: int = 240) -> str:
    """text stripped and cut to limit characters (an ellipsis marks the cut), for an issue's segment."""
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"
