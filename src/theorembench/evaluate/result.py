"""What every evaluation returns: one :class:`EvalResult`, the same for the four methods.

A method's evaluation service (``evaluate_mcq``, ``evaluate_hybrid``, ``evaluate_eternal``,
``run_improof_eval``) writes its results document in its own layout (the released LMB layout, the
EternalMath results, ...) and returns this: the run, the headline score as one
:class:`~theorembench.common.stats.Estimate`, the document and the files it wrote, the Inspect log,
and what the run paid and found stored. ``detail`` holds the little a method adds (IMProofBench's
answer ids).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from theorembench.common.stats import Estimate


@dataclass
class EvalResult:
    """One evaluation run's outcome (see the module notes)."""

    kind: str  # the run's kind in the store: eval.mcq, eval.hybrid, eternal.eval, improof.eval
    run_id: str | None
    results: dict[str, Any]  # the results document, as written to ``path``
    path: Path
    log: Path | None = None  # the Inspect log
    score: Estimate | None = None  # the headline: n, errors, a 95% interval
    files: dict[str, Path] = field(default_factory=dict)  # other outputs (a report, charts)
    calls_made: int = 0  # model calls this invocation paid for
    cache_hits: int = 0  # model calls this invocation found in the response cache
    resumed: int = 0  # samples found answered by an earlier invocation
    incomplete: int = 0  # samples not answered yet: the next run asks them again
    detail: dict[str, Any] = field(default_factory=dict)


__all__ = ["EvalResult"]
