"""The one retry policy of the project, built on ``tenacity``.

A :class:`RetryPolicy` says how often and how patiently a failing operation is
tried again: at most ``max_retries`` retries after the first attempt, waiting an
exponential backoff (``backoff_s * 2**(n-1)`` after the n-th failed attempt, capped
at ``backoff_max_s``, scaled down by up to ``jitter``) or the failure's own
``Retry-After`` when that is longer (capped at ``retry_after_max_s``).

Whether a failure is worth retrying is not the policy's business: each caller
passes a *classifier* that looks at the exception and answers with a
:class:`Verdict` (or any object with ``retryable`` and ``retry_after``
attributes, or a plain bool). :meth:`RetryPolicy.retrying` and
:meth:`RetryPolicy.async_retrying` turn policy + classifier into a
``tenacity.Retrying`` / ``tenacity.AsyncRetrying``; an ``on_failure`` hook sees
every failed attempt (retried or not) as a :class:`FailedAttempt`, and ``sleep``
replaces the real wait (tests, or a caller that waits elsewhere). When the
attempts run out, or a failure is not retryable, the last exception itself is
raised (never ``tenacity.RetryError``). Cancellation, ``KeyboardInterrupt`` and
``SystemExit`` are never classified, recorded or retried.

The base backoff and its cap default to ``THEOREMBENCH_RETRY_BACKOFF`` (seconds,
default 1) and ``THEOREMBENCH_RETRY_BACKOFF_MAX`` (seconds, default 60), read when
a policy is made.
"""

from __future__ import annotations

import math
import os
import random
import weakref
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

import tenacity

BACKOFF_ENV = "THEOREMBENCH_RETRY_BACKOFF"
BACKOFF_MAX_ENV = "THEOREMBENCH_RETRY_BACKOFF_MAX"


class Judgement(Protocol):
    """What a classifier says about one failure."""

    @property
    def retryable(self) -> bool: ...

    @property
    def retry_after(self) -> float | None: ...


@dataclass(frozen=True)
class Verdict:
    """The plain :class:`Judgement`: retry or not, and the delay the failure asks for (seconds)."""

    retryable: bool
    retry_after: float | None = None


J = TypeVar("J", bound=Judgement)


@dataclass(frozen=True)
class FailedAttempt(Generic[J]):
    """One failed attempt, as the ``on_failure`` hook sees it."""

    number: int
    """1 for the first attempt."""
    error: Exception
    judgement: J
    """The classifier's answer for ``error``."""
    will_retry: bool
    """Whether another attempt follows (retryable and attempts left)."""

    @property
    def retryable(self) -> bool:
        return self.judgement.retryable

    @property
    def retry_after(self) -> float | None:
        return self.judgement.retry_after


def _env_seconds(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number of seconds, got {raw!r}") from None
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number of seconds >= 0, got {raw!r}")
    return value


def retry_after_seconds(headers: Mapping[str, Any] | Any | None) -> float | None:
    """The delay an HTTP answer asks for: ``retry-after-ms`` or ``Retry-After`` in seconds (>= 0).

    Only numeric values are understood; an HTTP date, a missing or a malformed
    header gives None (the caller's own backoff then applies).
    """
    if headers is None or not hasattr(headers, "get"):
        return None
    for names, scale in ((("retry-after-ms", "Retry-After-Ms"), 0.001), (("retry-after", "Retry-After"), 1.0)):
        for name in names:
            value = headers.get(name)
            if value is None:
                continue
            try:
                seconds = float(str(value).strip()) * scale
            except ValueError:
                break
            if math.isfinite(seconds):
                return max(0.0, seconds)
            break
    return None


def _judge(classify: Callable[[Exception], Any], exc: Exception) -> Any:
    judgement = classify(exc)
    return Verdict(judgement) if isinstance(judgement, bool) else judgement


@dataclass(frozen=True)
class RetryPolicy:
    """How many retries, and how long to wait before each."""

    max_retries: int = 3
    backoff_s: float = field(default_factory=lambda: _env_seconds(BACKOFF_ENV, 1.0))
    """The wait after the first failed attempt (before jitter); it doubles after each further one."""
    backoff_max_s: float | None = field(default_factory=lambda: _env_seconds(BACKOFF_MAX_ENV, 60.0))
    """Cap on the exponential backoff; None for none."""
    jitter: float = 0.5
    """The backoff is multiplied by a uniform factor in ``[1 - jitter, 1]``; 0 for none."""
    retry_after_max_s: float | None = None
    """Cap on a failure's ``Retry-After``; None means ``backoff_max_s``."""

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {self.max_retries}")
        if not math.isfinite(self.backoff_s) or self.backoff_s < 0:
            raise ValueError(f"backoff_s must be a finite number >= 0, got {self.backoff_s}")
        if self.backoff_max_s is not None and self.backoff_max_s < 0:
            raise ValueError(f"backoff_max_s must be >= 0, got {self.backoff_max_s}")
        if not 0.0 <= self.jitter <= 1.0:
            raise ValueError(f"jitter must be between 0 and 1, got {self.jitter}")
        if self.retry_after_max_s is not None and self.retry_after_max_s < 0:
            raise ValueError(f"retry_after_max_s must be >= 0, got {self.retry_after_max_s}")

    @property
    def max_attempts(self) -> int:
        return self.max_retries + 1

    def delay(self, failed_attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt number ``failed_attempt`` (1 for the first)."""
        wait = self.backoff_s * 2.0 ** min(max(failed_attempt - 1, 0), 1000)
        if self.backoff_max_s is not None:
            wait = min(wait, self.backoff_max_s)
        if self.jitter:
            wait *= random.uniform(1.0 - self.jitter, 1.0)
        if retry_after is not None and retry_after == retry_after:  # not NaN
            cap = self.retry_after_max_s if self.retry_after_max_s is not None else self.backoff_max_s
            asked = max(0.0, retry_after)
            wait = max(wait, asked if cap is None else min(asked, cap))
        return wait

    def _controls(self, classify: Callable[[Exception], Any],
                  on_failure: Callable[[FailedAttempt[Any]], Any] | None) -> dict[str, Any]:  # fmt: skip
        judged: weakref.WeakKeyDictionary[tenacity.RetryCallState, Any] = weakref.WeakKeyDictionary()

        def retry(state: tenacity.RetryCallState) -> bool:
            outcome = state.outcome
            exc = outcome.exception() if outcome is not None else None
            if not isinstance(exc, Exception):  # a result, or cancellation/interrupt: never retried
                return False
            judgement = _judge(classify, exc)
            will_retry = bool(judgement.retryable) and state.attempt_number <= self.max_retries
            judged[state] = judgement
            if on_failure is not None:
                on_failure(FailedAttempt(state.attempt_number, exc, judgement, will_retry))
            return bool(judgement.retryable)

        def wait(state: tenacity.RetryCallState) -> float:
            judgement = judged.get(state)
            return self.delay(state.attempt_number, judgement.retry_after if judgement is not None else None)

        return {
            "retry": retry,
            "wait": wait,
            "stop": tenacity.stop_after_attempt(self.max_attempts),
            "reraise": True,
        }

    def retrying(
        self,
        classify: Callable[[Exception], Any],
        *,
        on_failure: Callable[[FailedAttempt[Any]], Any] | None = None,
        sleep: Callable[[float], None] | None = None,
    ) -> tenacity.Retrying:
        """A ``tenacity.Retrying`` for synchronous code; ``sleep`` defaults to ``time.sleep``."""
        controls = self._controls(classify, on_failure)
        if sleep is not None:
            controls["sleep"] = sleep
        return tenacity.Retrying(**controls)

    def async_retrying(
        self,
        classify: Callable[[Exception], Any],
        *,
        on_failure: Callable[[FailedAttempt[Any]], Any] | None = None,
        sleep: Callable[[float], Awaitable[None]] | None = None,
    ) -> tenacity.AsyncRetrying:
        """A ``tenacity.AsyncRetrying`` for coroutines; ``sleep`` defaults to ``asyncio.sleep``."""
        controls = self._controls(classify, on_failure)
        if sleep is not None:
            controls["sleep"] = sleep
        return tenacity.AsyncRetrying(**controls)


__all__ = [
    "BACKOFF_ENV",
    "BACKOFF_MAX_ENV",
    "FailedAttempt",
    "Judgement",
    "RetryPolicy",
    "Verdict",
    "retry_after_seconds",
]
