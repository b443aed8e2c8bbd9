"""``theorembench hybrid``: Proof2Hybrid seeds, build and evaluation."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from theorembench.cli.common import DbOption, call, err, opened_store, out, plain, progress
from theorembench.common.outputs import write_jsonl

hybrid_app = typer.Typer(help="Proof2Hybrid: m-out-of-n multiple-judge questions from definitions and proofs.",
                         no_args_is_help=True)  # fmt: skip


@hybrid_app.command("config")
def hybrid_config(
    judges: Annotated[int | None, typer.Option("--judges", min=1, help="Thresholds that fit this many judges (the paper's proportions).")] = None,
) -> None:
    """Print the default settings (the paper's Table 2 values, which fit 4 judges)."""
    from theorembench.methods.hybrid.config import config_toml

    print(config_toml(judges), end="")


@hybrid_app.command("seeds")
def hybrid_seeds(
    stacks: Annotated[Path | None, typer.Option("--stacks", help="A Stacks Project folder (chapters, preamble.tex, tags/tags).")] = None,
    chapter: Annotated[list[str] | None, typer.Option("--chapter", help="Only these chapters (file names without .tex).")] = None,
    paper: Annotated[list[str] | None, typer.Option("--paper", help="Stored papers to take seeds from.")] = None,
    out_file: Annotated[Path | None, typer.Option("--out", help="Write the seeds as JSONL.")] = None,
    db: DbOption = None,
) -> None:
    """Seed items: one per definition and per statement followed by its proof."""
    from theorembench.methods.hybrid.service import collect_seeds

    if paper:
        with opened_store(db) as st:
            seeds, problems = collect_seeds(st, stacks=stacks, chapters=chapter, papers=paper)
    else:
        seeds, problems = call(collect_seeds, None, stacks=stacks, chapters=chapter)
    table = Table("source", "chapter", "definitions", "statement+proof", title="seeds", title_justify="left")
    counts: dict[tuple[str, str], list[int]] = {}
    for s in seeds:
        row = counts.setdefault((s.source, s.chapter or ""), [0, 0])
        row[0 if s.kind == "definition" else 1] += 1
    for (source, chap), (d, sp) in sorted(counts.items()):
        table.add_row(plain(source), plain(chap), str(d), str(sp))
    out.print(table)
    out.print(f"{len(seeds)} seeds; {len(problems)} problems recorded")
    if out_file:
        write_jsonl(out_file, (s.to_dict() for s in seeds))
        out.print(f"seeds: {out_file}", markup=False)


@hybrid_app.command("build")
def hybrid_build(
    stacks: Annotated[Path | None, typer.Option("--stacks", help="A Stacks Project folder.")] = None,
    chapter: Annotated[list[str] | None, typer.Option("--chapter", help="Only these chapters.")] = None,
    paper: Annotated[list[str] | None, typer.Option("--paper", help="Stored papers to take seeds from.")] = None,
    generator: Annotated[list[str] | None, typer.Option("--generator", help="Distractor models (m2 of them).")] = None,
    judge: Annotated[list[str] | None, typer.Option("--judge", help="Judge models (m1 = m3 of them).")] = None,
    config: Annotated[Path | None, typer.Option("--config", help="TOML settings (see `theorembench hybrid config`).")] = None,
    max_seeds: Annotated[int | None, typer.Option("--max-seeds", help="Use at most this many seeds, drawn at random with questions.seed (reproducible).")] = None,
    out_dir: Annotated[Path, typer.Option("--out-dir", help="Where the benchmark goes.")] = Path("hybrid"),
    concurrency: Annotated[int, typer.Option("--concurrency")] = 4,
    db: DbOption = None,
) -> None:
    """Filter seeds, write and filter distractors, and aggregate m-out-of-n questions (resumable)."""
    run_hybrid_build(stacks=stacks, chapters=chapter, papers=paper, generators=generator, judges=judge,
                     config=config, max_seeds=max_seeds, out_dir=out_dir, concurrency=concurrency, db=db)  # fmt: skip


def run_hybrid_build(*, db: str | Path | None, out_dir: Path = Path("hybrid"), **options: Any) -> dict[str, Any]:
    """``build_hybrid`` with a progress bar, then the funnel and the cost per question."""
    from theorembench.methods.hybrid.service import build_hybrid

    bar = progress("hybrid build", "{task.fields[note]}")
    task = bar.add_task("hybrid", total=0, note="")

    def on_seeds(n: int) -> None:
        bar.update(task, total=n)

    def on_step(key: str, stage: str, status: str) -> None:
        if stage == "seed_filter":
            bar.update(task, advance=1, note=f"{key} {status}")

    with opened_store(db) as st, bar:
        summary = build_hybrid(st, out_dir=out_dir, on_seeds=on_seeds, on_step=on_step, **options)
    f = summary["funnel"]
    table = Table(*("seeds", "kept seeds", "distractors", "kept distractors", "questions"),
                  title="Proof2Hybrid funnel", title_justify="left")  # fmt: skip
    table.add_row(*(str(f[k]) for k in ("seeds", "kept_seeds", "distractors", "kept_distractors", "questions")))
    out.print(table)
    pq = summary["per_question"]
    if f["questions"]:
        out.print(f"per question: {pq['calls']:.1f} calls, {pq['prompt_tokens']:.0f} prompt + "
                  f"{pq['completion_tokens']:.0f} completion tokens"
                  + (f", ${pq['cost_usd']:.4f}" if pq.get("cost_usd") is not None else ""))  # fmt: skip
    failed = summary.get("failed_steps") or {}
    if failed:
        counts = ", ".join(f"{len(keys)} {stage}" for stage, keys in failed.items())
        out.print(f"failed steps (model calls failed; not outcomes): {counts}. "
                  "Run the same command again to retry them; answered calls come from the cache.")  # fmt: skip
    out.print(f"benchmark: {out_dir / 'questions.json'} (+ .jsonl, audit.jsonl, ppl_questions.json, summary.json)", markup=False)
    return summary


@hybrid_app.command("eval")
def hybrid_eval(
    folder: Annotated[Path, typer.Argument(help="A folder written by `hybrid build`.")],
    model: Annotated[str, typer.Option("--model", "-m", help="Model to evaluate.")],
    mode: Annotated[str, typer.Option("--mode", help="generation, perplexity or both (perplexity is skipped, with a note, when the model's server gives no prompt log-probabilities).")] = "both",
    max_tokens: Annotated[int | None, typer.Option("--max-tokens", help="Cap on each reply's tokens (default: the provider's own, as the paper uses).")] = None,
    limit: Annotated[int | None, typer.Option("--limit", help="Only the first N questions.")] = None,
    max_connections: Annotated[int | None, typer.Option("--max-connections")] = None,
    out_path: Annotated[Path | None, typer.Option("--out", help="Results JSON (default <folder>/results_<model>.json).")] = None,
    log_dir: Annotated[Path | None, typer.Option("--log-dir", help="Inspect log folder (default ./logs).")] = None,
    db: DbOption = None,
) -> None:
    """Score a model generation-based (loose and tight) and/or perplexity-based, with 95% intervals and baselines."""
    run_hybrid_eval(folder, model=model, mode=mode, max_tokens=max_tokens, limit=limit,
                    max_connections=max_connections, out_path=out_path, log_dir=log_dir, db=db)  # fmt: skip


def run_hybrid_eval(folder: Path, *, model: str, mode: str = "both", max_tokens: int | None = None,
                    limit: int | None = None, max_connections: int | None = None, out_path: Path | None = None,
                    log_dir: Path | None = None, db: str | Path | None = None) -> dict[str, Any]:  # fmt: skip
    """``evaluate_hybrid`` with its notes on stderr, then the scores with their intervals as a table."""
    from theorembench.methods.hybrid.service import evaluate_hybrid

    def on_note(text: str) -> None:
        err.print(plain(f"note: {text}"), soft_wrap=True)

    with opened_store(db) as st:
        results, path = evaluate_hybrid(st, folder, model=model, mode=mode, max_tokens=max_tokens, limit=limit,
                                        max_connections=max_connections, out_path=out_path, log_dir=log_dir,
                                        on_note=on_note)  # fmt: skip
    table = Table("metric", "score", "random guess", title=plain(f"Proof2Hybrid: {model}"), title_justify="left")
    if "generation" in results:
        s = results["generation"]["summary"]
        for metric in ("loose", "tight"):
            shown = _points(s[metric], s["ci95"][metric], s["n"])
            table.add_row(f"{metric} (m-out-of-n)", shown, f"{s['random_baseline'][metric]:.1f}")
    if "perplexity" in results:
        p = results["perplexity"]["summary"]
        shown = _points(p["score"] if p["n"] else None, p["ci95"], p["n"])
        table.add_row("perplexity (weighted, max 100)", shown, f"{p['random_baseline']:.1f}")
        if p.get("n_ties") or p.get("n_errors"):
            out.print(f"perplexity: {p.get('n_ties', 0)} tied questions (points split among the tied options), "
                      f"{p.get('n_errors', 0)} failed (left out; run again to retry)")  # fmt: skip
    elif "perplexity_skipped" in results:
        table.add_row("perplexity (weighted, max 100)", "skipped (see note)", "")
    out.print(table)
    out.print(plain(f"results: {path}"))
    return results


def _points(score: float | None, ci95: list[float], n: int) -> str:
    """``61.0 [43.2–76.5] n=29``: a score in points with its 95% interval and sample size."""
    if score is None:
        return "n=0"
    low, high = ci95
    return f"{score:.1f} [{low:.1f}–{high:.1f}] n={n}"
