"""Loading item files: released format accepted, broken files refused with one clear line."""

from __future__ import annotations

import copy
import json
import subprocess

import pytest
from helpers.cli import PYTHON, cli_env, write_items

from theorembench.evaluate.mcq.items import (
    DatasetError,
    categories,
    is_substitution_resistant,
    load_dataset,
    month_of,
)


def test_released_split_loads(lmb_hard):
    ds = load_dataset(lmb_hard)
    assert len(ds.items) == 29
    assert ds.month == "202511"
    assert sum(is_substitution_resistant(it) for it in ds.items) == 14
    assert categories(next(it for it in ds.items if it.theorem_type == "unknown")) == ["unknown"]
    assert month_of("2511.04651v1::alt1") == "202511"
    assert month_of("math/0601001") is None


def test_jsonl_is_accepted(lmb_hard, tmp_path):
    raw = json.loads(lmb_hard.read_text())[:3]
    path = tmp_path / "items.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in raw) + "\n")
    assert [it.id for it in load_dataset(path).items] == [r["id"] for r in raw]


def _broken(lmb_hard, mutate):
    raw = json.loads(lmb_hard.read_text())[:4]
    raw = copy.deepcopy(raw)
    mutate(raw)
    return raw


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda r: r[2]["mcq"].pop("question"), "item 2 ('2511.11409v1::orig'): field 'mcq.question'"),
        (lambda r: r[1]["mcq"]["choices"].pop(), "item 1 ('2511.19681v1::orig'): field 'mcq.choices'"),
        (lambda r: r[3]["mcq"]["correct_choice"].update(label="B"), "item 3 ('2511.23123v1::orig'): field 'mcq.correct_choice.label'"),
        (lambda r: r[0]["mcq"]["choices"][1].update(label="Z"), "item 0 ('2511.04651v1::alt1'): field 'mcq.choices'"),
        (lambda r: r[2].pop("id"), "item 2: field 'id'"),
        (lambda r: r[3].update(id=r[0]["id"]), "field 'id': duplicate of item 0"),
        (lambda r: r[1]["mcq"]["choices"][0].update(text=7), "item 1 ('2511.19681v1::orig'): field 'mcq.choices.0.text'"),
    ],
)
def test_broken_item_names_item_and_field(lmb_hard, tmp_path, mutate, needle):
    path = write_items(tmp_path / "bad.json", _broken(lmb_hard, mutate))
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    message = str(info.value)
    assert needle in message
    assert "\n" not in message


def test_not_json(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('[{"id": "a",')
    with pytest.raises(DatasetError, match="not valid JSON"):
        load_dataset(path)


def test_cli_malformed_file_one_line_error_nonzero_exit_writes_nothing(lmb_hard, tmp_path, fake_env):
    bad = write_items(tmp_path / "bad.json", _broken(lmb_hard, lambda r: r[2]["mcq"].pop("question")))
    before = {p for p in tmp_path.rglob("*")}
    proc = subprocess.run(
        [PYTHON, "-m", "theorembench.cli", "eval", "mcq", str(bad), "--model", "openai-api/fake/m",
         "--out", str(tmp_path / "r.json")],
        capture_output=True, text=True, env=cli_env(), cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert "item 2 ('2511.11409v1::orig'): field 'mcq.question'" in lines[0]
    after = {p for p in tmp_path.rglob("*")}
    assert after == before  # no results, no store, no log
    assert fake_env.stats()["total_requests"] == 0
