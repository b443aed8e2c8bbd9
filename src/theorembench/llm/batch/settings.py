"""When a batcher hands its queue to the provider, and how often it asks whether a batch is done.

A batch goes out when ``max_size`` requests (or ``max_bytes`` of request lines) are queued, when no new
request came for ``idle_s`` seconds (the run has queued every call it can make now), or ``max_wait_s``
after its first request, whichever comes first. Each comes from the environment, so a command line
and a test set them alike: ``THEOREMBENCH_BATCH_MAX_SIZE``, ``THEOREMBENCH_BATCH_MAX_BYTES``,
``THEOREMBENCH_BATCH_IDLE_S``, ``THEOREMBENCH_BATCH_MAX_WAIT_S`` and ``THEOREMBENCH_BATCH_POLL_S``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from theorembench.common.errors import UserError

_ENV = {
    "max_size": "THEOREMBENCH_BATCH_MAX_SIZE",
    "max_bytes": "THEOREMBENCH_BATCH_MAX_BYTES",
    "idle_s": "THEOREMBENCH_BATCH_IDLE_S",
    "max_wait_s": "THEOREMBENCH_BATCH_MAX_WAIT_S",
    "poll_s": "THEOREMBENCH_BATCH_POLL_S",
}


@dataclass(frozen=True)
class BatchSettings:
    max_size: int = 10_000  # requests per batch (OpenAI takes 50,000, Anthropic 100,000)
    max_bytes: int = 150_000_000  # request lines per batch (OpenAI takes 200 MB, Anthropic 256 MB)
    idle_s: float = 2.0
    max_wait_s: float = 60.0
    poll_s: float = 30.0

    @classmethod
    def from_env(cls) -> BatchSettings:
        values: dict[str, float | int] = {}
        for name, var in _ENV.items():
            raw = os.environ.get(var)
            if raw is None or not raw.strip():
                continue
            kind = int if name in ("max_size", "max_bytes") else float
            try:
                value = kind(raw)
            except ValueError:
                raise UserError(f"{var} must be a {'whole ' if kind is int else ''}number, got {raw!r}") from None
            if not value > 0:
                raise UserError(f"{var} must be positive, got {raw!r}")
            values[name] = value
        return cls(**values)  # type: ignore[arg-type]
