"""The contamination guard: the registry of model cutoffs, item dates, and `evaluate_mcq` under each guard."""

from __future__ import annotations

import json
from datetime import date

import pytest
from helpers.cutoff import FAKE_MODEL, mcq_file, models_file

from theorembench.common.errors import InvalidSetting
from theorembench.evaluate.cutoff import cutoff_guard, relation
from theorembench.evaluate.cutoff_registry import Registry
from theorembench.evaluate.item_dates import arxiv_month, on_day
from theorembench.evaluate.mcq.service import MCQOptions, evaluate_mcq
from theorembench.store import Store
from theorembench.store.papers import PaperRepo

# March, July and September 2024: the fake model's cutoff (June 2024, read as June 30) falls between the first two
IDS = ["2403.00001", "2407.00002", "2409.00003"]


def test_builtin_registry_reads_stated_days_months_and_release_dates():
    reg = Registry.load()
    gpt5 = reg.lookup("openai/gpt-5-2025-08-07")
    assert (gpt5.key, gpt5.cutoff, gpt5.released) == ("gpt-5", date(2024, 9, 30), date(2025, 8, 7))
    assert gpt5.source == "https://platform.openai.com/docs/models/gpt-5"
    assert reg.lookup("openai/gpt-5-mini").cutoff == date(2024, 5, 31)  # not gpt-5's entry
    sonnet = reg.lookup("anthropic/claude-3-5-sonnet-20240620")
    assert (sonnet.cutoff, sonnet.stated["cutoff"]) == (date(2024, 4, 30), "2024-04")  # a month: its last day
    assert reg.lookup("anthropic/claude-sonnet-4-5-20250929").key == "claude-sonnet-4.5"
    assert reg.lookup("anthropic/claude-sonnet-4-20250514").key == "claude-sonnet-4"
    assert reg.lookup("grok/grok-4-0709").cutoff == date(2024, 11, 30)
    assert reg.lookup("vllm/Qwen/Qwen3-8B").key == "qwen3"
    smol = reg.lookup("local/smollm2")
    assert smol.cutoff is None and smol.effective_cutoff == (date(2024, 11, 30), "release date (no cutoff stated)")
    assert reg.lookup("openai-api/fake/m1") is None
    assert len(reg.entries) >= 15


def test_a_user_file_overrides_an_entry_and_adds_one(tmp_path, monkeypatch):
    mine = models_file(tmp_path / "mine.toml", pattern="openai/gpt-5", cutoff="2025-01-15", key="gpt-5")
    reg = Registry.load(mine)
    assert (reg.lookup("openai/gpt-5").cutoff, reg.lookup("openai/gpt-5").origin) == (date(2025, 1, 15), str(mine))
    other = models_file(tmp_path / "env.toml", cutoff="2023-02")
    monkeypatch.setenv("THEOREMBENCH_MODELS_FILE", str(other))
    assert Registry.load().lookup(FAKE_MODEL).cutoff == date(2023, 2, 28)
    assert Registry.load(mine).lookup("openai/gpt-5").cutoff == date(2025, 1, 15)  # the option's file beats the env's


def test_an_arxiv_month_is_after_only_when_it_starts_after_the_cutoff():
    june = arxiv_month("2406.01234v2")
    assert (june.earliest, june.latest) == (date(2024, 6, 1), date(2024, 6, 30))
    assert relation(june, date(2024, 6, 30)) == "before"  # a month-stated cutoff: the whole month is before
    assert relation(june, date(2024, 6, 15)) == "unknown"  # the same month as a dated cutoff: cannot tell
    assert relation(june, date(2024, 5, 31)) == "after"
    assert relation(on_day(date(2024, 6, 16), "store"), date(2024, 6, 15)) == "after"
    assert relation(on_day(date(2024, 6, 15), "store"), date(2024, 6, 15)) == "before"  # strictly after only


def _run(tmp_path, guard, ids=IDS, **extra):
    items = mcq_file(tmp_path / "items.json", ids)
    opts = MCQOptions(out_path=tmp_path / "r.json", write_log=False, cutoff_guard=guard, **extra)
    return evaluate_mcq(items, model=FAKE_MODEL, options=opts, db=tmp_path / "store.db")


def test_exclude_asks_and_scores_only_the_items_after_the_cutoff(fake_env, tmp_path):
    run = _run(tmp_path, "exclude", models_file=models_file(tmp_path / "m.toml"))
    assert len(fake_env.requests) == 2  # the March item made no call
    assert [r["id"] for r in run.results["detailed_results"]] == ["2407.00002", "2409.00003"]
    block = run.results["summary"]["cutoff"]
    assert (block["guard"], block["cutoff"], block["basis"]) == ("exclude", "2024-06-30", "stated cutoff")
    assert (block["counted"], block["excluded"], block["unknown"]) == (["2407.00002", "2409.00003"], ["2403.00001"], [])
    assert block["source"] == "https://example.org/fake-model-card"
    assert block["dates"]["2403.00001"] == {"date": "2024-03", "source": "arxiv id"}
    assert run.score.n == 2
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["cutoff"]["counted"] == block["counted"]


def test_flag_scores_every_item_and_each_side_apart(fake_env, tmp_path):
    run = _run(tmp_path, "flag", models_file=models_file(tmp_path / "m.toml"))
    assert len(fake_env.requests) == 3
    block = run.results["summary"]["cutoff"]
    assert (block["before"], block["after"]) == (["2403.00001"], ["2407.00002", "2409.00003"])
    subsets = block["subsets"]
    assert (subsets["before"]["n"], subsets["after"]["n"], subsets["unknown"]["n"]) == (1, 2, 0)
    correct = {r["id"]: r["is_correct"] for r in run.results["detailed_results"]}
    assert subsets["after"]["value"] == pytest.approx((correct["2407.00002"] + correct["2409.00003"]) / 2)
    assert subsets["before"]["method"] == "wilson"
    assert run.score.n == 3


def test_an_unknown_model_warns_and_is_evaluated_on_every_item(fake_env, tmp_path):
    run = _run(tmp_path, "exclude")
    assert len(fake_env.requests) == 3
    block = run.results["summary"]["cutoff"]
    assert block["cutoff"] is None and block["counted"] == IDS and block["excluded"] == []
    assert "not in the model registry" in block["warnings"][0]


def test_the_stored_paper_date_beats_the_arxiv_id(fake_env, tmp_path):
    with Store(tmp_path / "store.db") as st:  # first version on August 2: after the cutoff, though its id says March
        PaperRepo(st).upsert("2403.00001", source="arxiv", arxiv_id="2403.00001", meta=json.dumps({"created": "2024-08-02"}))
    run = _run(tmp_path, "exclude", models_file=models_file(tmp_path / "m.toml"))
    block = run.results["summary"]["cutoff"]
    assert block["counted"] == IDS and block["dates"]["2403.00001"] == {"date": "2024-08-02", "source": "store"}


def test_a_release_manifest_dates_its_items_and_makes_exclude_the_default(fake_env, tmp_path):
    folder = tmp_path / "2024-07-r1"
    (folder / "lmb").mkdir(parents=True)
    rows = [{"id": "lmb/x-early", "papers": [{"paper_id": "p1", "first_version": "2024-05-10"}], "first_version": "2024-05-10"},
            {"id": "lmb/x-late", "papers": [{"paper_id": "p2", "first_version": "2024-07-10"}], "first_version": "2024-07-10"}]  # fmt: skip
    (folder / "manifest.json").write_text(json.dumps({"release": "theorembench-2024-07-r1", "items": rows}))
    items = mcq_file(folder / "lmb" / "items.json", ["x-early", "x-late", "x-undated"])
    opts = MCQOptions(out_path=tmp_path / "r.json", write_log=False, models_file=models_file(tmp_path / "m.toml"))
    run = evaluate_mcq(items, model=FAKE_MODEL, options=opts, db=tmp_path / "store.db")
    block = run.results["summary"]["cutoff"]
    assert block["guard"] == "exclude"
    assert (block["counted"], block["excluded"], block["unknown"]) == (["x-late"], ["x-early"], ["x-undated"])
    assert len(fake_env.requests) == 1


def test_a_bad_guard_value_is_refused_before_any_work(tmp_path):
    with pytest.raises(InvalidSetting) as info:
        cutoff_guard("sometimes", FAKE_MODEL)
    assert str(info.value) == "cutoff_guard must be exclude, flag or off, not 'sometimes'"
