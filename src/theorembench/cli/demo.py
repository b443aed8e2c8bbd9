"""``theorembench demo``: the main job, offline on the embedded model."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from theorembench.cli.common import DbOption, opened_store, out, user_errors
from theorembench.cli.eternal_build import run_eternal_build
from theorembench.cli.eternal_eval import eternal_eval
from theorembench.cli.eval import run_mcq_command
from theorembench.cli.hybrid import run_hybrid_build, run_hybrid_eval
from theorembench.cli.improof_eval import print_results as print_improof_results
from theorembench.cli.improof_stats import print_stats
from theorembench.cli.lmb import run_lmb_build
from theorembench.cli.papers import extract_with_progress, summary_line
from theorembench.sandbox import require_isolation
from theorembench.sandbox import summary_line as sandbox_summary
from theorembench.suite.demo import DEMO_MODEL, DemoSettings, instantiate_shipped_template, shipped_file


def demo(
    model: Annotated[str, typer.Option("--model", "-m", help="Model for every stage and for the evaluation.")] = DEMO_MODEL,
    out_dir: Annotated[Path, typer.Option("--out-dir", help="Where the splits, results, log and report go.")] = Path("demo-output"),
    max_tokens: Annotated[int, typer.Option("--max-tokens", help="Max completion tokens per evaluation answer.")] = 384,
    accept_weak_isolation: Annotated[bool, typer.Option("--accept-weak-isolation", help="Run EternalMath's generated code and IMProofBench's tools even below full sandbox isolation (rlimits only; recorded in their results). Without it the demo refuses to start there: see `theorembench sandbox check`.")] = False,
    db: DbOption = None,
) -> None:  # fmt: skip
    """The main job, offline on the embedded model: sample papers -> LiveMathematicianBench and Proof2Hybrid
    questions, EternalMath instances -> evaluation -> reports; IMProofBench's sample problems -> agentic and
    single-turn evaluation -> auto-grades -> statistics."""
    from theorembench.latex.extract import ExtractSettings
    from theorembench.pipeline.papers import add_local
    from theorembench.report.tables import write_report
    from theorembench.store.papers import PaperRepo

    out.print(f"[bold]theorembench demo[/] with {escape(model)}: LiveMathematicianBench, Proof2Hybrid, EternalMath "
              "and IMProofBench, offline.")  # fmt: skip
    out.print("The embedded model is tiny and gets mathematics wrong: this shows the machinery, not a score.\n")
    settings = DemoSettings(model=model, out_dir=out_dir, max_tokens=max_tokens)
    accept = accept_weak_isolation or None
    with user_errors():  # the demo runs generated code and tools: refuse below full isolation before any work
        isolation = require_isolation(accept, purpose="the demo's EternalMath validation and IMProofBench tools")
    out.print(f"sandbox isolation: {sandbox_summary(isolation)}\n", markup=False)

    # 1. papers -> main theorems (the rule path finds them; no model needed)
    ids = []
    with opened_store(db) as st, shipped_file("papers") as root:
        repo = PaperRepo(st)
        folders = sorted(p for p in Path(root).iterdir() if p.is_dir())
        out.print(f"[bold]1. papers[/]: {len(folders)} sample papers shipped with theorembench")
        for folder in folders:
            ids.append(add_local(repo, folder))
        done = extract_with_progress(repo, ids, ExtractSettings(llm_fallback=False), None)
        for paper_id in ids:
            paper = repo.get(paper_id)
            assert paper is not None
            out.print("   " + summary_line(paper, done.get(paper_id)), markup=False, highlight=False)

    # 2. theorems -> questions (all stages, lowered thresholds)
    out.print(f"\n[bold]2. questions[/]: sketch, taxonomy, stem, distractors, LaTeX check, rubric, calibration ({escape(model)})")
    result = run_lmb_build(month=settings.month, db=db, generator=model, judges=[model], calibrator=model, papers=ids,
                           out_dir=out_dir / "lmb", overrides=dict(settings.lmb), concurrency=settings.concurrency)  # fmt: skip

    # 3. evaluation on what was built (the hard split, or the full one when calibration kept nothing)
    split = result.files["hard"] if result.funnel["hard"] else result.files["full"]
    with shipped_file("demo_mcq.json") as shipped_items:
        if not result.funnel["generated"]:
            out.print("the embedded model produced no usable item; evaluating the shipped sample items instead")
            split = shipped_items
        out.print(f"\n[bold]3. evaluation[/]: {escape(model)} on {escape(str(split))}")
        run = run_mcq_command(
            split, model=model, db=db, out_path=out_dir / "results.json", max_tokens=max_tokens,
            temperature=0.0, max_connections=settings.concurrency, log_dir=out_dir / "logs", resume=True,
        )  # fmt: skip
    report = write_report(run.results, out_dir, json_path=str(run.path), log_path=str(run.log))
    out.print(f"report: {report} (with SVG charts beside it)", markup=False)

    # 4. Proof2Hybrid on the same papers: seeds -> judged seeds -> distractors -> m-out-of-n questions -> eval
    out.print(f"\n[bold]4. Proof2Hybrid[/]: lemma-proof seeds from the same papers, judged, with distractors "
              f"({escape(model)})")  # fmt: skip
    summary = run_hybrid_build(db=db, papers=ids, generators=[model], judges=[model], out_dir=out_dir / "hybrid",
                               overrides=dict(settings.hybrid), concurrency=settings.concurrency)  # fmt: skip
    if summary["funnel"]["questions"]:
        run_hybrid_eval(out_dir / "hybrid", model=model, mode="both", max_tokens=max_tokens,
                        max_connections=settings.concurrency,
                        out_path=out_dir / "hybrid_results.json", log_dir=out_dir / "logs", db=db)  # fmt: skip
    else:
        out.print("the embedded model's judges kept too few seeds or distractors for a question; nothing to evaluate")

    # 5. EternalMath: templates from the papers, verified in the sandbox, plus the shipped template; then evaluation
    out.print(f"\n[bold]5. EternalMath[/]: MSC classes, computability, templates, code, sandboxed validation "
              f"({escape(model)})")  # fmt: skip
    run_eternal_demo(ids, model=model, out_dir=out_dir / "eternal", max_tokens=max_tokens, db=db, accept=accept)

    # 6. IMProofBench: the shipped problems, staged conversations with tools in the sandbox, auto-grades, statistics
    out.print(f"\n[bold]6. IMProofBench[/]: sample problems, main question then subquestions, python in the sandbox, "
              f"token budgets ({escape(model)})")  # fmt: skip
    run_improof_demo(model=model, out_dir=out_dir / "improof", db=db, accept=accept)

    # 7. the platform: the same problems and answers, ready for blind grading in the browser
    out.print("\n[bold]7. IMProofBench platform[/]: the problems and the embedded model's answers, ready to grade")
    run_platform_demo(out_dir=out_dir / "improof", db=db)

    # 8. the live benchmark: the month's release, evaluated under the contamination guard, then the leaderboard
    out.print(f"\n[bold]8. release and leaderboard[/]: the {settings.month} release of the sample papers, "
              f"{escape(model)} evaluated on it with the contamination guard, the leaderboard of every run")  # fmt: skip
    run_release_demo(ids, settings=settings, db=db, accept=accept)


def run_release_demo(paper_ids: list[str], *, settings: DemoSettings, db: str | None, accept: bool | None) -> None:
    """Build the release (its steps are the demo's own, found stored), evaluate on each method's release items
    under the guard's default for a release (exclude), and build the leaderboard from every scorecard."""
    from theorembench.cli.release import print_release
    from theorembench.suite.demo import build_demo_release, release_files
    from theorembench.suite.leaderboard import build_leaderboard

    model, out_dir = settings.model, settings.out_dir
    with user_errors(), opened_store(db) as st:
        release = build_demo_release(st, settings, paper_ids, accept=accept)
    print_release(release.manifest, release.folder, new=release.new)
    files = release_files(release)
    evals = out_dir / "release-results"
    if "lmb" in files:
        run_mcq_command(files["lmb"], model=model, db=db, out_path=evals / "lmb.json", max_tokens=settings.max_tokens,
                        temperature=0.0, max_connections=settings.concurrency, log_dir=out_dir / "logs",
                        resume=True)  # fmt: skip
    if "eternal" in files:
        eternal_eval(files["eternal"], model=model, n=1, judge=None, out_dir=evals / "eternal",
                     max_tokens=settings.max_tokens, temperature=0.0, seed=None,
                     max_connections=settings.concurrency, log_dir=out_dir / "logs", db=db)  # fmt: skip
    if "hybrid" in files:
        run_hybrid_eval(files["hybrid"], model=model, mode="both", max_tokens=settings.max_tokens,
                        max_connections=settings.concurrency, out_path=evals / "hybrid.json",
                        log_dir=out_dir / "logs", db=db)  # fmt: skip
    if not files:
        out.print("the release holds no item the embedded model could be evaluated on", markup=False)
    with user_errors():
        board = build_leaderboard([out_dir], out_dir / "leaderboard", title="theorembench demo leaderboard")
    out.print(f"leaderboard: {board.index} ({len(board.entries)} runs; open it in a browser, no server needed)",
              markup=False)  # fmt: skip


def run_improof_demo(*, model: str, out_dir: Path, db: str | None, accept: bool | None = None) -> None:
    """Import the shipped problems, evaluate ``model`` agentic and single-turn, auto-grade, print the statistics."""
    settings = DemoSettings(model=model)
    budgets = dict(settings.improof_budgets)
    from theorembench.methods.improof.catalog import import_demo_problems
    from theorembench.methods.improof.harness import run_improof_eval
    from theorembench.methods.improof.stats_load import improof_stats

    with opened_store(db) as st:
        ids = import_demo_problems(st)
        out.print(f"problems: {', '.join(ids)}", markup=False)
        for mode, tools in settings.improof_modes:
            out.print(f"{mode}: budgets {budgets['main_tokens']} tokens for the main question, "
                      f"{budgets['sub_tokens']} for each subquestion", markup=False)  # fmt: skip
            result = run_improof_eval(st, model, problem_ids=ids, tools=tools, mode=mode, out_dir=out_dir,
                                      log_dir=out_dir.parent / "logs", tool_timeout_s=settings.improof_tool_timeout_s,
                                      tool_memory_mb=settings.improof_tool_memory_mb,
                                      max_connections=settings.concurrency, generate=settings.improof_generate(),
                                      accept_weak_isolation=accept, **budgets)  # fmt: skip
            print_improof_results(result.results)
        stats = improof_stats(st, run_ids=None, models=None, out_dir=out_dir / "stats")
    print_stats(stats.doc)
    out.print(f"report: {stats.paths['report']} (no human grades yet: grade with `theorembench improof grades "
              f"import`, or on the platform)", markup=False)  # fmt: skip


def run_platform_demo(*, out_dir: Path, db: str | None) -> None:
    """Demo accounts and grading assignments on the store, then the one command that opens the platform."""
    import os
    import shlex

    from theorembench.web.demo_platform import seed_demo_platform

    with opened_store(db) as st:
        seeded = seed_demo_platform(st)
    for pid, n in seeded.assigned.items():
        out.print(f"   {pid}: {n} answers to grade blind", markup=False)
    accounts = out_dir / "platform_accounts.txt"
    accounts.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(accounts, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(f"admin  {seeded.admin[0]}  {seeded.admin[1]}\ngrader {seeded.grader[0]}  {seeded.grader[1]}\n")
    command = "theorembench improof serve" + (f" --db {shlex.quote(str(db))}" if db else "")
    out.print(f"open the platform:  {command}   then http://127.0.0.1:8000/", markup=False)
    out.print(f"   admin  {seeded.admin[0]}  password {seeded.admin[1]}", markup=False)
    out.print(f"   grader {seeded.grader[0]}  password {seeded.grader[1]}  (also in {accounts})", markup=False)


def run_eternal_demo(paper_ids: list[str], *, model: str, out_dir: Path, max_tokens: int, db: str | None,
                     accept: bool | None = None) -> None:  # fmt: skip
    """Build from the papers, instantiate the shipped derangements template, evaluate ``model`` on all instances."""
    from theorembench.common.outputs import write_jsonl

    settings = DemoSettings(model=model, out_dir=out_dir.parent, max_tokens=max_tokens)
    built = run_eternal_build(db=db, paper_ids=paper_ids, generator=model, judge=model, out_dir=out_dir,
                              overrides=dict(settings.eternal), concurrency=settings.concurrency,
                              accept_weak_isolation=accept)  # fmt: skip
    with user_errors():
        result, isolation = instantiate_shipped_template(settings, out_dir / "shipped", accept=accept)
    out.print(f"shipped template (derangements): {len(result.instances)} instances verified in the sandbox "
              f"(isolation: {sandbox_summary(isolation)})", markup=False)  # fmt: skip
    instances = [*_read_jsonl(Path(built.files["instances"])), *result.instances]
    combined = out_dir / "demo_instances.jsonl"
    write_jsonl(combined, instances)
    out.print(f"evaluating {escape(model)} on {len(instances)} EternalMath instances")
    eternal_eval(combined, model=model, n=1, judge=None, out_dir=out_dir / "eval", max_tokens=max_tokens,
                 temperature=0.0, seed=None, max_connections=settings.concurrency, log_dir=out_dir.parent / "logs",
                 db=db)  # fmt: skip


def _read_jsonl(path: Path) -> list[dict]:
    import json

    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
