"""OpenAI chat completions protocol: the JSON response body and its SSE stream."""

from __future__ import annotations

import json
import time
from typing import Any, Sequence

from aiohttp import web

from theorembench.testing.fakellm.tool_calls import ToolCall
from theorembench.testing.fakellm.wire import sse_start, text_pieces


def _tool_calls(calls: Sequence[ToolCall]) -> list[dict[str, Any]]:
    return [
        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments_json()}} for c in calls
    ]


def chat_body(
    rid: int,
    model: str,
    n: int,
    reply: str,
    reasoning: str | None,
    finish: str,
    pt: int,
    ct: int,
    rt: int,
    calls: Sequence[ToolCall] = (),
) -> dict[str, Any]:
    """A ``chat.completion`` object with ``n`` identical choices (``content`` null when only tool calls)."""
    message: dict[str, Any] = {"role": "assistant", "content": reply if reply or not calls else None}
    if reasoning:
        message["reasoning_content"] = reasoning
    if calls:
        message["tool_calls"] = _tool_calls(calls)
    choices = [{"index": i, "message": dict(message), "finish_reason": finish, "logprobs": None} for i in range(n)]
    return {
        "id": f"chatcmpl-fake{rid}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": choices,
        "usage": {
            "prompt_tokens": pt,
            "completion_tokens": ct * n,
            "total_tokens": pt + ct * n,
            "completion_tokens_details": {"reasoning_tokens": rt * n},
        },
    }


async def stream_chat(
    request: web.Request,
    rid: int,
    model: str,
    n: int,
    reply: str,
    reasoning: str | None,
    finish: str,
    pt: int,
    ct: int,
    rt: int,
    calls: Sequence[ToolCall] = (),
) -> web.StreamResponse:
    """Send the reply as ``chat.completion.chunk`` SSE events (tool calls after the text), usage and ``[DONE]``."""
    created = int(time.time())
    head = {"id": f"chatcmpl-fake{rid}", "object": "chat.completion.chunk", "created": created, "model": model}

    def chunk(index: int, delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
        obj = dict(head, choices=[{"index": index, "delta": delta, "finish_reason": finish_reason, "logprobs": None}])
        return b"data: " + json.dumps(obj, ensure_ascii=False).encode("utf-8") + b"\n\n"

    out: list[bytes] = []
    for i in range(n):
        out.append(chunk(i, {"role": "assistant", "content": ""}))
        if reasoning:
            out.extend(chunk(i, {"reasoning_content": p}) for p in text_pieces(reasoning))
        if reply or not calls:
            out.extend(chunk(i, {"content": p}) for p in text_pieces(reply))
        for j, call in enumerate(_tool_calls(calls)):
            fn = call["function"]
            head_delta = dict(call, index=j, function={"name": fn["name"], "arguments": ""})
            out.append(chunk(i, {"tool_calls": [head_delta]}))
            for p in text_pieces(fn["arguments"]):
                out.append(chunk(i, {"tool_calls": [{"index": j, "function": {"arguments": p}}]}))
        out.append(chunk(i, {}, finish))
    usage = {
        "prompt_tokens": pt,
        "completion_tokens": ct * n,
        "total_tokens": pt + ct * n,
        "completion_tokens_details": {"reasoning_tokens": rt * n},
    }
    out.append(b"data: " + json.dumps(dict(head, choices=[], usage=usage)).encode("utf-8") + b"\n\n")
    out.append(b"data: [DONE]\n\n")
    resp = await sse_start(request)
    await resp.write(b"".join(out))
    await resp.write_eof()
    return resp
