"""``theorembench answers``: check a final answer against the expected one, exactly and safely."""

from __future__ import annotations

import json
import sys
from pathlib import Path
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


@answers_app.command("score")
def score(
    path: Annotated[Path, typer.Argument(help='A JSON file of labelled pairs: {"pairs": [{"expected", "reply", '
                                              '"kind"?, "label": true/false/null}]}.')],
    timeout: Annotated[float, typer.Option(help="Seconds allowed for each check.")] = 5.0,
    show: Annotated[bool, typer.Option("--show", help="Also list every false positive, false negative and "
                                       "unjudged pair.")] = False,
) -> None:
    """Grade every labelled pair; print the false positives (wrong answers graded right), false negatives and
    unjudged answers as JSON. Exits with 1 when there is a false positive."""
    from theorembench.evaluate.answers.corpus import score_corpus

    with user_errors():
        result = score_corpus(path, timeout=timeout)
    doc = result.summary()
    if show:
        doc.update(false_positive_pairs=result.false_positives, false_negative_pairs=result.false_negatives,
                   unjudged_pairs=result.unjudged)  # fmt: skip
    typer.echo(json.dumps(doc, ensure_ascii=False, indent=2))
    if result.false_positives:
        raise typer.Exit(1)
