"""LiveMathematicianBench stages 3b-6 as resumable steps over the store.

For each source theorem: proof sketch (3b), logical categories (3c), stem and
correct option with red-flag regeneration and a theorem-only repair pass (4a).
For each variant (the original distractor set and the regenerated ones):
distractors with an adversarial revision (4b), computed surface checks, LaTeX
validation with a bounded repair, the substitution-resistant option, the quality
rubric, and the stem-only triviality filter (5). Then hardness calibration over
the surviving pool (6).

Every step's output is stored under (pipeline key, item, stage); every model call
is cached and its id kept with the step, so a rerun (after a crash, a kill or a
change of a later stage's settings) skips finished work and pays for no call twice.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from theorembench.evaluate.mcq.items import META_OPTION
from theorembench.latex.context import trim
from theorembench.llm import LLM, GenerateSettings
from theorembench.methods.lmb import prompts as P
from theorembench.methods.lmb.categories import normalize_category
from theorembench.methods.lmb.config import LMBConfig
from theorembench.methods.lmb.surface import check_surface
from theorembench.pipeline.steps import Rejected, StepFailed, StepResult, StepRunner
from theorembench.store import Store

LABELS = ("B", "C", "D", "E")


StageFailure = StepFailed  # a stage could not produce a usable output (kept as the step's reason)


@dataclass
class Source:
    """One theorem to build questions from."""

    source_id: str
    paper_id: str
    paper_link: str
    record: dict[str, Any]
    proof: str | None = None
    preamble: str = ""


@dataclass
class BuildEvents:
    on_stage: Callable[[str, str, str], None] | None = None  # (key, stage, status)


def _variant_name(v: int) -> str:
    return "orig" if v == 0 else f"alt{v}"


def validate_distractors(obj: dict[str, Any]) -> None:
    labels = [c.get("label") for c in obj.get("choices", [])]
    if labels != list(LABELS):
        raise StageFailure(f"distractor labels must be B, C, D, E in order, got {labels}")
    meta = obj.get("meta") or {}
    weaker = meta.get("weaker_true_label")
    false = sorted(meta.get("false_labels") or [])
    if weaker not in LABELS or sorted([weaker, *false]) != list(LABELS):
        raise StageFailure(f"meta must name one weaker-true label and the three false labels, got {meta}")
    if meta.get("wildcard_false_label") not in false:
        raise StageFailure("meta.wildcard_false_label must be one of the false labels")
    texts = [c.get("text", "").strip() for c in obj["choices"]]
    if any(not t for t in texts) or len(set(texts)) < 4:
        raise StageFailure("distractors must be four distinct non-empty statements")
    if any(" ".join(t.split()) == META_OPTION for t in texts):
        raise StageFailure("a distractor may not be the substitution-resistant meta-option")


class Builder:
    """Runs the LMB stages for a set of theorems; every step is stored as it finishes."""

    def __init__(self, store: Store, llm: LLM, cfg: LMBConfig, *, pipeline: str,
                 events: BuildEvents | None = None, latex_checker: Any = None):  # fmt: skip
        self.store = store
        self.llm = llm
        self.cfg = cfg
        self.events = events or BuildEvents()
        self.runner = StepRunner(store, pipeline, on_step=self.events.on_stage)
        self.latex_checker = latex_checker
        g = cfg.generation
        # a sampling seed makes local (llama.cpp) runs reproducible; providers without seeds ignore it
        self.gen_settings = GenerateSettings(temperature=g.temperature, max_tokens=g.max_tokens,
                                             reasoning_effort=g.reasoning_effort or None, seed=g.seed)  # fmt: skip
        self.judge_settings = GenerateSettings(temperature=0.0, max_tokens=g.max_tokens,
                                               reasoning_effort=g.reasoning_effort or None, seed=g.seed)  # fmt: skip

    # -- plumbing -----------------------------------------------------------------

    async def _ask(self, model: str, messages: list[dict[str, str]], schema: dict[str, Any],
                   settings: GenerateSettings, purpose: str, sample: int = 0) -> dict[str, Any]:  # fmt: skip
        """A validated JSON reply; a failed call or a reply still malformed after repairs fails the step."""
        obj, _ = await self.llm.generate_json(model, messages, schema, settings, purpose=purpose, sample=sample)
        return obj

    # -- per source -------------------------------------------------------------------

    async def source_stages(self, src: Source) -> dict[str, StepResult]:
        rec = src.record
        theorem = rec["expanded_theorem"]
        # the generator reads the recovered context within the configured budget
        context = trim(rec.get("full_context") or rec.get("context") or "", self.cfg.context.full_context_chars)
        model = self.cfg.models.generator
        out: dict[str, StepResult] = {}

        async def sketch() -> dict[str, Any]:
            obj = await self._ask(model, P.sketch_messages(theorem, context, src.proof), P.SKETCH_SCHEMA,
                                  self.gen_settings, "lmb.sketch")  # fmt: skip
            if not obj.get("sketch", "").strip():
                raise StageFailure("empty proof sketch")
            return {"sketch": obj["sketch"].strip(), "expanded_sketch": (obj.get("expanded_sketch") or "").strip()
                    or "No expanded sketch found."}  # fmt: skip

        out["sketch"] = await self.runner.run(src.source_id, "sketch", sketch)
        if not out["sketch"].ok:
            return out

        async def classify() -> dict[str, Any]:
            obj = await self._ask(model, P.classify_messages(theorem, context), P.CLASSIFY_SCHEMA,
                                  self.judge_settings, "lmb.classify")  # fmt: skip
            cats = [c for c in (normalize_category(x) for x in obj.get("categories", [])) if c]
            cats = list(dict.fromkeys(cats))[:3]
            if not cats:
                raise StageFailure(f"no known category in {obj.get('categories')}")
            return {"theorem_type": cats, "reason": obj.get("reason", "")}

        out["classify"] = await self.runner.run(src.source_id, "classify", classify)
        if not out["classify"].ok:
            return out
        category = out["classify"].output["theorem_type"][0]
        sk = out["sketch"].output["sketch"]

        async def stem() -> dict[str, Any]:
            history: list[list[str]] = []
            question: dict[str, Any] | None = None
            for attempt in range(self.cfg.generation.max_regenerations + 1):
                if attempt == 0:
                    msgs = P.stem_messages(category, theorem, context, sk)
                else:
                    assert question is not None
                    msgs = P.stem_regenerate_messages(category, theorem, context, sk, question, history[-1])
                question = await self._ask(model, msgs, P.STEM_SCHEMA, self.gen_settings, "lmb.stem",
                                           sample=attempt)  # fmt: skip
                flags = P.red_flags(question) if self.cfg.generation.red_flag_checks else []
                history.append(flags)
                if not flags:
                    break
            else:
                raise Rejected(f"red flags after {len(history)} attempts: {'; '.join(history[-1])}")
            assert question is not None
            repaired = False
            if self.cfg.generation.repair_stem:
                fixed = await self._ask(model, P.stem_repair_messages(question, theorem, context),
                                        P.STEM_SCHEMA, self.judge_settings, "lmb.stem_repair")  # fmt: skip
                if not self.cfg.generation.red_flag_checks or not P.red_flags(fixed):
                    question, repaired = fixed, fixed != question
            return {"question": question["question"].strip(),
                    "correct_choice": {"label": "A", "text": question["correct_choice"]["text"].strip()},
                    "red_flag_history": history, "repaired": repaired}  # fmt: skip

        out["stem"] = await self.runner.run(src.source_id, "stem", stem)
        return out

    # -- per variant ----------------------------------------------------------------------

    async def variant_stages(self, src: Source, variant: int, shared: dict[str, StepResult]) -> dict[str, StepResult]:
        item_id = f"{src.source_id}::{_variant_name(variant)}"
        model = self.cfg.models.generator
        theorem = src.record["expanded_theorem"]
        sk = shared["sketch"].output["sketch"]
        category = shared["classify"].output["theorem_type"][0]
        stem = shared["stem"].output
        question = {"question": stem["question"], "correct_choice": stem["correct_choice"]}
        a_text = stem["correct_choice"]["text"]
        out: dict[str, StepResult] = {}
        s = self.cfg.surface

        async def distractors() -> dict[str, Any]:
            obj = await self._ask(model, P.distractor_messages(category, theorem, sk, question),
                                  P.DISTRACTOR_SCHEMA, self.gen_settings, "lmb.distractors", sample=variant)  # fmt: skip
            validate_distractors(obj)
            revised = await self._ask(model, P.distractor_revision_messages(question, obj, sk, None),
                                      P.DISTRACTOR_SCHEMA, self.judge_settings, "lmb.revise", sample=variant)  # fmt: skip
            try:
                validate_distractors(revised)
                obj = revised
            except StageFailure:
                pass  # keep the unrevised set when the revision broke the structure
            report = None
            for round_ in range(s.revisions + 1):
                choices = {c["label"]: c["text"] for c in obj["choices"]}
                report = check_surface(a_text, choices, weaker_true=obj["meta"]["weaker_true_label"],
                                       min_length_ratio=s.min_length_ratio, max_length_ratio=s.max_length_ratio,
                                       max_latex_density_gap=s.max_latex_density_gap)  # fmt: skip
                if report.ok or round_ == s.revisions:
                    break
                fixed = await self._ask(model,
                                        P.distractor_revision_messages(question, obj, sk, report.problems),
                                        P.DISTRACTOR_SCHEMA, self.judge_settings, "lmb.revise_surface",
                                        sample=variant * 10 + round_ + 1)  # fmt: skip
                try:
                    validate_distractors(fixed)
                    obj = fixed
                except StageFailure:
                    break
            assert report is not None
            if not report.ok:
                raise Rejected("surface constraints: " + "; ".join(report.problems))
            return {"choices": obj["choices"], "meta": obj["meta"], "sketch_usage_meta": obj["sketch_usage_meta"],
                    "surface": report.measures}  # fmt: skip

        out["distractors"] = await self.runner.run(item_id, "distractors", distractors)
        if not out["distractors"].ok:
            return out
        dis = out["distractors"].output

        async def latex() -> dict[str, Any]:
            strings = {"question": stem["question"], "choice A": a_text}
            strings.update({f"choice {c['label']}": c["text"] for c in dis["choices"]})
            if not self.cfg.latex.check or self.latex_checker is None:
                return {"strings": strings, "checked": False, "skipped": ["latex check disabled"]}
            report = self.latex_checker(strings, preamble=src.preamble)
            for round_ in range(self.cfg.latex.repairs):
                if report.ok:
                    break
                bad = sorted({i.where for i in report.issues})
                for where in bad:
                    errors = [i.message for i in report.issues if i.where == where]
                    fixed = await self._ask(model, P.latex_repair_messages(strings[where], errors, src.preamble),
                                            P.LATEX_REPAIR_SCHEMA, self.judge_settings, "lmb.latex_repair",
                                            sample=round_)  # fmt: skip
                    strings[where] = fixed["text"]
                report = self.latex_checker(strings, preamble=src.preamble)
            if not report.ok:
                issues = "; ".join(f"{i.where}: {i.message}" for i in report.issues[:3])
                raise Rejected(f"invalid LaTeX after {self.cfg.latex.repairs} repair round(s): {issues}")
            return {"strings": strings, "checked": True, "skipped": list(report.skipped)}

        out["latex"] = await self.runner.run(item_id, "latex", latex)
        if not out["latex"].ok:
            return out
        strings = out["latex"].output["strings"]

        # stratified over a theorem's variants: with 2 variants and a fraction of 0.5, exactly one of them
        # is substitution-resistant, so the fraction holds closely on any number of theorems
        g = self.cfg.generation
        start = random.Random(f"{g.seed}:{src.source_id}").random()
        resistant = (start + variant / g.variants) % 1.0 < g.substitution_resistant_fraction
        mcq = {
            "question": strings["question"],
            "correct_choice": {"label": "A", "text": META_OPTION if resistant else strings["choice A"]},
            "choices": [{"label": c["label"], "text": strings[f"choice {c['label']}"]} for c in dis["choices"]],
            "meta": dis["meta"],
            "sketch_usage_meta": dis["sketch_usage_meta"],
        }
        out["mcq"] = StepResult("ok", {"mcq": mcq, "substitution_resistant": resistant,
                                       "original_correct_text": strings["choice A"]})  # fmt: skip
        judge = self.cfg.judges[0]

        async def rubric() -> dict[str, Any]:
            obj = await self._ask(judge, P.rubric_messages(mcq, theorem, sk), P.RUBRIC_SCHEMA,
                                  self.judge_settings, "lmb.rubric")  # fmt: skip
            total = sum(int(obj[k]["score"]) for k in ("ALS", "TAS", "GPS", "DQS"))
            obj["total_score"] = total
            if total < self.cfg.filters.rubric_min:
                return {"rubric": obj, "passed": False}
            return {"rubric": obj, "passed": True}

        out["rubric"] = await self.runner.run(item_id, "rubric", rubric)
        if not out["rubric"].ok or not out["rubric"].output["passed"]:
            return out
        if not self.cfg.filters.stem_only:
            return out
        matcher = self.cfg.judges[1] if len(self.cfg.judges) > 1 else judge

        async def stem_only() -> dict[str, Any]:
            free = await self._ask(judge, P.stem_only_messages(mcq["question"]), P.STEM_ONLY_SCHEMA,
                                   self.judge_settings, "lmb.stem_only")  # fmt: skip
            verdict = await self._ask(matcher, P.match_messages(mcq["question"], free["answer"], strings["choice A"]),
                                      P.MATCH_SCHEMA, self.judge_settings, "lmb.stem_match")  # fmt: skip
            trivial = bool(verdict.get("match"))
            return {"id": item_id, "theorem_type": shared["classify"].output["theorem_type"],
                    "score": verdict.get("score"), "instance": judge, "open_answer": free["answer"],
                    "match": trivial, "verdict": "stem-trivial" if trivial else "stem-nontrivial",
                    "reason": verdict.get("reason", "")}  # fmt: skip

        out["stem_only"] = await self.runner.run(item_id, "stem_only", stem_only)
        return out

    # -- assembling an item in the released layout ------------------------------------------

    def item(self, src: Source, variant: int, shared: dict[str, StepResult], stages: dict[str, StepResult]) -> dict:
        rec = src.record
        types = shared["classify"].output["theorem_type"]
        sk = shared["sketch"].output
        m = stages["mcq"].output
        item_id = f"{src.source_id}::{_variant_name(variant)}"
        calls = {name: r.call_ids for name, r in {**shared, **stages}.items() if r.call_ids}
        rubric = stages.get("rubric")
        return {
            "id": item_id,
            "paper_link": src.paper_link,
            "theorems_cnt": 1,
            "theorem": rec["theorem"],
            "ref_dict": rec.get("ref_dict", {}),
            "pre_theorem_intro_text_len": rec.get("pre_theorem_intro_text_len", 0),
            "pre_theorem_intro_text": rec.get("pre_theorem_intro_text", ""),
            "context": rec.get("context", ""),
            "full_context": rec.get("full_context", ""),
            "post_theorem_intro_text_len": rec.get("post_theorem_intro_text_len", 0),
            "post_theorem_intro_text": rec.get("post_theorem_intro_text", ""),
            "sketch": sk["sketch"],
            "expanded_sketch": sk["expanded_sketch"],
            "expanded_theorem": rec["expanded_theorem"],
            "theorem_type": types,
            "mcq": m["mcq"],
            "qa quality eval": rubric.output["rubric"] if rubric is not None and rubric.ok else None,
            "stem_triviality": stages["stem_only"].output if stages.get("stem_only") and stages["stem_only"].ok else None,
            "source_id": src.source_id,
            "variant": _variant_name(variant),
            "candidate_source_key": f"{src.source_id}::{types!r}",
            "hard_selection_meta": None,
            # theorembench additions
            "paper_id": src.paper_id,
            "substitution_resistant": m["substitution_resistant"],
            "original_correct_text": m["original_correct_text"],
            "latex_check": {k: v for k, v in stages["latex"].output.items() if k != "strings"},
            "surface": stages["distractors"].output.get("surface"),
            "call_ids": calls,
        }


def find_proof(flat_text: str, end_pos: int, limit: int = 6000) -> str | None:
    """The first proof after the theorem (within a window), if the paper gives one there."""
    m = re.search(r"\\begin\s*\{proof\}(.*?)\\end\s*\{proof\}", flat_text[end_pos : end_pos + 40000], re.DOTALL)
    if not m:
        return None
    return m.group(1).strip()[:limit]


def macro_preamble(flat_text: str, limit: int = 20000) -> str:
    """The paper's macro definitions (for compiling generated LaTeX in the paper's notation)."""
    from theorembench.latex.macros import MacroTable

    start = flat_text.find("\\begin{document}")
    head = flat_text[: start if start > 0 else len(flat_text)]
    table = MacroTable.collect(head)
    parts = [head[d.pos : d.end] for d in table.definitions if d.supported and d.kind != "let"]
    return "\n".join(parts)[:limit]


def load_source(paper: dict[str, Any], theorem: dict[str, Any]) -> Source | None:
    record = theorem.get("record")
    if not record:
        return None
    flat_path = (record.get("source") or {}).get("flat_document")
    proof = preamble = None
    if flat_path and Path(flat_path).is_file():
        flat = json.loads(Path(flat_path).read_text())
        text = flat.get("text", "")
        if record["theorem"]["end_pos"] > 0:
            proof = find_proof(text, record["theorem"]["end_pos"])
        preamble = macro_preamble(text)
    link = (f"https://arxiv.org/abs/{paper['id']}" if paper.get("source") == "arxiv"
            else (paper.get("meta") or {}).get("path", paper["id"]))  # fmt: skip
    return Source(source_id=paper["id"], paper_id=paper["id"], paper_link=link, record=record, proof=proof,
                  preamble=preamble or "")  # fmt: skip


@dataclass
class BuildOutcome:
    items: list[dict[str, Any]] = field(default_factory=list)  # every assembled item (the full split)
    sources: dict[str, dict[str, StepResult]] = field(default_factory=dict)
    variants: dict[str, dict[str, StepResult]] = field(default_factory=dict)


async def build_items(builder: Builder, sources: list[Source], *, concurrency: int = 4) -> BuildOutcome:
    outcome = BuildOutcome()
    gate = asyncio.Semaphore(concurrency)

    async def one(src: Source) -> None:
        async with gate:
            shared = await builder.source_stages(src)
            outcome.sources[src.source_id] = shared
            if not all(shared.get(k) is not None and shared[k].ok for k in ("sketch", "classify", "stem")):
                return
            for v in range(builder.cfg.generation.variants):
                stages = await builder.variant_stages(src, v, shared)
                outcome.variants[f"{src.source_id}::{_variant_name(v)}"] = stages
                if "mcq" in stages:
                    outcome.items.append(builder.item(src, v, shared, stages))

    await asyncio.gather(*(one(s) for s in sources))
    outcome.items.sort(key=lambda it: it["id"])
    return outcome


def in_pool(item: dict[str, Any], cfg: LMBConfig) -> bool:
    """Eligible for calibration: rubric passed, stem not trivial (when that filter runs)."""
    rubric = item.get("qa quality eval")
    if not rubric or rubric["total_score"] < cfg.filters.rubric_min:
        return False
    if cfg.filters.stem_only:
        st = item.get("stem_triviality")
        return bool(st) and st["verdict"] == "stem-nontrivial"
    return True


async def calibrate(builder: Builder, pool: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Stage 6, step 2: the calibration model answers every pooled item (released protocol)."""
    from theorembench.evaluate.mcq.items import Item
    from theorembench.evaluate.mcq.protocol import extract_answer, messages, shuffle_options

    cfg = builder.cfg.calibration
    settings = GenerateSettings(max_tokens=cfg.max_tokens, reasoning_effort=cfg.reasoning_effort or None)
    results: dict[str, dict[str, Any]] = {}

    async def one(index: int, item: dict[str, Any]) -> None:
        async def run() -> dict[str, Any]:
            parsed = Item.model_validate(item)
            presented = shuffle_options(parsed, index, cfg.seed)
            completion = await builder.llm.generate(builder.cfg.calibrator, messages(parsed, presented, sketch=False),
                                                    settings, purpose="lmb.calibrate")  # fmt: skip
            answer = extract_answer(completion.text)
            return {"model_answer": answer, "correct_answer": presented.correct_label,
                    "model_is_correct": answer == presented.correct_label}  # fmt: skip

        result = await builder.runner.run(item["id"], "calibrate", run)
        if result.ok:
            results[item["id"]] = result.output | {"call_ids": result.call_ids}

    await asyncio.gather(*(one(i, it) for i, it in enumerate(pool)))
    return results


def select_hard(pool: list[dict[str, Any]], answers: dict[str, dict[str, Any]] | None) -> list[dict[str, Any]]:
    """Stage 6, step 3: per source, the unsolved variant with the best rubric score; all-solved sources go."""
    by_source: dict[str, list[dict[str, Any]]] = {}
    for item in pool:
        by_source.setdefault(item["source_id"], []).append(item)
    hard = []
    for source_id in sorted(by_source):
        group = by_source[source_id]
        if answers is None:
            candidates = group
        else:
            candidates = [it for it in group if it["id"] in answers and not answers[it["id"]]["model_is_correct"]]
        if not candidates:
            continue
        ranked = sorted(candidates, key=lambda it: (-it["qa quality eval"]["total_score"], it["variant"] != "orig",
                                                   it["variant"]))  # fmt: skip
        best = dict(ranked[0])
        ans = (answers or {}).get(best["id"], {})
        best["hard_selection_meta"] = {
            "selected_from": len(group),
            "selected_variant": best["variant"],
            "model_is_correct": ans.get("model_is_correct"),
            "model_answer": ans.get("model_answer"),
            "correct_answer": ans.get("correct_answer"),
            "selection_rank": 1,
        }
        hard.append(best)
    return hard


__all__ = ["Builder", "BuildEvents", "Source", "build_items", "calibrate", "in_pool",
           "load_source", "select_hard", "validate_distractors"]  # fmt: skip
