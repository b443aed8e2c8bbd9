"""``theorembench answers``: check a final answer against the expected one, exactly and safely."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from theorembench.cli.common import user_errors

answers_app = typer.Typer(help="Check final answers (integers, fractions, closed forms, sets...) exactly.",
                          no_args_is_help=True)  # fmt: skip


@answers_app.command("check")
def check(
    expected: Annotated[str, typer.Option("--expected", help="The expected answer (LaTeX or plain text).")],
    answer: Annotated[str, typer.Option("--answer", help="The model's reply or a bare answer; '-' reads stdin.")],
    kind: Annotated[str | None, typer.Option("--kind", help="integer, rational, real, boolean, expression, tuple, "
                                             "list or set (default: guessed from --expected).")] = None,
    timeout: Annotated[float, typer.Option(help="Seconds allowed for parsing and comparing.")] = 5.0,
    memory_mb: Annotated[int, typer.Option("--memory-mb", help="Memory limit of the checking process.")] = 1024,
    rel_tol: Annotated[float, typer.Option("--rel-tol", help="Relative tolerance for kind real.")] = 1e-6,
    abs_tol: Annotated[float, typer.Option("--abs-tol", help="Absolute tolerance for kind real.")] = 1e-9,
) -> None:
    """Print the verdict as JSON: correct (true/false/null), warning, messages, parsed forms, extracted answer."""
    from theorembench.evaluate.answers import check_answer

    reply = sys.stdin.read() if answer == "-" else answer
    with user_errors():
        verdict = check_answer(expected, reply, kind, timeout=timeout, memory_mb=memory_mb, rel_tol=rel_tol,
                               abs_tol=abs_tol)  # fmt: skip
    typer.echo(json.dumps(verdict.to_dict(), ensure_ascii=False, indent=2))
