"""IMProofBench harness fidelity (issue 21, items 22 and 23): the paper's wording and tool names, the empty search
index, single-turn with the provider's own tools (Table 2), and the answer of the call that passes a budget.

A scripted fake server over real HTTP, real Inspect AI, the real sandbox and store.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.improof import store  # noqa: F401 - a fixture
from helpers.improof_samples import submit

from theorembench.common.errors import UserError
from theorembench.methods.improof.harness import run_improof_eval
from theorembench.store.papers import PaperRepo
from theorembench.testing.fakellm import prompt_text

MODEL = "openai-api/fake/m"


def usage(out: int) -> dict:
    return {"prompt_tokens": 10, "completion_tokens": out}


def run(store, tmp_path: Path, **kw):
    kw.setdefault("main_tokens", 1000)
    kw.setdefault("sub_tokens", 500)
    return run_improof_eval(store, kw.pop("model", MODEL), tool_timeout_s=60, tool_memory_mb=1024,
                            out_dir=tmp_path / "out", log_dir=tmp_path / "logs", **kw)  # fmt: skip


def stages_of(result) -> list[dict]:
    return result.results["problems"][0]["epochs"][0]["stages"]


def _paper(store) -> None:
    PaperRepo(store).upsert("p1", source="arxiv", arxiv_id="2401.00002", title="Odd numbers",
                            abstract="Sums of odd numbers.", status="extracted")  # fmt: skip


# -- item 22: wording and tool names ---------------------------------------------------------------------------------


def test_paper_wording_offers_app_h_tool_names_and_prompts(store, fake_env, tmp_path: Path):
    _paper(store)
    fake_env.set_script({"rules": [
        {"match": "SUB-TWO", "reply": submit("100")},
        {"match": "SUB-ONE", "reply": submit("9")},
        {"match": "MAIN-Q", "reply": [{"tool_calls": [{"name": "web_search", "arguments": {"query": "odd sums"}}]},
                                      submit("proof")]},
    ]})  # fmt: skip
    result = run(store, tmp_path, tools=("python", "bash", "search"), wording="paper")
    tools = fake_env.requests[0]["tools"]
    assert [t["name"] for t in tools] == ["python", "bash", "web_search", "submit"]
    described = {t["name"]: t["description"] for t in tools}
    assert "Every run starts afresh" in described["python"] and "1 minute" in described["python"]  # 60 s, E.1's note
    assert "local library of mathematical papers" in described["web_search"]  # says what it really searches
    assert "no custom macros" in described["submit"]
    first = prompt_text(fake_env.requests[0]["body"])
    assert "# Background" in first and "`web_search`" in first and "`sage_computation`" not in first
    assert "1,000 tokens" in first and "500 tokens" in first
    assert "Odd numbers (arXiv:2401.00002)" in prompt_text(fake_env.requests[1]["body"])  # the tool ran
    note = prompt_text(fake_env.requests[1]["body"])  # the paper's status note after a turn without submit
    assert "next stage only after you use 'submit'" in note and " of 1,000 tokens used for this stage." in note
    assert "Well done on the previous part!" in prompt_text(fake_env.requests[2]["body"])
    assert stages_of(result)[0]["tool_calls"] == {"submit": 1, "web_search": 1}
    assert result.results["settings"]["wording"] == "paper"


def test_sage_is_sage_computation_in_the_paper_wording(monkeypatch: pytest.MonkeyPatch):
    from inspect_ai.tool import ToolDef

    from theorembench.methods.improof import agent_tools, config
    from theorembench.methods.improof.agent_tools import build_tools, offered_names
    from theorembench.methods.improof.config import HarnessSettings

    for module in (agent_tools, config):
        monkeypatch.setattr(module, "tool_runs_inside", lambda name: name == "sage")
    settings = HarnessSettings.from_args(mode="agentic", tools="python,sage", wording="paper")
    tools = build_tools(settings, search_index=None, model_provider="openai-api")
    assert [ToolDef(t).name for t in tools] == ["python", "sage_computation", "submit"]
    assert "preparser" in ToolDef(tools[1]).description
    assert offered_names(settings) == ["python", "sage_computation"]
    ours = HarnessSettings.from_args(mode="agentic", tools="python,sage")
    assert [ToolDef(t).name for t in build_tools(ours, search_index=None, model_provider="x")] == ["python", "sage",
                                                                                                 "submit"]  # fmt: skip


EMPTY = ("the store holds no papers, so the search tool's local paper index is empty (IMProofBench's problems are "
         "not papers)")
FIX = "add papers (theorembench papers add or fetch) or give a hosted search provider"


def test_an_empty_paper_index_leaves_search_out_or_says_so_when_asked_for(store, fake_env, tmp_path: Path):
    # the store holds the odd-sums problem only: no paper, so the local index is empty
    fake_env.set_script({"rules": [
        {"match": "SUB-TWO", "reply": submit("100")},
        {"match": "SUB-ONE", "reply": submit("9")},
        {"match": "MAIN-Q", "reply": submit("proof")},
    ]})  # fmt: skip
    result = run(store, tmp_path)  # the default tools
    assert "search" not in [t["name"] for t in fake_env.requests[0]["tools"]]
    assert "`search`" not in prompt_text(fake_env.requests[0]["body"])
    assert result.results["notes"] == [f"search tool left out: {EMPTY}; {FIX}"]
    assert "search" not in result.results["settings"]["tools"]
    fake_env.reset()
    asked = run(store, tmp_path, tools=("python", "search"))  # named: offered, and the note says it finds nothing
    assert [t["name"] for t in fake_env.requests[0]["tools"]] == ["python", "search", "submit"]
    assert asked.results["notes"] == [f"search tool offered as asked, but {EMPTY}: every search finds nothing; {FIX}"]


def test_single_turn_with_the_providers_own_tools(store, fake_env, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Table 2: GPT-5 single-turn with the provider's web search and code interpreter, through the Responses API."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_env.base_url)
    fake_env.set_script({"rules": [
        {"match": "SUB-TWO", "reply": "\\boxed{100}"},
        {"match": "SUB-ONE", "reply": "\\boxed{9}"},
        {"match": "MAIN-Q", "reply": "A proof."},
    ]})  # fmt: skip
    result = run(store, tmp_path, model="openai/gpt-5-2025-08-07", mode="single-turn",
                 hosted_tools=("web_search", "code_execution"))  # fmt: skip
    assert len(fake_env.requests) == 3 and {r["endpoint"] for r in fake_env.requests} == {"responses"}
    for r in fake_env.requests:
        kinds = sorted(t.get("type") for t in r["body"]["tools"])
        assert kinds == ["code_interpreter", "web_search"], json.dumps(r["body"]["tools"])
    assert result.results["problems"][0]["epochs"][0]["weighted_score"] == 1.0
    with pytest.raises(UserError, match="hosted tool web_search: Inspect has the provider's own web_search only"):
        run(store, tmp_path, mode="single-turn", hosted_tools="web_search")  # an OpenAI-compatible server: none
    with pytest.raises(UserError, match="hosted_tools: the provider's own tools are for single-turn mode"):
        run(store, tmp_path, model="openai/gpt-5", tools=(), hosted_tools="web_search")


# -- item 23: the answer in the call that passes the budget ------------------------------------------------------------

OVER = {"rules": [
    {"match": "SUB-TWO", "reply": submit("100"), "usage": usage(5)},
    {"match": "SUB-ONE", "reply": submit("9"), "usage": usage(5)},
    # 100 output tokens a turn against a main budget of 150: the second call passes it, and it answers
    {"match": "MAIN-Q", "usage": usage(100), "reply": ["thinking aloud", {"tool_calls": [
        {"name": "python", "arguments": {"code": "print('RAN-AFTER-BUDGET')"}},
        {"name": "submit", "arguments": {"answer": "PAID-PROOF"}}]}]},
]}  # fmt: skip


def test_a_paid_answer_past_the_budget_is_kept_and_marked(store, fake_env, tmp_path: Path):
    fake_env.set_script(OVER)
    result = run(store, tmp_path, tools=("python",), main_tokens=150)
    main = stages_of(result)[0]
    assert (main["outcome"], main["over_budget"], main["output_tokens"], main["turns"]) == ("submitted", True, 200, 2)
    epoch = result.results["problems"][0]["epochs"][0]
    assert epoch["main_answer"] == "PAID-PROOF" and epoch["weighted_score"] == 1.0
    later = json.dumps(fake_env.requests[2]["body"])  # subquestion 1 sees the registered answer ...
    assert "PAID-PROOF" in later and "RAN-AFTER-BUDGET" not in later  # ... and only the call's submit
    tool_results = [m for m in fake_env.requests[2]["body"]["messages"] if m["role"] == "tool"]
    assert len(tool_results) == 1 and "registered" in json.dumps(tool_results[0])  # the python call never ran
    assert result.results["usage"]["over_budget_answers"] == 1


def test_discarding_a_paid_answer_past_the_budget_keeps_it_in_the_record(store, fake_env, tmp_path: Path):
    fake_env.set_script(OVER)
    result = run(store, tmp_path, tools=("python",), main_tokens=150, over_budget_answer="discard")
    main = stages_of(result)[0]
    assert (main["outcome"], main["over_budget"], main["discarded_answer"]) == ("limit_exceeded", False, "PAID-PROOF")
    assert main["output_tokens"] == 200  # the discarded call was paid and counts
    assert result.results["problems"][0]["epochs"][0]["main_answer"] is None
    assert "PAID-PROOF" not in json.dumps(fake_env.requests[2]["body"])
    assert result.results["usage"]["discarded_answers"] == 1
    again = run(store, tmp_path, tools=("python",), main_tokens=150, over_budget_answer="discard")
    assert stages_of(again)[0]["discarded_answer"] == "PAID-PROOF"  # replayed from the stored stage end
