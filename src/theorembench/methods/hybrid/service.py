"""Proof2Hybrid as a Python user or the CLI calls it: collect seeds, build a benchmark, evaluate a model.

Each function checks its settings and models before any work starts and raises
:class:`~theorembench.common.errors.UserError` with a one-line message.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from theorembench.common.digest import json_digest
from theorembench.common.errors import InvalidSetting, UserError
from theorembench.common.outputs import write_json
from theorembench.common.progress import OnStep
from theorembench.common.shard import Shard, shard_settings
from theorembench.common.stats import Estimate
from theorembench.evaluate.cutoff import CutoffGuard, Selection, check_guard, cutoff_guard, select
from theorembench.evaluate.inspect_log import default_log_dir
from theorembench.evaluate.item_dates import item_date
from theorembench.evaluate.release_ref import release_of
from theorembench.evaluate.result import EvalResult
from theorembench.evaluate.scorecard import scored
from theorembench.evaluate.shards import finished_shards, shard_signature
from theorembench.latex.extract import ExtractionError, load_paper
from theorembench.llm import LLM, GenerateSettings, ModelSpec
from theorembench.llm.local import stop_private_servers
from theorembench.methods.hybrid.config import load_config
from theorembench.methods.hybrid.evaluate import evaluate_generation
from theorembench.methods.hybrid.perplexity import PerplexityError, resolve_bos_text, score_questions
from theorembench.methods.hybrid.prompts import PERPLEXITY_PREFIX
from theorembench.methods.hybrid.seeds import paper_seeds, stacks_seeds
from theorembench.methods.hybrid.stages import HybridBuilder, build, draw_seeds, write_outputs
from theorembench.pipeline.build_report import BuildResult
from theorembench.pipeline.identity import package_modules, pipeline_name
from theorembench.store import Store, loads
from theorembench.store.papers import PaperRepo

MODES = ("generation", "perplexity", "both")
SHARD_KIND = "eval.hybrid.shard"  # one shard's part of an evaluation (its answers are the evaluation's own steps)


def collect_seeds(store: Store | None, *, stacks: Path | None = None, chapters: list[str] | None = None,
                  papers: list[str] | None = None) -> tuple[list[Any], list[str]]:  # fmt: skip
    """Seeds from a Stacks Project folder and/or stored papers, with the problems met while reading them."""
    if stacks is None and not papers:
        raise InvalidSetting("stacks_or_papers", "needs a Stacks Project folder and/or paper ids")
    seeds: list[Any] = []
    problems: list[str] = []
    if stacks is not None:
        if not stacks.is_dir():
            raise InvalidSetting("stacks", f"{stacks}: not a folder")
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


VERSION = "1"  # bump when the stored outputs of the build's steps change shape


def build_pipeline(shaping: Any) -> str:
    """The build's pipeline name: Proof2Hybrid's version, prompts, code and the settings that shape its steps."""
    from theorembench.methods import hybrid
    from theorembench.methods.hybrid import prompts

    return pipeline_name("hybrid", version=VERSION, prompts=[prompts], code=package_modules(hybrid), settings=shaping)


def build_hybrid(store: Store, *, stacks: Path | None = None, chapters: list[str] | None = None,
                 papers: list[str] | None = None, generators: list[str] | None = None, judges: list[str] | None = None,
                 seed_judges: list[str] | None = None, distractor_judges: list[str] | None = None,
                 config: Path | None = None, max_seeds: int | None = None, out_dir: Path = Path("hybrid"),
                 concurrency: int = 4, overrides: dict[str, Any] | None = None,
                 on_seeds: Callable[[int], None] | None = None,
                 on_step: OnStep | None = None) -> BuildResult:  # fmt: skip
    """Filter seeds, write and filter distractors, aggregate questions; writes ``out_dir``, returns the build's result.

    With ``max_seeds``, that many seeds are drawn at random with ``questions.seed`` (as the
    paper draws its seeds), reproducibly. Stored steps are keyed by the settings that shape
    them, which leave out how seeds and questions are drawn: a new draw reuses every step.
    ``judges`` judge both filters unless ``seed_judges`` (m1) or ``distractor_judges`` (m3) set a panel apart.
    """
    cfg = load_config(config, **{"models.generators": generators or None, "models.judges": judges or None,
                                 "models.seed_judges": seed_judges or None,
                                 "models.distractor_judges": distractor_judges or None,
                                 "generation.max_seeds": max_seeds, **(overrides or {})})  # fmt: skip
    cfg.check()
    seeds, problems = collect_seeds(store, stacks=stacks, chapters=chapters, papers=papers)
    seeds = draw_seeds(seeds, cfg.generation.max_seeds, seed=cfg.questions.seed)
    llm = LLM(store)
    for name in sorted({*cfg.models.generators, *cfg.seed_panel, *cfg.distractor_panel}):
        llm.resolve(name)
    shaping = cfg.model_dump(exclude={"questions": True, "generation": {"max_seeds"}})
    if on_seeds is not None:
        on_seeds(len(seeds))
    builder = HybridBuilder(store, llm, cfg, pipeline=build_pipeline(shaping), on_step=on_step)

    async def go() -> Any:
        try:
            return await build(builder, seeds, concurrency=concurrency)
        finally:
            await llm.aclose()

    try:
        outcome = asyncio.run(go())
    finally:
        stop_private_servers()
    result = write_outputs(store, outcome, out_dir, cfg)
    result.summary["seed_problems"] = len(problems)
    return result


def evaluate_hybrid(store: Store, folder: Path, *, model: str, mode: str = "both", max_tokens: int | None = None,
                    limit: int | None = None, max_connections: int | None = None, out_path: Path | None = None,
                    log_dir: Path | None = None, perplexity_prefix: bool = False,
                    on_note: Callable[[str], None] | None = None, cutoff_guard_mode: str | None = None,
                    models_file: Path | None = None, shard: str | Shard | None = None,
                    merge_shards: int | None = None) -> EvalResult:  # fmt: skip
    """Score a model on a ``hybrid build`` folder; returns the results, the JSON file they were written to and the
    headline: the tight m-out-of-n score of generation-based evaluation, else the perplexity-based score.

    ``max_tokens`` caps each evaluation reply (None: the provider's default, as the paper
    does). Before any work, a mode that includes perplexity checks that the model's server
    gives prompt log-probabilities (no server address: no; otherwise one probe request,
    cached): ``--mode perplexity`` stops with a UserError, ``--mode both`` skips perplexity
    with a note (passed to ``on_note`` and kept under ``notes`` and ``perplexity_skipped``
    in the results). Whatever was computed is written, also when a later part fails.

    ``perplexity_prefix``: put our framing sentence (``prompts.PERPLEXITY_PREFIX``) before every
    option. Off by default, as in the paper, which scores each option on its own: scores stay
    comparable with the paper's, and no measurement of ours shows that the sentence helps. The
    prefix used is recorded under ``perplexity.prefix``.

    ``cutoff_guard_mode`` (exclude, flag, off; None: exclude for a release's folder, else flag) is the
    contamination guard (:mod:`theorembench.evaluate.cutoff`): a question is as new as the newest paper its
    items come from; the results' ``cutoff`` (and ``cutoff_perplexity``) say which questions counted.

    ``shard="i/N"`` asks only the questions shard i of N owns (by a hash of the question id) and writes no file;
    ``merge_shards=N``, once the N shards have finished on this store, is the evaluation of every question: it
    finds their answers stored (generation steps, cached log-probabilities) and writes the results.
    """
    if mode not in MODES:
        raise InvalidSetting("mode", "must be generation, perplexity or both")
    shard, merge = shard_settings(shard, merge_shards)
    check_guard(cutoff_guard_mode)
    try:
        questions = json.loads((folder / "questions.json").read_text())
        ppl_questions = json.loads((folder / "ppl_questions.json").read_text())
    except (OSError, ValueError) as exc:
        raise UserError(f"{folder}: not a `hybrid build` output ({exc})") from None
    if limit:
        questions, ppl_questions = questions[:limit], ppl_questions[:limit]
    llm = LLM(store)
    spec = llm.resolve(model)
    guard = cutoff_guard(cutoff_guard_mode, spec.name, models_file=models_file,
                         release=release_of(folder / "questions.json") is not None)  # fmt: skip
    gen_sel = _selection(store, folder, guard, questions, lambda q: [it.get("origin") or "" for it in q["items"]])
    ppl_sel = _selection(store, folder, guard, ppl_questions, lambda q: [q["id"]])
    questions = [q for q in questions if gen_sel.keeps(q["id"])]
    ppl_questions = [q for q in ppl_questions if ppl_sel.keeps(q["id"])]
    signature = json_digest({"questions": [questions, ppl_questions], "model": spec.name, "endpoint": spec.endpoint,
                             "mode": mode, "max_tokens": max_tokens, "prefix": perplexity_prefix}, 24)  # fmt: skip
    shard_runs = finished_shards(store, SHARD_KIND, signature, merge, rerun="") if merge else []
    marker = None
    if shard is not None:
        questions = shard.select(questions, key=lambda q: str(q["id"]))
        ppl_questions = shard.select(ppl_questions, key=lambda q: str(q["id"]))
        marker = store.create_run(SHARD_KIND, shard_signature(signature, shard), name=str(folder), model=spec.name,
                                  config={"shard": shard.label})  # fmt: skip
    results: dict[str, Any] = {"model": model, "folder": str(folder), "notes": []}

    def note(text: str) -> None:
        results["notes"].append(text)
        if on_note is not None:
            on_note(text)

    async def go() -> None:
        try:
            bos_text: str | None = None
            want_ppl = mode in ("perplexity", "both") and bool(ppl_questions)
            if want_ppl:
                try:
                    bos_text = await resolve_bos_text(llm, spec)  # the support check: one probe, or none
                except PerplexityError as exc:
                    if mode == "perplexity":
                        raise UserError(f"perplexity-based evaluation of {model} is not possible: {exc}") from None
                    results["perplexity_skipped"] = str(exc)
                    note(f"perplexity-based evaluation skipped: {exc}")
                    want_ppl = False
            if mode in ("generation", "both") and questions:
                conns = max_connections or (1 if spec.is_local else 4)
                settings = GenerateSettings(max_tokens=max_tokens, max_connections=conns)
                results["generation"] = await evaluate_generation(
                    store, llm, spec, questions, settings=settings, log_dir=log_dir or default_log_dir(),
                    name=str(folder),
                )  # fmt: skip
            if want_ppl:
                try:
                    prefix = PERPLEXITY_PREFIX if perplexity_prefix else ""
                    results["perplexity"] = await _perplexity(llm, spec, ppl_questions, bos_text, prefix)
                except PerplexityError as exc:  # the server stopped giving log-probabilities mid-run
                    if mode == "perplexity":
                        raise UserError(f"perplexity-based evaluation of {model} stopped: {exc}") from None
                    results["perplexity_skipped"] = str(exc)
                    note(f"perplexity-based evaluation stopped: {exc}")
        finally:
            await llm.aclose()

    safe = "".join(ch if ch.isalnum() or ch in "-." else "_" for ch in model)
    path = out_path or folder / f"results_{safe}.json"
    try:
        asyncio.run(go())
    except BaseException:
        if marker is not None:
            store.set_run_status(marker, "interrupted")
        elif "generation" in results or "perplexity" in results:  # keep what was paid for
            write_json(path, results)
        raise
    finally:
        stop_private_servers()
    gen_run = (results.get("generation") or {}).get("run_id")
    if shard is not None and marker is not None:  # the shard's answers are stored: the merge writes the results
        store.set_run_status(marker, "finished", {"shard": shard.label, "generation_run": gen_run})
        headline = (results.get("generation") or {}).get("summary", {}).get("score")
        return EvalResult("eval.hybrid", gen_run or marker, results, path, None,
                          Estimate.from_dict(headline) if headline else None, detail={"shard": shard.label})
    # the calls of a merge were made by its shards' generation runs (perplexity's too, ledgered under them)
    cost_runs = [gen_run, *(loads(r["summary"]).get("generation_run") for r in shard_runs)] if shard_runs else None
    details = (results.get("generation") or {}).get("details") or []
    results["cutoff"] = gen_sel.block({r["id"]: r["tight"] if r["status"] in ("ok", "unparsed") else 0.0
                                       for r in details},
                                      errors=[r["id"] for r in details if r["status"] in ("error", "pending")])
    results["cutoff_perplexity"] = ppl_sel.block()
    write_json(path, results)
    return _result(store, results, path, folder, cost_runs=[r for r in cost_runs or [] if r])


def _selection(store: Store, folder: Path, guard: CutoffGuard, rows: list[dict[str, Any]],
               origins: Callable[[dict[str, Any]], list[str]]) -> Selection:  # fmt: skip
    """The guard's split of a question list: each question is as new as the newest paper among its items'
    origins (``<paper id>:<label>``; a Stacks Project seed names no paper and leaves its question undated)."""
    ids = [str(q["id"]) for q in rows]
    if guard.mode == "off":
        return select(guard, ids, {})
    release = release_of(folder / "questions.json")
    dates = {}
    for q in rows:
        refs = [":".join(o.split(":")[:k]) for o in origins(q) for k in range(max(1, o.count(":")), 0, -1)]
        dates[str(q["id"])] = item_date(store, refs, release.row(str(q["id"])) if release is not None else None)
    return select(guard, ids, dates)


def _result(store: Store, results: dict[str, Any], path: Path, folder: Path, *,
            cost_runs: list[str] | None = None) -> EvalResult:  # fmt: skip
    gen, ppl = results.get("generation"), results.get("perplexity")
    headline = gen["summary"]["score"] if gen else ppl["summary"]["estimate"] if ppl else None
    summary = gen["summary"] if gen else {}
    return scored(store, EvalResult("eval.hybrid", gen["run_id"] if gen else None, results, path,
                      Path(gen["log"]) if gen and gen.get("log") else None, Estimate.from_dict(headline),
                      incomplete=summary.get("statuses", {}).get("pending", 0) +
                      int((ppl or {}).get("summary", {}).get("n_errors") or 0),
                      detail={"cutoff": results.get("cutoff"), "cost_runs": cost_runs or None}),
                  items_file=folder / "questions.json")  # fmt: skip


async def _perplexity(llm: LLM, spec: ModelSpec, ppl_questions: list[dict[str, Any]], bos_text: str | None,
                      prefix: str) -> dict[str, Any]:  # fmt: skip
    """Each seed with its own distractors; the option with the lowest perplexity is the answer (ties split)."""
    scored = await score_questions(llm, spec, ppl_questions, prefix=prefix, bos_text=bos_text,
                                   concurrency=1 if spec.is_local else 4)  # fmt: skip
    return {"prefix": prefix, **scored}


__all__ = ["MODES", "build_hybrid", "collect_seeds", "evaluate_hybrid"]
