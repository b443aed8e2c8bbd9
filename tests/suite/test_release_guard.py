"""A release of the sample papers under the contamination guard: a model whose cutoff falls between the papers'
first versions is scored on the later papers' items only (`exclude`, the default for a release), or on all with
both sides reported (`flag`)."""

from __future__ import annotations

import json

from helpers.cutoff import models_file
from helpers.lmb import CAL, GEN, JUDGE, papers, script, write_config  # noqa: F401 - papers is a fixture
from typer.testing import CliRunner

from theorembench.cli import app
from theorembench.store import open_store
from theorembench.store.papers import PaperRepo

runner = CliRunner()
MODEL = "openai-api/fake/m1"


def test_exclude_scores_only_items_of_papers_after_the_cutoff(fake_env, papers, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setenv("COLUMNS", "250")
    with open_store(None) as st:  # the sample papers' own metadata (theorembench-paper.json), as stored
        dated = {p: PaperRepo(st).get(p)["published"] for p in papers}
    # monotone-subsequences: 2026-10-06; derangements: 2026-11-03; primorial-bound: 2026-11-12
    assert sorted(dated.values()) == ["2026-10-06", "2026-11-03", "2026-11-12"]
    fake_env.set_script(script())
    cfg = tmp_path / "release.toml"
    cfg.write_text(f'[models]\ngenerator = "{GEN}"\njudges = ["{JUDGE}"]\ncalibrator = "{CAL}"\n'
                   f'[methods]\neternal = false\nhybrid = false\nlmb_config = "{write_config(tmp_path)}"\n'
                   "[splits]\nprivate_fraction = 0.0\n")  # fmt: skip
    res = runner.invoke(app, ["release", "build", "--month", "2026-11", "--config", str(cfg), "--out",
                              str(tmp_path / "releases"), "--concurrency", "1",
                              *[x for p in papers for x in ("--paper", p)]], catch_exceptions=False)  # fmt: skip
    assert res.exit_code == 0, res.output
    folder = tmp_path / "releases" / "2026-11-r1"
    manifest = json.loads((folder / "manifest.json").read_text())
    hard = folder / manifest["methods"]["lmb"]["files"]["hard"]
    items = json.loads(hard.read_text())
    early = sorted(it["id"] for it in items if dated[it["paper_id"]] == "2026-10-06")
    late = sorted(it["id"] for it in items if dated[it["paper_id"]] != "2026-10-06")
    assert early and late, items
    registry = models_file(tmp_path / "models.toml", cutoff="2026-10-31")
    fake_env.set_script({"rules": [{"reply": "\\boxed{A}"}]})
    fake_env.reset()
    out = tmp_path / "r.json"
    res = runner.invoke(app, ["eval", "mcq", str(hard), "--model", MODEL, "--models-file", str(registry), "--out",
                              str(out)], catch_exceptions=False)  # fmt: skip
    assert res.exit_code == 0, res.output
    block = json.loads(out.read_text())["summary"]["cutoff"]
    assert block["guard"] == "exclude" and block["cutoff"] == "2026-10-31"
    assert sorted(block["counted"]) == late and sorted(block["excluded"]) == early
    assert len(fake_env.requests) == len(late)  # nothing was asked of the items the model could have seen
    card = json.loads((tmp_path / "scorecard-r.json").read_text())
    assert card["release"]["release"] == "theorembench-2026-11-r1" and card["score"]["n"] == len(late)
    assert f"{len(late)} counted, {len(early)} excluded" in res.output
    flagged = tmp_path / "f.json"
    res = runner.invoke(app, ["eval", "mcq", str(hard), "--model", MODEL, "--models-file", str(registry),
                              "--cutoff-guard", "flag", "--out", str(flagged)], catch_exceptions=False)  # fmt: skip
    assert res.exit_code == 0, res.output
    block = json.loads(flagged.read_text())["summary"]["cutoff"]
    assert block["subsets"]["before"]["n"] == len(early) and block["subsets"]["after"]["n"] == len(late)
