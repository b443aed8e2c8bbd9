"""``eval mcq --batch`` killed with SIGKILL while its batch is pending: the rerun takes the answers from that batch,
with every request paid once, at the batch price."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import sqlalchemy as sa
from helpers.cli import PYTHON, cli_env

from theorembench.store import Store
from theorembench.store.batches import batches

ITEMS = 29  # the shared lmb_hard file
PRICE_IN, PRICE_OUT = 1000.0, 2000.0  # US dollars per million tokens


def _pending_batch(db) -> dict | None:
    if not db.exists():
        return None
    with Store(db) as store:
        found = [dict(b) for b in batches(store) if b["status"] == "pending" and b["remote_id"]]
    return found[0] if found else None


def test_sigkill_while_the_batch_is_pending_then_resume_pays_once(fake_env, lmb_hard, tmp_path):
    db, out = tmp_path / "batch.db", tmp_path / "r.json"
    (tmp_path / "prices.toml").write_text(f'[models]\n"openai-api/fake/*" = {{ input = {PRICE_IN}, '
                                          f'output = {PRICE_OUT} }}\n')  # fmt: skip
    env = cli_env(THEOREMBENCH_PRICES=str(tmp_path / "prices.toml"), THEOREMBENCH_BATCH_MAX_SIZE=str(ITEMS),
                  THEOREMBENCH_BATCH_IDLE_S="600", THEOREMBENCH_BATCH_MAX_WAIT_S="600",
                  THEOREMBENCH_BATCH_POLL_S="0.05")  # one batch of every item, sent when the last one is queued
    usage = {"prompt_tokens": 40, "completion_tokens": 7}
    fake_env.set_script({"default": {"reply": "\\boxed{C}", "usage": usage}, "batch_hold": True})
    cmd = [PYTHON, "-m", "theorembench.cli", "eval", "mcq", str(lmb_hard), "--model", "openai-api/fake/m",
           "--db", str(db), "--out", str(out), "--no-log", "--batch"]  # fmt: skip

    proc = subprocess.Popen(cmd, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        fake_env.wait_for(lambda st: st["batches"]["created"] == 1, timeout=120)
        deadline = time.monotonic() + 60
        while (pending := _pending_batch(db)) is None:  # the batch id reaches the store before it is polled
            assert time.monotonic() < deadline, "the batch id never reached the store"
            assert proc.poll() is None, "the command ended before it was killed"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert not out.exists()
    stats = fake_env.stats()
    assert stats["batches"]["requests"] == ITEMS and stats["total_requests"] == 0  # held: nothing answered yet
    assert pending["n_requests"] == ITEMS and pending["remote_id"] in stats["batches"]["status"]

    fake_env.release_batches()
    done = subprocess.run([*cmd, "--resume"], check=False, env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=180)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr

    data = json.loads(out.read_text())
    ids = [r["id"] for r in data["detailed_results"]]
    assert len(ids) == ITEMS == len(set(ids))
    assert all(r["model_answer"] == "C" and r["error"] is None for r in data["detailed_results"])
    stats = fake_env.stats()
    assert stats["batches"]["created"] == 1 and stats["batches"]["answered"] == ITEMS
    completed = stats["prompt_keys_completed"]
    assert len(completed) == ITEMS and set(completed.values()) == {1}  # every request answered once: paid once
    half = (usage["prompt_tokens"] * PRICE_IN + usage["completion_tokens"] * PRICE_OUT) / 1e6 / 2
    with Store(db) as store:
        assert store.usage()["ok"] == ITEMS
        costs = [r["cost_usd"] for r in store.fetch(sa.text("SELECT cost_usd FROM model_calls"))]
        assert len(costs) == ITEMS and all(abs(c - half) < 1e-12 for c in costs)
        assert [(b["id"], b["status"]) for b in batches(store)] == [(pending["id"], "ended")]
        assert store.table_counts(["runs"])["runs"] == 1
