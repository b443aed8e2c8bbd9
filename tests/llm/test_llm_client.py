"""The LLM layer over real HTTP against the loopback fake server."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import ValidationError

from theorembench.llm import LLM, GenerateSettings, LLMError, ModelConfigError, PriceTable, StructuredOutputError
from theorembench.llm.models import resolve_model
from theorembench.store import loads
from theorembench.testing.fakellm import FakeLLMServer

MSG = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "what is 1+1?"}]
MODEL = "openai-api/fake/m1"


@pytest.fixture(params=["direct", "inspect"])
def backend(request, monkeypatch):
    """Run a test once per backend that can reach an OpenAI-compatible server."""
    monkeypatch.setenv("THEOREMBENCH_BACKEND", request.param)
    return request.param


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
    # the server holds requests until three are held together: the batches of three can only
    # be answered if the client keeps three in flight, and max_in_flight shows it never sends a fourth
    fake_env.set_script({"barrier": 3, "default": {"reply": "x"}})
    llm = LLM(store)
    settings = GenerateSettings(max_connections=3, timeout=30, max_retries=0)

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


async def _gather_while_held(server, calls, held=1):
    """Start the calls, wait (off the loop) until the server holds ``held`` requests, then let them go."""
    tasks = [asyncio.ensure_future(c) for c in calls]
    await asyncio.to_thread(server.wait_for, lambda s: s["held"] == held)
    server.release()
    return await asyncio.gather(*tasks, return_exceptions=True)


def test_identical_concurrent_calls_are_made_once(backend, fake_env, store):
    fake_env.set_script({"max_responses": 0, "default": {"reply": "once"}})  # hold the first request
    llm = LLM(store)
    results = run(_gather_while_held(fake_env, [llm.generate(MODEL, MSG) for _ in range(5)]))
    assert fake_env.stats()["total_requests"] == 1
    assert {r.call_id for r in results} == {results[0].call_id}
    assert sum(r.cached for r in results) == 4


def test_duplicates_of_a_failed_call_share_its_failure(backend, fake_env, store):
    fake_env.set_script({"max_responses": 0,
                         "default": {"reply": "x", "faults": [{"kind": "429", "times": 100, "retry_after": 0}]}})  # fmt: skip
    llm = LLM(store)
    calls = [llm.generate(MODEL, MSG, GenerateSettings(max_retries=2)) for _ in range(5)]
    outcomes = run(_gather_while_held(fake_env, calls))
    assert all(isinstance(o, LLMError) and o.kind == "rate_limited" for o in outcomes)
    assert fake_env.stats()["total_requests"] == 3  # the leading call's 1 + 2 retries, nothing from the waiters
    assert len({o.call_id for o in outcomes}) == 1 and outcomes[0].call_id is not None
    assert store.usage()["calls"] == 1
    assert llm._inflight == {}


def test_settings_are_immutable():
    s = GenerateSettings(temperature=0.5)
    with pytest.raises(ValidationError):
        s.temperature = 0.9
    with pytest.raises(ValidationError):
        s.max_retries = 1
    assert s.temperature == 0.5 and s.model_copy(update={"temperature": 0.9}).temperature == 0.9


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


SCHEMA = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"],
          "additionalProperties": False}  # fmt: skip


def test_failed_structured_step_asks_again_on_rerun(fake_env, store):
    fake_env.set_script({"default": {"reply": '{"answer": "two"}', "usage": {"prompt_tokens": 10, "completion_tokens": 4}}})
    with pytest.raises(StructuredOutputError) as info:
        run(LLM(store).generate_json(MODEL, MSG, SCHEMA, repair_attempts=1))
    invalid_ids = info.value.call_ids
    assert len(invalid_ids) == 2 and fake_env.stats()["total_requests"] == 2
    # the rerun (a new client, as in a new process) asks the model again, and this time gets a usable reply
    fake_env.set_script({"default": {"reply": '{"answer": 2}'}})
    obj, completions = run(LLM(store).generate_json(MODEL, MSG, SCHEMA, repair_attempts=1))
    assert obj == {"answer": 2} and not completions[0].cached
    assert fake_env.stats()["total_requests"] == 3
    # the invalid replies stay in the ledger with their tokens, marked invalid with the reason
    for call_id in invalid_ids:
        row = store.get_call(call_id)
        assert row["status"] == "invalid" and "schema" in row["error"]
        assert (row["prompt_tokens"], row["completion_tokens"]) == (10, 4)
    usage = store.usage()
    assert (usage["calls"], usage["ok"], usage["invalid"], usage["failed"]) == (3, 1, 2, 0)
    # a valid answer is cached as before
    run(LLM(store).generate_json(MODEL, MSG, SCHEMA, repair_attempts=1))
    assert fake_env.stats()["total_requests"] == 3


def test_invalid_repair_reply_is_asked_again(fake_env, store):
    fake_env.set_script({"rules": [{"match": "could not be used", "reply": "still not json"}],
                         "default": {"reply": "not json"}})  # fmt: skip
    with pytest.raises(StructuredOutputError):
        run(LLM(store).generate_json(MODEL, MSG, SCHEMA, repair_attempts=1))
    # same first reply on the rerun, but the repair turn now gives valid JSON: both turns are asked again
    fake_env.set_script({"rules": [{"match": "could not be used", "reply": '{"answer": 3}'}],
                         "default": {"reply": "not json"}})  # fmt: skip
    obj, completions = run(LLM(store).generate_json(MODEL, MSG, SCHEMA, repair_attempts=1))
    assert obj == {"answer": 3} and [c.cached for c in completions] == [False, False]
    assert fake_env.stats()["total_requests"] == 4


def test_two_servers_behind_one_model_name_never_share_answers(fake_env, store, monkeypatch):
    assert run(LLM(store).generate(MODEL, MSG)).text == "\\boxed{A}"
    with FakeLLMServer({"default": {"reply": "from the other server"}}) as other:
        monkeypatch.setenv("FAKE_BASE_URL", other.base_url)
        c = run(LLM(store).generate(MODEL, MSG))
        assert (c.text, c.cached) == ("from the other server", False)
        assert other.stats()["total_requests"] == 1
    # back on the first server: its own answer, from the cache
    monkeypatch.setenv("FAKE_BASE_URL", fake_env.base_url)
    c = run(LLM(store).generate(MODEL, MSG))
    assert (c.text, c.cached) == ("\\boxed{A}", True)
    # the same server with a revision tag the user gives is asked again
    monkeypatch.setenv("THEOREMBENCH_MODEL_REVISION", "v2")
    c = run(LLM(store).generate(MODEL, MSG))
    assert not c.cached and fake_env.stats()["total_requests"] == 2


def test_local_server_starts_off_the_event_loop_and_once(fake_env, store):
    import threading

    loop_ran = threading.Event()
    starts: list[str] = []
    waited: list[bool] = []

    async def main():
        loop = asyncio.get_running_loop()
        in_start = asyncio.Event()

        def start_local(model: str) -> str:
            # blocks until a coroutine on the event loop has run while this start is under way;
            # if it ran on the loop itself nothing else could run, and the wait ends unmet
            loop.call_soon_threadsafe(in_start.set)
            waited.append(loop_ran.wait(timeout=10))
            starts.append(model)
            return fake_env.base_url

        async def other_work():
            await in_start.wait()
            loop_ran.set()

        llm = LLM(store, start_local=start_local)
        return await asyncio.gather(llm.generate("local/smollm2", MSG), llm.generate("local/smollm2", MSG),
                                    other_work())  # fmt: skip

    first, second, _ = run(main())
    assert waited == [True]
    assert starts == ["smollm2"]  # one start for both calls
    assert first.text == second.text == "\\boxed{A}"


def test_the_embedded_server_starts_only_on_a_call_the_cache_does_not_hold(fake_env, store):
    starts: list[str] = []

    def start_local(model: str) -> str:
        starts.append(model)
        return fake_env.base_url

    first = run(LLM(store, start_local=start_local).generate("local/smollm2", MSG))
    assert starts == ["smollm2"] and not first.cached
    # a new client (a rerun) finds the answer stored: no server is started for it
    again = run(LLM(store, start_local=start_local).generate("local/smollm2", MSG))
    assert again.cached and again.text == first.text and starts == ["smollm2"]
    # another question is a cache miss: now the server starts
    run(LLM(store, start_local=start_local).generate("local/smollm2", [{"role": "user", "content": "other"}]))
    assert starts == ["smollm2", "smollm2"] and fake_env.stats()["total_requests"] == 2
