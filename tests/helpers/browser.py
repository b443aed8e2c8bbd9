"""Accounts and sign-in for the real-browser tests (Playwright pages over the harness's platform)."""

from __future__ import annotations

from typing import Any


def add_user(platform: Any, email: str, password: str, *, admin: bool = False) -> None:
    """A verified account made through the app's Python API, on a store of its own over the same database."""
    from theorembench.store import open_store
    from theorembench.store.accounts import AccountRepo
    from theorembench.web import accounts
    from theorembench.web.auth import hash_password

    store = open_store(platform.db)
    try:
        repo = AccountRepo(store)
        if admin:
            accounts.create_admin(repo, email, password)
        else:
            repo.create_user(email, hash_password(password), verified=True, roles=("contributor",))
    finally:
        store.close()


def log_in(page: Any, email: str, password: str) -> None:
    page.goto("/login")
    page.get_by_test_id("login-email").fill(email)
    page.get_by_test_id("login-password").fill(password)
    page.get_by_test_id("login-submit").click()
    page.wait_for_url("**/")
    assert email in page.get_by_test_id("nav-user").text_content()
