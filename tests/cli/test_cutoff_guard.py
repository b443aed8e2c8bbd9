"""`--cutoff-guard` and `--models-file` on `eval mcq`, `hybrid eval` and `eternal eval`, against the fake server."""

from __future__ import annotations

import json

from helpers.cutoff import FAKE_MODEL, eternal_instance, hybrid_folder, mcq_file, models_file
from typer.testing import CliRunner

from theorembench.cli import app

runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_eval_mcq_exclude_asks_only_the_new_items_and_says_so(fake_env, tmp_path):
    items = mcq_file(tmp_path / "items.json", ["2403.00001", "2407.00002", "2409.00003"])
    res = invoke("eval", "mcq", str(items), "--model", FAKE_MODEL, "--out", str(tmp_path / "r.json"), "--no-log",
                 "--cutoff-guard", "exclude", "--models-file", str(models_file(tmp_path / "m.toml")),
                 "--db", str(tmp_path / "s.db"))  # fmt: skip
    assert res.exit_code == 0, res.output
    assert len(fake_env.requests) == 2
    assert "cutoff guard exclude: openai-api/fake/m1, cutoff 2024-06-30 (stated cutoff, " in res.output
    assert "2 counted, 1 excluded, 0 undated" in res.output
    block = json.loads((tmp_path / "r.json").read_text())["summary"]["cutoff"]
    assert block["excluded"] == ["2403.00001"]


def test_eval_mcq_unknown_model_warns(fake_env, tmp_path):
    items = mcq_file(tmp_path / "items.json", ["2403.00001", "2407.00002"])
    res = invoke("eval", "mcq", str(items), "--model", FAKE_MODEL, "--out", str(tmp_path / "r.json"), "--no-log",
                 "--cutoff-guard", "exclude", "--db", str(tmp_path / "s.db"))  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "warning: openai-api/fake/m1 is not in the model registry" in res.output
    assert len(fake_env.requests) == 2 and "cutoff unknown: 2 counted, 0 excluded" in res.output


def test_a_bad_guard_or_models_file_is_one_error_line_naming_the_option(fake_env, tmp_path):
    items = mcq_file(tmp_path / "items.json", ["2403.00001"])
    res = invoke("eval", "mcq", str(items), "--model", FAKE_MODEL, "--cutoff-guard", "sometimes")
    assert res.exit_code == 2
    assert res.output.strip() == "error: --cutoff-guard must be exclude, flag or off, not 'sometimes'"
    bad = tmp_path / "bad.toml"
    bad.write_text('[models.x]\npatterns = ["a/b"]\ncutoff = "June 2024"\nsource = "s"\n')
    res = invoke("eval", "mcq", str(items), "--model", FAKE_MODEL, "--models-file", str(bad))
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1
    assert res.output.startswith("error: --models-file ") and "'June 2024' is not a date" in res.output
    res = invoke("hybrid", "eval", str(tmp_path), "--model", FAKE_MODEL, "--cutoff-guard", "never")
    assert res.exit_code == 2 and "--cutoff-guard must be exclude, flag or off" in res.output
    assert fake_env.requests == []


def test_hybrid_eval_guard_dates_a_question_by_its_newest_paper(fake_env, tmp_path):
    fake_env.set_script({"default": {"reply": "\\boxed{1, 2}"}})
    folder = hybrid_folder(tmp_path / "hb", {
        "q-old": ["2403.00001:s1", "2403.00001:s2", "2403.00001:d1"],
        "q-mixed": ["2403.00001:s3", "2407.00002:thm:main", "2403.00001:d2"],  # a July paper among them: new
        "q-stacks": ["stacks:0ABC", "stacks:0ABD", "stacks:0ABE"],  # no paper: undated
    })  # fmt: skip
    mfile = str(models_file(tmp_path / "m.toml"))
    res = invoke("hybrid", "eval", str(folder), "--model", FAKE_MODEL, "--mode", "generation", "--cutoff-guard",
                 "exclude", "--models-file", mfile, "--out", str(tmp_path / "r.json"))  # fmt: skip
    assert res.exit_code == 0, res.output
    assert len(fake_env.requests) == 1
    doc = json.loads((tmp_path / "r.json").read_text())
    assert (doc["cutoff"]["counted"], doc["cutoff"]["excluded"], doc["cutoff"]["unknown"]) == (
        ["q-mixed"], ["q-old"], ["q-stacks"])
    assert doc["generation"]["summary"]["tight"]["n"] == 1
    res = invoke("hybrid", "eval", str(folder), "--model", FAKE_MODEL, "--mode", "generation", "--cutoff-guard",
                 "flag", "--models-file", mfile, "--out", str(tmp_path / "f.json"))  # fmt: skip
    assert res.exit_code == 0, res.output
    subsets = json.loads((tmp_path / "f.json").read_text())["cutoff"]["subsets"]
    # the fake names items 1 and 2, the correct ones, on every question: each subset scores 100%
    assert {k: (v["n"], v["value"]) for k, v in subsets.items()} == {"before": (1, 1.0), "after": (1, 1.0),
                                                                     "unknown": (1, 1.0)}  # fmt: skip
    assert "  before the cutoff: 100.0% [20.6–100.0] n=1" in res.output  # Wilson at 1 of 1: 1/(1+z²), stored 0.2065


def test_eternal_eval_guard_by_the_instances_paper(fake_env, tmp_path):
    fake_env.set_script({"default": {"reply": "So the value is \\boxed{12}."}})
    src = tmp_path / "c.jsonl"
    rows = [eternal_instance("OLD", "2403.00001"), eternal_instance("NEW", "2409.00003"),
            eternal_instance("NONE", None)]  # fmt: skip
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = invoke("eternal", "eval", str(src), "--model", FAKE_MODEL, "--out", str(tmp_path / "ev"), "--db",
                 str(tmp_path / "s.db"), "--cutoff-guard", "exclude", "--models-file",
                 str(models_file(tmp_path / "m.toml")))  # fmt: skip
    assert res.exit_code == 0, res.output
    assert len(fake_env.requests) == 1 and "PROBLEM-NEW" in json.dumps(fake_env.requests[0]["body"])
    doc = json.loads((tmp_path / "ev" / "results_openai-api_fake_m1.json").read_text())
    assert (doc["cutoff"]["counted"], doc["cutoff"]["excluded"], doc["cutoff"]["unknown"]) == (
        ["t_cut#NEW"], ["t_cut#OLD"], ["t_cut#NONE"])
    assert [i["instance_id"] for i in doc["items"]] == ["t_cut#NEW"]
    assert "1 counted, 1 excluded, 1 undated" in res.output
