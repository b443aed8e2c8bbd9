"""OpenAI legacy completions protocol: the JSON response body with ``echo`` and scripted per-token log-probabilities."""

from __future__ import annotations

import time
from typing import Any, Mapping

from theorembench.testing.fakellm.prompts import completion_prompts, pseudo_tokens
from theorembench.testing.fakellm.script import Script


def completions_body(
    script: Script,
    rid: int,
    model: str,
    reply: str,
    finish: str,
    limit: int | None,
    body: Mapping[str, Any],
) -> dict[str, Any]:
    """A ``text_completion`` object: one choice per prompt, with ``echo`` and scripted ``logprobs``."""
    if limit is not None and limit <= 0:
        reply, finish = "", "length"
    echo = bool(body.get("echo"))
    want = body.get("logprobs")
    want_logprobs = want is not None and want is not False and script.logprobs_mode != "none"
    prompts = completion_prompts(body) or [""]
    reply_tokens = pseudo_tokens(reply)
    choices, pt_total = [], 0
    for index, prompt in enumerate(prompts):
        prompt_tokens = pseudo_tokens(prompt)
        bos = [script.bos_token] if script.bos_token else []
        pt_total += len(bos) + len(prompt_tokens)
        logprobs: dict[str, Any] | None = None
        if want_logprobs:
            if echo and script.logprobs_mode == "echo":
                tokens = bos + prompt_tokens + reply_tokens
                values: list[float | None] = [script.token_logprob(t) for t in tokens]
                # bos pseudo-token: not scored; first prompt token: null, as vLLM does
                for j in range(len(bos) + (1 if prompt_tokens else 0)):
                    values[j] = None
                offset = 0
            else:
                tokens = list(reply_tokens)
                values = [script.token_logprob(t) for t in tokens]
                offset = len(prompt) if echo else 0
            offsets = []
            for tok in tokens:
                offsets.append(offset)
                offset += len(tok)
            logprobs = {
                "tokens": tokens,
                "token_logprobs": values,
                "text_offset": offsets,
                "top_logprobs": [None if v is None else {t: v} for t, v in zip(tokens, values)],
            }
        choices.append(
            {
                "index": index,
                "text": (prompt if echo else "") + reply,
                "finish_reason": finish,
                "logprobs": logprobs,
            }
        )
    ct = len(reply_tokens) * len(prompts)
    return {
        "id": f"cmpl-fake{rid}",
        "object": "text_completion",
        "created": int(time.time()),
        "model": model,
        "choices": choices,
        "usage": {"prompt_tokens": pt_total, "completion_tokens": ct, "total_tokens": pt_total + ct},
    }
