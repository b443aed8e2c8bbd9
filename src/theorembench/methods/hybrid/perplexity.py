"""Perplexity-based evaluation (Proof2Hybrid), for base models.

Each seed item and its own distractors form one multiple-choice question; the model's
answer is the option whose tokens are least perplexing:

    perplexity(option) = exp(-(1/n) * sum_i log p(t_i | prefix, t_<i))

over the n tokens of the option only. The prefix is empty by default, as in the paper, which
scores each option on its own; a prefix given (the same for every option) is context, never
scored. With an empty prefix the option's first token is scored when the server gives it a
log-probability (after the model's BOS token: vLLM, llama.cpp), and left out when it gives
none (a server that adds no BOS returns null for the first prompt token).

This module scores options and questions and weighs the result; the parts it is
built from live beside it and are re-exported here:

* :mod:`.perplexity_client`: where the log-probabilities come from: the LLM layer
  (:mod:`theorembench.llm.logprobs`: the OpenAI-compatible legacy
  ``POST {base_url}/completions`` with ``echo: true`` and ``logprobs``, as vLLM and
  llama-cpp-python's server answer it, with the response cache, usage ledger, cost and
  retries of every model call) and the errors :class:`PerplexityError` /
  :class:`PerplexityUnsupported`.
* :mod:`.perplexity_alignment`: finding the option's tokens from
  ``text_offset``, and ``bos_text="auto"``: the probe (:func:`check_alignment`)
  that detects llama-cpp-python's one-token shift for models that add no BOS,
  and the BOS spelling that fixes it (:func:`resolve_bos_text`).

Ties
----
The answer is the option with the lowest perplexity. When several options share it
(equal mean log-probabilities, to a relative 1e-12), no option is favoured, the correct
one (often listed first) included: the question earns 1/t of its points when the correct
option is among the t tied ones, and 0 otherwise. That is the expected score of breaking
the tie uniformly at random, without the randomness. Tied questions are counted in the
summary (``n_ties``) and each one lists its ``tied`` options.

Failures
--------
A question whose requests failed (after their retries) has no answer: it keeps its weight
and earns 0 points, so it counts in ``n`` as not correct (as in the released LMB protocol: a
model that errors never scores higher), and is counted under ``n_errors``. The score over the
answered questions only is a secondary figure, ``answered_only``. Failed requests are never
served from the cache, so the next run asks again.

Scoring
-------
Questions have different numbers of options k_q. The paper keeps the maximum
total at 100 while random guessing earns the same expected points on every
question. A guess is right with probability 1/k_q, so its expected points are
w_q / k_q; equal across questions means w_q = c * k_q, and sum_q w_q = 100
gives c = 100 / sum_q k_q:

    w_q = 100 * k_q / sum_j k_j,    random baseline = sum_q w_q / k_q = 100 * Q / sum_j k_j.

The score also comes as an estimate in the one shape, ``estimate`` (a fraction of the
maximum, with n, errors and a 95% interval: the Wilson interval at the weighted mean
credit with Kish's effective n, :func:`theorembench.common.stats.bounded_mean`).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from theorembench.common.stats import bounded_mean
from theorembench.llm import LLM, ModelSpec
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
    "credit",
    "option_perplexities",
    "perplexity_score",
    "question_weights",
    "resolve_bos_text",
    "score_questions",
]

#: Question prefix used by :func:`score_questions` unless told otherwise: none, as in the paper.
DEFAULT_PREFIX = ""


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
            raise PerplexityError(f"option {index}: no scored tokens (the server gives no log-probability for the "
                                  "first token of a prompt; a one-token option needs a prefix before it)")  # fmt: skip
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
    llm: LLM,
    model: ModelSpec | str,
    prefix: str,
    options: list[str],
    *,
    timeout: float = 120,
    bos_text: str | None = "auto",
    retries: int = 3,
) -> list[OptionScore]:
    """Perplexity of each option given ``prefix`` (one request per option; answers in option order).

    ``prefix + option`` is scored exactly as given (put any separator in the
    prefix). ``bos_text``: ``"auto"`` (probe once per model and endpoint, see
    :mod:`.perplexity_alignment`), ``None`` (send nothing in front) or a literal string.
    """
    _check_options(options)
    async with CompletionsClient(llm, model, timeout=timeout, retries=retries) as client:
        return await _score_options(client, prefix, options, bos_text)


def _least_perplexing(score: OptionScore) -> float:
    return -math.inf if math.isnan(score.mean_logprob) else score.mean_logprob


def choose(scores: Sequence[OptionScore]) -> list[int]:
    """The answer: the indices of the lowest perplexity, in order (more than one on a tie; see the module notes)."""
    if not scores:
        raise ValueError("no option scores")
    best = max(_least_perplexing(s) for s in scores)
    return sorted(s.index for s in scores if math.isclose(_least_perplexing(s), best, rel_tol=1e-12))


def credit(chosen: int | Sequence[int] | None, correct: int) -> float:
    """A question's share of its points: 1 for the correct answer alone, 1/t when it is among t tied ones, else 0."""
    if chosen is None:
        return 0.0
    tied = [chosen] if isinstance(chosen, int) else list(chosen)
    if not tied or correct not in tied or any(i < 0 for i in tied):
        return 0.0
    return 1.0 / len(tied)


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


def perplexity_score(results: Sequence[tuple[int | Sequence[int] | None, int, int]],
                     total: float = 100.0) -> dict[str, Any]:  # fmt: skip
    """Weighted score of (chosen, correct index, number of options) triples, with its 95% interval.

    ``chosen`` is an index, the list of tied indices (see :func:`credit`), or ``None`` / a
    negative index (counts as wrong). ``random_baseline`` is the expected score of guessing
    uniformly: sum_q w_q / k_q = total * Q / sum_q k_q. ``estimate`` is the score as a
    fraction of ``total`` with its 95% interval (Wilson at the weighted mean, effective n).
    """
    weights = question_weights([k for _, _, k in results], total) if results else []
    credits = [credit(chosen, correct) for chosen, correct, _ in results]
    n = len(results)
    k_sum = sum(k for _, _, k in results)
    estimate = bounded_mean(credits, weights)
    return {
        "score": math.fsum(w * c for w, c in zip(weights, credits)),
        "max_score": total if n else 0.0,
        "n": n,
        "estimate": estimate.to_dict(),
        "accuracy": math.fsum(credits) / n if n else 0.0,
        "random_baseline": total * n / k_sum if n else 0.0,
        "n_questions": n,
        "n_correct": sum(c == 1.0 for c in credits),
        "n_ties": sum(not isinstance(ch, int) and ch is not None and len(ch) > 1 for ch, _, _ in results),
        "weights": weights,
    }


async def score_questions(
    llm: LLM,
    model: ModelSpec | str,
    questions: Sequence[Mapping[str, Any]],
    *,
    prefix: str = DEFAULT_PREFIX,
    concurrency: int = 4,
    timeout: float = 120,
    bos_text: str | None = "auto",
    retries: int = 3,
    on_result: Callable[[dict[str, Any]], Awaitable[None] | None] | None = None,
) -> dict[str, Any]:
    """Score many questions (``{"id", "options", "correct"}``, optional ``"prefix"``).

    At most ``concurrency`` requests are in flight (answers from the cache do not wait).
    Returns ``{"summary": perplexity_score(...) + n_errors, "details": [...]}`` where each
    detail records the per-option perplexities, mean log-probs and token counts, the
    chosen (None on a tie), ``tied`` and correct index, its ``credit``, the question's
    weight, and an ``error``: a question that fails earns 0 of its points (see the
    module notes). :class:`PerplexityUnsupported` aborts the run. ``on_result`` is called
    with each detail as it completes.
    """
    items = list(questions)
    for q in items:
        _check_options(q["options"])
        if not 0 <= int(q["correct"]) < len(q["options"]):
            raise ValueError(f"question {q.get('id')!r}: correct index {q['correct']!r} out of range")
    async with CompletionsClient(llm, model, concurrency=max(1, concurrency), timeout=timeout,
                                 retries=retries) as client:  # fmt: skip
        if bos_text == "auto" and items:
            bos_text = await resolve_bos(client)

        async def one(i: int, q: Mapping[str, Any]) -> dict[str, Any]:
            detail: dict[str, Any] = {"id": q.get("id", i), "correct": int(q["correct"]),
                                      "n_options": len(q["options"])}  # fmt: skip
            try:
                scores = await _score_options(client, q.get("prefix", prefix), q["options"], bos_text)
            except PerplexityUnsupported:
                raise
            except PerplexityError as exc:
                detail.update(chosen=None, tied=None, credit=None, is_correct=None, error=str(exc),
                              perplexities=None, mean_logprobs=None, n_tokens=None)  # fmt: skip
            else:
                tied = choose(scores)
                share = credit(tied, detail["correct"])
                detail.update(chosen=tied[0] if len(tied) == 1 else None, tied=tied if len(tied) > 1 else None,
                              credit=share, is_correct=share == 1.0, error=None,
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
    def triples(ds: list[dict[str, Any]]) -> list[tuple[Any, int, int]]:
        return [(d["tied"] or d["chosen"], d["correct"], d["n_options"]) for d in ds]

    summary = perplexity_score(triples(details))  # a failed question: chosen None, 0 of its points
    for d, w in zip(details, summary["weights"]):
        d["weight"] = w
    answered = [d for d in details if d["error"] is None]
    secondary = perplexity_score(triples(answered))
    summary["n_errors"] = len(details) - len(answered)
    summary["estimate"]["errors"] = summary["n_errors"]
    summary["answered_only"] = {k: secondary[k] for k in ("score", "n", "estimate", "accuracy")} | {
        "note": "secondary: over the questions whose requests got an answer, weights renormalised"}
    return {"summary": summary, "details": details}
