"""The leaderboard's site in Chromium at phone and desktop widths (its own module: the browser's event loop)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.browser_harness import LiveServer
from helpers.scorecards import write_card as _card
from typer.testing import CliRunner

from theorembench.cli import app

runner = CliRunner()


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
