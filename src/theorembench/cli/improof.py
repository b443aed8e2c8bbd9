"""``theorembench improof``: problems (import, export, list, status), grades import, verdict overrides, regrade."""

from __future__ import annotations

import getpass
import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from theorembench.cli import improof_eval, improof_stats  # noqa: F401 - they add the eval and stats commands
from theorembench.cli.common import DbOption, opened_store, out, plain, progress
from theorembench.cli.improof_app import improof_app

__all__ = ["improof_app"]

from theorembench.cli import improof_serve  # noqa: F401 - it adds the serve and admin commands

grades_app = typer.Typer(help="Human grades of main answers.", no_args_is_help=True)
verdicts_app = typer.Typer(help="Automatic verdicts on subquestion answers: administrator overrides.",
                           no_args_is_help=True)  # fmt: skip
improof_app.add_typer(grades_app, name="grades")
improof_app.add_typer(verdicts_app, name="verdicts")

ActorOption = Annotated[str | None, typer.Option("--actor", help="Who makes the change (default: the login name).")]
_CORRECT = {"true": True, "false": False, "null": None}


def _actor(actor: str | None) -> str:
    if actor:
        return actor
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "cli"


@improof_app.command("import")
def import_cmd(
    file: Annotated[Path, typer.Argument(help="A JSON or YAML file with one problem or a list of them.")],
    actor: ActorOption = None,
    db: DbOption = None,
) -> None:
    """Import problems: every bad field is reported on its own line, and nothing is stored from a bad file."""
    from theorembench.methods.improof.catalog import import_problems

    with opened_store(db) as st:
        ids = import_problems(st, file, actor=_actor(actor))
    out.print(plain(f"imported {len(ids)} problem(s): {', '.join(ids)}"))


@improof_app.command("export")
def export_cmd(
    ids: Annotated[list[str] | None, typer.Option("--id", help="A problem to export (repeat; default: all).")] = None,
    fmt: Annotated[str, typer.Option("--format", help="yaml or json.")] = "yaml",
    out_file: Annotated[Path | None, typer.Option("--out", help="Write here instead of standard output.")] = None,
    db: DbOption = None,
) -> None:
    """Export problems (current versions) in the import format, with version and updated_at."""
    from theorembench.common.outputs import write_text
    from theorembench.methods.improof.catalog import export_problems

    with opened_store(db) as st:
        text = export_problems(st, ids or None, fmt)
    if out_file is None:
        typer.echo(text, nl=False)
    else:
        write_text(out_file, text)
        out.print(plain(f"wrote {out_file}"))


@improof_app.command("export-answers")
def export_answers_cmd(
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for <problem>.md, answers.jsonl and grades_template.csv.")],
    ids: Annotated[list[str] | None, typer.Option("--problem", help="A problem (repeat; default: every active one).")] = None,
    db: DbOption = None,
) -> None:  # fmt: skip
    """Export the answers for human graders (tiers 1–3, agentic), blind, for grading outside the platform; grades
    come back with `theorembench improof grades import`."""
    from theorembench.methods.improof.grader_export import export_for_graders

    with opened_store(db) as st:
        done = export_for_graders(st, out_dir, ids or None)
    out.print(plain(f"exported {done.answers} answer(s) of {len(done.problems)} problem(s) to {out_dir}; "
                    f"{done.left_out} left out (tier 4 or single-turn: not for human graders)"))  # fmt: skip
    out.print(plain(f"grades template: {done.paths['grades_template.csv']}"))


@improof_app.command("list")
def list_cmd(
    status: Annotated[str | None, typer.Option("--status", help="Only problems in this status.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    db: DbOption = None,
) -> None:
    """The problems in the store with their status, version and subquestions."""
    from theorembench.methods.improof.catalog import list_problems

    with opened_store(db) as st:
        rows = list_problems(st, status)
    if as_json:
        typer.echo(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    table = Table("id", "title", "status", "version", "subquestions", "points", "author")
    for r in rows:
        table.add_row(plain(r["id"]), plain(r["title"]), plain(r["status"]), str(r["version"]),
                      str(r["subquestions"]), f"{r['points']:g}", plain(r["author"]))  # fmt: skip
    out.print(table)


@improof_app.command("status")
def status_cmd(
    problem_id: Annotated[str, typer.Argument(metavar="ID", help="The problem.")],
    to: Annotated[str, typer.Argument(metavar="TO", help="The new status (draft, under_review, approved, ...).")],
    actor: ActorOption = None,
    note: Annotated[str, typer.Option("--note", help="Why (kept with the status event).")] = "",
    db: DbOption = None,
) -> None:
    """Move a problem along draft → under_review → approved → active → retired (withdrawn from any state)."""
    from theorembench.methods.improof.catalog import set_status

    with opened_store(db) as st:
        moved = set_status(st, problem_id, to, _actor(actor), note)
    out.print(plain(f"{moved['id']}: {moved['from']} -> {moved['to']}"))


@grades_app.command("import")
def grades_import_cmd(
    file: Annotated[Path, typer.Argument(help="A .json list of grade objects or a .csv with the grade columns.")],
    db: DbOption = None,
) -> None:
    """Import human grades (answer_id, grader, progress, eight indicators, notes, comment, status); all or nothing."""
    from theorembench.methods.improof.grades import import_grades

    with opened_store(db) as st:
        n = import_grades(st, file)
    out.print(plain(f"imported {n} grade(s)"))


@verdicts_app.command("override")
def override_cmd(
    answer_id: Annotated[str, typer.Argument(help="The answer.")],
    sub_index: Annotated[int, typer.Argument(help="The subquestion, counted from 0.")],
    correct: Annotated[str, typer.Option("--correct", help="true, false or null.")],
    actor: Annotated[str, typer.Option("--actor", help="Who overrides (kept in the audit trail).")],
    reason: Annotated[str, typer.Option("--reason", help="Why (kept in the audit trail).")],
    verified: Annotated[bool, typer.Option("--verified", help="The verdict was checked by hand.")] = False,
    db: DbOption = None,
) -> None:
    """Set the verdict of one subquestion answer by hand; the latest override wins, all are kept."""
    from theorembench.common.errors import UserError
    from theorembench.methods.improof.autograde import effective_verdicts, override_verdict

    with opened_store(db) as st:
        if correct.strip().lower() not in _CORRECT:
            raise UserError(f"--correct must be true, false or null, got {correct!r}")
        override_verdict(st, answer_id, sub_index, correct=_CORRECT[correct.strip().lower()], verified=verified,
                         actor=actor, reason=reason)  # fmt: skip
        now = effective_verdicts(st, answer_id)[sub_index]
    out.print(plain(f"{answer_id} subquestion {sub_index}: correct={json.dumps(now['correct'])} "
                    f"(auto: {json.dumps(now['auto_correct'])}), verified={json.dumps(now['verified'])}"))  # fmt: skip


@improof_app.command("regrade")
def regrade_cmd(db: DbOption = None) -> None:
    """Auto-grade every answer without verdicts of the current grader version (all of them after a version bump)."""
    from theorembench.methods.improof.autograde import GRADER_VERSION, regrade

    with opened_store(db) as st, progress("regrade") as bar:
        task = bar.add_task("regrade", total=None)
        n = regrade(st, lambda done, total: bar.update(task, completed=done, total=total))
    out.print(plain(f"graded {n} answer(s) with grader version {GRADER_VERSION}"))
