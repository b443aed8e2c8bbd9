"""The store's tables as SQLAlchemy Core ``Table`` objects, the one definition every query uses.

The same definitions serve SQLite and PostgreSQL. JSON values are kept as TEXT (written by
:func:`theorembench.store.base.dumps`), times are seconds since the epoch as doubles, and
``model_calls.id`` is an autoincrementing key (``INTEGER PRIMARY KEY AUTOINCREMENT`` on
SQLite, an identity column on PostgreSQL). Schema changes go through an Alembic revision in
``store/alembic/versions`` as well as here; ``tests/test_store_backends.py`` checks that the
two agree.
"""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

_text = sa.Text
_time = sa.Double


def _json(name: str, default: str | None = None) -> sa.Column:
    """A JSON value as TEXT: NOT NULL with a default when it has one (``'{}'``, ``'[]'``), else nullable."""
    if default is None:
        return sa.Column(name, _text)
    return sa.Column(name, _text, nullable=False, server_default=sa.text(f"'{default}'"))


def _count(name: str, default: int = 0) -> sa.Column:
    return sa.Column(name, sa.Integer, nullable=False, server_default=sa.text(str(default)))


runs = sa.Table(
    "runs", metadata,
    sa.Column("id", _text, primary_key=True),
    sa.Column("kind", _text, nullable=False),
    sa.Column("signature", _text, nullable=False),
    sa.Column("name", _text),
    sa.Column("model", _text),
    sa.Column("dataset_id", _text),
    sa.Column("status", _text, nullable=False, server_default=sa.text("'running'")),
    _json("config", "{}"),
    _json("summary"),
    sa.Column("created_at", _time, nullable=False),
    sa.Column("updated_at", _time, nullable=False),
    sa.Index("runs_signature", "kind", "signature", "created_at"),
)  # fmt: skip

datasets = sa.Table(
    "datasets", metadata,
    sa.Column("id", _text, primary_key=True),
    sa.Column("path", _text),
    sa.Column("name", _text),
    sa.Column("n_items", sa.Integer, nullable=False),
    sa.Column("created_at", _time, nullable=False),
)  # fmt: skip

items = sa.Table(
    "items", metadata,
    sa.Column("dataset_id", _text, sa.ForeignKey("datasets.id"), primary_key=True),
    sa.Column("idx", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("item_id", _text, nullable=False),
    sa.Column("payload", _text, nullable=False),
    sa.Index("items_item_id", "item_id"),
)  # fmt: skip

model_calls = sa.Table(
    "model_calls", metadata,
    sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), sa.Identity(), primary_key=True),
    sa.Column("cache_key", _text, nullable=False),
    sa.Column("run_id", _text),
    sa.Column("purpose", _text),
    sa.Column("model", _text, nullable=False),
    sa.Column("provider", _text, nullable=False),
    sa.Column("request", _text, nullable=False),
    sa.Column("response_text", _text),
    sa.Column("response", _text),
    sa.Column("status", _text, nullable=False),
    sa.Column("error", _text),
    _count("attempts", 1),
    _count("prompt_tokens"),
    _count("completion_tokens"),
    _count("reasoning_tokens"),
    _count("total_tokens"),
    sa.Column("latency_s", _time, nullable=False, server_default=sa.text("0")),
    sa.Column("cost_usd", _time),
    sa.Column("created_at", _time, nullable=False),
    sa.Index("model_calls_cache", "cache_key", "status"),
    sa.Index("model_calls_run", "run_id"),
    sqlite_autoincrement=True,
)  # fmt: skip

results = sa.Table(
    "results", metadata,
    sa.Column("run_id", _text, sa.ForeignKey("runs.id"), primary_key=True),
    sa.Column("idx", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("sample", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("item_id", _text, nullable=False),
    sa.Column("call_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), sa.ForeignKey("model_calls.id")),
    sa.Column("status", _text, nullable=False),
    sa.Column("answer", _text),
    sa.Column("correct_label", _text),
    sa.Column("is_correct", sa.Integer),
    sa.Column("error", _text),
    sa.Column("record", _text, nullable=False),
    sa.Column("created_at", _time, nullable=False),
)  # fmt: skip

papers = sa.Table(
    "papers", metadata,
    sa.Column("id", _text, primary_key=True),
    sa.Column("source", _text, nullable=False),
    sa.Column("arxiv_id", _text),
    sa.Column("version", sa.Integer),
    sa.Column("month", _text),
    sa.Column("title", _text),
    _json("authors", "[]"),
    sa.Column("abstract", _text),
    sa.Column("primary_category", _text),
    _json("categories", "[]"),
    sa.Column("published", _text),
    sa.Column("updated", _text),
    sa.Column("license", _text),
    _json("meta", "{}"),
    sa.Column("eprint_path", _text),
    sa.Column("eprint_kind", _text),
    sa.Column("eprint_sha256", _text),
    sa.Column("folder", _text),
    sa.Column("status", _text, nullable=False),
    sa.Column("reason", _text),
    _json("problems", "[]"),
    sa.Column("created_at", _time, nullable=False),
    sa.Column("updated_at", _time, nullable=False),
    sa.Index("papers_month", "month", "primary_category"),
)  # fmt: skip

theorems = sa.Table(
    "theorems", metadata,
    sa.Column("paper_id", _text, sa.ForeignKey("papers.id"), primary_key=True),
    sa.Column("settings_key", _text, primary_key=True),
    sa.Column("path", _text, nullable=False),
    sa.Column("env_name", _text),
    sa.Column("label", _text),
    sa.Column("reason", _text),
    _json("record"),
    _json("call_ids", "[]"),
    sa.Column("created_at", _time, nullable=False),
)  # fmt: skip

steps = sa.Table(
    "steps", metadata,
    sa.Column("pipeline", _text, primary_key=True),
    sa.Column("key", _text, primary_key=True),
    sa.Column("stage", _text, primary_key=True),
    sa.Column("status", _text, nullable=False),
    _json("output"),
    sa.Column("reason", _text),
    _json("call_ids", "[]"),
    sa.Column("updated_at", _time, nullable=False),
    # revision 0006: runs that failed because of the model's own output, and the marker of such an outcome
    _count("output_attempts"),
    sa.Column("cause", _text),
)  # fmt: skip

# -- IMProofBench (revision 0002): problems with immutable versions, answers, verdicts, grades ----------

_serial = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

improof_problems = sa.Table(
    "improof_problems", metadata,
    sa.Column("id", _text, primary_key=True),
    sa.Column("status", _text, nullable=False),
    sa.Column("author", _text),
    sa.Column("current_version", sa.Integer, nullable=False),
    sa.Column("created_at", _time, nullable=False),
    sa.Column("updated_at", _time, nullable=False),
    sa.Index("improof_problems_status", "status"),
)  # fmt: skip

improof_problem_versions = sa.Table(
    "improof_problem_versions", metadata,
    sa.Column("problem_id", _text, sa.ForeignKey("improof_problems.id"), primary_key=True),
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("payload", _text, nullable=False),
    sa.Column("created_by", _text),
    sa.Column("note", _text),
    sa.Column("created_at", _time, nullable=False),
)  # fmt: skip

improof_status_events = sa.Table(
    "improof_status_events", metadata,
    sa.Column("id", _serial, sa.Identity(), primary_key=True),
    sa.Column("problem_id", _text, sa.ForeignKey("improof_problems.id"), nullable=False),
    sa.Column("from_status", _text),
    sa.Column("to_status", _text, nullable=False),
    sa.Column("actor", _text),
    sa.Column("note", _text),
    sa.Column("at", _time, nullable=False),
    sa.Index("improof_status_events_problem", "problem_id"),
    sqlite_autoincrement=True,
)  # fmt: skip

improof_answers = sa.Table(
    "improof_answers", metadata,
    sa.Column("id", _text, primary_key=True),
    sa.Column("run_id", _text),
    sa.Column("problem_id", _text, nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("model", _text, nullable=False),
    sa.Column("tier", sa.Integer),
    _count("epoch"),
    sa.Column("mode", _text, nullable=False),
    sa.Column("main_answer", _text),
    _json("sub_answers", "[]"),
    _json("stages", "[]"),
    sa.Column("created_at", _time, nullable=False),
    sa.ForeignKeyConstraint(["problem_id", "version"],
                            ["improof_problem_versions.problem_id", "improof_problem_versions.version"]),
    sa.Index("improof_answers_run", "run_id"),
    sa.Index("improof_answers_problem", "problem_id", "model"),
)  # fmt: skip

improof_verdicts = sa.Table(
    "improof_verdicts", metadata,
    sa.Column("answer_id", _text, sa.ForeignKey("improof_answers.id"), primary_key=True),
    sa.Column("sub_index", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("grader_version", _text, primary_key=True),
    sa.Column("correct", sa.Integer),
    sa.Column("warning", _text, nullable=False),
    sa.Column("extracted", _text),
    _json("parsed"),
    sa.Column("created_at", _time, nullable=False),
)  # fmt: skip

improof_verdict_overrides = sa.Table(
    "improof_verdict_overrides", metadata,
    sa.Column("id", _serial, sa.Identity(), primary_key=True),
    sa.Column("answer_id", _text, sa.ForeignKey("improof_answers.id"), nullable=False),
    sa.Column("sub_index", sa.Integer, nullable=False),
    sa.Column("correct", sa.Integer),
    _count("verified"),
    sa.Column("actor", _text, nullable=False),
    sa.Column("reason", _text, nullable=False),
    sa.Column("at", _time, nullable=False),
    sa.Index("improof_verdict_overrides_answer", "answer_id", "sub_index"),
    sqlite_autoincrement=True,
)  # fmt: skip

improof_grades = sa.Table(
    "improof_grades", metadata,
    sa.Column("answer_id", _text, sa.ForeignKey("improof_answers.id"), primary_key=True),
    sa.Column("grader", _text, primary_key=True),
    sa.Column("progress", sa.Integer),
    _json("indicators", "{}"),
    sa.Column("notes", _text),
    sa.Column("comment", _text),
    sa.Column("status", _text, nullable=False),
    _count("revision", 1),
    sa.Column("updated_at", _time, nullable=False),
)  # fmt: skip

# -- grades changed after the grader saw the model names (revision 0005): inserted only, never updated -----------
# ``revision`` continues the blind grade's revision count (blind grade at r, first correction r + 1, ...).

improof_grade_corrections = sa.Table(
    "improof_grade_corrections", metadata,
    sa.Column("answer_id", _text, sa.ForeignKey("improof_answers.id"), primary_key=True),
    sa.Column("grader", _text, primary_key=True),
    sa.Column("revision", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("progress", sa.Integer),
    _json("indicators", "{}"),
    sa.Column("notes", _text),
    sa.Column("comment", _text),
    sa.Column("status", _text, nullable=False),
    sa.Column("created_at", _time, nullable=False),
)  # fmt: skip

# -- IMProofBench platform (revision 0003): accounts, roles, sessions, hashed tokens, outbox, rate limits -----

web_users = sa.Table(
    "web_users", metadata,
    sa.Column("id", _text, primary_key=True),
    sa.Column("email", _text, nullable=False, unique=True),
    sa.Column("password_hash", _text),
    _count("verified"),
    sa.Column("created_at", _time, nullable=False),
)  # fmt: skip

web_user_roles = sa.Table(
    "web_user_roles", metadata,
    sa.Column("user_id", _text, sa.ForeignKey("web_users.id"), primary_key=True),
    sa.Column("role", _text, primary_key=True),
    sa.Column("granted_by", _text),
    sa.Column("granted_at", _time, nullable=False),
)  # fmt: skip

web_sessions = sa.Table(
    "web_sessions", metadata,
    sa.Column("id_hash", _text, primary_key=True),
    sa.Column("user_id", _text, sa.ForeignKey("web_users.id"), nullable=False),
    sa.Column("created_at", _time, nullable=False),
    sa.Column("expires_at", _time, nullable=False),
    sa.Index("web_sessions_user", "user_id"),
)  # fmt: skip

web_tokens = sa.Table(
    "web_tokens", metadata,
    sa.Column("token_hash", _text, primary_key=True),
    sa.Column("kind", _text, nullable=False),
    sa.Column("email", _text, nullable=False),
    sa.Column("role", _text),
    sa.Column("created_by", _text),
    sa.Column("created_at", _time, nullable=False),
    sa.Column("expires_at", _time, nullable=False),
    sa.Column("used_at", _time),
)  # fmt: skip

web_outbox = sa.Table(
    "web_outbox", metadata,
    sa.Column("id", _serial, sa.Identity(), primary_key=True),
    sa.Column("to_addr", _text, nullable=False),
    sa.Column("subject", _text, nullable=False),
    sa.Column("body", _text, nullable=False),
    sa.Column("created_at", _time, nullable=False),
    sa.Column("sent_at", _time),
    sa.Column("error", _text),
    sqlite_autoincrement=True,
)  # fmt: skip

web_rate_limits = sa.Table(
    "web_rate_limits", metadata,
    sa.Column("key", _text, primary_key=True),
    sa.Column("window_start", _time, nullable=False),
    _count("hits"),
)  # fmt: skip

# -- IMProofBench platform (revision 0004): reviews, background jobs, grading assignments, flags ----------------

web_reviews = sa.Table(
    "web_reviews", metadata,
    sa.Column("id", _serial, sa.Identity(), primary_key=True),
    sa.Column("problem_id", _text, sa.ForeignKey("improof_problems.id"), nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("reviewer_id", _text, sa.ForeignKey("web_users.id"), nullable=False),
    sa.Column("invited_by", _text),
    sa.Column("state", _text, nullable=False),
    sa.Column("recommendation", _text),
    _count("anonymous"),
    sa.Column("comment", _text),
    sa.Column("author_response", _text),
    sa.Column("created_at", _time, nullable=False),
    sa.Column("responded_at", _time),
    sa.Column("submitted_at", _time),
    sa.Column("author_responded_at", _time),
    sa.Index("web_reviews_problem", "problem_id"),
    sa.Index("web_reviews_reviewer", "reviewer_id"),
    sqlite_autoincrement=True,
)  # fmt: skip

web_jobs = sa.Table(
    "web_jobs", metadata,
    sa.Column("id", _text, primary_key=True),
    sa.Column("kind", _text, nullable=False),
    sa.Column("owner", _text, nullable=False),
    sa.Column("problem_id", _text),
    _json("params", "{}"),
    sa.Column("status", _text, nullable=False),
    _count("attempts"),
    sa.Column("lease_owner", _text),
    sa.Column("lease_until", _time),
    _count("progress_done"),
    _count("progress_total"),
    _json("result"),
    sa.Column("error", _text),
    sa.Column("timeout_s", _time, nullable=False),
    sa.Column("created_at", _time, nullable=False),
    sa.Column("started_at", _time),
    sa.Column("finished_at", _time),
    sa.Index("web_jobs_status", "status"),
    sa.Index("web_jobs_owner", "owner", "created_at"),
    sa.Index("web_jobs_problem", "problem_id", "kind"),
)  # fmt: skip

web_grading = sa.Table(
    "web_grading", metadata,
    sa.Column("problem_id", _text, sa.ForeignKey("improof_problems.id"), primary_key=True),
    sa.Column("grader_id", _text, sa.ForeignKey("web_users.id"), primary_key=True),
    _json("answer_order", "[]"),
    sa.Column("notes", _text),
    _count("notes_revision", 1),
    sa.Column("assigned_by", _text),
    sa.Column("assigned_at", _time, nullable=False),
    sa.Column("revealed_at", _time),
    sa.Index("web_grading_grader", "grader_id"),
)  # fmt: skip

web_flags = sa.Table(
    "web_flags", metadata,
    sa.Column("id", _serial, sa.Identity(), primary_key=True),
    sa.Column("problem_id", _text, sa.ForeignKey("improof_problems.id"), nullable=False),
    sa.Column("answer_id", _text),
    sa.Column("user_id", _text, sa.ForeignKey("web_users.id"), nullable=False),
    sa.Column("message", _text, nullable=False),
    sa.Column("created_at", _time, nullable=False),
    sa.Column("resolved_at", _time),
    sa.Column("resolved_by", _text),
    sa.Index("web_flags_problem", "problem_id"),
    sqlite_autoincrement=True,
)  # fmt: skip

# -- review rounds (revision 0008): e-mail invitations of external reviewers, the author-reviewer discussion ------

web_review_invitations = sa.Table(
    "web_review_invitations", metadata,
    sa.Column("token_hash", _text, primary_key=True),  # the SHA-256 of the link's token, never the token
    sa.Column("problem_id", _text, sa.ForeignKey("improof_problems.id"), nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("email", _text, nullable=False),
    sa.Column("invited_by", _text),
    sa.Column("state", _text, nullable=False),  # pending | accepted | declined
    sa.Column("created_at", _time, nullable=False),
    sa.Column("expires_at", _time, nullable=False),
    sa.Column("answered_at", _time),
    sa.Column("review_id", _serial, sa.ForeignKey("web_reviews.id")),  # the review made on acceptance
    sa.Index("web_review_invitations_problem", "problem_id"),
)  # fmt: skip

web_review_messages = sa.Table(
    "web_review_messages", metadata,
    sa.Column("id", _serial, sa.Identity(), primary_key=True),
    sa.Column("review_id", _serial, sa.ForeignKey("web_reviews.id"), nullable=False),
    sa.Column("author_id", _text, sa.ForeignKey("web_users.id"), nullable=False),
    sa.Column("side", _text, nullable=False),  # author | reviewer | admin: how the thread labels the writer
    sa.Column("body", _text, nullable=False),
    sa.Column("created_at", _time, nullable=False),
    sa.Index("web_review_messages_review", "review_id"),
    sqlite_autoincrement=True,
)  # fmt: skip

# -- provider batches (revision 0007): a batch is recorded before it is polled, so a killed run never pays twice --

llm_batches = sa.Table(
    "llm_batches", metadata,
    sa.Column("id", _text, primary_key=True),  # ours, recorded before the provider is asked
    sa.Column("provider", _text, nullable=False),
    sa.Column("endpoint", _text, nullable=False),
    sa.Column("model", _text, nullable=False),
    sa.Column("remote_id", _text),  # the provider's batch id, once it made the batch
    sa.Column("input_file", _text),
    sa.Column("status", _text, nullable=False),  # submitting | pending | ended | failed
    _count("n_requests"),
    _json("detail", "{}"),
    sa.Column("created_at", _time, nullable=False),
    sa.Column("updated_at", _time, nullable=False),
    sa.Index("llm_batches_status", "status"),
)  # fmt: skip

llm_batch_requests = sa.Table(
    "llm_batch_requests", metadata,
    sa.Column("batch_id", _text, sa.ForeignKey("llm_batches.id"), primary_key=True),
    sa.Column("custom_id", _text, primary_key=True),
    sa.Column("cache_key", _text, nullable=False),
    sa.Index("llm_batch_requests_key", "cache_key"),
)  # fmt: skip

TABLES: dict[str, sa.Table] = dict(metadata.tables)
