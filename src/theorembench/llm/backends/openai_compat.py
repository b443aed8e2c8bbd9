"""The direct backend: OpenAI-compatible chat completions over one aiohttp pool."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp

from theorembench.common.retry import retry_after_seconds
from theorembench.llm.backends import HTTPStatusError, MalformedResponseError, RawOutput
from theorembench.llm.structured import llama_cpp_schema


class OpenAICompatBackend:
    name = "direct"

    def __init__(self, base_url: str, api_key: str | None, model: str, *, llama_cpp: bool = False):
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.llama_cpp = llama_cpp
        self.headers = {"Content-Type": "application/json"}
        if api_key:
            self.headers["Authorization"] = f"Bearer {api_key}"
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _client(self, max_connections: int) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        if self._session is None or self._session.closed or self._loop is not loop:
            connector = aiohttp.TCPConnector(limit=max(max_connections, 1), limit_per_host=0)
            self._session = aiohttp.ClientSession(connector=connector)
            self._loop = loop
        return self._session

    def body(self, messages: list[dict[str, str]], settings: Any, schema: dict[str, Any] | None) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        for key in ("temperature", "top_p", "max_tokens", "seed", "reasoning_effort"):
            value = getattr(settings, key)
            if value is not None:
                body[key] = value
        if schema is not None:
            if self.llama_cpp:
                # llama.cpp's server answers type json_schema with HTTP 500; json_object + schema works
                body["response_format"] = {"type": "json_object", "schema": llama_cpp_schema(schema)}
            else:
                body["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": "answer", "schema": schema, "strict": False},
                }
        if settings.extra_body:
            body.update(settings.extra_body)
        return body

    async def generate(self, messages: list[dict[str, str]], settings: Any,
                       schema: dict[str, Any] | None, max_connections: int) -> RawOutput:  # fmt: skip
        session = self._client(max_connections)
        timeout = aiohttp.ClientTimeout(total=settings.timeout) if settings.timeout else aiohttp.ClientTimeout(total=None)
        payload = json.dumps(self.body(messages, settings, schema), ensure_ascii=False)
        async with session.post(self.url, data=payload.encode(), headers=self.headers, timeout=timeout) as resp:
            text = await resp.text()
            if resp.status >= 300:
                raise HTTPStatusError(resp.status, _error_message(text, resp.status), retry_after_seconds(resp.headers))
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise MalformedResponseError(f"unexpected response body ({type(exc).__name__}): {text[:200]!r}") from None
        return chat_output(data)

    async def aclose(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()


def chat_output(data: Any) -> RawOutput:
    """A chat completion's answer (the JSON body an OpenAI-compatible server sends, or a batch's result line holds)."""
    try:
        choice = data["choices"][0]
        message = choice["message"]
    except (KeyError, IndexError, TypeError) as exc:
        shown = json.dumps(data, ensure_ascii=False)[:200] if isinstance(data, dict | list) else repr(data)[:200]
        raise MalformedResponseError(f"unexpected response body ({type(exc).__name__}): {shown!r}") from None
    usage = data.get("usage") or {}
    details = usage.get("completion_tokens_details") or {}
    prompt_details = usage.get("prompt_tokens_details") or {}
    return RawOutput(
        text=message.get("content") or "",
        reasoning=message.get("reasoning_content") or message.get("reasoning") or None,
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        reasoning_tokens=int(details.get("reasoning_tokens") or 0),
        cached_tokens=int(prompt_details.get("cached_tokens") or 0),
        finish_reason=choice.get("finish_reason"),
        model=data.get("model"),
    )


def _error_message(text: str, status: int) -> str:
    try:
        data = json.loads(text)
        err = data.get("error", data)
        if isinstance(err, dict):
            return str(err.get("message") or err)[:300]
        return str(err)[:300]
    except ValueError:
        return f"HTTP {status}: {text[:200]}"
