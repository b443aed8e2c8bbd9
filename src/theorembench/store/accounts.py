"""The platform's tables: users and roles, sessions, hashed tokens, the outbox, rate-limit counters.

Plain rows in and out; the rules (who may do what, how long a token lives, what a password
needs) live in :mod:`theorembench.web`. Session ids and tokens arrive here already hashed.
"""

from __future__ import annotations

import time
import uuid
from typing import Any, TypedDict, cast

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql as pg_dialect
from sqlalchemy.dialects import sqlite as sqlite_dialect

from theorembench.store.db import Store
from theorembench.store.reviews import ReviewRow
from theorembench.store.schema import (
    improof_problems,
    web_grading,
    web_outbox,
    web_rate_limits,
    web_reviews,
    web_sessions,
    web_tokens,
    web_user_roles,
    web_users,
)

_u, _r, _s, _t, _o, _l = web_users.c, web_user_roles.c, web_sessions.c, web_tokens.c, web_outbox.c, web_rate_limits.c


LIVE_REVIEW_STATES = ("invited", "accepted", "submitted")


class User(TypedDict):
    """A platform user with its roles (``verified`` as a bool)."""

    id: str
    email: str
    password_hash: str | None
    verified: bool
    created_at: float
    roles: frozenset[str]


class Session(TypedDict):
    """A login session, keyed by the hash of its id."""

    id_hash: str
    user_id: str
    created_at: float
    expires_at: float


class Token(TypedDict):
    """A hashed one-time token: an email verification or an invitation (with the role it grants)."""

    token_hash: str
    kind: str
    email: str
    role: str | None
    created_by: str | None
    created_at: float
    expires_at: float
    used_at: float | None


class Mail(TypedDict):
    """A mail in the outbox (``sent_at`` None until sent, ``error`` when sending failed)."""

    id: int
    to_addr: str
    subject: str
    body: str
    created_at: float
    sent_at: float | None
    error: str | None


def _insert(store: Store, table: sa.Table) -> Any:
    return (sqlite_dialect.insert if store.backend == "sqlite" else pg_dialect.insert)(table)


class AccountRepo:
    """Typed access to the ``web_*`` tables of one store."""

    def __init__(self, store: Store):
        self.store = store

    # -- users and roles --------------------------------------------------------

    def user(self, user_id: str) -> User | None:
        row = self.store._first(sa.select(web_users).where(_u.id == user_id))
        return self._with_roles(dict(row)) if row else None

    def user_by_email(self, email: str) -> User | None:
        row = self.store._first(sa.select(web_users).where(_u.email == email))
        return self._with_roles(dict(row)) if row else None

    def _with_roles(self, user: dict[str, Any]) -> User:
        rows = self.store._rows(sa.select(_r.role).where(_r.user_id == user["id"]).order_by(_r.role))
        return cast(User, user | {"roles": frozenset(r[0] for r in rows), "verified": bool(user["verified"])})

    def create_user(self, email: str, password_hash: str | None, *, verified: bool, roles: tuple[str, ...] = (),
                    granted_by: str | None = None) -> str:  # fmt: skip
        """A new user with its roles, in one transaction; the email must be new (IntegrityError otherwise)."""
        user_id = uuid.uuid4().hex
        now = time.time()
        with self.store.transaction():
            self.store._execute(web_users.insert(), {"id": user_id, "email": email, "password_hash": password_hash,
                                                     "verified": int(verified), "created_at": now})  # fmt: skip
            for role in roles:
                self.add_role(user_id, role, granted_by=granted_by, now=now)
        return user_id

    def set_verified(self, user_id: str) -> None:
        self.store._execute(web_users.update().where(_u.id == user_id).values(verified=1))

    def set_password(self, user_id: str, password_hash: str) -> None:
        self.store._execute(web_users.update().where(_u.id == user_id).values(password_hash=password_hash))

    def add_role(self, user_id: str, role: str, *, granted_by: str | None = None, now: float | None = None) -> None:
        """Grant a role (granting one the user holds already changes nothing)."""
        values = {"user_id": user_id, "role": role, "granted_by": granted_by, "granted_at": now or time.time()}
        self.store._execute(_insert(self.store, web_user_roles).on_conflict_do_nothing(
            index_elements=["user_id", "role"]), values)  # fmt: skip

    def count_role(self, role: str) -> int:
        return int(self.store._rows(sa.select(sa.func.count()).select_from(web_user_roles)
                                    .where(_r.role == role))[0][0])  # fmt: skip

    def problem_status_counts(self) -> dict[str, int]:
        p = improof_problems.c
        rows = self.store._rows(sa.select(p.status, sa.func.count()).group_by(p.status).order_by(p.status))
        return {r[0]: int(r[1]) for r in rows}

    def problem_relations(self, problem_id: str) -> tuple[frozenset[str], frozenset[str]]:
        """The users with a live review invitation for a question, and its assigned graders."""
        rv, gr = web_reviews.c, web_grading.c
        reviewers = self.store._rows(sa.select(rv.reviewer_id).where(
            rv.problem_id == problem_id, rv.state.in_(LIVE_REVIEW_STATES)))  # fmt: skip
        graders = self.store._rows(sa.select(gr.grader_id).where(gr.problem_id == problem_id))
        return frozenset(r[0] for r in reviewers), frozenset(r[0] for r in graders)

    def review_row(self, review_id: int) -> ReviewRow | None:
        row = self.store._first(sa.select(web_reviews).where(web_reviews.c.id == review_id))
        return cast(ReviewRow, dict(row)) if row else None

    # -- sessions ---------------------------------------------------------------

    def create_session(self, id_hash: str, user_id: str, expires_at: float) -> None:
        self.store._execute(web_sessions.insert(), {"id_hash": id_hash, "user_id": user_id,
                                                    "created_at": time.time(), "expires_at": expires_at})  # fmt: skip

    def session(self, id_hash: str, now: float) -> Session | None:
        row = self.store._first(sa.select(web_sessions).where(_s.id_hash == id_hash, _s.expires_at > now))
        return cast(Session, dict(row)) if row else None

    def delete_session(self, id_hash: str) -> None:
        self.store._execute(web_sessions.delete().where(_s.id_hash == id_hash))

    def delete_user_sessions(self, user_id: str) -> int:
        """End every session of one user (a password reset or change); returns how many there were."""
        done = self.store._execute(web_sessions.delete().where(_s.user_id == user_id)
                                   .execution_options(preserve_rowcount=True))  # fmt: skip
        return int(done.rowcount)

    def delete_expired_sessions(self, now: float) -> None:
        self.store._execute(web_sessions.delete().where(_s.expires_at <= now))

    # -- tokens (email verification, invitations) -------------------------------

    def add_token(self, token_hash: str, kind: str, email: str, *, role: str | None, created_by: str | None,
                  expires_at: float) -> None:  # fmt: skip
        self.store._execute(web_tokens.insert(), {
            "token_hash": token_hash, "kind": kind, "email": email, "role": role, "created_by": created_by,
            "created_at": time.time(), "expires_at": expires_at, "used_at": None})  # fmt: skip

    def live_token(self, token_hash: str, kind: str, now: float) -> Token | None:
        """The token if it exists, is of this kind, is unused and has not expired."""
        row = self.store._first(sa.select(web_tokens).where(
            _t.token_hash == token_hash, _t.kind == kind, _t.used_at.is_(None), _t.expires_at > now))  # fmt: skip
        return cast(Token, dict(row)) if row else None

    def use_token(self, token_hash: str, kind: str, now: float) -> bool:
        """Mark a live token used; False when another request used it first (or it expired meanwhile)."""
        done = self.store._execute(web_tokens.update().where(
            _t.token_hash == token_hash, _t.kind == kind, _t.used_at.is_(None), _t.expires_at > now)
            .values(used_at=now).execution_options(preserve_rowcount=True))  # fmt: skip
        return done.rowcount == 1

    # -- outbox -----------------------------------------------------------------

    def add_mail(self, to_addr: str, subject: str, body: str) -> int:
        done = self.store._execute(web_outbox.insert().returning(_o.id), {
            "to_addr": to_addr, "subject": subject, "body": body, "created_at": time.time()})  # fmt: skip
        return int(done.scalar_one())

    def mark_mail(self, mail_id: int, *, sent_at: float | None, error: str | None) -> None:
        self.store._execute(web_outbox.update().where(_o.id == mail_id).values(sent_at=sent_at, error=error))

    def mails(self, limit: int = 200) -> list[Mail]:
        """The newest mails first."""
        rows = self.store._rows(sa.select(web_outbox).order_by(_o.id.desc()).limit(limit))
        return [cast(Mail, dict(r)) for r in rows]

    # -- rate limits ------------------------------------------------------------

    def hits(self, key: str, now: float, window_s: float) -> int:
        """The hits counted for ``key`` in its current window (0 when the window has passed)."""
        row = self.store._first(sa.select(_l.window_start, _l.hits).where(_l.key == key))
        return 0 if row is None or now - row[0] >= window_s else int(row[1])

    def hit(self, key: str, now: float, window_s: float) -> int:
        """Count one hit for ``key``; a window starts at its first hit and lasts ``window_s``. Returns the count."""
        with self.store.transaction():
            self.store._execute(_insert(self.store, web_rate_limits).on_conflict_do_nothing(index_elements=["key"]),
                                {"key": key, "window_start": now, "hits": 0})  # fmt: skip
            row = self.store._first(sa.select(_l.window_start, _l.hits).where(_l.key == key).with_for_update())
            if now - row[0] >= window_s:
                start, count = now, 1
            else:
                start, count = row[0], int(row[1]) + 1
            self.store._execute(web_rate_limits.update().where(_l.key == key).values(window_start=start, hits=count))
        return count
