"""Resumable pipeline steps: each stage's output for each key, stored once.

A step that finished (``ok``) or rejected its input is never run again for the
same pipeline key; a ``failed`` step runs again on the next invocation. Model
calls made inside a step are listed with it, so every output can be traced to the
calls that produced it (and priced).

A step also keeps how many of its runs ended with unusable model output
(``output_attempts``) and, in ``cause``, whether its stored outcome is due to such
output (:data:`OUTPUT_CAUSE`). :func:`reset_output_rejections` turns the steps
rejected for that cause back into ``failed`` ones with a fresh count, so the next
build asks the model again.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from theorembench.store.db import Store
from theorembench.store.schema import steps

FINAL = ("ok", "rejected")
OUTPUT_CAUSE = "output"  # the outcome is due to the model's own (malformed or unusable) replies
_GET = sa.select(steps).where(steps.c.pipeline == sa.bindparam("pipeline"), steps.c.key == sa.bindparam("key"),
                              steps.c.stage == sa.bindparam("stage"))  # fmt: skip


@dataclass
class StepResult:
    status: str  # ok | rejected | failed
    output: Any = None
    reason: str | None = None
    call_ids: list[int] = field(default_factory=list)
    cached: bool = False
    output_attempts: int = 0  # runs so far that ended with unusable model output
    cause: str | None = None  # OUTPUT_CAUSE when this outcome is due to the model's output

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def _result(row: Any) -> StepResult:
    return StepResult(row["status"], json.loads(row["output"]) if row["output"] else None, row["reason"],
                      json.loads(row["call_ids"]), cached=True, output_attempts=row["output_attempts"],
                      cause=row["cause"])  # fmt: skip


class Steps:
    def __init__(self, store: Store, pipeline: str):
        self.store = store
        self.pipeline = pipeline

    def get(self, key: str, stage: str) -> StepResult | None:
        rows, _ = self.store._hot("steps.get", lambda: _GET, {"pipeline": self.pipeline, "key": key, "stage": stage})
        return _result(rows[0]) if rows else None

    def done(self, key: str, stage: str) -> StepResult | None:
        found = self.get(key, stage)
        return found if found is not None and found.status in FINAL else None

    def put(self, key: str, stage: str, result: StepResult) -> StepResult:
        self.store._upsert(steps, {
            "pipeline": self.pipeline, "key": key, "stage": stage, "status": result.status,
            "output": None if result.output is None else json.dumps(result.output, ensure_ascii=False),
            "reason": result.reason, "call_ids": json.dumps(result.call_ids), "updated_at": time.time(),
            "output_attempts": result.output_attempts, "cause": result.cause,
        })  # fmt: skip
        return result

    def all(self, stage: str | None = None) -> list[tuple[str, str, StepResult]]:
        statement = sa.select(steps).where(steps.c.pipeline == self.pipeline).order_by(steps.c.key, steps.c.stage)
        if stage:
            statement = statement.where(steps.c.stage == stage)
        return [(row["key"], row["stage"], _result(row)) for row in self.store._rows(statement)]


def reset_output_rejections(store: Store, *, pipeline_prefix: str | None = None, stage: str | None = None) -> int:
    """Make the steps rejected for the model's output run again (``failed``, count 0); how many were reset.

    Only rows marked with :data:`OUTPUT_CAUSE` are touched: a rejection by a rule, a judge or a
    refused request stays final. ``pipeline_prefix`` and ``stage`` narrow the selection.
    """
    where = [steps.c.status == "rejected", steps.c.cause == OUTPUT_CAUSE]
    if pipeline_prefix:
        where.append(steps.c.pipeline.startswith(pipeline_prefix, autoescape=True))
    if stage:
        where.append(steps.c.stage == stage)
    reason = sa.literal("retry requested; before: ") + sa.func.coalesce(steps.c.reason, "")
    update = steps.update().where(*where).values(status="failed", output_attempts=0, reason=reason,
                                                 updated_at=time.time())  # fmt: skip
    return store._execute(update).rowcount
