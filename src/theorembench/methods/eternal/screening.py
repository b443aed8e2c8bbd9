"""Optional screening of low-confidence generations by their average token log-probability (stage f).

The paper drops template and code generations with a low average log-probability.
``LLM.generate`` returns no log-probabilities of the tokens it generated (``Completion``
has no such field, and neither backend asks the provider for them). What the LLM layer
does offer is the log-probability of a given text (:class:`theorembench.llm.LogprobsClient`,
the legacy ``/v1/completions`` endpoint with ``echo``), from servers that give it (vLLM,
llama.cpp, the embedded model). So a generation is screened by scoring the text
"request, then reply" with the generating model and averaging over the reply's tokens.
The request is written as plain text (``role: content`` paragraphs), not in the model's
chat template, so the figure approximates the one the provider would have reported.

Where the model's server gives no log-probabilities (a hosted chat API), screening is
skipped with a note, never counted as a rejection. A hosted generator can still be screened by
naming a scoring endpoint (``review.scoring_model``): a model served where the legacy endpoint
answers (vLLM, llama.cpp), which scores the generator's requests and replies; the figure is then
that model's confidence in the text, the closer to the paper's the closer its weights are to the
generator's. True per-token log-probabilities of
the generated reply would need the LLM layer to ask for them (``logprobs: true`` in the
chat request) and keep them in :class:`~theorembench.llm.Completion` and the call ledger.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from theorembench.llm import LLM, LogprobsClient, LogprobsUnsupported


@dataclass
class Screen:
    status: str  # "passed" | "rejected" | "skipped"
    avg_logprob: float | None
    note: str

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "avg_logprob": self.avg_logprob, "note": self.note}


def as_text(messages: list[dict[str, str]]) -> str:
    """A chat request as plain text, ending where the assistant's reply begins."""
    return "".join(f"{m.get('role', 'user')}: {m.get('content', '')}\n\n" for m in messages) + "assistant: "


def reply_average(choice: dict[str, Any], start: int, end: int) -> float | None:
    """The mean log-probability of the tokens that start in ``[start, end)`` of the scored text."""
    lp = choice.get("logprobs") or {}
    values = [v for v, off in zip(lp.get("token_logprobs") or [], lp.get("text_offset") or [])
              if v is not None and start <= off < end]  # fmt: skip
    return sum(values) / len(values) if values else None


async def screen_calls(llm: LLM, model: str, call_ids: list[int], threshold: float) -> Screen:
    """Score the answered calls among ``call_ids`` (their request and reply, from the ledger) with ``model``.

    Rejected when one reply's average log-probability is below ``threshold``; skipped (with a
    note) when the model's server gives no log-probabilities. A request that failed for good
    raises :class:`~theorembench.llm.LogprobsError` (the caller's step fails and runs again).
    """
    pairs = []
    for call_id in call_ids:
        row = llm.store.get_call(call_id)
        if row is None or row["status"] != "ok" or not row["response_text"]:
            continue
        request = json.loads(row["request"]) if row["request"] else {}
        messages = request.get("messages")
        if isinstance(messages, list):
            pairs.append((call_id, as_text(messages), row["response_text"]))
    if not pairs:
        return Screen("skipped", None, "no answered generation to screen")
    worst: tuple[float, int] | None = None
    try:
        async with LogprobsClient(llm, model, purpose="eternal.screening") as client:
            for call_id, prefix, reply in pairs:
                scored = await client.prompt(prefix + reply)
                avg = reply_average(scored.choice, len(prefix), len(prefix) + len(reply))
                if avg is not None and (worst is None or avg < worst[0]):
                    worst = (avg, call_id)
    except LogprobsUnsupported as exc:
        return Screen("skipped", None, f"screening skipped: provider returns no log-probabilities ({exc})")
    if worst is None:
        return Screen("skipped", None, "screening skipped: no log-probabilities for the reply tokens")
    avg, call_id = worst
    if avg < threshold:
        return Screen("rejected", avg, f"average token log-probability {avg:.3f} of call {call_id} is below "
                                       f"{threshold}")  # fmt: skip
    return Screen("passed", avg, f"lowest average token log-probability {avg:.3f}")


__all__ = ["Screen", "as_text", "reply_average", "screen_calls"]
