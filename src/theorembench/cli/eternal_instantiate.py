"""``theorembench eternal instantiate``: instances from templates written by hand or imported (steps e and g)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from theorembench.cli.common import err, out, plain, progress, user_errors
from theorembench.cli.eternal_app import eternal_app


@eternal_app.command("instantiate")
def eternal_instantiate(
    templates: Annotated[Path, typer.Argument(help="A JSON list of templates (the paper's fields plus params, formal_solution, small_case_check).")],
    n: Annotated[int, typer.Option("--n", min=1, help="Instances per template (fewer when some are rejected or the domain is small).")] = 10,
    seed: Annotated[int, typer.Option("--seed", help="Seeds the parameter draws (each template draws with seed and its id).")] = 0,
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for instances.jsonl, rejections.jsonl and summary.json.")] = Path("eternal-instances"),
    timeout: Annotated[float, typer.Option("--timeout", help="Wall-clock limit of each template's sandboxed process, seconds.")] = 120.0,
    memory: Annotated[int, typer.Option("--memory", help="Memory limit of that process, MB.")] = 2048,
    per_instance: Annotated[float, typer.Option("--per-instance", help="Time limit of each run of the code inside it, seconds.")] = 20.0,
) -> None:  # fmt: skip
    """Sample, execute in the sandbox, validate (cross-check, determinism, value rules) and write instances."""
    from theorembench.methods.eternal.instantiate import instantiate_templates, write_outputs
    from theorembench.methods.eternal.template import TemplateError, load_templates

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

    with user_errors(), bar:
        result = instantiate_templates(parsed, n, seed, timeout_s=timeout, memory_mb=memory,
                                       per_instance_s=per_instance, progress=on_progress)  # fmt: skip
    paths = write_outputs(result, out_dir)
    table = Table("template", "instances", "cross-check", "rejected", title="eternal instantiate", title_justify="left")
    for row in result.summary["per_template"]:
        rejected = ", ".join(f"{c} {stage}" for stage, c in sorted(row["rejected"].items())) or "-"
        table.add_row(plain(row["template_id"]), str(row["instances"]), plain(row["cross_check"]), plain(rejected))
    out.print(table)
    s = result.summary
    out.print(plain(f"{s['instances']} instances from {s['validated_templates']} of {s['templates']} templates; "
                    f"{s['rejections']} rejections; {s['instances_per_s']} instances/s; "
                    f"isolation: {' '.join(result.isolation)}"))  # fmt: skip
    for row in s["per_template"]:
        for note in row["notes"]:
            err.print(plain(f"note: {row['template_id']}: {note}"), soft_wrap=True)
    out.print(plain(f"instances: {paths['instances']}  rejections: {paths['rejections']}  summary: {paths['summary']}"))
    if not result.instances:
        raise typer.Exit(1)
