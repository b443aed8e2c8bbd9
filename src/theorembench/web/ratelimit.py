"""Rate limits on login, sign-up and password-reset requests, per client address and per email, counted in the store.

A window opens at a key's first counted attempt and lasts ``window_s``; within it at most
``limit`` attempts pass, the next ones answer 429. Login counts failed attempts only (a user who
types the right password is never locked out by their own successes); sign-up and reset requests count every attempt.
The limits live in ``app.state.limits`` so a deployment (or a test) can change them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from theorembench.store.accounts import AccountRepo


@dataclass(frozen=True)
class Limit:
    limit: int = 5
    window_s: float = 60.0


DEFAULT_LIMITS = {"login": Limit(), "signup": Limit(), "reset": Limit(limit=3)}


def _keys(kind: str, ip: str, email: str) -> list[str]:
    return [f"{kind}:ip:{ip}", f"{kind}:email:{email.strip().lower()[:254]}"]


def exceeded(repo: AccountRepo, kind: str, limit: Limit, ip: str, email: str) -> bool:
    """Whether the window of the address or of the email is already full (checks, counts nothing)."""
    now = time.time()
    return any(repo.hits(key, now, limit.window_s) >= limit.limit for key in _keys(kind, ip, email))


def count(repo: AccountRepo, kind: str, limit: Limit, ip: str, email: str) -> bool:
    """Count one attempt for the address and the email; True when either is now over the limit."""
    now = time.time()
    counts = [repo.hit(key, now, limit.window_s) for key in _keys(kind, ip, email)]
    return any(c > limit.limit for c in counts)
