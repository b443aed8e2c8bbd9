"""``eternal eval --shard i/N`` and ``--merge-shards N``: the instances split between shards, merged into one run."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from theorembench.cli import app
from theorembench.common.errors import UserError
from theorembench.methods.eternal.evaluate import evaluate_eternal
from theorembench.store import Store

RIGHT, WRONG = "So the value is \\boxed{12}.", "So the value is \\boxed{13}."
IDS = ["E1", "E2", "H1", "H2", "H3", "H4"]
VOLATILE = {"wall_seconds"}


def by_rule(key: str, count: int) -> int:
    """The documented partition, written out here: SHA-256 of the id, first 8 bytes big-endian, mod N."""
    return int(hashlib.sha256(key.encode()).hexdigest()[:16], 16) % count


def instances(path: Path) -> Path:
    rows = [{"template_id": "t_demo", "instance_id": f"t_demo#{iid}", "problem": f"PROBLEM-{iid}: compute the value.",
             "solution_steps": "By the theorem the value is 12.", "numerical_value": "12", "exact_expression": "",
             "params_used": {"n": 3}, "answer_kind": "integer", "msc": ["05"], "paper_id": None, "theorem": None,
             "template_version": 1, "code_hash": "0" * 64, "seed": 1, "tier": "easy" if iid[0] == "E" else "hard",
             "n_models_correct": 0, "suite_size": 5,
             "execution": {"status": "ok", "isolation": [], "wall_s": 0.01, "cpu_s": 0.01}, "libraries": {}}
            for iid in IDS]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


SCRIPT = {"default": {"reply": WRONG}, "rules": [
    {"match": "PROBLEM-E1:", "model": "ev", "reply": RIGHT}, {"match": "PROBLEM-H1:", "model": "ev", "reply": RIGHT},
    {"model": "judge", "reply": json.dumps({"labels": ["Knowledge Gap"], "source": "own",
                                            "rationale": "it did not know"})},  # every wrong answer, one label
]}  # fmt: skip


def evaluate(store: Store, src: Path, out: Path, **shards):
    return evaluate_eternal(store, src, "openai-api/fake/ev", judge="openai-api/fake/judge", out_dir=out,
                            max_retries=0, log_dir=out / "logs", **shards)  # fmt: skip


def comparable(doc: dict) -> dict:
    """A results document without what differs between two stores and two runs (ids, dates, folders)."""
    skip = {"run_id", "date", "log"}
    summary = {k: v for k, v in doc["summary"].items() if k not in VOLATILE}
    items = [{**item, "samples": [{k: v for k, v in s.items() if k not in ("call_id", "response_id")}
                                  for s in item["samples"]]} for item in doc["items"]]  # fmt: skip
    return {**{k: v for k, v in doc.items() if k not in skip | {"summary", "items", "taxonomy"}},
            "summary": summary, "items": items, "taxonomy": doc["taxonomy"]["counts"]}


def asked(fake) -> list[str]:
    return sorted(json.dumps(r["body"]["messages"], sort_keys=True) for r in fake.requests)


def test_sharded_eval_equals_one_run(fake_env, tmp_path):
    assert {by_rule(f"t_demo#{i}", 2) for i in IDS} == {0, 1}  # both shards get instances
    src = instances(tmp_path / "calibrated.jsonl")
    fake_env.set_script(SCRIPT)
    with Store(tmp_path / "sharded.db") as store:
        parts = [evaluate(store, src, tmp_path / "sharded", shard=f"{i}/2") for i in (0, 1)]
        assert [p.detail["shard"] for p in parts] == ["0/2", "1/2"]
        assert not (tmp_path / "sharded" / "results_openai-api_fake_ev.json").exists()  # the merge writes it
        assert sorted(p.score.n for p in parts) == sorted(
            [sum(by_rule(f"t_demo#{i}", 2) == k for i in IDS) for k in (0, 1)])  # fmt: skip
        shard_requests = len(fake_env.requests)
        merged = evaluate(store, src, tmp_path / "sharded", merge_shards=2)
        assert len(fake_env.requests) == shard_requests  # the merge asks nothing: samples and labels are stored
        sharded_asked = asked(fake_env)
        card = json.loads((tmp_path / "sharded" / "scorecard-results_openai-api_fake_ev.json").read_text())

    fake_env.reset()
    with Store(tmp_path / "single.db") as store:
        single = evaluate(store, src, tmp_path / "single")
    assert asked(fake_env) == sharded_asked  # every request once, over both shards
    assert comparable(merged.results) == comparable(single.results)
    assert merged.results["summary"]["calls_made"] == single.results["summary"]["calls_made"] == 6 + 4  # + labels
    assert (merged.score.n, merged.score.value) == (6, 0.3333)  # E1 and H1 right, of six
    single_card = json.loads((tmp_path / "single" / "scorecard-results_openai-api_fake_ev.json").read_text())
    assert {k: card[k] for k in ("score", "items", "cost_usd")} == {k: single_card[k] for k in ("score", "items",
                                                                                               "cost_usd")}


def test_merge_names_the_missing_shard(fake_env, tmp_path):
    src = instances(tmp_path / "calibrated.jsonl")
    fake_env.set_script(SCRIPT)
    with Store(tmp_path / "s.db") as store:
        evaluate(store, src, tmp_path / "out", shard="0/2")
        with pytest.raises(UserError, match=r"^shard 1/2 has no run of these settings"):
            evaluate(store, src, tmp_path / "out", merge_shards=2)
    res = CliRunner().invoke(app, ["eternal", "eval", str(src), "--model", "openai-api/fake/ev", "--shard", "2/2",
                                   "--db", str(tmp_path / "s.db")])  # fmt: skip
    assert res.exit_code == 2 and "--shard 2/2: write i/N with 0 <= i < N" in res.output
