"""The ``theorembench`` command."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

app = typer.Typer(
    name="theorembench",
    help="Build research-mathematics benchmarks from fresh papers and evaluate LLMs on them.",
    no_args_is_help=True,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
)
eval_app = typer.Typer(help="Evaluate a model on a benchmark file.", no_args_is_help=True)
local_app = typer.Typer(help="Manage the embedded llama.cpp model server.", no_args_is_help=True)
store_app = typer.Typer(help="Inspect the store: runs, model calls, usage.", no_args_is_help=True)
app.add_typer(eval_app, name="eval")
app.add_typer(local_app, name="local")
app.add_typer(store_app, name="store")


def _register_papers() -> None:
    from theorembench.cli_papers import papers_app

    app.add_typer(papers_app, name="papers")
    from theorembench.cli_lmb import lmb_app

    app.add_typer(lmb_app, name="lmb")
    from theorembench.cli_hybrid import hybrid_app

    app.add_typer(hybrid_app, name="hybrid")

out = Console()
err = Console(stderr=True)

DbOption = Annotated[
    Path | None,
    typer.Option("--db", help="Store file (SQLite). Default: $THEOREMBENCH_DB or .theorembench/theorembench.db."),
]


def _fail(message: str, code: int = 2) -> typer.Exit:
    err.print(f"[bold red]error:[/] {message}", markup=True, highlight=False, soft_wrap=True)
    return typer.Exit(code)


def _store(db: Path | None):
    from theorembench.store import StoreError, open_store

    try:
        return open_store(db)
    except StoreError as exc:
        raise _fail(str(exc)) from None


# ---------------------------------------------------------------- eval mcq


def _progress() -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("acc {task.fields[acc]}"),
        TextColumn("err {task.fields[errors]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err,
        transient=False,
        disable=not err.is_terminal and os.environ.get("THEOREMBENCH_PROGRESS") != "1",
    )


def run_mcq_command(
    file: Path,
    *,
    model: str,
    db: Path | None,
    sketch: bool = False,
    n: int = 1,
    max_connections: int | None = None,
    limit: int | None = None,
    seed: int = 42,
    resume: bool = False,
    out_path: Path | None = None,
    max_tokens: int = 16384,
    temperature: float | None = None,
    top_p: float | None = None,
    reasoning_effort: str | None = None,
    thinking_budget: int | None = None,
    timeout: float | None = None,
    max_retries: int = 3,
    prompt_style: str = "released",
    base_url: str | None = None,
    api_key: str | None = None,
    log_dir: Path | None = None,
    write_log: bool = True,
    use_cache: bool = True,
    quiet: bool = False,
) -> Any:
    from theorembench.evaluate.mcq.items import DatasetError, load_dataset
    from theorembench.evaluate.mcq.protocol import PROMPT_STYLES
    from theorembench.evaluate.mcq.runner import MCQConfig, run_mcq_async
    from theorembench.llm import LLM, GenerateSettings, ModelConfigError
    from theorembench.llm.local import LocalModelError
    from theorembench.llm.pricing import PriceError, PriceTable
    from theorembench.report.tables import print_summary

    # Everything that can be checked is checked before any work starts.
    if prompt_style not in PROMPT_STYLES:
        raise _fail(f"--prompt-style must be one of {', '.join(PROMPT_STYLES)}")
    if n < 1 or (max_connections is not None and max_connections < 1) or (limit is not None and limit < 1):
        raise _fail("--n, --max-connections and --limit must be positive")
    try:
        dataset = load_dataset(file)
    except DatasetError as exc:
        raise _fail(str(exc)) from None
    try:
        prices = PriceTable.load()
    except PriceError as exc:
        raise _fail(str(exc)) from None
    store = _store(db)
    llm = LLM(store, prices=prices, use_cache=use_cache)
    try:
        spec = llm.resolve(model, base_url=base_url, api_key=api_key)
    except ModelConfigError as exc:
        raise _fail(str(exc)) from None
    if max_connections is None:
        # the released scripts use 4; llama.cpp serves one request at a time fastest
        max_connections = 1 if spec.is_local else 4
    settings = GenerateSettings(
        temperature=temperature, top_p=top_p, max_tokens=max_tokens, reasoning_effort=reasoning_effort,
        thinking_budget=thinking_budget, timeout=timeout, max_retries=max_retries,
        max_connections=max_connections,
    )  # fmt: skip
    cfg = MCQConfig(
        model=spec.name, sketch=sketch, n=n, seed=seed, limit=limit, resume=resume,
        prompt_style=prompt_style, settings=settings, out=out_path, log_dir=log_dir, write_log=write_log,
        spec=spec,
    )  # fmt: skip

    progress = _progress()
    task_id = None
    tally = {"done": 0, "correct": 0, "errors": 0}

    def on_start(total: int, already: int) -> None:
        nonlocal task_id
        label = f"{spec.name}{' +sketch' if sketch else ''}"
        task_id = progress.add_task(label, total=total, acc="-", errors=0)
        if already and not quiet:
            err.print(f"resuming: {already} of {total} items already answered")

    def on_item(record: dict[str, Any]) -> None:
        tally["done"] += 1
        tally["correct"] += int(bool(record["is_correct"]))
        tally["errors"] += int(record.get("status") == "error")
        acc = f"{100 * tally['correct'] / tally['done']:.0f}%"
        progress.update(task_id, advance=1, acc=acc, errors=tally["errors"])

    async def go() -> Any:
        try:
            return await run_mcq_async(store, llm, dataset, cfg, on_start=on_start, on_item=on_item)
        finally:
            await llm.aclose()

    try:
        with progress:
            run = asyncio.run(go())
    except LocalModelError as exc:
        raise _fail(str(exc), 1) from None
    except KeyboardInterrupt:
        err.print("interrupted; rerun the same command with --resume to continue")
        raise typer.Exit(130) from None
    finally:
        from theorembench.llm.local import stop_private_servers

        stop_private_servers()
        store.close()
    if not quiet:
        print_summary(run.output, out)
        out.print(f"results: {run.out_path}")
        if run.log_path:
            out.print(f"inspect log: {run.log_path}  (inspect view --log-dir {run.log_path.parent})")
    return run


@eval_app.command("mcq")
def eval_mcq(
    file: Annotated[Path, typer.Argument(help="Items in the released LiveMathematicianBench format (JSON list or JSONL).")],
    model: Annotated[str, typer.Option("--model", "-m", help="provider/model as Inspect AI names it, e.g. openai/gpt-5, anthropic/claude-sonnet-4-5, openai-api/<service>/<model>, local/smollm2.")],
    sketch: Annotated[bool, typer.Option("--sketch", help="Mode 2: give the proof sketch as a hint.")] = False,
    n: Annotated[int, typer.Option("--n", help="Samples per item (the first decides accuracy; all are stored).")] = 1,
    max_connections: Annotated[int | None, typer.Option("--max-connections", help="Concurrent requests to the model (default 4; 1 for local models).")] = None,
    limit: Annotated[int | None, typer.Option("--limit", help="Evaluate only the first N items.")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Global seed of the option shuffle (item i uses seed + i).")] = 42,
    resume: Annotated[bool, typer.Option("--resume", help="Continue the last run with the same settings: keep answered items, redo failed ones.")] = False,
    out_path: Annotated[Path | None, typer.Option("--out", "-o", help="Results JSON. Default: results/<month>/accuracy_test_<model>_<month>_<effort>[_sketch].json")] = None,
    max_tokens: Annotated[int, typer.Option("--max-tokens", help="Max completion tokens.")] = 16384,
    temperature: Annotated[float | None, typer.Option("--temperature")] = None,
    top_p: Annotated[float | None, typer.Option("--top-p")] = None,
    reasoning_effort: Annotated[str | None, typer.Option("--reasoning-effort", help="minimal/low/medium/high/xhigh, where the model supports it.")] = None,
    thinking_budget: Annotated[int | None, typer.Option("--thinking-budget", help="Reasoning token budget (Anthropic, Gemini).")] = None,
    timeout: Annotated[float | None, typer.Option("--timeout", help="Seconds per attempt.")] = None,
    max_retries: Annotated[int, typer.Option("--max-retries", help="Retries per call after a transient failure (429, 5xx, timeout).")] = 3,
    prompt_style: Annotated[str, typer.Option("--prompt-style", help="'released' reproduces the released scripts exactly (quirks included); 'clean' fixes their prompt quirks.")] = "released",
    base_url: Annotated[str | None, typer.Option("--base-url", help="Override the model's endpoint.")] = None,
    api_key: Annotated[str | None, typer.Option("--api-key", help="Override the model's API key.")] = None,
    log_dir: Annotated[Path | None, typer.Option("--log-dir", help="Where the Inspect log goes (default ./logs or $INSPECT_LOG_DIR).")] = None,
    no_log: Annotated[bool, typer.Option("--no-log", help="Do not write an Inspect log.")] = False,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Ask the model even when this exact call is cached.")] = False,
    db: DbOption = None,
) -> None:
    """Evaluate a model on multiple-choice items, following the released LiveMathematicianBench protocol."""
    run_mcq_command(
        file, model=model, db=db, sketch=sketch, n=n, max_connections=max_connections, limit=limit,
        seed=seed, resume=resume, out_path=out_path, max_tokens=max_tokens, temperature=temperature,
        top_p=top_p, reasoning_effort=reasoning_effort, thinking_budget=thinking_budget,
        timeout=timeout, max_retries=max_retries, prompt_style=prompt_style, base_url=base_url,
        api_key=api_key, log_dir=log_dir, write_log=not no_log, use_cache=not no_cache,
    )  # fmt: skip


# ---------------------------------------------------------------- demo


DEMO_MONTH = "2026-11"
# The embedded model writes poor questions: the demo lowers the thresholds that would
# reject them all, so that every stage runs. Real builds use the defaults.
DEMO_OVERRIDES = {
    "generation.max_tokens": 700, "generation.variants": 2, "generation.red_flag_checks": False, "filters.rubric_min": 0, "filters.stem_only": False,
    "surface.min_length_ratio": 0.0, "surface.max_length_ratio": 100.0, "surface.max_latex_density_gap": 1.0,
    "surface.revisions": 0, "latex.repairs": 1, "context.full_context_chars": 2000,
}  # fmt: skip


@app.command()
def demo(
    model: Annotated[str, typer.Option("--model", "-m", help="Model for every stage and for the evaluation.")] = "local/smollm2",
    out_dir: Annotated[Path, typer.Option("--out-dir", help="Where the splits, results, log and report go.")] = Path("demo-output"),
    max_tokens: Annotated[int, typer.Option("--max-tokens", help="Max completion tokens per evaluation answer.")] = 384,
    db: DbOption = None,
) -> None:
    """The main job, offline on the embedded model: sample papers -> theorems -> questions -> evaluation -> report."""
    from theorembench.cli_lmb import run_lmb_build
    from theorembench.papers import PaperRepo, add_local
    from theorembench.report.tables import write_report

    out.print(f"[bold]theorembench demo[/] with {model}: the whole LiveMathematicianBench chain, offline.")
    out.print("The embedded model is tiny and gets mathematics wrong: this shows the machinery, not a score.\n")

    # 1. papers -> main theorems (the rule path finds them; no model needed)
    store = _store(db)
    repo = PaperRepo(store)
    papers_root = resources.files("theorembench.data").joinpath("papers")
    ids = []
    with resources.as_file(papers_root) as root:
        folders = sorted(p for p in Path(root).iterdir() if p.is_dir())
        out.print(f"[bold]1. papers[/]: {len(folders)} sample papers shipped with theorembench")
        for folder in folders:
            ids.append(add_local(repo, folder))
    from theorembench.cli_papers import _extract, _settings, _summary_line

    done = _extract(store, repo, ids, _settings(True, 4000, 12000), None, force=False)
    for paper_id in ids:
        out.print("   " + _summary_line(repo.get(paper_id), done.get(paper_id)), markup=False, highlight=False)
    store.close()

    # 2. theorems -> questions (all stages, lowered thresholds)
    out.print(f"\n[bold]2. questions[/]: sketch, taxonomy, stem, distractors, LaTeX check, rubric, calibration ({model})")
    result = run_lmb_build(month=DEMO_MONTH, db=db, generator=model, judges=[model], calibrator=model, papers=ids,
                           out_dir=out_dir / "lmb", overrides=DEMO_OVERRIDES, concurrency=1)  # fmt: skip

    # 3. evaluation on what was built (the hard split, or the full one when calibration kept nothing)
    split = result.files["hard"] if result.funnel["hard"] else result.files["full"]
    if not result.funnel["generated"]:
        out.print("the embedded model produced no usable item; evaluating the shipped sample items instead")
        split_res = resources.files("theorembench.data").joinpath("demo_mcq.json")
        with resources.as_file(split_res) as path:
            split = Path(path)
    out.print(f"\n[bold]3. evaluation[/]: {model} on {split}")
    run = run_mcq_command(
        split, model=model, db=db, out_path=out_dir / "results.json", max_tokens=max_tokens,
        temperature=0.0, max_connections=1, log_dir=out_dir / "logs", resume=True,
    )  # fmt: skip
    report = write_report(run.output, out_dir, json_path=str(run.out_path), log_path=str(run.log_path))
    out.print(f"report: {report} (with SVG charts beside it)")


@app.command()
def report(
    results: Annotated[list[Path], typer.Argument(help="Results JSON files written by `theorembench eval mcq`.")],
    out_dir: Annotated[Path | None, typer.Option("--out-dir", help="Also write report.md and SVG charts here (one file: that run; several: a comparison).")] = None,
) -> None:
    """Show results files as tables; compare several runs side by side."""
    from theorembench.report.tables import comparison_table, print_summary, write_report

    outputs = []
    for path in results:
        try:
            data = json.loads(path.read_text())
            data["summary"]["all"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise _fail(f"{path}: not a theorembench results file ({exc.__class__.__name__})") from None
        outputs.append((path, data))
    if len(outputs) == 1:
        path, data = outputs[0]
        print_summary(data, out)
        if out_dir:
            out.print(f"report: {write_report(data, out_dir, json_path=str(path), log_path=None)}")
        return
    table, markdown = comparison_table(outputs)
    out.print(table)
    if out_dir:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "comparison.md").write_text(markdown)
        out.print(f"report: {out_dir / 'comparison.md'}")


# ---------------------------------------------------------------- local model


@local_app.command("start")
def local_start(name: Annotated[str, typer.Argument(help="Embedded model name.")] = "smollm2") -> None:
    """Start a shared server for an embedded model; later commands reuse it."""
    from theorembench.llm.local import LocalModelError, LocalServer

    try:
        state = LocalServer(name).start_shared()
    except LocalModelError as exc:
        raise _fail(str(exc), 1) from None
    verb = "already running" if state["reused"] else "started"
    out.print(f"local/{name} {verb} at {state['base_url']} (pid {state['pid']})")


@local_app.command("stop")
def local_stop(name: Annotated[str, typer.Argument()] = "smollm2") -> None:
    """Stop the shared server of an embedded model."""
    from theorembench.llm.local import LocalServer

    stopped = LocalServer(name).stop_shared()
    out.print(f"local/{name} {'stopped' if stopped else 'was not running'}")


@local_app.command("status")
def local_status() -> None:
    """List the embedded models, where their files are and whether a shared server runs."""
    from theorembench.llm.local import LOCAL_MODELS, LocalModelError, LocalServer, model_path

    table = Table("model", "file", "shared server")
    for name, info in LOCAL_MODELS.items():
        try:
            path = str(model_path(name))
        except LocalModelError as exc:
            path = f"missing: {exc}"
        state = LocalServer(name).shared()
        table.add_row(f"local/{name}", path, state["base_url"] if state else "-")
    out.print(table)


# ---------------------------------------------------------------- store


@store_app.command("info")
def store_info(db: DbOption = None) -> None:
    """Where the store is, its schema version and what it holds."""
    store = _store(db)
    counts = {t: store.query(f"SELECT COUNT(*) FROM {t}")[0][0]
              for t in ("runs", "datasets", "items", "model_calls", "results")}  # fmt: skip
    out.print(f"store: {store.path}  schema version {store.schema_version}")
    out.print(json.dumps(counts))


@store_app.command("runs")
def store_runs(
    db: DbOption = None,
    limit: Annotated[int, typer.Option("--limit")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """The latest runs with their accuracy."""
    from theorembench.store import loads

    store = _store(db)
    rows = store.runs(limit=limit)
    if as_json:
        print(json.dumps([dict(r) | {"summary": loads(r["summary"]), "config": loads(r["config"])} for r in rows], indent=2))
        return
    table = Table("run", "kind", "model", "dataset", "status", "accuracy", "cost")
    for r in rows:
        summary = loads(r["summary"]) or {}
        acc = summary.get("all", {}).get("accuracy")
        table.add_row(r["id"], r["kind"], r["model"] or "", r["name"] or "", r["status"],
                      "" if acc is None else f"{100 * acc:.1f}%",
                      "" if summary.get("cost_usd") is None else f"${summary['cost_usd']:.4f}")  # fmt: skip
    out.print(table)


@store_app.command("usage")
def store_usage(db: DbOption = None) -> None:
    """Calls, tokens and cost per model, over everything in the store."""
    store = _store(db)
    table = Table("model", "provider", "calls", "ok", "prompt tok", "completion tok", "reasoning tok", "cost")
    for r in store.usage_by_model():
        table.add_row(r["model"], r["provider"], str(r["calls"]), str(r["ok"]), str(r["prompt_tokens"]),
                      str(r["completion_tokens"]), str(r["reasoning_tokens"]),
                      "n/a" if r["cost_usd"] is None else f"${r['cost_usd']:.4f}")  # fmt: skip
    out.print(table)


@app.command()
def prices() -> None:
    """Show the price table (USD per million tokens) and the files it was read from."""
    from theorembench.llm.pricing import PriceError, PriceTable, user_price_file

    try:
        table_data = PriceTable.load()
    except PriceError as exc:
        raise _fail(str(exc)) from None
    table = Table("model pattern", "input", "output", "cached input")
    for name, p in sorted(table_data.prices.items()):
        table.add_row(name, f"{p.input:g}", f"{p.output:g}", "" if p.cached_input is None else f"{p.cached_input:g}")
    out.print(table)
    out.print(f"sources: {', '.join(table_data.sources)}; your overrides go in {user_price_file()}")


_register_papers()


def main() -> None:
    try:
        app()
    except BrokenPipeError:  # pragma: no cover
        sys.exit(1)


if __name__ == "__main__":
    main()
