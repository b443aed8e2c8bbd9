"""``theorembench store``: what the store holds: runs, model calls, usage; asking again for steps given up on."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Annotated, Any

import typer
from rich.table import Table

from theorembench.cli.common import DbOption, out, plain, store
from theorembench.common.stats import Estimate, quote

store_app = typer.Typer(help="Inspect the store: runs, model calls, usage; retry steps given up on.",
                        no_args_is_help=True)  # fmt: skip


@store_app.command("info")
def store_info(db: DbOption = None) -> None:
    """Where the store is, its schema version and what it holds."""
    st = store(db)
    out.print(f"store: {st.path}  schema version {st.schema_version}", markup=False)
    out.print(json.dumps(st.table_counts()), markup=False)


def headline(summary: Any) -> Estimate | None:
    """A run's headline score: ``score`` (every method's evaluation records it), else the block that older rows
    kept it in (MCQ ``all``, EternalMath ``overall``, IMProofBench ``mean_weighted_score``)."""
    if not isinstance(summary, dict):
        return None
    for key in ("score", "all", "overall", "mean_weighted_score"):
        found = Estimate.from_dict(summary.get(key))
        if found is not None:
            return found
    return None


@store_app.command("runs")
def store_runs(
    db: DbOption = None,
    limit: Annotated[int, typer.Option("--limit")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """The latest runs with their headline score (95% interval, n), failed samples and cost."""
    from theorembench.store import loads

    rows = store(db).runs(limit=limit)
    if as_json:
        listed = []
        for r in rows:
            summary = loads(r["summary"])
            est = headline(summary)
            listed.append(dict(r) | {"summary": summary, "config": loads(r["config"]),
                                     "score": None if est is None else est.to_dict(),
                                     "cost_usd": (summary or {}).get("cost_usd")})  # fmt: skip
        print(json.dumps(listed, indent=2))
        return
    table = Table("run", "kind", "model", "dataset", "status", "score [95% CI] n", "errors", "interval", "cost")
    for r in rows:
        summary = loads(r["summary"]) or {}
        est = headline(summary)
        table.add_row(plain(r["id"]), plain(r["kind"]), plain(r["model"]), plain(r["name"]), plain(r["status"]),
                      "" if est is None else quote(replace(est, errors=0)), "" if est is None else str(est.errors),
                      "" if est is None else plain(est.method),
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


@store_app.command("retry")
def store_retry(
    db: DbOption = None,
    pipeline: Annotated[str | None, typer.Option("--pipeline", help="Only pipelines whose name starts so.")] = None,
    stage: Annotated[str | None, typer.Option("--stage", help="Only this stage.")] = None,
) -> None:
    """Let the next build ask again for steps rejected because the model's output stayed malformed."""
    from theorembench.store.steps import reset_output_rejections

    n = reset_output_rejections(store(db), pipeline_prefix=pipeline, stage=stage)
    out.print(f"reset {n} step{'' if n == 1 else 's'} rejected for malformed model output; the next build runs "
              f"{'it' if n == 1 else 'them'} again", markup=False)  # fmt: skip
