"""``theorembench hybrid``: Proof2Hybrid seeds, build and evaluation."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

hybrid_app = typer.Typer(help="Proof2Hybrid: m-out-of-n multiple-judge questions from definitions and proofs.",
                         no_args_is_help=True)  # fmt: skip

DbOpt = Annotated[Path | None, typer.Option("--db", help="Store file (default $THEOREMBENCH_DB).")]


def _progress(label: str) -> Progress:
    from theorembench.cli import err

    return Progress(TextColumn(f"[bold]{label}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[note]}"),
                    TimeElapsedColumn(), console=err,
                    disable=not err.is_terminal and os.environ.get("THEOREMBENCH_PROGRESS") != "1")  # fmt: skip


def collect_seeds(stacks: Path | None, chapters: list[str] | None, papers: list[str] | None, db: Path | None):
    from theorembench.cli import _fail, _store
    from theorembench.methods.hybrid.seeds import paper_seeds, stacks_seeds

    seeds, problems = [], []
    if stacks is not None:
        if not stacks.is_dir():
            raise _fail(f"--stacks {stacks}: not a folder")
        try:
            found, probs = stacks_seeds(stacks, chapters or None)
        except FileNotFoundError as exc:
            raise _fail(str(exc)) from None
        seeds += found
        problems += probs
    if papers:
        from theorembench.latex.extract import ExtractionError, load_paper
        from theorembench.papers import PaperRepo

        store = _store(db)
        repo = PaperRepo(store)
        for ref in papers:
            paper = repo.find(ref)
            if paper is None or not paper.get("folder"):
                raise _fail(f"no unpacked paper {ref!r} in the store (add it with `theorembench papers add`)")
            try:
                found, probs = paper_seeds(load_paper(Path(paper["folder"])), paper["id"])
            except ExtractionError as exc:
                problems.append(f"{paper['id']}: {exc}")
                continue
            seeds += found
            problems += probs
        store.close()
    if stacks is None and not papers:
        raise _fail("give --stacks DIR and/or --paper ID")
    return seeds, problems


@hybrid_app.command("config")
def hybrid_config() -> None:
    """Print the default settings (the paper's Table 2 values)."""
    from theorembench.methods.hybrid.config import DEFAULT_TOML

    print(DEFAULT_TOML, end="")


@hybrid_app.command("seeds")
def hybrid_seeds(
    stacks: Annotated[Path | None, typer.Option("--stacks", help="A Stacks Project folder (chapters, preamble.tex, tags/tags).")] = None,
    chapter: Annotated[list[str] | None, typer.Option("--chapter", help="Only these chapters (file names without .tex).")] = None,
    paper: Annotated[list[str] | None, typer.Option("--paper", help="Stored papers to take seeds from.")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Write the seeds as JSONL.")] = None,
    db: DbOpt = None,
) -> None:
    """Seed items: one per definition and per statement followed by its proof."""
    from theorembench.cli import out as console

    seeds, problems = collect_seeds(stacks, chapter, paper, db)
    table = Table("source", "chapter", "definitions", "statement+proof", title="seeds", title_justify="left")
    counts: dict[tuple[str, str], list[int]] = {}
    for s in seeds:
        row = counts.setdefault((s.source, s.chapter or ""), [0, 0])
        row[0 if s.kind == "definition" else 1] += 1
    for (source, chap), (d, sp) in sorted(counts.items()):
        table.add_row(source, chap, str(d), str(sp))
    console.print(table)
    console.print(f"{len(seeds)} seeds; {len(problems)} problems recorded")
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("".join(json.dumps(s.to_dict(), ensure_ascii=False) + "\n" for s in seeds))
        console.print(f"seeds: {out}")


@hybrid_app.command("build")
def hybrid_build(
    stacks: Annotated[Path | None, typer.Option("--stacks", help="A Stacks Project folder.")] = None,
    chapter: Annotated[list[str] | None, typer.Option("--chapter", help="Only these chapters.")] = None,
    paper: Annotated[list[str] | None, typer.Option("--paper", help="Stored papers to take seeds from.")] = None,
    generator: Annotated[list[str] | None, typer.Option("--generator", help="Distractor models (m2 of them).")] = None,
    judge: Annotated[list[str] | None, typer.Option("--judge", help="Judge models (m1 = m3 of them).")] = None,
    config: Annotated[Path | None, typer.Option("--config", help="TOML settings (see `theorembench hybrid config`).")] = None,
    max_seeds: Annotated[int | None, typer.Option("--max-seeds", help="Use at most this many seeds.")] = None,
    out_dir: Annotated[Path, typer.Option("--out-dir", help="Where the benchmark goes.")] = Path("hybrid"),
    concurrency: Annotated[int, typer.Option("--concurrency")] = 4,
    db: DbOpt = None,
) -> None:
    """Filter seeds, write and filter distractors, and aggregate m-out-of-n questions (resumable)."""
    run_hybrid_build(stacks=stacks, chapters=chapter, papers=paper, generators=generator, judges=judge,
                     config=config, max_seeds=max_seeds, out_dir=out_dir, concurrency=concurrency, db=db)  # fmt: skip


def run_hybrid_build(*, stacks, chapters, papers, generators, judges, config, max_seeds, out_dir, concurrency, db,
                     overrides: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    import hashlib

    from theorembench.cli import _fail, _store, out
    from theorembench.llm import LLM, ModelConfigError
    from theorembench.llm.local import stop_private_servers
    from theorembench.methods.hybrid.config import HybridConfigError, load_config
    from theorembench.methods.hybrid.pipeline import HybridBuilder, build, write_outputs

    try:
        cfg = load_config(config, **{"models.generators": generators or None, "models.judges": judges or None,
                                     "generation.max_seeds": max_seeds, **(overrides or {})})  # fmt: skip
        cfg.check()
    except HybridConfigError as exc:
        raise _fail(str(exc)) from None
    seeds, problems = collect_seeds(stacks, chapters, papers, db)
    seeds.sort(key=lambda s: s.id)
    if cfg.generation.max_seeds:
        seeds = seeds[: cfg.generation.max_seeds]
    store = _store(db)
    llm = LLM(store)
    try:
        for name in {*cfg.models.generators, *cfg.models.judges}:
            llm.resolve(name)
    except ModelConfigError as exc:
        raise _fail(str(exc)) from None
    key = hashlib.sha256(json.dumps(cfg.model_dump(), sort_keys=True).encode()).hexdigest()[:12]
    progress = _progress("hybrid build")
    task = progress.add_task("hybrid", total=len(seeds), note="")

    def on_step(k: str, stage: str, status: str) -> None:
        if stage == "seed_filter":
            progress.update(task, advance=1, note=f"{k} {status}")

    builder = HybridBuilder(store, llm, cfg, pipeline=f"hybrid/{key}", on_step=on_step)

    async def go():
        try:
            return await build(builder, seeds, concurrency=concurrency)
        finally:
            await llm.aclose()

    try:
        with progress:
            outcome = asyncio.run(go())
    finally:
        stop_private_servers()
    summary = write_outputs(store, outcome, out_dir, cfg)
    summary["seed_problems"] = len(problems)
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
    out.print(f"benchmark: {out_dir / 'questions.json'} (+ .jsonl, audit.jsonl, ppl_questions.json, summary.json)")
    store.close()
    return summary


@hybrid_app.command("eval")
def hybrid_eval(
    folder: Annotated[Path, typer.Argument(help="A folder written by `hybrid build`.")],
    model: Annotated[str, typer.Option("--model", "-m", help="Model to evaluate.")],
    mode: Annotated[str, typer.Option("--mode", help="generation, perplexity or both.")] = "both",
    max_tokens: Annotated[int, typer.Option("--max-tokens")] = 4096,
    limit: Annotated[int | None, typer.Option("--limit", help="Only the first N questions.")] = None,
    max_connections: Annotated[int | None, typer.Option("--max-connections")] = None,
    out_path: Annotated[Path | None, typer.Option("--out", help="Results JSON (default <folder>/results_<model>.json).")] = None,
    log_dir: Annotated[Path | None, typer.Option("--log-dir", help="Inspect log folder (default ./logs).")] = None,
    db: DbOpt = None,
) -> None:
    """Score a model generation-based (loose and tight) and/or perplexity-based, with random baselines."""
    from theorembench.cli import _fail, _store, out
    from theorembench.evaluate.inspect_log import default_log_dir
    from theorembench.llm import LLM, GenerateSettings, ModelConfigError
    from theorembench.llm.local import stop_private_servers
    from theorembench.methods.hybrid.evaluate import evaluate_generation

    if mode not in ("generation", "perplexity", "both"):
        raise _fail("--mode must be generation, perplexity or both")
    try:
        questions = json.loads((folder / "questions.json").read_text())
        ppl_questions = json.loads((folder / "ppl_questions.json").read_text())
    except (OSError, ValueError) as exc:
        raise _fail(f"{folder}: not a `hybrid build` output ({exc})") from None
    if limit:
        questions, ppl_questions = questions[:limit], ppl_questions[:limit]
    store = _store(db)
    llm = LLM(store)
    try:
        spec = llm.resolve(model)
    except ModelConfigError as exc:
        raise _fail(str(exc)) from None
    results: dict[str, Any] = {"model": model, "folder": str(folder)}
    table = Table("metric", "score", "random guess", title=f"Proof2Hybrid: {model}", title_justify="left")

    async def go() -> None:
        try:
            if mode in ("generation", "both") and questions:
                conns = max_connections or (1 if spec.is_local else 4)
                gen = await evaluate_generation(
                    store, llm, spec, questions, settings=GenerateSettings(max_tokens=max_tokens, max_connections=conns),
                    log_dir=log_dir or default_log_dir(), name=str(folder),
                )  # fmt: skip
                results["generation"] = gen
                s = gen["summary"]
                table.add_row("loose (m-out-of-n)", f"{s['loose']:.1f}", f"{s['random_baseline']['loose']:.1f}")
                table.add_row("tight (m-out-of-n)", f"{s['tight']:.1f}", f"{s['random_baseline']['tight']:.1f}")
            if mode in ("perplexity", "both") and ppl_questions:
                results["perplexity"] = await _perplexity(spec, ppl_questions)
                p = results["perplexity"]["summary"]
                table.add_row("perplexity (weighted, max 100)", f"{p['score']:.1f}", f"{p['random_baseline']:.1f}")
        finally:
            await llm.aclose()

    try:
        asyncio.run(go())
    finally:
        stop_private_servers()
        store.close()
    out.print(table)
    safe = "".join(ch if ch.isalnum() or ch in "-." else "_" for ch in model)
    path = out_path or folder / f"results_{safe}.json"
    path.write_text(json.dumps(results, indent=1, ensure_ascii=False, default=str))
    out.print(f"results: {path}")


async def _perplexity(spec: Any, ppl_questions: list[dict[str, Any]]) -> dict[str, Any]:
    """Each seed with its own distractors; the option with the lowest perplexity is the answer."""
    from theorembench.methods.hybrid.perplexity import score_questions
    from theorembench.methods.hybrid.prompts import PERPLEXITY_PREFIX

    base_url, api_key = spec.base_url, spec.api_key
    if spec.is_local:
        from theorembench.llm.local import ensure_local

        base_url, api_key = ensure_local(spec.model, logits_all=True), "local"
    return await score_questions(base_url, spec.model, ppl_questions, prefix=PERPLEXITY_PREFIX,
                                 concurrency=1 if spec.is_local else 4, api_key=api_key)  # fmt: skip
