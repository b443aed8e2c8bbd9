"""Which path a call takes: servers you run yourself (OpenAI-compatible) go the lean direct path by default.

Through Inspect one process tops out near 150 calls/s (about 6 ms of CPU a call; bench/eval_throughput.py),
so ``openai-api/``, ``vllm/``, ``sglang/`` and ``ollama/`` calls skip it unless ``THEOREMBENCH_BACKEND=inspect``
asks for it; hosted providers go through Inspect. Each call's path is read back from the ledger, where the
client records the backend that answered, and the fake server's log shows the API each one spoke.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from sqlalchemy import text

from theorembench.llm import LLM, GenerateSettings

MSG = [{"role": "user", "content": "what is 1+1?"}]
SERVED = ("openai-api/fake/m", "vllm/m", "sglang/m", "ollama/m")


def ask(store, models: tuple[str, ...]) -> list[str]:
    """One call to each model; the backend the ledger recorded for each, in order."""
    async def go() -> None:
        llm = LLM(store)
        for model in models:
            await llm.generate(model, MSG, GenerateSettings(max_tokens=16, max_retries=0), purpose="routing")
        await llm.aclose()

    asyncio.run(go())
    rows = store.fetch(text("SELECT model, response FROM model_calls ORDER BY id"))
    return [json.loads(r["response"])["backend"] for r in rows]


@pytest.fixture
def served(fake_env, monkeypatch: pytest.MonkeyPatch):
    for var in ("VLLM_BASE_URL", "SGLANG_BASE_URL", "OLLAMA_BASE_URL"):
        monkeypatch.setenv(var, fake_env.base_url)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_env.anthropic_base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.delenv("THEOREMBENCH_BACKEND", raising=False)
    return fake_env


def test_openai_compatible_servers_take_the_direct_path_and_hosted_ones_inspect(served, store) -> None:
    assert ask(store, (*SERVED, "anthropic/claude-sonnet-4-5")) == ["direct"] * 4 + ["inspect"]
    assert [r["endpoint"] for r in served.requests] == ["chat"] * 4 + ["messages"]


def test_the_inspect_path_is_taken_only_when_asked_for(served, store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THEOREMBENCH_BACKEND", "inspect")
    assert ask(store, ("openai-api/fake/m",)) == ["inspect"]
    assert [r["endpoint"] for r in served.requests] == ["chat"]
