"""``theorembench eternal build``: stored papers -> filtered, classified papers -> meta-templates -> code ->
sandbox-validated, reviewed templates -> instances, with the funnel and the cost of every stage.

Order of the stages for one paper: recency and authority (no model), classification (the
authors' ``\\subjclass``, else the judge), the exclusions (00, 01, 97) and the ``--msc``
restriction, then the computability judge, then the generator's templates. The cheap checks
come first, so a paper outside the build's classes costs no judge call. Then, for every
template: code translation (stage d), execution and validation in the sandbox with the
instances (stages e and g, one call of the instantiate service), and the reviews (stage f:
screening, originality, validity, in that order, the judge last). The instances of templates
that pass the reviews are the benchmark.
"""

from __future__ import annotations

import asyncio
import inspect
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from theorembench.common.digest import json_digest
from theorembench.common.errors import InvalidSetting, UserError
from theorembench.common.progress import OnStep
from theorembench.llm import LLM
from theorembench.llm.local import stop_private_servers
from theorembench.methods.eternal import instantiate as I
from theorembench.methods.eternal import msc as M
from theorembench.methods.eternal.config import EternalConfig, load_config
from theorembench.methods.eternal.filter import PaperInput, authority, load_input, recency
from theorembench.methods.eternal.originality import OriginalityIndex, read_corpus
from theorembench.methods.eternal.stages import EternalBuilder, code_problems, stage_pipeline
from theorembench.methods.eternal.summary import BuildResult, write_outputs
from theorembench.methods.eternal.template import TemplateError, parse_template
from theorembench.pipeline.steps import StepRunner
from theorembench.sandbox import accepting_weak_isolation
from theorembench.sandbox.providers import require_sandbox
from theorembench.store import Store
from theorembench.store.papers import PaperRepo


@dataclass
class PaperOutcome:
    paper_id: str
    title: str
    checks: dict[str, dict[str, Any]] = field(default_factory=dict)
    msc: list[str] = field(default_factory=list)
    stopped: str | None = None  # the stage that stopped the paper (None: it reached the templates)
    status: str = "ok"  # ok | rejected | failed
    reason: str = ""
    templates: list[dict[str, Any]] = field(default_factory=list)

    def stop(self, stage: str, status: str, reason: str) -> PaperOutcome:
        self.stopped, self.status, self.reason = stage, status, reason
        return self


@dataclass
class Collected:
    """Everything the outputs are made of."""

    papers: list[PaperOutcome] = field(default_factory=list)
    generated: list[dict[str, Any]] = field(default_factory=list)
    parsed: list[Any] = field(default_factory=list)
    rejections: list[dict[str, Any]] = field(default_factory=list)
    validated: list[str] = field(default_factory=list)
    reviewed: list[Any] = field(default_factory=list)
    instances: list[dict[str, Any]] = field(default_factory=list)
    run_summary: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    sources: dict[str, PaperInput] = field(default_factory=dict)  # the papers read, by id


def rejection(template_id: str, stage: str, reason: str) -> dict[str, Any]:
    return {"template_id": template_id, "instance_id": None, "params_used": None, "stage": stage, "reason": reason}


async def run_instantiate(templates: list[Any], n: int, seed: int, cfg: EternalConfig,
                          sandbox: str | None = None) -> Any:  # fmt: skip
    """The instantiate service (stages e and g) on parsed templates, off the event loop when it is synchronous;
    ``sandbox`` runs the code (theorembench, docker, k8s)."""
    ex = cfg.execution
    kwargs = {"timeout_s": ex.timeout_s, "memory_mb": ex.memory_mb, "per_instance_s": ex.per_instance_s,
              "sandbox": sandbox}  # fmt: skip
    if inspect.iscoroutinefunction(I.instantiate_templates):
        return await I.instantiate_templates(templates, n, seed, **kwargs)
    return await asyncio.to_thread(I.instantiate_templates, templates, n, seed, **kwargs)


def _field(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


async def run_paper(b: EternalBuilder, paper: PaperInput, restrict: list[str]) -> PaperOutcome:
    cfg = b.cfg
    o = PaperOutcome(paper.id, paper.title)
    for name, check in (("recency", recency), ("authority", authority)):
        verdict = check(paper, cfg.filter)
        o.checks[name] = {"passed": verdict.passed, "reason": verdict.reason}
        if not verdict.passed:
            return o.stop(name, "rejected", verdict.reason)
    if not (paper.latex or paper.theorem or paper.abstract):
        return o.stop("classify", "rejected", "no text stored (no LaTeX source, theorem or abstract)")
    cls = await b.classify(paper)
    if not cls.ok:
        return o.stop("classify", cls.status, cls.reason or "")
    o.msc = list(cls.output["codes"])
    o.checks["classify"] = cls.output
    if cls.output.get("excluded"):
        return o.stop("classify", "rejected", cls.output["excluded"])
    if not M.in_scope(o.msc, restrict):
        return o.stop("msc", "rejected", f"classes {', '.join(o.msc) or 'none'} outside the requested classes {','.join(restrict)}")
    comp = await b.computability(paper)
    if not comp.ok:
        return o.stop("computability", comp.status, comp.reason or "")
    o.checks["computability"] = {"reason": comp.output["reason"], "results": len(comp.output["results"])}
    gen = await b.templates(paper, comp.output["results"])
    if not gen.ok:
        return o.stop("templates", gen.status, gen.reason or "")
    for t in gen.output["templates"]:
        theorem = t.get("theorem") or t.get("target_paper_module")
        o.templates.append(dict(t, msc=o.msc, theorem=theorem if isinstance(theorem, str) and theorem else None))
    return o


async def run_templates(b: EternalBuilder, c: Collected, concurrency: int) -> None:
    """Stage d for every generated template, then parsing; rejections collected."""
    gate = asyncio.Semaphore(concurrency)
    results: dict[str, Any] = {}

    async def one(obj: dict[str, Any]) -> None:
        tid = obj["template_id"]
        try:
            parse_template(obj)
        except TemplateError as exc:
            _code, other = code_problems(exc.problems)
            if other or not b.cfg.translation.enabled:
                results[tid] = rejection(tid, "template", "; ".join(exc.problems))
                return
        if b.cfg.translation.enabled:
            async with gate:
                step = await b.translate(obj)
            if not step.ok:
                results[tid] = step
                return
            obj = step.output["template"]
        try:
            results[tid] = parse_template(obj)
        except TemplateError as exc:
            results[tid] = rejection(tid, "template", "; ".join(exc.problems))

    await asyncio.gather(*(one(t) for t in c.generated))
    for t in c.generated:
        r = results[t["template_id"]]
        if isinstance(r, dict):
            c.rejections.append(r)
        elif hasattr(r, "template_id"):
            c.parsed.append(r)
        elif r.status == "rejected":  # a failed translation step runs again next time: not an outcome
            c.rejections.append(rejection(t["template_id"], "translation", r.reason or ""))


async def run_reviews(b: EternalBuilder, c: Collected, concurrency: int) -> None:
    """Stage f on the templates that passed stage e: screening, originality, then the validity judge."""
    cfg = b.cfg.review
    by_template: dict[str, list[dict[str, Any]]] = {}
    for inst in c.instances:
        by_template.setdefault(inst["template_id"], []).append(inst)
    survivors = [t for t in c.parsed if t.template_id in set(c.validated)]
    if not cfg.keep_unverified:
        for t in survivors:
            if not t.verified:
                c.rejections.append(rejection(t.template_id, "unverified", "no small_case_check: nothing independent "
                                              "checks formal_solution (review.keep_unverified keeps it)"))  # fmt: skip
        survivors = [t for t in survivors if t.verified]
    if cfg.screening:
        kept = []
        for t in survivors:
            calls = b.results["templates"].get(_templates_key(b, t.paper_id), None)
            ids = list(calls.call_ids if calls else [])
            ids += [i for key, r in b.results["translate"].items() if key.startswith(f"{t.template_id}#")
                    for i in r.call_ids]  # fmt: skip
            step = await b.screening(t.template_id, ids)
            if step.ok and step.output["status"] == "skipped" and step.output["note"] not in c.notes:
                c.notes.append(step.output["note"])
            if step.status == "rejected":
                c.rejections.append(rejection(t.template_id, "screening", step.reason or ""))
            elif step.ok:
                kept.append(t)
        survivors = kept
    index = OriginalityIndex(threshold=cfg.originality_threshold, shingle_words=cfg.shingle_words,
                             num_perm=cfg.num_perm)  # fmt: skip
    for path in cfg.corpora:
        index.add_corpus(read_corpus(path))
    original = []
    for t in survivors:
        dup = index.check(t.template_id, t.problem_template, set(t.params))
        if dup is None:
            original.append(t)
        else:
            c.rejections.append(rejection(t.template_id, "originality", dup.reason()))
    if not cfg.validity:
        c.reviewed = original
        return
    if (same := b.cfg.validity_note()) and same not in c.notes:
        c.notes.append(same)
    gate = asyncio.Semaphore(concurrency)

    async def judge(t: Any) -> Any:
        async with gate:
            return await b.validity(t, by_template.get(t.template_id, []), c.sources.get(t.paper_id or ""))

    verdicts = await asyncio.gather(*(judge(t) for t in original))
    for t, step in zip(original, verdicts):
        if step.ok:
            c.reviewed.append(t)
        elif step.status == "rejected":
            c.rejections.append(rejection(t.template_id, "validity", step.reason or ""))


def _templates_key(b: EternalBuilder, paper_id: str | None) -> str:
    return next((k for k in b.results["templates"] if k.startswith(f"{paper_id}#")), "")


async def stored_instances(b: EternalBuilder, templates: list[Any], n: int, seed: int,
                           isolation: dict[str, Any] | None) -> dict[str, Any]:  # fmt: skip
    """Stages e and g as one stored step, keyed by the templates, ``n``, ``seed``, the execution settings
    and the isolation: a rerun reuses the instances (their cross-check record depends on the time the
    brute force was given, so running again could record a different number of larger cases). The code part
    of the pipeline name covers the checks the instances pass: change them and the instances are made anew."""
    pipeline = stage_pipeline("instantiate", b.cfg.execution, n, seed, isolation or {}, prompts=False)
    key = json_digest([t.to_dict() if hasattr(t, "to_dict") else t for t in templates], 16, ascii_only=True)

    async def run() -> dict[str, Any]:
        out = await b.instantiate(templates, n, seed)
        return {"validated": [_field(t, "template_id") or str(t) for t in out.validated_templates],
                "instances": [dict(i) for i in out.instances], "rejections": [dict(r) for r in out.rejections],
                "summary": dict(out.summary or {})}  # fmt: skip

    step = await StepRunner(b.store, pipeline).run(key, "instantiate", run)
    if step.status != "ok":
        raise UserError(f"instantiation did not finish: {step.reason}")
    return step.output


async def run_build(b: EternalBuilder, papers: list[PaperInput], restrict: list[str], *, n: int, seed: int,
                    concurrency: int, progress: OnStep | None,
                    isolation: dict[str, Any] | None = None) -> Collected:  # fmt: skip
    c = Collected(sources={p.id: p for p in papers})
    gate = asyncio.Semaphore(concurrency)

    async def paper_task(p: PaperInput) -> PaperOutcome:
        async with gate:
            o = await run_paper(b, p, restrict)
        if progress is not None:
            progress(p.id, "paper", o.status if o.stopped else "ok")
        return o

    c.papers = list(await asyncio.gather(*(paper_task(p) for p in papers)))
    c.generated = sorted((t for o in c.papers for t in o.templates), key=lambda t: t["template_id"])
    await run_templates(b, c, concurrency)
    if c.parsed:
        run = await stored_instances(b, c.parsed, n, seed, isolation)
        c.validated = list(run["validated"])
        c.instances = [dict(i) for i in run["instances"]]
        c.rejections += [dict(r) for r in run["rejections"]]
        c.run_summary = dict(run["summary"] or {})
        if progress is not None:
            progress("instantiate", "execution", "ok")
    await run_reviews(b, c, concurrency)
    kept = {t.template_id for t in c.reviewed}
    review = b.cfg.review
    originality = {"original": True, "threshold": review.originality_threshold, "corpora": list(review.corpora)}
    c.instances = [dict(i, originality=originality) for i in c.instances if i["template_id"] in kept]
    return c


def select_papers(repo: PaperRepo, month: str | None, paper_ids: list[str] | None) -> list[PaperInput]:
    if bool(month) == bool(paper_ids):
        raise InvalidSetting("month_or_papers", "needs exactly one of the two: a month (YYYY-MM) or paper ids")
    if month:
        if not re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])", month):
            raise InvalidSetting("month", f"must be YYYY-MM, got {month!r}")
        rows = repo.list(month=month)
        if not rows:
            raise UserError(f"no stored papers for {month} (fetch them: `theorembench papers fetch --month {month}`)")
    else:
        rows = []
        for ref in paper_ids or []:
            row = repo.find(ref)
            if row is None:
                raise UserError(f"no paper {ref!r} in the store (add it with `theorembench papers add`)")
            rows.append(row)
    return [load_input(row, repo.theorem(row["id"])) for row in rows]


def build_eternal(store: Store, *, month: str | None = None, paper_ids: list[str] | None = None,
                  generator: str | None = None, judge: str | None = None, validity_judge: str | None = None,
                  config: Path | str | None = None,
                  msc: str | list[str] | None = None, instances_per_template: int | None = None,
                  seed: int | None = None, out_dir: Path = Path("eternal"), on_step: OnStep | None = None,
                  overrides: dict[str, Any] | None = None, concurrency: int = 4,
                  accept_weak_isolation: bool | None = None, sandbox: str | None = None) -> BuildResult:  # fmt: skip
    """Build EternalMath templates and instances from stored papers; resumable; writes ``out_dir``.

    Settings: the defaults, then ``config``, then the arguments and ``overrides`` (dotted keys).
    Every setting and model is checked before any work; a problem raises ``UserError``.
    ``on_step(key, stage, status)`` is called after every stored step and once per paper
    (stage ``"paper"``). Below full sandbox isolation the build refuses to start (before any model
    call) unless ``accept_weak_isolation`` or the sandbox's setting accepts it; the isolation used
    goes into ``summary.json`` and every instance. ``sandbox`` (theorembench, the default; docker; k8s) is where
    the generated code runs (:mod:`theorembench.sandbox.providers`).
    """
    cfg = load_config(config, **{"models.generator": generator, "models.judge": judge,
                                 "models.validity": validity_judge,
                                 "execution.instances_per_template": instances_per_template,
                                 "execution.seed": seed, **(overrides or {})})  # fmt: skip
    cfg.check()
    isolation = require_sandbox(sandbox, accept_weak_isolation, purpose="EternalMath validation of generated code")
    try:
        restrict = M.parse_msc_option(msc)
    except ValueError as exc:
        raise InvalidSetting("msc", str(exc)) from None
    excluded = [code for code in restrict if code in cfg.classification.exclude]
    if excluded:
        raise InvalidSetting("msc", f"{','.join(excluded)}: excluded classes (classification.exclude)")
    papers = select_papers(PaperRepo(store), month, paper_ids)
    llm = LLM(store)
    scorer = {cfg.scorer} if cfg.review.screening else set()
    for name in {cfg.models.generator, cfg.judge, cfg.validity_judge} | scorer:
        llm.resolve(name)  # a bad name or missing credentials: a UserError now, before any work
    builder = EternalBuilder(store, llm, cfg, on_step=on_step,
                             instantiate=lambda ts, n, s: run_instantiate(ts, n, s, cfg, sandbox))  # fmt: skip
    ex = cfg.execution

    async def go() -> Collected:
        try:
            return await run_build(builder, papers, restrict, n=ex.instances_per_template, seed=ex.seed,
                                   concurrency=concurrency, progress=on_step, isolation=isolation)  # fmt: skip
        finally:
            await llm.aclose()

    try:
        with accepting_weak_isolation(True if isolation["weak_isolation_accepted"] else None):
            collected = asyncio.run(go())
    finally:
        stop_private_servers()
    return write_outputs(store, builder, collected, out_dir, restrict=restrict, month=month, isolation=isolation)


__all__ = ["Collected", "PaperOutcome", "build_eternal", "rejection", "run_build", "select_papers"]
