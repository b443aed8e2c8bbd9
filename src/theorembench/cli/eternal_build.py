"""``theorembench eternal build`` and ``theorembench eternal config``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from theorembench.cli.common import DbOption, cost_table, opened_store, out, plain, progress
from theorembench.cli.costs import with_cost_options
from theorembench.cli.eternal_app import eternal_app
from theorembench.sandbox import summary_line


@eternal_app.command("config")
def eternal_config() -> None:
    """Print the default build settings (edit a copy and pass it with --config)."""
    from theorembench.methods.eternal.config import config_toml

    print(config_toml(), end="")


@eternal_app.command("build")
@with_cost_options("eternal build", outputs={"out_dir": "eternal"})
def eternal_build(
    month: Annotated[str | None, typer.Option("--month", help="Build from the stored papers of this month (YYYY-MM).")] = None,
    paper: Annotated[list[str] | None, typer.Option("--paper", help="Build from these stored papers (ids; repeatable).")] = None,
    generator: Annotated[str | None, typer.Option("--generator", help="Model that writes templates and code.")] = None,
    judge: Annotated[str | None, typer.Option("--judge", help="Model for computability and the MSC fallback (default: the generator); also the validity judge unless --validity-judge is given.")] = None,
    validity_judge: Annotated[str | None, typer.Option("--validity-judge", help="Model that reviews each template's theorem, excerpt and instances (default: the judge; when that is the generator too, the build says it reviews its own work).")] = None,
    config: Annotated[Path | None, typer.Option("--config", help="TOML settings (see `theorembench eternal config`).")] = None,
    msc: Annotated[str | None, typer.Option("--msc", help="Only papers in these MSC2020 classes, e.g. 05,11.")] = None,
    instances_per_template: Annotated[int | None, typer.Option("--instances-per-template", min=1, help="Instances per validated template.")] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed of the parameter draws.")] = None,
    out_dir: Annotated[Path, typer.Option("--out", help="Output folder.")] = Path("eternal"),
    concurrency: Annotated[int, typer.Option("--concurrency", min=1)] = 4,
    accept_weak_isolation: Annotated[bool, typer.Option("--accept-weak-isolation", help="Validate generated code even below full sandbox isolation (rlimits only; recorded in summary.json and every instance). Without it such a build is refused: see `theorembench sandbox check`.")] = False,
    sandbox: Annotated[str, typer.Option("--sandbox", help="Where the code runs: theorembench (the default: bubblewrap namespaces, seccomp), docker (Inspect's docker provider: a container with no network, non-root) or k8s (Inspect's k8s provider, from the inspect-k8s-sandbox package). Its isolation is recorded like the default's; below full isolation it needs --accept-weak-isolation.")] = "theorembench",
    db: DbOption = None,
) -> None:  # fmt: skip
    """Papers -> filter -> MSC classes -> meta-templates -> code -> sandbox validation -> reviews -> instances."""
    run_eternal_build(month=month, paper_ids=paper, generator=generator, judge=judge, validity_judge=validity_judge,
                      config=config, msc=msc,
                      instances_per_template=instances_per_template, seed=seed, out_dir=out_dir,
                      concurrency=concurrency, db=db, accept_weak_isolation=accept_weak_isolation or None,
                      sandbox=sandbox)  # fmt: skip


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
        result = build_eternal(st, out_dir=out_dir, on_step=on_progress, **options)
    f = result.funnel
    table = Table("stage", "count", title="EternalMath funnel", title_justify="left")
    for key, label in FUNNEL:
        table.add_row(label, str(f[key]))
    out.print(table)
    if result.costs:
        out.print(cost_table(result.costs))
    s = result.summary
    rules = s.get("authority_rules") or {}
    if rules.get("papers"):
        shown = ", ".join(f"{rule} {n}" for rule, n in rules["passed"].items())
        out.print(plain(f"authority rules on these {rules['papers']} papers (passed): {shown}; this build: "
                        f"{rules['rule']}"))  # fmt: skip
    table1 = s.get("msc_table") or {}
    if table1.get("papers"):
        msc = Table("MSC class", "papers", "share", title=f"Table 1: papers of the instances per MSC class "
                    f"({table1['papers']} papers)", title_justify="left")  # fmt: skip
        for row in table1["rows"]:
            msc.add_row(plain(f"{row['class']} {row['name']}"), str(row["papers"]), f"{100 * row['share']:.1f}%")
        out.print(msc)
    if s["rejections_by_stage"]:
        out.print("rejected: " + ", ".join(f"{n} at {stage}" for stage, n in s["rejections_by_stage"].items()),
                  markup=False)  # fmt: skip
    for note in s["notes"]:
        out.print(plain(f"note: {note}"))
    for row in (s.get("instantiate") or {}).get("per_template", []):  # e.g. a validation rule that was ignored
        for note in row.get("notes", []):
            out.print(plain(f"note: {row['template_id']}: {note}"))
    out.print(plain(f"sandbox isolation of the validation: {summary_line(s.get('isolation'))}"))
    failed = s.get("failed_steps") or {}
    if failed:
        counts = ", ".join(f"{len(keys)} {stage}" for stage, keys in failed.items())
        out.print(f"failed steps (model calls failed; not outcomes): {counts}. Run the same command again to retry "
                  "them; answered calls come from the cache.", markup=False)  # fmt: skip
    out.print(f"templates: {result.files['templates']}; instances: {result.files['instances']} "
              f"(+ rejections.jsonl, papers.jsonl, summary.json)", markup=False)  # fmt: skip
    return result
