"""The fake LLM server with no script (every test scripts it itself), started and stopped around one test."""

from __future__ import annotations

import pytest

from theorembench.testing.fakellm import FakeLLMServer


@pytest.fixture
def srv():
    server = FakeLLMServer().start()
    try:
        yield server
    finally:
        server.stop()
