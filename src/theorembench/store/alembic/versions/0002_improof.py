"""IMProofBench: problems with immutable versions and status events, answers, verdicts, overrides, human grades.

The tables are a frozen copy, not :mod:`theorembench.store.schema`: later revisions change the
live definitions, never this one. JSON values are TEXT, times are seconds since the epoch,
booleans are integers (0/1, NULL where unknown), as in the first revision.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def _tables() -> sa.MetaData:
    m = sa.MetaData()
    text, time, integer = sa.Text, sa.Double, sa.Integer
    serial = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

    def default(value: str) -> dict:
        return {"nullable": False, "server_default": sa.text(value)}

    sa.Table("improof_problems", m,
             sa.Column("id", text, primary_key=True), sa.Column("status", text, nullable=False),
             sa.Column("author", text), sa.Column("current_version", integer, nullable=False),
             sa.Column("created_at", time, nullable=False), sa.Column("updated_at", time, nullable=False),
             sa.Index("improof_problems_status", "status"))  # fmt: skip
    sa.Table("improof_problem_versions", m,
             sa.Column("problem_id", text, sa.ForeignKey("improof_problems.id"), primary_key=True),
             sa.Column("version", integer, primary_key=True, autoincrement=False),
             sa.Column("payload", text, nullable=False), sa.Column("created_by", text), sa.Column("note", text),
             sa.Column("created_at", time, nullable=False))  # fmt: skip
    sa.Table("improof_status_events", m,
             sa.Column("id", serial, sa.Identity(), primary_key=True),
             sa.Column("problem_id", text, sa.ForeignKey("improof_problems.id"), nullable=False),
             sa.Column("from_status", text), sa.Column("to_status", text, nullable=False),
             sa.Column("actor", text), sa.Column("note", text), sa.Column("at", time, nullable=False),
             sa.Index("improof_status_events_problem", "problem_id"), sqlite_autoincrement=True)  # fmt: skip
    sa.Table("improof_answers", m,
             sa.Column("id", text, primary_key=True), sa.Column("run_id", text),
             sa.Column("problem_id", text, nullable=False), sa.Column("version", integer, nullable=False),
             sa.Column("model", text, nullable=False), sa.Column("tier", integer),
             sa.Column("epoch", integer, **default("0")), sa.Column("mode", text, nullable=False),
             sa.Column("main_answer", text), sa.Column("sub_answers", text, **default("'[]'")),
             sa.Column("stages", text, **default("'[]'")), sa.Column("created_at", time, nullable=False),
             sa.ForeignKeyConstraint(["problem_id", "version"],
                                     ["improof_problem_versions.problem_id", "improof_problem_versions.version"]),
             sa.Index("improof_answers_run", "run_id"),
             sa.Index("improof_answers_problem", "problem_id", "model"))  # fmt: skip
    sa.Table("improof_verdicts", m,
             sa.Column("answer_id", text, sa.ForeignKey("improof_answers.id"), primary_key=True),
             sa.Column("sub_index", integer, primary_key=True, autoincrement=False),
             sa.Column("grader_version", text, primary_key=True), sa.Column("correct", integer),
             sa.Column("warning", text, nullable=False), sa.Column("extracted", text), sa.Column("parsed", text),
             sa.Column("created_at", time, nullable=False))  # fmt: skip
    sa.Table("improof_verdict_overrides", m,
             sa.Column("id", serial, sa.Identity(), primary_key=True),
             sa.Column("answer_id", text, sa.ForeignKey("improof_answers.id"), nullable=False),
             sa.Column("sub_index", integer, nullable=False), sa.Column("correct", integer),
             sa.Column("verified", integer, **default("0")), sa.Column("actor", text, nullable=False),
             sa.Column("reason", text, nullable=False), sa.Column("at", time, nullable=False),
             sa.Index("improof_verdict_overrides_answer", "answer_id", "sub_index"),
             sqlite_autoincrement=True)  # fmt: skip
    sa.Table("improof_grades", m,
             sa.Column("answer_id", text, sa.ForeignKey("improof_answers.id"), primary_key=True),
             sa.Column("grader", text, primary_key=True), sa.Column("progress", integer),
             sa.Column("indicators", text, **default("'{}'")), sa.Column("notes", text), sa.Column("comment", text),
             sa.Column("status", text, nullable=False), sa.Column("revision", integer, **default("1")),
             sa.Column("updated_at", time, nullable=False))  # fmt: skip
    return m


def upgrade() -> None:
    _tables().create_all(op.get_bind(), checkfirst=False)


def downgrade() -> None:
    _tables().drop_all(op.get_bind(), checkfirst=False)
