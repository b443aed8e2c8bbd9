"""``theorembench improof eval``: run (or resume) the staged evaluation of a model, agentic or single-turn."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from theorembench.cli.common import DbOption, opened_store, out, plain, progress
from theorembench.cli.improof_app import improof_app


@improof_app.command("eval")
def improof_eval_cmd(
    model: Annotated[str, typer.Option("--model", "-m", help="The model, e.g. openai/gpt-5 or local/smollm2.")],
    problem: Annotated[list[str] | None, typer.Option("--problem", help="A problem id (repeat; default: every active problem).")] = None,
    tools: Annotated[str | None, typer.Option("--tools", help="Comma-separated: python, bash, sage, search (default: python,bash,search, and sage when installed).")] = None,
    main_tokens: Annotated[int, typer.Option("--main-tokens", help="Token budget of the main question (output + reasoning).")] = 300_000,
    sub_tokens: Annotated[int, typer.Option("--sub-tokens", help="Token budget of each subquestion.")] = 100_000,
    epochs: Annotated[int, typer.Option("--epochs", help="Conversations per problem.")] = 1,
    mode: Annotated[str, typer.Option("--mode", help="agentic (tools, submit) or single-turn (App. I.1: one reply per stage, \\boxed{} answers).")] = "agentic",
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for results_<model>_<mode>.json.")] = Path("improof_eval"),
    log_dir: Annotated[Path | None, typer.Option("--log-dir", help="Inspect log folder (default $INSPECT_LOG_DIR or ./logs).")] = None,
    search_provider: Annotated[str | None, typer.Option("--search-provider", help="A hosted web search for the search tool: tavily, exa, google, openai or anthropic (default: the local paper index).")] = None,
    tool_timeout: Annotated[float, typer.Option("--tool-timeout", help="Seconds per tool call.")] = 900.0,
    tool_memory: Annotated[int, typer.Option("--tool-memory", help="Memory per tool call in MB.")] = 8192,
    max_retries: Annotated[int, typer.Option("--max-retries", help="Retries of a failed model call.")] = 3,
    max_connections: Annotated[int | None, typer.Option("--max-connections", help="Concurrent model requests.")] = None,
    db: DbOption = None,
) -> None:  # fmt: skip
    """Evaluate a model with Inspect AI: main question, then each subquestion; resumable turn by turn."""
    from theorembench.methods.improof.harness import run_improof_eval

    bar = progress("improof eval")
    task = bar.add_task("improof eval", total=None)
    with opened_store(db) as st, bar:
        result = run_improof_eval(
            st, model, problem_ids=problem or None, tools=tools, main_tokens=main_tokens, sub_tokens=sub_tokens,
            epochs=epochs, mode=mode, out_dir=out_dir, log_dir=log_dir, search_provider=search_provider,
            tool_timeout_s=tool_timeout, tool_memory_mb=tool_memory, max_retries=max_retries,
            max_connections=max_connections, progress=lambda done, total: bar.update(task, completed=done, total=total))  # fmt: skip
    print_results(result.results)
    if result.incomplete:
        out.print(plain(f"{result.incomplete} conversation(s) stopped at a failed model call: run the same command "
                        "again to continue them (stored turns are not paid again)."))  # fmt: skip
    out.print(plain(f"results: {result.path}"))
    if result.log:
        out.print(plain(f"inspect log: {result.log}"))


def _tools(calls: dict[str, int]) -> str:
    return ", ".join(f"{name} {n}" for name, n in sorted(calls.items())) or "—"


def print_results(doc: dict[str, Any]) -> None:
    """One row per problem, epoch and stage (outcome, turns, tokens, tool calls), then the scores."""
    m = doc["model"]
    tier = f"tier {m['tier']}" if m["tier"] is not None else "not in Table 1"
    table = Table("problem", "epoch", "stage", "outcome", "turns", "input", "output", "reasoning", "tool calls",
                  title=plain(f"IMProofBench {doc['settings']['mode']}: {m['name']} ({tier})"),
                  title_justify="left")  # fmt: skip
    errors = []
    for p in doc["problems"]:
        for run in p["epochs"]:
            for s in run.get("stages", []):
                stage = "main" if s["stage"] == 0 else f"sub {s['stage']}"
                table.add_row(plain(p["problem_id"]), str(run["epoch"]), stage, plain(s["outcome"] or "error"),
                              str(s["turns"]), str(s["input_tokens"]), str(s["output_tokens"]),
                              str(s["reasoning_tokens"]), plain(_tools(s["tool_calls"])))  # fmt: skip
                if s.get("error"):
                    errors.append(f"{p['problem_id']} epoch {run['epoch']} {stage}: {s['error']}")
    out.print(table)
    for line in errors:
        out.print(plain(line))
    scores = Table("problem", "epoch", "subquestions right", "weighted score", title="auto-graded subquestions",
                   title_justify="left")  # fmt: skip
    for p in doc["problems"]:
        for run in p["epochs"]:
            verdicts = run.get("verdicts")
            if verdicts is None:
                scores.add_row(plain(p["problem_id"]), str(run["epoch"]), "—", "incomplete")
                continue
            right = sum(v["correct"] is True for v in verdicts)
            scores.add_row(plain(p["problem_id"]), str(run["epoch"]), f"{right}/{len(verdicts)}",
                           f"{run['weighted_score']:.3f}")  # fmt: skip
    out.print(scores)
    est = doc["summary"]["mean_weighted_score"]
    if est["value"] is None:
        out.print("mean weighted score: no finished conversation yet")
    else:
        low, high = est["ci95"]
        out.print(plain(f"mean weighted score: {est['value']:.3f} [95% CI {low:.3f}–{high:.3f}] over {est['n']} "
                        f"problem(s) (bootstrap)"))  # fmt: skip
    graded = "human-graded, priority " + str(m["grading_priority"]) if m["human_graded"] else "not human-graded"
    out.print(plain(f"{m['name']}: {tier}, {graded}"))
