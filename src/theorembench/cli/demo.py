"""``theorembench demo``: the main job, offline on the embedded model."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from theorembench.cli.common import DbOption, opened_store, out
from theorembench.cli.eternal_build import run_eternal_build
from theorembench.cli.eternal_eval import eternal_eval
from theorembench.cli.eval import run_mcq_command
from theorembench.cli.hybrid import run_hybrid_build, run_hybrid_eval
from theorembench.cli.improof_eval import print_results as print_improof_results
from theorembench.cli.improof_stats import print_stats
from theorembench.cli.lmb import run_lmb_build
from theorembench.cli.papers import extract_with_progress, summary_line

DEMO_MONTH = "2026-11"
# The embedded model writes poor questions: the demo lowers the thresholds that would
# reject them all, so that every stage runs. Real builds use the defaults.
DEMO_OVERRIDES = {
    "generation.max_tokens": 700, "generation.variants": 2, "generation.red_flag_checks": False, "filters.rubric_min": 0, "filters.stem_only": False,
    "surface.min_length_ratio": 0.0, "surface.max_length_ratio": 100.0, "surface.max_latex_density_gap": 1.0,
    "surface.revisions": 0, "latex.repairs": 1, "context.full_context_chars": 2000,
}  # fmt: skip
# Proof2Hybrid on the same papers with one judge and few calls per seed: the tiny model judges
# nearly everything correct, so the bounds are opened to let every stage run. Real builds use
# the paper's values (`theorembench hybrid config`).
HYBRID_OVERRIDES = {
    "seed_filter.n1": 1, "seed_filter.k1": 1, "distractors.n2": 2, "distractors.k2": 1,
    "distractor_filter.n3": 1, "distractor_filter.k3": 0, "distractor_filter.k4": 1,
    "distractor_filter.enforce_bounds": False, "questions.m": 1, "questions.n": 3,
    "generation.max_tokens": 400, "generation.max_seeds": 6,
}  # fmt: skip
# EternalMath on the same papers: two templates a paper, short replies, one small batch of
# instances. The embedded model's templates rarely survive the cross-check (an honest outcome),
# so the demo also instantiates the template shipped for the derangements paper.
ETERNAL_OVERRIDES = {
    "templates.per_paper": 2, "templates.paper_chars": 4000, "generation.max_tokens": 700,
    "translation.repair_rounds": 0, "execution.instances_per_template": 3,
}  # fmt: skip
ETERNAL_SHIPPED_INSTANCES = 5
# IMProofBench with small budgets: the tiny model rarely calls a tool or `submit`, so its
# agentic stages end on their budgets; the single-turn mode (App. I.1) gets boxed answers.
IMPROOF_BUDGETS = {"main_tokens": 400, "sub_tokens": 160}
IMPROOF_REPLY_TOKENS = 160  # per model call, so a stage ends within a few calls


def demo(
    model: Annotated[str, typer.Option("--model", "-m", help="Model for every stage and for the evaluation.")] = "local/smollm2",
    out_dir: Annotated[Path, typer.Option("--out-dir", help="Where the splits, results, log and report go.")] = Path("demo-output"),
    max_tokens: Annotated[int, typer.Option("--max-tokens", help="Max completion tokens per evaluation answer.")] = 384,
    db: DbOption = None,
) -> None:
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

    # 1. papers -> main theorems (the rule path finds them; no model needed)
    papers_root = resources.files("theorembench.data").joinpath("papers")
    ids = []
    with opened_store(db) as st, resources.as_file(papers_root) as root:
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
    result = run_lmb_build(month=DEMO_MONTH, db=db, generator=model, judges=[model], calibrator=model, papers=ids,
                           out_dir=out_dir / "lmb", overrides=DEMO_OVERRIDES, concurrency=1)  # fmt: skip

    # 3. evaluation on what was built (the hard split, or the full one when calibration kept nothing)
    split = result.files["hard"] if result.funnel["hard"] else result.files["full"]
    if not result.funnel["generated"]:
        out.print("the embedded model produced no usable item; evaluating the shipped sample items instead")
        split_res = resources.files("theorembench.data").joinpath("demo_mcq.json")
        with resources.as_file(split_res) as path:
            split = Path(path)
    out.print(f"\n[bold]3. evaluation[/]: {escape(model)} on {escape(str(split))}")
    run = run_mcq_command(
        split, model=model, db=db, out_path=out_dir / "results.json", max_tokens=max_tokens,
        temperature=0.0, max_connections=1, log_dir=out_dir / "logs", resume=True,
    )  # fmt: skip
    report = write_report(run.output, out_dir, json_path=str(run.out_path), log_path=str(run.log_path))
    out.print(f"report: {report} (with SVG charts beside it)", markup=False)

    # 4. Proof2Hybrid on the same papers: seeds -> judged seeds -> distractors -> m-out-of-n questions -> eval
    out.print(f"\n[bold]4. Proof2Hybrid[/]: lemma-proof seeds from the same papers, judged, with distractors "
              f"({escape(model)})")  # fmt: skip
    summary = run_hybrid_build(db=db, papers=ids, generators=[model], judges=[model], out_dir=out_dir / "hybrid",
                               overrides=HYBRID_OVERRIDES, concurrency=1)  # fmt: skip
    if summary["funnel"]["questions"]:
        run_hybrid_eval(out_dir / "hybrid", model=model, mode="both", max_tokens=max_tokens, max_connections=1,
                        out_path=out_dir / "hybrid_results.json", log_dir=out_dir / "logs", db=db)  # fmt: skip
    else:
        out.print("the embedded model's judges kept too few seeds or distractors for a question; nothing to evaluate")

    # 5. EternalMath: templates from the papers, verified in the sandbox, plus the shipped template; then evaluation
    out.print(f"\n[bold]5. EternalMath[/]: MSC classes, computability, templates, code, sandboxed validation "
              f"({escape(model)})")  # fmt: skip
    run_eternal_demo(ids, model=model, out_dir=out_dir / "eternal", max_tokens=max_tokens, db=db)

    # 6. IMProofBench: the shipped problems, staged conversations with tools in the sandbox, auto-grades, statistics
    out.print(f"\n[bold]6. IMProofBench[/]: sample problems, main question then subquestions, python in the sandbox, "
              f"token budgets ({escape(model)})")  # fmt: skip
    run_improof_demo(model=model, out_dir=out_dir / "improof", db=db)

    # 7. the platform: the same problems and answers, ready for blind grading in the browser
    out.print("\n[bold]7. IMProofBench platform[/]: the problems and the embedded model's answers, ready to grade")
    run_platform_demo(out_dir=out_dir / "improof", db=db)


def run_improof_demo(*, model: str, out_dir: Path, db: str | None) -> None:
    """Import the shipped problems, evaluate ``model`` agentic and single-turn, auto-grade, print the statistics."""
    from theorembench.methods.improof.catalog import import_demo_problems
    from theorembench.methods.improof.harness import run_improof_eval
    from theorembench.methods.improof.stats_load import improof_stats

    with opened_store(db) as st:
        ids = import_demo_problems(st)
        out.print(f"problems: {', '.join(ids)}", markup=False)
        for mode, tools in (("agentic", "python"), ("single-turn", None)):
            out.print(f"{mode}: budgets {IMPROOF_BUDGETS['main_tokens']} tokens for the main question, "
                      f"{IMPROOF_BUDGETS['sub_tokens']} for each subquestion", markup=False)  # fmt: skip
            result = run_improof_eval(st, model, problem_ids=ids, tools=tools, mode=mode, out_dir=out_dir,
                                      log_dir=out_dir.parent / "logs", tool_timeout_s=60, tool_memory_mb=2048,
                                      max_connections=1, generate={"max_tokens": IMPROOF_REPLY_TOKENS},
                                      **IMPROOF_BUDGETS)  # fmt: skip
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


def run_eternal_demo(paper_ids: list[str], *, model: str, out_dir: Path, max_tokens: int, db: str | None) -> None:
    """Build from the papers, instantiate the shipped derangements template, evaluate ``model`` on all instances."""
    from theorembench.common.outputs import write_jsonl
    from theorembench.methods.eternal.instantiate import instantiate_templates, write_outputs
    from theorembench.methods.eternal.template import load_templates

    built = run_eternal_build(db=db, paper_ids=paper_ids, generator=model, judge=model, out_dir=out_dir,
                              overrides=ETERNAL_OVERRIDES, concurrency=1)  # fmt: skip
    shipped = resources.files("theorembench.data").joinpath("eternal", "derangements.json")
    with resources.as_file(shipped) as path:
        templates = load_templates(Path(path))
    result = instantiate_templates(templates, ETERNAL_SHIPPED_INSTANCES, 0)
    write_outputs(result, out_dir / "shipped")
    out.print(f"shipped template (derangements): {len(result.instances)} instances verified in the sandbox "
              f"(isolation: {' '.join(result.isolation)})", markup=False)  # fmt: skip
    instances = [*_read_jsonl(Path(built.files["instances"])), *result.instances]
    combined = out_dir / "demo_instances.jsonl"
    write_jsonl(combined, instances)
    out.print(f"evaluating {escape(model)} on {len(instances)} EternalMath instances")
    eternal_eval(combined, model=model, n=1, judge=None, out_dir=out_dir / "eval", max_tokens=max_tokens,
                 temperature=0.0, seed=None, max_connections=1, log_dir=out_dir.parent / "logs", db=db)  # fmt: skip


def _read_jsonl(path: Path) -> list[dict]:
    import json

    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
