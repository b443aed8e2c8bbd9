"""A run killed with SIGKILL resumes with every item answered once and no call paid twice."""

from __future__ import annotations

import json
import subprocess

import sqlalchemy as sa
from helpers.cli import PYTHON, cli_env
from helpers.killing import kill_when_held

from theorembench.store import Store


def _answered(db) -> int:
    if not db.exists():
        return 0
    with Store(db) as store:
        return store.table_counts(["results"])["results"]


def test_sigkill_then_resume(fake_env, lmb_hard, tmp_path):
    db = tmp_path / "kill.db"
    out = tmp_path / "r.json"
    # answer 9 requests, then hold every further request forever
    fake_env.set_script({"default": {"reply": "\\boxed{C}", "delay_ms": 20}, "max_responses": 9})
    cmd = [PYTHON, "-m", "theorembench.cli", "eval", "mcq", str(lmb_hard), "--model", "openai-api/fake/m",
           "--db", str(db), "--out", str(out), "--max-connections", "3", "--no-log"]  # fmt: skip
    kill_when_held(cmd, fake_env, answered=9, stored=lambda: _answered(db), cwd=tmp_path, timeout=60)
    assert not out.exists()
    assert _answered(db) == 9

    fake_env.set_script({"default": {"reply": "\\boxed{C}"}})  # no more holding
    done = subprocess.run([*cmd, "--resume"], env=cli_env(), cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads(out.read_text())
    ids = [r["id"] for r in data["detailed_results"]]
    assert len(ids) == 29 == len(set(ids))
    assert all(r["model_answer"] == "C" and r["error"] is None for r in data["detailed_results"])
    assert data["summary"]["resumed_items"] == 9
    # every prompt was answered by the server exactly once: nothing paid twice
    completed = fake_env.stats()["prompt_keys_completed"]
    assert len(completed) == 29 and set(completed.values()) == {1}
    with Store(db) as store:
        rows = store.fetch(sa.text("SELECT idx, COUNT(*) AS n FROM results GROUP BY idx"))
        assert len(rows) == 29 and {r["n"] for r in rows} == {1}
        assert store.usage()["ok"] == 29
        assert store.table_counts(["runs"])["runs"] == 1
