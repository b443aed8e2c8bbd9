"""Server-side sessions: a random id in the cookie, its SHA-256 digest in ``web_sessions`` with the user and expiry.

A visitor without a session still gets a random cookie value (anonymous: no row), which the
CSRF token of the login and sign-up forms is bound to. Logging in always issues a new id
(rotation), logging out deletes the row and issues a new anonymous id. A password reset or change ends every
session of the user (:func:`end_all`).
"""

from __future__ import annotations

import hashlib
import secrets
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from theorembench.store.accounts import AccountRepo

COOKIE = "tb_session"
SESSION_TTL_S = 14 * 24 * 3600
ANON_TTL_S = 24 * 3600


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def new_id() -> str:
    return secrets.token_urlsafe(32)


def cookie_value(request: Request) -> str | None:
    value = request.cookies.get(COOKIE)
    return value if value and 20 <= len(value) <= 100 else None


def session_user(repo: AccountRepo, value: str | None, now: float | None = None) -> dict[str, Any] | None:
    """The user of a live session cookie value, or None (anonymous, expired, unknown)."""
    if not value:
        return None
    row = repo.session(_digest(value), now or time.time())
    return repo.user(row["user_id"]) if row else None


def start(repo: AccountRepo, user_id: str, old: str | None) -> str:
    """A new session for ``user_id`` (the old id, if any, is dropped); returns the new cookie value."""
    now = time.time()
    if old:
        repo.delete_session(_digest(old))
    repo.delete_expired_sessions(now)
    value = new_id()
    repo.create_session(_digest(value), user_id, now + SESSION_TTL_S)
    return value


def end(repo: AccountRepo, value: str | None) -> str:
    """Drop the session of ``value``; returns a fresh anonymous cookie value."""
    if value:
        repo.delete_session(_digest(value))
    return new_id()


def end_all(repo: AccountRepo, user_id: str) -> int:
    """Sign the user out everywhere (every browser, this one too); returns how many sessions ended."""
    return repo.delete_user_sessions(user_id)


def set_cookie(request: Request, response: Response, value: str, *, signed_in: bool) -> None:
    """The session cookie: HttpOnly, SameSite=Lax, Secure when the request came over https."""
    response.set_cookie(COOKIE, value, max_age=SESSION_TTL_S if signed_in else ANON_TTL_S, path="/", httponly=True,
                        samesite="lax", secure=request.url.scheme == "https")  # fmt: skip
