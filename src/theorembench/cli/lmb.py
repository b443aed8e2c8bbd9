"""``theorembench lmb``: build LiveMathematicianBench splits from stored theorems."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from theorembench.cli.common import (
    DbOption,
    MergeShardsOption,
    ShardOption,
    call,
    cost_table,
    opened_store,
    out,
    plain,
    progress,
)
from theorembench.cli.costs import with_cost_options
from theorembench.cli.eval import eval_mcq

lmb_app = typer.Typer(help="LiveMathematicianBench: theorems -> hard multiple-choice questions.", no_args_is_help=True)


def funnel_table(result: Any) -> Table:
    table = Table(title=f"funnel {result.label}", title_justify="left")
    keys = ("theorems", "generated", "rubric", "stem_nontrivial", "pool", "eligible", "hard")
    for col in keys:
        table.add_column(col.replace("_", "-"), justify="right")
    f = result.funnel
    table.add_row(*(str(f.get(k, "-")) for k in keys))
    return table


def audit_table(report: dict[str, Any]) -> Table:
    """The shortcut audit: each baseline's estimate against chance, flagged when its interval lies above chance."""
    from theorembench.common.stats import quote

    meta = report["meta_option"]
    title = (f"shortcut audit: {report['items']} items, meta-option shown in {meta['shown']} "
             f"(keyed {meta['keyed']}, distractor {meta['as_distractor']})")  # fmt: skip
    table = Table("baseline", "accuracy [95% CI] n", "chance", "flagged", "what it does", title=title,
                  title_justify="left")  # fmt: skip
    for name, entry in report["baselines"].items():
        table.add_row(name, quote(entry["estimate"]), f"{100 * entry['chance']:.1f}%",
                      "FLAGGED" if entry["flagged"] else "", plain(entry["description"]))  # fmt: skip
    for name, why in report["skipped"].items():
        table.add_row(name, "skipped", "", "", plain(why))
    return table


def run_lmb_build(*, db: str | Path | None, **options: Any) -> Any:
    """``build_lmb`` with a progress bar, then the funnel, costs, rejections and the files written."""
    from theorembench.methods.lmb.build import build_lmb

    bar = progress("lmb build", "{task.fields[note]}")
    task = bar.add_task("lmb build", total=0, note="")

    def on_sources(n: int, stages_per_source: int) -> None:
        bar.update(task, total=max(1, n * stages_per_source))

    def on_stage(key: str, stage: str, status: str) -> None:
        bar.update(task, advance=1 if stage != "calibrate" else 0, note=f"{key} {stage} {status}")

    with opened_store(db) as st, bar:
        result = build_lmb(st, on_sources=on_sources, on_step=on_stage, **options)
        bar.update(task, completed=bar.tasks[0].total, note="done")
    out.print(funnel_table(result))
    out.print(cost_table(result.costs, title="model calls per stage"))
    if result.rejections:
        rej = Table("stage", "reason", "items", title="rejections", title_justify="left")
        for stage, reasons in sorted(result.rejections.items()):
            for reason, n in sorted(reasons.items()):
                rej.add_row(plain(stage), plain(reason), str(n))  # reasons may quote model output
        out.print(rej)
    if "shard" in result.summary:
        label = result.summary["shard"]
        out.print(f"shard {label}: run {result.summary['run_id']} finished; when every shard has finished, build "
                  f"the splits: the same command with --merge-shards {label.split('/')[1]} in place of --shard "
                  f"{label}", markup=False)  # fmt: skip
        return result
    audit = result.summary.get("shortcut_audit")
    if result.files.get("shortcut_audit") is not None and audit is not None:
        import json

        out.print(audit_table(json.loads(Path(result.files["shortcut_audit"]).read_text())))
    for name, path in result.files.items():
        out.print(f"{name}: {path}", markup=False)
    return result


@lmb_app.command("build")
@with_cost_options("lmb build", outputs={"out_dir": "lmb"})
def lmb_build(
    month: Annotated[str, typer.Option("--month", help="Month of the stored papers (YYYY-MM); also names the output.")],
    generator: Annotated[str | None, typer.Option("--generator", help="Generator model (overrides the config).")] = None,
    judge: Annotated[list[str] | None, typer.Option("--judge", help="Judge model(s): rubric, stem-only answer, match.")] = None,
    calibrator: Annotated[str | None, typer.Option("--calibrator", help="Hardness calibration model.")] = None,
    config: Annotated[Path | None, typer.Option("--config", help="TOML settings (see `theorembench lmb config`).")] = None,
    paper: Annotated[list[str] | None, typer.Option("--paper", help="Build from these stored papers instead of the month's.")] = None,
    out_dir: Annotated[Path | None, typer.Option("--out-dir", help="Where the splits go (default lmb/<YYYYMM>/).")] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", help="Theorems processed at once.")] = 4,
    no_latex_check: Annotated[bool, typer.Option("--no-latex-check", help="Skip the KaTeX and pdflatex check of "
                                                 "every item (items are then stored as not checked).")] = False,
    layout: Annotated[str | None, typer.Option("--layout", help="flat (default) or released: the authors' "
                                               "data/<YYYYMM>/hard/qaEval_<YYYYMM>_ge5_hard.json, so their scripts "
                                               "read the splits as they are.")] = None,
    shard: ShardOption = None,
    merge_shards: MergeShardsOption = None,
    db: DbOption = None,
) -> None:
    """Generate the month's full, ge5 and hard splits (resumable: a rerun pays for no call twice)."""
    overrides: dict[str, Any] = {"latex.check": False} if no_latex_check else {}
    if layout is not None:
        overrides["output.layout"] = layout
    run_lmb_build(month=month, db=db, config=config, generator=generator, judges=judge, calibrator=calibrator,
                  papers=paper, out_dir=out_dir, concurrency=concurrency, overrides=overrides or None, shard=shard,
                  merge_shards=merge_shards)  # fmt: skip


@lmb_app.command("audit")
def lmb_audit(
    items: Annotated[Path, typer.Argument(help="An item file in the released layout (JSON list or JSONL).")],
    model: Annotated[str | None, typer.Option("--model", help="Model for the options-only baseline (the options "
                                              "without the stem); without it that baseline is skipped.")] = None,
    out_file: Annotated[Path | None, typer.Option("--out", help="Write the audit JSON here.")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Option order shown to the model (the released shuffle).")] = 42,
    max_tokens: Annotated[int, typer.Option("--max-tokens", help="Per options-only answer.")] = 2048,
    db: DbOption = None,
) -> None:
    """Shortcut audit of an item file: meta-option, length and similarity heuristics (and a stem-less model)."""
    from theorembench.methods.lmb.options_only import audit_file

    report = call(audit_file, items, model=model, db=db, out=out_file, seed=seed, max_tokens=max_tokens)
    out.print(audit_table(report))
    if model is None:
        out.print("options-only baseline skipped: no --model given", markup=False)
    flagged = ", ".join(report["flagged"]) or "none"
    out.print(f"flagged (95% interval above chance): {flagged}", markup=False)
    if out_file is not None:
        out.print(f"shortcut audit: {out_file}", markup=False)


# the evaluation of LMB items, under its method like every other (`theorembench eval mcq` stays as it was)
lmb_app.command("eval")(eval_mcq)


@lmb_app.command("config")
def lmb_config() -> None:
    """Print the default settings file (the paper's values), to copy and edit."""
    from theorembench.methods.lmb.config import config_toml

    print(config_toml(), end="")
