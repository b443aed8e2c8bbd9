"""What every command shares: the consoles, the ``--db`` option, progress bars and the error exit.

Untrusted text (paper titles, ids, file names, error messages, anything quoting model output)
is never parsed as Rich markup: print it with :func:`plain` (a table cell or a line) or with
``markup=False``; :func:`fail` prints its message literally.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from theorembench.common.errors import InvalidSetting, UserError
from theorembench.store import Store, StoreError, open_store
from theorembench.store.use import use_store

# Lines are never wrapped (soft_wrap): a path or an id printed by a command stays whole when piped or copied;
# tables still fit the terminal's width.
out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)

T = TypeVar("T")

DbOption = Annotated[
    str | None,
    typer.Option("--db", help="The store: a SQLite file (default $THEOREMBENCH_DB or .theorembench/theorembench.db) "
                              "or a postgresql:// URL."),
]  # fmt: skip


ShardOption = Annotated[
    str | None,
    typer.Option("--shard", help="i/N: do only shard i of N (0 <= i < N) of the work, split by a hash of each id, "
                                 "so N processes or machines share it on one store (--db postgresql://...); "
                                 "then merge with --merge-shards N."),
]  # fmt: skip
MergeShardsOption = Annotated[
    int | None,
    typer.Option("--merge-shards", help="N: when all N shards (--shard i/N, same options, same --db) have "
                                        "finished, write the outputs of the whole run from them, asking nothing."),
]  # fmt: skip


def plain(value: Any) -> Text:
    """Untrusted text as a Rich renderable (a table cell, a line) that is never parsed as markup."""
    return Text("" if value is None else str(value))


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print one error line (the message literally, never as markup); the caller raises what this returns."""
    err.print(Text.assemble(("error:", "bold red"), " ", str(message)), highlight=False, soft_wrap=True)
    return typer.Exit(code)


def store(db: str | Path | None) -> Store:
    """Open the store named by ``--db`` (or the default), or exit with one line."""
    try:
        return open_store(db)
    except StoreError as exc:
        raise fail(str(exc)) from None


@contextmanager
def opened_store(db: str | Path | None) -> Iterator[Store]:
    """The store named by ``--db``, closed on leaving; its errors and the block's user errors end in one line."""
    with user_errors(), use_store(db) as st:
        yield st


# the services' names of settings whose option is spelled otherwise (the rest: ``--`` and dashes for underscores)
OPTIONS = {"memory_mb": "--memory", "paper_ids": "--paper", "samples_per_item": "--n", "user_template_file":
           "--user-template", "system_prompt_file": "--system-prompt", "stacks_or_papers": "--stacks/--paper", "month_or_papers": "--month/--paper",
           "problem_ids": "--problem", "suite": "--suite", "latex.check=false": "--no-latex-check, or check = false under [latex]",
           "msc": "--msc"}  # fmt: skip


def option_of(setting: str) -> str:
    return OPTIONS.get(setting, "--" + setting.replace("_", "-"))


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn a service's ``UserError`` (bad input, settings or model) into one error line and its exit code."""
    try:
        yield
    except InvalidSetting as exc:  # the service's word for a setting, shown as the option that sets it
        raise fail(exc.naming(option_of(exc.setting)), exc.exit_code) from None
    except UserError as exc:
        raise fail(str(exc), exc.exit_code) from None
    except StoreError as exc:
        raise fail(str(exc)) from None


def call(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` with its user errors reported as one line."""
    with user_errors():
        return fn(*args, **kwargs)


def progress(label: str | None, *texts: str, remaining: bool = False) -> Progress:
    """A progress bar on stderr (shown on a terminal, or always with THEOREMBENCH_PROGRESS=1).

    ``label`` names the bar (None: each task's description); ``texts`` are extra columns
    in rich's format, e.g. ``"acc {task.fields[acc]}"``.
    """
    # the fields shown (paper ids, model names, notes) are data, never markup
    columns: list[ProgressColumn] = [TextColumn(label or "{task.description}", style="bold", markup=False),
                                     BarColumn(), MofNCompleteColumn()]  # fmt: skip
    columns += [TextColumn(text, markup=False) for text in texts]
    columns.append(TimeElapsedColumn())
    if remaining:
        columns.append(TimeRemainingColumn())
    return Progress(*columns, console=err, transient=False,
                    disable=not err.is_terminal and os.environ.get("THEOREMBENCH_PROGRESS") != "1")  # fmt: skip


def cost_table(costs: list[dict[str, Any]], *, title: str = "model calls and cost per stage") -> Any:
    """The cost table of a build (one row shape for every method, see ``pipeline.build_report``)."""
    from rich.table import Table

    unit = next((row.get("unit") for row in costs if row.get("unit")), "output")
    table = Table(title=f"{title}; /u: per {unit}", title_justify="left")
    for col in ("stage", "calls", "in tok", "out tok", "cost", "calls/u", "tok/u", "cost/u"):
        table.add_column(col, justify="left" if col == "stage" else "right", no_wrap=col == "stage")
    for row in costs:
        per, tokens, cost = row["calls_per_output"], row["tokens_per_output"], row["cost_per_output"]
        table.add_row(row["stage"], str(row["calls"]), str(row["prompt_tokens"]), str(row["completion_tokens"]),
                      "n/a" if row["cost_usd"] is None else f"${row['cost_usd']:.4f}",
                      "-" if per is None else f"{per:.1f}", "-" if tokens is None else f"{tokens:.0f}",
                      "-" if cost is None else f"${cost:.4f}")  # fmt: skip
    return table
