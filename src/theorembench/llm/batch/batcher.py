"""One model's batcher: it queues requests, hands them to the provider as one batch, and answers each from it.

The store is written before every step that costs money or could be lost with the process:

1. the batch and its requests' cache keys are recorded ``submitting`` (our own id) before the provider
   is asked to make it;
2. the provider's batch id is recorded (``pending``) before the batch is polled;
3. once the batch ended and its results were read, it is ``ended`` (``failed`` if the provider refused it).

A request first looks for its cache key in a batch that is not ``failed`` (one a killed run made, or an
earlier request of this run): it waits for that batch and takes its answer there instead of being sent
again. A batch left ``submitting`` by a killed run is looked up at the provider by our id; when the
provider does not know it, it was never made, and is marked ``failed``.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import aiohttp

from theorembench.llm.backends import RawOutput
from theorembench.llm.batch.settings import BatchSettings
from theorembench.llm.batch.wire import BatchAPI, BatchRequestError, Polled
from theorembench.llm.failures import classify
from theorembench.llm.spending import BATCH_PRICE_FACTOR
from theorembench.store import Store
from theorembench.store.batches import UNFINISHED, batch_of_request, record_batch, update_batch

SLOTS = 1_000_000  # a batched request holds no connection: its slot only waits
MAX_POLL_ERRORS = 10  # transient failures in a row while polling before the waiting requests fail (and retry)
_SESSION_TIMEOUT = aiohttp.ClientTimeout(total=None, sock_connect=60, sock_read=600)


@dataclass
class _Queued:
    key: str
    custom_id: str
    line: bytes
    submitted: asyncio.Future[str]  # our batch id, once the provider made the batch


@dataclass
class _Outcome:
    """What a batch answered: the answers by custom id, and why a request without one has none."""

    answers: dict[str, RawOutput | BaseException] = field(default_factory=dict)
    missing: tuple[int, str] = (500, "the batch holds no answer for this request")


def _retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()  # seen: a waiter that went away leaves no "never retrieved" warning


class Batcher:
    """The batches of one model at one endpoint, in one event loop (see the module's docstring)."""

    def __init__(self, api: BatchAPI, store: Store, *, provider: str, endpoint: str, model: str,
                 settings: BatchSettings | None = None):  # fmt: skip
        self.api = api
        self.name = api.name  # the ledger's "backend" of a batched call
        self.price_factor = BATCH_PRICE_FACTOR  # what a cost cap holds for a batched call, against the price table
        self.store = store
        self.where = {"provider": provider, "endpoint": endpoint, "model": model}
        self.settings = settings or BatchSettings.from_env()
        self.loop = asyncio.get_running_loop()
        self.semaphore = asyncio.Semaphore(SLOTS)
        self._queue: list[_Queued] = []
        self._queued_bytes = 0
        self._next = 0
        self._idle: asyncio.TimerHandle | None = None
        self._deadline: asyncio.TimerHandle | None = None
        self._followed: dict[str, asyncio.Task[_Outcome | None]] = {}
        self._spent: set[tuple[str, str]] = set()  # (batch, custom id) whose answer was handed out
        self._tasks: set[asyncio.Task[Any]] = set()

    def stored(self, key: str, *, caching: bool) -> Any:
        """The batch holding a request with this cache key that this request may take its answer from, or None.

        An ``ended`` batch counts only for a call that may be answered from the cache: it is the answer a run
        killed after reading the results, before recording them, left behind."""
        statuses = UNFINISHED + (("ended",) if caching else ())
        row = batch_of_request(self.store, key, statuses=statuses, **self.where)
        if row is None or (row["id"], row["custom_id"]) in self._spent:
            return None
        return row

    async def ask(self, key: str, body: dict[str, Any], *, caching: bool, resume: bool = True,
                  fallback: Callable[[], Awaitable[RawOutput]] | None = None) -> RawOutput:  # fmt: skip
        """One request's answer: from the stored batch that holds it (unless ``resume`` is off), else from a new
        batch (or ``fallback()``: a call that should not be batched, only kept from being paid twice)."""
        row = self.stored(key, caching=caching) if resume else None
        if row is not None:
            answer = await self._answer(row["id"], row["custom_id"], dict(row))
            if answer is not None:
                return answer
        if fallback is not None:
            return await fallback()
        queued = self._enqueue(key, body)
        submission = await asyncio.shield(queued.submitted)
        answer = await self._answer(submission, queued.custom_id, None)
        if answer is None:  # pragma: no cover - a batch this process made is always known to the provider
            raise BatchRequestError(500, f"batch {submission} was lost")
        return answer

    # -- queue and submission ------------------------------------------------------

    def _enqueue(self, key: str, body: dict[str, Any]) -> _Queued:
        custom_id = f"tb-{self._next}"
        self._next += 1
        queued = _Queued(key, custom_id, self.api.line(custom_id, body), self.loop.create_future())
        queued.submitted.add_done_callback(_retrieve)
        self._queue.append(queued)
        self._queued_bytes += len(queued.line)
        s = self.settings
        if len(self._queue) >= s.max_size or self._queued_bytes >= s.max_bytes:
            self.flush()
        else:
            if self._idle is not None:
                self._idle.cancel()
            self._idle = self.loop.call_later(s.idle_s, self.flush)
            if self._deadline is None:
                self._deadline = self.loop.call_later(s.max_wait_s, self.flush)
        return queued

    def flush(self) -> None:
        """Hand every queued request to the provider as one batch now."""
        for timer in (self._idle, self._deadline):
            if timer is not None:
                timer.cancel()
        self._idle = self._deadline = None
        entries, self._queue, self._queued_bytes, self._next = self._queue, [], 0, 0
        if entries:
            self._spawn(self._submit(entries))

    def _spawn(self, work: Any) -> asyncio.Task[Any]:
        task = self.loop.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _submit(self, entries: list[_Queued]) -> None:
        submission = "b-" + uuid.uuid4().hex[:20]
        try:
            record_batch(self.store, submission, requests=[(e.custom_id, e.key) for e in entries], **self.where)
            async with aiohttp.ClientSession(timeout=_SESSION_TIMEOUT) as session:
                made = await self.api.submit(session, submission, [e.line for e in entries])
            update_batch(self.store, submission, status="pending", remote_id=made.remote_id,
                         input_file=made.input_file)  # fmt: skip
        except BaseException as exc:
            if getattr(exc, "status_code", None) is not None:  # the provider answered: it made no batch
                update_batch(self.store, submission, status="failed", detail={"error": str(exc)[:500]})
            # else it may have made one: left ``submitting``, a later request looks it up by our id
            for e in entries:
                if not e.submitted.done():
                    e.submitted.set_exception(exc)
            if not isinstance(exc, Exception):
                raise
            return
        self._follow(submission, {"status": "pending", "remote_id": made.remote_id})
        for e in entries:
            if not e.submitted.done():
                e.submitted.set_result(submission)

    # -- following a batch to its results ---------------------------------------------

    async def _answer(self, submission: str, custom_id: str, row: dict[str, Any] | None) -> RawOutput | None:
        """The answer of one request of a batch; None when the batch was never made."""
        outcome = await asyncio.shield(self._follow(submission, row))
        if outcome is None:
            return None
        self._spent.add((submission, custom_id))
        answer = outcome.answers.pop(custom_id, None)
        if answer is None:
            status, message = outcome.missing
            raise BatchRequestError(status, message)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    def _follow(self, submission: str, row: dict[str, Any] | None) -> asyncio.Task[_Outcome | None]:
        """The one task per batch that polls it until it ends and reads its results."""
        task = self._followed.get(submission)
        if task is None:
            task = self._followed[submission] = self.loop.create_task(self._poll(submission, row or {}))
            task.add_done_callback(partial(self._forget_failed, submission))
        return task

    def _forget_failed(self, submission: str, task: asyncio.Task[Any]) -> None:
        failed = task.cancelled() or task.exception() is not None
        if failed and self._followed.get(submission) is task:  # the next request of this batch polls afresh
            del self._followed[submission]

    async def _poll(self, submission: str, row: dict[str, Any]) -> _Outcome | None:
        async with aiohttp.ClientSession(timeout=_SESSION_TIMEOUT) as session:
            remote = row.get("remote_id")
            if row.get("status") == "submitting" or not remote:
                remote = await self.api.find(session, submission)
                if remote is None:
                    update_batch(self.store, submission, status="failed", detail={"error": "never made"})
                    return None
                update_batch(self.store, submission, status="pending", remote_id=remote)
            polled = await self._until_done(session, remote)
            if polled.failure is not None:
                update_batch(self.store, submission, status="failed", detail={"error": polled.failure[:500]})
                return _Outcome({}, (400, f"batch {remote} failed: {polled.failure}"))
            answers = await self.api.results(session, polled)
        update_batch(self.store, submission, status="ended",
                     detail={"provider_status": polled.status, "answers": len(answers)})  # fmt: skip
        if polled.status == "completed" or polled.status == "ended":
            return _Outcome(answers)
        return _Outcome(answers, (408, f"batch {remote} ended ({polled.status}) before this request ran"))

    async def _until_done(self, session: aiohttp.ClientSession, remote: str) -> Polled:
        errors = 0
        while True:
            try:
                polled = await self.api.poll(session, remote)
                errors = 0
                if polled.done:
                    return polled
            except Exception as exc:  # classified: a transient failure polls again
                errors += 1
                if not classify(exc).retryable or errors >= MAX_POLL_ERRORS:
                    raise
            await asyncio.sleep(self.settings.poll_s)


__all__ = ["Batcher"]
