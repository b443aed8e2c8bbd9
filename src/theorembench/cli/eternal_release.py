"""``theorembench eternal export | msc-table | audit apply``: the public subset, Table 1, and the audit's removals."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from theorembench.cli.common import call, out, plain
from theorembench.cli.eternal_app import eternal_app
from theorembench.cli.eternal_eval import audit_app


@eternal_app.command("export")
def eternal_export(
    file: Annotated[Path, typer.Argument(help="The instances to draw from (calibrated.jsonl or instances.jsonl).")],
    to: Annotated[Path, typer.Option("--out", help="The public subset (JSONL); the answers go to <name>.answers.jsonl beside it.")],
    n: Annotated[int, typer.Option("--n", help="Instances in the subset (the paper releases 30).")] = 30,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the draw (in proportion to the tiers).")] = 0,
) -> None:  # fmt: skip
    """Write a public subset with the answers withheld (answers, solutions and parameters in a separate key)."""
    from theorembench.methods.eternal.release import export_public

    got = call(export_public, file, to, n=n, seed=seed)
    tiers = ", ".join(f"{t} {k}" for t, k in got["tiers"].items())
    note = "" if got["n"] == n else f" (only {got['available']} instances)"
    out.print(plain(f"{got['n']} instances{note} ({tiers}): {got['public']}; withheld "
                    f"({', '.join(got['withheld'])}) in {got['answers']}: keep it private"))  # fmt: skip


@eternal_app.command("msc-table")
def eternal_msc_table(
    file: Annotated[Path, typer.Argument(help="An instances file (instances.jsonl, calibrated.jsonl).")],
    other_below: Annotated[float, typer.Option("--other-below", help="Classes under this share of the papers are grouped as Other (the paper: 0.015).")] = 0.015,
) -> None:  # fmt: skip
    """Table 1: the share of the instances' papers per MSC2020 class (each paper under its primary class)."""
    from theorembench.methods.eternal.answering import load_instances
    from theorembench.methods.eternal.release import msc_table

    got = msc_table(call(load_instances, file), other_below=other_below)
    table = Table("MSC class", "papers", "share", title=f"Table 1: {got['papers']} papers", title_justify="left")
    for row in got["rows"]:
        table.add_row(plain(f"{row['class']} {row['name']}"), str(row["papers"]), f"{100 * row['share']:.1f}%")
    out.print(table)


@audit_app.command("apply")
def audit_apply_cmd(
    file: Annotated[Path, typer.Argument(help="The experts' file with a verdict per audit id.")],
    instances: Annotated[Path, typer.Option("--instances", help="The instances file to clean.")],
    to: Annotated[Path, typer.Option("--out", help="The instances file without the ones marked invalid.")],
    key: Annotated[Path | None, typer.Option("--key", help="The sample's key (default <name>.key.json beside it).")] = None,
    whole_template: Annotated[bool, typer.Option("--whole-template", help="Also remove every other instance of a template with an invalid instance.")] = False,
) -> None:  # fmt: skip
    """Remove the instances the audit marked invalid (or their whole templates) from an instances file."""
    from theorembench.methods.eternal.release import remove_invalid

    got = call(remove_invalid, instances, file, to, key=key, whole_template=whole_template)
    out.print(plain(f"removed {len(got['removed'])} instances ({len(got['invalid'])} marked invalid; audit precision "
                    f"{got['precision']}); kept {got['kept']}: {got['out']}"))  # fmt: skip
    for iid in got["removed"]:
        out.print(plain(f"removed: {iid}"))
    for iid in got["not_in_file"]:
        out.print(plain(f"not in the instances file: {iid}"))
