"""OpenAI's Batch API (and any OpenAI-compatible server that has one): a JSONL file of chat requests.

``POST /files`` (``purpose=batch``) uploads the requests, one ``{custom_id, method, url, body}`` line each;
``POST /batches`` makes the batch (our own batch id goes in its ``metadata``, so a run killed before it
stored the provider's id finds the batch again with ``GET /batches``); ``GET /batches/{id}`` tells its
status; ``GET /files/{id}/content`` gives the output file and the error file, one result line per request.
"""

from __future__ import annotations

import json
from typing import Any

import aiohttp

from theorembench.llm.backends import MalformedResponseError, RawOutput
from theorembench.llm.backends.openai_compat import chat_output
from theorembench.llm.batch.wire import BatchRequestError, Polled, Results, Submitted, call, jsonl
from theorembench.llm.spending import BATCH_PRICE_FACTOR

CHAT_URL = "/v1/chat/completions"
DONE = ("completed", "failed", "expired", "cancelled")
METADATA_KEY = "theorembench_batch"
_UNANSWERED = ("batch_expired", "batch_cancelled")  # the batch ended before the request ran: ask it again
_FIND_PAGES = 10  # pages of 100 batches looked through for a batch made by a killed run


class OpenAIBatches:
    name = "openai-batch"

    def __init__(self, base_url: str, api_key: str | None):
        self.base = base_url.rstrip("/")
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}

    def line(self, custom_id: str, body: dict[str, Any]) -> bytes:
        entry = {"custom_id": custom_id, "method": "POST", "url": CHAT_URL, "body": body}
        return json.dumps(entry, ensure_ascii=False).encode() + b"\n"

    async def submit(self, session: aiohttp.ClientSession, submission: str, lines: list[bytes]) -> Submitted:
        form = aiohttp.FormData()
        form.add_field("purpose", "batch")
        form.add_field("file", b"".join(lines), filename=f"{submission}.jsonl", content_type="application/jsonl")
        uploaded = await call(session, "POST", f"{self.base}/files", self.headers, data=form)
        made = await call(session, "POST", f"{self.base}/batches", self.headers, body={
            "input_file_id": uploaded["id"], "endpoint": CHAT_URL, "completion_window": "24h",
            "metadata": {METADATA_KEY: submission}})  # fmt: skip
        return Submitted(str(made["id"]), str(uploaded["id"]))

    async def find(self, session: aiohttp.ClientSession, submission: str) -> str | None:
        after = None
        for _ in range(_FIND_PAGES):
            page = await call(session, "GET", f"{self.base}/batches?limit=100" + (f"&after={after}" if after else ""),
                              self.headers)  # fmt: skip
            data = page.get("data") or []
            for batch in data:
                if (batch.get("metadata") or {}).get(METADATA_KEY) == submission:
                    return str(batch["id"])
            if not page.get("has_more") or not data:
                return None
            after = data[-1]["id"]
        return None

    async def poll(self, session: aiohttp.ClientSession, remote_id: str) -> Polled:
        batch = await call(session, "GET", f"{self.base}/batches/{remote_id}", self.headers)
        status = str(batch.get("status"))
        failure = None
        if status == "failed":
            errors = (batch.get("errors") or {}).get("data") or []
            failure = "; ".join(f"{e.get('code')}: {e.get('message')}" for e in errors) or "the provider failed it"
        return Polled(status, status in DONE, failure,
                      {"output": batch.get("output_file_id"), "error": batch.get("error_file_id")})  # fmt: skip

    async def results(self, session: aiohttp.ClientSession, polled: Polled) -> Results:
        answers: Results = {}
        for file_id in (polled.refs.get("output"), polled.refs.get("error")):
            if file_id:
                content = await call(session, "GET", f"{self.base}/files/{file_id}/content", self.headers, raw=True)
                for entry in jsonl(content):
                    answers[str(entry.get("custom_id"))] = _answer(entry)
        return answers


def _answer(entry: dict[str, Any]) -> RawOutput | BaseException:
    """One result line: the chat completion, or why the request has none."""
    response = entry.get("response") or {}
    status = response.get("status_code")
    body = response.get("body")
    if isinstance(status, int) and status < 300:
        try:
            output = chat_output(body)
        except MalformedResponseError as exc:
            return exc
        output.price_factor = BATCH_PRICE_FACTOR
        return output
    error = entry.get("error") or (body.get("error") if isinstance(body, dict) else None) or {}
    code = error.get("code") if isinstance(error, dict) else None
    message = error.get("message") if isinstance(error, dict) else str(error)
    if code in _UNANSWERED:
        return BatchRequestError(408, f"the batch ended before this request ran ({code})")
    return BatchRequestError(status if isinstance(status, int) else 500, str(message or f"batch result {entry}")[:300])
