"""IMProofBench platform: reviews, background jobs with leases, grading assignments, flags for organisers.

The tables are a frozen copy, not :mod:`theorembench.store.schema`: later revisions change the
live definitions, never this one.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def _tables() -> sa.MetaData:
    m = sa.MetaData()
    text, time, integer = sa.Text, sa.Double, sa.Integer
    serial = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

    def default(value: str) -> dict:
        return {"nullable": False, "server_default": sa.text(value)}

    # stand-ins so the foreign keys resolve inside this metadata; they are not created here
    sa.Table("improof_problems", m, sa.Column("id", text, primary_key=True))
    sa.Table("web_users", m, sa.Column("id", text, primary_key=True))
    sa.Table("web_reviews", m,
             sa.Column("id", serial, sa.Identity(), primary_key=True),
             sa.Column("problem_id", text, sa.ForeignKey("improof_problems.id"), nullable=False),
             sa.Column("version", integer, nullable=False),
             sa.Column("reviewer_id", text, sa.ForeignKey("web_users.id"), nullable=False),
             sa.Column("invited_by", text), sa.Column("state", text, nullable=False),
             sa.Column("recommendation", text), sa.Column("anonymous", integer, **default("0")),
             sa.Column("comment", text), sa.Column("author_response", text),
             sa.Column("created_at", time, nullable=False), sa.Column("responded_at", time),
             sa.Column("submitted_at", time), sa.Column("author_responded_at", time),
             sa.Index("web_reviews_problem", "problem_id"), sa.Index("web_reviews_reviewer", "reviewer_id"),
             sqlite_autoincrement=True)  # fmt: skip
    sa.Table("web_jobs", m,
             sa.Column("id", text, primary_key=True), sa.Column("kind", text, nullable=False),
             sa.Column("owner", text, nullable=False), sa.Column("problem_id", text),
             sa.Column("params", text, **default("'{}'")), sa.Column("status", text, nullable=False),
             sa.Column("attempts", integer, **default("0")), sa.Column("lease_owner", text),
             sa.Column("lease_until", time), sa.Column("progress_done", integer, **default("0")),
             sa.Column("progress_total", integer, **default("0")), sa.Column("result", text),
             sa.Column("error", text), sa.Column("timeout_s", time, nullable=False),
             sa.Column("created_at", time, nullable=False), sa.Column("started_at", time),
             sa.Column("finished_at", time),
             sa.Index("web_jobs_status", "status"), sa.Index("web_jobs_owner", "owner", "created_at"),
             sa.Index("web_jobs_problem", "problem_id", "kind"))  # fmt: skip
    sa.Table("web_grading", m,
             sa.Column("problem_id", text, sa.ForeignKey("improof_problems.id"), primary_key=True),
             sa.Column("grader_id", text, sa.ForeignKey("web_users.id"), primary_key=True),
             sa.Column("answer_order", text, **default("'[]'")), sa.Column("notes", text),
             sa.Column("notes_revision", integer, **default("1")), sa.Column("assigned_by", text),
             sa.Column("assigned_at", time, nullable=False), sa.Column("revealed_at", time),
             sa.Index("web_grading_grader", "grader_id"))  # fmt: skip
    sa.Table("web_flags", m,
             sa.Column("id", serial, sa.Identity(), primary_key=True),
             sa.Column("problem_id", text, sa.ForeignKey("improof_problems.id"), nullable=False),
             sa.Column("answer_id", text),
             sa.Column("user_id", text, sa.ForeignKey("web_users.id"), nullable=False),
             sa.Column("message", text, nullable=False), sa.Column("created_at", time, nullable=False),
             sa.Column("resolved_at", time), sa.Column("resolved_by", text),
             sa.Index("web_flags_problem", "problem_id"), sqlite_autoincrement=True)  # fmt: skip
    return m


NEW = ("web_reviews", "web_jobs", "web_grading", "web_flags")


def upgrade() -> None:
    m = _tables()
    m.create_all(op.get_bind(), tables=[m.tables[name] for name in NEW], checkfirst=False)


def downgrade() -> None:
    m = _tables()
    m.drop_all(op.get_bind(), tables=[m.tables[name] for name in NEW], checkfirst=False)
