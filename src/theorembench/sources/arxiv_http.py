"""Polite HTTP to arXiv: the process-wide rate limiter and GET with retries and error mapping.

arXiv asks for at most one request every few seconds over a single connection.
:data:`LIMITER` is one process-wide lock plus the time of the last request; it is
held for the whole request (queries *and* e-print downloads), so requests never
overlap and are spaced by ``delay_s``. :func:`request` retries with the shared
:class:`~theorembench.common.retry.RetryPolicy`, widening the spacing
exponentially (``delay_s * 2**attempt``, or ``Retry-After`` when larger, capped at
:data:`MAX_RETRY_AFTER_S`), and maps what is left to the
:mod:`.arxiv_errors` types.
"""

from __future__ import annotations

import logging
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import requests
import urllib3

from theorembench import __version__
from theorembench.common.retry import FailedAttempt, RetryPolicy, Verdict, retry_after_seconds
from theorembench.sources.arxiv_eprints import CHUNK_BYTES, MB, capped_chunks
from theorembench.sources.arxiv_errors import (
    ArxivError,
    ArxivNotFound,
    ArxivQueryError,
    ArxivThrottled,
    ArxivUnavailable,
)
from theorembench.sources.arxiv_feed import api_error_message, clean_text

# The client's own module name: its log records keep the logger they always had.
log = logging.getLogger("theorembench.sources.arxiv")

USER_AGENT = f"theorembench/{__version__} (arXiv stage-1 retrieval; python-requests)"
MAX_RETRY_AFTER_S = 300.0
"""Cap on a server's ``Retry-After`` (a misconfigured value must not stall a run for hours)."""

MAX_FEED_BYTES = 32 * MB
"""Cap on one API answer (a full 2,000-entry page is a few MB); enforced while it streams in."""

_THROTTLE_STATUSES = (429, 503)


# --------------------------------------------------------------------------- rate limiting


class RateLimiter:
    """One lock and the time of the last request, shared by every arXiv call of the process.

    :meth:`slot` holds the lock for the whole request, so there is never more
    than one connection, and first waits until ``gap`` seconds have passed since
    the previous request ended. Time is read from the caller's ``clock`` and
    waited with the caller's ``sleep``; if the recorded time is ahead of the
    clock (another clock recorded it), the full ``gap`` is waited.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.last: float | None = None

    @contextmanager
    def slot(
        self,
        gap: float,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> Iterator[None]:
        with self._lock:
            if self.last is not None and gap > 0:
                elapsed = clock() - self.last
                wait = gap if elapsed < 0 else gap - elapsed
                if wait > 0:
                    sleep(wait)
            try:
                yield
            finally:
                self.last = clock()

    def reset(self) -> None:
        """Forget the last request (tests)."""
        with self._lock:
            self.last = None


LIMITER = RateLimiter()
"""The process-wide limiter every :class:`~.arxiv.ArxivSource` uses."""


# --------------------------------------------------------------------------- retries


class _Retry(Exception):
    """Internal: this attempt failed in a way worth retrying."""

    def __init__(self, reason: str, status: int | None = None, retry_after: float = 0.0) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.retry_after = retry_after


def _retry_after(resp: requests.Response) -> float:
    return retry_after_seconds(resp.headers) or 0.0  # 0.0: none (an HTTP date too); the policy caps it


def _transient(exc: Exception) -> Verdict:
    """The retry policy's classifier: only :class:`_Retry` is worth another attempt."""
    return Verdict(True, exc.retry_after) if isinstance(exc, _Retry) else Verdict(False)


@dataclass
class _Failure:
    reason: str
    status: int | None = None
    history: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- requests


def request(
    session: requests.Session,
    url: str,
    consume: Callable[[requests.Response], Any],
    *,
    what: str,
    limiter: RateLimiter,
    delay_s: float,
    max_retries: int,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
    timeout_s: float,
) -> Any:
    """GET ``url`` under ``limiter`` with bounded, exponentially spaced retries.

    ``consume(response)`` runs while the limiter is held (so a streamed
    download is still the only connection); it may raise :class:`_Retry`.
    429/503 and other 5xx answers and connection failures are retried; once
    the retries run out they raise :class:`ArxivThrottled` or
    :class:`ArxivUnavailable`. Other 4xx answers raise at once
    (:class:`ArxivQueryError`, :class:`ArxivNotFound`, :class:`ArxivError`).
    """
    failure = _Failure("")
    # The policy decides the spacing before each retry (delay_s * 2**attempt, or Retry-After when
    # larger); the limiter waits it while holding its lock, so its "sleep" here only hands it over.
    gap = [delay_s]
    policy = RetryPolicy(max_retries=max_retries, backoff_s=2 * delay_s, backoff_max_s=None,
                         jitter=0.0, retry_after_max_s=MAX_RETRY_AFTER_S)  # fmt: skip

    def note(failed: FailedAttempt[Verdict]) -> None:
        exc = failed.error
        if isinstance(exc, _Retry):
            failure.reason, failure.status = exc.reason, exc.status
            failure.history.append(exc.reason)
            level = logging.INFO if failed.will_retry else logging.WARNING
            log.log(level, "arXiv %s %s: %s (attempt %d of %d)", what, url, exc.reason, failed.number,
                    policy.max_attempts)  # fmt: skip

    def attempt() -> Any:
        with limiter.slot(gap[0], clock, sleep):
            try:
                resp = session.get(url, timeout=timeout_s, stream=True, headers={"Accept-Encoding": "identity"})
            except (requests.exceptions.ConnectionError, requests.exceptions.Timeout) as exc:
                raise _Retry(f"connection error: {exc}") from exc
            with resp:
                status = resp.status_code
                if status in _THROTTLE_STATUSES or status >= 500:
                    raise _Retry(f"HTTP {status}", status, _retry_after(resp))
                if status >= 400:
                    _raise_for_client_error(url, resp, what)
                try:
                    return consume(resp)
                except (
                    requests.exceptions.ConnectionError,
                    requests.exceptions.Timeout,
                    requests.exceptions.ChunkedEncodingError,
                    urllib3.exceptions.HTTPError,
                ) as exc:
                    raise _Retry(f"connection error while reading: {exc}") from exc

    def space_next(seconds: float) -> None:
        gap[0] = seconds

    try:
        return policy.retrying(_transient, on_failure=note, sleep=space_next)(attempt)
    except _Retry:
        _give_up(url, failure, what, delay_s=delay_s, max_retries=max_retries)


def _raise_for_client_error(url: str, resp: requests.Response, what: str) -> None:
    status = resp.status_code
    body = resp.raw.read(CHUNK_BYTES, decode_content=False) or b""  # enough for a message, never a whole body
    if status == 400:
        message = api_error_message(body) or clean_text(body[:300].decode("utf-8", "replace")) or "bad request"
        raise ArxivQueryError(f"arXiv API rejected the {what} (HTTP 400): {message}", url=url)
    if status == 404:
        raise ArxivNotFound(f"arXiv has no such {what} (HTTP 404): {url}")
    snippet = clean_text(body[:200].decode("utf-8", "replace"))
    raise ArxivError(f"arXiv refused the {what} with HTTP {status}: {url}" + (f" ({snippet})" if snippet else ""))


def _give_up(url: str, failure: _Failure, what: str, *, delay_s: float, max_retries: int) -> None:
    attempts = max_retries + 1
    if failure.status in _THROTTLE_STATUSES:
        raise ArxivThrottled(
            f"arXiv is throttling us: HTTP {failure.status} for the {what} {url} on all {attempts} attempts "
            f"({max_retries} retries with exponential backoff from {delay_s:g}s). "
            "Retry later (arXiv asks for one request every 3 seconds), or use --base-url to point at a mirror.",
            status=failure.status or 0,
            retries=max_retries,
            url=url,
        )
    raise ArxivUnavailable(
        f"arXiv {what} failed after {attempts} attempts ({max_retries} retries): {failure.reason}. "
        f"URL: {url}. Retry later or use --base-url to point at a mirror."
    )


def read_feed_body(resp: requests.Response) -> bytes:
    """``consume`` for API queries: the body (at most :data:`MAX_FEED_BYTES`), retrying arXiv's plain-text
    "rate exceeded" answer."""
    body = b"".join(capped_chunks(resp, MAX_FEED_BYTES, "API answer"))
    stripped = body.lstrip()
    if not stripped.startswith(b"<") and b"rate exceeded" in stripped[:200].lower():
        # arXiv's throttle can come as a bare text body instead of a status code.
        raise _Retry("rate exceeded (plain-text answer)", 429, _retry_after(resp))
    return body


__all__ = ["LIMITER", "MAX_FEED_BYTES", "MAX_RETRY_AFTER_S", "USER_AGENT", "RateLimiter", "read_feed_body", "request"]
