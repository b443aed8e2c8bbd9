"""``theorembench leaderboard``: a static site of scorecards, rank ranges from paired tests, checked in Chromium."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.browser_harness import LiveServer
from typer.testing import CliRunner

from theorembench.cli import app
from theorembench.suite.leaderboard import cutoff_status, rank_ranges

runner = CliRunner()


def _card(folder: Path, model: str, values: list[float], *, method: str = "lmb", release: str | None = "theorembench-2026-11-r1",
          created: str = "2026-11-30T10:00:00+00:00", cutoff: dict | None = None) -> Path:  # fmt: skip
    """A scorecard as an evaluation writes it, with the results and log files it links to."""
    stem = f"{method}-{model.replace('/', '_')}-{created[:10]}"
    results = folder / f"{stem}.json"
    results.write_text(json.dumps({"model": model}))
    log = folder / f"{stem}.eval"
    log.write_bytes(b"PK-not-read-by-the-leaderboard")
    k, n = int(sum(values)), len(values)
    card = {"scorecard": 1, "method": method, "kind": "eval.mcq", "model": model, "run_id": f"run-{stem}",
            "created": created, "release": {"release": release} if release else None, "items_file": "items.json",
            "score": {"value": k / n, "ci95": [max(0.0, k / n - 0.2), min(1.0, k / n + 0.2)], "n": n, "errors": 1,
                      "method": "wilson"},
            "items": {f"q{i}": v for i, v in enumerate(values)},
            "breakdown": {"by": "theorem_type", "groups": {"Existence": {"value": 0.5, "ci95": [0.1, 0.9], "n": 4,
                                                                        "errors": 0, "method": "wilson"}}},
            "cost_usd": 0.3, "cost_per_item": 0.01, "cutoff": cutoff, "isolation": None, "results": str(results),
            "log": str(log)}  # fmt: skip
    path = folder / f"{stem}.scorecard.json"
    path.write_text(json.dumps(card))
    return path


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


def test_no_scorecard_is_one_line(tmp_path: Path):
    res = runner.invoke(app, ["leaderboard", str(tmp_path), "--out", str(tmp_path / "site")])
    assert res.exit_code == 2 and "no scorecard under" in res.output and "Traceback" not in res.output


@pytest.fixture
def platform(tmp_path: Path):
    """The leaderboard's site served as plain static files (what any static host does)."""
    from starlette.applications import Starlette
    from starlette.staticfiles import StaticFiles

    runs = tmp_path / "results"
    runs.mkdir()
    guard = {"guard": "flag", "cutoff": "2024-06", "counted": ["q1"], "excluded": [], "unknown": []}
    for i, model in enumerate(("openai/gpt-5-2025-08-07", "anthropic/claude-opus-4-1-with-a-long-model-name",
                               "local/smollm2")):  # fmt: skip
        _card(runs, model, [1.0] * (30 - 10 * i) + [0.0] * (10 * i), cutoff=guard)
        _card(runs, model, [1.0] * (10 - 3 * i) + [0.0] * (3 * i), method="eternal", release=None)
    site = tmp_path / "site"
    res = runner.invoke(app, ["leaderboard", str(runs), "--out", str(site)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    app_ = Starlette()
    app_.mount("/", StaticFiles(directory=str(site), html=True))
    server = LiveServer(app_).start(ready_path="/index.html")
    yield server
    server.stop()


@pytest.mark.browser
@pytest.mark.parametrize("width", [390, 1440])
def test_the_leaderboard_renders_its_charts_and_reads_at_phone_and_desktop_widths(page, browser_log, width):
    page.set_viewport_size({"width": width, "height": 900})
    page.goto("/index.html")
    page.wait_for_selector(".chart svg")
    charts = page.locator(".chart svg").count()
    assert charts == 4  # for each of the two methods: its scores and its breakdown by category
    assert page.locator("table").first.is_visible()
    # nothing wider than the screen but the tables, which scroll inside their own box
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert "IMProofBench" not in page.content() and page.get_by_text("LiveMathematicianBench").count() == 1
    browser_log.snap(page, f"leaderboard-{width}")
    page.get_by_role("link", name="results").first.click()
    assert '"model"' in page.content()
