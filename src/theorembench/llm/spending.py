"""What a command may spend: a cost cap, a forecast instead of calls, and the batch mode, for every model call.

One :class:`Spending` policy is in force for a command (``with spending(Spending(max_cost=5.0)):``); every
:class:`~theorembench.llm.client.LLM` made inside the block follows it, whichever method or stage made it:

* ``max_cost``: before a request is sent, the client reserves what the call is expected to cost (its prompt
  counted, its reply as the forecast expects it). Once the dollars spent plus those reserved by calls in flight
  would pass the cap, no new call starts: it raises :class:`CostCapReached`, a transient failure (the step or
  sample stays pending, so a rerun with a higher cap resumes where this one stopped) and no request is made or
  recorded. Once reached, the cap stays reached for the rest of the command.
* ``forecast``: no model is called. A call the cache holds is free; any other is counted by the
  :class:`~theorembench.llm.forecast.Forecast` (run it on a scratch copy of the store: the placeholder answers
  it gives are stored there so that the stages after it can run).
* ``batch``: requests go to the provider's batch API (see :mod:`theorembench.llm.batch`), at its batch price.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from theorembench.common.errors import InvalidSetting, UserError
from theorembench.llm.failures import LLMError

if TYPE_CHECKING:
    from theorembench.llm.forecast import Forecast

#: the price of a batched request relative to the same request sent alone (OpenAI, Anthropic and Google: half)
BATCH_PRICE_FACTOR = 0.5


class CostCapReached(LLMError):
    """No new call starts: the cap would be passed. Transient: the work it would have done stays pending."""

    def __init__(self, message: str):
        super().__init__("cost_cap", message, attempts=0)


class UnpricedModel(UserError):
    """A cost cap cannot hold for a model the price table does not know."""


@dataclass
class Spending:
    """The policy of one command (see the module's docstring). Shared by every client; safe across threads."""

    max_cost: float | None = None
    forecast: Forecast | None = None
    batch: bool = False
    resume_batches: bool = True
    spent: float = 0.0
    reserved: float = 0.0
    calls_refused: int = 0
    cap_reached: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        if self.max_cost is not None and not self.max_cost > 0:
            raise InvalidSetting("max_cost", f"must be a positive number of US dollars, got {self.max_cost}")

    @property
    def price_factor(self) -> float:
        return BATCH_PRICE_FACTOR if self.batch else 1.0

    def reserve(self, model: str, expected_cost: float | None) -> float:
        """Hold ``expected_cost`` for a call about to start, or raise :class:`CostCapReached`."""
        if self.max_cost is None:
            return 0.0
        if expected_cost is None:
            raise UnpricedModel(f"a cost cap needs a price for {model}: add it to the price table "
                                "($THEOREMBENCH_PRICES or <home>/prices.toml), or run without the cap")  # fmt: skip
        with self._lock:
            if self.cap_reached or self.spent + self.reserved + expected_cost > self.max_cost:
                self.cap_reached = True
                self.calls_refused += 1
                raise CostCapReached(f"the cost cap of ${self.max_cost:.4f} is reached: ${self.spent:.4f} spent, "
                                     f"${self.reserved:.4f} in flight; this call (about ${expected_cost:.4f}) "
                                     "was not started")  # fmt: skip
            self.reserved += expected_cost
        return expected_cost

    def settle(self, reservation: float, cost: float | None) -> None:
        """A call that held ``reservation`` ended, having cost ``cost`` (None: nothing was paid)."""
        with self._lock:
            self.reserved = max(0.0, self.reserved - reservation)
            self.spent += cost or 0.0

    def summary(self) -> dict[str, Any]:
        return {"max_cost_usd": self.max_cost, "spent_usd": round(self.spent, 6), "cap_reached": self.cap_reached,
                "calls_not_started": self.calls_refused, "batch": self.batch}  # fmt: skip


_CURRENT: ContextVar[Spending | None] = ContextVar("theorembench_spending", default=None)
_PROCESS: list[Spending] = []  # the policy of the block entered last, for threads that do not inherit the context


def current_spending() -> Spending:
    """The policy in force: the innermost ``spending`` block's, else no cap, no forecast, no batch."""
    found = _CURRENT.get()
    if found is None and _PROCESS:
        found = _PROCESS[-1]
    return found if found is not None else Spending()


@contextmanager
def spending(policy: Spending) -> Iterator[Spending]:
    """Every client made inside the block follows ``policy``."""
    token = _CURRENT.set(policy)
    _PROCESS.append(policy)
    try:
        yield policy
    finally:
        _PROCESS.remove(policy)
        _CURRENT.reset(token)


__all__ = ["BATCH_PRICE_FACTOR", "CostCapReached", "Spending", "UnpricedModel", "current_spending", "spending"]
