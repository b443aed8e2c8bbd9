"""Provider batch APIs in the LLM layer (``Spending(batch=True)``), over real HTTP against the loopback fake server."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from theorembench.llm import LLM, GenerateSettings, LLMError, PriceTable
from theorembench.llm.client import cache_key
from theorembench.llm.models import resolve_model
from theorembench.llm.spending import Spending, spending
from theorembench.store.batches import batches, record_batch

MODEL = "openai-api/fake/m1"
PRICES = ('[models]\n"openai-api/fake/*" = { input = 1000.0, output = 2000.0 }\n'
          '"vllm/*" = { input = 1000.0, output = 2000.0 }\n')  # fmt: skip
FULL = (10 * 1000 + 100 * 2000) / 1e6  # one call of 10 + 100 tokens, sent alone
HALF = FULL / 2  # the same call in a batch
USAGE = {"prompt_tokens": 10, "completion_tokens": 100}


@pytest.fixture
def batching(fake_env, tmp_path, monkeypatch):
    """Prices, a fake that answers ``said <question>``, and batches that go out at 3 requests (no timer)."""
    (tmp_path / "prices.toml").write_text(PRICES)
    monkeypatch.setenv("THEOREMBENCH_PRICES", str(tmp_path / "prices.toml"))
    for var, value in (("MAX_SIZE", "3"), ("IDLE_S", "600"), ("MAX_WAIT_S", "600"), ("POLL_S", "0.01")):
        monkeypatch.setenv(f"THEOREMBENCH_BATCH_{var}", value)
    fake_env.set_script({"default": {"reply": "said {last_user}", "usage": USAGE}})
    return fake_env


def ask(llm: LLM, i: int, model: str = MODEL):
    return llm.generate(model, [{"role": "user", "content": f"q{i}"}], GenerateSettings(max_tokens=100),
                        purpose="unit.batch")  # fmt: skip


async def ask_all(llm: LLM, n: int, model: str = MODEL) -> list:
    return await asyncio.gather(*(ask(llm, i, model) for i in range(n)), return_exceptions=True)


def batched_llm(store) -> LLM:
    with spending(Spending(batch=True)):
        return LLM(store, prices=PriceTable.load())


def ledger(store) -> list[dict]:
    from sqlalchemy import text

    return [dict(r) for r in store.fetch(text("SELECT * FROM model_calls ORDER BY id"))]


def test_calls_go_out_as_one_batch_at_half_price(batching, store):
    done = asyncio.run(ask_all(batched_llm(store), 3))
    assert [c.text for c in done] == ["said q0", "said q1", "said q2"]
    assert [c.cost_usd for c in done] == [pytest.approx(HALF)] * 3
    stats = batching.stats()
    assert (stats["batches"]["created"], stats["batches"]["requests"], stats["batches"]["answered"]) == (1, 3, 3)
    assert stats["total_requests"] == 3  # the batch's own three, nothing sent alone
    rows = ledger(store)
    assert [r["cost_usd"] for r in rows] == [pytest.approx(HALF)] * 3
    assert {json.loads(r["response"])["backend"] for r in rows} == {"openai-batch"}
    [batch] = batches(store)
    assert (batch["status"], batch["n_requests"]) == ("ended", 3)
    assert batch["remote_id"] in stats["batches"]["status"]
    again = asyncio.run(ask_all(batched_llm(store), 3))  # answered from the cache: no second batch
    assert all(c.cached for c in again) and batching.stats()["batches"]["created"] == 1


def test_the_idle_window_sends_a_partial_batch(batching, store, monkeypatch):
    monkeypatch.setenv("THEOREMBENCH_BATCH_MAX_SIZE", "100")
    monkeypatch.setenv("THEOREMBENCH_BATCH_IDLE_S", "0.05")
    done = asyncio.run(ask_all(batched_llm(store), 2))
    assert [c.text for c in done] == ["said q0", "said q1"]
    assert 1 <= batching.stats()["batches"]["created"] <= 2 and batching.stats()["batches"]["answered"] == 2


async def _cancel_once_pending(llm: LLM, store, n: int) -> None:
    """Start n calls; once their batch is recorded pending with the provider's id, cancel them all (a kill)."""
    tasks = [asyncio.ensure_future(ask(llm, i)) for i in range(n)]
    deadline = time.monotonic() + 60
    while not [b for b in batches(store) if b["status"] == "pending" and b["remote_id"]]:
        assert time.monotonic() < deadline, "the batch was never recorded"
        await asyncio.sleep(0.01)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def test_a_run_stopped_while_its_batch_is_pending_takes_the_answers_from_it(batching, store):
    batching.set_script({"default": {"reply": "said {last_user}", "usage": USAGE}, "batch_hold": True})
    asyncio.run(_cancel_once_pending(batched_llm(store), store, 3))
    assert ledger(store) == [] and batching.stats()["total_requests"] == 0
    batching.release_batches()
    done = asyncio.run(ask_all(LLM(store, prices=PriceTable.load()), 3))  # not even --batch: it waits for the batch
    assert [c.text for c in done] == ["said q0", "said q1", "said q2"]
    stats = batching.stats()
    assert stats["batches"]["created"] == 1 and stats["batches"]["answered"] == 3
    assert sorted(stats["prompt_keys_completed"].values()) == [1, 1, 1]  # each request answered once
    assert [r["cost_usd"] for r in ledger(store)] == [pytest.approx(HALF)] * 3
    assert [b["status"] for b in batches(store)] == ["ended"]


def test_a_request_the_batch_failed_is_retried_in_a_new_batch(batching, store, monkeypatch):
    monkeypatch.setenv("THEOREMBENCH_BATCH_IDLE_S", "0.05")  # the retried request goes out alone
    batching.set_script({"default": {"reply": "said {last_user}", "usage": USAGE}, "rules": [
        {"match": "q1", "reply": "said q1", "usage": USAGE, "faults": [{"kind": "500", "times": 1}]},
        {"match": "q2", "reply": "no", "faults": [{"kind": "400", "times": 9}]}]})  # fmt: skip
    done = asyncio.run(ask_all(batched_llm(store), 3))
    assert [done[0].text, done[1].text] == ["said q0", "said q1"] and done[1].attempts == 2
    assert isinstance(done[2], LLMError) and done[2].kind == "bad_request"  # refused: not asked again
    stats = batching.stats()
    assert stats["batches"]["created"] == 2 and stats["batches"]["answered"] == 2
    assert stats["rule_hits"] == {"default": 1, "0": 2, "1": 1}
    rows = ledger(store)
    assert [r["status"] for r in rows].count("ok") == 2 and [r["status"] for r in rows].count("error") == 1


def _left_submitting(store, batching, *, made: bool) -> None:
    """What a run killed between asking for a batch and storing its id leaves: a ``submitting`` batch of q0."""
    spec = resolve_model(MODEL)
    messages = [{"role": "user", "content": "q0"}]
    key = cache_key(spec, messages, GenerateSettings(max_tokens=100), 0, None)
    record_batch(store, "b-killed", provider=spec.provider, endpoint=spec.endpoint, model=spec.name,
                 requests=[("tb-0", key)])  # fmt: skip
    if made:
        import openai

        line = {"custom_id": "tb-0", "method": "POST", "url": "/v1/chat/completions",
                "body": {"model": "m1", "messages": messages, "max_tokens": 100}}  # fmt: skip
        with openai.OpenAI(base_url=batching.base_url, api_key="k", max_retries=0) as client:
            upload = client.files.create(file=("b.jsonl", (json.dumps(line) + "\n").encode()), purpose="batch")
            client.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h",
                                  metadata={"theorembench_batch": "b-killed"})  # fmt: skip


def test_a_batch_made_but_not_stored_by_a_killed_run_is_found_by_its_id(batching, store, monkeypatch):
    monkeypatch.setenv("THEOREMBENCH_BATCH_MAX_SIZE", "1")
    _left_submitting(store, batching, made=True)
    [done] = asyncio.run(ask_all(batched_llm(store), 1))
    assert done.text == "said q0" and done.cost_usd == pytest.approx(HALF)
    assert batching.stats()["batches"]["created"] == 1 and batching.stats()["batches"]["answered"] == 1
    [batch] = batches(store)
    assert batch["id"] == "b-killed" and batch["status"] == "ended" and batch["remote_id"]


def test_a_batch_never_made_is_marked_failed_and_its_request_sent_anew(batching, store, monkeypatch):
    monkeypatch.setenv("THEOREMBENCH_BATCH_MAX_SIZE", "1")
    _left_submitting(store, batching, made=False)
    [done] = asyncio.run(ask_all(batched_llm(store), 1))
    assert done.text == "said q0"
    assert batching.stats()["batches"]["created"] == 1
    assert {b["id"]: b["status"] for b in batches(store)}["b-killed"] == "failed"
    assert sorted(b["status"] for b in batches(store)) == ["ended", "failed"]


def test_anthropic_calls_go_to_message_batches(batching, store, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", batching.anthropic_base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    done = asyncio.run(ask_all(batched_llm(store), 3, "anthropic/claude-sonnet-4-5"))
    assert [c.text for c in done] == ["said q0", "said q1", "said q2"]
    # the built-in price of claude-sonnet-4*: $3 and $15 per million tokens, half in a batch
    assert [c.cost_usd for c in done] == [pytest.approx((10 * 3 + 100 * 15) / 1e6 / 2)] * 3
    stats = batching.stats()
    assert stats["batches"]["created"] == 1 and stats["endpoints"] == {"messages": 3}
    assert [b["provider"] for b in batches(store)] == ["anthropic"]


def test_a_provider_without_a_batch_api_is_sent_as_usual(batching, store, monkeypatch):
    monkeypatch.setenv("VLLM_BASE_URL", batching.base_url)
    done = asyncio.run(ask_all(batched_llm(store), 2, "vllm/m1"))
    assert [c.cost_usd for c in done] == [pytest.approx(FULL)] * 2
    assert batching.stats()["batches"]["created"] == 0 and batches(store) == []
