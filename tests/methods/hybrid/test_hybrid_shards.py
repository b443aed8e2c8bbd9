"""``hybrid eval --shard i/N`` and ``--merge-shards N``: the questions split between shards, merged into one run."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from theorembench.cli import app

runner = CliRunner()
MODEL = "openai-api/fake/m"
# six m-out-of-n questions, keyed 1,2 on the even ones and 3,4 on the odd ones, and three perplexity questions
QUESTIONS = [{"id": f"q{i}", "m": 2, "n": 4, "answer": [1, 2] if i % 2 == 0 else [3, 4],
              "items": [{"number": k, "text": f"Item text {i}.{k}", "correct": k in ([1, 2] if i % 2 == 0 else [3, 4])}
                        for k in range(1, 5)]} for i in range(6)]  # fmt: skip
PPL = [{"id": f"s{i}", "options": [f"A true proof {i}.", f"A false proof {i}."], "correct": 0} for i in range(3)]
SCRIPT = {"logprob_rules": [{"match": "true", "logprob": -0.1}, {"match": "false", "logprob": -3.0}],
          "rules": [{"match": "Exactly 2 of these", "reply": "\\boxed{1, 2}"}]}  # fmt: skip
VOLATILE = {"wall_seconds", "run_id", "log"}


def by_rule(key: str, count: int) -> int:
    """The documented partition, written out here: SHA-256 of the id, first 8 bytes big-endian, mod N."""
    return int(hashlib.sha256(key.encode()).hexdigest()[:16], 16) % count


def folder(tmp_path: Path) -> Path:
    path = tmp_path / "hb"
    path.mkdir()
    (path / "questions.json").write_text(json.dumps(QUESTIONS))
    (path / "ppl_questions.json").write_text(json.dumps(PPL))
    return path


def evaluate(built: Path, out: Path, db: Path, *extra: str):
    res = runner.invoke(app, ["hybrid", "eval", str(built), "--model", MODEL, "--out", str(out), "--db", str(db),
                              *extra], catch_exceptions=False)  # fmt: skip
    assert res.exit_code == 0, res.output
    return res


def comparable(doc: dict) -> dict:
    gen = doc["generation"]
    details = [{k: v for k, v in d.items() if k != "call_id"} for d in gen["details"]]
    return {"generation": {"summary": {k: v for k, v in gen["summary"].items() if k not in VOLATILE},
                           "details": details},
            "perplexity": doc["perplexity"], "cutoff": doc["cutoff"], "notes": doc["notes"]}  # fmt: skip


def asked(fake) -> list[str]:
    return sorted(json.dumps(r["body"], sort_keys=True) for r in fake.requests if r["endpoint"] == "chat")


def test_sharded_hybrid_eval_equals_one_run(fake_env, tmp_path):
    assert {by_rule(q["id"], 2) for q in QUESTIONS} == {0, 1} and {by_rule(q["id"], 2) for q in PPL} == {0, 1}
    built = folder(tmp_path)
    fake_env.set_script(SCRIPT)
    sharded, db = tmp_path / "sharded.json", tmp_path / "sharded.db"
    for i in (0, 1):
        res = evaluate(built, sharded, db, "--shard", f"{i}/2")
        assert f"shard {i}/2" in res.output and "--merge-shards 2" in res.output
    assert not sharded.exists()
    chat = [r for r in fake_env.requests if r["endpoint"] == "chat"]
    assert len(chat) == len(QUESTIONS)  # each question asked once, by the shard that owns it
    made = len(fake_env.requests)
    evaluate(built, sharded, db, "--merge-shards", "2")
    assert len(fake_env.requests) == made  # the merge asks nothing
    sharded_asked = asked(fake_env)

    fake_env.reset()
    single = tmp_path / "single.json"
    evaluate(built, single, tmp_path / "single.db")
    assert asked(fake_env) == sharded_asked
    merged, one = json.loads(sharded.read_text()), json.loads(single.read_text())
    assert comparable(merged) == comparable(one)
    assert merged["generation"]["summary"]["tight"]["value"] == pytest.approx(0.5)  # the even questions
    assert merged["perplexity"]["summary"]["n"] == 3


def test_hybrid_merge_names_the_missing_shard(fake_env, tmp_path):
    built = folder(tmp_path)
    fake_env.set_script(SCRIPT)
    res = runner.invoke(app, ["hybrid", "eval", str(built), "--model", MODEL, "--db", str(tmp_path / "s.db"),
                              "--merge-shards", "2"])  # fmt: skip
    assert res.exit_code == 2 and "shard 0/2 has no run of these settings" in res.output
    assert fake_env.stats()["total_requests"] == 0
