"""The ``papers`` and ``theorems`` tables: papers from arXiv or local files, and their main theorems."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from theorembench.store.db import Store, loads


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


@dataclass
class PaperRow:
    id: str
    source: str
    status: str
    title: str | None
    folder: str | None
    reason: str | None


class PaperRepo:
    """Typed access to the ``papers`` and ``theorems`` tables."""

    def __init__(self, store: Store):
        self.store = store

    def upsert(self, paper_id: str, **fields: Any) -> None:
        now = time.time()
        for key in ("authors", "categories", "meta", "problems"):
            if key in fields and not isinstance(fields[key], str):
                fields[key] = _dumps(fields[key])
        existing = self.get(paper_id)
        if existing is None:
            fields.setdefault("status", "new")
            cols = ["id", *fields, "created_at", "updated_at"]
            self.store.execute(
                f"INSERT INTO papers ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})",
                [paper_id, *fields.values(), now, now],
            )
        elif fields:
            sets = ", ".join(f"{k} = ?" for k in fields)
            self.store.execute(f"UPDATE papers SET {sets}, updated_at = ? WHERE id = ?", [*fields.values(), now, paper_id])

    def get(self, paper_id: str) -> dict[str, Any] | None:
        rows = self.store.query("SELECT * FROM papers WHERE id = ?", (paper_id,))
        return _paper_dict(rows[0]) if rows else None

    def find(self, ref: str) -> dict[str, Any] | None:
        """By id, or by arXiv id without version (latest version)."""
        found = self.get(ref)
        if found:
            return found
        rows = self.store.query("SELECT * FROM papers WHERE arxiv_id = ? ORDER BY version DESC LIMIT 1", (ref,))
        return _paper_dict(rows[0]) if rows else None

    def list(self, *, month: str | None = None, status: str | None = None) -> list[dict[str, Any]]:
        where, params = [], []
        if month:
            where.append("month = ?")
            params.append(month)
        if status:
            where.append("status = ?")
            params.append(status)
        sql = "SELECT * FROM papers" + (f" WHERE {' AND '.join(where)}" if where else "") + " ORDER BY created_at, id"
        return [_paper_dict(r) for r in self.store.query(sql, params)]

    def add_problem(self, paper_id: str, problem: str) -> None:
        paper = self.get(paper_id)
        if paper is None:
            return
        problems = paper["problems"] + [problem]
        self.upsert(paper_id, problems=problems)

    def put_theorem(self, paper_id: str, settings_key: str, *, path: str, record: dict | None,
                    reason: str, call_ids: list[int]) -> None:  # fmt: skip
        theorem = (record or {}).get("theorem") or {}
        self.store.execute(
            "INSERT OR REPLACE INTO theorems (paper_id, settings_key, path, env_name, label, reason, record,"
            " call_ids, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (paper_id, settings_key, path, theorem.get("env_name"), theorem.get("label"), reason,
             _dumps(record) if record is not None else None, _dumps(call_ids), time.time()),
        )  # fmt: skip

    def theorem(self, paper_id: str, settings_key: str | None = None) -> dict[str, Any] | None:
        if settings_key:
            rows = self.store.query("SELECT * FROM theorems WHERE paper_id = ? AND settings_key = ?",
                                    (paper_id, settings_key))  # fmt: skip
        else:
            rows = self.store.query("SELECT * FROM theorems WHERE paper_id = ? ORDER BY created_at DESC LIMIT 1",
                                    (paper_id,))  # fmt: skip
        if not rows:
            return None
        row = rows[0]
        return {"paper_id": row["paper_id"], "settings_key": row["settings_key"], "path": row["path"],
                "reason": row["reason"], "record": loads(row["record"]), "call_ids": loads(row["call_ids"]),
                "created_at": row["created_at"]}  # fmt: skip


def _paper_dict(row: Any) -> dict[str, Any]:
    out = dict(row)
    for key in ("authors", "categories", "meta", "problems"):
        out[key] = loads(out.get(key)) or ([] if key != "meta" else {})
    return out
