"""CSRF protection: every POST carries a token bound to the session cookie (form field or header).

The token is an HMAC of the cookie value under the app's secret key, so it changes with every
new session id and needs no storage. Forms send it as ``csrf_token``; scripts as ``X-CSRF-Token``
(``app.js`` reads it from ``<meta name="csrf-token">``).
"""

from __future__ import annotations

import hashlib
import hmac

FIELD = "csrf_token"
HEADER = "x-csrf-token"


def token_for(secret: bytes, cookie: str) -> str:
    return hmac.new(secret, b"csrf:" + cookie.encode(), hashlib.sha256).hexdigest()


def valid(secret: bytes, cookie: str | None, sent: str | None) -> bool:
    """Whether ``sent`` is the token of ``cookie`` (False when either is missing)."""
    if not cookie or not sent:
        return False
    return hmac.compare_digest(token_for(secret, cookie), sent)
