"""IMProofBench fidelity to the paper's models (issue 21, items 19 and 20): Table 1's ids, tiers and parameters.

Model calls go to the project's fake server over real HTTP; every expected value is read off Table 1 by hand.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from helpers.improof import store  # noqa: F401 - a fixture
from helpers.improof_samples import submit

from theorembench.common.errors import InvalidSetting, UserError
from theorembench.methods.improof.harness import run_improof_eval
from theorembench.methods.improof.model_tiers import generation_params, match_model, tier_of

# (the id a user types, Table 1's endpoint, tier, how it matched), read off Table 1 (App. D)
IDS = [
    ("openai/gpt-5-2025-08-07", "gpt-5", 1, "dated"),
    ("openai/gpt-5", "gpt-5", 1, "endpoint"),
    ("anthropic/claude-opus-4-1", "claude-opus-4-1-20250805", 1, "alias"),
    ("anthropic/claude-opus-4-1-20250805", "claude-opus-4-1-20250805", 1, "endpoint"),
    ("grok/grok-4", "grok-4-0709", 1, "alias"),
    ("grok/grok-4-latest", "grok-4-0709", 1, "alias"),
    ("google/gemini-2.5-pro", "gemini-2.5-pro", 1, "endpoint"),
    ("openai/o4-mini", "o4-mini-2025-04-16", 3, "alias"),
    ("anthropic/claude-sonnet-4-0", "claude-sonnet-4-20250514", 3, "alias"),
    ("openai/gpt-4o-2024-11-20", "gpt-4o-2024-11-20", 3, "endpoint"),
    ("google/gemini-2.5-flash", "gemini-2.5-flash", 3, "endpoint"),
    ("grok/grok-3", "grok-3", 3, "endpoint"),
    ("openai/o3", "o3-2025-04-16", 4, "alias"),
    ("openrouter/x-ai/grok-4-0709", "grok-4-0709", 1, "endpoint"),
    ("vertex/claude-opus-4-1@20250805", "claude-opus-4-1-20250805", 1, "endpoint"),
]


@pytest.mark.parametrize(("model", "endpoint", "tier", "how"), IDS)
def test_dated_ids_and_aliases_find_their_table1_entry(model, endpoint, tier, how):
    found = match_model(model)
    assert found is not None and (found.entry.endpoint, found.entry.tier, found.how) == (endpoint, tier, how)
    assert tier_of(model) == tier


def test_table1_parameters_come_with_the_common_ids():
    assert generation_params("openai/gpt-5-2025-08-07") == {"reasoning_effort": "high", "reasoning_summary": "auto"}
    assert generation_params("anthropic/claude-opus-4-1") == {"cache_prompt": "auto", "max_tokens": 32000,
                                                              "reasoning_tokens": 31000}  # fmt: skip
    assert generation_params("google/gemini-2.5-pro") == {"reasoning_tokens": 32768}
    assert generation_params("grok/grok-4") == {}  # Table 1 gives none for Grok 4
    for other in ("openai/gpt-5-mini", "grok/grok-4-fast", "openai/o3-mini", "anthropic/claude-opus-4", "local/smollm2"):
        assert match_model(other) is None and tier_of(other) is None
    # another dated snapshot of a listed model: same family, but not the model the paper ran
    other = match_model("openai/gpt-4o-2024-08-06")
    assert other is not None and other.how == "other snapshot" and not other.paper_model


def _script(fake_env) -> None:
    fake_env.set_script({"rules": [
        {"match": "SUB-TWO", "reply": "\\boxed{100}"},
        {"match": "SUB-ONE", "reply": "\\boxed{9}"},
        {"match": "MAIN-Q", "reply": "A proof."},
    ]})  # fmt: skip


def test_a_dated_gpt5_id_runs_with_high_reasoning_effort(store, fake_env, tmp_path: Path):
    _script(fake_env)
    result = run_improof_eval(store, "openai-api/fake/gpt-5-2025-08-07", mode="single-turn", out_dir=tmp_path / "o",
                              log_dir=tmp_path / "logs", paper_settings=True)  # fmt: skip
    assert [r["body"].get("reasoning_effort") for r in fake_env.requests] == ["high"] * 3
    m = result.results["model"]
    assert (m["tier"], m["grading_priority"], m["table1"]) == (1, 1, {"name": "GPT-5", "endpoint": "gpt-5",
                                                                       "match": "dated"})  # fmt: skip
    assert result.results["paper_settings"] is True


def test_claude_opus_alias_runs_with_the_thinking_budget(store, fake_env, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch):  # fmt: skip
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_env.anthropic_base_url)
    fake_env.set_script({"rules": [
        {"match": "SUB-TWO", "reply": submit("100")},
        {"match": "SUB-ONE", "reply": submit("9")},
        {"match": "MAIN-Q", "reply": submit("proof")},
    ]})  # fmt: skip
    result = run_improof_eval(store, "anthropic/claude-opus-4-1", tools=(), out_dir=tmp_path / "o",
                              log_dir=tmp_path / "logs", paper_settings=True)  # fmt: skip
    bodies = [r["body"] for r in fake_env.requests]
    assert len(bodies) == 3
    # Table 1: max_tokens=32000 reasoning_tokens=31000 (Inspect sends the thinking budget as budget_tokens)
    assert all(b["max_tokens"] == 32000 and b["thinking"]["budget_tokens"] == 31000 for b in bodies)
    assert result.results["model"]["tier"] == 1 and result.results["problems"][0]["epochs"][0]["weighted_score"] == 1.0


def test_paper_settings_refuse_an_unlisted_model_and_changed_parameters(store, fake_env, tmp_path: Path):
    kw = {"mode": "single-turn", "out_dir": tmp_path / "o", "log_dir": tmp_path / "logs", "paper_settings": True}
    with pytest.raises(InvalidSetting, match="Table 1 does not list it"):
        run_improof_eval(store, "openai-api/fake/gpt-5-mini", **kw)
    with pytest.raises(InvalidSetting, match="another snapshot of GPT-4o"):
        run_improof_eval(store, "openai-api/fake/gpt-4o-2024-08-06", **kw)
    with pytest.raises(InvalidSetting, match="reasoning_effort = 'low' changes Table 1's 'high'"):
        run_improof_eval(store, "openai-api/fake/gpt-5", generate={"reasoning_effort": "low"}, **kw)
    with pytest.raises(InvalidSetting, match="main_tokens = 1000 is not the paper's 300000"):
        run_improof_eval(store, "openai-api/fake/gpt-5", main_tokens=1000, **kw)
    assert fake_env.requests == [] and store.runs("improof.eval") == []  # refused before any work


@pytest.mark.skipif(importlib.util.find_spec("xai_sdk") is not None, reason="xai_sdk is installed here")
def test_grok_without_its_sdk_is_refused_before_any_work(store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("XAI_API_KEY", "test-key")
    with pytest.raises(UserError, match=r"needs the xai_sdk package.*theorembench\[grok\]"):
        run_improof_eval(store, "grok/grok-4", mode="single-turn", out_dir=tmp_path / "o", log_dir=tmp_path / "l",
                         paper_settings=True)  # fmt: skip
    assert store.runs("improof.eval") == []


def test_the_grok_extra_names_the_sdk():
    import tomllib

    from helpers.paths import REPO

    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(req.startswith("xai-sdk") for req in extras["grok"])


def _usage(**kw):
    from inspect_ai.model import ModelUsage

    return ModelUsage(**kw)


def test_reasoning_counted_apart_is_added_to_output_once():
    from inspect_ai.model import ModelOutput

    from theorembench.llm.inspect_provider import reasoning_in_output
    from theorembench.methods.improof.budget import StageRecord, usage_of

    # xAI's shape: prompt 40 (30 new + 10 cached), completion 9 without the 94 reasoning tokens, total 40+9+94 = 143
    xai = _usage(input_tokens=30, input_tokens_cache_read=10, output_tokens=9, reasoning_tokens=94, total_tokens=143)
    folded = reasoning_in_output(xai, "openai-api")
    assert (folded.output_tokens, folded.total_tokens) == (103, 143)  # 9 + 94
    assert reasoning_in_output(folded, "grok") == folded  # twice changes nothing
    # Inspect's grok provider without a total: reasoning is apart by the provider's rule
    grok = reasoning_in_output(_usage(input_tokens=40, output_tokens=9, reasoning_tokens=94, total_tokens=0), "grok")
    assert (grok.output_tokens, grok.total_tokens) == (103, 143)
    # OpenAI's shape: completion 103 already holds the 94 reasoning tokens, total 40+103 = 143: unchanged
    openai = _usage(input_tokens=40, output_tokens=103, reasoning_tokens=94, total_tokens=143)
    assert reasoning_in_output(openai, "openai") == openai
    # the budget meters the folded count: 103 of a 100-token budget is past it
    record = StageRecord(stage=0, budget=100)
    record.add(*usage_of(ModelOutput(model="m", choices=[], usage=xai)))
    assert (record.output_tokens, record.reasoning_tokens, record.remaining) == (103, 94, -3)
