"""What the ledger of model calls says about calls not made yet: a stage's reply lengths and its latest answer.

The cost forecast (:mod:`theorembench.llm.forecast`) reads them: how many tokens a model's replies for one
purpose (a stage, an evaluation) took before, and an answer of that purpose to stand in for a call it does
not make. Only answered calls (``ok``) count.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import sqlalchemy as sa

from theorembench.store.base import Row
from theorembench.store.db import Store
from theorembench.store.schema import model_calls

_mc = model_calls.c
HISTORY_LIMIT = 2000  # the latest replies read per (model, purpose)


@dataclass(frozen=True)
class OutputHistory:
    """Completion tokens of past replies: how many, their 10th and 90th percentiles and their mean."""

    n: int
    low: float
    mean: float
    high: float


def _percentile(values: list[int], q: float) -> float:
    """The nearest-rank percentile of sorted ``values``."""
    rank = max(1, math.ceil(q * len(values)))
    return float(values[rank - 1])


def output_history(store: Store, model: str, purpose: str) -> OutputHistory | None:
    """The reply lengths of ``model``'s answered calls of ``purpose`` (the latest ``HISTORY_LIMIT``), or None."""
    statement = (sa.select(_mc.completion_tokens)
                 .where(_mc.model == model, _mc.purpose == purpose, _mc.status == "ok", _mc.completion_tokens > 0)
                 .order_by(_mc.id.desc()).limit(HISTORY_LIMIT))  # fmt: skip
    values = sorted(int(row[0]) for row in store._rows(statement))
    if not values:
        return None
    return OutputHistory(len(values), _percentile(values, 0.1), sum(values) / len(values), _percentile(values, 0.9))


def latest_answer(store: Store, purpose: str, model: str | None = None) -> Row | None:
    """The latest answered call of ``purpose``, ``model``'s first when it has one, else any model's."""
    base = sa.select(model_calls).where(_mc.purpose == purpose, _mc.status == "ok").order_by(_mc.id.desc()).limit(1)
    if model is not None:
        rows = store._rows(base.where(_mc.model == model))
        if rows:
            return rows[0]
    rows = store._rows(base)
    return rows[0] if rows else None


__all__ = ["HISTORY_LIMIT", "OutputHistory", "latest_answer", "output_history"]
