"""`theorembench lmb build` and the LaTeX check: an item is stored as checked only when it was checked."""

from __future__ import annotations

import pytest
from helpers.lmb import CAL, GEN, JUDGE, build, papers, runner, script, steps, write_config  # noqa: F401

from theorembench.cli import app
from theorembench.latex import check as lc
from theorembench.latex.check import LatexReport


def test_build_refuses_to_start_when_an_engine_is_missing(fake_env, papers, tmp_path, monkeypatch) -> None:
    empty = tmp_path / "no-engines"
    empty.mkdir()
    monkeypatch.setenv(lc.PATH_ENV, str(empty))  # neither node nor pdflatex can be found
    fake_env.set_script(script())
    cfg = write_config(tmp_path, latex={"check": True})
    args = ["lmb", "build", "--month", "2026-11", "--generator", GEN, "--judge", JUDGE, "--calibrator", CAL,
            "--out-dir", str(tmp_path / "out"), "--config", str(cfg), "--paper", papers[0]]  # fmt: skip
    res = runner.invoke(app, args)
    assert res.exit_code == 2, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1, res.output
    assert lines[0].startswith("error: the LaTeX check cannot run: node not found")
    assert "pdflatex not found" in lines[0] and "--no-latex-check" in lines[0]
    assert fake_env.requests == []  # refused before any model call
    assert not (tmp_path / "out").exists()


def test_an_incomplete_check_fails_the_step_and_runs_again(fake_env, papers, tmp_path, monkeypatch) -> None:
    """Nothing wrong found, but not everything checked: the step is failed (not stored as checked)."""
    calls: list[dict[str, str]] = []

    async def incomplete(strings: dict[str, str], *, preamble: str = "") -> LatexReport:
        calls.append(dict(strings))
        return LatexReport(checked={"katex": 4, "pdflatex": 0},
                           skipped=["pdflatex: 6 string(s) not checked (time budget of 60 s spent)"])  # fmt: skip

    async def complete(strings: dict[str, str], *, preamble: str = "") -> LatexReport:
        return LatexReport(checked={"katex": 4, "pdflatex": len(strings)})

    monkeypatch.setattr(lc, "available", lambda: {"katex": None, "pdflatex": None})
    monkeypatch.setattr(lc, "check_item_async", incomplete)
    fake_env.set_script(script())
    cfg = write_config(tmp_path, latex={"check": True})
    _res, split, _summary = build(tmp_path, papers[:1], cfg=cfg)
    rows = steps(tmp_path, "latex")
    assert calls and rows
    assert {r["status"] for r in rows} == {"failed"}
    assert all("LaTeX check incomplete: pdflatex: 6 string(s) not checked" in r["reason"] for r in rows)
    assert split["full"] == []
    # the next run checks again, and a complete check lets the items through, stored as checked
    monkeypatch.setattr(lc, "check_item_async", complete)
    _res, split, _summary = build(tmp_path, papers[:1], cfg=cfg)
    assert {r["status"] for r in steps(tmp_path, "latex")} == {"ok"}
    assert split["full"] and all(it["latex_check"] == {"checked": True, "skipped": []} for it in split["full"])


@pytest.mark.skipif(any(lc.available().values()), reason="a LaTeX engine is missing")
def test_the_build_awaits_the_real_check(fake_env, papers, tmp_path) -> None:
    fake_env.set_script(script())
    _res, split, _summary = build(tmp_path, papers[:1], cfg=write_config(tmp_path, latex={"check": True}))
    assert split["full"] and all(it["latex_check"]["checked"] for it in split["full"])
