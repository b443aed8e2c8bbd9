"""Perplexity-based evaluation (Proof2Hybrid), for base models.

Each seed item and its own distractors form one multiple-choice question. Every
option is appended to the same question prefix; the model's answer is the option
whose tokens are least perplexing given that prefix:

    perplexity(option) = exp(-(1/n) * sum_i log p(t_i | prefix, t_<i))

over the n tokens of the option only (the prefix tokens are context, not scored).

Where the log-probabilities come from
-------------------------------------
The OpenAI-compatible legacy endpoint ``POST {base_url}/completions`` with
``echo: true``, ``logprobs: 1`` and ``max_tokens: 1`` returns, per token of the
prompt (and of the one generated token), ``tokens``, ``token_logprobs`` (the
first prompt token's is ``null``: nothing conditions it), ``text_offset`` and
``top_logprobs``. vLLM and llama-cpp-python's server both answer this.

* The option's token span is found from ``text_offset``: a token belongs to the
  option when it ends after the end of the prefix (a token straddling the
  boundary belongs to the option, so every option character is scored). The
  offsets are checked against the text (a vLLM BOS token such as
  ``<|begin_of_text|>`` is counted in vLLM's offsets but is not in the text; the
  shift is detected, not assumed). Tokens past the prompt (the generated one)
  are dropped.
* llama-cpp-python (0.3.x) needs its model loaded with ``logits_all`` for any
  logprobs; its server's default is ``--logits_all true`` (a server started with
  ``--logits_all false`` answers HTTP 500 "logprobs is not supported for models
  created with logits_all=False", reported here as :class:`PerplexityUnsupported`).
* llama-cpp-python drops a leading BOS token from the echoed tokens and lines
  each token up with the logits row *after* it. For a model whose GGUF says
  ``add_bos_token = false`` (SmolLM2: BOS ``<|im_start|>``, not added) that is
  one token off: every returned log-prob belongs to the next token. Sending the
  BOS token's text in front of the prompt (``bos_text``) puts the BOS back, the
  server drops it again and the rows line up. ``bos_text="auto"`` (default)
  finds out with a cheap probe (:func:`check_alignment`: on a counting sequence
  the top-1 prediction must be the token itself, not its successor) and, when
  the log-probs are shifted, tries the usual BOS spellings; the answer is cached
  per (base_url, model).

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
import json
import math
import os
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import aiohttp

__all__ = [
    "DEFAULT_PREFIX",
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

#: BOS spellings tried by ``bos_text="auto"`` when a server's prompt log-probs are shifted.
BOS_CANDIDATES: tuple[str, ...] = (
    "<|im_start|>", "<|endoftext|>", "<s>", "<|begin_of_text|>", "<bos>", "<|startoftext|>",
)  # fmt: skip

#: The probe of :func:`check_alignment`: every token is easy to predict from the ones before.
PROBE_TEXT = ", ".join(str(i) for i in range(1, 13))

_LOGITS_ALL_HINT = (
    "llama-cpp-python returns prompt log-probabilities only when the model is loaded with "
    "logits_all: start the server with `python -m llama_cpp.server ... --logits_all true` "
    "(that is the server's default)"
)
_NEED_SERVER = (
    "perplexity-based evaluation needs prompt log-probabilities from the legacy "
    "`/v1/completions` endpoint with `echo: true` and `logprobs` (vLLM, or llama-cpp-python's "
    "server with --logits_all true); chat-only APIs cannot give them"
)


class PerplexityError(RuntimeError):
    """One question (or option) could not be scored."""


class PerplexityUnsupported(PerplexityError):
    """The server cannot return log-probabilities of a given text."""


@dataclass
class OptionScore:
    """Perplexity of one option given the shared prefix."""

    index: int
    perplexity: float
    mean_logprob: float
    n_tokens: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class AlignmentCheck:
    """How the server's prompt log-probs line up with its tokens (see :func:`check_alignment`)."""

    aligned_hits: int
    shifted_hits: int
    n_tokens: int
    bos_text: str | None

    @property
    def aligned(self) -> bool:
        return self.aligned_hits >= self.shifted_hits


# ------------------------------------------------------------------------------------ HTTP


@dataclass
class _Client:
    base_url: str
    model: str
    api_key: str | None
    timeout: float
    retries: int = 3
    session: aiohttp.ClientSession | None = None
    semaphore: asyncio.Semaphore | None = None
    _own: bool = field(default=False, repr=False)

    async def __aenter__(self) -> _Client:
        if self.session is None:
            self.session = aiohttp.ClientSession()
            self._own = True
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._own and self.session is not None:
            await self.session.close()
            self.session = None

    async def completion(self, prompt: str) -> dict[str, Any]:
        """POST /completions with echo + logprobs; the first choice, with retries on transient errors."""
        body = {"model": self.model, "prompt": prompt, "echo": True, "logprobs": 1, "max_tokens": 1,
                "temperature": 0.0}  # fmt: skip
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        url = self.base_url.rstrip("/") + "/completions"
        payload = json.dumps(body, ensure_ascii=False).encode()
        attempt = 0
        while True:
            attempt += 1
            try:
                if self.semaphore is not None:
                    async with self.semaphore:
                        status, text = await self._post(url, payload, headers)
                else:
                    status, text = await self._post(url, payload, headers)
            except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
                if attempt > self.retries:
                    raise PerplexityError(f"{url}: {type(exc).__name__}: {exc}") from None
                await asyncio.sleep(_backoff(attempt))
                continue
            if status < 300:
                try:
                    data = json.loads(text)
                    choice = data["choices"][0]
                except (ValueError, KeyError, IndexError, TypeError):
                    if attempt > self.retries:
                        raise PerplexityError(f"{url}: unexpected response body {text[:200]!r}") from None
                    await asyncio.sleep(_backoff(attempt))
                    continue
                if not isinstance(choice, dict):
                    raise PerplexityError(f"{url}: unexpected choice {choice!r:.200}")
                return choice
            message = _error_message(text, status)
            low = message.lower()
            if "logits_all" in low:
                raise PerplexityUnsupported(f"{url}: HTTP {status}: {message}. {_LOGITS_ALL_HINT}")
            if status in (404, 405, 501):
                raise PerplexityUnsupported(f"{url}: HTTP {status}: {message}. {_NEED_SERVER}")
            if status in (400, 422) and ("echo" in low or "logprob" in low):
                raise PerplexityUnsupported(f"{url}: HTTP {status}: {message}. {_NEED_SERVER}")
            retryable = status == 429 or status in (408, 409) or status >= 500
            if not retryable or attempt > self.retries:
                raise PerplexityError(f"{url}: HTTP {status}: {message}")
            await asyncio.sleep(_backoff(attempt))

    async def _post(self, url: str, payload: bytes, headers: dict[str, str]) -> tuple[int, str]:
        assert self.session is not None
        timeout = aiohttp.ClientTimeout(total=self.timeout) if self.timeout else aiohttp.ClientTimeout(total=None)
        async with self.session.post(url, data=payload, headers=headers, timeout=timeout) as resp:
            return resp.status, await resp.text()


def _backoff(attempt: int) -> float:
    base = float(os.environ.get("THEOREMBENCH_RETRY_BACKOFF", "1.0"))
    return min(30.0, base * 2 ** (attempt - 1)) * random.uniform(0.5, 1.0)


def _error_message(text: str, status: int) -> str:
    try:
        data = json.loads(text)
    except ValueError:
        return text[:300] or f"HTTP {status}"
    err = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(err, dict):
        return str(err.get("message") or err.get("detail") or err)[:300]
    return str(err)[:300]


# ------------------------------------------------------------------ token spans and offsets


@dataclass
class _Tok:
    start: int  # character position in the scored text
    end: int
    text: str
    logprob: float | None
    top: dict[str, float] | None


def _prompt_tokens(choice: Mapping[str, Any], text: str, sent_before: str) -> list[_Tok]:
    """The returned tokens that lie in ``text``, with positions relative to ``text``.

    ``sent_before`` is what was sent in front of ``text`` (a BOS spelling); a
    server may or may not count it, or its own BOS token, in ``text_offset``: the
    shift is chosen so that the token strings match the text.
    """
    lp = choice.get("logprobs")
    if not isinstance(lp, Mapping):
        raise PerplexityUnsupported(f"the server returned no log-probabilities (logprobs: {lp!r:.60}). {_NEED_SERVER}")
    tokens, values, offsets = lp.get("tokens"), lp.get("token_logprobs"), lp.get("text_offset")
    tops = lp.get("top_logprobs")
    if not isinstance(tokens, list) or not isinstance(values, list) or not tokens:
        raise PerplexityUnsupported(f"the server's logprobs have no tokens / token_logprobs. {_NEED_SERVER}")
    if len(values) != len(tokens):
        raise PerplexityError(f"{len(tokens)} tokens but {len(values)} token_logprobs")
    if not isinstance(offsets, list) or len(offsets) != len(tokens):
        raise PerplexityUnsupported("the server's logprobs have no text_offset for every token; cannot find "
                                    "the option's tokens")  # fmt: skip
    if not isinstance(tops, list) or len(tops) != len(tokens):
        tops = [None] * len(tokens)
    tokens = [t if isinstance(t, str) else "" for t in tokens]
    offsets = [int(o) for o in offsets]

    shifts = sorted({0, len(sent_before), len(tokens[0]), len(tokens[0]) + len(sent_before)})
    best: tuple[int, int] | None = None  # (matched, -shift)
    for shift in shifts:
        inside = matched = 0
        first = None
        for tok, off in zip(tokens, offsets):
            pos = off - shift
            if not 0 <= pos < len(text):
                continue
            first = pos if first is None else min(first, pos)
            if tok and "\ufffd" not in tok:
                inside += 1
                matched += text.startswith(tok, pos)
        if first != 0 or inside == 0 or matched < 0.9 * inside:
            continue
        if best is None or matched > best[0]:
            best = (matched, -shift)
    if best is None:
        if len("".join(tokens)) < len(text) / 2:
            raise PerplexityUnsupported("the server returned log-probabilities of generated tokens only, not of "
                                        f"the prompt (echo ignored). {_NEED_SERVER}")  # fmt: skip
        raise PerplexityError("cannot line the returned tokens up with the prompt text "
                              f"(tokens {tokens[:6]!r}..., offsets {offsets[:6]!r}...)")  # fmt: skip
    shift = -best[1]
    out: list[_Tok] = []
    n = len(tokens)
    for i in range(n):
        pos = offsets[i] - shift
        if not 0 <= pos < len(text):
            continue
        end = min(offsets[i + 1] - shift, len(text)) if i + 1 < n else len(text)
        value = values[i]
        logprob = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
        top = tops[i] if isinstance(tops[i], Mapping) else None
        out.append(_Tok(pos, max(end, pos), tokens[i], logprob, top))
    return out


def _option_logprobs(toks: list[_Tok], prefix_len: int) -> list[float | None]:
    """Log-probs of the tokens that carry option characters (those ending after the prefix)."""
    return [t.logprob for t in toks if t.end > prefix_len or t.start >= prefix_len]


# ------------------------------------------------------------------------ alignment / BOS

_bos_cache: dict[tuple[str, str], str | None] = {}


async def _check(client: _Client, bos_text: str | None) -> AlignmentCheck:
    sent = (bos_text or "") + PROBE_TEXT
    choice = await client.completion(sent)
    toks = _prompt_tokens(choice, PROBE_TEXT, bos_text or "")
    if all(t.logprob is None for t in toks):
        raise PerplexityUnsupported(f"the server echoed the prompt but gave no log-probabilities. {_NEED_SERVER}")
    aligned = shifted = counted = 0
    for i, tok in enumerate(toks):
        if not tok.top:
            continue
        top1 = max(tok.top.items(), key=lambda kv: kv[1])[0]
        counted += 1
        aligned += top1 == tok.text
        shifted += i + 1 < len(toks) and top1 == toks[i + 1].text
    return AlignmentCheck(aligned, shifted, counted, bos_text)


async def check_alignment(base_url: str, model: str, *, bos_text: str | None = None, api_key: str | None = None,
                          timeout: float = 120) -> AlignmentCheck:  # fmt: skip
    """Probe whether the server's prompt log-probs belong to their own tokens.

    On :data:`PROBE_TEXT` (``1, 2, 3, ...``) the top-1 prediction of a correctly
    aligned row is the token itself; one token off (llama-cpp-python with a
    model that adds no BOS) it is the next token. Raises
    :class:`PerplexityUnsupported` when no prompt log-probs come back at all.
    """
    async with _Client(base_url, model, api_key, timeout) as client:
        return await _check(client, bos_text)


async def _resolve(client: _Client) -> str | None:
    key = (client.base_url.rstrip("/"), client.model)
    if key in _bos_cache:
        return _bos_cache[key]
    first = await _check(client, None)
    found: str | None = None
    if not first.aligned:
        for cand in BOS_CANDIDATES:
            try:
                check = await _check(client, cand)
            except PerplexityError:
                continue
            if check.aligned and check.aligned_hits > check.shifted_hits:
                found = cand
                break
        else:
            raise PerplexityUnsupported(
                f"the server's prompt log-probabilities are one token off (probe: {first.aligned_hits} aligned vs "
                f"{first.shifted_hits} shifted top-1 hits) and no BOS spelling in {list(BOS_CANDIDATES)} fixes it: "
                "this is llama-cpp-python with a model that adds no BOS token; pass bos_text=<the model's BOS text>"
            )
    _bos_cache[key] = found
    return found


async def resolve_bos_text(base_url: str, model: str, *, api_key: str | None = None, timeout: float = 120) -> str | None:
    """What ``bos_text="auto"`` sends in front of every prompt for this server and model (cached)."""
    async with _Client(base_url, model, api_key, timeout) as client:
        return await _resolve(client)


# ------------------------------------------------------------------------------- scoring


async def _score_options(client: _Client, prefix: str, options: Sequence[str], bos_text: str | None) -> list[OptionScore]:
    if bos_text == "auto":
        bos_text = await _resolve(client)
    before = bos_text or ""

    async def one(index: int, option: str) -> OptionScore:
        text = prefix + option
        choice = await client.completion(before + text)
        toks = _prompt_tokens(choice, text, before)
        if len(toks) > 1 and all(t.logprob is None for t in toks):
            raise PerplexityUnsupported(f"the server echoed the prompt but gave no log-probabilities. {_NEED_SERVER}")
        values = [v for v in _option_logprobs(toks, len(prefix)) if v is not None]
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
    prefix). ``bos_text``: ``"auto"`` (probe once per server and model, see the
    module docstring), ``None`` (send nothing in front) or a literal string.
    """
    _check_options(options)
    async with _Client(base_url, model, api_key, timeout, retries, session=session) as client:
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
    async with _Client(base_url, model, api_key, timeout, retries,
                       semaphore=asyncio.Semaphore(max(1, concurrency))) as client:  # fmt: skip
        if bos_text == "auto" and items:
            bos_text = await _resolve(client)

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
