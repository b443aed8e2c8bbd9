"""Provider batches: the batches a run handed to a provider's batch API, and which requests each one holds.

A batch is recorded (``submitting``) before the provider is asked to make it, gets the provider's id
(``pending``) before it is polled, and ends ``ended`` once its results were read or ``failed``; a run
killed at any point finds its requests there and waits for their batch instead of paying for them again.
The tables are a frozen copy, not :mod:`theorembench.store.schema`.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def _tables() -> sa.MetaData:
    m = sa.MetaData()
    text, time = sa.Text, sa.Double
    sa.Table("llm_batches", m,
             sa.Column("id", text, primary_key=True), sa.Column("provider", text, nullable=False),
             sa.Column("endpoint", text, nullable=False), sa.Column("model", text, nullable=False),
             sa.Column("remote_id", text), sa.Column("input_file", text), sa.Column("status", text, nullable=False),
             sa.Column("n_requests", sa.Integer, nullable=False, server_default=sa.text("0")),
             sa.Column("detail", text, nullable=False, server_default=sa.text("'{}'")),
             sa.Column("created_at", time, nullable=False), sa.Column("updated_at", time, nullable=False),
             sa.Index("llm_batches_status", "status"))  # fmt: skip
    sa.Table("llm_batch_requests", m,
             sa.Column("batch_id", text, sa.ForeignKey("llm_batches.id"), primary_key=True),
             sa.Column("custom_id", text, primary_key=True), sa.Column("cache_key", text, nullable=False),
             sa.Index("llm_batch_requests_key", "cache_key"))  # fmt: skip
    return m


NEW = ("llm_batches", "llm_batch_requests")


def upgrade() -> None:
    m = _tables()
    m.create_all(op.get_bind(), tables=[m.tables[name] for name in NEW], checkfirst=False)


def downgrade() -> None:
    m = _tables()
    m.drop_all(op.get_bind(), tables=[m.tables[name] for name in reversed(NEW)], checkfirst=False)
