"""Accounts: sign-up with email verification, invitations that grant a role, the first admin, password change and reset.

Tokens (verification and invitation links) are random, shown once (in the mail) and stored as
their SHA-256 digest; each is single-use and expires. Emails are kept lower-case.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import time
from typing import Any

import sqlalchemy as sa

from theorembench.store.accounts import AccountRepo
from theorembench.web.auth import hash_password, password_problem, verify_password

ROLES = ("contributor", "reviewer", "grader", "admin")
SIGNUP_ROLE = "contributor"
VERIFY_TTL_S = 2 * 24 * 3600
INVITE_TTL_S = 7 * 24 * 3600
_EMAIL = re.compile(r"^[^@\s<>\"'`]+@[^@\s<>\"'`]+\.[^@\s<>\"'`]+$")


class AccountError(ValueError):
    """A form value the user must fix (one line, safe to show)."""


def normalise_email(email: str) -> str:
    email = (email or "").strip().lower()
    if len(email) > 254 or not _EMAIL.match(email):
        raise AccountError("enter a valid email address")
    return email


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> tuple[str, str]:
    """A fresh random token and its digest (only the digest is stored)."""
    token = secrets.token_urlsafe(32)
    return token, token_hash(token)


def _check_password(password: str) -> None:
    problem = password_problem(password or "")
    if problem:
        raise AccountError(problem)


def sign_up(repo: AccountRepo, email: str, password: str, *, now: float | None = None) -> tuple[str, str | None]:
    """Register an unverified contributor; returns (email, verification token), the token None if the email is taken."""
    email = normalise_email(email)
    _check_password(password)
    if repo.user_by_email(email) is not None:
        return email, None
    try:
        repo.create_user(email, hash_password(password), verified=False, roles=(SIGNUP_ROLE,))
    except sa.exc.IntegrityError:  # a concurrent sign-up with the same address won
        return email, None
    token, digest = new_token()
    repo.add_token(digest, "verify", email, role=None, created_by=None, expires_at=(now or time.time()) + VERIFY_TTL_S)
    return email, token


def verify_email(repo: AccountRepo, token: str, *, now: float | None = None) -> dict[str, Any] | None:
    """Mark the address of a live verification token verified (once); the user, or None for a bad token."""
    now = now or time.time()
    digest = token_hash(token)
    row = repo.live_token(digest, "verify", now)
    if row is None or not repo.use_token(digest, "verify", now):
        return None
    user = repo.user_by_email(row["email"])
    if user is not None:
        repo.set_verified(user["id"])
    return user


def authenticate(repo: AccountRepo, email: str, password: str) -> dict[str, Any] | None:
    """The user with this email and password (verified or not), or None; the same work for unknown addresses."""
    try:
        email = normalise_email(email)
    except AccountError:
        verify_password(None, password or "")
        return None
    user = repo.user_by_email(email)
    ok = verify_password(user["password_hash"] if user else None, password or "")
    return user if ok and user is not None else None


def invite(repo: AccountRepo, email: str, role: str, *, by: str | None, ttl_s: float = INVITE_TTL_S,
           now: float | None = None) -> str:  # fmt: skip
    """An invitation token granting ``role`` to ``email``, expiring after ``ttl_s``."""
    email = normalise_email(email)
    if role not in ROLES:
        raise AccountError(f"the role must be one of {', '.join(ROLES)}")
    token, digest = new_token()
    repo.add_token(digest, "invite", email, role=role, created_by=by, expires_at=(now or time.time()) + ttl_s)
    return token


def invitation(repo: AccountRepo, token: str, *, now: float | None = None) -> dict[str, Any] | None:
    """The live (unused, unexpired) invitation of a token, or None."""
    return repo.live_token(token_hash(token), "invite", now or time.time())


def accept_invitation(repo: AccountRepo, token: str, *, user: dict[str, Any] | None, password: str | None,
                      now: float | None = None) -> str:  # fmt: skip
    """Use an invitation: grant its role to the signed-in user of that address, or create the account.

    Returns the user id. Raises :class:`AccountError` when the token is not live, or when the
    invitation is for an existing account and that account is not the one signed in.
    """
    now = now or time.time()
    digest = token_hash(token)
    row = repo.live_token(digest, "invite", now)
    if row is None:
        raise AccountError("this invitation link is unknown, already used or expired")
    existing = repo.user_by_email(row["email"])
    if existing is not None and (user is None or user["id"] != existing["id"]):
        raise AccountError(f"sign in as {row['email']} to accept this invitation")
    if existing is None:
        _check_password(password or "")
    with repo.store.transaction():
        if not repo.use_token(digest, "invite", now):
            raise AccountError("this invitation link is unknown, already used or expired")
        if existing is None:
            user_id = repo.create_user(row["email"], hash_password(password or ""), verified=True, roles=(row["role"],),
                                       granted_by=row["created_by"])  # fmt: skip
        else:
            user_id = existing["id"]
            repo.add_role(user_id, row["role"], granted_by=row["created_by"])
            repo.set_verified(user_id)
    return user_id


def ensure_account(repo: AccountRepo, email: str, password: str, role: str, *, granted_by: str | None = None) -> str:
    """A verified account holding ``role`` (or, for an existing one, the role, this password and verification);
    returns its id."""
    if role not in ROLES:
        raise AccountError(f"the role must be one of {', '.join(ROLES)}")
    email = normalise_email(email)
    _check_password(password)
    existing = repo.user_by_email(email)
    if existing is None:
        return repo.create_user(email, hash_password(password), verified=True, roles=(role,), granted_by=granted_by)
    repo.set_password(existing["id"], hash_password(password))
    repo.add_role(existing["id"], role, granted_by=granted_by)
    repo.set_verified(existing["id"])
    return existing["id"]


def create_admin(repo: AccountRepo, email: str, password: str) -> str:
    """A verified admin account (or the admin role and this password for an existing one); returns its id."""
    return ensure_account(repo, email, password, "admin")


# -- password change and reset (``web_tokens`` kind "password_reset": one-time, expiring) -------------------------

RESET_KIND = "password_reset"
RESET_TTL_S = 3600


def change_password(repo: AccountRepo, user: dict[str, Any], current: str, new: str) -> None:
    """Set a new password after checking the current one (:class:`AccountError` naming what to fix)."""
    if not verify_password(user.get("password_hash"), current or ""):
        raise AccountError("the current password is wrong")
    _check_password(new)
    repo.set_password(user["id"], hash_password(new))


def request_password_reset(repo: AccountRepo, email: str, *, now: float | None = None) -> tuple[str, str | None]:
    """A reset token for the account of ``email``: (the address, the token), the token None without an account.

    The caller answers the same way either way, so the page never tells whether an address has an account.
    """
    email = normalise_email(email)
    if repo.user_by_email(email) is None:
        return email, None
    token, digest = new_token()
    repo.add_token(digest, RESET_KIND, email, role=None, created_by=None, expires_at=(now or time.time()) + RESET_TTL_S)
    return email, token


def reset_link_live(repo: AccountRepo, token: str, *, now: float | None = None) -> bool:
    return repo.live_token(token_hash(token), RESET_KIND, now or time.time()) is not None


def reset_password(repo: AccountRepo, token: str, password: str, *, now: float | None = None) -> str:
    """Use a live reset token once: set the new password and mark the address verified (the mail reached it).

    Returns the user id; the caller ends the user's sessions. :class:`AccountError` for a bad token or password.
    """
    now = now or time.time()
    digest = token_hash(token)
    row = repo.live_token(digest, RESET_KIND, now)
    user = repo.user_by_email(row["email"]) if row else None
    if row is None or user is None:
        raise AccountError("this reset link is unknown, already used or expired: ask for a new one")
    _check_password(password)
    with repo.store.transaction():
        if not repo.use_token(digest, RESET_KIND, now):
            raise AccountError("this reset link is unknown, already used or expired: ask for a new one")
        repo.set_password(user["id"], hash_password(password))
        repo.set_verified(user["id"])
    return user["id"]
