"""Anthropic's Message Batches API: ``POST /v1/messages/batches`` with every request's Messages parameters,
``GET /v1/messages/batches/{id}`` until ``processing_status`` is ``ended``, then its ``results_url`` (JSONL:
``succeeded`` with the message, or ``errored``, ``canceled``, ``expired``).

Anthropic's batches carry no metadata of ours: a run killed between asking for the batch and storing its id
cannot find that batch again, and its requests are asked anew (the window is one HTTP answer long).
"""

from __future__ import annotations

import json
from typing import Any

import aiohttp

from theorembench.llm.backends import RawOutput
from theorembench.llm.batch.wire import BatchRequestError, Polled, Results, Submitted, call, jsonl
from theorembench.llm.spending import BATCH_PRICE_FACTOR

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 8192  # Anthropic needs a reply cap; the one a call sets wins
_STOP = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "tool_use": "tool_calls"}
_ERROR_STATUS = {"invalid_request_error": 400, "authentication_error": 401, "permission_error": 403,
                 "not_found_error": 404, "rate_limit_error": 429, "overloaded_error": 529}  # fmt: skip


class AnthropicBatches:
    name = "anthropic-batch"

    def __init__(self, base_url: str | None, api_key: str | None):
        self.base = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.headers = {"anthropic-version": API_VERSION, **({"x-api-key": api_key} if api_key else {})}

    def line(self, custom_id: str, body: dict[str, Any]) -> bytes:
        return json.dumps({"custom_id": custom_id, "params": body}, ensure_ascii=False).encode()

    async def submit(self, session: aiohttp.ClientSession, submission: str, lines: list[bytes]) -> Submitted:
        data = b'{"requests":[' + b",".join(lines) + b"]}"
        made = await call(session, "POST", f"{self.base}/v1/messages/batches",
                          {**self.headers, "Content-Type": "application/json"}, data=data)  # fmt: skip
        return Submitted(str(made["id"]))

    async def find(self, session: aiohttp.ClientSession, submission: str) -> str | None:
        return None  # see the module's docstring

    async def poll(self, session: aiohttp.ClientSession, remote_id: str) -> Polled:
        batch = await call(session, "GET", f"{self.base}/v1/messages/batches/{remote_id}", self.headers)
        status = str(batch.get("processing_status"))
        return Polled(status, status == "ended", None, {"results_url": batch.get("results_url")})

    async def results(self, session: aiohttp.ClientSession, polled: Polled) -> Results:
        url = polled.refs.get("results_url")
        if not url:
            return {}
        content = await call(session, "GET", str(url), self.headers, raw=True)
        return {str(entry.get("custom_id")): _answer(entry.get("result") or {}) for entry in jsonl(content)}


def messages_body(model: str, messages: list[dict[str, str]], settings: Any) -> dict[str, Any]:
    """A Messages API request of a chat: system turns go to ``system``; a thinking budget turns thinking on."""
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    max_tokens = settings.max_tokens or DEFAULT_MAX_TOKENS
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens,
                            "messages": [{"role": m["role"], "content": m["content"]}
                                         for m in messages if m["role"] != "system"]}  # fmt: skip
    if system:
        body["system"] = system
    for key in ("temperature", "top_p"):
        if getattr(settings, key) is not None:
            body[key] = getattr(settings, key)
    if settings.thinking_budget:
        body["thinking"] = {"type": "enabled", "budget_tokens": settings.thinking_budget}
        if max_tokens <= settings.thinking_budget:  # the budget counts inside max_tokens
            body["max_tokens"] = settings.thinking_budget + max_tokens
    if settings.extra_body:
        body.update(settings.extra_body)
    return body


def _answer(result: dict[str, Any]) -> RawOutput | BaseException:
    kind = result.get("type")
    if kind == "succeeded":
        message = result.get("message") or {}
        blocks = message.get("content") or []
        usage = message.get("usage") or {}
        cached = int(usage.get("cache_read_input_tokens") or 0)
        prompt = int(usage.get("input_tokens") or 0) + cached + int(usage.get("cache_creation_input_tokens") or 0)
        thinking = "\n".join(b.get("thinking") or "" for b in blocks if b.get("type") == "thinking")
        details = usage.get("output_tokens_details") or {}
        return RawOutput(
            text="".join(b.get("text") or "" for b in blocks if b.get("type") == "text"),
            reasoning=thinking or None, prompt_tokens=prompt, completion_tokens=int(usage.get("output_tokens") or 0),
            reasoning_tokens=int(details.get("thinking_tokens") or 0), cached_tokens=cached,
            finish_reason=_STOP.get(str(message.get("stop_reason")), message.get("stop_reason")),
            model=message.get("model"), price_factor=BATCH_PRICE_FACTOR,
        )  # fmt: skip
    if kind == "errored":
        error = (result.get("error") or {}).get("error") or result.get("error") or {}
        etype = error.get("type") if isinstance(error, dict) else None
        return BatchRequestError(_ERROR_STATUS.get(str(etype), 500), str(error.get("message") or etype)[:300])
    return BatchRequestError(408, f"the batch ended before this request ran ({kind})")
