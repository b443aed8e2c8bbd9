"""The shared retry policy (theorembench.common.retry): waits, bounds, Retry-After, the failure hook.

No test really sleeps: every Retrying gets a sleep that only records what it was asked to wait.
"""

from __future__ import annotations

import asyncio

import pytest
import requests.structures
import tenacity

from theorembench.common.retry import FailedAttempt, RetryPolicy, Verdict, retry_after_seconds


class Transient(Exception):
    def __init__(self, retry_after: float | None = None) -> None:
        super().__init__(f"transient (retry after {retry_after})")
        self.retry_after = retry_after


class Fatal(Exception):
    pass


def judge(exc: Exception) -> Verdict:
    if isinstance(exc, Transient):
        return Verdict(True, exc.retry_after)
    return Verdict(False)


class Flaky:
    """Fails with the given exceptions in turn, then answers ``"ok"``; counts its calls."""

    def __init__(self, *errors: BaseException) -> None:
        self.errors = list(errors)
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


def fixed(**kw: object) -> RetryPolicy:
    """A policy without jitter, so that its waits are exact."""
    kw.setdefault("backoff_s", 1.0)
    kw.setdefault("backoff_max_s", 60.0)
    return RetryPolicy(jitter=0.0, **kw)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------ the waits


def test_backoff_doubles_and_is_capped():
    policy = fixed(backoff_s=0.5, backoff_max_s=3.0)
    assert [policy.delay(n) for n in range(1, 6)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    assert fixed(backoff_s=2.0, backoff_max_s=None).delay(11) == 2048.0


def test_jitter_scales_the_backoff_down_by_at_most_its_share():
    policy = RetryPolicy(backoff_s=4.0, backoff_max_s=None, jitter=0.5)
    waits = [policy.delay(2) for _ in range(200)]
    assert all(4.0 <= w <= 8.0 for w in waits)
    assert len(set(waits)) > 1


def test_retry_after_is_a_floor_and_is_capped():
    policy = fixed(backoff_s=1.0, backoff_max_s=10.0)
    assert policy.delay(1, retry_after=7.0) == 7.0  # longer than the backoff: honoured
    assert policy.delay(3, retry_after=0.5) == 4.0  # shorter: the backoff still applies
    assert policy.delay(1, retry_after=3600.0) == 10.0  # capped by backoff_max_s by default
    assert policy.delay(1, retry_after=-5.0) == 1.0
    own_cap = fixed(backoff_s=1.0, backoff_max_s=None, retry_after_max_s=300.0)
    assert own_cap.delay(1, retry_after=3600.0) == 300.0


def test_defaults_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("THEOREMBENCH_RETRY_BACKOFF", "0.25")
    monkeypatch.setenv("THEOREMBENCH_RETRY_BACKOFF_MAX", "2")
    policy = RetryPolicy()
    assert (policy.max_retries, policy.backoff_s, policy.backoff_max_s) == (3, 0.25, 2.0)
    monkeypatch.delenv("THEOREMBENCH_RETRY_BACKOFF")
    monkeypatch.delenv("THEOREMBENCH_RETRY_BACKOFF_MAX")
    assert (RetryPolicy().backoff_s, RetryPolicy().backoff_max_s) == (1.0, 60.0)
    monkeypatch.setenv("THEOREMBENCH_RETRY_BACKOFF", "soon")
    with pytest.raises(ValueError, match="THEOREMBENCH_RETRY_BACKOFF"):
        RetryPolicy()


@pytest.mark.parametrize("bad", [{"max_retries": -1}, {"backoff_s": -1.0}, {"jitter": 1.5}])
def test_invalid_settings_are_refused(bad):
    with pytest.raises(ValueError):
        RetryPolicy(**bad)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------ sync Retrying


def test_transient_failures_are_retried_with_the_policy_waits():
    sleeps: list[float] = []
    flaky = Flaky(Transient(), Transient())
    retrying = fixed(max_retries=3).retrying(judge, sleep=sleeps.append)
    assert isinstance(retrying, tenacity.Retrying)
    assert retrying(flaky) == "ok"
    assert flaky.calls == 3 and sleeps == [1.0, 2.0]


def test_attempts_are_bounded_and_the_last_error_itself_is_raised():
    sleeps: list[float] = []
    seen: list[FailedAttempt[Verdict]] = []
    errors = [Transient() for _ in range(10)]
    flaky = Flaky(*errors)
    retrying = fixed(max_retries=2).retrying(judge, on_failure=seen.append, sleep=sleeps.append)
    with pytest.raises(Transient) as info:
        retrying(flaky)
    assert info.value is errors[2]  # not tenacity.RetryError
    assert flaky.calls == 3 and sleeps == [1.0, 2.0]
    assert [(f.number, f.error, f.retryable, f.will_retry) for f in seen] == [
        (1, errors[0], True, True), (2, errors[1], True, True), (3, errors[2], True, False),
    ]  # fmt: skip


def test_no_retries_means_one_attempt():
    sleeps: list[float] = []
    flaky = Flaky(Transient(), Transient())
    with pytest.raises(Transient):
        fixed(max_retries=0).retrying(judge, sleep=sleeps.append)(flaky)
    assert flaky.calls == 1 and sleeps == []


def test_a_non_retryable_error_is_raised_at_once_and_still_seen_by_the_hook():
    sleeps: list[float] = []
    seen: list[FailedAttempt[Verdict]] = []
    fatal = Fatal("no")
    flaky = Flaky(Transient(), fatal, Transient())
    with pytest.raises(Fatal) as info:
        fixed(max_retries=5).retrying(judge, on_failure=seen.append, sleep=sleeps.append)(flaky)
    assert info.value is fatal
    assert flaky.calls == 2 and sleeps == [1.0]
    assert [(f.number, f.retryable, f.will_retry) for f in seen] == [(1, True, True), (2, False, False)]


def test_the_failures_retry_after_is_honoured_and_capped():
    sleeps: list[float] = []
    flaky = Flaky(Transient(retry_after=7.0), Transient(retry_after=0.1), Transient(retry_after=9999.0))
    policy = fixed(max_retries=3, backoff_s=1.0, backoff_max_s=None, retry_after_max_s=30.0)
    assert policy.retrying(judge, sleep=sleeps.append)(flaky) == "ok"
    assert sleeps == [7.0, 2.0, 30.0]


def test_a_bool_classifier_and_the_attempt_loop_form():
    sleeps: list[float] = []
    flaky = Flaky(Transient(), Transient())
    retrying = fixed(max_retries=4).retrying(lambda exc: isinstance(exc, Transient), sleep=sleeps.append)
    for attempt in retrying:
        with attempt:
            result = flaky()
    assert result == "ok" and flaky.calls == 3 and sleeps == [1.0, 2.0]


def test_interrupts_are_neither_classified_nor_retried():
    classified: list[BaseException] = []

    def spy(exc: Exception) -> Verdict:
        classified.append(exc)
        return Verdict(True)

    flaky = Flaky(KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        fixed().retrying(spy, sleep=lambda s: None)(flaky)
    assert flaky.calls == 1 and classified == []


# ------------------------------------------------------------------------------ async


def test_async_retrying_uses_the_injected_sleep_and_bounds():
    sleeps: list[float] = []
    seen: list[FailedAttempt[Verdict]] = []

    async def record(seconds: float) -> None:
        sleeps.append(seconds)

    calls = 0

    async def call() -> str:
        nonlocal calls
        calls += 1
        raise Transient(retry_after=5.0 if calls == 1 else None)

    retrying = fixed(max_retries=2).async_retrying(judge, on_failure=seen.append, sleep=record)
    assert isinstance(retrying, tenacity.AsyncRetrying)
    with pytest.raises(Transient):
        asyncio.run(retrying(call))
    assert calls == 3 and sleeps == [5.0, 2.0]
    assert [f.will_retry for f in seen] == [True, True, False]


def test_async_cancellation_is_not_retried():
    seen: list[FailedAttempt[Verdict]] = []
    calls = 0

    async def call() -> str:
        nonlocal calls
        calls += 1
        raise asyncio.CancelledError()

    async def main() -> None:
        await fixed().async_retrying(lambda exc: True, on_failure=seen.append, sleep=asyncio.sleep)(call)

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(main())
    assert calls == 1 and seen == []


# ------------------------------------------------------------------------------ Retry-After headers


def test_retry_after_headers():
    assert retry_after_seconds({"Retry-After": "7"}) == 7.0
    assert retry_after_seconds({"retry-after": " 1.5 "}) == 1.5
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after_seconds(requests.structures.CaseInsensitiveDict({"RETRY-AFTER": "3"})) == 3.0
    assert retry_after_seconds({"Retry-After": "-4"}) == 0.0
    assert retry_after_seconds({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}) is None
    assert retry_after_seconds({}) is None
    assert retry_after_seconds(None) is None
