"""The cost cap and the forecast in the LLM layer, over real HTTP against the loopback fake server."""

from __future__ import annotations

import asyncio

import pytest

from theorembench.llm import LLM, GenerateSettings, LLMError, PriceTable
from theorembench.llm.forecast import Forecast, minimal_instance
from theorembench.llm.spending import CostCapReached, Spending, UnpricedModel, spending
from theorembench.llm.tokens import count_prompt

MODEL = "openai-api/fake/m1"
# $1000 per million input tokens, $2000 per million output tokens: a call of 10 + 100 tokens costs $0.21
PRICES = '[models]\n"openai-api/fake/*" = { input = 1000.0, output = 2000.0 }\n'
CALL_COST = (10 * 1000 + 100 * 2000) / 1e6


@pytest.fixture
def priced(fake_env, tmp_path, monkeypatch):
    (tmp_path / "prices.toml").write_text(PRICES)
    monkeypatch.setenv("THEOREMBENCH_PRICES", str(tmp_path / "prices.toml"))
    fake_env.set_script({"default": {"reply": "fine", "usage": {"prompt_tokens": 10, "completion_tokens": 100}}})
    return fake_env


def ask(llm: LLM, i: int, max_tokens: int | None = 100):
    return llm.generate(MODEL, [{"role": "user", "content": f"q{i}"}], GenerateSettings(max_tokens=max_tokens),
                        purpose="unit.stage")


async def ask_all(llm: LLM, n: int) -> list:
    return await asyncio.gather(*(ask(llm, i) for i in range(n)), return_exceptions=True)


def test_the_cap_stops_new_calls_within_one_call_of_it(priced, store):
    policy = Spending(max_cost=1.0)
    with spending(policy):
        llm = LLM(store, prices=PriceTable.load())
    outcomes = asyncio.run(ask_all(llm, 20))
    made = [o for o in outcomes if not isinstance(o, BaseException)]
    refused = [o for o in outcomes if isinstance(o, CostCapReached)]
    assert len(made) + len(refused) == 20 and refused
    assert all(o.kind == "cost_cap" and not o.final for o in refused)  # transient: the work stays pending
    spent = sum(c.cost_usd for c in made)
    assert spent == pytest.approx(len(made) * CALL_COST)
    assert spent <= 1.0 and 1.0 - spent < 2 * CALL_COST  # stopped within one call (as held) of the cap
    assert priced.stats()["completed"] == len(made)  # no refused call reached the server
    assert store.usage()["calls"] == len(made)  # nor the ledger
    assert policy.cap_reached and policy.calls_refused == len(refused)
    assert policy.spent == pytest.approx(spent) and policy.reserved == pytest.approx(0.0)


def test_a_rerun_with_a_higher_cap_resumes_without_paying_twice(priced, store):
    with spending(Spending(max_cost=1.0)):
        first = [o for o in asyncio.run(ask_all(LLM(store), 10)) if not isinstance(o, BaseException)]
    with spending(Spending(max_cost=5.0)) as policy:
        again = asyncio.run(ask_all(LLM(store), 10))
    assert all(not isinstance(o, BaseException) for o in again)
    assert sum(o.cached for o in again) == len(first)  # the calls made before are answered from the store
    assert priced.stats()["completed"] == 10  # every request was sent once over both runs
    assert policy.spent == pytest.approx((10 - len(first)) * CALL_COST)


def test_a_cap_on_an_unpriced_model_is_refused_before_any_request(fake_env, store):
    with spending(Spending(max_cost=1.0)):
        llm = LLM(store)
    with pytest.raises(UnpricedModel, match="price table"):
        asyncio.run(ask(llm, 0))
    assert fake_env.stats()["completed"] == 0


def test_a_forecast_calls_no_model_and_counts_the_cache_as_free(priced, store):
    asyncio.run(ask(LLM(store), 0))  # one call made before: its answer is in the store
    assert priced.stats()["completed"] == 1
    forecast = Forecast(prices=PriceTable.load())
    with spending(Spending(forecast=forecast)):
        llm = LLM(store)
    answers = asyncio.run(ask_all(llm, 3))
    assert priced.stats()["completed"] == 1  # nothing more was sent
    assert [a.cached for a in answers] == [True, False, False]
    (row,) = forecast.rows()
    assert (row.stage, row.model, row.calls, row.cached) == ("unit.stage", MODEL, 3, 1)
    # the history of this model and stage (one reply of 100 tokens) says how long the replies run
    assert row.output_from == "history" and row.output_expected == pytest.approx(200)
    # the prompts are estimated here (no tokenizer for an openai-api model): 4 tokens per message + 1 for "q1"
    assert row.input_tokens == 2 * 5 and not row.input_exact
    assert row.cost_expected == pytest.approx(2 * (5 * 1000 + 100 * 2000) / 1e6)
    assert row.cost_low == pytest.approx(2 * (4 * 1000 + 100 * 2000) / 1e6)  # 5 * 0.8 input tokens
    assert row.cost_high == pytest.approx(2 * (6 * 1000 + 100 * 2000) / 1e6)  # 5 * 1.25, rounded


def test_a_forecast_without_history_takes_the_token_cap(priced, store):
    forecast = Forecast(prices=PriceTable.load(), price_factor=0.5)
    with spending(Spending(forecast=forecast, batch=True)):
        llm = LLM(store)
    asyncio.run(ask(llm, 7, max_tokens=400))
    (row,) = forecast.rows()
    assert row.output_from == "cap" and (row.output_low, row.output_expected, row.output_high) == (100, 400, 400)
    assert row.cost_expected == pytest.approx(0.5 * (5 * 1000 + 400 * 2000) / 1e6)  # at the batch price
    assert forecast.totals()["to_make"] == 1 and priced.stats()["completed"] == 0


def test_a_forecast_answers_a_schema_call_with_a_reply_the_schema_accepts(fake_env, store):
    schema = {"type": "object", "required": ["answer", "steps"],
              "properties": {"answer": {"type": "string", "enum": ["A", "B"]},
                             "steps": {"type": "array", "minItems": 1, "items": {"type": "integer"}}}}
    assert minimal_instance(schema) == {"answer": "A", "steps": [0]}
    with spending(Spending(forecast=Forecast())):
        llm = LLM(store)
    value, _ = asyncio.run(llm.generate_json(MODEL, [{"role": "user", "content": "go"}], schema,
                                                       purpose="unit.json"))
    assert value == {"answer": "A", "steps": [0]} and fake_env.stats()["completed"] == 0


def test_prompt_counts_say_when_they_are_estimates():
    n, exact = count_prompt("anthropic", "anthropic/claude-sonnet-4-5",
                            {"messages": [{"role": "user", "content": "x" * 40}]})
    assert (n, exact) == (4 + 10, False)


def test_a_failed_call_under_a_cap_frees_what_it_held(fake_env, tmp_path, monkeypatch, store):
    (tmp_path / "prices.toml").write_text(PRICES)
    monkeypatch.setenv("THEOREMBENCH_PRICES", str(tmp_path / "prices.toml"))
    fake_env.set_script({"default": {"reply": "x", "faults": [{"kind": "500", "times": 100}]}})
    with spending(Spending(max_cost=1.0)) as policy:
        llm = LLM(store)
    with pytest.raises(LLMError) as info:
        asyncio.run(llm.generate(MODEL, [{"role": "user", "content": "q"}], GenerateSettings(max_tokens=100,
                                                                                             max_retries=0)))
    assert info.value.kind != "cost_cap"
    assert policy.reserved == pytest.approx(0.0) and policy.spent == 0.0
