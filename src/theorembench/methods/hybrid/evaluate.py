"""Evaluation of m-out-of-n multiple-judge questions: generation-based and perplexity-based.

Generation-based: the model sees all n items, knows that exactly m are correct and
names them. Loose metric: the share of its m picks that are correct (1 / 0.5 / 0 for
m = 2); tight metric: 1 only when the picks are exactly the correct items. A reply
naming a different number of items scores 0 on both and is recorded as such.

Both scores are quoted with n and a 95% interval: a bootstrap over questions for the
loose score (a mean of 0 / 0.5 / 1 values), the Wilson interval for the tight score (a
proportion). A question whose call failed after its retries has no answer: it is counted
under ``errors``, left out of the scores and of n, and asked again by the next run.
"""

from __future__ import annotations

import asyncio
import math
import re
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from theorembench.common.stats import bootstrap_mean, proportion
from theorembench.evaluate.inspect_log import LogSample, write_inspect_log
from theorembench.llm import LLM, GenerateSettings, LLMError
from theorembench.methods.hybrid.prompts import evaluation_messages
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


def _percent(value: float | None) -> float | None:
    return None if value is None else 100 * value


def generation_scores(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Loose and tight scores in percent over the answered questions, with n, 95% intervals and their methods."""
    answered = [r for r in records if r["status"] != "error"]
    loose = bootstrap_mean([r["loose"] for r in answered])
    tight = proportion(sum(r["tight"] == 1.0 for r in answered), len(answered))
    return {"n": len(answered), "loose": _percent(loose.value), "tight": _percent(tight.value),
            "ci95": {"loose": [round(100 * x, 2) for x in (loose.low, loose.high)],
                     "tight": [round(100 * x, 2) for x in (tight.low, tight.high)]},
            "ci_method": {"loose": loose.method, "tight": tight.method}}  # fmt: skip


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
    model_name = getattr(model, "name", model)
    run_id = store.create_run("eval.hybrid", f"{name}:{model_name}", name=name, model=model_name)
    llm.run_id = run_id
    started = datetime.now(UTC)
    t0 = time.perf_counter()
    records: list[dict[str, Any]] = [{}] * len(questions)

    async def one(i: int, q: dict[str, Any]) -> None:
        msgs = evaluation_messages([it["text"] for it in q["items"]], q["m"])
        try:
            completion = await llm.generate(model, msgs, settings, purpose="eval.hybrid")
            reply, error = completion.text, None
            tokens = (completion.prompt_tokens, completion.completion_tokens, completion.reasoning_tokens)
            call_id, cost = completion.call_id, completion.cost_usd
        except LLMError as exc:
            reply, error, tokens, call_id, cost = "", f"{exc.kind}: {exc.message}", (0, 0, 0), exc.call_id, None
        selection = parse_selection(reply, q["n"])
        loose, tight = score(selection, q["answer"])
        status = "error" if error else ("ok" if selection and len(selection) == q["m"] else "unparsed")
        rec = {"id": q["id"], "answer": q["answer"], "selection": selection, "loose": loose, "tight": tight,
               "status": status, "error": error, "raw_response": reply, "prompt_tokens": tokens[0],
               "completion_tokens": tokens[1], "reasoning_tokens": tokens[2], "cost_usd": cost,
               "call_id": call_id, "_messages": msgs}  # fmt: skip
        records[i] = rec
        store.put_result(run_id, i, 0, item_id=q["id"], status=status, call_id=call_id,
                         answer=",".join(map(str, selection or [])), correct_label=",".join(map(str, q["answer"])),
                         is_correct=bool(tight), error=error, record={k: v for k, v in rec.items() if k != "_messages"})  # fmt: skip
        if on_question:
            on_question(rec)

    await asyncio.gather(*(one(i, q) for i, q in enumerate(questions)))
    nq = len(questions) or 1
    m = questions[0]["m"] if questions else 2
    n = questions[0]["n"] if questions else 6
    summary = {
        "questions": len(questions),
        **generation_scores(records),
        "unparsed": sum(r["status"] == "unparsed" for r in records),
        "errors": sum(r["status"] == "error" for r in records),
        "random_baseline": {k: 100 * v for k, v in random_baselines(m, n).items()},
        "mean_completion_tokens": sum(r["completion_tokens"] for r in records) / nq,
        "wall_seconds": round(time.perf_counter() - t0, 3),
    }
    log_path = None
    if log_dir is not None:
        samples = [LogSample(id=r["id"], epoch=1, messages=r["_messages"], target=",".join(map(str, r["answer"])),
                             completion=r["raw_response"] or f"[error] {r['error']}", reasoning=None,
                             score_value="C" if r["tight"] else "I", answer=",".join(map(str, r["selection"] or [])),
                             explanation=f"loose {r['loose']}, tight {r['tight']}", metadata={"status": r["status"]},
                             prompt_tokens=r["prompt_tokens"], completion_tokens=r["completion_tokens"],
                             reasoning_tokens=r["reasoning_tokens"], error=r["error"]) for r in records]  # fmt: skip
        log_path = write_inspect_log(task="theorembench/hybrid", model=model_name, dataset_name=name, dataset_path=name,
                                     samples=samples, metrics={k: (summary[k] or 0.0) / 100 for k in ("loose", "tight")},
                                     config={"run_id": run_id}, started_at=started, log_dir=log_dir, run_id=run_id)  # fmt: skip
    store.set_run_status(run_id, "finished", summary)
    for r in records:
        r.pop("_messages", None)
    return {"summary": summary, "details": records, "run_id": run_id, "log": str(log_path) if log_path else None}
