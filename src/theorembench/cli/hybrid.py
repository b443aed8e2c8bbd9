"""``theorembench hybrid``: Proof2Hybrid seeds, build and evaluation."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from theorembench.cli.common import (
    DbOption,
    MergeShardsOption,
    ShardOption,
    call,
    cost_table,
    err,
    opened_store,
    out,
    plain,
    progress,
)
from theorembench.cli.costs import with_cost_options
from theorembench.cli.cutoff import CutoffGuardOption, ModelsFileOption, report_cutoff
from theorembench.common.outputs import write_jsonl
from theorembench.common.stats import quote

hybrid_app = typer.Typer(help="Proof2Hybrid: m-out-of-n multiple-judge questions from definitions and proofs.",
                         no_args_is_help=True)  # fmt: skip


@hybrid_app.command("config")
def hybrid_config(
    judges: Annotated[int | None, typer.Option("--judges", min=1, help="Thresholds that fit this many judges in each filter (the paper's proportions).")] = None,
    seed_judges: Annotated[int | None, typer.Option("--seed-judges", min=1, help="k1 for this many seed-filter judges (m1; default: --judges, else 4).")] = None,
    distractor_judges: Annotated[int | None, typer.Option("--distractor-judges", min=1, help="n3, k3, k4 for this many distractor-filter judges (m3; default: --judges, else 4).")] = None,
) -> None:
    """Print the default settings (the paper's Table 2 values, which fit 4 judges in each filter)."""
    from theorembench.methods.hybrid.config import config_toml

    print(config_toml(judges, seed_judges=seed_judges, distractor_judges=distractor_judges), end="")


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
@with_cost_options("hybrid build", outputs={"out_dir": "hybrid"})
def hybrid_build(
    stacks: Annotated[Path | None, typer.Option("--stacks", help="A Stacks Project folder.")] = None,
    chapter: Annotated[list[str] | None, typer.Option("--chapter", help="Only these chapters.")] = None,
    paper: Annotated[list[str] | None, typer.Option("--paper", help="Stored papers to take seeds from.")] = None,
    generator: Annotated[list[str] | None, typer.Option("--generator", help="Distractor models (m2 of them).")] = None,
    judge: Annotated[list[str] | None, typer.Option("--judge", help="Judge models of both filters (m1 = m3 of them, unless set apart below).")] = None,
    seed_judge: Annotated[list[str] | None, typer.Option("--seed-judge", help="Seed-filter judges (m1 of them), in place of --judge's.")] = None,
    distractor_judge: Annotated[list[str] | None, typer.Option("--distractor-judge", help="Distractor-filter judges (m3 of them), in place of --judge's.")] = None,
    config: Annotated[Path | None, typer.Option("--config", help="TOML settings (see `theorembench hybrid config`).")] = None,
    max_seeds: Annotated[int | None, typer.Option("--max-seeds", help="Use at most this many seeds, drawn at random with questions.seed (reproducible).")] = None,
    out_dir: Annotated[Path, typer.Option("--out-dir", help="Where the benchmark goes.")] = Path("hybrid"),
    concurrency: Annotated[int, typer.Option("--concurrency")] = 4,
    db: DbOption = None,
) -> None:
    """Filter seeds, write and filter distractors, and aggregate m-out-of-n questions (resumable)."""
    run_hybrid_build(stacks=stacks, chapters=chapter, papers=paper, generators=generator, judges=judge,
                     seed_judges=seed_judge, distractor_judges=distractor_judge, config=config, max_seeds=max_seeds,
                     out_dir=out_dir, concurrency=concurrency, db=db)  # fmt: skip


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
        result = build_hybrid(st, out_dir=out_dir, on_seeds=on_seeds, on_step=on_step, **options)
    summary = result.summary
    f = result.funnel
    table = Table(*("seeds", "kept seeds", "distractors", "kept distractors", "questions"),
                  title="Proof2Hybrid funnel", title_justify="left")  # fmt: skip
    table.add_row(*(str(f[k]) for k in ("seeds", "kept_seeds", "distractors", "kept_distractors", "questions")))
    out.print(table)
    if result.costs:
        out.print(cost_table(result.costs))
    failed = summary.get("failed_steps") or {}
    if failed:
        counts = ", ".join(f"{len(keys)} {stage}" for stage, keys in failed.items())
        out.print(f"failed steps (model calls failed; not outcomes): {counts}. "
                  "Run the same command again to retry them; answered calls come from the cache.")  # fmt: skip
    out.print(f"benchmark: {out_dir / 'questions.json'} (+ .jsonl, audit.jsonl, ppl_questions.json, summary.json)", markup=False)
    return summary


@hybrid_app.command("eval")
@with_cost_options("hybrid eval", outputs={"out_path": "results.json", "log_dir": "logs"})
def hybrid_eval(
    folder: Annotated[Path, typer.Argument(help="A folder written by `hybrid build`.")],
    model: Annotated[str, typer.Option("--model", "-m", help="Model to evaluate.")],
    mode: Annotated[str, typer.Option("--mode", help="generation, perplexity or both (perplexity is skipped, with a note, when the model's server gives no prompt log-probabilities).")] = "both",
    max_tokens: Annotated[int | None, typer.Option("--max-tokens", help="Cap on each reply's tokens (default: the provider's own, as the paper uses).")] = None,
    limit: Annotated[int | None, typer.Option("--limit", help="Only the first N questions.")] = None,
    max_connections: Annotated[int | None, typer.Option("--max-connections")] = None,
    out_path: Annotated[Path | None, typer.Option("--out", help="Results JSON (default <folder>/results_<model>.json).")] = None,
    log_dir: Annotated[Path | None, typer.Option("--log-dir", help="Inspect log folder (default ./logs).")] = None,
    perplexity_prefix: Annotated[bool | None, typer.Option("--perplexity-prefix/--no-perplexity-prefix", help="Perplexity scoring: put our own framing sentence (not the paper's; results record it) before every option. Default off, as in the paper, which scores each option on its own.", show_default=False)] = None,
    cutoff_guard: CutoffGuardOption = None,
    models_file: ModelsFileOption = None,
    shard: ShardOption = None,
    merge_shards: MergeShardsOption = None,
    db: DbOption = None,
) -> None:
    """Score a model generation-based (loose and tight) and/or perplexity-based, with 95% intervals and baselines."""
    run_hybrid_eval(folder, model=model, mode=mode, max_tokens=max_tokens, limit=limit,
                    max_connections=max_connections, out_path=out_path, log_dir=log_dir,
                    perplexity_prefix=perplexity_prefix, db=db, cutoff_guard=cutoff_guard,
                    models_file=models_file, shard=shard, merge_shards=merge_shards)  # fmt: skip


def run_hybrid_eval(folder: Path, *, model: str, mode: str = "both", max_tokens: int | None = None,
                    limit: int | None = None, max_connections: int | None = None, out_path: Path | None = None,
                    log_dir: Path | None = None, perplexity_prefix: bool | None = None,
                    db: str | Path | None = None, cutoff_guard: str | None = None,
                    models_file: Path | None = None, shard: str | None = None,
                    merge_shards: int | None = None) -> dict[str, Any]:  # fmt: skip
    """``evaluate_hybrid`` with its notes on stderr, then the scores with their intervals as a table
    (``perplexity_prefix`` None: the service's default)."""
    from theorembench.methods.hybrid.service import evaluate_hybrid

    def on_note(text: str) -> None:
        err.print(plain(f"note: {text}"), soft_wrap=True)

    given = {} if perplexity_prefix is None else {"perplexity_prefix": perplexity_prefix}
    with opened_store(db) as st:
        done = evaluate_hybrid(st, folder, model=model, mode=mode, max_tokens=max_tokens, limit=limit,
                               max_connections=max_connections, out_path=out_path, log_dir=log_dir,
                               on_note=on_note, cutoff_guard_mode=cutoff_guard, models_file=models_file,
                               shard=shard, merge_shards=merge_shards, **given)  # fmt: skip
    if "shard" in done.detail:
        from theorembench.cli.eval import report_shard

        report_shard(done)
        return done.results
    results, path = done.results, done.path
    table = Table("metric", "score", "random guess", title=plain(f"Proof2Hybrid: {model}"), title_justify="left")
    if "generation" in results:
        s = results["generation"]["summary"]
        for metric in ("loose", "tight"):
            table.add_row(f"{metric} (m-out-of-n)", quote(s[metric]), f"{s['random_baseline'][metric]:.1f}%")
        if s.get("errors"):
            a = s["answered_only"]
            out.print(f"generation: {s['errors']} questions without an answer (model calls failed) count as not "
                      f"correct; over answered questions only (secondary): loose {quote(a['loose'])}, "
                      f"tight {quote(a['tight'])}")  # fmt: skip
    if "perplexity" in results:
        p = results["perplexity"]["summary"]
        table.add_row("perplexity (weighted, % of max)", quote(p["estimate"]),
                      f"{100 * p['random_baseline'] / (p['max_score'] or 100):.1f}%")  # fmt: skip
        if p.get("n_ties") or p.get("n_errors"):
            out.print(f"perplexity: {p.get('n_ties', 0)} tied questions (points split among the tied options), "
                      f"{p.get('n_errors', 0)} failed (0 points each, counted in n; run again to retry)")  # fmt: skip
    elif "perplexity_skipped" in results:
        table.add_row("perplexity (weighted, % of max)", "skipped (see note)", "")
    out.print(table)
    out.print(plain(f"results: {path}"))
    report_cutoff(results.get("cutoff"))
    return results
