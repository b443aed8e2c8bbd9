"""`theorembench hybrid build/eval` on the shared Stacks chapters with scripted models."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import SHARED
from theorembench.cli import app

STACKS = SHARED / "data" / "stacks"
runner = CliRunner()


def verdict(v: str) -> str:
    return json.dumps({"verdict": v, "reason": "checked"})


@pytest.fixture
def stacks():
    if not (STACKS / "brauer.tex").is_file():
        pytest.skip("shared Stacks data not found")
    return STACKS


def test_build_and_eval_from_stacks(fake_env, stacks, tmp_path):
    gen = json.dumps({"distractors": [{"text": f"A subtly wrong version number {k}.", "change": f"change {k}"}
                                      for k in range(3)]})  # fmt: skip
    fake_env.set_script({"rules": [
        {"match": "flawed versions", "reply": gen},
        {"match": "subtly wrong version", "model": "judge3", "reply": verdict("correct")},
        {"match": "subtly wrong version", "reply": verdict("incorrect")},
        {"match": "Exactly 2 of these", "reply": "\\boxed{1, 2}"},
        {"match": "refereeing a single item", "reply": verdict("correct")},
    ]})  # fmt: skip
    cfg = tmp_path / "h.toml"
    cfg.write_text("[seed_filter]\nn1 = 2\nk1 = 4\n[distractors]\nn2 = 3\nk2 = 2\n"
                   "[distractor_filter]\nn3 = 2\nk3 = 4\nk4 = 4\n")  # fmt: skip
    args = ["hybrid", "build", "--stacks", str(stacks), "--chapter", "brauer", "--max-seeds", "12",
            "--generator", "openai-api/fake/gen", "--judge", "openai-api/fake/judge1",
            "--judge", "openai-api/fake/judge2", "--judge", "openai-api/fake/judge3",
            "--config", str(cfg), "--out-dir", str(tmp_path / "hb")]  # fmt: skip
    res = runner.invoke(app, args, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "hb" / "summary.json").read_text())
    assert summary["funnel"]["seeds"] == 12 and summary["funnel"]["kept_seeds"] == 12
    assert summary["funnel"]["kept_distractors"] == 24 and summary["funnel"]["questions"] >= 3
    questions = json.loads((tmp_path / "hb" / "questions.json").read_text())
    assert all(item["tag"] for q in questions for item in q["items"] if item["correct"])
    assert "Proof2Hybrid funnel" in res.output and "per question" in res.output
    res = runner.invoke(app, ["hybrid", "eval", str(tmp_path / "hb"), "--model", "openai-api/fake/m",
                              "--mode", "generation", "--out", str(tmp_path / "r.json")], catch_exceptions=False)  # fmt: skip
    assert res.exit_code == 0, res.output
    result = json.loads((tmp_path / "r.json").read_text())["generation"]
    expected_tight = sum(q["answer"] == [1, 2] for q in questions) / len(questions)
    assert result["summary"]["tight"] == pytest.approx(100 * expected_tight)
    assert "random guess" in res.output


def test_build_rejects_bad_parameters_and_chapters(fake_env, stacks, tmp_path):
    res = runner.invoke(app, ["hybrid", "build", "--stacks", str(stacks), "--judge", "openai-api/fake/j"])
    assert res.exit_code == 2 and "k1=8" in res.output
    cfg = tmp_path / "ok.toml"
    cfg.write_text("[seed_filter]\nk1 = 2\n[distractor_filter]\nn3 = 5\nk3 = 3\nk4 = 3\n")
    res = runner.invoke(app, ["hybrid", "build", "--stacks", str(stacks), "--chapter", "nosuch", "--config", str(cfg),
                              "--judge", "openai-api/fake/j", "--generator", "openai-api/fake/g"])  # fmt: skip
    assert res.exit_code == 2 and "nosuch" in res.output
