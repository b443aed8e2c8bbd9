"""Evaluation of m-out-of-n multiple-judge questions: generation-based and perplexity-based.

Generation-based: the model sees all n items, knows that exactly m are correct and
names them. Loose metric: the share of its m picks that are correct (1 / 0.5 / 0 for
m = 2); tight metric: 1 only when the picks are exactly the correct items. A reply
naming a different number of items scores 0 on both and is recorded as such.

Both scores are estimates in the one shape (:meth:`theorembench.common.stats.Estimate.to_dict`:
value as a fraction, ci95, n, errors, method): the Wilson interval at the mean for the loose
score (a mean of 0 / 0.5 / 1 values, ``wilson-mean``), the Wilson interval for the tight score
(a proportion). The tight score is the run's headline, ``score``. Every question counts in n: one whose call failed after its retries has no
answer and scores 0 on both, as in the released LMB protocol; it is shown under ``errors``
(``final`` when the request itself was refused, a 400) and asked again by the next run.
The scores over answered questions only are a secondary figure, ``answered_only``.
"""

from __future__ import annotations

import math
import re
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from theorembench.common.digest import json_digest
from theorembench.common.stats import bounded_mean, proportion
from theorembench.evaluate.inspect_log import write_inspect_log
from theorembench.evaluate.samples import Sample, Scored, counts, log_samples, run_samples
from theorembench.llm import LLM, GenerateSettings, ModelSpec
from theorembench.methods.hybrid import prompts
from theorembench.methods.hybrid.prompts import evaluation_messages
from theorembench.pipeline.identity import pipeline_name
from theorembench.pipeline.steps import StepRunner
from theorembench.store import Store

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
_ANSWER = re.compile(r"(?:answer|correct items?|correct ones?)\s*(?:are|is|:)?\s*(?:items?\s*)?((?:\d+\s*(?:,|and|&|\s)\s*)*\d+)",
                     re.IGNORECASE)  # fmt: skip


def parse_selection(reply: str | None, n: int) -> list[int] | None:
    """The item numbers a reply names (last \\boxed{..}, else an 'answer: ..' phrase), or None."""
    if not reply:
        return None
    text = reply.strip()
    found = _BOXED.findall(text)
    candidates = found[-1:] if found else [m.group(1) for m in _ANSWER.finditer(text)][-1:]
    if not candidates:
        return None
    numbers = [int(x) for x in re.findall(r"\d+", candidates[0])]
    picked = sorted({x for x in numbers if 1 <= x <= n})
    return picked or None


def score(selection: list[int] | None, answer: list[int]) -> tuple[float, float]:
    """(loose, tight) for one question."""
    m = len(answer)
    if not selection or len(selection) != m:
        return 0.0, 0.0
    right = len(set(selection) & set(answer))
    return right / m, float(right == m)


def random_baselines(m: int, n: int) -> dict[str, float]:
    """Expected scores of picking m of n items uniformly at random."""
    return {"loose": m / n, "tight": 1 / math.comb(n, m)}


def _scores(records: list[dict[str, Any]]) -> dict[str, Any]:
    errors = sum(r["status"] in ("error", "pending") for r in records)
    loose = bounded_mean([0.0 if r["status"] in ("error", "pending") else r["loose"] for r in records], errors=errors)
    tight = proportion(sum(r["status"] in ("ok", "unparsed") and r["tight"] == 1.0 for r in records), len(records),
                       errors=errors)  # fmt: skip
    return {"n": len(records), "loose": loose.to_dict(), "tight": tight.to_dict()}


def generation_scores(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Loose and tight scores (fractions) over every question (a failed call scores 0), with n and 95% intervals.

    ``answered_only`` holds the same over the questions that got an answer: a secondary figure.
    """
    answered = [r for r in records if r["status"] in ("ok", "unparsed")]
    secondary = {**_scores(answered), "note": "secondary: over the questions whose model call got an answer"}
    return {**_scores(records), "answered_only": secondary}


def _cost(records: list[dict[str, Any]]) -> float | None:
    """The summed cost of the answered calls; None when one of them has no price."""
    costs = [r["cost_usd"] for r in records if r["status"] in ("ok", "unparsed")]
    return None if any(c is None for c in costs) else round(sum(costs), 6)


VERSION = "1"  # bump when a stored sample's output changes shape


class _Generation:
    """Proof2Hybrid's generation-based sample for the one sample loop: the m-out-of-n question asked once, scored
    by its picks (``value`` is the tight score; the loose one is in the sample's detail)."""

    def __init__(self, llm: LLM, model: Any, questions: list[dict[str, Any]], settings: GenerateSettings):
        self.llm, self.model, self.questions, self.settings = llm, model, questions, settings

    def messages(self, sample: Sample) -> list[dict[str, str]]:
        q = self.questions[sample.index]
        return evaluation_messages([it["text"] for it in q["items"]], q["m"])

    def key(self, sample: Sample) -> str:
        q = self.questions[sample.index]
        return f"{q['id']}#{json_digest([q['items'], q['m']], 12)}#{sample.epoch}"

    def target(self, sample: Sample) -> str:
        return ",".join(map(str, self.questions[sample.index]["answer"]))

    async def ask(self, sample: Sample) -> dict[str, Any]:
        c = await self.llm.generate(self.model, self.messages(sample), self.settings, purpose="eval.hybrid",
                                    sample=sample.epoch)  # fmt: skip
        return {"text": c.text, "call_id": c.call_id, "prompt_tokens": c.prompt_tokens,
                "completion_tokens": c.completion_tokens, "reasoning_tokens": c.reasoning_tokens,
                "cost_usd": c.cost_usd}  # fmt: skip

    def score(self, sample: Sample, output: dict[str, Any]) -> Scored:
        q = self.questions[sample.index]
        selection = parse_selection(output["text"], q["n"])
        loose, tight = score(selection, q["answer"])
        status = "ok" if selection and len(selection) == q["m"] else "unparsed"
        return Scored(sample, status, tight, self.target(sample), answer=",".join(map(str, selection or [])),
                      explanation=f"loose {loose}, tight {tight}", call_ids=[output["call_id"]],
                      detail={**output, "selection": selection, "loose": loose, "tight": tight})  # fmt: skip


def _record(q: dict[str, Any], s: Scored) -> dict[str, Any]:
    d = s.detail
    return {"id": q["id"], "answer": q["answer"], "selection": d.get("selection"), "loose": d.get("loose", 0.0),
            "tight": d.get("tight", 0.0), "status": s.status, "error": s.error,
            "final": (s.status == "error") if not s.answered else None, "raw_response": d.get("text", ""),
            "prompt_tokens": d.get("prompt_tokens", 0), "completion_tokens": d.get("completion_tokens", 0),
            "reasoning_tokens": d.get("reasoning_tokens", 0), "cost_usd": d.get("cost_usd"),
            "call_id": s.call_ids[-1] if s.call_ids else None}  # fmt: skip


async def evaluate_generation(
    store: Store,
    llm: LLM,
    model: str,
    questions: list[dict[str, Any]],
    *,
    settings: GenerateSettings,
    log_dir: Path | None,
    name: str,
    on_question: Any = None,
) -> dict[str, Any]:
    """Ask every question once through the one sample loop (resumable: answered questions are stored steps)."""
    spec = model if isinstance(model, ModelSpec) else llm.resolve(model)
    run_id = store.create_run("eval.hybrid", f"{name}:{spec.name}", name=name, model=spec.name)
    llm.run_id = run_id
    started = datetime.now(UTC)
    t0 = time.perf_counter()
    task = _Generation(llm, spec, questions, settings)
    pipeline = pipeline_name("hybrid.eval", version=VERSION, prompts=[prompts],
                             settings={"model": spec.name, "endpoint": spec.endpoint,
                                       "settings": settings.cache_fields()})  # fmt: skip
    samples = [Sample(i, q["id"]) for i, q in enumerate(questions)]
    scored = await run_samples(StepRunner(store, pipeline), task, samples,
                               concurrency=settings.max_connections or 4)  # fmt: skip
    records = [_record(q, s) for q, s in zip(questions, scored, strict=True)]
    for i, (rec, s) in enumerate(zip(records, scored, strict=True)):
        store.put_result(run_id, i, 0, item_id=rec["id"], status=rec["status"], call_id=rec["call_id"],
                         answer=s.answer or "", correct_label=s.target, is_correct=s.correct, error=s.error,
                         record=rec)  # fmt: skip
        if on_question:
            on_question(rec)
    nq = len(questions) or 1
    m = questions[0]["m"] if questions else 2
    n = questions[0]["n"] if questions else 6
    scores = generation_scores(records)
    summary = {
        "questions": len(questions),
        **scores,
        "score": scores["tight"], "score_metric": "tight",
        "unparsed": sum(r["status"] == "unparsed" for r in records),
        "errors": sum(not s.answered for s in scored), "statuses": counts(scored),
        "random_baseline": {k: 100 * v for k, v in random_baselines(m, n).items()},
        "cost_usd": _cost(records),
        "mean_completion_tokens": sum(r["completion_tokens"] for r in records) / nq,
        "wall_seconds": round(time.perf_counter() - t0, 3), "pipeline": pipeline,
    }  # fmt: skip
    log_path = None
    if log_dir is not None:
        logged = log_samples(scored, messages=task.messages, completion=lambda s: s.detail.get("text", ""))
        log_path = write_inspect_log(task="theorembench/hybrid", model=spec.name, dataset_name=name, dataset_path=name,
                                     samples=logged, metrics={k: summary[k]["value"] or 0.0 for k in ("loose", "tight")},
                                     config={"run_id": run_id}, started_at=started, log_dir=log_dir, run_id=run_id)  # fmt: skip
    store.set_run_status(run_id, "finished", summary)
    return {"summary": summary, "details": records, "run_id": run_id, "log": str(log_path) if log_path else None}
