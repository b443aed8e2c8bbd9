"""HTTP helpers shared by the protocol modules: API flavour names, JSON/error responses, SSE, dropped connections."""

from __future__ import annotations

import json
from typing import Any, Mapping

from aiohttp import web

# API flavours handled by the LLM endpoints.
CHAT = "chat"
RESPONSES = "responses"
MESSAGES = "messages"
COMPLETIONS = "completions"

_OPENAI_ERRORS = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    404: ("invalid_request_error", "not_found"),
    429: ("requests", "rate_limit_exceeded"),
    500: ("server_error", None),
    503: ("server_error", "service_unavailable"),
    529: ("server_error", "overloaded"),
}
_ANTHROPIC_ERRORS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    503: "api_error",
    529: "overloaded_error",
}


def json_response(obj: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> web.Response:
    """``obj`` as a JSON response (UTF-8, non-ASCII kept)."""
    return web.Response(
        body=json.dumps(obj, ensure_ascii=False).encode("utf-8"),
        status=status,
        headers=headers,
        content_type="application/json",
    )


def error_response(api: str, status: int, message: str, headers: Mapping[str, str] | None = None) -> web.Response:
    """An error response in the shape of ``api`` (Anthropic for messages, else OpenAI)."""
    if api == MESSAGES:
        etype = _ANTHROPIC_ERRORS.get(status, "api_error")
        payload: dict[str, Any] = {"type": "error", "error": {"type": etype, "message": message}}
    else:
        etype, code = _OPENAI_ERRORS.get(status, ("server_error", None))
        payload = {"error": {"message": message, "type": etype, "param": None, "code": code}}
    return json_response(payload, status=status, headers=headers)


def drop_connection(request: web.Request) -> web.Response:
    """Close the connection without a response; the returned object is never sent."""
    transport = request.transport
    if transport is not None:
        transport.close()
    return web.Response(status=500)


async def sse_start(request: web.Request) -> web.StreamResponse:
    """Prepare a ``text/event-stream`` response."""
    resp = web.StreamResponse(status=200, headers={"Cache-Control": "no-cache"})
    resp.content_type = "text/event-stream"
    await resp.prepare(request)
    return resp


def text_pieces(text: str, size: int = 64) -> list[str]:
    """``text`` cut into stream deltas of ``size`` characters (one empty piece for "")."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]
