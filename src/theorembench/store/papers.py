"""The ``papers`` and ``theorems`` tables: papers from arXiv or local files, and their main theorems."""

from __future__ import annotations

import json
import time
from typing import Any, TypedDict

import sqlalchemy as sa

from theorembench.store.db import Store, loads
from theorembench.store.schema import papers, theorems


class Paper(TypedDict):
    """A stored paper (JSON columns decoded)."""

    id: str
    source: str  # arxiv | local
    arxiv_id: str | None
    version: int | None
    month: str | None  # YYYY-MM of the first version
    title: str | None
    authors: list[str]
    abstract: str | None
    categories: list[str]
    primary_category: str | None
    published: str | None
    updated: str | None
    license: str | None
    meta: dict[str, Any]
    eprint_path: str | None
    eprint_kind: str | None
    eprint_sha256: str | None
    folder: str | None
    status: str
    reason: str | None
    problems: list[str]
    created_at: float
    updated_at: float


class StoredTheorem(TypedDict):
    """A paper's main theorem as found under one extraction setting."""

    paper_id: str
    settings_key: str
    path: str
    reason: str | None
    record: dict[str, Any] | None
    call_ids: list[int]
    created_at: float


class IndexedPaper(TypedDict):
    """What the full-text search indexes of a paper: its metadata and its theorems' texts."""

    id: str
    arxiv_id: str | None
    title: str
    abstract: str
    updated_at: float
    theorem_records: list[tuple[str, float, Any]]  # (settings key, created at, record)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


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
            self.store._execute(papers.insert(), {"id": paper_id, **fields, "created_at": now, "updated_at": now})
        elif fields:
            self.store._execute(papers.update().where(papers.c.id == paper_id).values(**fields, updated_at=now))

    def get(self, paper_id: str) -> Paper | None:
        row = self.store._first(sa.select(papers).where(papers.c.id == paper_id))
        return _paper_dict(row) if row else None

    def find(self, ref: str) -> Paper | None:
        """By id, or by arXiv id without version (latest version)."""
        found = self.get(ref)
        if found:
            return found
        row = self.store._first(sa.select(papers).where(papers.c.arxiv_id == ref)
                                .order_by(papers.c.version.desc().nulls_last()).limit(1))  # fmt: skip
        return _paper_dict(row) if row else None

    def list(self, *, month: str | None = None, status: str | None = None) -> list[Paper]:
        statement = sa.select(papers).order_by(papers.c.created_at, papers.c.id)
        if month:
            statement = statement.where(papers.c.month == month)
        if status:
            statement = statement.where(papers.c.status == status)
        return [_paper_dict(r) for r in self.store._rows(statement)]

    def add_problem(self, paper_id: str, problem: str) -> None:
        paper = self.get(paper_id)
        if paper is None:
            return
        problems = paper["problems"] + [problem]
        self.upsert(paper_id, problems=problems)

    def put_theorem(self, paper_id: str, settings_key: str, *, path: str, record: dict | None,
                    reason: str, call_ids: list[int]) -> None:  # fmt: skip
        theorem = (record or {}).get("theorem") or {}
        self.store._upsert(theorems, {
            "paper_id": paper_id, "settings_key": settings_key, "path": path, "env_name": theorem.get("env_name"),
            "label": theorem.get("label"), "reason": reason, "record": _dumps(record) if record is not None else None,
            "call_ids": _dumps(call_ids), "created_at": time.time(),
        })  # fmt: skip

    def theorem(self, paper_id: str, settings_key: str | None = None) -> StoredTheorem | None:
        statement = sa.select(theorems).where(theorems.c.paper_id == paper_id)
        if settings_key:
            statement = statement.where(theorems.c.settings_key == settings_key)
        row = self.store._first(statement.order_by(theorems.c.created_at.desc()).limit(1))
        if row is None:
            return None
        return StoredTheorem(paper_id=row["paper_id"], settings_key=row["settings_key"], path=row["path"],
                             reason=row["reason"], record=loads(row["record"]), call_ids=loads(row["call_ids"]),
                             created_at=row["created_at"])  # fmt: skip

    def for_search(self) -> list[IndexedPaper]:
        """Every paper with its theorems' records, in id order (what the harness's search tool indexes)."""
        t = theorems.c
        found: dict[str, list[tuple[str, float, Any]]] = {}
        for row in self.store._rows(sa.select(t.paper_id, t.settings_key, t.created_at, t.record)
                                    .order_by(t.paper_id, t.settings_key)):  # fmt: skip
            found.setdefault(row["paper_id"], []).append((row["settings_key"], row["created_at"], row["record"]))
        rows = self.store._rows(sa.select(papers.c.id, papers.c.arxiv_id, papers.c.title, papers.c.abstract,
                                          papers.c.updated_at).order_by(papers.c.id))  # fmt: skip
        return [IndexedPaper(id=r["id"], arxiv_id=r["arxiv_id"], title=r["title"] or "", abstract=r["abstract"] or "",
                             updated_at=r["updated_at"], theorem_records=found.get(r["id"], []))
                for r in rows]  # fmt: skip


def _paper_dict(row: Any) -> Paper:
    out = dict(row)
    for key in ("authors", "categories", "meta", "problems"):
        out[key] = loads(out.get(key)) or ([] if key != "meta" else {})
    return Paper(**out)  # type: ignore[typeddict-item]
