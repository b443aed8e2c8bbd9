"""What every provider's batch API shares: HTTP with errors the retry policy understands, and the result shapes."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import aiohttp

from theorembench.common.retry import retry_after_seconds
from theorembench.llm.backends import HTTPStatusError, RawOutput


class BatchRequestError(HTTPStatusError):
    """A batched request the provider did not answer: the status code its result line names (408 for a batch
    that expired or was cancelled first: the retry policy asks it again, in a new batch)."""


@dataclass
class Submitted:
    remote_id: str
    input_file: str | None = None


@dataclass
class Polled:
    """A batch's state: ``done`` once the provider finished with it; ``failure`` when it answered nothing."""

    status: str
    done: bool
    failure: str | None = None
    refs: dict[str, Any] = field(default_factory=dict)  # where the results are (file ids, a results URL)


Results = dict[str, RawOutput | BaseException]  # custom_id -> the answer, or why there is none


class BatchAPI(Protocol):
    """One provider's batch API. ``lines`` are ``(custom_id, body)`` pairs; ``body`` is one request's body."""

    name: str

    def line(self, custom_id: str, body: dict[str, Any]) -> bytes: ...

    async def submit(self, session: aiohttp.ClientSession, submission: str, lines: list[bytes]) -> Submitted: ...

    async def find(self, session: aiohttp.ClientSession, submission: str) -> str | None: ...

    async def poll(self, session: aiohttp.ClientSession, remote_id: str) -> Polled: ...

    async def results(self, session: aiohttp.ClientSession, polled: Polled) -> Results: ...


async def call(session: aiohttp.ClientSession, method: str, url: str, headers: Mapping[str, str], *,
               body: Any = None, data: Any = None, raw: bool = False) -> Any:  # fmt: skip
    """One HTTP request: the JSON answer (the bytes with ``raw``), or an :class:`HTTPStatusError`."""
    payload = json.dumps(body, ensure_ascii=False).encode() if body is not None else data
    sent = dict(headers)
    if body is not None:
        sent["Content-Type"] = "application/json"
    async with session.request(method, url, data=payload, headers=sent) as resp:
        content = await resp.read()
        if resp.status >= 300:
            raise HTTPStatusError(resp.status, f"{method} {url}: {_message(content, resp.status)}",
                                  retry_after_seconds(resp.headers))  # fmt: skip
    if raw:
        return content
    try:
        return json.loads(content)
    except ValueError:
        raise HTTPStatusError(502, f"{method} {url}: the answer is not JSON: {content[:200]!r}") from None


def jsonl(content: bytes) -> list[dict[str, Any]]:
    """The objects of a JSONL file (blank lines skipped)."""
    return [json.loads(line) for line in content.decode("utf-8").splitlines() if line.strip()]


def _message(content: bytes, status: int) -> str:
    try:
        data = json.loads(content)
    except ValueError:
        return f"HTTP {status}: {content[:200].decode('utf-8', 'replace')}"
    err = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(err, dict):
        return str(err.get("message") or err)[:300]
    return str(err)[:300]
