"""The IMProofBench harness end to end: a scripted fake server, real Inspect AI, the real sandbox and store."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest
from helpers.cli import PYTHON, cli_env
from helpers.improof import store  # noqa: F401 - a fixture
from helpers.improof_samples import submit

from theorembench.methods.improof.answers import list_answers
from theorembench.methods.improof.harness import run_improof_eval
from theorembench.methods.improof.search import ensure_index, search
from theorembench.store.papers import PaperRepo
from theorembench.testing.fakellm import prompt_text

MODEL = "openai-api/fake/m"


def usage(out: int, reasoning: int = 0) -> dict:
    return {"prompt_tokens": 10, "completion_tokens": out, "reasoning_tokens": reasoning}


def run(store, tmp_path: Path, **kw):
    kw.setdefault("tools", ("python", "bash"))
    kw.setdefault("main_tokens", 1000)
    kw.setdefault("sub_tokens", 500)
    return run_improof_eval(store, MODEL, tool_timeout_s=60, tool_memory_mb=1024, out_dir=tmp_path / "out",
                            log_dir=tmp_path / "logs", **kw)  # fmt: skip


def texts(server) -> list[str]:
    """What each request sent: its prompt text and, for the model's own tool calls, the whole body."""
    return [prompt_text(r["body"]) + "\n" + json.dumps(r["body"], ensure_ascii=False) for r in server.requests]


def stages_of(result) -> list[dict]:
    return result.results["problems"][0]["epochs"][0]["stages"]


def test_stages_tools_and_answers(store, fake_env, tmp_path: Path):
    code = f"print(open({str(store.path)!r}, 'rb').read(16))"
    fake_env.set_script({"rules": [
        {"match": "SUB-TWO", "reply": submit("100"), "usage": usage(7)},
        {"match": "SUB-ONE", "reply": submit("\\boxed{9}"), "usage": usage(5)},
        {"match": "MAIN-Q", "usage": usage(60, 25), "reply": [
            {"content": "Two things at once.", "tool_calls": [  # parallel calls
                {"name": "python", "arguments": {"code": code}},
                {"name": "bash", "arguments": {"command": "echo made > f.txt && cat f.txt"}}]},
            submit("PROOF-TEXT by induction")]},
    ]})  # fmt: skip
    result = run(store, tmp_path)
    seen = texts(fake_env)
    assert len(seen) == 4
    # the main stage never saw a subquestion; each subquestion came after the previous stage's submission
    assert all("MAIN-Q" in t and "SUB-ONE" not in t and "SUB-TWO" not in t for t in seen[:2])
    assert "SUB-ONE" in seen[2] and "SUB-TWO" not in seen[2] and "PROOF-TEXT" in seen[2]
    assert "SUB-TWO" in seen[3] and "boxed{9}" in seen[3] and "PROOF-TEXT" in seen[3]
    assert [t["name"] for t in fake_env.requests[0]["tools"]] == ["python", "bash", "submit"]
    # the tools ran in the sandbox: the store file is out of reach, the shell wrote into the work folder
    tool_msgs = [m for m in fake_env.requests[1]["body"]["messages"] if m["role"] == "tool"]
    assert len(tool_msgs) == 2
    py, sh = (json.dumps(m["content"]) for m in tool_msgs)
    assert "FileNotFoundError" in py or "PermissionError" in py
    assert "SQLite" not in py and "made" in sh
    assert "Token usage: 60 of 1,000 tokens used for this stage." in seen[1]
    assert [s["outcome"] for s in stages_of(result)] == ["submitted"] * 3
    assert stages_of(result)[0]["tool_calls"] == {"bash": 1, "python": 1, "submit": 1}
    assert [(s["turns"], s["output_tokens"], s["reasoning_tokens"]) for s in stages_of(result)] == [
        (2, 120, 50), (1, 5, 0), (1, 7, 0)]  # fmt: skip
    epoch = result.results["problems"][0]["epochs"][0]
    assert epoch["main_answer"] == "PROOF-TEXT by induction" and epoch["sub_answers"] == ["\\boxed{9}", "100"]
    assert [v["correct"] for v in epoch["verdicts"]] == [True, True] and epoch["weighted_score"] == 1.0
    [stored] = list_answers(store)
    assert (stored["id"], stored["model"], stored["epoch"], stored["mode"]) == (epoch["answer_id"], MODEL, 1, "agentic")
    saved = json.loads(result.path.read_text())
    assert saved["summary"]["mean_weighted_score"]["value"] == 1.0 and saved["model"]["tier"] is None
    assert result.log is not None and result.log.exists()
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(result.log))  # `inspect view` shows the score of every sample
    assert [s.scores["improof_weighted_score"].value for s in log.samples] == [1.0]
    assert log.results.scores[0].metrics["mean"].value == 1.0


def test_budget_cuts_each_stage_at_the_right_turn(store, fake_env, tmp_path: Path):
    # 100 output tokens a turn and never a submit: main budget 250 -> turns 1, 2 stored, turn 3 passes the
    # limit (its output is dropped); subquestion budget 200 -> spent exactly after turn 2, no third call
    fake_env.set_script({"rules": [
        {"match": "SUB-TWO", "reply": ["two-a", "two-b", "two-c"], "usage": usage(100)},
        {"match": "SUB-ONE", "reply": ["one-a", "one-b", "one-c"], "usage": usage(100)},
        {"match": "MAIN-Q", "reply": ["main-a", "main-b", "main-c"], "usage": usage(100, 40)},
    ]})  # fmt: skip
    result = run(store, tmp_path, main_tokens=250, sub_tokens=200)
    seen = texts(fake_env)
    assert [r["rule"] for r in fake_env.requests] == [2, 2, 2, 1, 1, 0, 0]
    assert "Token usage: 100 of 250 tokens" in seen[1] and "Token usage: 200 of 250 tokens" in seen[2]
    assert "main-b" in seen[3] and "main-c" not in seen[3]  # the call past the budget never joined the conversation
    assert "ran out" in seen[3] and "Token usage: 100 of 200 tokens" in seen[4]
    got = [(s["outcome"], s["turns"], s["output_tokens"], s["reasoning_tokens"]) for s in stages_of(result)]
    assert got == [("limit_exceeded", 2, 300, 120), ("limit_exceeded", 2, 200, 0), ("limit_exceeded", 2, 200, 0)]
    epoch = result.results["problems"][0]["epochs"][0]
    assert epoch["sub_answers"] == [None, None] and epoch["weighted_score"] == 0.0


def test_malformed_calls_get_an_error_back_and_too_many_end_the_stage(store, fake_env, tmp_path: Path):
    bad = {"tool_calls": [{"name": "python", "raw_arguments": "{\"code\": print(1)"}]}
    fake_env.set_script({"rules": [
        {"match": "SUB-TWO", "reply": submit("100")},
        {"match": "SUB-ONE", "reply": [bad, submit("9")]},
        {"match": "MAIN-Q", "reply": bad},
    ]})  # fmt: skip
    result = run(store, tmp_path, max_malformed=1)
    seen = texts(fake_env)
    assert [r["rule"] for r in fake_env.requests] == [2, 2, 1, 1, 0]
    assert "Error parsing" in seen[1] and "Error parsing" in seen[3]
    assert "malformed tool calls" in seen[2]  # the next stage says why nothing was registered
    stages = stages_of(result)
    assert [(s["outcome"], s["turns"]) for s in stages] == [("error", 2), ("submitted", 2), ("submitted", 1)]
    assert stages[0]["error"] == "2 turns in a row with a malformed tool call"
    epoch = result.results["problems"][0]["epochs"][0]
    assert epoch["main_answer"] is None and [v["correct"] for v in epoch["verdicts"]] == [True, True]


def test_single_turn_mode_asks_for_boxes_and_extracts_them(store, fake_env, tmp_path: Path):
    fake_env.set_script({"rules": [
        {"match": "SUB-TWO", "reply": "Summing up, \\boxed{101}."},
        {"match": "SUB-ONE", "reply": "1 + 3 + 5, so the answer is \\boxed{9}"},
        {"match": "MAIN-Q", "reply": "By induction on n ..."},
    ]})  # fmt: skip
    result = run(store, tmp_path, mode="single-turn", epochs=2)
    bodies = [r["body"] for r in fake_env.requests]
    assert len(bodies) == 6 and all(not r["tools"] for r in fake_env.requests)
    assert bodies[0]["messages"] == [{"role": "user", "content": "MAIN-Q: prove that the sum of the first $n$ odd "
                                                                 "numbers is $n^2$."}]  # fmt: skip
    firsts = [b for b in bodies if len(b["messages"]) == 3]  # statement, main answer, subquestion 1
    assert len(firsts) == 2 and all("\\boxed{}" in prompt_text(b) and "Subquestion 1:" in prompt_text(b) for b in firsts)
    for epoch in result.results["problems"][0]["epochs"]:
        assert epoch["main_answer"] == "By induction on n ..." and epoch["sub_answers"] == ["9", "101"]
        assert [v["correct"] for v in epoch["verdicts"]] == [True, False]
        assert epoch["weighted_score"] == pytest.approx(1 / 3)
    assert sorted((a["epoch"], a["mode"]) for a in list_answers(store)) == [(1, "single-turn"), (2, "single-turn")]
    assert result.results["summary"]["mean_weighted_score"]["value"] == pytest.approx(1 / 3, abs=1e-4)


def test_a_failed_call_is_not_stored_and_the_next_run_continues_there(store, fake_env, tmp_path: Path):
    fake_env.set_script({"rules": [
        {"match": "SUB-TWO", "reply": submit("100")},
        {"match": "SUB-ONE", "reply": submit("9"), "faults": [{"kind": "500", "times": 1}]},
        {"match": "MAIN-Q", "reply": submit("proof")},
    ]})  # fmt: skip
    first = run(store, tmp_path, max_retries=0)
    assert first.incomplete == 1 and first.detail["answer_ids"] == [] and list_answers(store) == []
    assert [(s["outcome"], s["turns"]) for s in stages_of(first)] == [("submitted", 1), ("error", 0)]
    assert stages_of(first)[1]["error"].startswith("model call failed")
    second = run(store, tmp_path, max_retries=0)
    assert [r["rule"] for r in fake_env.requests] == [2, 1, 1, 0]  # main was not asked again
    assert second.incomplete == 0 and second.run_id == first.run_id
    assert [s["outcome"] for s in stages_of(second)] == ["submitted"] * 3
    epoch = second.results["problems"][0]["epochs"][0]
    assert (epoch["turns_replayed"], epoch["turns_live"]) == (1, 2)


def test_a_call_refused_for_good_is_recorded_as_no_answer_and_never_asked_again(store, fake_env, tmp_path: Path):
    """A 400 ends its stage for good: the answer is recorded (that subquestion unanswered, not correct), so it counts."""
    from theorembench.methods.improof.stats_load import improof_stats

    fake_env.set_script({"rules": [
        {"match": "SUB-TWO", "reply": submit("100")},
        {"match": "SUB-ONE", "faults": [{"kind": "400", "times": 99, "message": "prompt is too long"}]},
        {"match": "MAIN-Q", "reply": submit("proof")},
    ]})  # fmt: skip
    first = run(store, tmp_path, max_retries=0)
    assert first.incomplete == 0 and len(first.detail["answer_ids"]) == 1
    stages = stages_of(first)
    assert [s["outcome"] for s in stages] == ["submitted", "error", "submitted"]
    assert stages[1]["error"].startswith("model call failed for good") and "prompt is too long" in stages[1]["error"]
    epoch = first.results["problems"][0]["epochs"][0]
    # SUB-ONE (1 point) has no answer and is not correct; SUB-TWO (2 points) is right: 2/3
    assert epoch["sub_answers"] == [None, "100"] and epoch["weighted_score"] == pytest.approx(2 / 3)
    m = improof_stats(store).doc["models"][MODEL]["subquestions"]
    assert m["answers"] == 1 and m["score"]["value"] == pytest.approx(2 / 3, abs=1e-4)
    before = len(fake_env.requests)
    again = run(store, tmp_path, max_retries=0)
    assert len(fake_env.requests) == before and again.detail["answer_ids"] == first.detail["answer_ids"]  # final: not asked again


KILL_SCRIPT = {"rules": [
    {"match": "SUB-TWO", "reply": submit("100")},
    {"match": "SUB-ONE", "reply": submit("9")},
    {"match": "MAIN-Q", "reply": [{"tool_calls": [{"name": "python", "arguments": {"code": "print(6 * 7)"}}]},
                                  submit("proof")]},
]}  # fmt: skip


def test_a_killed_run_resumes_without_repeating_a_paid_call(store, fake_env, tmp_path: Path):
    fake_env.set_script({**KILL_SCRIPT, "max_responses": 3})  # main (2 turns) and subquestion 1 answered, then held
    cmd = [PYTHON, "-m", "theorembench.cli", "improof", "eval", "--model", MODEL, "--tools", "python,bash",
           "--main-tokens", "1000", "--sub-tokens", "500", "--out", str(tmp_path / "out"),
           "--log-dir", str(tmp_path / "logs"), "--tool-memory", "1024", "--tool-timeout", "60"]  # fmt: skip
    proc = subprocess.Popen(cmd, env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)  # fmt: skip
    try:
        while proc.poll() is None:  # until the fourth request is held (or the run ended, which fails below)
            try:
                fake_env.wait_for(lambda s: s["held"] == 1, timeout=1)
                break
            except TimeoutError:
                continue
        assert proc.poll() is None, "the run ended before its fourth model call"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    paid = {r["prompt_key"] for r in fake_env.requests if r["outcome"] == "ok"}
    assert len(paid) == 3
    fake_env.set_script(KILL_SCRIPT)
    fake_env.reset()
    result = run(store, tmp_path)
    again = fake_env.requests
    assert len(again) == 1 and "SUB-TWO" in prompt_text(again[0]["body"]) and not paid & {again[0]["prompt_key"]}
    assert "42" in prompt_text(again[0]["body"])  # the python result came back from the store, not a new run
    epoch = result.results["problems"][0]["epochs"][0]
    assert (epoch["turns_replayed"], epoch["turns_live"]) == (3, 1)
    assert [s["outcome"] for s in epoch["stages"]] == ["submitted"] * 3 and epoch["weighted_score"] == 1.0
    assert len(list_answers(store)) == 1


def test_search_tool_reads_the_paper_index_and_it_follows_the_papers(store, fake_env, tmp_path: Path):
    repo = PaperRepo(store)
    repo.upsert("p1", source="arxiv", arxiv_id="2401.00001", title="Stable graphs and moduli of curves",
                abstract="We count stable graphs of genus g.", status="extracted")  # fmt: skip
    index = ensure_index(store)
    assert [h.paper_id for h in search(index, "moduli OR curves \"genus")] == ["p1"]  # FTS syntax is not interpreted
    repo.upsert("p2", source="arxiv", arxiv_id="2401.00002", title="Odd numbers", abstract="Sums of odd numbers.",
                status="extracted")  # fmt: skip
    assert [h.paper_id for h in search(ensure_index(store), "odd sums")] == ["p2"]
    repo.put_theorem("p1", "k", path="rules", record={"expanded_theorem": "N_g is a cubic quasipolynomial in g."},
                     reason="", call_ids=[])  # fmt: skip
    [hit] = search(ensure_index(store), "quasipolynomial")  # a main theorem extracted later is found too
    assert hit.paper_id == "p1" and "[quasipolynomial]" in hit.snippet
    fake_env.set_script({"rules": [
        {"match": "SUB-TWO", "reply": submit("100")},
        {"match": "SUB-ONE", "reply": submit("9")},
        {"match": "arXiv:2401.00002", "reply": submit("proof")},
        {"match": "MAIN-Q", "reply": {"tool_calls": [{"name": "search", "arguments": {"query": "sums of odd"}}]}},
    ]})  # fmt: skip
    result = run(store, tmp_path, tools=("search",))
    assert [t["name"] for t in fake_env.requests[0]["tools"]] == ["search", "submit"]
    assert "Odd numbers (arXiv:2401.00002)" in prompt_text(fake_env.requests[1]["body"])
    assert stages_of(result)[0]["tool_calls"] == {"search": 1, "submit": 1}


@pytest.mark.parametrize("protocol", ["chat-stream", "responses", "anthropic"])
def test_every_protocol_carries_the_conversation_and_its_reasoning_tokens(store, fake_env, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch, protocol):  # fmt: skip
    fake_env.set_script({"rules": [
        {"match": "SUB-TWO", "reply": submit("100"), "reasoning": "sum them", "usage": usage(30, 12)},
        {"match": "SUB-ONE", "reply": submit("9"), "usage": usage(20)},
        {"match": "MAIN-Q", "usage": usage(50, 10), "reasoning": "think", "reply": [
            {"tool_calls": [{"name": "python", "arguments": {"code": "print(6 * 7 + 1000)"}}]}, submit("proof")]},
    ]})  # fmt: skip
    model, args = MODEL, {"stream": True} if protocol == "chat-stream" else {"responses_api": True}
    if protocol == "anthropic":
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_env.anthropic_base_url)
        model, args = "anthropic/claude-test", {}
    result = run_improof_eval(store, model, tools=("python",), main_tokens=1000, sub_tokens=500, tool_timeout_s=60,
                              tool_memory_mb=1024, out_dir=tmp_path / "out", log_dir=tmp_path / "logs",
                              model_args=args, generate={"max_tokens": 400})  # fmt: skip
    endpoint = {"chat-stream": "chat", "responses": "responses", "anthropic": "messages"}[protocol]
    assert [(r["endpoint"], r["rule"]) for r in fake_env.requests] == [(endpoint, 2), (endpoint, 2), (endpoint, 1),
                                                                       (endpoint, 0)]  # fmt: skip
    assert "1042" in prompt_text(fake_env.requests[1]["body"])  # the python result went back to the model
    stages = stages_of(result)
    assert [(s["outcome"], s["output_tokens"], s["reasoning_tokens"]) for s in stages] == [
        ("submitted", 100, 20), ("submitted", 20, 0), ("submitted", 30, 12)]  # fmt: skip
    assert stages[0]["tool_calls"] == {"python": 1, "submit": 1}
    assert result.results["problems"][0]["epochs"][0]["weighted_score"] == 1.0
    # the one result every evaluation returns: one problem, all its points (Wilson at 1.0 with n = 1: [0.2065, 1])
    assert (result.kind, result.score.value, result.score.n, result.score.low) == ("improof.eval", 1.0, 1, 0.2065)
    assert result.calls_made == 4 and result.incomplete == 0 and len(result.detail["answer_ids"]) == 1


def test_cli_prints_stages_and_scores_with_table1_tier(store, fake_env, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch):  # fmt: skip
    from typer.testing import CliRunner

    from theorembench.cli import app

    fake_env.set_script({"rules": [
        {"match": "SUB-TWO", "reply": "\\boxed{100}", "usage": usage(9)},
        {"match": "SUB-ONE", "reply": "\\boxed{8}", "usage": usage(8)},
        {"match": "MAIN-Q", "reply": "A proof.", "usage": usage(70, 30)},
    ]})  # fmt: skip
    monkeypatch.setenv("COLUMNS", "200")  # table rows on one line each
    res = CliRunner().invoke(app, ["improof", "eval", "--model", "openai-api/fake/gpt-5", "--mode", "single-turn",
                                   "--out", str(tmp_path / "out"), "--log-dir", str(tmp_path / "logs")],
                             catch_exceptions=False)  # fmt: skip
    assert res.exit_code == 0, res.output
    assert fake_env.requests[0]["body"].get("reasoning_effort") == "high"  # Table 1's parameters for GPT-5
    # Wilson at p = 2/3 with n = 1 problem, not the point 0.667–0.667 a bootstrap over one problem gives
    assert "mean weighted score: 66.7% [9.4–97.5] n=1 problem(s) (wilson-mean)" in res.output
    assert "tier 1, human-graded, priority 1" in res.output
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in res.output.splitlines() if "odd-sums" in line]
    assert ["odd-sums", "1", "main", "submitted", "1", "10", "70", "30", "—"] in rows
    assert ["odd-sums", "1", "sub 1", "submitted", "1", "10", "8", "0", "—"] in rows
    assert ["odd-sums", "1", "1/2", "0.667"] in rows  # 2 of 3 points
    [written] = (tmp_path / "out").glob("results_openai-api_fake_gpt-5_single-turn_*.json")
    doc = json.loads(written.read_text())
    assert (doc["model"]["tier"], doc["model"]["grading_priority"]) == (1, 1)
    assert doc["usage"]["main_stage"] == {"input_tokens": 10, "output_tokens": 70, "reasoning_tokens": 30, "turns": 1}


def test_tool_choice_is_checked_before_any_work(store, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    import shutil

    from inspect_ai.tool import ToolDef

    from theorembench.common.errors import UserError
    from theorembench.methods.improof.agent_tools import build_tools
    from theorembench.methods.improof.config import HarnessSettings, default_tools

    real = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name: None if name == "sage" else real(name))
    assert default_tools() == ("python", "bash", "search")
    with pytest.raises(UserError, match="the sage tool needs a SageMath that runs inside the sandbox: not installed"):
        HarnessSettings.from_args(mode="agentic", tools="python,sage", main_tokens=1, sub_tokens=1, epochs=1)
    with pytest.raises(UserError, match="unknown tool"):
        HarnessSettings.from_args(mode="agentic", tools="python,shell", main_tokens=1, sub_tokens=1, epochs=1)
    # a SageMath that runs inside the sandbox (whether one does is decided by running it: tests/test_sandbox_tools.py)
    from theorembench.methods.improof import agent_tools, config

    for module in (agent_tools, config):
        monkeypatch.setattr(module, "tool_runs_inside", lambda name: name == "sage")
    assert default_tools() == ("python", "bash", "sage", "search")
    settings = HarnessSettings.from_args(mode="agentic", tools="python,sage,search", main_tokens=1, sub_tokens=1,
                                         epochs=1, search_provider="tavily")  # fmt: skip
    with pytest.raises(UserError, match="TAVILY_API_KEY"):
        build_tools(settings, search_index=None, model_provider="openai-api")
    monkeypatch.setenv("TAVILY_API_KEY", "test-key")
    names = [ToolDef(t).name for t in build_tools(settings, search_index=None, model_provider="openai-api")]
    assert names == ["python", "sage", "web_search", "submit"]
    single = HarnessSettings.from_args(mode="single-turn", tools="python", main_tokens=1, sub_tokens=1, epochs=1)
    assert single.tools == () and build_tools(single, search_index=None, model_provider="openai-api") == []
