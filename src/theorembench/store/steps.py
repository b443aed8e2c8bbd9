"""Resumable pipeline steps: each stage's output for each key, stored once.

A step that finished (``ok``) or rejected its input is never run again for the
same pipeline key; a ``failed`` step runs again on the next invocation. Model
calls made inside a step are listed with it, so every output can be traced to the
calls that produced it (and priced).
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
_GET = sa.select(steps).where(steps.c.pipeline == sa.bindparam("pipeline"), steps.c.key == sa.bindparam("key"),
                              steps.c.stage == sa.bindparam("stage"))  # fmt: skip


@dataclass
class StepResult:
    status: str  # ok | rejected | failed
    output: Any = None
    reason: str | None = None
    call_ids: list[int] = field(default_factory=list)
    cached: bool = False

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class Steps:
    def __init__(self, store: Store, pipeline: str):
        self.store = store
        self.pipeline = pipeline

    def get(self, key: str, stage: str) -> StepResult | None:
        rows, _ = self.store._hot("steps.get", lambda: _GET, {"pipeline": self.pipeline, "key": key, "stage": stage})
        if not rows:
            return None
        row = rows[0]
        return StepResult(row["status"], json.loads(row["output"]) if row["output"] else None, row["reason"],
                          json.loads(row["call_ids"]), cached=True)  # fmt: skip

    def done(self, key: str, stage: str) -> StepResult | None:
        found = self.get(key, stage)
        return found if found is not None and found.status in FINAL else None

    def put(self, key: str, stage: str, result: StepResult) -> StepResult:
        self.store._upsert(steps, {
            "pipeline": self.pipeline, "key": key, "stage": stage, "status": result.status,
            "output": None if result.output is None else json.dumps(result.output, ensure_ascii=False),
            "reason": result.reason, "call_ids": json.dumps(result.call_ids), "updated_at": time.time(),
        })  # fmt: skip
        return result

    def all(self, stage: str | None = None) -> list[tuple[str, str, StepResult]]:
        statement = sa.select(steps).where(steps.c.pipeline == self.pipeline).order_by(steps.c.key, steps.c.stage)
        if stage:
            statement = statement.where(steps.c.stage == stage)
        return [
            (row["key"], row["stage"], StepResult(row["status"], json.loads(row["output"]) if row["output"] else None,
                                                  row["reason"], json.loads(row["call_ids"]), cached=True))
            for row in self.store._rows(statement)
        ]  # fmt: skip
