"""LLM request pipeline: record, hold (budget or barrier), match a rule, delay, then fault or answer."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any, Iterable, Mapping

from aiohttp import web

from theorembench.testing.fakellm.anthropic_messages import messages_body, stream_messages
from theorembench.testing.fakellm.openai_chat import chat_body, stream_chat
from theorembench.testing.fakellm.openai_completions import completions_body
from theorembench.testing.fakellm.openai_responses import responses_body
from theorembench.testing.fakellm.prompts import approx_tokens, last_user_text, prompt_key, prompt_text
from theorembench.testing.fakellm.recording import RequestRecorder
from theorembench.testing.fakellm.script import Fault, Script
from theorembench.testing.fakellm.tool_calls import ToolCall, calls_tokens, offered_tools, with_ids
from theorembench.testing.fakellm.wire import (
    CHAT,
    COMPLETIONS,
    MESSAGES,
    RESPONSES,
    drop_connection,
    error_response,
    json_response,
)

_HTTP_FAULTS = {"429": 429, "500": 500, "503": 503, "529": 529, "400": 400, "401": 401}


def _fmt_seconds(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


class LLMRequestHandler(RequestRecorder):
    """The LLM endpoints of :class:`FakeLLMServer` (mixin; the server owns the state below)."""

    _script: Script
    _ids: itertools.count[int]
    _wake: asyncio.Event | None
    _release_gen: int
    _hold_lifted: bool
    _stopping: bool

    async def _h_chat(self, request: web.Request) -> web.StreamResponse:
        return await self._handle(request, CHAT)

    async def _h_responses(self, request: web.Request) -> web.StreamResponse:
        return await self._handle(request, RESPONSES)

    async def _h_messages(self, request: web.Request) -> web.StreamResponse:
        return await self._handle(request, MESSAGES)

    async def _h_completions(self, request: web.Request) -> web.StreamResponse:
        return await self._handle(request, COMPLETIONS)

    async def _handle(self, request: web.Request, api: str) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = json.loads(raw)
            if not isinstance(body, dict):
                raise ValueError("request body must be a JSON object")
        except ValueError as exc:
            self._record_bad_body()
            return error_response(api, 400, f"fakellm: invalid JSON body: {exc}")

        model = str(body.get("model") or "")
        ptext = prompt_text(body)
        last = last_user_text(body)
        key = prompt_key(body)
        stream = bool(body.get("stream"))
        rec = self._record_arrival(api, request.path, body, model, key, last, stream, offered_tools(body))
        try:
            return await self._serve(request, api, body, rec, model, ptext, last, stream)
        except asyncio.CancelledError:
            # the client went away (handler cancellation) or the server is stopping
            self._record_cancelled(rec)
            raise
        finally:
            self._record_departure()

    async def _serve(
        self,
        request: web.Request,
        api: str,
        body: dict[str, Any],
        rec: dict[str, Any],
        model: str,
        ptext: str,
        last: str,
        stream: bool,
    ) -> web.StreamResponse:
        script = self._script
        # --- max_responses: hold everything beyond the budget until release/stop
        if script.max_responses is not None and script.admitted >= script.max_responses and not self._hold_lifted:
            gen = self._release_gen
            self._record_held(rec)
            try:
                assert self._wake is not None
                while self._release_gen == gen and not self._stopping:
                    await self._wake.wait()
            finally:
                self._record_unheld(rec)
            if self._stopping:
                self._finish(rec, "dropped", None)
                return drop_connection(request)
            script = self._script

        # --- barrier: hold requests until that many are held together, then let the batch go
        if script.barrier and not self._hold_lifted and not await self._barrier_wait(script, rec):
            self._finish(rec, "dropped", None)
            return drop_connection(request)

        if api == RESPONSES and stream:
            self._finish(rec, "bad_request", 400)
            return error_response(api, 400, "fakellm: streaming is not supported for the Responses API")
        if api == COMPLETIONS and stream:
            self._finish(rec, "bad_request", 400)
            return error_response(api, 400, "fakellm: streaming is not supported for legacy completions")

        # --- rule matching and fault selection (no awaits: atomic w.r.t. other requests)
        rule = script.match(ptext, model)
        rule.hits += 1
        hit = rule.hits
        fault = rule.fault_for(hit) or script.random_fault()
        seq = None
        if fault is None:
            seq = rule.answered
            rule.answered += 1
            script.admitted += 1
        self._record_rule(rec, None if rule is script.default else int(rule.label), hit, rule.label)

        delay_ms = fault.delay_ms if fault is not None and fault.delay_ms is not None else rule.delay_ms
        if delay_ms > 0:
            try:
                await asyncio.sleep(delay_ms / 1000.0)
            except asyncio.CancelledError:
                if fault is None:  # never answered: give the max_responses budget back
                    script.admitted -= 1
                raise

        if fault is not None and fault.kind != "empty":
            return await self._inject(request, api, rec, fault)

        # --- build the reply
        calls: list[ToolCall] = []
        if fault is not None:  # "empty": valid envelope, empty content
            reply, reasoning = "", None
        else:
            assert seq is not None
            if rule.echo:
                reply = last
            else:
                scripted = with_ids(rule.replies[min(seq, len(rule.replies) - 1)], rule.label, seq)
                reply, calls = scripted.content, scripted.tool_calls
            reasoning = None
            if rule.reasonings is not None:
                reasoning = rule.reasonings[min(seq, len(rule.reasonings) - 1)]
            if "{last_user}" in reply:
                reply = reply.replace("{last_user}", last)
            if reasoning and "{last_user}" in reasoning:
                reasoning = reasoning.replace("{last_user}", last)

        usage = rule.usage
        pt = int(usage.get("prompt_tokens", approx_tokens(ptext)))
        rt = int(usage.get("reasoning_tokens", len(reasoning) // 4 if reasoning else 0))
        ct = int(usage.get("completion_tokens", approx_tokens(reply) + calls_tokens(calls) + rt))
        finish = rule.finish_reason or ("tool_calls" if calls else "stop")
        limit = self._max_tokens(api, body)
        if limit is not None and limit < ct:
            # cut off: the text is shortened and the tool calls were never finished
            reply = reply[: 4 * max(limit, 0)]
            calls = []
            ct = max(limit, 0)
            rt = min(rt, ct)
            finish = "length"

        outcome = "empty" if fault is not None else "ok"
        n = 1
        if api == CHAT:
            try:
                n = max(1, int(body.get("n") or 1))
            except (TypeError, ValueError):
                n = 1
        rid = next(self._ids)
        if stream and api == CHAT:
            resp = await stream_chat(request, rid, model, n, reply, reasoning, finish, pt, ct, rt, calls)
        elif stream and api == MESSAGES:
            resp = await stream_messages(request, rid, model, reply, reasoning, finish, pt, ct, calls, rt)
        elif api == CHAT:
            resp = json_response(chat_body(rid, model, n, reply, reasoning, finish, pt, ct, rt, calls))
        elif api == RESPONSES:
            resp = json_response(responses_body(rid, model, reply, reasoning, finish, pt, ct, rt, body, calls))
        elif api == COMPLETIONS:
            resp = json_response(completions_body(script, rid, model, reply, finish, limit, body))
        else:
            resp = json_response(messages_body(rid, model, reply, reasoning, finish, pt, ct, calls, rt))
        self._finish(rec, outcome, 200)
        return resp

    async def _barrier_wait(self, script: Script, rec: dict[str, Any]) -> bool:
        """Hold a request until ``script.barrier`` requests are held (or ``release()``); False if the server stops."""
        gen, released = script.barrier_gen, self._release_gen
        script.barrier_waiting += 1
        self._record_held(rec)
        assert self._wake is not None
        try:
            if script.barrier_waiting >= script.barrier:
                script.barrier_waiting = 0
                script.barrier_gen += 1
                self._wake.set()
                self._wake.clear()
            while script.barrier_gen == gen and self._release_gen == released and not self._stopping:
                await self._wake.wait()
        except asyncio.CancelledError:
            if script.barrier_gen == gen and self._release_gen == released:
                script.barrier_waiting -= 1
            raise
        finally:
            self._record_unheld(rec)
        return not self._stopping

    @staticmethod
    def _max_tokens(api: str, body: Mapping[str, Any]) -> int | None:
        if api == CHAT:
            keys: Iterable[str] = ("max_completion_tokens", "max_tokens")
        elif api == RESPONSES:
            keys = ("max_output_tokens",)
        else:
            keys = ("max_tokens",)
        for k in keys:
            v = body.get(k)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return int(v)
        return None

    # ---------------------------------------------------------------- faults -----------

    async def _inject(self, request: web.Request, api: str, rec: dict[str, Any], fault: Fault) -> web.StreamResponse:
        kind = fault.kind
        if kind in _HTTP_FAULTS:
            status = _HTTP_FAULTS[kind]
            headers = {}
            if fault.retry_after is not None:
                headers["Retry-After"] = _fmt_seconds(fault.retry_after)
                headers["retry-after-ms"] = _fmt_seconds(round(fault.retry_after * 1000.0, 3))
            message = fault.message or f"fakellm injected fault {kind}"
            self._finish(rec, kind, status)
            return error_response(api, status, message, headers)
        if kind == "malformed":
            self._finish(rec, kind, 200)
            text = fault.body if isinstance(fault.body, str) else "<html>fakellm: this is not JSON {"
            return web.Response(body=text.encode("utf-8"), status=200, content_type=fault.content_type)
        if kind == "disconnect":
            self._finish(rec, kind, None)
            return drop_connection(request)
        if kind == "truncated":
            full = json.dumps(
                chat_body(0, rec["model"], 1, "truncated " * 20, None, "stop", 1, 1, 0)
                if api != MESSAGES
                else messages_body(0, rec["model"], "truncated " * 20, None, "stop", 1, 1)
            ).encode("utf-8")
            head = (
                "HTTP/1.1 200 OK\r\n"
                "Content-Type: application/json\r\n"
                f"Content-Length: {len(full)}\r\n"
                "Connection: close\r\n\r\n"
            ).encode("ascii")
            self._finish(rec, kind, 200)
            transport = request.transport
            if transport is not None:
                transport.write(head + full[: len(full) // 2])
            return drop_connection(request)
        if kind == "timeout":
            self._finish(rec, kind, None)
            assert self._wake is not None
            while not self._stopping:
                await self._wake.wait()
            return drop_connection(request)
        raise AssertionError(kind)  # pragma: no cover
