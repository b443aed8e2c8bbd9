"""The ``theorembench eternal`` group; its commands live in ``eternal_*`` modules that decorate it."""

from __future__ import annotations

import typer

eternal_app = typer.Typer(help="EternalMath: parameterised problems from constructive theorems, verified by "
                               "sandboxed execution.", no_args_is_help=True)  # fmt: skip
