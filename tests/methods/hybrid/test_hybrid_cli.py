"""`theorembench hybrid build/eval` on the shared Stacks chapters with scripted models."""

from __future__ import annotations

import json

import pytest
from helpers.hybrid import verdict
from helpers.paths import SHARED
from typer.testing import CliRunner

from theorembench.cli import app

STACKS = SHARED / "data" / "stacks"
runner = CliRunner()


@pytest.fixture
def stacks():
    if not (STACKS / "brauer.tex").is_file():
        pytest.skip("shared Stacks data not found")
    return STACKS


def test_build_and_eval_from_stacks(fake_env, stacks, tmp_path):
    gen = json.dumps({"distractors": [{"text": f"A subtly wrong version number {k}.", "change": f"change {k}"}
                                      for k in range(3)]})  # fmt: skip
    fake_env.set_script({"rules": [  # first match wins: the evaluation prompt also holds distractor texts
        {"match": "Exactly 2 of these", "reply": "\\boxed{1, 2}"},
        {"match": "flawed versions", "reply": gen},
        {"match": "subtly wrong version", "model": "judge3", "reply": verdict("correct")},
        {"match": "subtly wrong version", "reply": verdict("incorrect")},
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
    assert "Proof2Hybrid funnel" in res.output and "per question" in res.output and "cost/u" in res.output
    res = runner.invoke(app, ["hybrid", "eval", str(tmp_path / "hb"), "--model", "openai-api/fake/m",
                              "--mode", "generation", "--out", str(tmp_path / "r.json")], catch_exceptions=False)  # fmt: skip
    assert res.exit_code == 0, res.output
    result = json.loads((tmp_path / "r.json").read_text())["generation"]
    expected_tight = sum(q["answer"] == [1, 2] for q in questions) / len(questions)
    assert expected_tight > 0  # the model's one answer is right on some question, or the check below says nothing
    assert result["summary"]["tight"]["value"] == pytest.approx(expected_tight, abs=1e-4)
    assert "random guess" in res.output


def test_build_rejects_bad_parameters_and_chapters(fake_env, stacks, tmp_path):
    res = runner.invoke(app, ["hybrid", "build", "--stacks", str(stacks), "--judge", "openai-api/fake/j"])
    assert res.exit_code == 2 and "k1=8" in res.output
    cfg = tmp_path / "ok.toml"
    cfg.write_text("[seed_filter]\nk1 = 2\n[distractor_filter]\nn3 = 5\nk3 = 3\nk4 = 3\n")
    res = runner.invoke(app, ["hybrid", "build", "--stacks", str(stacks), "--chapter", "nosuch", "--config", str(cfg),
                              "--judge", "openai-api/fake/j", "--generator", "openai-api/fake/g"])  # fmt: skip
    assert res.exit_code == 2 and "nosuch" in res.output


# ------------------------------------------------------------------ eval: perplexity support, notes, defaults

QUESTIONS = [
    {"id": f"q{i}", "m": 2, "n": 4, "answer": answer,
     "items": [{"number": k, "text": f"Item text {i}.{k}", "correct": k in answer} for k in range(1, 5)]}
    for i, answer in enumerate([[1, 2], [1, 2], [3, 4]])
]  # fmt: skip
PPL_QUESTIONS = [{"id": "s1", "options": ["A true proof.", "A false proof."], "correct": 0}]


@pytest.fixture
def built(tmp_path):
    """A `hybrid build` folder written by hand: three questions keyed 1,2 / 1,2 / 3,4, one perplexity question."""
    folder = tmp_path / "hb"
    folder.mkdir()
    (folder / "questions.json").write_text(json.dumps(QUESTIONS))
    (folder / "ppl_questions.json").write_text(json.dumps(PPL_QUESTIONS))
    return folder


def chat_only(server) -> None:
    """Replies \\boxed{1, 2} to every evaluation question; /completions gives no log-probabilities."""
    server.set_script({"logprobs_mode": "none", "rules": [{"match": "Exactly 2 of these", "reply": "\\boxed{1, 2}"}]})


def test_eval_both_on_a_chat_only_server_skips_perplexity_and_keeps_generation(fake_env, built, tmp_path):
    chat_only(fake_env)
    out = tmp_path / "r.json"
    res = runner.invoke(app, ["hybrid", "eval", str(built), "--model", "openai-api/fake/m", "--out", str(out)])
    assert res.exit_code == 0, res.output
    results = json.loads(out.read_text())
    assert results["generation"]["summary"]["tight"]["value"] == pytest.approx(2 / 3, abs=1e-4)  # q0, q1 right
    assert "perplexity" not in results
    assert "no log-probabilities" in results["perplexity_skipped"]
    assert len(results["notes"]) == 1 and results["notes"][0].startswith("perplexity-based evaluation skipped")
    assert "note: perplexity-based evaluation skipped" in res.output and "skipped (see note)" in res.output
    # the support check came first: one probe to /completions, then the three questions
    endpoints = [r["endpoint"] for r in fake_env.requests]
    assert endpoints[0] == "completions" and endpoints.count("completions") == 1
    assert endpoints.count("chat") == 3
    # the service behind the command returns the one evaluation result: the tight score is its headline
    from theorembench.methods.hybrid.service import evaluate_hybrid
    from theorembench.store import open_store

    with open_store(None) as st:
        done = evaluate_hybrid(st, built, model="openai-api/fake/m", mode="generation")
    assert done.kind == "eval.hybrid" and done.score.to_dict() == done.results["generation"]["summary"]["tight"]
    assert (done.score.value, done.score.n, done.incomplete) == (pytest.approx(2 / 3, abs=1e-4), 3, 0)
    assert endpoints == [r["endpoint"] for r in fake_env.requests]  # every answer came from the store


def test_eval_perplexity_only_on_a_chat_only_server_stops_before_any_work(fake_env, built, tmp_path):
    chat_only(fake_env)
    out = tmp_path / "r.json"
    res = runner.invoke(app, ["hybrid", "eval", str(built), "--model", "openai-api/fake/m", "--mode", "perplexity",
                              "--out", str(out)])  # fmt: skip
    assert res.exit_code == 2
    assert "perplexity-based evaluation of openai-api/fake/m is not possible" in res.output
    assert "Traceback" not in res.output and not out.exists()
    assert [r["endpoint"] for r in fake_env.requests] == ["completions"]


def test_eval_hosted_model_does_not_crash(fake_env, built, tmp_path, monkeypatch):
    chat_only(fake_env)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    # no base URL: perplexity is impossible, known without a request (and nothing else is asked)
    res = runner.invoke(app, ["hybrid", "eval", str(built), "--model", "openai/gpt-5", "--mode", "perplexity"])
    assert res.exit_code == 2 and "no server address" in res.output and "Traceback" not in res.output
    assert fake_env.requests == []
    # a hosted-model name on an OpenAI-compatible chat-only server: generation is written, perplexity skipped
    monkeypatch.setenv("OPENAI_BASE_URL", fake_env.base_url)
    out = tmp_path / "r.json"
    res = runner.invoke(app, ["hybrid", "eval", str(built), "--model", "openai/gpt-5", "--out", str(out)])
    assert res.exit_code == 0, res.output
    results = json.loads(out.read_text())
    assert results["generation"]["summary"]["n"] == 3 and "perplexity_skipped" in results


def test_eval_leaves_the_reply_length_to_the_provider(fake_env, built, tmp_path):
    chat_only(fake_env)
    res = runner.invoke(app, ["hybrid", "eval", str(built), "--model", "openai-api/fake/m", "--mode", "generation",
                              "--out", str(tmp_path / "r.json")])  # fmt: skip
    assert res.exit_code == 0, res.output
    bodies = [r["body"] for r in fake_env.requests if r["endpoint"] == "chat"]
    assert len(bodies) == 3
    assert all("max_tokens" not in b and "max_completion_tokens" not in b for b in bodies)
    res = runner.invoke(app, ["hybrid", "eval", str(built), "--model", "openai-api/fake/m", "--mode", "generation",
                              "--max-tokens", "64", "--out", str(tmp_path / "r64.json")])  # fmt: skip
    assert res.exit_code == 0, res.output
    bodies = [r["body"] for r in fake_env.requests if r["endpoint"] == "chat"][3:]
    assert len(bodies) == 3 and all(64 in (b.get("max_tokens"), b.get("max_completion_tokens")) for b in bodies)


def test_eval_perplexity_score_with_interval_and_rerun_from_cache(fake_env, built, tmp_path):
    fake_env.set_script({"logprob_rules": [{"match": "true", "logprob": -0.1}, {"match": "false", "logprob": -3.0}],
                         "rules": [{"match": "Exactly 2 of these", "reply": "\\boxed{1, 2}"}]})  # fmt: skip
    out = tmp_path / "r.json"
    args = ["hybrid", "eval", str(built), "--model", "openai-api/fake/m", "--mode", "perplexity", "--out", str(out)]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    p = json.loads(out.read_text())["perplexity"]["summary"]
    # one question answered right: the interval is not the point [100, 100] a bootstrap gave, but Wilson at 1 of 1
    # (its one question carries all the weight, so the effective n is 1): low = 1 / (1 + 1.96²) = 0.2065
    assert p["score"] == pytest.approx(100.0) and p["n"] == 1
    assert p["estimate"]["ci95"] == pytest.approx([1 / (1 + 1.96**2), 1.0], abs=2e-4)
    assert "100.0% [20.6–100.0] n=1" in res.output  # 0.20655 (z = 1.959964), shown to one digit
    made = fake_env.stats()["endpoints"]["completions"]
    assert made == 3  # the alignment probe and the two options
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert fake_env.stats()["endpoints"]["completions"] == made  # the rerun is answered from the cache
