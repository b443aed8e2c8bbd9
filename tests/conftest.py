"""Shared fixtures: an isolated home per test, the loopback fake LLM, the real data."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from browser_harness import (  # noqa: F401 - real-browser fixtures (Playwright + Debian's Chromium), screenshots
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
from ci_rules import pytest_runtest_makereport, pytest_sessionstart  # noqa: F401 - CI allows no skips
from pg import db_url, pg_server, pg_url  # noqa: F401 - fixtures: a throwaway PostgreSQL server, both backends
from web_fixtures import any_app, app  # noqa: F401 - fixtures: the platform over a fresh store

from theorembench.testing.fakellm import FakeLLMServer

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
LMB_HARD = SHARED / "data" / "lmb" / "202511" / "qaEval_202511_ge5_hard.json"

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
def lmb_hard() -> Path:
    if not LMB_HARD.is_file():
        pytest.skip(f"shared data not found at {LMB_HARD}")
    return LMB_HARD


def write_items(path: Path, items: list[dict]) -> Path:
    path.write_text(json.dumps(items, ensure_ascii=False))
    return path


def cli_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(extra)
    env["PYTHONUNBUFFERED"] = "1"
    return env


PYTHON = sys.executable
