"""The EternalMath build's stored steps: classification, computability, meta-templates, code translation,
screening and the validity review.

Each stage that calls a model (or, for translation, runs code in the sandbox) is a step
of :class:`~theorembench.pipeline.steps.StepRunner`: its pipeline name holds a hash of the
settings and prompt version that shape it, and its key holds the item's id and a digest of
its inputs, so a changed input or setting reruns exactly the stages it affects. Each step
keeps the ids of its model calls. A model call that failed for good makes the step
``failed`` (it runs again next time, its answered calls served from the cache); a rule or a
judge's verdict makes it ``rejected`` (final). A killed build resumed repeats no answered call.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel

from theorembench.common.digest import json_digest
from theorembench.common.progress import OnStep
from theorembench.llm import LLM, GenerateSettings, LogprobsError
from theorembench.methods.eternal import msc
from theorembench.methods.eternal import prompts as P
from theorembench.methods.eternal.config import EternalConfig
from theorembench.methods.eternal.excerpt import relevant_excerpt
from theorembench.methods.eternal.filter import PaperInput, judge_computability
from theorembench.methods.eternal.screening import screen_calls
from theorembench.methods.eternal.template import TemplateError, parse_template
from theorembench.pipeline.identity import package_modules, pipeline_name
from theorembench.pipeline.steps import Rejected, StepFailed, StepResult, StepRunner
from theorembench.store import Store

STAGES = ("classify", "computability", "templates", "translate", "screening", "validity")
CODE_FIELDS = ("formal_solution", "small_case_check")

# runs templates in the sandbox: (templates, n, seed) -> the instantiate service's result
Instantiate = Callable[[list[Any], int, int], Awaitable[Any]]


def digest(value: Any) -> str:
    return json_digest(value, 10)


def code_problems(problems: list[str]) -> tuple[list[str], list[str]]:
    """A template's problems split into (code problems the translator can fix, other problems)."""
    code = [p for p in problems if p.startswith(CODE_FIELDS)]
    return code, [p for p in problems if not p.startswith(CODE_FIELDS)]


def stage_pipeline(stage: str, *settings: Any, prompts: bool = True) -> str:
    """A stage's pipeline name: EternalMath's version, prompts (unless the stage asks no model) and code, and
    the settings that shape the stage."""
    from theorembench.methods import eternal

    dumped = [s.model_dump(mode="json") if isinstance(s, BaseModel) else s for s in settings]
    return pipeline_name(f"eternal/{stage}", version=P.VERSION, prompts=[P] if prompts else [],
                         code=package_modules(eternal), settings=dumped)  # fmt: skip


class EternalBuilder:
    """The stored stages of one build; share one per build."""

    def __init__(self, store: Store, llm: LLM, cfg: EternalConfig, *, instantiate: Instantiate,
                 on_step: OnStep | None = None):  # fmt: skip
        self.store = store
        self.llm = llm
        self.cfg = cfg
        self.instantiate = instantiate
        g = cfg.generation
        self.gen_settings = GenerateSettings(temperature=g.temperature, max_tokens=g.max_tokens, seed=g.sampling_seed)
        self.judge_settings = GenerateSettings(temperature=0.0, max_tokens=g.max_tokens, seed=g.sampling_seed)
        shaping = {
            "classify": (cfg.judge, cfg.classification, cfg.templates.paper_chars),
            "computability": (cfg.judge, cfg.templates.paper_chars),
            "templates": (cfg.models.generator, cfg.templates),
            "translate": (cfg.models.generator, cfg.translation, cfg.execution.timeout_s, cfg.execution.memory_mb,
                          cfg.execution.seed, cfg.execution.per_instance_s),
            "screening": (cfg.models.generator, cfg.scorer, cfg.review.min_avg_logprob),
            "validity": (cfg.validity_judge, cfg.review.validity_instances, cfg.review.excerpt_chars),
        }  # fmt: skip
        self.runners = {stage: StepRunner(store, stage_pipeline(stage, g, *parts), on_step=on_step)
                        for stage, parts in shaping.items()}  # fmt: skip
        self.results: dict[str, dict[str, StepResult]] = {stage: {} for stage in STAGES}

    async def _run(self, stage: str, key: str, fn: Callable[[], Awaitable[Any]]) -> StepResult:
        result = await self.runners[stage].run(key, stage, fn)
        self.results[stage][key] = result
        return result

    # -- per paper ------------------------------------------------------------------------

    async def classify(self, paper: PaperInput) -> StepResult:
        """Stage b: the authors' ``\\subjclass`` codes, else the judge's, normalised and checked."""
        c = self.cfg.classification
        written = [code for text in msc.subjclass_texts(paper.latex or "") for code in msc.find_codes(text)]
        written = written or paper.record_msc

        async def run() -> dict[str, Any]:
            if written:
                found = msc.classify_codes(written, source="subjclass", max_codes=c.max_codes, exclude=c.exclude)
                if found.codes or found.excluded:
                    return found.to_dict()
            if not c.llm_fallback:
                raise Rejected("no usable \\subjclass codes and classification.llm_fallback is off")
            obj, completions = await self.llm.generate_json(
                self.cfg.judge, P.classify_messages(paper.text(self.cfg.templates.paper_chars), msc.table_text(),
                                                    c.max_codes),
                P.CLASSIFY_SCHEMA, self.judge_settings, purpose="eternal.classify")  # fmt: skip
            found = msc.classify_codes([str(x) for x in obj["codes"]], source="llm", max_codes=c.max_codes,
                                       exclude=c.exclude)  # fmt: skip
            if not found.codes and not found.excluded:
                # not an outcome: the reply is marked invalid, so the next build asks the judge anew
                self.store.mark_call_invalid(completions[-1].call_id, "no valid MSC2020 class")
                raise StepFailed(f"the judge gave no valid MSC2020 class (got {obj['codes']!r})")
            return found.to_dict()

        return await self._run("classify", f"{paper.id}#{digest(written)}", run)

    async def computability(self, paper: PaperInput) -> StepResult:
        """Stage a's judge: does the paper state results with explicit input and output?"""
        text = paper.text(self.cfg.templates.paper_chars)

        async def run() -> dict[str, Any]:
            if not self.cfg.filter.computability:
                return {"computable": True, "reason": "not judged (filter.computability = false)", "results": []}
            verdict = await judge_computability(self.llm, self.cfg.judge, paper, self.cfg.templates.paper_chars,
                                                self.judge_settings)  # fmt: skip
            if not verdict["computable"]:
                raise Rejected(f"not computable: {verdict['reason'] or 'no reason given'}")
            return verdict

        return await self._run("computability", f"{paper.id}#{digest([text, self.cfg.filter.computability])}", run)

    async def templates(self, paper: PaperInput, results: list[dict[str, Any]]) -> StepResult:
        """Stage c: up to ``per_paper`` meta-templates, renamed ``<paper id>:t<k>``."""
        t = self.cfg.templates
        text = paper.text(t.paper_chars)

        async def run() -> dict[str, Any]:
            obj, completions = await self.llm.generate_json(
                self.cfg.models.generator, P.templates_messages(text, results, t.per_paper), P.TEMPLATES_SCHEMA,
                self.gen_settings, purpose="eternal.templates")  # fmt: skip
            out = []
            for k, raw in enumerate(obj["templates"][: t.per_paper]):
                item = dict(raw, template_id=f"{paper.id}:t{k + 1}", paper_id=paper.id)
                item["source_template_id"] = raw.get("template_id")
                out.append(item)
            if not out:
                raise Rejected("the generator wrote no template")
            return {"templates": out, "call_id": completions[-1].call_id}

        return await self._run("templates", f"{paper.id}#{digest([text, results])}", run)

    # -- per template ---------------------------------------------------------------------------

    async def _ask(self, messages: list[dict[str, str]], schema: dict[str, Any], purpose: str,
                   sample: int = 0) -> tuple[dict[str, Any], str]:  # fmt: skip
        obj, completions = await self.llm.generate_json(self.cfg.models.generator, messages, schema,
                                                        self.gen_settings, purpose=purpose, sample=sample)  # fmt: skip
        return obj, completions[-1].text

    async def trial(self, obj: dict[str, Any]) -> dict[str, str]:
        """Execution errors of a template's two programs on a few small cases: {field: error}."""
        try:
            template = parse_template(obj)
        except TemplateError as exc:
            code, _other = code_problems(exc.problems)
            return {f: "; ".join(p for p in code if p.startswith(f)) for f in CODE_FIELDS if any(
                p.startswith(f) for p in code)}  # fmt: skip
        run = await self.instantiate([template], self.cfg.translation.trial_cases, self.cfg.execution.seed)
        return execution_errors(run.rejections)

    async def translate(self, obj: dict[str, Any]) -> StepResult:
        """Stage d: the translator writes formal_solution and, blind to it, the brute-force check; one repair
        round shows it the sandbox's error. Errors left after the repairs are for stage e to reject."""
        tr = self.cfg.translation

        async def run() -> dict[str, Any]:
            sol_msgs, chk_msgs = P.solution_messages(obj), P.check_messages(obj)
            sol, sol_reply = await self._ask(sol_msgs, P.SOLUTION_SCHEMA, "eternal.translate")
            chk, chk_reply = await self._ask(chk_msgs, P.CHECK_SCHEMA, "eternal.brute_force")
            current = dict(obj, formal_solution=sol["formal_solution"], small_case_check=chk["small_case_check"])
            history = []
            for round_ in range(tr.repair_rounds + 1):
                errors = await self.trial(current)
                history.append(errors)
                if not errors or round_ == tr.repair_rounds:
                    break
                if "formal_solution" in errors:
                    msgs = P.repair_messages(sol_msgs, sol_reply, errors["formal_solution"])
                    sol, sol_reply = await self._ask(msgs, P.SOLUTION_SCHEMA, "eternal.translate.repair", round_ + 1)
                    current["formal_solution"] = sol["formal_solution"]
                if "small_case_check" in errors:
                    msgs = P.repair_messages(chk_msgs, chk_reply, errors["small_case_check"])
                    chk, chk_reply = await self._ask(msgs, P.CHECK_SCHEMA, "eternal.brute_force.repair", round_ + 1)
                    current["small_case_check"] = chk["small_case_check"]
            return {"template": current, "trial_errors": history, "repairs": len(history) - 1}

        return await self._run("translate", f"{obj['template_id']}#{digest(obj)}", run)

    async def screening(self, template_id: str, call_ids: list[int]) -> StepResult:
        """Stage f, optional: a generation whose average token log-probability is below the threshold is dropped."""

        async def run() -> dict[str, Any]:
            try:
                verdict = await screen_calls(self.llm, self.cfg.scorer, call_ids, self.cfg.review.min_avg_logprob)
            except LogprobsError as exc:
                raise StepFailed(f"log-probability request failed: {exc}") from exc
            if verdict.status == "rejected":
                raise Rejected(f"low confidence: {verdict.note}")
            return verdict.to_dict()

        return await self._run("screening", f"{template_id}#{digest(sorted(call_ids))}", run)

    async def validity(self, template: Any, instances: list[dict[str, Any]], paper: PaperInput | None) -> StepResult:
        """Stage f: the validity judge reads the theorem, the paper's relevant excerpt and several instances:
        self-contained, unambiguous, one well-defined answer, faithful to the theorem."""
        r = self.cfg.review
        shown = [{"problem": i.get("problem") or "", "solution": i.get("solution_steps") or "(none)",
                  "answer": str(i.get("numerical_value"))} for i in instances[: r.validity_instances]]  # fmt: skip
        raw = template.raw
        theorem = "; ".join(dict.fromkeys(str(raw[k]) for k in ("theorem", "target_paper_module", "core_math_concept")
                                          if raw.get(k)))  # fmt: skip
        excerpt = relevant_excerpt(paper, template, r.excerpt_chars)

        async def run() -> dict[str, Any]:
            obj, _ = await self.llm.generate_json(
                self.cfg.validity_judge, P.validity_messages(theorem, excerpt, shown), P.VALIDITY_SCHEMA,
                self.judge_settings, purpose="eternal.validity")  # fmt: skip
            failed = [k for k in P.VALIDITY_CHECKS if not obj[k]]
            if failed or not obj["valid"]:
                raise Rejected(f"invalid problem ({', '.join(failed) or 'judged invalid'}): {obj['reason']}")
            return dict(obj, judge=self.cfg.validity_judge, instances_read=len(shown))

        return await self._run("validity", f"{template.template_id}#{digest([theorem, excerpt, shown])}", run)


def execution_errors(rejections: list[dict[str, Any]]) -> dict[str, str]:
    """The errors a translator can act on, by program, from the instantiate service's rejections.

    A program that raised or timed out on a small case or an instance is named; a disagreement
    between the two programs is not an execution error (stage e rejects it, no repair).
    """
    errors: dict[str, str] = {}
    for r in rejections:
        stage, reason = r.get("stage"), str(r.get("reason") or "")
        if stage == "execution":
            errors.setdefault("formal_solution", reason)
        elif stage == "cross_check" and reason.startswith("formal_solution ") and " on the small case " in reason:
            errors.setdefault("formal_solution", reason)
        elif stage == "cross_check" and reason.startswith("the brute-force check "):
            errors.setdefault("small_case_check", reason)
    return errors


__all__ = ["STAGES", "EternalBuilder", "stage_pipeline", "code_problems", "digest", "execution_errors"]
