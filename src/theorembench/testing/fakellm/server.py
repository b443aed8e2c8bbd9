"""The in-process fake LLM HTTP server: aiohttp app and routes, lifecycle, script control and control endpoints."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import re
import signal
import threading
from typing import Any, Callable, Mapping

from aiohttp import web

from theorembench.testing.fakellm.addresses import Addresses
from theorembench.testing.fakellm.batches import BatchEndpoints
from theorembench.testing.fakellm.request_handling import LLMRequestHandler
from theorembench.testing.fakellm.script import Script, load_script
from theorembench.testing.fakellm.spawn import SpawnedFakeLLM, spawn
from theorembench.testing.fakellm.wire import json_response


class FakeLLMServer(BatchEndpoints, LLMRequestHandler, Addresses):
    """In-process fake LLM server (aiohttp on its own event loop in a daemon thread).

    Use as a context manager or call :meth:`start` / :meth:`stop`.  All public
    methods are thread-safe.  The state is also reachable over HTTP through the
    control endpoints, which is what :func:`spawn` handles use.
    """

    def __init__(
        self,
        script: Mapping[str, Any] | str | os.PathLike[str] | None = None,
        *,
        port: int = 0,
        keep_bodies: bool = True,
    ) -> None:
        self._raw_script = load_script(script)
        self._script = Script(self._raw_script)
        self._requested_port = int(port)
        self.keep_bodies = bool(keep_bodies)
        self._cond = threading.Condition(threading.Lock())
        self._ids = itertools.count(1)
        self._init_batches()
        self._reset_counters()
        # event-loop side
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._wake: asyncio.Event | None = None
        self._release_gen = 0
        self._hold_lifted = False
        self._stopping = False
        self._port: int | None = None

    # ---------------------------------------------------------------- public API -------

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("server not started")
        return self._port

    def set_script(self, script: Mapping[str, Any] | str | os.PathLike[str] | None) -> None:
        """Replace the script (rule hit counters and sequences start over; counters/log are kept)."""
        raw = load_script(script)
        compiled = Script(raw)  # validate before swapping
        self._in_loop(self._swap_script, raw, compiled)

    def reset(self) -> None:
        """Clear counters and the request log; the script restarts from its first hit."""
        self._in_loop(self._do_reset)

    def release(self) -> None:
        """Answer every request held by ``max_responses`` or a ``barrier``; further requests
        are not held until the script is replaced or the server is reset."""
        self._in_loop(self._do_release)

    def start(self) -> FakeLLMServer:
        """Start serving in a daemon thread; returns once the port is bound."""
        if self._thread is not None:
            raise RuntimeError("server already started")
        ready = threading.Event()
        errors: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            self._loop = loop
            try:
                loop.run_until_complete(self._astart())
            except BaseException as exc:  # pragma: no cover - bind errors etc.
                errors.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.close()

        self._thread = threading.Thread(target=run, name="fakellm-server", daemon=True)
        self._thread.start()
        if not ready.wait(30):
            raise RuntimeError("fakellm server did not start within 30s")
        if errors:
            self._thread = None
            self._loop = None
            raise errors[0]
        return self

    def stop(self) -> None:
        """Drop held / hanging requests (their connections are closed) and shut down."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self._astop(), loop).result(timeout=15)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=15)
            self._thread = None
            self._loop = None

    def __enter__(self) -> FakeLLMServer:
        return self.start() if self._thread is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @classmethod
    def spawn(
        cls,
        script: Mapping[str, Any] | str | os.PathLike[str] | None = None,
        keep_bodies: bool = False,
        *,
        port: int = 0,
        startup_timeout: float = 30.0,
    ) -> SpawnedFakeLLM:
        """Run the server in a child process; see :func:`spawn`."""
        return spawn(script, keep_bodies=keep_bodies, port=port, startup_timeout=startup_timeout)

    # ---------------------------------------------------------------- loop plumbing ----

    def _in_loop(self, fn: Callable[..., Any], *args: Any) -> Any:
        loop = self._loop
        if loop is None or not loop.is_running():
            return fn(*args)
        if threading.current_thread() is self._thread:
            return fn(*args)

        async def call() -> Any:
            return fn(*args)

        return asyncio.run_coroutine_threadsafe(call(), loop).result(timeout=15)

    def _swap_script(self, raw: dict[str, Any], compiled: Script) -> None:
        with self._cond:
            self._raw_script = raw
            self._script = compiled
            self._hold_lifted = False
            self._cond.notify_all()

    def _do_reset(self) -> None:
        with self._cond:
            self._script = Script(self._raw_script)
            self._hold_lifted = False
            in_flight, held = self._in_flight, self._held
            self._reset_counters()
            # requests still running keep being tracked correctly
            self._in_flight, self._held = in_flight, held
            self._max_in_flight = in_flight
            self._cond.notify_all()

    def _do_release(self) -> None:
        self._hold_lifted = True
        self._release_gen += 1
        self._script.barrier_waiting = 0
        if self._wake is not None:
            self._wake.set()
            self._wake.clear()

    def _build_app(self) -> web.Application:
        app = web.Application(client_max_size=256 * 1024 * 1024)
        r = app.router
        for prefix in ("/v1", ""):
            r.add_post(prefix + "/chat/completions", self._h_chat)
            r.add_post(prefix + "/responses", self._h_responses)
            r.add_post(prefix + "/messages", self._h_messages)
            r.add_post(prefix + "/completions", self._h_completions)
            r.add_get(prefix + "/models", self._h_models)
        r.add_get("/_stats", self._h_stats)
        r.add_get("/_requests", self._h_requests)
        r.add_post("/_script", self._h_script)
        r.add_post("/_reset", self._h_reset)
        r.add_post("/_release", self._h_release)
        self._add_batch_routes(r)
        return app

    async def _astart(self, host: str = "127.0.0.1") -> None:
        self._wake = asyncio.Event()
        self._stopping = False
        self._runner = web.AppRunner(
            self._build_app(),
            access_log=None,
            handle_signals=False,
            handler_cancellation=True,
            shutdown_timeout=1.0,
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, self._requested_port, backlog=1024)
        await site.start()
        self._port = int(self._runner.addresses[0][1])

    async def _astop(self) -> None:
        self._stopping = True
        self._stop_batches()
        if self._wake is not None:
            self._wake.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # ---------------------------------------------------------------- control handlers -

    async def _h_stats(self, request: web.Request) -> web.Response:
        return json_response(self.stats())

    async def _h_requests(self, request: web.Request) -> web.Response:
        return json_response(self.requests)

    async def _h_script(self, request: web.Request) -> web.Response:
        try:
            raw = json.loads(await request.read())
            if not isinstance(raw, dict):
                raise ValueError("script must be a JSON object")
            compiled = Script(raw)
        except (ValueError, TypeError, re.error) as exc:
            return json_response({"ok": False, "error": str(exc)}, status=400)
        self._swap_script(raw, compiled)
        return json_response({"ok": True})

    async def _h_reset(self, request: web.Request) -> web.Response:
        self._do_reset()
        return json_response({"ok": True})

    async def _h_release(self, request: web.Request) -> web.Response:
        self._do_release()
        return json_response({"ok": True})

    async def _h_models(self, request: web.Request) -> web.Response:
        data = [
            {
                "id": m,
                "object": "model",
                "created": 0,
                "owned_by": "fakellm",
                "type": "model",
                "display_name": m,
                "created_at": "1970-01-01T00:00:00Z",
            }
            for m in self._script.models
        ]
        return json_response(
            {
                "object": "list",
                "data": data,
                "has_more": False,
                "first_id": data[0]["id"] if data else None,
                "last_id": data[-1]["id"] if data else None,
            }
        )

    # ---------------------------------------------------------------- CLI -------------

    async def _serve_cli(self, host: str) -> None:
        self._loop = asyncio.get_running_loop()
        await self._astart(host)
        print(f"PORT {self._port}", flush=True)
        done = self._loop.create_future()

        def on_signal() -> None:
            if not done.done():
                done.set_result(None)

        for sig in (signal.SIGTERM, signal.SIGINT):
            try:
                self._loop.add_signal_handler(sig, on_signal)
            except (NotImplementedError, RuntimeError):  # pragma: no cover
                pass
        try:
            await done
        finally:
            await self._astop()
