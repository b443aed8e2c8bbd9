"""Shared fixtures: an isolated home per test, the loopback fake LLM, the real data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.browser_harness import (  # noqa: F401 - real-browser fixtures (Playwright + Debian's Chromium), screenshots
    browser_log,
    chromium,
    open_page,
    page,
    platform,
    platform_app,
    platform_db,
    pytest_terminal_summary,
    screens_root,
)
from helpers.ci_rules import pytest_runtest_makereport, pytest_sessionstart  # noqa: F401 - CI allows no skips
from helpers.paths import LMB_HARD
from helpers.pg import db_url, pg_server, pg_url  # noqa: F401 - fixtures: a throwaway PostgreSQL server, both backends
from helpers.web_fixtures import any_app, app  # noqa: F401 - fixtures: the platform over a fresh store

from theorembench.store import Store
from theorembench.testing.fakellm import FakeLLMServer

_PROVIDER_VARS = [
    "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL",
    "GOOGLE_API_KEY", "GEMINI_API_KEY", "VERTEX_API_KEY", "THEOREMBENCH_DB", "THEOREMBENCH_PRICES",
    "THEOREMBENCH_MODEL_REVISION",
]  # fmt: skip


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own home, store, runtime folder and log folder, and no real keys."""
    for var in _PROVIDER_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("THEOREMBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path / "logs"))
    monkeypatch.setenv("THEOREMBENCH_RETRY_BACKOFF", "0.01")
    if "THEOREMBENCH_RUNTIME" not in os.environ:
        monkeypatch.setenv("THEOREMBENCH_RUNTIME", str(tmp_path / "runtime"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def fake():
    with FakeLLMServer({"default": {"reply": "\\boxed{A}"}}) as server:
        yield server


@pytest.fixture
def fake_env(fake: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> FakeLLMServer:
    """Point the openai-api/fake/<model> service at the fake server."""
    monkeypatch.setenv("FAKE_BASE_URL", fake.base_url)
    monkeypatch.setenv("FAKE_API_KEY", "test-key")
    return fake


@pytest.fixture
def store(tmp_path: Path):
    """A fresh SQLite store of the test's own (tests that need the commands' default store use helpers.improof's)."""
    with Store(tmp_path / "store.db") as s:
        yield s


@pytest.fixture
def lmb_hard() -> Path:
    if not LMB_HARD.is_file():
        pytest.skip(f"shared data not found at {LMB_HARD}")
    return LMB_HARD



