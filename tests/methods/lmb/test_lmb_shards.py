"""``lmb build --shard i/N`` and ``--merge-shards N``: the papers split between shards, then one build of them all."""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from pathlib import Path

from helpers.lmb import (
    CAL,
    GEN,
    JUDGE,
    papers,  # noqa: F401 - a fixture
    runner,
    script,
    steps,
    write_config,
)

from theorembench.cli import app

SPLITS = ("full", "ge5", "ge5_hard", "pool")


def by_rule(key: str, count: int) -> int:
    """The documented partition, written out here: SHA-256 of the id, first 8 bytes big-endian, mod N."""
    return int(hashlib.sha256(key.encode()).hexdigest()[:16], 16) % count


def lmb_build(folder: Path, paper_ids: list[str], cfg: Path, *extra: str):
    args = ["lmb", "build", "--month", "2026-11", "--generator", GEN, "--judge", JUDGE, "--calibrator", CAL,
            "--out-dir", str(folder / "out"), "--concurrency", "1", "--config", str(cfg), *extra]  # fmt: skip
    for pid in paper_ids:
        args += ["--paper", pid]
    return runner.invoke(app, args, catch_exceptions=False)


def outputs(folder: Path) -> tuple[dict, dict]:
    split = {name: json.loads((folder / "out" / f"qaEval_202611_{name}.json").read_text()) for name in SPLITS}
    return split, json.loads((folder / "out" / "summary.json").read_text())


def generations(fake) -> list[str]:
    """The request bodies the server answered, each as a string (what was asked, whoever asked it)."""
    return sorted(json.dumps(r["body"]["messages"], sort_keys=True) for r in fake.requests)


def test_sharded_build_equals_one_build_and_pays_for_no_call_twice(fake_env, papers, tmp_path):  # noqa: F811
    assert {by_rule(p, 2) for p in papers} == {0, 1}  # the sample papers fall in both shards
    fake_env.set_script(script())
    cfg = write_config(tmp_path)
    sharded, single = tmp_path / "sharded", tmp_path / "single"

    for i in (0, 1):
        res = lmb_build(sharded, papers, cfg, "--shard", f"{i}/2")
        assert res.exit_code == 0, res.output
        assert f"shard {i}/2" in res.output and "--merge-shards 2" in res.output
        assert not (sharded / "out").exists()  # a shard writes no split: the merge does
        # the shards so far have built exactly their own papers' theorems
        built = {row["key"].split("::")[0] for row in steps(tmp_path, "sketch")}
        assert built == {p for p in papers if by_rule(p, 2) <= i}
    theorem_calls = len(fake_env.requests)
    res = lmb_build(sharded, papers, cfg, "--shard", "0/2")  # a shard run again asks nothing
    assert res.exit_code == 0 and len(fake_env.requests) == theorem_calls
    res = lmb_build(sharded, papers, cfg, "--merge-shards", "2")
    assert res.exit_code == 0, res.output
    asked_sharded = generations(fake_env)

    # the same build in one run, on a store of its own
    fake_env.reset()
    other = str(tmp_path / "single.db")
    root = resources.files("theorembench.data") / "papers"
    folders = sorted(str(p) for p in Path(str(root)).iterdir() if p.is_dir())
    assert runner.invoke(app, ["papers", "add", *folders, "--no-llm", "--db", other]).exit_code == 0
    res = lmb_build(single, papers, cfg, "--db", other)
    assert res.exit_code == 0, res.output
    asked_single = generations(fake_env)

    assert asked_sharded == asked_single  # every request once, over the shards and the merge together
    (split_a, summary_a), (split_b, summary_b) = outputs(sharded), outputs(single)
    assert split_a == split_b and split_a["ge5_hard"]  # the same items, down to the hard split
    assert summary_a == summary_b  # funnel, rejections, the calls and cost of every stage


def test_merge_before_every_shard_has_run_names_the_shard(fake_env, papers, tmp_path):  # noqa: F811
    fake_env.set_script(script())
    cfg = write_config(tmp_path)
    assert lmb_build(tmp_path, papers, cfg, "--shard", "1/2").exit_code == 0
    res = lmb_build(tmp_path, papers, cfg, "--merge-shards", "2")
    assert res.exit_code == 2 and "error: shard 0/2 has no run of these settings" in res.output
    assert not (tmp_path / "out").exists()
