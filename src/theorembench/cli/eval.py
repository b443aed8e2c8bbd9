"""``theorembench eval``: evaluate a model on a benchmark file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from theorembench.cli.common import DbOption, MergeShardsOption, ShardOption, err, out, progress, user_errors
from theorembench.cli.costs import with_cost_options
from theorembench.cli.cutoff import CutoffGuardOption, ModelsFileOption, report_cutoff

eval_app = typer.Typer(help="Evaluate a model on a benchmark file.", no_args_is_help=True)


def run_mcq_command(file: Path, *, db: str | Path | None, quiet: bool = False, **options: Any) -> Any:
    """``evaluate_mcq`` with a progress bar, the summary table and the paths of what it wrote."""
    from theorembench.evaluate.mcq.service import MCQOptions, evaluate_mcq
    from theorembench.report.tables import print_summary

    bar = progress(None, "acc {task.fields[acc]}", "err {task.fields[errors]}", remaining=True)
    task_id = None
    tally = {"done": 0, "correct": 0, "errors": 0}

    def on_start(spec: Any, total: int, already: int) -> None:
        nonlocal task_id
        task_id = bar.add_task(f"{spec.name}{' +sketch' if options.get('sketch') else ''}", total=total, acc="-",
                               errors=0)  # fmt: skip
        if already and not quiet:
            err.print(f"resuming: {already} of {total} items already answered")

    def on_item(record: dict[str, Any]) -> None:
        tally["done"] += 1
        tally["correct"] += int(bool(record["is_correct"]))
        tally["errors"] += int(record.get("status") == "error")
        bar.update(task_id, advance=1, acc=f"{100 * tally['correct'] / tally['done']:.0f}%", errors=tally["errors"])

    try:
        with user_errors(), bar:
            model = options.pop("model")
            run = evaluate_mcq(file, model=model, options=MCQOptions(**options), db=db, on_start=on_start,
                               on_item=on_item)  # fmt: skip
    except KeyboardInterrupt:
        err.print("interrupted; rerun the same command with --resume to continue")
        raise typer.Exit(130) from None
    if "shard" in run.detail:
        if not quiet:
            report_shard(run)
        return run
    if not quiet:
        print_summary(run.results, out)
        out.print(f"results: {run.path}", markup=False)
        if "released" in run.files:
            out.print(f"results as the released scripts write them: {run.files['released']}", markup=False)
        if run.log:
            out.print(f"inspect log: {run.log}  (inspect view --log-dir {run.log.parent})", markup=False)
        report_cutoff(run.detail.get("cutoff"))
    return run


def report_shard(run: Any) -> None:
    """What a shard did, and how the results are written (by the merge, when every shard has finished)."""
    label = run.detail["shard"]
    score = f"; its score {run.score.value:.3f} over n={run.score.n}" if run.score and run.score.n else ""
    out.print(f"shard {label}: run {run.run_id} finished{score}; {run.calls_made} calls made, "
              f"{run.cache_hits} cached", markup=False)  # fmt: skip
    out.print(f"when every shard has finished, write the results: the same command with --merge-shards "
              f"{label.split('/')[1]} in place of --shard {label}", markup=False)  # fmt: skip


@eval_app.command("mcq")
@with_cost_options("eval mcq", outputs={"out_path": "results.json", "log_dir": "logs"}, resume_hint="--resume")
def eval_mcq(
    file: Annotated[Path, typer.Argument(help="Items in the released LiveMathematicianBench format (JSON list or JSONL).")],
    model: Annotated[str, typer.Option("--model", "-m", help="provider/model as Inspect AI names it, e.g. openai/gpt-5, anthropic/claude-sonnet-4-5, openai-api/<service>/<model>, local/smollm2.")],
    sketch: Annotated[bool, typer.Option("--sketch", help="Mode 2: give the proof sketch as a hint.")] = False,
    n: Annotated[int, typer.Option("--n", help="Samples per item (the first decides accuracy; all are stored).")] = 1,
    max_connections: Annotated[int | None, typer.Option("--max-connections", help="Concurrent requests to the model (default 4; 1 for local models).")] = None,
    limit: Annotated[int | None, typer.Option("--limit", help="Evaluate only the first N items.")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Global seed of the option shuffle (item i uses seed + i).")] = 42,
    resume: Annotated[bool, typer.Option("--resume", help="Continue the last run with the same settings and endpoint: keep answered items; ask failed and unparsed ones again.")] = False,
    out_path: Annotated[Path | None, typer.Option("--out", "-o", help="Results JSON. Default: results/<month>/accuracy_test_<model>_<month>_<effort>[_sketch].json")] = None,
    max_tokens: Annotated[int, typer.Option("--max-tokens", help="Max completion tokens.")] = 16384,
    temperature: Annotated[float | None, typer.Option("--temperature", help="Not sent unless given (or set by --preset): the provider's default applies.")] = None,
    top_p: Annotated[float | None, typer.Option("--top-p", help="Not sent unless given (or set by --preset).")] = None,
    reasoning_effort: Annotated[str | None, typer.Option("--reasoning-effort", help="minimal/low/medium/high/xhigh, where the model supports it.")] = None,
    thinking_budget: Annotated[int | None, typer.Option("--thinking-budget", help="Reasoning token budget (Anthropic, Gemini).")] = None,
    timeout: Annotated[float | None, typer.Option("--timeout", help="Seconds per attempt.")] = None,
    max_retries: Annotated[int, typer.Option("--max-retries", help="Retries per call after a transient failure (429, 5xx, timeout).")] = 3,
    prompt_style: Annotated[str, typer.Option("--prompt-style", help="'released' keeps the released scripts' two prompt quirks (doubled braces in the system prompt, the 'No expanded sketch found.' hint); 'clean' fixes them.")] = "released",
    system_prompt: Annotated[Path | None, typer.Option("--system-prompt", help="Send this file's text as the system prompt instead of ours (e.g. the authors' own).")] = None,
    user_template: Annotated[Path | None, typer.Option("--user-template", help="Replace the user message with this template; placeholders {question} and {choices} (required), {hints_block}, {hint}, {labels}.")] = None,
    preset: Annotated[str | None, typer.Option("--preset", help="Sampling preset for settings not given: 'released-vllm' = the released vLLM evaluator's temperature 1.0, top-p 0.95.")] = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="Override the model's endpoint.")] = None,
    model_revision: Annotated[str | None, typer.Option("--model-revision", help="Tag the model version served (default $THEOREMBENCH_MODEL_REVISION); runs and cached answers of other tags are kept apart.")] = None,
    api_key: Annotated[str | None, typer.Option("--api-key", help="Override the model's API key.")] = None,
    log_dir: Annotated[Path | None, typer.Option("--log-dir", help="Where the Inspect log goes (default ./logs or $INSPECT_LOG_DIR).")] = None,
    no_log: Annotated[bool, typer.Option("--no-log", help="Do not write an Inspect log.")] = False,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Ask the model even when this exact call is cached.")] = False,
    results_flavour: Annotated[str, typer.Option("--results-flavour", help="'theorembench' (default: the released layout plus intervals, errors, costs) or 'released': the file exactly as the authors' scripts write it (theorem_type \"all\", score from mcq.meta.score, samples null at n=1, date as MMDD_HHMMSS), ours beside it as .theorembench.json.")] = "theorembench",
    token_parameter: Annotated[str, typer.Option("--token-parameter", help="How the token limit is named in the request: max_tokens (default) or max_completion_tokens (as the released Azure script sends; reasoning models on Azure refuse max_tokens).")] = "max_tokens",
    cutoff_guard: CutoffGuardOption = None,
    models_file: ModelsFileOption = None,
    shard: ShardOption = None,
    merge_shards: MergeShardsOption = None,
    db: DbOption = None,
) -> None:
    """Evaluate a model on multiple-choice items with the released LiveMathematicianBench protocol.

    Option shuffle, labels, user message and answer extraction match the released scripts;
    the system prompt is our own wording (--system-prompt FILE sends another).
    """
    run_mcq_command(
        file, model=model, db=db, sketch=sketch, n=n, max_connections=max_connections, limit=limit,
        seed=seed, resume=resume, out_path=out_path, max_tokens=max_tokens, temperature=temperature,
        top_p=top_p, reasoning_effort=reasoning_effort, thinking_budget=thinking_budget,
        timeout=timeout, max_retries=max_retries, prompt_style=prompt_style, system_prompt_file=system_prompt,
        user_template_file=user_template, preset=preset, base_url=base_url, model_revision=model_revision,
        api_key=api_key, log_dir=log_dir, write_log=not no_log, use_cache=not no_cache,
        results_flavour=results_flavour, token_parameter=token_parameter, cutoff_guard=cutoff_guard,
        models_file=models_file, shard=shard, merge_shards=merge_shards,
    )  # fmt: skip


__all__ = ["eval_app", "report_shard", "run_mcq_command"]
