"""``theorembench papers``: fetch, add, list and show papers and their main theorems."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from theorembench.cli.common import DbOption, call, fail, out, plain, progress, store
from theorembench.latex.extract import ExtractSettings
from theorembench.pipeline.papers import (
    DEFAULT_EXTRACTOR,
    add_local,
    extract_papers,
    fetch_month,
)
from theorembench.sources.arxiv_eprints import DEFAULT_MAX_EPRINT_BYTES, MB
from theorembench.sources.licences import licence_info
from theorembench.store.papers import PaperRepo

papers_app = typer.Typer(help="Papers and their main theorems: fetch from arXiv, add local sources, inspect.",
                         no_args_is_help=True)  # fmt: skip

# options shared by `papers add` and `papers fetch`
ExtractorOpt = Annotated[str | None, typer.Option(
    "--extractor-model", help=f"Model for the LLM fallback (default $THEOREMBENCH_EXTRACTOR_MODEL or {DEFAULT_EXTRACTOR}).")]
NoLlmOpt = Annotated[bool, typer.Option("--no-llm", help="Rule-based extraction only.")]
ContextOpt = Annotated[int, typer.Option("--context-chars", help="Character budget of the introduction context.")]
FullContextOpt = Annotated[int, typer.Option("--full-context-chars", help="Character budget of the full context.")]


def extract_with_progress(repo: PaperRepo, ids: list[str], settings: Any, model: str | None,
                          force: bool = False) -> dict[str, Any]:  # fmt: skip
    """``extract_papers`` with a progress bar (the LLM is started only when a fallback is needed)."""
    bar = progress("extract", "{task.fields[item]}")
    task = bar.add_task("extract", total=len(ids), item="")

    def on_paper(paper_id: str, _done: Any) -> None:
        bar.update(task, advance=1, item=paper_id)

    with bar:
        return call(extract_papers, repo, ids, settings, model=model, force=force, on_paper=on_paper)


def summary_line(paper: dict[str, Any], theorem: dict[str, Any] | None) -> str:
    """One line per paper: its id, then its status or where its main theorem is."""
    if paper["status"] in ("failed", "skipped"):
        return f"{paper['id']}  {paper['status']}: {paper.get('reason') or ''}"
    if theorem is None:
        return f"{paper['id']}  {paper['status']}"
    record = theorem.get("record")
    if not record:
        return f"{paper['id']}  no main theorem ({theorem.get('reason')})"
    th = record["theorem"]
    where = record.get("source", {})
    label = f" \\label{{{th['label']}}}" if th.get("label") else ""
    return (f"{paper['id']}  {th['env_name']}{label} at {where.get('file')}:{where.get('line')} "
            f"[{record['extraction_path']}]")  # fmt: skip


@papers_app.command("add")
def papers_add(
    paths: Annotated[list[Path], typer.Argument(help="E-print files (.tar.gz, .gz, .tar, .tex) or source folders.")],
    extractor_model: ExtractorOpt = None,
    no_llm: NoLlmOpt = False,
    context_chars: ContextOpt = 4000,
    full_context_chars: FullContextOpt = 12000,
    db: DbOption = None,
) -> None:
    """Add local papers (not on arXiv, journal sources); prints one line per paper, starting with its id."""
    repo = PaperRepo(store(db))
    ids = []
    for path in paths:
        try:
            ids.append(add_local(repo, path))
        except FileNotFoundError as exc:
            raise fail(str(exc)) from None
    settings = ExtractSettings(llm_fallback=not no_llm, context_chars=context_chars,
                               full_context_chars=full_context_chars)  # fmt: skip
    done = extract_with_progress(repo, ids, settings, extractor_model)
    for paper_id in ids:
        paper = repo.get(paper_id)
        assert paper is not None
        out.print(summary_line(paper, done.get(paper_id)), highlight=False, soft_wrap=True, markup=False)


@papers_app.command("fetch")
def papers_fetch(
    month: Annotated[str, typer.Option("--month", help="Submission month, YYYY-MM.")],
    category: Annotated[str, typer.Option("--category", help="arXiv category, e.g. math.* or math.NT.")] = "math.*",
    max_papers: Annotated[int, typer.Option("--max", help="Stop after this many papers.")] = 50,
    base_url: Annotated[str | None, typer.Option("--base-url", help="An arXiv mirror for the API and e-prints.")] = None,
    delay: Annotated[float, typer.Option("--delay", help="Seconds between requests to arXiv (its rule: 3).")] = 3.0,
    extractor_model: ExtractorOpt = None,
    no_llm: NoLlmOpt = False,
    no_extract: Annotated[bool, typer.Option("--no-extract", help="Only fetch metadata and e-prints.")] = False,
    max_eprint_mb: Annotated[float, typer.Option("--max-eprint-mb", min=0.001,
        help="Cap on one e-print download in MB (1 MB = 2**20 bytes); a larger one is refused while it streams "
             "and the paper is marked failed.")] = DEFAULT_MAX_EPRINT_BYTES / MB,  # fmt: skip
    context_chars: ContextOpt = 4000,
    full_context_chars: FullContextOpt = 12000,
    db: DbOption = None,
) -> None:
    """Fetch a month of arXiv papers, their e-prints and main theorems (resumable)."""
    repo = PaperRepo(store(db))
    bar = progress("fetch", "{task.fields[item]}")
    try:
        with bar:
            ids = call(fetch_month, repo, month=month, category=category, max_papers=max_papers, base_url=base_url,
                       delay_s=delay, progress=bar, max_eprint_bytes=int(max_eprint_mb * MB))  # fmt: skip
    except ValueError as exc:
        raise fail(str(exc)) from None
    if not no_extract:
        settings = ExtractSettings(llm_fallback=not no_llm, context_chars=context_chars,
                                   full_context_chars=full_context_chars)  # fmt: skip
        extract_with_progress(repo, ids, settings, extractor_model)
    counts: dict[str, int] = {}
    for paper_id in ids:
        paper = repo.get(paper_id)
        if paper:
            counts[paper["status"]] = counts.get(paper["status"], 0) + 1
    out.print(f"{len(ids)} papers for {month} ({category}): " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())),
              markup=False, highlight=False)  # fmt: skip


@papers_app.command("list")
def papers_list(
    month: Annotated[str | None, typer.Option("--month", help="Only this month (YYYY-MM).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON lines.")] = False,
    db: DbOption = None,
) -> None:
    """The stored papers with their status and main theorem."""
    repo = PaperRepo(store(db))
    papers = repo.list(month=month)
    if as_json:
        for paper in papers:
            th = repo.theorem(paper["id"])
            print(json.dumps({"id": paper["id"], "status": paper["status"], "title": paper["title"],
                              "theorem_path": th["path"] if th else None, "reason": paper["reason"],
                              "license": paper.get("license")}))  # fmt: skip
        return
    table = Table("id", "status", "title", "main theorem", "path")
    for paper in papers:
        th = repo.theorem(paper["id"])
        record = (th or {}).get("record")
        thm = ""
        if record:
            t = record["theorem"]
            thm = f"{t['env_name']}" + (f" {t['label']}" if t.get("label") else "")
        elif th:
            thm = "none"
        table.add_row(plain(paper["id"]), plain(paper["status"]), plain((paper["title"] or "")[:60]), plain(thm),
                      plain(th["path"] if th else ""))  # fmt: skip
    out.print(table)


@papers_app.command("show")
def papers_show(
    paper_id: Annotated[str, typer.Argument(help="Paper id (or arXiv id without version).")],
    as_json: Annotated[bool, typer.Option("--json", help="The whole record, main theorem included, as one JSON object.")] = False,
    db: DbOption = None,
) -> None:
    """One paper: metadata, extraction path, problems and its main theorem with context."""
    repo = PaperRepo(store(db))
    paper = repo.find(paper_id)
    if paper is None:
        raise fail(f"no paper {paper_id!r} in the store")
    theorem = repo.theorem(paper["id"])
    if as_json:
        print(json.dumps({"paper": paper, "main_theorem": theorem}, ensure_ascii=False, indent=2, default=str))
        return
    out.print(Text.assemble((paper["id"], "bold"), f"  {paper['status']}  {paper.get('title') or ''}"), highlight=False)
    licence = licence_info(paper.get("license"))
    out.print(f"licence: {licence.name}" + (f" ({licence.url})" if licence.url else "")
              + ("" if licence.redistributable else " - text not redistributable"), markup=False, highlight=False)
    if paper.get("reason"):
        out.print(f"reason: {paper['reason']}", markup=False)
    for problem in paper.get("problems") or []:
        out.print(f"problem: {problem}", markup=False)
    if not theorem:
        return
    record = theorem.get("record")
    if not record:
        out.print(f"no main theorem: {theorem.get('reason')}", markup=False)
        return
    th = record["theorem"]
    src = record["source"]
    out.print(f"main theorem: {th['env_name']} {th.get('label') or ''} at {src['file']}:{src['line']} "
              f"(path: {record['extraction_path']}; {record['extraction_reason']})", markup=False)  # fmt: skip
    out.print("\n[bold]expanded theorem[/]")
    out.print(record["expanded_theorem"], markup=False, highlight=False)
    out.print(f"\n[bold]context[/] ({len(record['context'])} chars; full context {len(record['full_context'])} chars)")
    out.print(record["context"][:1500] + ("..." if len(record["context"]) > 1500 else ""), markup=False, highlight=False)
    for problem in record.get("problems") or []:
        out.print(f"problem: {problem}", markup=False)
