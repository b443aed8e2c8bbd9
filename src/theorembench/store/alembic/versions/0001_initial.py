"""The schema of the store before Alembic: runs, datasets, items, model calls, results, papers, theorems, steps.

This is the schema that ``PRAGMA user_version`` 3 stood for; stores made by that code are
adopted (stamped at this revision) without change, see :mod:`theorembench.store.migrations`.
The tables are a frozen copy, not :mod:`theorembench.store.schema`: later revisions change the
live definitions, never this one.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def _tables() -> sa.MetaData:
    m = sa.MetaData()
    text, time, integer = sa.Text, sa.Double, sa.Integer
    call_id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

    def default(value: str) -> dict:
        return {"nullable": False, "server_default": sa.text(value)}

    sa.Table("runs", m,
             sa.Column("id", text, primary_key=True), sa.Column("kind", text, nullable=False),
             sa.Column("signature", text, nullable=False), sa.Column("name", text), sa.Column("model", text),
             sa.Column("dataset_id", text), sa.Column("status", text, **default("'running'")),
             sa.Column("config", text, **default("'{}'")), sa.Column("summary", text),
             sa.Column("created_at", time, nullable=False), sa.Column("updated_at", time, nullable=False),
             sa.Index("runs_signature", "kind", "signature", "created_at"))  # fmt: skip
    sa.Table("datasets", m,
             sa.Column("id", text, primary_key=True), sa.Column("path", text), sa.Column("name", text),
             sa.Column("n_items", integer, nullable=False), sa.Column("created_at", time, nullable=False))  # fmt: skip
    sa.Table("items", m,
             sa.Column("dataset_id", text, sa.ForeignKey("datasets.id"), primary_key=True),
             sa.Column("idx", integer, primary_key=True, autoincrement=False),
             sa.Column("item_id", text, nullable=False), sa.Column("payload", text, nullable=False),
             sa.Index("items_item_id", "item_id"))  # fmt: skip
    sa.Table("model_calls", m,
             sa.Column("id", call_id, sa.Identity(), primary_key=True),
             sa.Column("cache_key", text, nullable=False), sa.Column("run_id", text), sa.Column("purpose", text),
             sa.Column("model", text, nullable=False), sa.Column("provider", text, nullable=False),
             sa.Column("request", text, nullable=False), sa.Column("response_text", text),
             sa.Column("response", text), sa.Column("status", text, nullable=False), sa.Column("error", text),
             sa.Column("attempts", integer, **default("1")),
             *(sa.Column(c, integer, **default("0"))
               for c in ("prompt_tokens", "completion_tokens", "reasoning_tokens", "total_tokens")),
             sa.Column("latency_s", time, **default("0")), sa.Column("cost_usd", time),
             sa.Column("created_at", time, nullable=False),
             sa.Index("model_calls_cache", "cache_key", "status"), sa.Index("model_calls_run", "run_id"),
             sqlite_autoincrement=True)  # fmt: skip
    sa.Table("results", m,
             sa.Column("run_id", text, sa.ForeignKey("runs.id"), primary_key=True),
             sa.Column("idx", integer, primary_key=True, autoincrement=False),
             sa.Column("sample", integer, primary_key=True, autoincrement=False),
             sa.Column("item_id", text, nullable=False),
             sa.Column("call_id", call_id, sa.ForeignKey("model_calls.id")),
             sa.Column("status", text, nullable=False), sa.Column("answer", text),
             sa.Column("correct_label", text), sa.Column("is_correct", integer), sa.Column("error", text),
             sa.Column("record", text, nullable=False), sa.Column("created_at", time, nullable=False))  # fmt: skip
    sa.Table("papers", m,
             sa.Column("id", text, primary_key=True), sa.Column("source", text, nullable=False),
             sa.Column("arxiv_id", text), sa.Column("version", integer), sa.Column("month", text),
             sa.Column("title", text), sa.Column("authors", text, **default("'[]'")), sa.Column("abstract", text),
             sa.Column("primary_category", text), sa.Column("categories", text, **default("'[]'")),
             sa.Column("published", text), sa.Column("updated", text), sa.Column("license", text),
             sa.Column("meta", text, **default("'{}'")), sa.Column("eprint_path", text),
             sa.Column("eprint_kind", text), sa.Column("eprint_sha256", text), sa.Column("folder", text),
             sa.Column("status", text, nullable=False), sa.Column("reason", text),
             sa.Column("problems", text, **default("'[]'")),
             sa.Column("created_at", time, nullable=False), sa.Column("updated_at", time, nullable=False),
             sa.Index("papers_month", "month", "primary_category"))  # fmt: skip
    sa.Table("theorems", m,
             sa.Column("paper_id", text, sa.ForeignKey("papers.id"), primary_key=True),
             sa.Column("settings_key", text, primary_key=True), sa.Column("path", text, nullable=False),
             sa.Column("env_name", text), sa.Column("label", text), sa.Column("reason", text),
             sa.Column("record", text), sa.Column("call_ids", text, **default("'[]'")),
             sa.Column("created_at", time, nullable=False))  # fmt: skip
    sa.Table("steps", m,
             sa.Column("pipeline", text, primary_key=True), sa.Column("key", text, primary_key=True),
             sa.Column("stage", text, primary_key=True), sa.Column("status", text, nullable=False),
             sa.Column("output", text), sa.Column("reason", text), sa.Column("call_ids", text, **default("'[]'")),
             sa.Column("updated_at", time, nullable=False))  # fmt: skip
    return m


def create_missing(connection: sa.Connection) -> None:
    """Create the tables (and their indexes) of this revision that a pre-Alembic store lacks."""
    _tables().create_all(connection, checkfirst=True)


def upgrade() -> None:
    _tables().create_all(op.get_bind(), checkfirst=False)


def downgrade() -> None:
    _tables().drop_all(op.get_bind(), checkfirst=False)
