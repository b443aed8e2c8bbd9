"""IMProofBench platform: accounts, roles, server-side sessions, hashed tokens, the outbox, rate-limit counters.

The tables are a frozen copy, not :mod:`theorembench.store.schema`: later revisions change the
live definitions, never this one. Session ids and tokens are stored only as SHA-256 digests.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def _tables() -> sa.MetaData:
    m = sa.MetaData()
    text, time, integer = sa.Text, sa.Double, sa.Integer
    serial = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

    def default(value: str) -> dict:
        return {"nullable": False, "server_default": sa.text(value)}

    sa.Table("web_users", m,
             sa.Column("id", text, primary_key=True), sa.Column("email", text, nullable=False, unique=True),
             sa.Column("password_hash", text), sa.Column("verified", integer, **default("0")),
             sa.Column("created_at", time, nullable=False))  # fmt: skip
    sa.Table("web_user_roles", m,
             sa.Column("user_id", text, sa.ForeignKey("web_users.id"), primary_key=True),
             sa.Column("role", text, primary_key=True), sa.Column("granted_by", text),
             sa.Column("granted_at", time, nullable=False))  # fmt: skip
    sa.Table("web_sessions", m,
             sa.Column("id_hash", text, primary_key=True),
             sa.Column("user_id", text, sa.ForeignKey("web_users.id"), nullable=False),
             sa.Column("created_at", time, nullable=False), sa.Column("expires_at", time, nullable=False),
             sa.Index("web_sessions_user", "user_id"))  # fmt: skip
    sa.Table("web_tokens", m,
             sa.Column("token_hash", text, primary_key=True), sa.Column("kind", text, nullable=False),
             sa.Column("email", text, nullable=False), sa.Column("role", text), sa.Column("created_by", text),
             sa.Column("created_at", time, nullable=False), sa.Column("expires_at", time, nullable=False),
             sa.Column("used_at", time))  # fmt: skip
    sa.Table("web_outbox", m,
             sa.Column("id", serial, sa.Identity(), primary_key=True), sa.Column("to_addr", text, nullable=False),
             sa.Column("subject", text, nullable=False), sa.Column("body", text, nullable=False),
             sa.Column("created_at", time, nullable=False), sa.Column("sent_at", time), sa.Column("error", text),
             sqlite_autoincrement=True)  # fmt: skip
    sa.Table("web_rate_limits", m,
             sa.Column("key", text, primary_key=True), sa.Column("window_start", time, nullable=False),
             sa.Column("hits", integer, **default("0")))  # fmt: skip
    return m


def upgrade() -> None:
    _tables().create_all(op.get_bind(), checkfirst=False)


def downgrade() -> None:
    _tables().drop_all(op.get_bind(), checkfirst=False)
