"""Grade corrections: a grade changed after its grader saw the model names is kept apart from the blind grade.

The table is a frozen copy, not :mod:`theorembench.store.schema`: later revisions change the
live definitions, never this one.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def _tables() -> sa.MetaData:
    m = sa.MetaData()
    text = sa.Text
    # a stand-in so the foreign key resolves inside this metadata; it is not created here
    sa.Table("improof_answers", m, sa.Column("id", text, primary_key=True))
    sa.Table("improof_grade_corrections", m,
             sa.Column("answer_id", text, sa.ForeignKey("improof_answers.id"), primary_key=True),
             sa.Column("grader", text, primary_key=True),
             sa.Column("revision", sa.Integer, primary_key=True, autoincrement=False),
             sa.Column("progress", sa.Integer),
             sa.Column("indicators", text, nullable=False, server_default=sa.text("'{}'")),
             sa.Column("notes", text), sa.Column("comment", text), sa.Column("status", text, nullable=False),
             sa.Column("created_at", sa.Double, nullable=False))  # fmt: skip
    return m


NEW = ("improof_grade_corrections",)


def upgrade() -> None:
    m = _tables()
    m.create_all(op.get_bind(), tables=[m.tables[name] for name in NEW], checkfirst=False)


def downgrade() -> None:
    m = _tables()
    m.drop_all(op.get_bind(), tables=[m.tables[name] for name in NEW], checkfirst=False)
