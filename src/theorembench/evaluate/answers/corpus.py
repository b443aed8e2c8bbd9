"""Scoring the checker on a file of hand-labelled answer pairs: false positives, false negatives, unjudged.

The file is JSON: ``{"pairs": [...]}`` (or ``{"vectors": [...]}``), each pair with ``expected``,
the reply (``reply`` or ``answer``), an optional ``kind`` and ``label`` (true: the reply is
right, false: it is wrong, null: it should not be judged). A false positive, a wrong answer
graded right, is the one failure that must never happen; ``tests/golden/answer_corpus.json``
is such a file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from theorembench.common.errors import UserError
from theorembench.common.progress import OnCount
from theorembench.evaluate.answers.checker import AnswerChecker
from theorembench.evaluate.answers.normalize import KINDS
from theorembench.evaluate.answers.verdict import CHECKER_VERSION


@dataclass
class CorpusScore:
    """Counts over the labelled pairs; each list holds the pairs of that outcome with the verdict's messages."""

    pairs: int
    agree: int
    false_positives: list[dict[str, Any]] = field(default_factory=list)
    false_negatives: list[dict[str, Any]] = field(default_factory=list)
    unjudged: list[dict[str, Any]] = field(default_factory=list)
    judged_but_labelled_null: list[dict[str, Any]] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {"checker_version": CHECKER_VERSION, "pairs": self.pairs, "agree": self.agree,
                "false_positives": len(self.false_positives), "false_negatives": len(self.false_negatives),
                "unjudged": len(self.unjudged), "unjudged_share": round(len(self.unjudged) / self.pairs, 4),
                "judged_but_labelled_null": len(self.judged_but_labelled_null)}  # fmt: skip


def load_pairs(path: str | Path) -> list[dict[str, Any]]:
    """The labelled pairs of a file, checked; :class:`UserError` with one line naming what to fix."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise UserError(f"{path}: cannot read the labelled pairs: {getattr(exc, 'strerror', None) or exc}") from None
    rows = doc.get("pairs", doc.get("vectors")) if isinstance(doc, dict) else None
    if not isinstance(rows, list) or not rows:
        raise UserError(f'{path}: expected {{"pairs": [...]}} with at least one pair')
    out = []
    for i, row in enumerate(rows):
        reply = row.get("reply", row.get("answer")) if isinstance(row, dict) else None
        if not isinstance(row, dict) or not isinstance(row.get("expected"), str) or not isinstance(reply, str):
            raise UserError(f"{path}: pair {i}: needs text fields expected and reply (or answer)")
        if row.get("label") not in (True, False, None) or row.get("kind") not in (None, *KINDS):
            raise UserError(f"{path}: pair {i}: label must be true, false or null, kind one of {', '.join(KINDS)}")
        out.append({**row, "reply": reply})
    return out


def score_corpus(path: str | Path, *, progress: OnCount | None = None,
                 **options: Any) -> CorpusScore:  # fmt: skip
    """Check every pair of ``path`` through one worker (``options``: timeout, memory_mb, rel_tol, abs_tol)."""
    pairs = load_pairs(path)
    score = CorpusScore(len(pairs), 0)
    with AnswerChecker(**options) as checker:
        for done, pair in enumerate(pairs, start=1):
            verdict = checker.check(pair["expected"], pair["reply"], pair.get("kind"))
            got, label = verdict.correct, pair.get("label")
            entry = {"index": done - 1, "group": pair.get("group"), "note": pair.get("note"),
                     "expected": pair["expected"], "reply": pair["reply"][-200:],
                     "messages": verdict.messages}  # fmt: skip
            if got is label:
                score.agree += 1
            if got is True and label is False:
                score.false_positives.append(entry)
            elif got is False and label is True:
                score.false_negatives.append(entry)
            elif got is None and label is not None:
                score.unjudged.append(entry)
            elif got is not None and label is None:
                score.judged_but_labelled_null.append(entry)
            if progress:
                progress(done, len(pairs))
    return score
