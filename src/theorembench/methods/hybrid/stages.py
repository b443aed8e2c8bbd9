"""Proof2Hybrid: seed filtration, distractor generation and filtration, m-out-of-n aggregation.

Every judgement and every generation is a stored step (resumable, each with the ids
of its model calls), so an interrupted build resumes without paying twice. A step one of
whose model calls failed for good (after its retries) is stored ``failed``, never as a
verdict: it runs again on the next build, where the calls that had succeeded are
answered from the response cache.

Model calls are seeded with ``generation.sampling_seed``; ``questions.seed`` only draws
the seeds used and assembles the questions, so changing it reuses every call.
"""

from __future__ import annotations

import asyncio
import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from theorembench.common.outputs import write_json, write_jsonl
from theorembench.common.progress import OnStep
from theorembench.llm import LLM, GenerateSettings, LLMError, StructuredOutputError
from theorembench.methods.hybrid import prompts as P
from theorembench.methods.hybrid.config import HybridConfig
from theorembench.pipeline.build_report import BuildResult, calls_by_stage, stage_costs
from theorembench.pipeline.steps import MalformedOutput, StepFailed, StepResult, StepRunner
from theorembench.store import Store


def normalized(text: str) -> str:
    """Equality up to whitespace, as the paper deduplicates."""
    return re.sub(r"\s+", "", text)


def seed_text(seed: Any) -> str:
    return seed.text


@dataclass
class Distractor:
    id: str
    seed_id: str
    generator: str
    text: str
    change: str

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class HybridOutcome:
    seeds: list[Any] = field(default_factory=list)
    seed_verdicts: dict[str, StepResult] = field(default_factory=dict)
    kept_seeds: list[Any] = field(default_factory=list)
    distractors: list[Distractor] = field(default_factory=list)
    distractor_verdicts: dict[str, StepResult] = field(default_factory=dict)
    kept_distractors: list[Distractor] = field(default_factory=list)
    generation_steps: dict[str, StepResult] = field(default_factory=dict)
    questions: list[dict[str, Any]] = field(default_factory=list)


class HybridBuilder:
    def __init__(self, store: Store, llm: LLM, cfg: HybridConfig, *, pipeline: str, on_step: OnStep | None = None):
        cfg.check()
        self.store = store
        self.llm = llm
        self.cfg = cfg
        self.runner = StepRunner(store, pipeline, on_step=on_step)
        g = cfg.generation
        # verdicts are samples (temperature > 0); a seed makes each of them reproducible on local models
        seed = g.sampling_seed
        self.judge_settings = GenerateSettings(temperature=max(g.temperature, 0.3), max_tokens=g.max_tokens, seed=seed)
        self.gen_settings = GenerateSettings(temperature=g.temperature, max_tokens=g.max_tokens, seed=seed)

    async def _verdicts(self, judges: list[str], text: str, n: int, purpose: str) -> list[dict[str, Any]]:
        """n verdicts from every judge of the panel (sample index = verdict number, so each is its own call).

        A verdict that cannot be had (the call failed after its retries, or its reply never
        validated) fails the whole step: a missing verdict is not a verdict of "incorrect".
        """
        out = []
        for judge in judges:
            for sample in range(n):
                try:
                    obj, completions = await self.llm.generate_json(
                        judge, P.judge_messages(text), P.VERDICT_SCHEMA, self.judge_settings,
                        purpose=purpose, sample=sample,
                    )  # fmt: skip
                except StructuredOutputError as exc:  # the judge's own reply: counted toward the attempt limit
                    raise MalformedOutput(f"no verdict from {judge} (sample {sample}): {exc}",
                                          replies=len(exc.call_ids)) from exc
                except LLMError as exc:
                    if exc.final:  # refused for good (a 400): the step runner makes it final
                        raise
                    raise StepFailed(f"no verdict from {judge} (sample {sample}): {exc}") from exc
                out.append({"judge": judge, "sample": sample, "verdict": obj["verdict"], "reason": obj["reason"],
                            "call_id": completions[-1].call_id})  # fmt: skip
        return out

    async def filter_seed(self, seed: Any) -> StepResult:
        k1, n1 = self.cfg.seed_filter.k1, self.cfg.seed_filter.n1

        async def run() -> dict[str, Any]:
            verdicts = await self._verdicts(self.cfg.seed_panel, seed_text(seed), n1, "hybrid.seed_filter")
            correct = sum(v["verdict"] == "correct" for v in verdicts)
            return {"verdicts": verdicts, "correct": correct, "kept": correct >= k1}

        return await self.runner.run(seed.id, "seed_filter", run)

    async def generate(self, seed: Any) -> StepResult:
        d = self.cfg.distractors

        async def run() -> dict[str, Any]:
            produced: list[dict[str, Any]] = []
            failures: list[str] = []
            for gi, generator in enumerate(self.cfg.models.generators):
                try:
                    obj, completions = await self.llm.generate_json(
                        generator, P.distractor_messages(seed.kind, seed.statement, seed.proof, d.n2),
                        P.distractor_schema(d.n2), self.gen_settings, purpose="hybrid.distractors",
                    )  # fmt: skip
                except (LLMError, StructuredOutputError) as exc:
                    failures.append(f"{generator}: {exc}")
                    continue
                candidates = [c for c in obj["distractors"] if strip_proof_label(c.get("text", ""))]
                rng = random.Random(f"{self.cfg.generation.sampling_seed}:{seed.id}:{gi}")
                chosen = rng.sample(range(len(candidates)), min(d.k2, len(candidates)))
                for k in sorted(chosen):
                    c = candidates[k]
                    body = strip_proof_label(c["text"]) if seed.kind == "statement_proof" else c["text"].strip()
                    text = (f"{seed.statement}\n\nProof. {body}" if seed.kind == "statement_proof" else body)
                    produced.append({"id": f"{seed.id}#{gi}.{k}", "seed_id": seed.id, "generator": generator,
                                     "text": text, "change": c.get("change", "")})  # fmt: skip
            # duplicates up to whitespace are removed, and so are copies of the seed itself
            seen = {normalized(seed_text(seed))}
            unique = []
            for item in produced:
                key = normalized(item["text"])
                if key in seen:
                    continue
                seen.add(key)
                unique.append(item)
            if failures:  # every generator's share is needed; the ones that answered are cached for the rerun
                raise StepFailed("; ".join(failures))
            return {"distractors": unique, "duplicates_removed": len(produced) - len(unique)}

        return await self.runner.run(seed.id, "distractors", run)

    async def filter_distractor(self, dis: Distractor) -> StepResult:
        df = self.cfg.distractor_filter

        async def run() -> dict[str, Any]:
            verdicts = await self._verdicts(self.cfg.distractor_panel, dis.text, df.n3, "hybrid.distractor_filter")
            incorrect = sum(v["verdict"] == "incorrect" for v in verdicts)
            return {"verdicts": verdicts, "incorrect": incorrect, "kept": df.k3 <= incorrect <= df.k4}

        return await self.runner.run(dis.id, "distractor_filter", run)


# A proof label a generator may put in front of the proof body; the question adds its own "Proof. ".
_PROOF_LABEL = re.compile(
    r"""^\s*(?:\\noindent\s*)?(?:
        \\begin\{proof\}(?:\[[^\]]*\])?              # \begin{proof} or \begin{proof}[Proof of ...]
      | \\(?:textit|emph|textbf|textsc|it|bf|em)\s*\{\s*proof\s*[.:]?\s*\}\s*[.:]?   # \textit{Proof.}
      | \{\s*\\(?:it|bf|em)\s+proof\s*[.:]?\s*\}\s*[.:]?   # {\it Proof.}
      | (?:\*\*|\*|_)proof\s*[.:]?(?:\*\*|\*|_)\s*[.:]?   # **Proof.** (Markdown)
      | proof\s*[.:]                                   # Proof. / Proof:
    )\s*""",
    re.IGNORECASE | re.VERBOSE,
)


def strip_proof_label(body: str) -> str:
    """A proof body without a leading "Proof." label (in any of its usual spellings), stripped.

    A body wrapped in a proof environment loses both ends of it.
    """
    text = body.strip()
    label = _PROOF_LABEL.match(text)
    if label is None:
        return text
    rest = text[label.end():].strip()
    if label[0].lstrip().startswith("\\begin"):
        rest = re.sub(r"\\end\{proof\}\s*$", "", rest).rstrip()
    return rest


def draw_seeds(seeds: list[Any], n: int, *, seed: int) -> list[Any]:
    """``n`` of the seeds drawn at random (reproducible for a given ``seed``), in id order; all when ``n`` is 0."""
    pool = sorted(seeds, key=lambda s: s.id)
    if not n or n >= len(pool):
        return pool
    return sorted(random.Random(seed).sample(pool, n), key=lambda s: s.id)


def can_form(seed_origins: set[str], distractor_origins: set[str], seeds_needed: int, distractors_needed: int) -> bool:
    """Whether the pool still holds a question: seeds and distractors from pairwise distinct origins.

    ``seed_origins`` are the seeds left (a seed is its own origin), ``distractor_origins`` the
    origins that still have a distractor. Enough of each, and enough origins between them, is
    also sufficient: seeds take the origins that have no distractor first, distractors those
    that have no seed, and the shared origins cover the rest.
    """
    return (len(seed_origins) >= seeds_needed and len(distractor_origins) >= distractors_needed
            and len(seed_origins | distractor_origins) >= seeds_needed + distractors_needed)  # fmt: skip


def _draw_question(rng: random.Random, seed_pool: dict[str, Any], dis_pool: dict[str, list[Distractor]],
                   m: int, k: int) -> tuple[list[Any], list[Distractor]]:  # fmt: skip
    """m seeds, then k distractors, each drawn uniformly among those that leave the question completable.

    Called on a pool where :func:`can_form` holds. A seed whose origin also has distractors is
    drawable only while more than ``k`` such origins remain; every other pick keeps the
    question completable, so the draw never ends short.
    """
    seed_left = set(seed_pool)
    dis_left = {origin for origin, ds in dis_pool.items() if ds}
    seeds = []
    for _ in range(m):
        allowed = [sid for sid in seed_pool if sid in seed_left and (sid not in dis_left or len(dis_left) > k)]
        pick = rng.choice(allowed)
        seeds.append(seed_pool[pick])
        seed_left.discard(pick)
        dis_left.discard(pick)
    distractors = []
    for _ in range(k):
        d = rng.choice([d for origin in sorted(dis_left) for d in dis_pool[origin]])
        distractors.append(d)
        dis_left.discard(d.seed_id)
    return seeds, distractors


def aggregate(seeds: list[Any], distractors: list[Distractor], *, m: int, n: int, seed: int) -> list[dict[str, Any]]:
    """Questions of m seeds and n - m distractors, all from distinct seed origins, drawn at random until the pool
    can form no further question (the paper's rule; the same questions for the same ``seed``).

    Each draw is random among the questions the pool can still form, so one unlucky pick never
    ends the aggregation early (with seeds A, B and one distractor of A, the question is (B, a1)).
    """
    rng = random.Random(seed)
    seed_pool = {s.id: s for s in sorted(seeds, key=lambda s: s.id)}
    dis_pool: dict[str, list[Distractor]] = {}
    for d in sorted(distractors, key=lambda d: d.id):
        dis_pool.setdefault(d.seed_id, []).append(d)
    questions = []
    while can_form(set(seed_pool), {o for o, ds in dis_pool.items() if ds}, m, n - m):
        chosen_seeds, chosen_dis = _draw_question(rng, seed_pool, dis_pool, m, n - m)
        for s in chosen_seeds:
            del seed_pool[s.id]
        for d in chosen_dis:
            dis_pool[d.seed_id].remove(d)
        entries = [{"text": s.text, "correct": True, "origin": s.id, "tag": getattr(s, "tag", None),
                    "kind": s.kind, "distractor_id": None, "change": None} for s in chosen_seeds]  # fmt: skip
        entries += [{"text": d.text, "correct": False, "origin": d.seed_id, "tag": None, "kind": None,
                     "distractor_id": d.id, "change": d.change} for d in chosen_dis]  # fmt: skip
        rng.shuffle(entries)
        for i, entry in enumerate(entries, start=1):
            entry["number"] = i
        questions.append({
            "id": f"q{len(questions) + 1:04d}", "m": m, "n": n, "items": entries,
            "answer": sorted(e["number"] for e in entries if e["correct"]),
        })  # fmt: skip
    return questions


async def build(builder: HybridBuilder, seeds: list[Any], *, concurrency: int = 4) -> HybridOutcome:
    cfg = builder.cfg
    outcome = HybridOutcome(seeds=list(seeds))
    gate = asyncio.Semaphore(concurrency)

    async def per_seed(seed: Any) -> None:
        async with gate:
            verdict = await builder.filter_seed(seed)
            outcome.seed_verdicts[seed.id] = verdict
            if not (verdict.ok and verdict.output["kept"]):
                return
            outcome.kept_seeds.append(seed)
            gen = await builder.generate(seed)
            outcome.generation_steps[seed.id] = gen
            if not gen.ok:
                return
            for raw in gen.output["distractors"]:
                dis = Distractor(**raw)
                outcome.distractors.append(dis)
                result = await builder.filter_distractor(dis)
                outcome.distractor_verdicts[dis.id] = result
                if result.ok and result.output["kept"]:
                    outcome.kept_distractors.append(dis)

    await asyncio.gather(*(per_seed(s) for s in seeds))
    outcome.kept_seeds.sort(key=lambda s: s.id)
    outcome.kept_distractors.sort(key=lambda d: d.id)
    outcome.distractors.sort(key=lambda d: d.id)
    q = cfg.questions
    outcome.questions = aggregate(outcome.kept_seeds, outcome.kept_distractors, m=q.m, n=q.n, seed=q.seed)
    return outcome


def write_outputs(store: Store, outcome: HybridOutcome, out_dir: Path, cfg: HybridConfig) -> BuildResult:
    write_json(out_dir / "questions.json", outcome.questions)
    write_jsonl(out_dir / "questions.jsonl", outcome.questions)
    audit = []
    for q in outcome.questions:
        for item in q["items"]:
            verdict = (outcome.seed_verdicts.get(item["origin"]) if item["correct"]
                       else outcome.distractor_verdicts.get(item["distractor_id"]))  # fmt: skip
            audit.append({
                "question": q["id"], "number": item["number"], "correct": item["correct"],
                "origin": item["origin"], "tag": item["tag"], "distractor_id": item["distractor_id"],
                "change": item["change"], "verdicts": (verdict.output or {}).get("verdicts") if verdict else None,
            })  # fmt: skip
    write_jsonl(out_dir / "audit.jsonl", audit)
    # perplexity-based evaluation: each kept seed with its own kept distractors as one question
    by_seed: dict[str, list[Distractor]] = {}
    for d in outcome.kept_distractors:
        by_seed.setdefault(d.seed_id, []).append(d)
    ppl = [{"id": s.id, "tag": getattr(s, "tag", None), "options": [s.text] + [d.text for d in by_seed[s.id]],
            "correct": 0} for s in outcome.kept_seeds if by_seed.get(s.id)]  # fmt: skip
    write_json(out_dir / "ppl_questions.json", ppl)
    stages = {"seed_filter": outcome.seed_verdicts, "distractors": outcome.generation_steps,
              "distractor_filter": outcome.distractor_verdicts}
    usage = store.usage_of_calls(sorted({i for group in stages.values() for r in group.values() for i in r.call_ids}))
    nq = len(outcome.questions)
    funnel = {"seeds": len(outcome.seeds), "kept_seeds": len(outcome.kept_seeds),
              "distractors": len(outcome.distractors), "kept_distractors": len(outcome.kept_distractors),
              "questions": nq}  # fmt: skip
    # steps whose model calls failed: not outcomes, they run again on the next build
    failed = {stage: sorted(key for key, r in group.items() if r.status == "failed") for stage, group in stages.items()}
    costs = stage_costs(store, calls_by_stage({k: g.values() for k, g in stages.items()}), nq, unit="question",
                        order=stages)  # fmt: skip
    per_question = {k: (v / nq if nq and v is not None else None) for k, v in usage.items()}
    summary = {"funnel": funnel, "failed_steps": {k: v for k, v in failed.items() if v}, "usage": usage,
               "per_question": per_question, "costs": costs, "config": cfg.model_dump(),
               "duplicates_removed": sum((r.output or {}).get("duplicates_removed", 0)
                                         for r in outcome.generation_steps.values())}  # fmt: skip
    files = {"questions": out_dir / "questions.json", "questions_jsonl": out_dir / "questions.jsonl",
             "audit": out_dir / "audit.jsonl", "ppl_questions": out_dir / "ppl_questions.json",
             "summary": write_json(out_dir / "summary.json", summary)}  # fmt: skip
    return BuildResult(out_dir, files, funnel, costs, summary, rejections={k: len(v) for k, v in failed.items() if v})
