"""A fake clock for the arXiv clients' rate limiter and retries: it moves only when slept on (or advanced by hand)
and records each sleep, so no test really waits."""

from __future__ import annotations


class FakeClock:
    def __init__(self, start: float = 1000.0) -> None:
        self.now = start
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(round(seconds, 9))
        self.now += seconds
