"""``theorembench store``: what the store holds: runs, model calls, usage."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table

from theorembench.cli.common import DbOption, out, plain, store

store_app = typer.Typer(help="Inspect the store: runs, model calls, usage.", no_args_is_help=True)


@store_app.command("info")
def store_info(db: DbOption = None) -> None:
    """Where the store is, its schema version and what it holds."""
    st = store(db)
    out.print(f"store: {st.path}  schema version {st.schema_version}", markup=False)
    out.print(json.dumps(st.table_counts()), markup=False)


@store_app.command("runs")
def store_runs(
    db: DbOption = None,
    limit: Annotated[int, typer.Option("--limit")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """The latest runs with their accuracy."""
    from theorembench.store import loads

    rows = store(db).runs(limit=limit)
    if as_json:
        print(json.dumps([dict(r) | {"summary": loads(r["summary"]), "config": loads(r["config"])} for r in rows], indent=2))
        return
    table = Table("run", "kind", "model", "dataset", "status", "accuracy", "cost")
    for r in rows:
        summary = loads(r["summary"]) or {}
        acc = summary.get("all", {}).get("accuracy")
        table.add_row(plain(r["id"]), plain(r["kind"]), plain(r["model"]), plain(r["name"]), plain(r["status"]),
                      "" if acc is None else f"{100 * acc:.1f}%",
                      "" if summary.get("cost_usd") is None else f"${summary['cost_usd']:.4f}")  # fmt: skip
    out.print(table)


@store_app.command("usage")
def store_usage(db: DbOption = None) -> None:
    """Calls, tokens and cost per model, over everything in the store."""
    table = Table("model", "provider", "calls", "ok", "prompt tok", "completion tok", "reasoning tok", "cost")
    for r in store(db).usage_by_model():
        table.add_row(plain(r["model"]), plain(r["provider"]), str(r["calls"]), str(r["ok"]), str(r["prompt_tokens"]),
                      str(r["completion_tokens"]), str(r["reasoning_tokens"]),
                      "n/a" if r["cost_usd"] is None else f"${r['cost_usd']:.4f}")  # fmt: skip
    out.print(table)
