"""``theorembench improof eval``: run (or resume) the staged evaluation of a model, agentic or single-turn."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from theorembench.cli.common import DbOption, opened_store, out, plain, progress
from theorembench.cli.costs import with_cost_options
from theorembench.cli.cutoff import CutoffGuardOption, ModelsFileOption, report_cutoff
from theorembench.cli.improof_app import improof_app
from theorembench.common.stats import Estimate, quote
from theorembench.methods.improof.config import harness_defaults
from theorembench.sandbox import summary_line

PAPER = harness_defaults()  # the harness's defaults, written once (HarnessSettings), shown in the help


@improof_app.command("eval")
@with_cost_options("improof eval", outputs={"out_dir": "improof_eval", "log_dir": "logs"})
def improof_eval_cmd(
    model: Annotated[str, typer.Option("--model", "-m", help="The model, e.g. openai/gpt-5 or local/smollm2.")],
    problem: Annotated[list[str] | None, typer.Option("--problem", help="A problem id (repeat; default: every active problem).")] = None,
    tools: Annotated[str | None, typer.Option("--tools", help="Comma-separated: python, bash, sage, search (default: python,bash,search, and sage when installed).")] = None,
    main_tokens: Annotated[int | None, typer.Option("--main-tokens", help=f"Token budget of the main question (output + reasoning; default {PAPER['main_tokens']:,}, the paper's).")] = None,
    sub_tokens: Annotated[int | None, typer.Option("--sub-tokens", help=f"Token budget of each subquestion (default {PAPER['sub_tokens']:,}).")] = None,
    epochs: Annotated[int, typer.Option("--epochs", help="Conversations per problem.")] = 1,
    mode: Annotated[str, typer.Option("--mode", help="agentic (tools, submit) or single-turn (App. I.1: one reply per stage, \\boxed{} answers).")] = "agentic",
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for results_<model>_<mode>_<settings digest>.json (a run with other settings writes its own file).")] = Path("improof_eval"),
    log_dir: Annotated[Path | None, typer.Option("--log-dir", help="Inspect log folder (default $INSPECT_LOG_DIR or ./logs).")] = None,
    search_provider: Annotated[str | None, typer.Option("--search-provider", help="A hosted web search for the search tool: tavily, exa, google, openai or anthropic (default: the local paper index).")] = None,
    tool_timeout: Annotated[float | None, typer.Option("--tool-timeout", help=f"Seconds per tool call (default {PAPER['tool_timeout_s']:g}).")] = None,
    tool_memory: Annotated[int | None, typer.Option("--tool-memory", help=f"Memory per tool call in MB (default {PAPER['tool_memory_mb']}).")] = None,
    max_turns: Annotated[int | None, typer.Option("--max-turns", help=f"Turn cap of a stage (a safety net; default {PAPER['max_turns']}).")] = None,
    max_malformed: Annotated[int | None, typer.Option("--max-malformed", help=f"Malformed tool-call turns in a row before a stage ends (default {PAPER['max_malformed']}).")] = None,
    max_samples: Annotated[int | None, typer.Option("--max-samples", help="Conversations run at once (Inspect's max_samples; default: Inspect's).")] = None,
    timeout: Annotated[float | None, typer.Option("--timeout", help="Seconds per model call attempt (the LLM layer's; default: none).")] = None,
    wording: Annotated[str | None, typer.Option("--wording", help="Prompts and tool names: ours (default) or paper (App. H point by point, paraphrased, with the tools sage_computation and web_search).")] = None,
    hosted_tools: Annotated[str | None, typer.Option("--hosted-tools", help="Single-turn only (App. I.1, Table 2): the provider's own tools, comma-separated: web_search, code_execution (openai, anthropic, grok, google, mistral models).")] = None,
    over_budget_answer: Annotated[str | None, typer.Option("--over-budget-answer", help="An answer in the call that passes a stage's budget: keep (default; marked over_budget) or discard (recorded as discarded_answer, not scored: what Inspect's token limit alone does).")] = None,
    max_retries: Annotated[int, typer.Option("--max-retries", help="Retries of a failed model call.")] = 3,
    max_connections: Annotated[int | None, typer.Option("--max-connections", help="Concurrent model requests.")] = None,
    paper_settings: Annotated[bool, typer.Option("--paper-settings", help="Run only a model of the paper's Table 1 (a dated id or an alias, e.g. openai/gpt-5-2025-08-07, grok/grok-4) with its Table 1 parameters and the paper's budgets and tool limits; refuse any other model or change.")] = False,
    accept_weak_isolation: Annotated[bool, typer.Option("--accept-weak-isolation", help="Run the tools even below full sandbox isolation (rlimits only; recorded in the results). Without it such a run is refused: see `theorembench sandbox check`.")] = False,
    sandbox: Annotated[str, typer.Option("--sandbox", help="Where the code runs: theorembench (the default: bubblewrap namespaces, seccomp), docker (Inspect's docker provider: a container with no network, non-root) or k8s (Inspect's k8s provider, from the inspect-k8s-sandbox package). Its isolation is recorded like the default's; below full isolation it needs --accept-weak-isolation.")] = "theorembench",
    cutoff_guard: CutoffGuardOption = None,
    models_file: ModelsFileOption = None,
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
            tool_timeout_s=tool_timeout, tool_memory_mb=tool_memory, max_retries=max_retries, max_turns=max_turns,
            max_malformed=max_malformed, max_samples=max_samples, timeout_s=timeout, wording=wording,
            hosted_tools=hosted_tools, over_budget_answer=over_budget_answer,
            max_connections=max_connections, accept_weak_isolation=accept_weak_isolation or None,
            paper_settings=paper_settings, cutoff_guard_mode=cutoff_guard, models_file=models_file, sandbox=sandbox,
            progress=lambda done, total: bar.update(task, completed=done, total=total))  # fmt: skip
    print_results(result.results)
    report_cutoff(result.detail.get("cutoff"))
    if result.incomplete:
        out.print(plain(f"{result.incomplete} conversation(s) stopped at a failed model call: run the same command "
                        "again to continue them (stored turns are not paid again)."))  # fmt: skip
    for note in result.results.get("notes") or []:
        out.print(plain(note))
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
                outcome = (s["outcome"] or "error") + (" (over budget)" if s.get("over_budget") else "") + \
                    (" (answer discarded)" if s.get("discarded_answer") is not None else "")  # fmt: skip
                table.add_row(plain(p["problem_id"]), str(run["epoch"]), stage, plain(outcome),
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
    est = Estimate.from_dict(doc["summary"]["mean_weighted_score"])
    if est is None or est.value is None:
        out.print("mean weighted score: no finished conversation yet")
    else:
        out.print(plain(f"mean weighted score: {quote(est)} problem(s) ({est.method})"))
    graded = "human-graded, priority " + str(m["grading_priority"]) if m["human_graded"] else "not human-graded"
    out.print(plain(f"{m['name']}: {tier}, {graded}"))
    out.print(plain(f"sandbox isolation of the tools: {summary_line(doc.get('isolation'))}"))
    calls = doc.get("usage", {}).get("model_calls")
    if calls:
        cost = "no price for the model" if calls["cost_usd"] is None else f"${calls['cost_usd']:.4f}"
        out.print(plain(f"model calls of the run: {calls['calls']} paid, {cost}; {calls['cached']} answered from the "
                        "cache this time"))  # fmt: skip
