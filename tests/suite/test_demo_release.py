"""The demo's last step on the fake server: the release of the sample papers, the guarded evaluation on it, and
the leaderboard of the demo's runs (the embedded model runs the same code in `make demo`)."""

from __future__ import annotations

import json
from dataclasses import replace

from helpers.cutoff import models_file
from helpers.lmb import CAL, GEN, JUDGE, papers, script  # noqa: F401 - papers is a fixture

from theorembench.cli.demo import run_release_demo
from theorembench.suite.demo import DemoSettings


def test_the_demo_releases_evaluates_under_the_guard_and_builds_the_leaderboard(fake_env, papers, tmp_path,  # noqa: F811
                                                                               monkeypatch, capsys):  # fmt: skip
    monkeypatch.setenv("COLUMNS", "250")
    # the fake generator's cutoff falls between monotone-subsequences (2026-10-06) and the other two papers
    monkeypatch.setenv("THEOREMBENCH_MODELS_FILE", str(models_file(tmp_path / "models.toml", pattern=GEN,
                                                                   cutoff="2026-10-31")))  # fmt: skip
    fake_env.set_script(script())
    settings = replace(DemoSettings(model=GEN, out_dir=tmp_path / "demo"),
                       lmb={**DemoSettings().lmb, "latex.check": False, "calibration.max_tokens": 100})
    run_release_demo(papers, settings=settings, db=None, accept=True)
    printed = capsys.readouterr().out
    manifest = json.loads((tmp_path / "demo" / "releases" / "2026-11-r1" / "manifest.json").read_text())
    assert manifest["release"] == "theorembench-2026-11-r1" and manifest["papers"] == 3
    # the sample paper under arXiv's non-exclusive licence (monotone-subsequences) has its text withheld
    withheld = manifest["licences"]["text_withheld"]
    assert all(r["papers"][0]["license"].startswith("http://arxiv.org") for r in manifest["items"]
               if r["id"] in withheld)  # fmt: skip
    board = json.loads((tmp_path / "demo" / "leaderboard" / "leaderboard.json").read_text())
    lmb = [e for e in board["entries"] if e["method"] == "lmb"]
    assert lmb and lmb[0]["release"] == "theorembench-2026-11-r1" and lmb[0]["model"] == GEN
    early = [r["id"].split("/", 1)[1] for r in manifest["items"] if r["first_version"] == "2026-10-06"]
    late = [r["id"].split("/", 1)[1] for r in manifest["items"] if r["first_version"] != "2026-10-06"]
    assert early and late
    assert lmb[0]["cutoff"] == f"exclude: cutoff 2026-10-31; {len(late)} counted, {len(early)} excluded"
    assert lmb[0]["n"] == len(late) and sorted(lmb[0]["cutoff_block"]["counted"]) == sorted(late)
    assert "leaderboard:" in printed and "theorembench-2026-11-r1" in printed
