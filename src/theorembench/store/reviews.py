"""The ``web_reviews`` table: review invitations, the reviewers' answers and reviews, the authors' responses.

Plain rows in and out. Every state move is a compare-and-set UPDATE (``WHERE state = old``), so two
requests racing on one review cannot both win. The rules (who may invite whom, what a review does to
its question) live in :mod:`theorembench.web.reviews`. Also the user listings the admin pages need.
"""

from __future__ import annotations

import time
from typing import TypedDict, cast

import sqlalchemy as sa

from theorembench.store.db import Store
from theorembench.store.schema import web_reviews, web_user_roles, web_users

_v, _u, _r = web_reviews.c, web_users.c, web_user_roles.c

OPEN_STATES = ("invited", "accepted")


class ReviewRow(TypedDict):
    """A review invitation with the reviewer's answer, review and the author's response (``anonymous`` 0 or 1)."""

    id: int
    problem_id: str
    version: int
    reviewer_id: str
    invited_by: str | None
    state: str
    recommendation: str | None
    anonymous: int
    comment: str | None
    author_response: str | None
    created_at: float
    responded_at: float | None
    submitted_at: float | None
    author_responded_at: float | None


class Review(ReviewRow):
    """A review row with its reviewer's email."""

    reviewer_email: str


class ListedUser(TypedDict):
    """A user as the admin listings show one: no password hash, the roles as a sorted list."""

    id: str
    email: str
    verified: bool
    created_at: float
    roles: list[str]


def _with_email() -> sa.Select:
    return sa.select(web_reviews, _u.email.label("reviewer_email")).join(web_users, _u.id == _v.reviewer_id)


class ReviewRepo:
    """Typed access to the review rows of one store."""

    def __init__(self, store: Store):
        self.store = store

    def create(self, problem_id: str, version: int, reviewer_id: str, invited_by: str | None, *,
               state: str = "invited", anonymous: bool = False) -> int:  # fmt: skip
        """A new review: an invitation (state ``invited``), or one already ``accepted`` (an invitation accepted
        by e-mail, a further round); returns its id."""
        now = time.time()
        done = self.store._execute(web_reviews.insert().returning(_v.id), {
            "problem_id": problem_id, "version": version, "reviewer_id": reviewer_id, "invited_by": invited_by,
            "state": state, "anonymous": int(anonymous), "created_at": now,
            "responded_at": now if state == "accepted" else None})  # fmt: skip
        return int(done.scalar_one())

    def get(self, review_id: int) -> Review | None:
        """One review with its reviewer's email."""
        row = self.store._first(_with_email().where(_v.id == review_id))
        return cast(Review, dict(row)) if row else None

    def for_problem(self, problem_id: str) -> list[Review]:
        """A question's reviews, oldest first, with the reviewers' emails."""
        rows = self.store._rows(_with_email().where(_v.problem_id == problem_id).order_by(_v.id))
        return [cast(Review, dict(r)) for r in rows]

    def listing(self, reviewer_id: str | None = None) -> list[Review]:
        """Every review (or one reviewer's), newest first, with the reviewers' emails."""
        query = _with_email().order_by(_v.id.desc())
        if reviewer_id is not None:
            query = query.where(_v.reviewer_id == reviewer_id)
        return [cast(Review, dict(r)) for r in self.store._rows(query)]

    def open_for(self, problem_id: str, reviewer_id: str) -> bool:
        """Whether the reviewer has an unanswered or accepted invitation for the question."""
        return self.store._first(sa.select(_v.id).where(
            _v.problem_id == problem_id, _v.reviewer_id == reviewer_id, _v.state.in_(OPEN_STATES))) is not None

    def move(self, review_id: int, old: str, new: str) -> bool:
        """``old`` → ``new`` (accept or decline) if the review is still at ``old``; False otherwise."""
        done = self.store._execute(web_reviews.update().where(_v.id == review_id, _v.state == old)
                                   .values(state=new, responded_at=time.time())
                                   .execution_options(preserve_rowcount=True))  # fmt: skip
        return done.rowcount == 1

    def submit(self, review_id: int, *, recommendation: str, anonymous: bool, comment: str) -> bool:
        """Store the review of an accepted invitation (state ``submitted``); False when it is not accepted."""
        done = self.store._execute(web_reviews.update().where(_v.id == review_id, _v.state == "accepted")
                                   .values(state="submitted", recommendation=recommendation,
                                           anonymous=int(anonymous), comment=comment, submitted_at=time.time())
                                   .execution_options(preserve_rowcount=True))  # fmt: skip
        return done.rowcount == 1

    def respond(self, review_id: int, text: str) -> bool:
        """The author's response to a submitted review (a later one replaces it); False when not submitted."""
        done = self.store._execute(web_reviews.update().where(_v.id == review_id, _v.state == "submitted")
                                   .values(author_response=text, author_responded_at=time.time())
                                   .execution_options(preserve_rowcount=True))  # fmt: skip
        return done.rowcount == 1


def users_with_roles(store: Store, role: str | None = None) -> list[ListedUser]:
    """Users by email with their roles (a sorted list) and verified flag; only holders of ``role`` when given."""
    users = [dict(r) for r in store._rows(sa.select(_u.id, _u.email, _u.verified, _u.created_at).order_by(_u.email))]
    roles: dict[str, list[str]] = {}
    for user_id, name in store._rows(sa.select(_r.user_id, _r.role).order_by(_r.role)):
        roles.setdefault(user_id, []).append(name)
    out = [cast(ListedUser, u | {"roles": roles.get(u["id"], []), "verified": bool(u["verified"])}) for u in users]
    return [u for u in out if role is None or role in u["roles"]]


def user_emails(store: Store) -> dict[str, str]:
    """User id → email, for labelling rows that store ids."""
    return {r[0]: r[1] for r in store._rows(sa.select(_u.id, _u.email))}
