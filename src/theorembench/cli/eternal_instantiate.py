"""``theorembench eternal instantiate``: instances from templates written by hand or imported (steps e and g)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from theorembench.cli.common import err, out, plain, progress, user_errors
from theorembench.cli.eternal_app import eternal_app
from theorembench.sandbox import accepting_weak_isolation, summary_line
from theorembench.sandbox.providers import require_sandbox


@eternal_app.command("instantiate")
def eternal_instantiate(
    templates: Annotated[Path, typer.Argument(help="A JSON list of templates (the paper's fields plus params, formal_solution, small_case_check).")],
    n: Annotated[int, typer.Option("--n", min=1, help="Instances per template (fewer when some are rejected or the domain is small).")] = 10,
    seed: Annotated[int, typer.Option("--seed", help="Seeds the parameter draws (each template draws with seed and its id).")] = 0,
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for instances.jsonl, rejections.jsonl and summary.json.")] = Path("eternal-instances"),
    timeout: Annotated[float, typer.Option("--timeout", help="Each of a template's sandboxed processes may take this many seconds (to start and import) plus --per-instance for each run it holds, so the limit grows with --n.")] = 120.0,
    memory: Annotated[int, typer.Option("--memory", help="Memory limit of that process, MB.")] = 2048,
    per_instance: Annotated[float, typer.Option("--per-instance", help="Time limit of each run of the code inside it, seconds.")] = 20.0,
    keep_unverified: Annotated[bool, typer.Option("--keep-unverified", help="Also write the instances of templates without small_case_check to instances.jsonl (by default they go to unverified.jsonl: nothing independent checks their formula).")] = False,
    accept_weak_isolation: Annotated[bool, typer.Option("--accept-weak-isolation", help="Run the templates' code even below full sandbox isolation (rlimits only; recorded in summary.json and every instance). Without it such a run is refused: see `theorembench sandbox check`.")] = False,
    sandbox: Annotated[str, typer.Option("--sandbox", help="Where the code runs: theorembench (the default: bubblewrap namespaces, seccomp), docker (Inspect's docker provider: a container with no network, non-root) or k8s (Inspect's k8s provider, from the inspect-k8s-sandbox package). Its isolation is recorded like the default's; below full isolation it needs --accept-weak-isolation.")] = "theorembench",
) -> None:  # fmt: skip
    """Sample, execute in the sandbox, validate (cross-check, determinism, value rules) and write instances."""
    from theorembench.methods.eternal.instantiate import instantiate_templates, write_outputs
    from theorembench.methods.eternal.summary import stamp_isolation
    from theorembench.methods.eternal.template import TemplateError, load_templates

    with user_errors():  # before any work: below full isolation without acceptance, one line and exit
        isolation = require_sandbox(sandbox, accept_weak_isolation or None,
                                    purpose="EternalMath validation of the templates' code")  # fmt: skip

    try:
        parsed = load_templates(templates)
    except TemplateError as exc:
        for problem in exc.problems:
            err.print(plain(f"error: {problem}"), soft_wrap=True)
        raise typer.Exit(2) from None
    bar = progress("eternal instantiate", "{task.fields[note]}")
    task = bar.add_task("templates", total=len(parsed), note="")

    def on_progress(done: int, total: int, template_id: str) -> None:
        bar.update(task, completed=done, note=template_id)

    with user_errors(), bar, accepting_weak_isolation(True if isolation["weak_isolation_accepted"] else None):
        result = instantiate_templates(parsed, n, seed, timeout_s=timeout, memory_mb=memory,
                                       per_instance_s=per_instance, progress=on_progress, sandbox=sandbox)  # fmt: skip
    stamp_isolation(result.instances, isolation)
    result.summary["isolation"] = isolation
    paths = write_outputs(result, out_dir, keep_unverified=keep_unverified)
    table = Table("template", "instances", "cross-check", "rejected", title="eternal instantiate", title_justify="left")
    for row in result.summary["per_template"]:
        rejected = ", ".join(f"{c} {stage}" for stage, c in sorted(row["rejected"].items())) or "-"
        table.add_row(plain(row["template_id"]), str(row["instances"]), plain(row["cross_check"]), plain(rejected))
    out.print(table)
    s = result.summary
    out.print(plain(f"{s['instances']} instances from {s['validated_templates']} of {s['templates']} templates; "
                    f"{s['rejections']} rejections; {s['instances_per_s']} instances/s; "
                    f"sandbox isolation: {summary_line(isolation)}"))  # fmt: skip
    for row in s["per_template"]:
        for note in row["notes"]:
            err.print(plain(f"note: {row['template_id']}: {note}"), soft_wrap=True)
    if "unverified" in paths:
        held = s["unverified_instances"]
        err.print(plain(f"note: {held} instances of templates without small_case_check left out of instances.jsonl "
                        f"(unverified): {paths['unverified']}; --keep-unverified keeps them"), soft_wrap=True)  # fmt: skip
    out.print(plain(f"instances: {paths['instances']}  rejections: {paths['rejections']}  summary: {paths['summary']}"))
    if not result.instances:
        raise typer.Exit(1)
