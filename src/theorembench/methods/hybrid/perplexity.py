"""Perplexity-based evaluation (Proof2Hybrid), for base models.

Each seed item and its own distractors form one multiple-choice question. Every
option is appended to the same question prefix; the model's answer is the option
whose tokens are least perplexing given that prefix:

    perplexity(option) = exp(-(1/n) * sum_i log p(t_i | prefix, t_<i))

over the n tokens of the option only (the prefix tokens are context, not scored).

This module scores options and questions and weighs the result; the parts it is
built from live beside it and are re-exported here:

* :mod:`.perplexity_client`: where the log-probabilities come from (the
  OpenAI-compatible legacy ``POST {base_url}/completions`` with ``echo: true``
  and ``logprobs``, as vLLM and llama-cpp-python's server answer it) and the
  errors :class:`PerplexityError` / :class:`PerplexityUnsupported`.
* :mod:`.perplexity_alignment`: finding the option's tokens from
  ``text_offset``, and ``bos_text="auto"``: the probe (:func:`check_alignment`)
  that detects llama-cpp-python's one-token shift for models that add no BOS,
  and the BOS spelling that fixes it (:func:`resolve_bos_text`).

Scoring
-------
Questions have different numbers of options k_q. The paper keeps the maximum
total at 100 while random guessing earns the same expected points on every
question. A guess is right with probability 1/k_q, so its expected points are
w_q / k_q; equal across questions means w_q = c * k_q, and sum_q w_q = 100
gives c = 100 / sum_q k_q:

    w_q = 100 * k_q / sum_j k_j,    random baseline = sum_q w_q / k_q = 100 * Q / sum_j k_j.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import aiohttp

from theorembench.methods.hybrid.perplexity_alignment import (
    BOS_CANDIDATES,
    PROBE_TEXT,
    AlignmentCheck,
    _bos_cache,  # noqa: F401  (the probe cache; tests clear it as ``perplexity._bos_cache``)
    check_alignment,
    option_logprobs,
    prompt_tokens,
    resolve_bos,
    resolve_bos_text,
)
from theorembench.methods.hybrid.perplexity_client import (
    NEED_SERVER,
    CompletionsClient,
    PerplexityError,
    PerplexityUnsupported,
)

__all__ = [
    "BOS_CANDIDATES",
    "DEFAULT_PREFIX",
    "PROBE_TEXT",
    "AlignmentCheck",
    "OptionScore",
    "PerplexityError",
    "PerplexityUnsupported",
    "check_alignment",
    "choose",
    "option_perplexities",
    "perplexity_score",
    "question_weights",
    "resolve_bos_text",
    "score_questions",
]

#: Question prefix used by :func:`score_questions` unless told otherwise.
DEFAULT_PREFIX = "The following is a correct piece of mathematics, taken from a reference text.\n\n"


@dataclass
class OptionScore:
    """Perplexity of one option given the shared prefix."""

    index: int
    perplexity: float
    mean_logprob: float
    n_tokens: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# ------------------------------------------------------------------------------- scoring


async def _score_options(client: CompletionsClient, prefix: str, options: Sequence[str],
                         bos_text: str | None) -> list[OptionScore]:  # fmt: skip
    if bos_text == "auto":
        bos_text = await resolve_bos(client)
    before = bos_text or ""

    async def one(index: int, option: str) -> OptionScore:
        text = prefix + option
        choice = await client.completion(before + text)
        toks = prompt_tokens(choice, text, before)
        if len(toks) > 1 and all(t.logprob is None for t in toks):
            raise PerplexityUnsupported(f"the server echoed the prompt but gave no log-probabilities. {NEED_SERVER}")
        values = [v for v in option_logprobs(toks, len(prefix)) if v is not None]
        if not values:
            raise PerplexityError(f"option {index}: no scored tokens (an option needs a non-empty prefix before it)")
        mean = math.fsum(values) / len(values)
        ppl = math.exp(-mean) if -mean < 709 else math.inf
        return OptionScore(index=index, perplexity=ppl, mean_logprob=mean, n_tokens=len(values))

    return list(await asyncio.gather(*(one(i, o) for i, o in enumerate(options))))


def _check_options(options: Sequence[str]) -> None:
    if not options:
        raise ValueError("a question needs at least one option")
    for i, o in enumerate(options):
        if not isinstance(o, str) or not o.strip():
            raise ValueError(f"option {i} is empty")


async def option_perplexities(
    base_url: str,
    model: str,
    prefix: str,
    options: list[str],
    *,
    api_key: str | None = None,
    timeout: float = 120,
    bos_text: str | None = "auto",
    retries: int = 3,
    session: aiohttp.ClientSession | None = None,
) -> list[OptionScore]:
    """Perplexity of each option given ``prefix`` (one request per option; answers in option order).

    ``prefix + option`` is scored exactly as given (put any separator in the
    prefix). ``bos_text``: ``"auto"`` (probe once per server and model, see
    :mod:`.perplexity_alignment`), ``None`` (send nothing in front) or a literal string.
    """
    _check_options(options)
    async with CompletionsClient(base_url, model, api_key, timeout, retries, session=session) as client:
        return await _score_options(client, prefix, options, bos_text)


def choose(scores: Sequence[OptionScore]) -> int:
    """The answer: the index of the lowest perplexity (first one on a tie)."""
    if not scores:
        raise ValueError("no option scores")
    return min(scores, key=lambda s: (s.perplexity if not math.isnan(s.perplexity) else math.inf, s.index)).index


def question_weights(option_counts: list[int], total: float = 100.0) -> list[float]:
    """w_q = total * k_q / sum_j k_j: random guessing earns total / sum_j k_j on every question.

    With k_q options a random guess is right with probability 1/k_q, so it earns
    w_q / k_q in expectation; equal for every q means w_q proportional to k_q,
    and the weights add up to ``total`` (the maximum score).
    """
    counts = [int(k) for k in option_counts]
    if any(k < 1 for k in counts):
        raise ValueError(f"every question needs at least one option, got {option_counts!r}")
    s = sum(counts)
    return [total * k / s for k in counts]


def perplexity_score(results: list[tuple[int, int, int]], total: float = 100.0) -> dict[str, Any]:
    """Weighted score of (chosen index, correct index, number of options) triples.

    A chosen index of ``None`` or below 0 (a question that could not be scored)
    counts as wrong. ``random_baseline`` is the expected score of guessing
    uniformly: sum_q w_q / k_q = total * Q / sum_q k_q.
    """
    weights = question_weights([k for _, _, k in results], total) if results else []
    right = [chosen is not None and chosen >= 0 and chosen == correct for chosen, correct, _ in results]
    n = len(results)
    k_sum = sum(k for _, _, k in results)
    return {
        "score": math.fsum(w for w, ok in zip(weights, right) if ok),
        "max_score": total if n else 0.0,
        "accuracy": sum(right) / n if n else 0.0,
        "random_baseline": total * n / k_sum if n else 0.0,
        "n_questions": n,
        "n_correct": sum(right),
        "weights": weights,
    }


async def score_questions(
    base_url: str,
    model: str,
    questions: Sequence[Mapping[str, Any]],
    *,
    prefix: str = DEFAULT_PREFIX,
    concurrency: int = 4,
    api_key: str | None = None,
    timeout: float = 120,
    bos_text: str | None = "auto",
    retries: int = 3,
    on_result: Callable[[dict[str, Any]], Awaitable[None] | None] | None = None,
) -> dict[str, Any]:
    """Score many questions (``{"id", "options", "correct"}``, optional ``"prefix"``).

    At most ``concurrency`` completion requests are in flight. Returns
    ``{"summary": perplexity_score(...) + n_errors, "details": [...]}`` where each
    detail records the per-option perplexities, mean log-probs and token counts,
    the chosen and correct index, the question's weight, and an ``error`` (a
    question that fails scores 0). :class:`PerplexityUnsupported` aborts the run.
    ``on_result`` is called with each detail as it completes.
    """
    items = list(questions)
    for q in items:
        _check_options(q["options"])
        if not 0 <= int(q["correct"]) < len(q["options"]):
            raise ValueError(f"question {q.get('id')!r}: correct index {q['correct']!r} out of range")
    weights = question_weights([len(q["options"]) for q in items]) if items else []
    async with CompletionsClient(base_url, model, api_key, timeout, retries,
                                 semaphore=asyncio.Semaphore(max(1, concurrency))) as client:  # fmt: skip
        if bos_text == "auto" and items:
            bos_text = await resolve_bos(client)

        async def one(i: int, q: Mapping[str, Any]) -> dict[str, Any]:
            detail: dict[str, Any] = {"id": q.get("id", i), "correct": int(q["correct"]),
                                      "n_options": len(q["options"]), "weight": weights[i]}  # fmt: skip
            try:
                scores = await _score_options(client, q.get("prefix", prefix), q["options"], bos_text)
            except PerplexityUnsupported:
                raise
            except PerplexityError as exc:
                detail.update(chosen=None, is_correct=False, error=str(exc), perplexities=None,
                              mean_logprobs=None, n_tokens=None)  # fmt: skip
            else:
                chosen = choose(scores)
                detail.update(chosen=chosen, is_correct=chosen == detail["correct"], error=None,
                              perplexities=[s.perplexity for s in scores],
                              mean_logprobs=[s.mean_logprob for s in scores],
                              n_tokens=[s.n_tokens for s in scores])  # fmt: skip
            if on_result is not None:
                res = on_result(detail)
                if asyncio.iscoroutine(res):
                    await res
            return detail

        tasks = [asyncio.ensure_future(one(i, q)) for i, q in enumerate(items)]
        try:
            details = list(await asyncio.gather(*tasks))
        except BaseException:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
    summary = perplexity_score([(d["chosen"], d["correct"], d["n_options"]) for d in details])
    summary["n_errors"] = sum(d["error"] is not None for d in details)
    return {"summary": summary, "details": details}
