"""OpenAI Responses API protocol: the (non-streaming) JSON response body."""

from __future__ import annotations

import time
from typing import Any, Mapping, Sequence

from theorembench.testing.fakellm.tool_calls import ToolCall


def responses_body(
    rid: int,
    model: str,
    reply: str,
    reasoning: str | None,
    finish: str,
    pt: int,
    ct: int,
    rt: int,
    body: Mapping[str, Any],
    calls: Sequence[ToolCall] = (),
) -> dict[str, Any]:
    """A Responses API ``response`` object: reasoning summary item, message item, then ``function_call`` items.

    The message item is left out when the reply is only tool calls.
    """
    output: list[dict[str, Any]] = []
    if reasoning:
        output.append(
            {"type": "reasoning", "id": f"rs_fake{rid}", "summary": [{"type": "summary_text", "text": reasoning}]}
        )
    if reply or not calls:
        output.append(
            {
                "type": "message",
                "id": f"msg_fake{rid}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": reply, "annotations": []}],
            }
        )
    for j, c in enumerate(calls):
        output.append(
            {
                "type": "function_call",
                "id": f"fc_fake{rid}_{j}",
                "call_id": c.id,
                "name": c.name,
                "arguments": c.arguments_json(),
                "status": "completed",
            }
        )
    incomplete = finish == "length"
    return {
        "id": f"resp_fake{rid}",
        "object": "response",
        "created_at": int(time.time()),
        "model": model,
        "status": "incomplete" if incomplete else "completed",
        "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
        "error": None,
        "instructions": body.get("instructions"),
        "metadata": {},
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": body.get("tools") or [],
        "temperature": body.get("temperature"),
        "top_p": body.get("top_p"),
        "max_output_tokens": body.get("max_output_tokens"),
        "output": output,
        "usage": {
            "input_tokens": pt,
            "output_tokens": ct,
            "total_tokens": pt + ct,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": rt},
        },
    }
