"""The one authorisation rule of the platform: :func:`allowed`, consulted by every route (``app.guard``).

Routes name an action; a denied action answers 404 (the object is private: its existence is
not revealed), except that an anonymous visitor asking for a members' page is sent to log in.
"""

from __future__ import annotations

from typing import Any

PUBLIC = frozenset({"dashboard", "healthz", "signup", "login", "logout", "verify", "invite"})
MEMBERS = frozenset({"preview"})
ADMIN = frozenset({"admin_outbox", "admin_invite"})
ACTIONS = PUBLIC | MEMBERS | ADMIN


def allowed(user: dict[str, Any] | None, action: str, obj: Any = None) -> bool:
    """Whether ``user`` (None when anonymous) may do ``action`` on ``obj``; unknown actions are refused."""
    if action in PUBLIC:
        return True
    if user is None or not user.get("verified"):
        return False
    roles = user.get("roles") or frozenset()
    if action in MEMBERS:
        return True
    if action in ADMIN:
        return "admin" in roles
    return False


def login_first(user: dict[str, Any] | None, action: str) -> bool:
    """A denied anonymous visitor who would be allowed once signed in is sent to the login page."""
    return user is None and action in MEMBERS
