"""Review rounds: e-mail invitations of (possibly external) reviewers to one question, and the discussion threads.

An invitation is keyed by the SHA-256 of its link's token; it stays ``pending`` until the invitee accepts (the
account and the review are made then) or declines. A thread message belongs to one review (one round) and records
which side wrote it, so the author never needs the reviewer's identity to read it. The tables are a frozen copy,
not :mod:`theorembench.store.schema`.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def _tables() -> sa.MetaData:
    m = sa.MetaData()
    text, time = sa.Text, sa.Double
    serial = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
    # stand-ins so the foreign keys resolve inside this metadata; they are not created here
    sa.Table("improof_problems", m, sa.Column("id", text, primary_key=True))
    sa.Table("web_users", m, sa.Column("id", text, primary_key=True))
    sa.Table("web_reviews", m, sa.Column("id", serial, primary_key=True))
    sa.Table("web_review_invitations", m,
             sa.Column("token_hash", text, primary_key=True),
             sa.Column("problem_id", text, sa.ForeignKey("improof_problems.id"), nullable=False),
             sa.Column("version", sa.Integer, nullable=False), sa.Column("email", text, nullable=False),
             sa.Column("invited_by", text), sa.Column("state", text, nullable=False),
             sa.Column("created_at", time, nullable=False), sa.Column("expires_at", time, nullable=False),
             sa.Column("answered_at", time), sa.Column("review_id", serial, sa.ForeignKey("web_reviews.id")),
             sa.Index("web_review_invitations_problem", "problem_id"))  # fmt: skip
    sa.Table("web_review_messages", m,
             sa.Column("id", serial, sa.Identity(), primary_key=True),
             sa.Column("review_id", serial, sa.ForeignKey("web_reviews.id"), nullable=False),
             sa.Column("author_id", text, sa.ForeignKey("web_users.id"), nullable=False),
             sa.Column("side", text, nullable=False), sa.Column("body", text, nullable=False),
             sa.Column("created_at", time, nullable=False),
             sa.Index("web_review_messages_review", "review_id"),
             sqlite_autoincrement=True)  # fmt: skip
    return m


NEW = ("web_review_invitations", "web_review_messages")


def upgrade() -> None:
    m = _tables()
    m.create_all(op.get_bind(), tables=[m.tables[name] for name in NEW], checkfirst=False)


def downgrade() -> None:
    m = _tables()
    m.drop_all(op.get_bind(), tables=[m.tables[name] for name in reversed(NEW)], checkfirst=False)
