"""LiveMathematicianBench stages 3b-6 as resumable steps over the store.

For each source theorem: proof sketch (3b), logical categories (3c), stem and
correct option with red-flag regeneration and a theorem-only repair pass (4a).
For each variant (the original distractor set, and the regenerated ones that
``funnel.build_items`` asks for only after the original passed the rubric and the
stem-only filter): distractors with an adversarial revision (4b), computed surface
checks, LaTeX validation with a bounded repair, the substitution-resistant option
and the quality rubric. The stem-only triviality filter (5) runs once per theorem,
on its original item; ``funnel`` holds the order and the hardness calibration (6).

Every step's output is stored under (pipeline key, item, stage); every model call
is cached and its id kept with the step, so a rerun (after a crash, a kill or a
change of a later stage's settings) skips finished work and pays for no call twice.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from theorembench.common.progress import OnStep
from theorembench.evaluate.mcq.items import META_OPTION
from theorembench.latex.context import trim
from theorembench.latex.proofs import find_theorem_proof
from theorembench.llm import LLM, GenerateSettings
from theorembench.methods.lmb import prompts as P
from theorembench.methods.lmb.categories import UNKNOWN, normalize_category
from theorembench.methods.lmb.config import LMBConfig
from theorembench.methods.lmb.surface import check_surface
from theorembench.pipeline.steps import Rejected, StepFailed, StepResult, StepRunner
from theorembench.store import Store

LABELS = ("B", "C", "D", "E")
MAX_CATEGORIES = 2  # the release gives each theorem one or two categories, never three




@dataclass
class Source:
    """One theorem to build questions from."""

    source_id: str
    paper_id: str
    paper_link: str
    record: dict[str, Any]
    proof: str | None = None
    preamble: str = ""
    proof_source: str = "no proof found"  # where the proof was found (latex/proofs.py), or why there is none
    theorems_cnt: int = 1  # theorem-like blocks in the paper's Introduction (the released field)


@dataclass
class BuildEvents:
    on_step: OnStep | None = None  # (key, stage, status)


def variant_name(v: int) -> str:
    return "orig" if v == 0 else f"alt{v}"


def prompt_category(theorem_type: list[str] | str) -> str:
    """The category the generation prompts are written for: the first one, or "unknown"."""
    return theorem_type[0] if isinstance(theorem_type, list) and theorem_type else UNKNOWN


def substitution_resistant(source_id: str, seed: int, fraction: float) -> bool:
    """Whether a theorem's items are substitution-resistant: one draw per theorem, so every variant agrees."""
    return random.Random(f"{seed}:{source_id}").random() < fraction


def meta_distractor_label(source_id: str, item_id: str, meta: dict[str, Any], *, seed: int, share: float,
                          resistant: bool) -> str | None:  # fmt: skip
    """The false distractor the meta-option replaces in this item, or None (see ``Generation`` in config.py).

    Whether is drawn once per theorem (``source_id``), as the substitution-resistant status is, so
    that picking a theorem's hardest variant cannot favour items with or without it; which label
    is drawn per item (``item_id``) among the false labels, never the weaker-but-true option (C)
    and never A. A substitution-resistant item never gets it: there it is the keyed answer.
    """
    if resistant or random.Random(f"{seed}:meta-distractor:{source_id}").random() >= share:
        return None
    false = sorted(set(meta.get("false_labels") or []) - {meta.get("weaker_true_label"), "A"})
    return random.Random(f"{seed}:meta-distractor:{item_id}").choice(false) if false else None


def validate_distractors(obj: dict[str, Any]) -> None:
    labels = [c.get("label") for c in obj.get("choices", [])]
    if labels != list(LABELS):
        raise StepFailed(f"distractor labels must be B, C, D, E in order, got {labels}")
    meta = obj.get("meta") or {}
    weaker = meta.get("weaker_true_label")
    false = sorted(meta.get("false_labels") or [])
    if weaker not in LABELS or sorted([weaker, *false]) != list(LABELS):
        raise StepFailed(f"meta must name one weaker-true label and the three false labels, got {meta}")
    if meta.get("wildcard_false_label") not in false:
        raise StepFailed("meta.wildcard_false_label must be one of the false labels")
    texts = [c.get("text", "").strip() for c in obj["choices"]]
    if any(not t for t in texts) or len(set(texts)) < 4:
        raise StepFailed("distractors must be four distinct non-empty statements")
    if any(" ".join(t.split()) == META_OPTION for t in texts):
        raise StepFailed("a distractor may not be the substitution-resistant meta-option")


class Builder:
    """Runs the LMB stages for a set of theorems; every step is stored as it finishes."""

    def __init__(self, store: Store, llm: LLM, cfg: LMBConfig, *, pipeline: str,
                 events: BuildEvents | None = None, latex_checker: Any = None):  # fmt: skip
        self.store = store
        self.llm = llm
        self.cfg = cfg
        self.events = events or BuildEvents()
        self.runner = StepRunner(store, pipeline, on_step=self.events.on_step)
        self.latex_checker = latex_checker
        g = cfg.generation
        # a sampling seed makes local (llama.cpp) runs reproducible; providers without seeds ignore it. It is
        # not the seed that picks substitution-resistant items, so changing that one keeps every cached call
        self.gen_settings = GenerateSettings(temperature=g.temperature, max_tokens=g.max_tokens,
                                             reasoning_effort=g.reasoning_effort or None, seed=g.sampling_seed)  # fmt: skip
        self.judge_settings = GenerateSettings(temperature=0.0, max_tokens=g.max_tokens,
                                               reasoning_effort=g.reasoning_effort or None, seed=g.sampling_seed)  # fmt: skip

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

        sources = self._sketch_sources(src, context)

        async def sketch() -> dict[str, Any]:
            obj = await self._ask(model, P.sketch_messages(theorem, sources), P.SKETCH_SCHEMA,
                                  self.gen_settings, "lmb.sketch")  # fmt: skip
            if not obj.get("sketch", "").strip():
                raise StepFailed("empty proof sketch")
            return {"sketch": obj["sketch"].strip(), "expanded_sketch": (obj.get("expanded_sketch") or "").strip()
                    or "No expanded sketch found.", "proof_source": src.proof_source,
                    "sketch_sources": seen_sources(sources, src.proof_source)}  # fmt: skip

        out["sketch"] = await self.runner.run(src.source_id, "sketch", sketch)
        if not out["sketch"].ok:
            return out

        async def classify() -> dict[str, Any]:
            obj = await self._ask(model, P.classify_messages(theorem, context), P.CLASSIFY_SCHEMA,
                                  self.judge_settings, "lmb.classify")  # fmt: skip
            cats = [c for c in (normalize_category(x) for x in obj.get("categories", [])) if c]
            cats = list(dict.fromkeys(cats))[:MAX_CATEGORIES]
            # as in the release, a theorem none of the thirteen categories fits is kept as "unknown"
            return {"theorem_type": cats or UNKNOWN, "reason": obj.get("reason", "")}

        out["classify"] = await self.runner.run(src.source_id, "classify", classify)
        if not out["classify"].ok:
            return out
        category = prompt_category(out["classify"].output["theorem_type"])
        sk = out["sketch"].output["sketch"]

        # the paper's stem writer reads the theorem only; context and sketch only when configured
        stem_context = context if "context" in self.cfg.generation.stem_inputs else None
        stem_sketch = sk if "sketch" in self.cfg.generation.stem_inputs else None

        async def stem() -> dict[str, Any]:
            history: list[list[str]] = []
            question: dict[str, Any] | None = None
            for attempt in range(self.cfg.generation.max_regenerations + 1):
                if attempt == 0:
                    msgs = P.stem_messages(category, theorem, stem_context, stem_sketch)
                else:
                    assert question is not None
                    msgs = P.stem_regenerate_messages(category, theorem, stem_context, stem_sketch, question,
                                                      history[-1])  # fmt: skip
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

    def _sketch_sources(self, src: Source, context: str) -> dict[str, str | None]:
        """What the sketch writer reads besides the theorem (``generation.sketch_inputs``): the Introduction's text
        after the theorem (the release's main source), the theorem's own proof, the recovered context."""
        wanted = self.cfg.generation.sketch_inputs.split("+")
        budget = self.cfg.context.full_context_chars
        given = {"intro": trim(src.record.get("post_theorem_intro_text") or "", budget), "proof": src.proof,
                 "context": context}  # fmt: skip
        return {key: given[key] for key in ("intro", "proof", "context") if key in wanted}

    # -- per variant ----------------------------------------------------------------------

    async def variant_stages(self, src: Source, variant: int, shared: dict[str, StepResult]) -> dict[str, StepResult]:
        item_id = f"{src.source_id}::{variant_name(variant)}"
        model = self.cfg.models.generator
        theorem = src.record["expanded_theorem"]
        sk = shared["sketch"].output["sketch"]
        category = prompt_category(shared["classify"].output["theorem_type"])
        stem = shared["stem"].output
        question = {"question": stem["question"], "correct_choice": stem["correct_choice"]}
        a_text = stem["correct_choice"]["text"]
        out: dict[str, StepResult] = {}

        async def distractors() -> dict[str, Any]:
            obj = await self._ask(model, P.distractor_messages(category, theorem, sk, question),
                                  P.DISTRACTOR_SCHEMA, self.gen_settings, "lmb.distractors", sample=variant)  # fmt: skip
            validate_distractors(obj)
            revised = await self._ask(model, P.distractor_revision_messages(question, obj, sk, None),
                                      P.DISTRACTOR_SCHEMA, self.judge_settings, "lmb.revise", sample=variant)  # fmt: skip
            try:
                validate_distractors(revised)
                obj = revised
            except StepFailed:
                pass  # keep the unrevised set when the revision broke the structure
            obj, report = await self._surface_revisions(obj, a_text, question, sk, model, variant)
            # offenders that survive the revisions are kept and flagged, never silently dropped
            return {"choices": obj["choices"], "meta": obj["meta"], "sketch_usage_meta": obj["sketch_usage_meta"],
                    "surface": report.measures, "surface_flags": list(report.problems)}  # fmt: skip

        out["distractors"] = await self.runner.run(item_id, "distractors", distractors)
        if not out["distractors"].ok:
            return out
        dis = out["distractors"].output

        async def latex() -> dict[str, Any]:
            strings = {"question": stem["question"], "choice A": a_text}
            strings.update({f"choice {c['label']}": c["text"] for c in dis["choices"]})
            return await self._checked_latex(src, strings, model)

        out["latex"] = await self.runner.run(item_id, "latex", latex)
        if not out["latex"].ok:
            return out
        strings = out["latex"].output["strings"]

        # drawn once per theorem: all its variants share the status, so picking the hardest variant
        # cannot favour substitution-resistant items
        g = self.cfg.generation
        resistant = substitution_resistant(src.source_id, g.seed, g.substitution_resistant_fraction)
        replaced = meta_distractor_label(src.source_id, item_id, dis["meta"], seed=g.seed,
                                         share=g.meta_distractor_share, resistant=resistant)  # fmt: skip
        mcq = {
            "question": strings["question"],
            "correct_choice": {"label": "A", "text": META_OPTION if resistant else strings["choice A"]},
            "choices": [{"label": c["label"], "text": META_OPTION if c["label"] == replaced
                         else strings[f"choice {c['label']}"]} for c in dis["choices"]],
            "meta": dis["meta"] if replaced is None else {**dis["meta"], "meta_distractor_label": replaced},
            "sketch_usage_meta": dis["sketch_usage_meta"],
        }
        out["mcq"] = StepResult("ok", {"mcq": mcq, "substitution_resistant": resistant, "meta_distractor": replaced,
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
        return out

    async def _surface_revisions(self, obj: dict[str, Any], a_text: str, question: dict[str, Any], sk: str,
                                 model: str, variant: int) -> tuple[dict[str, Any], Any]:  # fmt: skip
        """The surface checks (lengths, LaTeX density), with up to ``surface.revisions`` revisions by the model;
        returns the last valid set and its report (offenders that survive are flagged by the caller)."""
        s = self.cfg.surface
        report = None
        for round_ in range(s.revisions + 1):
            choices = {c["label"]: c["text"] for c in obj["choices"]}
            report = check_surface(a_text, choices, weaker_true=obj["meta"]["weaker_true_label"],
                                   min_length_ratio=s.min_length_ratio, max_length_ratio=s.max_length_ratio,
                                   max_latex_density_gap=s.max_latex_density_gap, short_chars=s.short_chars)  # fmt: skip
            if report.ok or round_ == s.revisions:
                break
            fixed = await self._ask(model, P.distractor_revision_messages(question, obj, sk, report.problems),
                                    P.DISTRACTOR_SCHEMA, self.judge_settings, "lmb.revise_surface",
                                    sample=variant * 10 + round_ + 1)  # fmt: skip
            try:
                validate_distractors(fixed)
                obj = fixed
            except StepFailed:
                break
        assert report is not None
        return obj, report

    async def _checked_latex(self, src: Source, strings: dict[str, str], model: str) -> dict[str, Any]:
        """The item's strings through the LaTeX check, with up to ``latex.repairs`` rounds of repairs by the model."""
        if not self.cfg.latex.check or self.latex_checker is None:
            return {"strings": strings, "checked": False, "skipped": ["latex check disabled"]}
        # the checker is awaited (latex.check_item_async): pdflatex and node run off the event loop
        report = await self.latex_checker(strings, preamble=src.preamble)
        for round_ in range(self.cfg.latex.repairs):
            if not report.issues:
                break
            for where in sorted({i.where for i in report.issues}):
                errors = [i.message for i in report.issues if i.where == where]
                fixed = await self._ask(model, P.latex_repair_messages(strings[where], errors, src.preamble),
                                        P.LATEX_REPAIR_SCHEMA, self.judge_settings, "lmb.latex_repair",
                                        sample=round_)  # fmt: skip
                strings[where] = fixed["text"]
            report = await self.latex_checker(strings, preamble=src.preamble)
        if report.issues:
            issues = "; ".join(f"{i.where}: {i.message}" for i in report.issues[:3])
            raise Rejected(f"invalid LaTeX after {self.cfg.latex.repairs} repair round(s): {issues}")
        if not report.complete:  # not checked is not passed: the step runs again next time
            raise StepFailed("LaTeX check incomplete: " + "; ".join(report.skipped))
        return {"strings": strings, "checked": True, "skipped": []}

    async def stem_filter(self, src: Source, shared: dict[str, StepResult], orig: dict[str, StepResult]) -> StepResult:
        """Stage 5 on a theorem's original item (after its rubric passed), in the released layout.

        ``score`` is the item's rubric total, ``verdict`` the matching judge's short verdict
        and ``match`` whether the stem alone gave the keyed answer (the item then leaves).
        """
        judge = self.cfg.judges[0]
        matcher = self.cfg.judges[1] if len(self.cfg.judges) > 1 else judge
        question = orig["mcq"].output["mcq"]["question"]
        keyed = orig["mcq"].output["original_correct_text"]

        async def stem_only() -> dict[str, Any]:
            free = await self._ask(judge, P.stem_only_messages(question), P.STEM_ONLY_SCHEMA,
                                   self.judge_settings, "lmb.stem_only")  # fmt: skip
            verdict = await self._ask(matcher, P.match_messages(question, free["answer"], keyed),
                                      P.MATCH_SCHEMA, self.judge_settings, "lmb.stem_match")  # fmt: skip
            return {"id": src.source_id, "theorem_type": shared["classify"].output["theorem_type"],
                    "score": orig["rubric"].output["rubric"]["total_score"], "instance": judge,
                    "open_answer": free["answer"], "match": bool(verdict.get("match")),
                    "verdict": str(verdict.get("verdict") or "").strip(), "reason": verdict.get("reason", ""),
                    "match_score": verdict.get("score")}  # fmt: skip

        return await self.runner.run(src.source_id, "stem_only", stem_only)

    # -- assembling an item in the released layout ------------------------------------------

    def item(self, src: Source, variant: int, shared: dict[str, StepResult], stages: dict[str, StepResult], *,
             stem_triviality: dict[str, Any] | None = None) -> dict:  # fmt: skip
        rec = src.record
        types = shared["classify"].output["theorem_type"]
        sk = shared["sketch"].output
        m = stages["mcq"].output
        item_id = f"{src.source_id}::{variant_name(variant)}"
        calls = {name: r.call_ids for name, r in {**shared, **stages}.items() if r.call_ids}
        rubric = stages.get("rubric")
        return {
            "id": item_id,
            "paper_link": src.paper_link,
            "theorems_cnt": src.theorems_cnt,
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
            "stem_triviality": stem_triviality,
            "source_id": src.source_id,
            "variant": variant_name(variant),
            "candidate_source_key": f"{src.source_id}::{repr(types) if isinstance(types, list) else types}",
            "hard_selection_meta": None,
            # theorembench additions
            "paper_id": src.paper_id,
            "substitution_resistant": m["substitution_resistant"],
            "meta_distractor": m.get("meta_distractor"),  # the false label the meta-option replaced, or None
            "original_correct_text": m["original_correct_text"],
            "latex_check": {k: v for k, v in stages["latex"].output.items() if k != "strings"},
            "surface": stages["distractors"].output.get("surface"),
            "surface_flags": stages["distractors"].output.get("surface_flags", []),
            "proof_source": sk.get("proof_source"),
            "sketch_sources": sk.get("sketch_sources"),
            "call_ids": calls,
        }


def seen_sources(sources: dict[str, str | None], proof_source: str) -> dict[str, Any]:
    """What a sketch request carried, for the record: the characters of each text given (0: offered but empty;
    absent: not offered), and where the proof was found."""
    seen: dict[str, Any] = {key: len((text or "").strip()) for key, text in sources.items()}
    if "proof" in sources:
        seen["proof_source"] = proof_source
    return seen


def find_proof(flat_text: str, record: dict[str, Any], limit: int = 6000) -> tuple[str | None, str]:
    """The theorem's own proof (latex/proofs.py) and where it was found; (None, "no proof found") otherwise."""
    th = record["theorem"]
    if th.get("end_pos", -1) <= 0:
        return None, "no proof found: the theorem was not located in the paper"
    found = find_theorem_proof(flat_text, start=th["start_pos"], end=th["end_pos"], label=th.get("label"),
                               note=record.get("theorem_title"), env=th.get("env_name"), limit=limit)  # fmt: skip
    if found is None or not found.text:
        return None, "no proof found"
    return found.text, found.describe()


def macro_preamble(flat_text: str, limit: int = 20000) -> str:
    """The paper's macro definitions (for compiling generated LaTeX in the paper's notation)."""
    from theorembench.latex.macros import MacroTable

    start = flat_text.find("\\begin{document}")
    head = flat_text[: start if start > 0 else len(flat_text)]
    table = MacroTable.collect(head)
    parts = [head[d.pos : d.end] for d in table.definitions if d.supported and d.kind != "let"]
    return "\n".join(parts)[:limit]


def intro_theorem_count(flat_text: str) -> int:
    """Theorem-like blocks (remark-like ones left out) in the Introduction: the released ``theorems_cnt``.

    At least 1, the extracted theorem itself (also when no Introduction was found).
    """
    from theorembench.latex.theorems import KIND_RANK, declarations_with_builtins, introduction, theorem_blocks

    intro = introduction(flat_text)
    if intro is None:
        return 1
    blocks = theorem_blocks(flat_text, declarations_with_builtins(flat_text))
    return max(1, sum(1 for b in blocks if intro.body_start <= b.block_start < intro.end and b.kind in KIND_RANK))


def load_source(paper: dict[str, Any], theorem: dict[str, Any]) -> Source | None:
    record = theorem.get("record")
    if not record:
        return None
    flat_path = (record.get("source") or {}).get("flat_document")
    proof = preamble = None
    proof_source = "no proof found: no flattened paper"
    count = 1
    if flat_path and Path(flat_path).is_file():
        flat = json.loads(Path(flat_path).read_text())
        text = flat.get("text", "")
        proof, proof_source = find_proof(text, record)
        preamble = macro_preamble(text)
        count = intro_theorem_count(text)
    link = (f"https://arxiv.org/abs/{paper['id']}" if paper.get("source") == "arxiv"
            else (paper.get("meta") or {}).get("path", paper["id"]))  # fmt: skip
    return Source(source_id=paper["id"], paper_id=paper["id"], paper_link=link, record=record, proof=proof,
                  preamble=preamble or "", theorems_cnt=record.get("theorems_cnt") or count,
                  proof_source=proof_source)  # fmt: skip


__all__ = [
    "BuildEvents",
    "Builder",
    "Source",
    "intro_theorem_count",
    "load_source",
    "meta_distractor_label",
    "prompt_category",
    "substitution_resistant",
    "validate_distractors",
    "variant_name",
]  # fmt: skip
