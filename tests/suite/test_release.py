"""``release build``: a month's items over every method, traced to their papers, split, versioned, retired."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from helpers.lmb import CAL, GEN, JUDGE, papers, script, write_config  # noqa: F401 - papers is a fixture
from typer.testing import CliRunner

from theorembench.cli import app
from theorembench.suite.release_items import changes, is_private, source_papers

runner = CliRunner()


def _release_config(tmp_path: Path, private: float = 0.5) -> Path:
    lmb = write_config(tmp_path)
    path = tmp_path / "release.toml"
    path.write_text(f'[models]\ngenerator = "{GEN}"\njudges = ["{JUDGE}"]\ncalibrator = "{CAL}"\n'
                    f'[methods]\neternal = false\nhybrid = false\nlmb_config = "{lmb}"\n'
                    f"[splits]\nprivate_fraction = {private}\n")  # fmt: skip
    return path


def _build(tmp_path: Path, paper_ids: list[str], cfg: Path) -> tuple[int, str]:
    args = ["release", "build", "--month", "2026-11", "--config", str(cfg), "--out", str(tmp_path / "releases"),
            "--concurrency", "1", *[x for p in paper_ids for x in ("--paper", p)]]  # fmt: skip
    res = runner.invoke(app, args, catch_exceptions=False)
    return res.exit_code, res.output


def test_a_release_traces_every_item_to_its_paper_and_an_unchanged_rebuild_makes_no_new_version(
        fake_env, papers, tmp_path):  # noqa: F811
    fake_env.set_script(script())
    cfg = _release_config(tmp_path)
    code, output = _build(tmp_path, papers, cfg)
    assert code == 0, output
    folder = tmp_path / "releases" / "2026-11-r1"
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["release"] == "theorembench-2026-11-r1" and manifest["month"] == "2026-11"
    assert set(manifest["prompts"]) == {"lmb", "eternal", "hybrid"} and manifest["code"]["code_digest"]
    hard = json.loads((folder / manifest["methods"]["lmb"]["files"]["hard"]).read_text())
    rows = manifest["items"]
    assert hard and [r["id"] for r in rows] == [f"lmb/{it['id']}" for it in hard]
    for row, item in zip(rows, hard, strict=True):
        assert [p["paper_id"] for p in row["papers"]] == [item["paper_id"]]
        assert row["split"] == ("private" if is_private("theorembench", row["id"], 0.5) else "public")
        assert row["retired"] is None and "license" in row["papers"][0] and "first_version" in row["papers"][0]
    assert manifest["methods"]["lmb"]["counts"]["items"] == len(hard) and manifest["changes"] is None
    audit = manifest["shortcut_audit"]  # the LMB build's audit, summarised: which baselines beat chance
    assert isinstance(audit["flagged"], list) and (folder / audit["file"]).is_file()
    assert audit["meta_option"]["shown"] == sum(1 for it in hard if any(
        c["text"].startswith("One of the remaining options is correct") for c in
        [it["mcq"]["correct_choice"], *it["mcq"]["choices"]]))  # fmt: skip
    asked = len(fake_env.requests)
    code, output = _build(tmp_path, papers, cfg)  # unchanged: the same release, no model call
    assert code == 0 and "unchanged" in output and len(fake_env.requests) == asked
    assert not (tmp_path / "releases" / "2026-11-r2").exists()


def test_a_changed_release_is_a_new_version_listing_what_changed_and_carrying_retirements(fake_env, papers,  # noqa: F811
                                                                                        tmp_path):  # fmt: skip
    fake_env.set_script(script())
    code, output = _build(tmp_path, papers, _release_config(tmp_path, private=0.0))
    assert code == 0, output
    r1 = tmp_path / "releases" / "2026-11-r1"
    first = json.loads((r1 / "manifest.json").read_text())
    item = first["items"][0]["id"]
    res = runner.invoke(app, ["release", "retire", str(r1), item, "--date", "2026-12-01", "--reason", "leaked"])
    assert res.exit_code == 0, res.output
    retired = json.loads((r1 / "manifest.json").read_text())
    assert retired["items"][0]["retired"] == "2026-12-01" and retired["retirements"][0]["reason"] == "leaked"
    code, output = _build(tmp_path, papers, _release_config(tmp_path, private=1.0))  # every item private now
    assert code == 0, output
    second = json.loads((tmp_path / "releases" / "2026-11-r2" / "manifest.json").read_text())
    assert second["previous"] == "theorembench-2026-11-r1" and second["items"][0]["retired"] == "2026-12-01"
    assert second["changes"]["split_changed"] == sorted(r["id"] for r in first["items"])
    assert second["changes"]["added"] == [] and second["changes"]["removed"] == []
    assert all(r["split"] == "private" for r in second["items"])
    bad = runner.invoke(app, ["release", "retire", str(r1), "lmb/nothing", "--date", "2026-12-01"])
    assert bad.exit_code == 2 and "not an item" in bad.output


def test_a_bad_month_or_missing_paper_is_one_line_and_nothing_is_built(fake_env, tmp_path):
    cfg = _release_config(tmp_path)
    res = runner.invoke(app, ["release", "build", "--month", "2026-13", "--config", str(cfg), "--paper", "x"])
    assert res.exit_code == 2 and "--month must be YYYY-MM" in res.output
    code, output = _build(tmp_path, ["2511.99999v1"], cfg)
    assert code == 2 and "not in the store: 2511.99999v1" in output and fake_env.requests == []
    assert not (tmp_path / "releases").exists()


def test_items_name_their_papers_splits_are_stable_and_changes_are_listed():
    known = ["local:a-1", "local:a-10", "2511.04651v1"]
    question = {"items": [{"origin": "local:a-10:lem:x"}, {"origin": "local:a-1:def:y"}, {"origin": "stacks:0ABC"},
                          {"origin": "2511.04651v1:thm:main"}]}  # fmt: skip
    assert source_papers("hybrid", question, known) == ["2511.04651v1", "local:a-1", "local:a-10"]
    assert source_papers("eternal", {"paper_id": None}, known) == []
    draws = [is_private("s", f"lmb/{i}", 0.25) for i in range(400)]
    assert draws == [is_private("s", f"lmb/{i}", 0.25) for i in range(400)] and 70 < sum(draws) < 130
    old = [{"id": "a", "split": "public", "retired": None}, {"id": "b", "split": "public", "retired": None}]
    new = [{"id": "b", "split": "private", "retired": "2026-12-01"}, {"id": "c", "split": "public", "retired": None}]
    assert changes(new, old) == {"added": ["c"], "removed": ["a"], "retired": ["b"], "split_changed": ["b"]}
    assert changes(new, None) is None and date(2026, 12, 1).isoformat() == "2026-12-01"
