"""Request recording: the fake server's counters, per-request log, stats and waiting on them."""

from __future__ import annotations

import re
import threading
import time
from typing import Any, Callable

from theorembench.testing.fakellm.script import FAULT_KINDS


class RequestRecorder:
    """Counters and request log of a fake server (mixin of :class:`FakeLLMServer`).

    Every counter and log entry is guarded by ``self._cond``; every change
    notifies it, which is what :meth:`wait_for` waits on.
    """

    _cond: threading.Condition
    keep_bodies: bool

    # ---------------------------------------------------------------- state ------------

    def _reset_counters(self) -> None:
        # caller holds the lock (or is the constructor)
        self._log: list[dict[str, Any]] = []
        self._total = 0
        self._completed = 0
        self._faults: dict[str, int] = {}
        self._rule_hits: dict[str, int] = {}
        self._key_requests: dict[str, int] = {}
        self._key_ok: dict[str, int] = {}
        self._endpoints: dict[str, int] = {}
        self._in_flight = 0
        self._max_in_flight = 0
        self._held = 0
        self._cancelled = 0
        self._dropped = 0
        self._bad_requests = 0

    def _stats_locked(self) -> dict[str, Any]:
        return {
            "total_requests": self._total,
            "completed": self._completed,
            "faults": dict(self._faults),
            "faults_total": sum(self._faults.values()),
            "rule_hits": dict(self._rule_hits),
            "prompt_keys": dict(self._key_requests),
            "prompt_keys_completed": dict(self._key_ok),
            "endpoints": dict(self._endpoints),
            "in_flight": self._in_flight,
            "max_in_flight": self._max_in_flight,
            "held": self._held,
            "cancelled": self._cancelled,
            "dropped": self._dropped,
            "bad_requests": self._bad_requests,
        }

    # ---------------------------------------------------------------- public API -------

    def stats(self) -> dict[str, Any]:
        """Counters, same document as ``GET /_stats``."""
        with self._cond:
            return self._stats_locked()

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Snapshot (copies) of the per-request log, in arrival order."""
        with self._cond:
            return [dict(r) for r in self._log]

    def count(self, prompt_key: str | None = None, match: str | None = None) -> int:
        """Number of completed ``ok`` responses, optionally for one prompt key and/or
        whose last user message matches the regex ``match`` (re.search, DOTALL)."""
        pat = re.compile(match, re.DOTALL) if match is not None else None
        with self._cond:
            if pat is None:
                if prompt_key is None:
                    return self._completed
                return self._key_ok.get(prompt_key, 0)
            return sum(
                1
                for r in self._log
                if r["outcome"] == "ok"
                and (prompt_key is None or r["prompt_key"] == prompt_key)
                and pat.search(r["last_user"] or "") is not None
            )

    def wait_for(self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 10) -> dict[str, Any]:
        """Block until ``predicate(stats())`` is true; return those stats.

        Woken on every request event (arrival, hold, fault, completion, end).
        Raises :class:`TimeoutError` after ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                snapshot = self._stats_locked()
                if predicate(snapshot):
                    return snapshot
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"fakellm: condition not met within {timeout}s; stats={snapshot}")
                self._cond.wait(remaining)

    # ---------------------------------------------------------------- request events ---

    def _record_bad_body(self) -> None:
        """Count a request whose body is not a JSON object (it gets no log entry)."""
        with self._cond:
            self._total += 1
            self._bad_requests += 1
            self._cond.notify_all()

    def _record_arrival(
        self,
        api: str,
        path: str,
        body: dict[str, Any],
        model: str,
        key: str,
        last: str,
        stream: bool,
        tools: list[dict[str, Any]],
    ) -> dict[str, Any]:
        """Log a new request (now in flight) and return its log entry; ``tools`` are the tools it offers."""
        rec: dict[str, Any] = {
            "time": time.time(),
            "endpoint": api,
            "path": path,
            "model": model,
            "prompt_key": key,
            "last_user": last,
            "rule": None,
            "hit": None,
            "stream": stream,
            "tools": tools,
            "outcome": "pending",
            "status": None,
            "t_done": None,
            "cancelled": False,
            "t_cancelled": None,
            "body": body if self.keep_bodies else None,
        }
        with self._cond:
            self._total += 1
            self._endpoints[api] = self._endpoints.get(api, 0) + 1
            self._key_requests[key] = self._key_requests.get(key, 0) + 1
            self._in_flight += 1
            if self._in_flight > self._max_in_flight:
                self._max_in_flight = self._in_flight
            self._log.append(rec)
            self._cond.notify_all()
        return rec

    def _record_held(self, rec: dict[str, Any]) -> None:
        """Mark a request held by ``max_responses``."""
        with self._cond:
            rec["outcome"] = "held"
            self._held += 1
            self._cond.notify_all()

    def _record_unheld(self, rec: dict[str, Any]) -> None:
        """A held request was released (or the server is stopping)."""
        with self._cond:
            self._held -= 1
            if rec["outcome"] == "held":
                rec["outcome"] = "pending"
            self._cond.notify_all()

    def _record_rule(self, rec: dict[str, Any], rule: int | None, hit: int, label: str) -> None:
        """Note the rule (``None`` for the default) a request matched, and its hit number."""
        with self._cond:
            rec["rule"] = rule
            rec["hit"] = hit
            self._rule_hits[label] = self._rule_hits.get(label, 0) + 1

    def _finish(self, rec: dict[str, Any], outcome: str, status: int | None) -> None:
        """Record a request's outcome (loop thread)."""
        with self._cond:
            rec["outcome"] = outcome
            rec["status"] = status
            rec["t_done"] = time.time()
            if outcome == "ok":
                self._completed += 1
                key = rec["prompt_key"]
                self._key_ok[key] = self._key_ok.get(key, 0) + 1
            elif outcome in FAULT_KINDS:
                self._faults[outcome] = self._faults.get(outcome, 0) + 1
            elif outcome == "dropped":
                self._dropped += 1
            elif outcome == "bad_request":
                self._bad_requests += 1
            self._cond.notify_all()

    def _record_cancelled(self, rec: dict[str, Any]) -> None:
        """The client went away (handler cancellation) or the server is stopping."""
        with self._cond:
            rec["cancelled"] = True
            rec["t_cancelled"] = time.time()
            self._cancelled += 1
            if rec["outcome"] in ("pending", "held"):
                rec["outcome"] = "cancelled"
            self._cond.notify_all()

    def _record_departure(self) -> None:
        """A request's handler ended (answered, faulted, dropped or cancelled)."""
        with self._cond:
            self._in_flight -= 1
            self._cond.notify_all()
