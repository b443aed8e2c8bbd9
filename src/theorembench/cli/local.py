"""``theorembench local``: the embedded llama.cpp model server."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from theorembench.cli.common import call, out, plain

local_app = typer.Typer(help="Manage the embedded llama.cpp model server.", no_args_is_help=True)


@local_app.command("start")
def local_start(name: Annotated[str, typer.Argument(help="Embedded model name.")] = "smollm2") -> None:
    """Start a shared server for an embedded model; later commands reuse it."""
    from theorembench.llm.local import LocalServer

    state = call(LocalServer(name).start_shared)
    verb = "already running" if state["reused"] else "started"
    out.print(f"local/{name} {verb} at {state['base_url']} (pid {state['pid']})", markup=False)


@local_app.command("stop")
def local_stop(name: Annotated[str, typer.Argument()] = "smollm2") -> None:
    """Stop the shared server of an embedded model."""
    from theorembench.llm.local import LocalServer

    stopped = LocalServer(name).stop_shared()
    out.print(f"local/{name} {'stopped' if stopped else 'was not running'}", markup=False)


@local_app.command("status")
def local_status() -> None:
    """List the embedded models, where their files are and whether a shared server runs."""
    from theorembench.llm.local import LOCAL_MODELS, LocalModelError, LocalServer, model_path

    table = Table("model", "file", "shared server")
    for name in LOCAL_MODELS:
        try:
            path = str(model_path(name))
        except LocalModelError as exc:
            path = f"missing: {exc}"
        state = LocalServer(name).shared()
        table.add_row(plain(f"local/{name}"), plain(path), plain(state["base_url"] if state else "-"))
    out.print(table)
