"""The ``theorembench improof`` group; its commands live in ``improof*`` modules that decorate it."""

from __future__ import annotations

import typer

improof_app = typer.Typer(help="IMProofBench: proof problems with auto-graded subquestions, agentic evaluation, "
                               "human grades and statistics.", no_args_is_help=True)  # fmt: skip
