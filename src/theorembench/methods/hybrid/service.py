"""Proof2Hybrid as a Python user or the CLI calls it: collect seeds, build a benchmark, evaluate a model.

Each function checks its settings and models before any work starts and raises
:class:`~theorembench.common.errors.UserError` with a one-line message.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from theorembench.common.errors import UserError
from theorembench.common.outputs import write_json
from theorembench.evaluate.inspect_log import default_log_dir
from theorembench.latex.extract import ExtractionError, load_paper
from theorembench.llm import LLM, GenerateSettings, ModelSpec
from theorembench.llm.local import ensure_local, stop_private_servers
from theorembench.methods.hybrid.config import load_config
from theorembench.methods.hybrid.evaluate import evaluate_generation
from theorembench.methods.hybrid.perplexity import score_questions
from theorembench.methods.hybrid.pipeline import HybridBuilder, build, write_outputs
from theorembench.methods.hybrid.prompts import PERPLEXITY_PREFIX
from theorembench.methods.hybrid.seeds import paper_seeds, stacks_seeds
from theorembench.store import Store
from theorembench.store.papers import PaperRepo

MODES = ("generation", "perplexity", "both")


def collect_seeds(store: Store | None, *, stacks: Path | None = None, chapters: list[str] | None = None,
                  papers: list[str] | None = None) -> tuple[list[Any], list[str]]:  # fmt: skip
    """Seeds from a Stacks Project folder and/or stored papers, with the problems met while reading them."""
    if stacks is None and not papers:
        raise UserError("give --stacks DIR and/or --paper ID")
    seeds: list[Any] = []
    problems: list[str] = []
    if stacks is not None:
        if not stacks.is_dir():
            raise UserError(f"--stacks {stacks}: not a folder")
        try:
            found, probs = stacks_seeds(stacks, chapters or None)
        except FileNotFoundError as exc:
            raise UserError(str(exc)) from None
        seeds += found
        problems += probs
    if papers:
        assert store is not None, "seeds from papers need the store"
        repo = PaperRepo(store)
        for ref in papers:
            paper = repo.find(ref)
            if paper is None or not paper.get("folder"):
                raise UserError(f"no unpacked paper {ref!r} in the store (add it with `theorembench papers add`)")
            try:
                found, probs = paper_seeds(load_paper(Path(paper["folder"])), paper["id"])
            except ExtractionError as exc:
                problems.append(f"{paper['id']}: {exc}")
                continue
            seeds += found
            problems += probs
    return seeds, problems


def build_hybrid(store: Store, *, stacks: Path | None = None, chapters: list[str] | None = None,
                 papers: list[str] | None = None, generators: list[str] | None = None, judges: list[str] | None = None,
                 config: Path | None = None, max_seeds: int | None = None, out_dir: Path = Path("hybrid"),
                 concurrency: int = 4, overrides: dict[str, Any] | None = None,
                 on_seeds: Callable[[int], None] | None = None,
                 on_step: Callable[[str, str, str], None] | None = None) -> dict[str, Any]:  # fmt: skip
    """Filter seeds, write and filter distractors, aggregate questions; writes ``out_dir``, returns the summary."""
    cfg = load_config(config, **{"models.generators": generators or None, "models.judges": judges or None,
                                 "generation.max_seeds": max_seeds, **(overrides or {})})  # fmt: skip
    cfg.check()
    seeds, problems = collect_seeds(store, stacks=stacks, chapters=chapters, papers=papers)
    seeds.sort(key=lambda s: s.id)
    if cfg.generation.max_seeds:
        seeds = seeds[: cfg.generation.max_seeds]
    llm = LLM(store)
    for name in {*cfg.models.generators, *cfg.models.judges}:
        llm.resolve(name)
    key = hashlib.sha256(json.dumps(cfg.model_dump(), sort_keys=True).encode()).hexdigest()[:12]
    if on_seeds is not None:
        on_seeds(len(seeds))
    builder = HybridBuilder(store, llm, cfg, pipeline=f"hybrid/{key}", on_step=on_step)

    async def go() -> Any:
        try:
            return await build(builder, seeds, concurrency=concurrency)
        finally:
            await llm.aclose()

    try:
        outcome = asyncio.run(go())
    finally:
        stop_private_servers()
    summary = write_outputs(store, outcome, out_dir, cfg)
    summary["seed_problems"] = len(problems)
    return summary


def evaluate_hybrid(store: Store, folder: Path, *, model: str, mode: str = "both", max_tokens: int = 4096,
                    limit: int | None = None, max_connections: int | None = None, out_path: Path | None = None,
                    log_dir: Path | None = None) -> tuple[dict[str, Any], Path]:  # fmt: skip
    """Score a model on a ``hybrid build`` folder; returns the results and the JSON file they were written to."""
    if mode not in MODES:
        raise UserError("--mode must be generation, perplexity or both")
    try:
        questions = json.loads((folder / "questions.json").read_text())
        ppl_questions = json.loads((folder / "ppl_questions.json").read_text())
    except (OSError, ValueError) as exc:
        raise UserError(f"{folder}: not a `hybrid build` output ({exc})") from None
    if limit:
        questions, ppl_questions = questions[:limit], ppl_questions[:limit]
    llm = LLM(store)
    spec = llm.resolve(model)
    results: dict[str, Any] = {"model": model, "folder": str(folder)}

    async def go() -> None:
        try:
            if mode in ("generation", "both") and questions:
                conns = max_connections or (1 if spec.is_local else 4)
                results["generation"] = await evaluate_generation(
                    store, llm, spec, questions, settings=GenerateSettings(max_tokens=max_tokens, max_connections=conns),
                    log_dir=log_dir or default_log_dir(), name=str(folder),
                )  # fmt: skip
            if mode in ("perplexity", "both") and ppl_questions:
                results["perplexity"] = await _perplexity(spec, ppl_questions)
        finally:
            await llm.aclose()

    try:
        asyncio.run(go())
    finally:
        stop_private_servers()
    safe = "".join(ch if ch.isalnum() or ch in "-." else "_" for ch in model)
    path = out_path or folder / f"results_{safe}.json"
    write_json(path, results)
    return results, path


async def _perplexity(spec: ModelSpec, ppl_questions: list[dict[str, Any]]) -> dict[str, Any]:
    """Each seed with its own distractors; the option with the lowest perplexity is the answer."""
    base_url, api_key = spec.base_url, spec.api_key
    if spec.is_local:
        base_url, api_key = ensure_local(spec.model, logits_all=True), "local"
    return await score_questions(base_url, spec.model, ppl_questions, prefix=PERPLEXITY_PREFIX,
                                 concurrency=1 if spec.is_local else 4, api_key=api_key)  # fmt: skip


__all__ = ["MODES", "build_hybrid", "collect_seeds", "evaluate_hybrid"]
