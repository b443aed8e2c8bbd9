"""IMProofBench runs at scale (issue 21, item 25): results keyed by the settings digest, the run options on the
command line, and the blind export of answers for graders outside the platform.

A scripted fake server over real HTTP, real Inspect AI, the real sandbox and the commands' default store.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from helpers.improof import store  # noqa: F401 - a fixture
from helpers.improof_samples import submit
from typer.testing import CliRunner

from theorembench.cli import app
from theorembench.methods.improof.answers import record_answer
from theorembench.methods.improof.harness import run_improof_eval

MODEL = "openai-api/fake/m"
SCRIPT = {"rules": [
    {"match": "SUB-TWO", "reply": submit("100")},
    {"match": "SUB-ONE", "reply": submit("9")},
    {"match": "MAIN-Q", "reply": ["still thinking", submit("proof")]},
]}  # fmt: skip


def test_runs_with_other_settings_write_their_own_results(store, fake_env, tmp_path: Path):
    fake_env.set_script(SCRIPT)
    kw = {"tools": (), "out_dir": tmp_path / "out", "log_dir": tmp_path / "logs"}
    first = run_improof_eval(store, MODEL, **kw)
    second = run_improof_eval(store, MODEL, main_tokens=5000, **kw)
    assert first.path != second.path and first.path.exists() and second.path.exists()
    for result in (first, second):  # the file is named by the run's settings digest, the pipeline's identity
        digest = result.results["pipeline"].split("/")[-1]
        assert result.path.name == f"results_openai-api_fake_m_agentic_{digest}.json"
    assert json.loads(first.path.read_text())["settings"]["main_tokens"] == 300_000
    assert json.loads(second.path.read_text())["settings"]["main_tokens"] == 5000
    again = run_improof_eval(store, MODEL, **kw)
    assert again.path == first.path  # the same settings: the same file, the same run


def test_turn_cap_samples_and_call_timeout_on_the_command_line(store, fake_env, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch):  # fmt: skip
    fake_env.set_script(SCRIPT)
    monkeypatch.setenv("COLUMNS", "200")
    res = CliRunner().invoke(app, ["improof", "eval", "--model", MODEL, "--tools", "python", "--max-turns", "1",
                                   "--max-samples", "2", "--timeout", "45", "--over-budget-answer", "discard",
                                   "--wording", "paper", "--out", str(tmp_path / "out"),
                                   "--log-dir", str(tmp_path / "logs")], catch_exceptions=False)  # fmt: skip
    assert res.exit_code == 0, res.output
    [path] = (tmp_path / "out").glob("results_*.json")
    doc = json.loads(path.read_text())
    main = doc["problems"][0]["epochs"][0]["stages"][0]
    assert (main["outcome"], main["turns"], main["error"]) == ("limit_exceeded", 1, "stopped after 1 turns (the turn "
                                                                                    "cap)")  # fmt: skip
    assert (doc["settings"]["max_turns"], doc["settings"]["wording"], doc["settings"]["over_budget_answer"]) == (
        1, "paper", "discard")  # fmt: skip
    assert doc["transport"] == {"max_retries": 3, "timeout_s": 45.0, "max_samples": 2, "max_connections": None}
    bad = CliRunner().invoke(app, ["improof", "eval", "--model", MODEL, "--mode", "single-turn", "--hosted-tools",
                                   "web_search", "--out", str(tmp_path / "o2")])  # fmt: skip
    assert bad.exit_code == 2 and "Inspect has the provider's own web_search only" in bad.output


def test_export_answers_for_offline_graders_is_blind_and_comes_back(store, tmp_path: Path):
    answers = {}
    for model, tier, mode in (("openai/gpt-5-2025-08-07", 1, "agentic"), ("openai/o3", 4, "agentic"),
                              ("grok/grok-4", 1, "single-turn")):  # fmt: skip
        answers[model] = record_answer(store, run_id=f"run-{model}", problem_id="odd-sums", version=1, model=model,
                                       tier=tier, epoch=0, mode=mode, main_answer=f"Proof by induction ({tier})",
                                       sub_answers=["9", "100"], stages=[{"stage": 0, "output_tokens": 77}])  # fmt: skip
    out = tmp_path / "export"
    res = CliRunner().invoke(app, ["improof", "export-answers", "--out", str(out)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert "exported 1 answer(s) of 1 problem(s)" in res.output and "2 left out" in res.output
    # a line is never wrapped, whatever the width: the path printed is whole (CliRunner's console is 80 wide)
    assert f"to {out}; 2 left out" in res.output and f"grades template: {out / 'grades_template.csv'}" in res.output
    assert sorted(p.name for p in out.iterdir()) == ["answers.jsonl", "grades_template.csv", "odd-sums.md"]
    [line] = [json.loads(x) for x in (out / "answers.jsonl").read_text().splitlines()]
    assert line == {"answer_id": answers["openai/gpt-5-2025-08-07"], "problem_id": "odd-sums", "version": 1,
                    "title": "Sums of odd numbers", "main_answer": "Proof by induction (1)"}  # fmt: skip
    everything = "".join(p.read_text() for p in out.iterdir())
    assert "MAIN-Q" in everything and "Induction on $n$." in everything  # the statement and the sample solution
    for secret in ("gpt-5", "openai", "o3", "grok", "run-", "tier", "agentic", "77"):
        assert secret not in everything, secret
    rows = list(csv.DictReader((out / "grades_template.csv").open()))
    assert [r["answer_id"] for r in rows] == [line["answer_id"]] and rows[0]["status"] == "incomplete"
    rows[0].update({"grader": "alice", "progress": "3", "status": "complete", "comment": "clean",
                    **{k: "false" for k in ("incorrect_logic", "hallucinated", "calculation", "conceptual")},
                    **{k: "true" for k in ("understanding", "correct_result", "insight", "usefulness")}})  # fmt: skip
    filled = tmp_path / "filled.csv"
    with filled.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    back = CliRunner().invoke(app, ["improof", "grades", "import", str(filled)], catch_exceptions=False)
    assert back.exit_code == 0 and "imported 1 grade(s)" in back.output
