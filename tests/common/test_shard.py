"""``--shard i/N``: the partition of ids between shards (disjoint, complete, the same in every process)."""

from __future__ import annotations

import hashlib
import json
import subprocess

import pytest
from helpers.cli import PYTHON, cli_env

from theorembench.common.errors import InvalidSetting
from theorembench.common.shard import Shard, check_shard_count, parse_shard, shard_settings

IDS = [f"2511.{n:05d}v1::thm{k}" for n in range(40) for k in range(3)]


def expected_shard(key: str, count: int) -> int:
    """The documented rule, written out here: SHA-256 of the id, its first 8 bytes as a big-endian number, mod N."""
    return int(hashlib.sha256(key.encode()).hexdigest()[:16], 16) % count


@pytest.mark.parametrize("count", [1, 2, 3, 7])
def test_shards_are_disjoint_and_cover_every_id(count):
    owned = [Shard(i, count).select(IDS) for i in range(count)]
    assert sorted(key for ids in owned for key in ids) == sorted(IDS)  # every id once, in exactly one shard
    for i, ids in enumerate(owned):
        assert ids == [key for key in IDS if expected_shard(key, count) == i]  # the rule, and the ids' own order
    if count > 1:
        assert all(owned)  # 120 ids: no shard is left empty


def test_select_takes_a_key():
    rows = [{"id": key} for key in IDS[:10]]
    shard = Shard(1, 2)
    assert shard.select(rows, key=lambda r: r["id"]) == [r for r in rows if expected_shard(r["id"], 2) == 1]


def test_the_partition_is_the_same_in_another_process():
    """Python's hash() of a string changes with every process (PYTHONHASHSEED); the partition must not."""
    code = ("import json, sys; from theorembench.common.shard import Shard; "
            "ids = json.loads(sys.stdin.read()); print(json.dumps([Shard(1, 3).owns(k) for k in ids]))")  # fmt: skip
    answers = []
    for seed in ("1", "2"):
        done = subprocess.run([PYTHON, "-c", code], input=json.dumps(IDS), capture_output=True, text=True,
                              env=cli_env(PYTHONHASHSEED=seed), timeout=60, check=True)  # fmt: skip
        answers.append(json.loads(done.stdout))
    assert answers[0] == answers[1] == [Shard(1, 3).owns(k) for k in IDS]


def test_parse():
    assert parse_shard("0/2") == Shard(0, 2) and parse_shard(" 1 / 2 ") == Shard(1, 2)
    assert parse_shard(None) is None
    assert str(Shard(3, 4)) == "3/4"


@pytest.mark.parametrize("text", ["3/2", "2/2", "0/0", "-1/2", "1", "a/b", "1/2/3", ""])
def test_bad_shard_is_one_line_naming_the_setting(text):
    with pytest.raises(InvalidSetting) as caught:
        parse_shard(text)
    message = str(caught.value)
    assert message.startswith(f"shard {text}:") and "0 <= i < N" in message and "\n" not in message
    # the command line names the option instead
    assert caught.value.naming("--shard").startswith(f"--shard {text}: write i/N with 0 <= i < N")


def test_bad_merge_count_and_both_settings():
    assert check_shard_count(None) is None and check_shard_count(2) == 2
    with pytest.raises(InvalidSetting, match="^merge_shards 0: give the number of shards"):
        check_shard_count(0)
    assert shard_settings("1/3", None) == (Shard(1, 3), None) and shard_settings(None, 3) == (None, 3)
    with pytest.raises(InvalidSetting, match="^shard goes to each shard's run, not to their merge"):
        shard_settings("0/2", 2)
