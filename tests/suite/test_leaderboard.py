"""``theorembench leaderboard``: a static site of scorecards, rank ranges from paired tests, checked in Chromium."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.scorecards import write_card as _card
from typer.testing import CliRunner

from theorembench.cli import app
from theorembench.suite.leaderboard import cutoff_status, rank_ranges

runner = CliRunner()


def test_rank_ranges_separate_only_what_paired_tests_tell_apart():
    strong = {f"q{i}": 1.0 for i in range(30)}
    weak = {f"q{i}": 0.0 for i in range(30)}
    cards = [{"model": "a", "items": strong}, {"model": "b", "items": weak}, {"model": "c", "items": dict(strong)}]
    # a and c cannot be told apart (identical), both beat b on every shared item
    assert rank_ranges(cards) == {"a": (1, 2), "c": (1, 2), "b": (3, 3)}
    # two items only: a one-item lead is not significant, so neither model is ranked above the other
    assert rank_ranges([{"model": "x", "items": {"q0": 1.0, "q1": 0.0}},
                        {"model": "y", "items": {"q0": 0.0, "q1": 0.0}}]) == {"x": (1, 2), "y": (1, 2)}  # fmt: skip
    # no shared item: nothing to compare
    assert rank_ranges([{"model": "x", "items": {"q0": 1.0}}, {"model": "y", "items": {"q9": 0.0}}]) == {
        "x": (1, 2), "y": (1, 2)}


def test_cutoff_status_says_how_many_items_counted():
    assert cutoff_status({"cutoff": None}) == "no guard recorded"
    assert cutoff_status({"cutoff": {"guard": "off"}}) == "guard off"
    block = {"guard": "exclude", "cutoff": "2024-06", "counted": ["a", "b"], "excluded": ["c"], "unknown": ["d"]}
    assert cutoff_status({"cutoff": block}) == "exclude: cutoff 2024-06; 2 counted, 1 excluded, 1 undated"


def test_the_latest_run_counts_and_every_number_links_to_its_files(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")  # table rows on one line each
    runs = tmp_path / "results"
    runs.mkdir()
    _card(runs, "openai/gpt-x", [1.0] * 20, created="2026-11-01T00:00:00+00:00")
    _card(runs, "openai/gpt-x", [0.0] * 20, created="2026-11-29T00:00:00+00:00")  # the later run replaces it
    _card(runs, "local/smollm2", [1.0] * 20)
    site = tmp_path / "site"
    res = runner.invoke(app, ["leaderboard", str(runs), "--out", str(site)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    data = json.loads((site / "leaderboard.json").read_text())
    entries = {e["model"]: e for e in data["entries"]}
    assert set(entries) == {"openai/gpt-x", "local/smollm2"}
    assert entries["openai/gpt-x"]["score"]["value"] == 0.0 and entries["openai/gpt-x"]["rank"] == [2, 2]
    assert entries["local/smollm2"]["rank"] == [1, 1] and entries["local/smollm2"]["release"] == "theorembench-2026-11-r1"
    for e in entries.values():
        for link in e["links"].values():
            assert (site / link).is_file(), link
    html = (site / "index.html").read_text()
    assert "cdn" not in html.lower() and "https://" not in html.replace("https://vega.github.io/schema", "")
    for asset in ("vega.min.js", "vega-lite.min.js", "vega-embed.min.js"):
        assert (site / "vega" / asset).stat().st_size > 50_000
    assert "$0.0100" in res.output and "no guard recorded" in res.output


def test_a_models_variants_are_entries_of_their_own(tmp_path: Path):
    runs = tmp_path / "results"
    runs.mkdir()
    for variant, values in (("agentic", [1.0] * 10), ("single-turn", [0.0] * 10)):
        path = _card(runs, "local/smollm2", values, method="improof", release=None, created=f"2026-11-0{len(variant) % 9}")
        card = json.loads(path.read_text())
        path.unlink()
        (runs / f"scorecard-{variant}.json").write_text(json.dumps({**card, "variant": variant, "items_file": None}))
    res = runner.invoke(app, ["leaderboard", str(runs), "--out", str(tmp_path / "site")], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    entries = json.loads((tmp_path / "site" / "leaderboard.json").read_text())["entries"]
    assert [(e["model"], e["release"], e["rank"]) for e in entries] == [
        ("local/smollm2 (agentic)", "no release", [1, 1]), ("local/smollm2 (single-turn)", "no release", [2, 2])]


def test_no_scorecard_is_one_line(tmp_path: Path):
    res = runner.invoke(app, ["leaderboard", str(tmp_path), "--out", str(tmp_path / "site")])
    assert res.exit_code == 2 and "no scorecard under" in res.output and "Traceback" not in res.output


def test_evaluations_write_scorecards_that_the_leaderboard_ranks(fake_env, lmb_hard, tmp_path, monkeypatch):
    """Two models on the released split through `eval mcq`: one answers A everywhere, one E; the keyed labels
    (tests/golden, recorded once) hold A 4 times and E 10 times, so the leaderboard orders them from their own
    scorecards and links each number to the run's files."""
    from helpers.paths import GOLDEN

    monkeypatch.setenv("COLUMNS", "250")
    keyed = "".join(e["keyed"] for e in json.loads((GOLDEN / "lmb_202511_hard_shuffle_seed42.json").read_text())["items"])
    fake_env.set_script({"rules": [{"model": "m2", "reply": "\\boxed{E}"}, {"reply": "\\boxed{A}"}]})
    results = tmp_path / "results"
    for model in ("openai-api/fake/m1", "openai-api/fake/m2"):
        res = runner.invoke(app, ["eval", "mcq", str(lmb_hard), "--model", model, "--out",
                                  str(results / f"{model.rsplit('/', 1)[1]}.json"), "--cutoff-guard", "off"],
                            catch_exceptions=False)  # fmt: skip
        assert res.exit_code == 0, res.output
    cards = {p.name: json.loads(p.read_text()) for p in results.glob("scorecard-*.json")}
    assert set(cards) == {"scorecard-m1.json", "scorecard-m2.json"}
    m1, m2 = cards["scorecard-m1.json"], cards["scorecard-m2.json"]
    assert m1["method"] == "lmb" and m1["score"]["n"] == 29 and len(m1["items"]) == 29
    assert sum(m1["items"].values()) == keyed.count("A") == 4 and sum(m2["items"].values()) == keyed.count("E") == 10
    assert m1["release"] is None and m1["log"].endswith(".eval")
    site = tmp_path / "site"
    res = runner.invoke(app, ["leaderboard", str(results), "--out", str(site)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    entries = json.loads((site / "leaderboard.json").read_text())["entries"]
    assert entries[0]["model"] == "openai-api/fake/m2"
    for e in entries:
        assert (site / e["links"]["results"]).is_file() and (site / e["links"]["log"]).is_file()
