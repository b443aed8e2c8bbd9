"""Anthropic Messages protocol: the JSON response body and its SSE event stream."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from theorembench.testing.fakellm.wire import sse_start, text_pieces

#: OpenAI ``finish_reason`` -> Anthropic ``stop_reason``.
STOP_REASONS = {"stop": "end_turn", "length": "max_tokens"}


def messages_body(
    rid: int, model: str, reply: str, reasoning: str | None, finish: str, pt: int, ct: int
) -> dict[str, Any]:
    """An Anthropic ``message`` object (thinking block first, when there is reasoning)."""
    content: list[dict[str, Any]] = []
    if reasoning:
        content.append({"type": "thinking", "thinking": reasoning, "signature": "sig"})
    content.append({"type": "text", "text": reply})
    return {
        "id": f"msg_fake{rid}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": STOP_REASONS.get(finish, finish),
        "stop_sequence": None,
        "usage": {"input_tokens": pt, "output_tokens": ct},
    }


async def stream_messages(
    request: web.Request,
    rid: int,
    model: str,
    reply: str,
    reasoning: str | None,
    finish: str,
    pt: int,
    ct: int,
) -> web.StreamResponse:
    """Send the reply as Anthropic SSE events (``message_start`` ... ``message_stop``)."""

    def event(name: str, data: dict[str, Any]) -> bytes:
        return f"event: {name}\ndata: ".encode("ascii") + json.dumps(data, ensure_ascii=False).encode("utf-8") + b"\n\n"

    start = messages_body(rid, model, "", None, finish, pt, 1)
    start.update(content=[], stop_reason=None)
    out = [event("message_start", {"type": "message_start", "message": start})]
    index = 0
    if reasoning:
        out.append(
            event(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                },
            )
        )
        for p in text_pieces(reasoning):
            out.append(
                event(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": p}},
                )
            )
        out.append(
            event(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "signature_delta", "signature": "sig"},
                },
            )
        )
        out.append(event("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1
    out.append(
        event(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
        )
    )
    for p in text_pieces(reply):
        out.append(
            event(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": p}},
            )
        )
    out.append(event("content_block_stop", {"type": "content_block_stop", "index": index}))
    out.append(
        event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": STOP_REASONS.get(finish, finish), "stop_sequence": None},
                "usage": {"output_tokens": ct},
            },
        )
    )
    out.append(event("message_stop", {"type": "message_stop"}))
    resp = await sse_start(request)
    await resp.write(b"".join(out))
    await resp.write_eof()
    return resp
