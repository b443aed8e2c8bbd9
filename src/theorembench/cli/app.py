"""The root ``theorembench`` command: its groups and top-level commands, assembled in one place."""

from __future__ import annotations

import sys

import typer

from theorembench.cli.answers import answers_app
from theorembench.cli.demo import demo
from theorembench.cli.eternal import eternal_app
from theorembench.cli.eval import eval_app
from theorembench.cli.hybrid import hybrid_app
from theorembench.cli.improof import improof_app
from theorembench.cli.leaderboard import leaderboard
from theorembench.cli.lmb import lmb_app
from theorembench.cli.local import local_app
from theorembench.cli.papers import papers_app
from theorembench.cli.release import release_app
from theorembench.cli.report import prices, report
from theorembench.cli.sandbox import sandbox_app
from theorembench.cli.store import store_app

app = typer.Typer(
    name="theorembench",
    help="Build research-mathematics benchmarks from fresh papers and evaluate LLMs on them.",
    no_args_is_help=True,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
)
app.add_typer(eval_app, name="eval")
app.add_typer(local_app, name="local")
app.add_typer(store_app, name="store")
app.add_typer(papers_app, name="papers")
app.add_typer(lmb_app, name="lmb")
app.add_typer(hybrid_app, name="hybrid")
app.add_typer(answers_app, name="answers")
app.add_typer(sandbox_app, name="sandbox")
app.add_typer(eternal_app, name="eternal")
app.add_typer(improof_app, name="improof")
app.add_typer(release_app, name="release")
app.command()(demo)
app.command()(leaderboard)
app.command()(report)
app.command()(prices)


def main() -> None:
    try:
        app()
    except BrokenPipeError:  # pragma: no cover
        sys.exit(1)


if __name__ == "__main__":
    main()
