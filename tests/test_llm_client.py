"""The LLM layer over real HTTP against the loopback fake server."""

from __future__ import annotations

import asyncio

import pytest

from theorembench.llm import LLM, GenerateSettings, LLMError, ModelConfigError, PriceTable, StructuredOutputError
from theorembench.llm.models import resolve_model
from theorembench.store import Store, loads

MSG = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "what is 1+1?"}]
MODEL = "openai-api/fake/m1"


@pytest.fixture(params=["direct", "inspect"])
def backend(request, monkeypatch):
    """Run a test once per backend that can reach an OpenAI-compatible server."""
    monkeypatch.setenv("THEOREMBENCH_BACKEND", request.param)
    return request.param


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "t.db") as s:
        yield s


def run(coro):
    return asyncio.run(coro)


def test_call_is_recorded_with_usage_and_cost(backend, fake_env, store, tmp_path, monkeypatch):
    prices = tmp_path / "prices.toml"
    prices.write_text('[models]\n"openai-api/fake/*" = { input = 2.0, output = 10.0 }\n')
    monkeypatch.setenv("THEOREMBENCH_PRICES", str(prices))
    fake_env.set_script({"default": {"reply": "two", "reasoning": "1 plus 1",
                                     "usage": {"prompt_tokens": 1000, "completion_tokens": 300, "reasoning_tokens": 200}}})
    llm = LLM(store, prices=PriceTable.load())
    c = run(llm.generate(MODEL, MSG, GenerateSettings(max_tokens=500), purpose="unit"))
    assert (c.text, c.cached) == ("two", False)
    assert (c.prompt_tokens, c.completion_tokens, c.reasoning_tokens) == (1000, 300, 200)
    assert c.cost_usd == pytest.approx((1000 * 2.0 + 300 * 10.0) / 1e6)
    row = store.get_call(c.call_id)
    assert row["status"] == "ok" and row["provider"] == "openai-api" and row["purpose"] == "unit"
    assert row["latency_s"] > 0
    assert loads(row["request"])["messages"] == MSG
    body = fake_env.requests[-1]["body"]
    assert body.get("max_tokens", body.get("max_completion_tokens")) == 500


def test_identical_call_is_answered_from_cache(fake_env, store):
    llm = LLM(store)
    first = run(llm.generate(MODEL, MSG))
    again = run(LLM(store).generate(MODEL, MSG))  # a new client, as in a rerun
    assert again.cached and again.call_id == first.call_id and again.text == first.text
    assert fake_env.stats()["completed"] == 1
    # a different sample index or setting is a different call
    run(llm.generate(MODEL, MSG, sample=1))
    run(llm.generate(MODEL, MSG, GenerateSettings(temperature=0.5)))
    assert fake_env.stats()["completed"] == 3
    # transport settings do not change the key
    run(llm.generate(MODEL, MSG, GenerateSettings(max_retries=7, timeout=30, max_connections=3)))
    assert fake_env.stats()["completed"] == 3


def test_retries_are_bounded_and_failure_recorded(backend, fake_env, store):
    fake_env.set_script({"default": {"reply": "x", "faults": [{"kind": "429", "times": 100, "retry_after": 0}]}})
    llm = LLM(store)
    with pytest.raises(LLMError) as info:
        run(llm.generate(MODEL, MSG, GenerateSettings(max_retries=2)))
    assert info.value.kind == "rate_limited" and info.value.attempts == 3
    assert fake_env.stats()["total_requests"] == 3  # 1 + 2 retries, and no SDK-level retries on top
    row = store.get_call(info.value.call_id)
    assert row["status"] == "error" and row["attempts"] == 3
    assert row["error"].count("rate_limited") == 3


@pytest.mark.parametrize("kind", ["429", "500", "503", "malformed", "truncated", "disconnect"])
def test_transient_faults_are_retried_then_succeed(backend, fake_env, store, kind):
    fake_env.set_script({"default": {"reply": "ok", "faults": [{"kind": kind, "times": 2, "retry_after": 0}]}})
    c = run(LLM(store).generate(MODEL, MSG, GenerateSettings(max_retries=3)))
    assert c.text == "ok" and c.attempts == 3
    assert fake_env.stats()["total_requests"] == 3
    assert len(loads(store.get_call(c.call_id)["response"])["failed_attempts"]) == 2


@pytest.mark.parametrize(("kind", "expected"), [("400", "bad_request"), ("401", "auth_error")])
def test_permanent_errors_are_not_retried(backend, fake_env, store, kind, expected):
    fake_env.set_script({"default": {"reply": "x", "faults": [{"kind": kind, "times": 100}]}})
    with pytest.raises(LLMError) as info:
        run(LLM(store).generate(MODEL, MSG, GenerateSettings(max_retries=5)))
    assert info.value.kind == expected and info.value.attempts == 1
    assert fake_env.stats()["total_requests"] == 1


def test_timeout_is_retried_and_bounded(backend, fake_env, store):
    fake_env.set_script({"default": {"reply": "x", "faults": [{"kind": "timeout", "times": 100}]}})
    with pytest.raises(LLMError) as info:
        run(LLM(store).generate(MODEL, MSG, GenerateSettings(max_retries=1, timeout=1)))
    assert info.value.kind == "timeout" and info.value.attempts == 2
    assert fake_env.stats()["total_requests"] == 2


def test_concurrency_limit_is_respected(backend, fake_env, store):
    fake_env.set_script({"default": {"reply": "x", "delay_ms": 100}})
    llm = LLM(store)
    settings = GenerateSettings(max_connections=3)

    async def many():
        return await asyncio.gather(*(llm.generate(MODEL, [{"role": "user", "content": f"q{i}"}], settings)
                                      for i in range(12)))  # fmt: skip

    run(many())
    stats = fake_env.stats()
    assert stats["completed"] == 12
    assert stats["max_in_flight"] == 3


def test_structured_output_with_repair(backend, fake_env, store):
    schema = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"],
              "additionalProperties": False}  # fmt: skip
    fake_env.set_script({"rules": [{"match": "could not be used", "reply": '```json\n{"answer": 2}\n```'}],
                         "default": {"reply": '{"answer": "two"}'}})  # fmt: skip
    obj, completions = run(LLM(store).generate_json(MODEL, MSG, schema))
    assert obj == {"answer": 2}
    assert len(completions) == 2
    repair_body = fake_env.requests[-1]["body"]
    assert "answer" in repair_body["messages"][-1]["content"]  # the validation error is quoted back
    assert repair_body["response_format"]["type"] == "json_schema"


def test_structured_output_gives_up_after_bounded_repairs(fake_env, store):
    fake_env.set_script({"default": {"reply": "no json here"}})
    with pytest.raises(StructuredOutputError) as info:
        run(LLM(store).generate_json(MODEL, MSG, {"type": "object"}, repair_attempts=2))
    assert len(info.value.call_ids) == 3
    assert fake_env.stats()["completed"] == 3


def test_anthropic_provider_reasoning_and_usage(fake, store, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    fake.set_script({"default": {"reply": "\\boxed{B}", "reasoning": "think think",
                                 "usage": {"prompt_tokens": 40, "completion_tokens": 12}}})  # fmt: skip
    spec = resolve_model("anthropic/claude-test", base_url=fake.anthropic_base_url)
    c = run(LLM(store).generate(spec, MSG, GenerateSettings(max_tokens=100)))
    assert c.text == "\\boxed{B}"
    assert c.reasoning == "think think"
    assert (c.prompt_tokens, c.completion_tokens) == (40, 12)
    assert fake.stats()["endpoints"].get("messages") == 1 or "messages" in str(fake.stats()["endpoints"])


def test_anthropic_rate_limit_bounded(fake, store, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    fake.set_script({"default": {"reply": "x", "faults": [{"kind": "429", "times": 100, "retry_after": 0}]}})
    spec = resolve_model("anthropic/claude-test", base_url=fake.anthropic_base_url)
    with pytest.raises(LLMError) as info:
        run(LLM(store).generate(spec, MSG, GenerateSettings(max_tokens=10, max_retries=1)))
    assert info.value.kind == "rate_limited"
    assert fake.stats()["total_requests"] == 2


@pytest.mark.parametrize(
    ("name", "env", "needle"),
    [
        ("gpt-5", {}, "has no provider"),
        ("acme/model", {}, "unknown model provider 'acme'"),
        ("openai/gpt-5", {}, "OPENAI_API_KEY"),
        ("anthropic/claude-x", {}, "ANTHROPIC_API_KEY"),
        ("openai-api/myserver/m", {}, "MYSERVER_BASE_URL"),
        ("openai-api/myserver/m", {"MYSERVER_BASE_URL": "http://127.0.0.1:1/v1"}, "MYSERVER_API_KEY"),
        ("openai-api/m", {}, "openai-api/<service>/<model>"),
        ("local/llama-70b", {}, "unknown local model"),
        ("vllm/qwen", {}, "VLLM_BASE_URL"),
    ],
)
def test_model_names_checked_before_work(monkeypatch, name, env, needle):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    with pytest.raises(ModelConfigError, match=needle.replace("(", r"\(").replace("<", "<")):
        resolve_model(name)


def test_model_resolution_happy_paths(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    assert resolve_model("openai/gpt-5").api_key == "k"
    assert resolve_model("local/smollm2").is_local
    assert resolve_model("local/smollm2").inspect_name == "openai-api/local/smollm2"
    spec = resolve_model("openai-api/vllm-box/qwen", base_url="http://127.0.0.1:9/v1", api_key="x")
    assert (spec.provider, spec.model) == ("openai-api", "qwen")


def test_backend_choice():
    from theorembench.llm.backends import choose_backend

    assert choose_backend("openai-api") == "direct"
    assert choose_backend("local") == "direct"
    assert choose_backend("anthropic") == "inspect"
    assert choose_backend("openai-api", "inspect") == "inspect"
    with pytest.raises(ValueError, match="OpenAI-compatible"):
        choose_backend("anthropic", "direct")
    with pytest.raises(ValueError, match="unknown backend"):
        choose_backend("openai", "turbo")


@pytest.mark.parametrize(("name", "api"), [("google/gemini-2.5-pro", "GoogleGenAIAPI"),
                                           ("openai/gpt-5", "OpenAIAPI"),
                                           ("anthropic/claude-sonnet-4-5", "AnthropicAPI")])
def test_hosted_providers_are_available_offline(name, api):
    """The provider SDKs are installed and Inspect builds their clients (no call is made)."""
    from theorembench.llm.backends.inspect_backend import InspectBackend

    provider = name.split("/")[0]
    backend = InspectBackend(name, provider, None, "test-key")
    assert type(backend.model.api).__name__ == api


def test_identical_concurrent_calls_are_made_once(backend, fake_env, store):
    fake_env.set_script({"default": {"reply": "once", "delay_ms": 100}})
    llm = LLM(store)

    async def many():
        return await asyncio.gather(*(llm.generate(MODEL, MSG, GenerateSettings(max_connections=4)) for _ in range(5)))

    results = run(many())
    assert fake_env.stats()["total_requests"] == 1
    assert {r.call_id for r in results} == {results[0].call_id}
    assert sum(r.cached for r in results) == 4


def test_settings_memos_follow_copies():
    s = GenerateSettings(seed=3, temperature=0.5)
    assert s.cache_fields()["seed"] == 3 and s.request_fields()["temperature"] == 0.5
    t = s.model_copy(update={"seed": 4})
    assert t.cache_fields()["seed"] == 4 and t.request_fields()["seed"] == 4 and s.cache_fields()["seed"] == 3


def test_seeded_samples_get_distinct_seeds(backend, fake_env, store):
    llm = LLM(store)
    run(llm.generate(MODEL, MSG, GenerateSettings(seed=10), sample=0))
    run(llm.generate(MODEL, MSG, GenerateSettings(seed=10), sample=2))
    seeds = [r["body"].get("seed") for r in fake_env.requests]
    assert seeds == [10, 12]
