"""`improof eval --cutoff-guard`: a problem is dated by when its version was written."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.cutoff import FAKE_MODEL, models_file
from helpers.improof import store  # noqa: F401 - a fixture
from helpers.improof_samples import ODD_SUMS_ID
from typer.testing import CliRunner

from theorembench.cli import app


def _eval(tmp_path: Path, guard: str, cutoff: str, out: str):
    mfile = models_file(tmp_path / f"{out}.toml", cutoff=cutoff)
    return CliRunner().invoke(app, ["improof", "eval", "--model", FAKE_MODEL, "--mode", "single-turn",
                                    "--cutoff-guard", guard, "--models-file", str(mfile), "--out",
                                    str(tmp_path / out), "--log-dir", str(tmp_path / "logs")],
                              catch_exceptions=False)  # fmt: skip


def test_improof_eval_excludes_problems_written_before_the_cutoff(store, fake_env, tmp_path: Path):  # noqa: F811
    fake_env.set_script({"default": {"reply": "\\boxed{1}"}})
    # the problem was imported today: long after a 2020 cutoff, long before a 2999 one
    res = _eval(tmp_path, "exclude", "2999-01", "late")
    assert res.exit_code == 2 and fake_env.requests == []
    assert res.output.startswith("error: no problem was written after openai-api/fake/m1's training-data cutoff "
                                 "2999-01-31: nothing to evaluate")  # fmt: skip
    res = _eval(tmp_path, "flag", "2020-01", "early")
    assert res.exit_code == 0, res.output
    [path] = (tmp_path / "early").glob("results_*.json")
    block = json.loads(path.read_text())["cutoff"]
    assert (block["guard"], block["cutoff"], block["after"], block["before"]) == ("flag", "2020-01-31",
                                                                                  [ODD_SUMS_ID], [])  # fmt: skip
    assert block["dates"][ODD_SUMS_ID]["source"] == "problem version"
    assert block["subsets"]["after"]["n"] == 1 and block["subsets"]["after"]["method"] == "wilson-mean"
    assert len(fake_env.requests) >= 1 and "1 counted, 0 excluded, 0 undated" in res.output
