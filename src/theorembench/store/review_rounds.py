"""The ``web_review_invitations`` and ``web_review_messages`` tables: e-mail invitations to review one question,
and the discussion of each review (one review is one round).

Plain rows in and out; an invitation's answer is a compare-and-set UPDATE (``WHERE state = 'pending'``), so a
double click or two tabs answer it once. The rules live in :mod:`theorembench.web.review_invitations` and
:mod:`theorembench.web.review_rounds`.
"""

from __future__ import annotations

import time
from typing import TypedDict, cast

import sqlalchemy as sa

from theorembench.store.db import Store
from theorembench.store.schema import web_review_invitations, web_review_messages

_i, _m = web_review_invitations.c, web_review_messages.c


class Invitation(TypedDict):
    """An invitation by e-mail to review one question (``state``: pending, accepted or declined)."""

    token_hash: str
    problem_id: str
    version: int
    email: str
    invited_by: str | None
    state: str
    created_at: float
    expires_at: float
    answered_at: float | None
    review_id: int | None


class Message(TypedDict):
    """One message of a review's discussion; ``side`` is author, reviewer or admin."""

    id: int
    review_id: int
    author_id: str
    side: str
    body: str
    created_at: float


class InvitationRepo:
    """Typed access to the review invitations of one store."""

    def __init__(self, store: Store):
        self.store = store

    def create(self, token_hash: str, problem_id: str, version: int, email: str, invited_by: str | None,
               expires_at: float) -> None:  # fmt: skip
        self.store._execute(web_review_invitations.insert(), {
            "token_hash": token_hash, "problem_id": problem_id, "version": version, "email": email,
            "invited_by": invited_by, "state": "pending", "created_at": time.time(), "expires_at": expires_at})

    def get(self, token_hash: str) -> Invitation | None:
        row = self.store._first(sa.select(web_review_invitations).where(_i.token_hash == token_hash))
        return cast(Invitation, dict(row)) if row else None

    def for_problem(self, problem_id: str) -> list[Invitation]:
        """A question's invitations, oldest first."""
        rows = self.store._rows(sa.select(web_review_invitations).where(_i.problem_id == problem_id)
                                .order_by(_i.created_at, _i.token_hash))  # fmt: skip
        return [cast(Invitation, dict(r)) for r in rows]

    def listing(self) -> list[Invitation]:
        """Every invitation, newest first."""
        rows = self.store._rows(sa.select(web_review_invitations).order_by(_i.created_at.desc(), _i.token_hash))
        return [cast(Invitation, dict(r)) for r in rows]

    def pending_for(self, problem_id: str, email: str, now: float) -> bool:
        """Whether ``email`` has a live (pending, unexpired) invitation for the question."""
        return self.store._first(sa.select(_i.token_hash).where(
            _i.problem_id == problem_id, _i.email == email, _i.state == "pending", _i.expires_at > now)) is not None

    def answer(self, token_hash: str, state: str, now: float, review_id: int | None = None) -> bool:
        """pending → ``state`` (accepted or declined) while unexpired; False when answered already or expired."""
        done = self.store._execute(web_review_invitations.update().where(
            _i.token_hash == token_hash, _i.state == "pending", _i.expires_at > now)
            .values(state=state, answered_at=now, review_id=review_id)
            .execution_options(preserve_rowcount=True))  # fmt: skip
        return done.rowcount == 1


class MessageRepo:
    """Typed access to the review discussions of one store."""

    def __init__(self, store: Store):
        self.store = store

    def add(self, review_id: int, author_id: str, side: str, body: str) -> int:
        done = self.store._execute(web_review_messages.insert().returning(_m.id), {
            "review_id": review_id, "author_id": author_id, "side": side, "body": body, "created_at": time.time()})
        return int(done.scalar_one())

    def for_reviews(self, review_ids: list[int]) -> dict[int, list[Message]]:
        """Review id → its messages, oldest first (every id present, with an empty list when it has none)."""
        out: dict[int, list[Message]] = {rid: [] for rid in review_ids}
        if not review_ids:
            return out
        rows = self.store._rows(sa.select(web_review_messages).where(_m.review_id.in_(review_ids))
                                .order_by(_m.id))  # fmt: skip
        for row in rows:
            message = cast(Message, dict(row))
            out[int(message["review_id"])].append(message)
        return out
