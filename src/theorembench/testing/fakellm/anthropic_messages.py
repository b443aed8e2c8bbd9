"""Anthropic Messages protocol: the JSON response body and its SSE event stream."""

from __future__ import annotations

import json
from typing import Any, Sequence

from aiohttp import web

from theorembench.testing.fakellm.tool_calls import ToolCall
from theorembench.testing.fakellm.wire import sse_start, text_pieces

#: OpenAI ``finish_reason`` -> Anthropic ``stop_reason``.
STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}


def messages_body(
    rid: int,
    model: str,
    reply: str,
    reasoning: str | None,
    finish: str,
    pt: int,
    ct: int,
    calls: Sequence[ToolCall] = (),
    rt: int = 0,
) -> dict[str, Any]:
    """An Anthropic ``message``: thinking block (when there is reasoning), text block, then ``tool_use`` blocks.

    The text block is left out when the reply is only tool calls. ``usage.output_tokens`` includes the
    reasoning tokens, which ``usage.output_tokens_details.thinking_tokens`` gives apart.
    """
    content: list[dict[str, Any]] = []
    if reasoning:
        content.append({"type": "thinking", "thinking": reasoning, "signature": "sig"})
    if reply or not calls:
        content.append({"type": "text", "text": reply})
    content.extend({"type": "tool_use", "id": c.id, "name": c.name, "input": c.anthropic_input()} for c in calls)
    return {
        "id": f"msg_fake{rid}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": STOP_REASONS.get(finish, finish),
        "stop_sequence": None,
        "usage": {"input_tokens": pt, "output_tokens": ct, "output_tokens_details": {"thinking_tokens": rt}},
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
    calls: Sequence[ToolCall] = (),
    rt: int = 0,
) -> web.StreamResponse:
    """Send the reply as Anthropic SSE events (``message_start`` ... ``message_stop``), tool calls last."""

    def event(name: str, data: dict[str, Any]) -> bytes:
        return f"event: {name}\ndata: ".encode("ascii") + json.dumps(data, ensure_ascii=False).encode("utf-8") + b"\n\n"

    def block_start(index: int, block: dict[str, Any]) -> bytes:
        return event("content_block_start", {"type": "content_block_start", "index": index, "content_block": block})

    def block_delta(index: int, delta: dict[str, Any]) -> bytes:
        return event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})

    start = messages_body(rid, model, "", None, finish, pt, 1)
    start.update(content=[], stop_reason=None)
    out = [event("message_start", {"type": "message_start", "message": start})]
    index = 0
    if reasoning:
        out.append(block_start(index, {"type": "thinking", "thinking": "", "signature": ""}))
        out.extend(block_delta(index, {"type": "thinking_delta", "thinking": p}) for p in text_pieces(reasoning))
        out.append(block_delta(index, {"type": "signature_delta", "signature": "sig"}))
        out.append(event("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1
    if reply or not calls:
        out.append(block_start(index, {"type": "text", "text": ""}))
        out.extend(block_delta(index, {"type": "text_delta", "text": p}) for p in text_pieces(reply))
        out.append(event("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1
    for c in calls:
        out.append(block_start(index, {"type": "tool_use", "id": c.id, "name": c.name, "input": {}}))
        out.extend(
            block_delta(index, {"type": "input_json_delta", "partial_json": p}) for p in text_pieces(c.arguments_json())
        )
        out.append(event("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1
    out.append(
        event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": STOP_REASONS.get(finish, finish), "stop_sequence": None},
                "usage": {"output_tokens": ct, "output_tokens_details": {"thinking_tokens": rt}},
            },
        )
    )
    out.append(event("message_stop", {"type": "message_stop"}))
    resp = await sse_start(request)
    await resp.write(b"".join(out))
    await resp.write_eof()
    return resp
