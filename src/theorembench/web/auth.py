"""Passwords: argon2id hashes (argon2-cffi's defaults), a constant-shape check for unknown users."""

from __future__ import annotations

from functools import lru_cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

MIN_LENGTH = 8
MAX_LENGTH = 1024


@lru_cache(maxsize=1)
def _hasher() -> PasswordHasher:
    return PasswordHasher()


@lru_cache(maxsize=1)
def _dummy_hash() -> str:
    return _hasher().hash("not a password of anyone")


def password_problem(password: str) -> str | None:
    """Why a new password is refused (one line), or None."""
    if len(password) < MIN_LENGTH:
        return f"the password needs at least {MIN_LENGTH} characters"
    if len(password) > MAX_LENGTH:
        return f"the password may have at most {MAX_LENGTH} characters"
    return None


def hash_password(password: str) -> str:
    return _hasher().hash(password)


def verify_password(stored: str | None, password: str) -> bool:
    """True when ``password`` matches ``stored``; an unknown user (None) costs one hash check all the same."""
    try:
        return _hasher().verify(stored or _dummy_hash(), password[:MAX_LENGTH]) and stored is not None
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False
