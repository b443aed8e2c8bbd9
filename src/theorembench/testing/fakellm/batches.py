"""Batch APIs of the fake server: OpenAI's files and batches, and Anthropic's message batches.

Every batched request is answered through the server's own endpoint for it (a loopback request to
``/v1/chat/completions`` or ``/v1/messages``), so the script's rules, sequences and faults apply to it
as to a request sent alone, and it shows in the request log and the ``prompt_keys`` counters.

OpenAI: ``POST /v1/files`` (multipart, ``purpose=batch``, a JSONL file of ``{custom_id, method, url, body}``),
``GET /v1/files/{id}/content``, ``POST /v1/batches``, ``GET /v1/batches/{id}``, ``GET /v1/batches``
(newest first, ``limit`` and ``after``) and ``POST /v1/batches/{id}/cancel``. A file with a bad line fails
its batch (``status: failed``, ``errors.data``); answered requests go to the output file, the others
(status >= 300, or never run) to the error file. Anthropic: ``POST /v1/messages/batches``,
``GET /v1/messages/batches/{id}`` and its ``results_url``.

Script key ``batch_hold: true`` keeps every batch ``in_progress`` (none of its requests run) until
:meth:`release_batches` (``POST /_release_batches``). ``stats()["batches"]`` counts files uploaded,
batches created, requests batched, answered (status 200) and failed, and gives each batch's status.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

import aiohttp
from aiohttp import web

from theorembench.testing.fakellm.script import Script
from theorembench.testing.fakellm.wire import CHAT, MESSAGES, error_response, json_response

_CHAT_URL = "/v1/chat/completions"
_LOOPBACK_CONCURRENCY = 32


class BatchEndpoints:
    """The batch endpoints of :class:`FakeLLMServer` (mixin; see the module's docstring)."""

    _cond: threading.Condition
    _script: Script
    _port: int | None

    def _init_batches(self) -> None:
        self._files: dict[str, bytes] = {}
        self._batches: dict[str, dict[str, Any]] = {}
        self._batch_ids = 0
        self._batches_released = False
        self._batch_wake: asyncio.Event | None = None

    def _reset_counters(self) -> None:
        super()._reset_counters()  # type: ignore[misc]
        self._batch_counts = {"files": 0, "created": 0, "requests": 0, "answered": 0, "failed": 0}

    def _stats_locked(self) -> dict[str, Any]:
        stats = super()._stats_locked()  # type: ignore[misc]
        stats["batches"] = {**self._batch_counts, "status": {b: r["status"] for b, r in self._batches.items()}}
        return stats

    def release_batches(self) -> None:
        """Let every batch held by ``batch_hold`` run (and every later one)."""
        self._in_loop(self._do_release_batches)  # type: ignore[attr-defined]

    def _do_release_batches(self) -> None:
        self._batches_released = True
        if self._batch_wake is not None:
            self._batch_wake.set()

    def _stop_batches(self) -> None:
        """The server stops: batches still running end here."""
        for batch in self._batches.values():
            task = batch.get("task")
            if task is not None and not task.done():
                task.cancel()

    def _add_batch_routes(self, r: web.UrlDispatcher) -> None:
        for prefix in ("/v1", ""):
            r.add_post(prefix + "/files", self._h_upload)
            r.add_get(prefix + "/files/{id}/content", self._h_file_content)
            r.add_post(prefix + "/batches", self._h_create_openai)
            r.add_get(prefix + "/batches", self._h_list_openai)
            r.add_get(prefix + "/batches/{id}", self._h_get_openai)
            r.add_post(prefix + "/batches/{id}/cancel", self._h_cancel_openai)
            r.add_post(prefix + "/messages/batches", self._h_create_anthropic)
            r.add_get(prefix + "/messages/batches/{id}", self._h_get_anthropic)
            r.add_get(prefix + "/messages/batches/{id}/results", self._h_results_anthropic)
        r.add_post("/_release_batches", self._h_release_batches)

    def _count(self, **changes: int) -> None:
        with self._cond:
            for name, n in changes.items():
                self._batch_counts[name] += n
            self._cond.notify_all()

    def _new_id(self, prefix: str) -> str:
        self._batch_ids += 1
        return f"{prefix}{self._batch_ids}"

    # -- OpenAI -----------------------------------------------------------------

    async def _h_upload(self, request: web.Request) -> web.Response:
        form = await request.post()
        upload = form.get("file")
        if form.get("purpose") != "batch" or not isinstance(upload, web.FileField):
            return error_response(CHAT, 400, "fakellm: upload a 'file' with purpose 'batch'")
        content = upload.file.read()
        file_id = self._new_id("file-fake-")
        self._files[file_id] = content
        self._count(files=1)
        return json_response({"id": file_id, "object": "file", "bytes": len(content), "created_at": int(time.time()),
                              "filename": upload.filename, "purpose": "batch"})  # fmt: skip

    async def _h_file_content(self, request: web.Request) -> web.Response:
        content = self._files.get(request.match_info["id"])
        if content is None:
            return error_response(CHAT, 404, f"fakellm: no file {request.match_info['id']}")
        return web.Response(body=content, content_type="application/octet-stream")

    async def _h_create_openai(self, request: web.Request) -> web.Response:
        body = await request.json()
        content = self._files.get(str(body.get("input_file_id")))
        if content is None:
            return error_response(CHAT, 400, f"fakellm: no input file {body.get('input_file_id')!r}")
        if body.get("endpoint") != _CHAT_URL:
            return error_response(CHAT, 400, f"fakellm: batches go to {_CHAT_URL} only")
        lines, problem = _openai_lines(content)
        batch = self._made("openai", self._new_id("batch_fake_"), lines, body.get("metadata") or {})
        batch["input_file_id"] = body["input_file_id"]
        if problem is not None:
            batch.update(status="failed", errors={"object": "list", "data": [{"code": "invalid_request",
                                                                              "message": problem}]})  # fmt: skip
        else:
            self._start(batch)
        return json_response(_openai_view(batch))

    async def _h_get_openai(self, request: web.Request) -> web.Response:
        batch = self._batches.get(request.match_info["id"])
        if batch is None or batch["kind"] != "openai":
            return error_response(CHAT, 404, f"fakellm: no batch {request.match_info['id']}")
        return json_response(_openai_view(batch))

    async def _h_list_openai(self, request: web.Request) -> web.Response:
        newest = [b for b in reversed(self._batches.values()) if b["kind"] == "openai"]
        after = request.query.get("after")
        if after is not None:
            ids = [b["id"] for b in newest]
            newest = newest[ids.index(after) + 1:] if after in ids else []
        limit = int(request.query.get("limit") or 20)
        page = newest[:limit]
        return json_response({"object": "list", "data": [_openai_view(b) for b in page],
                              "first_id": page[0]["id"] if page else None, "last_id": page[-1]["id"] if page else None,
                              "has_more": len(newest) > limit})  # fmt: skip

    async def _h_cancel_openai(self, request: web.Request) -> web.Response:
        batch = self._batches.get(request.match_info["id"])
        if batch is None or batch["kind"] != "openai":
            return error_response(CHAT, 404, f"fakellm: no batch {request.match_info['id']}")
        if batch["status"] in ("validating", "in_progress"):
            batch["cancel"] = True
            if self._batch_wake is not None:
                self._batch_wake.set()
        return json_response(_openai_view(batch))

    # -- Anthropic --------------------------------------------------------------

    async def _h_create_anthropic(self, request: web.Request) -> web.Response:
        body = await request.json()
        entries = body.get("requests")
        if not isinstance(entries, list) or not entries:
            return error_response(MESSAGES, 400, "fakellm: 'requests' must be a non-empty list")
        ids = [e.get("custom_id") for e in entries]
        if len(set(ids)) != len(ids) or not all(isinstance(i, str) and i for i in ids):
            return error_response(MESSAGES, 400, "fakellm: every request needs its own custom_id")
        lines = [(e["custom_id"], "/v1/messages", e.get("params") or {}) for e in entries]
        batch = self._made("anthropic", self._new_id("msgbatch_fake_"), lines, {})
        batch["results_url"] = None
        self._start(batch)
        return json_response(_anthropic_view(batch))

    async def _h_get_anthropic(self, request: web.Request) -> web.Response:
        batch = self._batches.get(request.match_info["id"])
        if batch is None or batch["kind"] != "anthropic":
            return error_response(MESSAGES, 404, f"fakellm: no batch {request.match_info['id']}")
        return json_response(_anthropic_view(batch))

    async def _h_results_anthropic(self, request: web.Request) -> web.Response:
        batch = self._batches.get(request.match_info["id"])
        if batch is None or batch["kind"] != "anthropic" or batch["status"] != "completed":
            return error_response(MESSAGES, 404, f"fakellm: no results for batch {request.match_info['id']}")
        lines = [_anthropic_result(cid, status, answer) for cid, status, answer in batch["results"]]
        return web.Response(body="".join(json.dumps(x) + "\n" for x in lines).encode(),
                            content_type="application/binary")  # fmt: skip

    async def _h_release_batches(self, request: web.Request) -> web.Response:
        self._do_release_batches()
        return json_response({"ok": True})

    # -- running a batch ----------------------------------------------------------

    def _made(self, kind: str, batch_id: str, lines: list[tuple[str, str, dict[str, Any]]],
              metadata: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
        batch = {"kind": kind, "id": batch_id, "lines": lines, "status": "validating", "metadata": metadata,
                 "created_at": int(time.time()), "results": [], "errors": None, "cancel": False}  # fmt: skip
        with self._cond:
            self._batches[batch_id] = batch
            self._batch_counts["created"] += 1
            self._batch_counts["requests"] += len(lines)
            self._cond.notify_all()
        return batch

    def _start(self, batch: dict[str, Any]) -> None:
        if self._batch_wake is None:
            self._batch_wake = asyncio.Event()
            if self._batches_released:
                self._batch_wake.set()
        batch["task"] = asyncio.get_running_loop().create_task(self._run(batch))

    def _set_status(self, batch: dict[str, Any], status: str) -> None:
        with self._cond:
            batch["status"] = status
            self._cond.notify_all()

    async def _run(self, batch: dict[str, Any]) -> None:
        self._set_status(batch, "in_progress")
        assert self._batch_wake is not None
        while self._script.raw.get("batch_hold") and not self._batches_released and not batch["cancel"]:
            await self._batch_wake.wait()
            if not self._batches_released:
                self._batch_wake.clear()
        if batch["cancel"]:  # no request ran: each one's line in the error file says so
            lines = [json.dumps({"id": f"batch_req_{batch['id']}_{n}", "custom_id": cid, "response": None,
                                 "error": {"code": "batch_cancelled", "message": "the batch was cancelled"}}) + "\n"
                     for n, (cid, _, _) in enumerate(batch["lines"])]  # fmt: skip
            batch["error_file_id"] = self._new_id("file-fake-")
            self._files[batch["error_file_id"]] = "".join(lines).encode()
            self._set_status(batch, "cancelled")
            return
        gate = asyncio.Semaphore(_LOOPBACK_CONCURRENCY)
        async with aiohttp.ClientSession() as session:

            async def one(line: tuple[str, str, dict[str, Any]]) -> tuple[str, int, Any]:
                custom_id, url, body = line
                async with gate:
                    status, answer = await self._loopback(session, url, body)
                self._count(**({"answered": 1} if status == 200 else {"failed": 1}))
                return custom_id, status, answer

            batch["results"] = list(await asyncio.gather(*(one(line) for line in batch["lines"])))
        if batch["kind"] == "openai":
            self._write_openai_files(batch)
        else:
            batch["results_url"] = f"http://127.0.0.1:{self._port}/v1/messages/batches/{batch['id']}/results"
        self._set_status(batch, "completed")

    async def _loopback(self, session: aiohttp.ClientSession, url: str, body: dict[str, Any]) -> tuple[int, Any]:
        """One batched request, answered by the server's own endpoint for it: its status and JSON answer."""
        try:
            async with session.post(f"http://127.0.0.1:{self._port}{url}", json=body) as resp:
                text = await resp.text()
                status = resp.status
        except aiohttp.ClientError as exc:
            return 500, {"error": {"message": f"fakellm: the request was dropped ({type(exc).__name__})"}}
        try:
            return status, json.loads(text)
        except ValueError:
            return 500, {"error": {"message": f"fakellm: the answer was not JSON: {text[:100]!r}"}}

    def _write_openai_files(self, batch: dict[str, Any]) -> None:
        ok, failed = [], []
        for n, (custom_id, status, answer) in enumerate(batch["results"]):
            entry = {"id": f"batch_req_{batch['id']}_{n}", "custom_id": custom_id,
                     "response": {"status_code": status, "request_id": f"req_{n}", "body": answer}, "error": None}
            (ok if status == 200 else failed).append(json.dumps(entry) + "\n")  # fmt: skip
        for key, lines in (("output_file_id", ok), ("error_file_id", failed)):
            if lines:
                file_id = self._new_id("file-fake-")
                self._files[file_id] = "".join(lines).encode()
                batch[key] = file_id


def _openai_lines(content: bytes) -> tuple[list[tuple[str, str, dict[str, Any]]], str | None]:
    """A batch file's requests, or why the file is refused."""
    lines: list[tuple[str, str, dict[str, Any]]] = []
    seen: set[str] = set()
    for n, raw in enumerate(content.decode("utf-8", "replace").splitlines(), 1):
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw)
        except ValueError:
            return [], f"line {n} is not JSON"
        custom_id = entry.get("custom_id") if isinstance(entry, dict) else None
        if not isinstance(custom_id, str) or not custom_id or custom_id in seen:
            return [], f"line {n}: every request needs its own custom_id"
        if entry.get("method") != "POST" or entry.get("url") != _CHAT_URL or not isinstance(entry.get("body"), dict):
            return [], f"line {n}: expected method POST, url {_CHAT_URL} and a body object"
        seen.add(custom_id)
        lines.append((custom_id, _CHAT_URL, entry["body"]))
    return (lines, None) if lines else ([], "the file holds no requests")


def _openai_view(batch: dict[str, Any]) -> dict[str, Any]:
    results = batch["results"]
    answered = sum(1 for _, status, _ in results if status == 200)
    status = batch["status"]
    view = {"id": batch["id"], "object": "batch", "endpoint": _CHAT_URL, "errors": batch["errors"],
            "input_file_id": batch.get("input_file_id"), "completion_window": "24h", "status": status,
            "output_file_id": batch.get("output_file_id"), "error_file_id": batch.get("error_file_id"),
            "created_at": batch["created_at"], "metadata": batch["metadata"],
            "request_counts": {"total": len(batch["lines"]), "completed": answered,
                               "failed": len(results) - answered}}  # fmt: skip
    return view


def _anthropic_view(batch: dict[str, Any]) -> dict[str, Any]:
    done = batch["status"] == "completed"
    succeeded = sum(1 for _, status, _ in batch["results"] if status == 200)
    return {"id": batch["id"], "type": "message_batch", "processing_status": "ended" if done else "in_progress",
            "request_counts": {"processing": 0 if done else len(batch["lines"]), "succeeded": succeeded,
                               "errored": len(batch["results"]) - succeeded, "canceled": 0, "expired": 0},
            "created_at": batch["created_at"], "results_url": batch.get("results_url")}  # fmt: skip


def _anthropic_result(custom_id: str, status: int, answer: Any) -> dict[str, Any]:
    if status == 200:
        return {"custom_id": custom_id, "result": {"type": "succeeded", "message": answer}}
    error = answer.get("error") if isinstance(answer, dict) else None
    error = error if isinstance(error, dict) else {"type": "api_error", "message": str(answer)[:200]}
    return {"custom_id": custom_id, "result": {"type": "errored", "error": {"type": "error", "error": error}}}
