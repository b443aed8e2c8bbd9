"""Lining a server's echoed prompt tokens up with the text, and the BOS probe.

* :func:`prompt_tokens` finds each returned token's span from ``text_offset``.
  The offsets are checked against the text (a vLLM BOS token such as
  ``<|begin_of_text|>`` is counted in vLLM's offsets but is not in the text; the
  shift is detected, not assumed). Tokens past the prompt (the generated one)
  are dropped. :func:`option_logprobs` keeps the tokens of an option: a token
  belongs to the option when it ends after the end of the prefix (a token
  straddling the boundary belongs to the option, so every option character is
  scored).
* llama-cpp-python drops a leading BOS token from the echoed tokens and lines
  each token up with the logits row *after* it. For a model whose GGUF says
  ``add_bos_token = false`` (SmolLM2: BOS ``<|im_start|>``, not added) that is
  one token off: every returned log-prob belongs to the next token. Sending the
  BOS token's text in front of the prompt (``bos_text``) puts the BOS back, the
  server drops it again and the rows line up. ``bos_text="auto"`` finds out with
  a cheap probe (:func:`check_alignment`: on a counting sequence the top-1
  prediction must be the token itself, not its successor) and, when the
  log-probs are shifted, tries the usual BOS spellings (:data:`BOS_CANDIDATES`);
  :func:`resolve_bos` caches the answer per model and endpoint (its probe requests
  are also answered from the LLM layer's response cache on a rerun).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from theorembench.llm import LLM, ModelSpec
from theorembench.methods.hybrid.perplexity_client import (
    NEED_SERVER,
    CompletionsClient,
    PerplexityError,
    PerplexityUnsupported,
)

#: BOS spellings tried by ``bos_text="auto"`` when a server's prompt log-probs are shifted.
BOS_CANDIDATES: tuple[str, ...] = (
    "<|im_start|>", "<|endoftext|>", "<s>", "<|begin_of_text|>", "<bos>", "<|startoftext|>",
)  # fmt: skip

#: The probe of :func:`check_alignment`: every token is easy to predict from the ones before.
PROBE_TEXT = ", ".join(str(i) for i in range(1, 13))


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


# ------------------------------------------------------------------ token spans and offsets


@dataclass
class PromptToken:
    """One returned token that lies in the scored text."""

    start: int  # character position in the scored text
    end: int
    text: str
    logprob: float | None
    top: dict[str, float] | None


def prompt_tokens(choice: Mapping[str, Any], text: str, sent_before: str) -> list[PromptToken]:
    """The returned tokens that lie in ``text``, with positions relative to ``text``.

    ``sent_before`` is what was sent in front of ``text`` (a BOS spelling); a
    server may or may not count it, or its own BOS token, in ``text_offset``: the
    shift is chosen so that the token strings match the text.
    """
    lp = choice.get("logprobs")
    if not isinstance(lp, Mapping):
        raise PerplexityUnsupported(f"the server returned no log-probabilities (logprobs: {lp!r:.60}). {NEED_SERVER}")
    tokens, values, offsets = lp.get("tokens"), lp.get("token_logprobs"), lp.get("text_offset")
    tops = lp.get("top_logprobs")
    if not isinstance(tokens, list) or not isinstance(values, list) or not tokens:
        raise PerplexityUnsupported(f"the server's logprobs have no tokens / token_logprobs. {NEED_SERVER}")
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
                                        f"the prompt (echo ignored). {NEED_SERVER}")  # fmt: skip
        raise PerplexityError("cannot line the returned tokens up with the prompt text "
                              f"(tokens {tokens[:6]!r}..., offsets {offsets[:6]!r}...)")  # fmt: skip
    shift = -best[1]
    out: list[PromptToken] = []
    n = len(tokens)
    for i in range(n):
        pos = offsets[i] - shift
        if not 0 <= pos < len(text):
            continue
        end = min(offsets[i + 1] - shift, len(text)) if i + 1 < n else len(text)
        value = values[i]
        logprob = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
        top = tops[i] if isinstance(tops[i], Mapping) else None
        out.append(PromptToken(pos, max(end, pos), tokens[i], logprob, top))
    return out


def option_logprobs(toks: list[PromptToken], prefix_len: int) -> list[float | None]:
    """Log-probs of the tokens that carry option characters (those ending after the prefix)."""
    return [t.logprob for t in toks if t.end > prefix_len or t.start >= prefix_len]


# ------------------------------------------------------------------------ alignment / BOS

_bos_cache: dict[tuple[str, str], str | None] = {}  # (model name, endpoint) -> BOS text


async def probe_alignment(client: CompletionsClient, bos_text: str | None) -> AlignmentCheck:
    """Send :data:`PROBE_TEXT` (after ``bos_text``) and count aligned vs one-off top-1 hits."""
    sent = (bos_text or "") + PROBE_TEXT
    choice = await client.completion(sent)
    toks = prompt_tokens(choice, PROBE_TEXT, bos_text or "")
    if all(t.logprob is None for t in toks):
        raise PerplexityUnsupported(f"the server echoed the prompt but gave no log-probabilities. {NEED_SERVER}")
    aligned = shifted = counted = 0
    for i, tok in enumerate(toks):
        if not tok.top:
            continue
        top1 = max(tok.top.items(), key=lambda kv: kv[1])[0]
        counted += 1
        aligned += top1 == tok.text
        shifted += i + 1 < len(toks) and top1 == toks[i + 1].text
    return AlignmentCheck(aligned, shifted, counted, bos_text)


async def check_alignment(llm: LLM, model: ModelSpec | str, *, bos_text: str | None = None,
                          timeout: float = 120) -> AlignmentCheck:  # fmt: skip
    """Probe whether the server's prompt log-probs belong to their own tokens.

    On :data:`PROBE_TEXT` (``1, 2, 3, ...``) the top-1 prediction of a correctly
    aligned row is the token itself; one token off (llama-cpp-python with a
    model that adds no BOS) it is the next token. Raises
    :class:`PerplexityUnsupported` when no prompt log-probs come back at all.
    """
    async with CompletionsClient(llm, model, timeout=timeout) as client:
        return await probe_alignment(client, bos_text)


async def resolve_bos(client: CompletionsClient) -> str | None:
    """What ``bos_text="auto"`` means for the client's server and model (probed once, then cached)."""
    key = client.key
    if key in _bos_cache:
        return _bos_cache[key]
    first = await probe_alignment(client, None)
    found: str | None = None
    if not first.aligned:
        for cand in BOS_CANDIDATES:
            try:
                check = await probe_alignment(client, cand)
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


async def resolve_bos_text(llm: LLM, model: ModelSpec | str, *, timeout: float = 120) -> str | None:
    """What ``bos_text="auto"`` sends in front of every prompt for this model and endpoint (cached).

    It is also the check that the model's server gives prompt log-probabilities at all: it
    raises :class:`PerplexityUnsupported` (at once, for a model with no server address) when not.
    """
    async with CompletionsClient(llm, model, timeout=timeout) as client:
        return await resolve_bos(client)


__all__ = [
    "BOS_CANDIDATES",
    "PROBE_TEXT",
    "AlignmentCheck",
    "PromptToken",
    "check_alignment",
    "option_logprobs",
    "probe_alignment",
    "prompt_tokens",
    "resolve_bos",
    "resolve_bos_text",
]
