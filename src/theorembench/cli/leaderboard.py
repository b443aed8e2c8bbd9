"""``theorembench leaderboard``: a static site of every model's scores across methods and releases."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from theorembench.cli.common import out, plain, user_errors


def leaderboard(
    sources: Annotated[list[Path] | None, typer.Argument(help="Folders (or scorecard files) to read the runs' scorecards from; default results/.")] = None,
    out_dir: Annotated[Path, typer.Option("--out", help="The site's folder (HTML, CSS, JSON, charts; no server needed).")] = Path("leaderboard"),
    title: Annotated[str, typer.Option("--title", help="The page's title.")] = "theorembench leaderboard",
) -> None:  # fmt: skip
    """Build the leaderboard: models × methods × releases, each score with its 95% interval, n, errors, cost per
    item, contamination-guard status and rank range, linked to the results file and Inspect log it came from."""
    from theorembench.suite.leaderboard import build_leaderboard

    with user_errors():
        board = build_leaderboard(list(sources or [Path("results")]), out_dir, title=title)
    table = Table("method", "release", "rank", "model", "score [95% CI] n", "cost / item", "guard")
    for e in board.entries:
        cost = "unpriced" if e["cost_per_item"] is None else f"${e['cost_per_item']:.4f}"
        table.add_row(plain(e["method"]), plain(e["release"]), plain("–".join(str(r) for r in sorted(set(e["rank"])))),
                      plain(e["model"]), plain(e["score_text"]), plain(cost), plain(e["cutoff"]))  # fmt: skip
    out.print(table)
    out.print(plain(f"leaderboard: {board.index}"))


__all__ = ["leaderboard"]
