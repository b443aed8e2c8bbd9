"""``theorembench eternal build`` and ``theorembench eternal config``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from theorembench.cli.common import DbOption, opened_store, out, plain, progress
from theorembench.cli.eternal_app import eternal_app


@eternal_app.command("config")
def eternal_config() -> None:
    """Print the default build settings (edit a copy and pass it with --config)."""
    from theorembench.methods.eternal.config import config_toml

    print(config_toml(), end="")


@eternal_app.command("build")
def eternal_build(
    month: Annotated[str | None, typer.Option("--month", help="Build from the stored papers of this month (YYYY-MM).")] = None,
    paper: Annotated[list[str] | None, typer.Option("--paper", help="Build from these stored papers (ids; repeatable).")] = None,
    generator: Annotated[str | None, typer.Option("--generator", help="Model that writes templates and code.")] = None,
    judge: Annotated[str | None, typer.Option("--judge", help="Model for computability, MSC fallback and validity (default: the generator).")] = None,
    config: Annotated[Path | None, typer.Option("--config", help="TOML settings (see `theorembench eternal config`).")] = None,
    msc: Annotated[str | None, typer.Option("--msc", help="Only papers in these MSC2020 classes, e.g. 05,11.")] = None,
    instances_per_template: Annotated[int | None, typer.Option("--instances-per-template", min=1, help="Instances per validated template.")] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed of the parameter draws.")] = None,
    out_dir: Annotated[Path, typer.Option("--out", help="Output folder.")] = Path("eternal"),
    concurrency: Annotated[int, typer.Option("--concurrency", min=1)] = 4,
    db: DbOption = None,
) -> None:
    """Papers -> filter -> MSC classes -> meta-templates -> code -> sandbox validation -> reviews -> instances."""
    run_eternal_build(month=month, paper_ids=paper, generator=generator, judge=judge, config=config, msc=msc,
                      instances_per_template=instances_per_template, seed=seed, out_dir=out_dir,
                      concurrency=concurrency, db=db)  # fmt: skip


def run_eternal_build(*, db: str | Path | None, out_dir: Path = Path("eternal"), **options: Any) -> Any:
    """``build_eternal`` with a progress bar, then the funnel and the cost table."""
    from theorembench.methods.eternal.build import build_eternal
    from theorembench.methods.eternal.summary import FUNNEL

    bar = progress("eternal build", "{task.fields[note]}")
    task = bar.add_task("eternal", total=None, note="")

    def on_progress(key: str, stage: str, status: str) -> None:
        if stage == "paper":
            bar.update(task, advance=1, note=f"{key} {status}")

    with opened_store(db) as st, bar:
        result = build_eternal(st, out_dir=out_dir, progress=on_progress, **options)
    f = result.funnel
    table = Table("stage", "count", title="EternalMath funnel", title_justify="left")
    for key, label in FUNNEL:
        table.add_row(label, str(f[key]))
    out.print(table)
    if result.costs:
        costs = Table("stage", "calls", "prompt tokens", "completion tokens", "cost (USD)", "per instance",
                      title="model calls and cost", title_justify="left")  # fmt: skip
        for row in result.costs:
            usd = "-" if row["cost_usd"] is None else f"{row['cost_usd']:.4f}"
            per = "-" if row["cost_per_instance"] is None else f"{row['cost_per_instance']:.5f}"
            costs.add_row(row["stage"], str(row["calls"]), str(row["prompt_tokens"]), str(row["completion_tokens"]),
                          usd, per)  # fmt: skip
        out.print(costs)
    s = result.summary
    if s["rejections_by_stage"]:
        out.print("rejected: " + ", ".join(f"{n} at {stage}" for stage, n in s["rejections_by_stage"].items()),
                  markup=False)  # fmt: skip
    for note in s["notes"]:
        out.print(plain(f"note: {note}"))
    failed = s.get("failed_steps") or {}
    if failed:
        counts = ", ".join(f"{len(keys)} {stage}" for stage, keys in failed.items())
        out.print(f"failed steps (model calls failed; not outcomes): {counts}. Run the same command again to retry "
                  "them; answered calls come from the cache.", markup=False)  # fmt: skip
    out.print(f"templates: {result.files['templates']}; instances: {result.files['instances']} "
              f"(+ rejections.jsonl, papers.jsonl, summary.json)", markup=False)  # fmt: skip
    return result
