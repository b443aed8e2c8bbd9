"""A command's cost before it is spent: the calls it would make, their tokens and dollars, per stage and model.

Under ``Spending(forecast=Forecast(...))`` (see :mod:`spending`) the client calls no model. A call the cache
holds costs nothing and is counted as cached; any other is planned here:

* **input tokens**: the prompt counted with the provider's tokenizer where one is installed, else estimated
  (:mod:`tokens`); an estimate widens the range to 0.8–1.25 times the count;
* **output tokens**: from the store's history of that model and stage (the 10th percentile, the mean and the
  90th percentile of its replies' lengths), else from the token cap (a quarter of it, the cap, the cap);
* **dollars**: from the price table (times the batch factor under ``--batch``), low–expected–high.

The client then answers with a placeholder (the stage's latest stored answer, else the smallest reply its
schema accepts, else an empty text) so that the stages after it run and are counted too; run a forecast on a
scratch copy of the store (:func:`theorembench.store.snapshot.snapshot_to`), which keeps those placeholders.
"""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass
from typing import Any

from theorembench.llm.pricing import PriceTable
from theorembench.llm.tokens import count_prompt
from theorembench.store.db import Store
from theorembench.store.history import OutputHistory, latest_answer, output_history

#: the reply length assumed for a call that sets no token cap and has no history
DEFAULT_OUTPUT_CAP = 4096
ESTIMATE_RANGE = (0.8, 1.25)  # the range of an estimated (not tokenized) prompt count
MIN_HISTORY = 1  # replies needed before the history, not the cap, says how long a reply is


@dataclass(frozen=True)
class CallPlan:
    """One call's expected tokens: the prompt (exact or estimated) and the reply's low, expected and high length."""

    input_tokens: int
    exact: bool
    output_low: float
    output_expected: float
    output_high: float
    output_from: str  # "history" | "cap"

    def input_range(self) -> tuple[float, float]:
        if self.exact:
            return float(self.input_tokens), float(self.input_tokens)
        return self.input_tokens * ESTIMATE_RANGE[0], self.input_tokens * ESTIMATE_RANGE[1]


def plan_call(provider: str, model: str, request: Any, max_tokens: int | None,
              history: OutputHistory | None) -> CallPlan:  # fmt: skip
    """What one call is expected to take, from its request, its token cap and the stage's history."""
    tokens, exact = count_prompt(provider, model, request)
    cap = float(max_tokens or DEFAULT_OUTPUT_CAP)
    if history is not None and history.n >= MIN_HISTORY:
        return CallPlan(tokens, exact, min(history.low, cap), min(history.mean, cap), min(history.high, cap),
                        "history")  # fmt: skip
    return CallPlan(tokens, exact, cap / 4, cap, cap, "cap")


def reserve_cost(prices: PriceTable, model: str, plan: CallPlan, factor: float = 1.0) -> float | None:
    """The most a planned call is expected to cost (its high input and output), for the cost cap; None: unpriced."""
    price = prices.lookup(model)
    if price is None:
        return None
    return factor * price.cost(round(plan.input_range()[1]), round(max(plan.output_high, plan.output_expected)))


@dataclass
class ForecastRow:
    stage: str
    model: str
    calls: int = 0
    cached: int = 0
    input_tokens: int = 0
    input_exact: bool = True
    output_low: float = 0.0
    output_expected: float = 0.0
    output_high: float = 0.0
    output_from: str = ""
    cost_low: float | None = 0.0
    cost_expected: float | None = 0.0
    cost_high: float | None = 0.0


class Forecast:
    """The tally of a forecast run (safe across threads)."""

    def __init__(self, prices: PriceTable | None = None, price_factor: float = 1.0):
        self.prices = prices or PriceTable.load()
        self.price_factor = price_factor
        self._rows: dict[tuple[str, str], ForecastRow] = {}
        self._history: dict[tuple[str, str], OutputHistory | None] = {}
        self._lock = threading.Lock()

    def _row(self, stage: str, model: str) -> ForecastRow:
        return self._rows.setdefault((stage, model), ForecastRow(stage, model))

    def history(self, store: Store, model: str, purpose: str) -> OutputHistory | None:
        """The stage's reply lengths, read once (before any placeholder of this forecast is stored)."""
        key = (model, purpose)
        if key not in self._history:
            self._history[key] = output_history(store, model, purpose)
        return self._history[key]

    def cached(self, stage: str, model: str) -> None:
        with self._lock:
            row = self._row(stage, model)
            row.calls += 1
            row.cached += 1

    def plan(self, store: Store, provider: str, model: str, stage: str, request: Any,
             max_tokens: int | None) -> CallPlan:  # fmt: skip
        """Count one call that would be made."""
        plan = plan_call(provider, model, request, max_tokens, self.history(store, model, stage))
        price = self.prices.lookup(model)
        low_in, high_in = plan.input_range()
        with self._lock:
            row = self._row(stage, model)
            row.calls += 1
            row.input_tokens += plan.input_tokens
            row.input_exact = row.input_exact and plan.exact
            row.output_low += plan.output_low
            row.output_expected += plan.output_expected
            row.output_high += plan.output_high
            row.output_from = plan.output_from if row.output_from in ("", plan.output_from) else "history+cap"
            if price is None:
                row.cost_low = row.cost_expected = row.cost_high = None
            elif row.cost_low is not None:
                f = self.price_factor
                row.cost_low += f * price.cost(round(low_in), round(plan.output_low))
                row.cost_expected = (row.cost_expected or 0.0) + f * price.cost(plan.input_tokens,
                                                                               round(plan.output_expected))
                row.cost_high = (row.cost_high or 0.0) + f * price.cost(round(high_in), round(plan.output_high))
        return plan

    def placeholder(self, store: Store, stage: str, model: str, schema: dict[str, Any] | None) -> tuple[str, Any]:
        """A stand-in answer (text, payload) for a call not made, so that the stages after it run."""
        row = latest_answer(store, stage, model)
        if row is not None:
            response = json.loads(row["response"]) if row["response"] else {}
            return row["response_text"] or "", response.get("payload")
        if schema is not None:
            return json.dumps(minimal_instance(schema)), None
        return "", None

    # -- reports -----------------------------------------------------------------

    def rows(self) -> list[ForecastRow]:
        return [self._rows[k] for k in sorted(self._rows)]

    def totals(self) -> dict[str, Any]:
        rows = self.rows()
        priced = all(r.cost_low is not None for r in rows)

        def total(name: str) -> float | None:
            return round(sum(getattr(r, name) for r in rows), 6) if priced else None

        return {"calls": sum(r.calls for r in rows), "cached": sum(r.cached for r in rows),
                "to_make": sum(r.calls - r.cached for r in rows),
                "input_tokens": sum(r.input_tokens for r in rows),
                "input_exact": all(r.input_exact for r in rows),
                "output_tokens_expected": round(sum(r.output_expected for r in rows)),
                "cost_low_usd": total("cost_low"), "cost_expected_usd": total("cost_expected"),
                "cost_high_usd": total("cost_high"), "price_factor": self.price_factor}  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        return {"rows": [asdict(r) for r in self.rows()], "totals": self.totals(),
                "prices": self.prices.sources}  # fmt: skip


def minimal_instance(schema: dict[str, Any]) -> Any:
    """The smallest value a JSON schema accepts, as far as a simple reading of it goes (for a placeholder)."""
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for combinator in ("anyOf", "oneOf", "allOf"):
        if schema.get(combinator):
            return minimal_instance(schema[combinator][0])
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        return {name: minimal_instance(props.get(name, {})) for name in schema.get("required", [])}
    if kind == "array":
        return [minimal_instance(schema.get("items", {})) for _ in range(int(schema.get("minItems", 0)))]
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return "x" * int(schema.get("minLength", 0))


__all__ = ["DEFAULT_OUTPUT_CAP", "CallPlan", "Forecast", "ForecastRow", "minimal_instance", "plan_call",
           "reserve_cost"]
