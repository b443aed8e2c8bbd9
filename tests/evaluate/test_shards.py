"""``eval mcq --shard i/N`` and ``--merge-shards N``: two processes share one evaluation on one PostgreSQL store.

The shards run at once as real processes against the loopback fake server, whose barrier holds every
request until one of each shard is held (each asks one at a time): both were in flight together, with
no timing. Their merge must give what one unsharded run on a store of its own gives.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import uuid
from pathlib import Path

import pytest
from helpers.cli import PYTHON, cli_env
from helpers.paths import GOLDEN
from typer.testing import CliRunner

from theorembench.cli import app
from theorembench.evaluate.mcq.items import load_dataset
from theorembench.store import Store
from theorembench.testing.fakellm import FakeLLMServer

MODEL = "openai-api/fake/m1"
PRICES = '[models]\n"openai-api/fake/*" = { input = 1000.0, output = 2000.0 }\n'
USAGE = {"prompt_tokens": 10, "completion_tokens": 100}
CALL_COST = (10 * 1000 + 100 * 2000) / 1e6  # every call: $0.21
KEYED = "".join(e["keyed"] for e in json.loads((GOLDEN / "lmb_202511_hard_shuffle_seed42.json").read_text())["items"])
VOLATILE_ITEM = {"elapsed_seconds", "call_id", "attempts"}  # when and under which id a call was made
VOLATILE_SUMMARY = {"wall_seconds", "shards"}


def shard_by_rule(key: str, count: int) -> int:
    """The documented partition, written out here: SHA-256 of the id, first 8 bytes big-endian, mod N."""
    return int(hashlib.sha256(key.encode()).hexdigest()[:16], 16) % count


def balanced_limit(ids: list[str]) -> int:
    """The smallest item count from 8 on whose items split evenly between two shards (the barrier pairs them)."""
    for limit in range(8, len(ids) + 1, 2):
        if sum(shard_by_rule(key, 2) for key in ids[:limit]) * 2 == limit:
            return limit
    pytest.fail("no prefix of the file splits evenly between two shards")


def script(lmb_hard: Path, *, barrier: int = 0) -> dict:
    """A, except item 6 (keyed C) answered C and item 1 (keyed E) B; 10 + 100 tokens a call."""
    items = load_dataset(lmb_hard).items

    def rule(index: int, reply: str) -> dict:
        return {"match": re.escape(items[index].mcq.question[:60]), "reply": reply, "usage": USAGE}

    return {"default": {"reply": "\\boxed{A}", "usage": USAGE}, "barrier": barrier,
            "rules": [rule(6, "\\boxed{C}"), rule(1, "\\boxed{B}")]}  # fmt: skip


@pytest.fixture
def other_pg_url(pg_server):
    """A second fresh PostgreSQL database: the unsharded run's store."""
    name = "t_" + uuid.uuid4().hex[:16]
    pg_server.admin(f"CREATE DATABASE {name}")
    yield pg_server.url(name)
    pg_server.admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def command(lmb_hard: Path, db: str, out: Path, limit: int, *extra: str) -> list[str]:
    return [PYTHON, "-m", "theorembench.cli", "eval", "mcq", str(lmb_hard), "--model", MODEL, "--limit", str(limit),
            "--max-connections", "1", "--db", db, "--out", str(out), *extra]  # fmt: skip


def run(cmd: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def run_at_once(cmds: list[list[str]], env: dict[str, str], cwd: Path) -> list[str]:
    """Start every command, then wait for each: they run as processes of their own, at the same time."""
    procs = [subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for cmd in cmds]  # fmt: skip
    outputs = []
    try:
        for proc in procs:
            output, _ = proc.communicate(timeout=180)
            assert proc.returncode == 0, output
            outputs.append(output)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return outputs


def comparable(doc: dict) -> dict:
    """A results file without what differs between any two runs (dates, run ids, call ids, latencies)."""
    info = {k: v for k, v in doc["test_info"].items() if k not in ("date", "timestamp", "run_id")}
    summary = {k: v for k, v in doc["summary"].items() if k not in VOLATILE_SUMMARY}
    items = [{k: v for k, v in r.items() if k not in VOLATILE_ITEM} for r in doc["detailed_results"]]
    return {"test_info": info, "summary": summary, "overall": doc["overall"], "items": items}


def scorecard(results: Path) -> dict:
    card = json.loads(results.with_name("scorecard-" + results.name).read_text())
    return {k: card[k] for k in ("method", "model", "score", "items", "breakdown", "cost_usd", "cost_per_item")}


def test_two_shards_at_once_on_postgresql_equal_one_run(lmb_hard, tmp_path, pg_url, other_pg_url):
    ids = [item.id for item in load_dataset(lmb_hard).items]
    limit = balanced_limit(ids)
    (tmp_path / "prices.toml").write_text(PRICES)
    base_env = cli_env(THEOREMBENCH_PRICES=str(tmp_path / "prices.toml"), FAKE_API_KEY="test-key")
    sharded_out, single_out = tmp_path / "sharded" / "r.json", tmp_path / "single" / "r.json"

    with FakeLLMServer(script(lmb_hard, barrier=2)) as fake:
        env = base_env | {"FAKE_BASE_URL": fake.base_url}
        outputs = run_at_once([command(lmb_hard, pg_url, sharded_out, limit, "--shard", f"{i}/2") for i in (0, 1)],
                              env, tmp_path)  # fmt: skip
        assert all("when every shard has finished" in o and "--merge-shards 2" in o for o in outputs)
        assert not sharded_out.exists()  # a shard writes no results: the merge does
        run(command(lmb_hard, pg_url, sharded_out, limit, "--merge-shards", "2"), env, tmp_path)
        asked = [r["body"]["messages"][-1]["content"] for r in fake.requests]
        # each item asked exactly once over both shards, and the merge asked nothing
        assert len(asked) == limit and len(set(asked)) == limit
        assert fake.stats()["max_in_flight"] == 2  # the barrier let requests through only two at a time

        # a shard run again with --resume asks nothing: its items are in its own run
        fake.set_script(script(lmb_hard))  # no barrier: a shard asking anything would not wait for the other
        for i in (0, 1):
            again = run(command(lmb_hard, pg_url, sharded_out, limit, "--shard", f"{i}/2", "--resume"), env, tmp_path)
            assert "0 calls made" in again.stdout and "already answered" in again.stderr
        assert len(fake.requests) == limit

        # the same evaluation as one run, on the same endpoint, into a store of its own
        fake.reset()
        run(command(lmb_hard, other_pg_url, single_out, limit), env, tmp_path)
        assert len(fake.requests) == limit

    merged, single = json.loads(sharded_out.read_text()), json.loads(single_out.read_text())
    assert comparable(merged) == comparable(single)
    # what both must say, from the golden keyed labels: A is right where A is keyed, item 6 answered C is right
    correct = sum(KEYED[i] == "A" for i in range(limit)) + (KEYED[6] == "C")
    overall = merged["overall"]
    assert (overall["correct"], overall["total"], overall["n"]) == (correct, limit, limit)
    assert [r["id"] for r in merged["detailed_results"]] == ids[:limit]
    assert [r["model_answer"] for r in merged["detailed_results"][:7]] == ["A", "B", "A", "A", "A", "A", "C"]
    assert merged["summary"]["calls_made"] == limit
    assert merged["summary"]["cost_usd"] == pytest.approx(limit * CALL_COST)
    assert merged["summary"]["cost_usd_this_invocation"] == pytest.approx(limit * CALL_COST)
    assert scorecard(sharded_out) == scorecard(single_out)
    assert scorecard(sharded_out)["cost_usd"] == pytest.approx(limit * CALL_COST)

    with Store(pg_url) as store:
        runs = {row["id"]: row for row in store.runs("eval.mcq")}
        merged_run = runs[merged["test_info"]["run_id"]]
        shard_runs = json.loads(merged_run["config"])["shards"]
        assert len(shard_runs) == 2 and all(runs[r]["status"] == "finished" for r in shard_runs)
        # every call is ledgered once, under the shard that made it
        assert sum(store.usage(r)["calls"] for r in shard_runs) == limit and store.usage()["calls"] == limit
        assert len(store.results(merged_run["id"])) == limit


runner = CliRunner()


def invoke(lmb_hard: Path, *extra: str):
    return runner.invoke(app, ["eval", "mcq", str(lmb_hard), "--model", MODEL, "--out", "r.json", "--no-log", *extra],
                         catch_exceptions=False)  # fmt: skip


def test_merge_names_the_shard_that_has_not_run(fake_env, lmb_hard, tmp_path):
    assert invoke(lmb_hard, "--limit", "6", "--shard", "0/2").exit_code == 0
    res = invoke(lmb_hard, "--limit", "6", "--merge-shards", "2")
    assert res.exit_code == 2 and "error: shard 1/2 has no run of these settings" in res.output
    assert len(res.output.strip().splitlines()) == 1 and not (tmp_path / "r.json").exists()
    # a shard that ran on fewer items than the merge asks for is named, with what to run
    assert invoke(lmb_hard, "--limit", "2", "--shard", "1/2").exit_code == 0
    res = invoke(lmb_hard, "--limit", "6", "--merge-shards", "2")
    assert res.exit_code == 2 and "shard 1/2" in res.output and "with --resume and --shard 1/2" in res.output
    assert invoke(lmb_hard, "--limit", "6", "--shard", "1/2", "--resume").exit_code == 0
    assert invoke(lmb_hard, "--limit", "6", "--merge-shards", "2").exit_code == 0
    assert json.loads((tmp_path / "r.json").read_text())["overall"]["total"] == 6
    assert fake_env.stats()["total_requests"] == 6  # the resumed shard asked only the items it lacked


def test_shard_and_merge_together_is_refused(fake_env, lmb_hard):
    res = invoke(lmb_hard, "--shard", "0/2", "--merge-shards", "2")
    assert res.exit_code == 2 and "error: --shard goes to each shard's run, not to their merge" in res.output
    assert fake_env.stats()["total_requests"] == 0
