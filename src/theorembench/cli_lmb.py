"""``theorembench lmb``: build LiveMathematicianBench splits from stored theorems."""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

lmb_app = typer.Typer(help="LiveMathematicianBench: theorems -> hard multiple-choice questions.", no_args_is_help=True)


def funnel_table(result: Any) -> Table:
    table = Table(title=f"funnel {result.month}", title_justify="left")
    for col in ("theorems", "generated", "rubric", "stem-nontrivial", "hard"):
        table.add_column(col, justify="right")
    f = result.funnel
    table.add_row(*(str(f[k]) for k in ("theorems", "generated", "rubric", "stem_nontrivial", "hard")))
    return table


def cost_table(result: Any) -> Table:
    table = Table(title="model calls per stage (and per accepted hard item)", title_justify="left")
    for col in ("stage", "calls", "prompt tok", "completion tok", "cost", "calls/item", "tokens/item", "cost/item"):
        table.add_column(col, justify="left" if col == "stage" else "right")
    for row in result.costs:
        per = row["calls_per_accepted"]
        table.add_row(
            row["stage"], str(row["calls"]), str(row["prompt_tokens"]), str(row["completion_tokens"]),
            "n/a" if row["cost_usd"] is None else f"${row['cost_usd']:.4f}",
            "-" if per is None else f"{per:.1f}",
            "-" if row["tokens_per_accepted"] is None else f"{row['tokens_per_accepted']:.0f}",
            "-" if row["cost_per_accepted"] is None else f"${row['cost_per_accepted']:.4f}",
        )  # fmt: skip
    return table


def run_lmb_build(*, month: str, db: Path | None, config: Path | None = None, generator: str | None = None,
                  judges: list[str] | None = None, calibrator: str | None = None, papers: list[str] | None = None,
                  out_dir: Path | None = None, overrides: dict[str, Any] | None = None,
                  concurrency: int = 4) -> Any:  # fmt: skip
    from theorembench.cli import _fail, _store, err, out
    from theorembench.llm import LLM, ModelConfigError
    from theorembench.llm.local import stop_private_servers
    from theorembench.methods.lmb.build import month_label, run_build
    from theorembench.methods.lmb.config import ConfigError, load_config
    from theorembench.methods.lmb.pipeline import BuildEvents

    try:
        cfg = load_config(config, **{"models.generator": generator, "models.judges": judges or None,
                                     "models.calibrator": calibrator, **(overrides or {})})  # fmt: skip
    except ConfigError as exc:
        raise _fail(str(exc)) from None
    if not re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])", month):
        raise _fail(f"--month must be YYYY-MM, got {month!r}")
    store = _store(db)
    llm = LLM(store)
    try:
        for name in {cfg.models.generator, *cfg.judges, cfg.calibrator}:
            llm.resolve(name)
    except ModelConfigError as exc:
        raise _fail(str(exc)) from None
    checker = None
    if cfg.latex.check:
        from theorembench.methods.lmb.latexcheck import check_item as checker

    progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("{task.fields[note]}"), TimeElapsedColumn(), console=err,
                        disable=not err.is_terminal and os.environ.get("THEOREMBENCH_PROGRESS") != "1")  # fmt: skip
    task = progress.add_task("lmb build", total=0, note="")
    stages_total = 3 + cfg.generation.variants * 5

    def on_sources(n: int) -> None:
        progress.update(task, total=max(1, n * stages_total))

    def on_stage(key: str, stage: str, status: str) -> None:
        progress.update(task, advance=1 if stage != "calibrate" else 0, note=f"{key} {stage} {status}")

    async def go() -> Any:
        try:
            return await run_build(store, llm, cfg, month=month, out_dir=out_dir or Path("lmb") / month_label(month),
                                   paper_ids=papers, events=BuildEvents(on_stage=on_stage), latex_checker=checker,
                                   concurrency=concurrency, on_sources=on_sources)  # fmt: skip
        finally:
            await llm.aclose()

    try:
        with progress:
            result = asyncio.run(go())
            progress.update(task, completed=progress.tasks[0].total, note="done")
    finally:
        stop_private_servers()
    out.print(funnel_table(result))
    out.print(cost_table(result))
    if result.rejections:
        rej = Table("stage", "reason", "items", title="rejections", title_justify="left")
        for stage, reasons in sorted(result.rejections.items()):
            for reason, n in sorted(reasons.items()):
                rej.add_row(stage, reason, str(n))
        out.print(rej)
    for name, path in result.files.items():
        out.print(f"{name}: {path}")
    return result


@lmb_app.command("build")
def lmb_build(
    month: Annotated[str, typer.Option("--month", help="Month of the stored papers (YYYY-MM); also names the output.")],
    generator: Annotated[str | None, typer.Option("--generator", help="Generator model (overrides the config).")] = None,
    judge: Annotated[list[str] | None, typer.Option("--judge", help="Judge model(s): rubric, stem-only answer, match.")] = None,
    calibrator: Annotated[str | None, typer.Option("--calibrator", help="Hardness calibration model.")] = None,
    config: Annotated[Path | None, typer.Option("--config", help="TOML settings (see `theorembench lmb config`).")] = None,
    paper: Annotated[list[str] | None, typer.Option("--paper", help="Build from these stored papers instead of the month's.")] = None,
    out_dir: Annotated[Path | None, typer.Option("--out-dir", help="Where the splits go (default lmb/<YYYYMM>/).")] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", help="Theorems processed at once.")] = 4,
    db: Annotated[Path | None, typer.Option("--db", help="Store file (default $THEOREMBENCH_DB).")] = None,
) -> None:
    """Generate the month's full, ge5 and hard splits (resumable: a rerun pays for no call twice)."""
    run_lmb_build(month=month, db=db, config=config, generator=generator, judges=judge, calibrator=calibrator,
                  papers=paper, out_dir=out_dir, concurrency=concurrency)  # fmt: skip


@lmb_app.command("config")
def lmb_config() -> None:
    """Print the default settings file (the paper's values), to copy and edit."""
    from theorembench.methods.lmb.config import DEFAULT_TOML

    print(DEFAULT_TOML, end="")
