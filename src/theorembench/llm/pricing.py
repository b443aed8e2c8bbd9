"""Token prices, read from a TOML table the user can edit."""

from __future__ import annotations

import fnmatch
import os
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from theorembench.common.errors import UserError
from theorembench.common.paths import home


@dataclass(frozen=True)
class Price:
    input: float
    output: float
    cached_input: float | None = None

    def cost(self, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0) -> float:
        cached = min(cached_tokens, prompt_tokens) if self.cached_input is not None else 0
        fresh = prompt_tokens - cached
        total = fresh * self.input + completion_tokens * self.output
        if cached:
            total += cached * (self.cached_input or 0.0)
        return total / 1_000_000


class PriceError(UserError, ValueError):
    pass


def _parse(text: str, source: str) -> dict[str, Price]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PriceError(f"{source}: not valid TOML: {exc}") from exc
    table = data.get("models", {})
    if not isinstance(table, dict):
        raise PriceError(f"{source}: [models] must be a table")
    prices: dict[str, Price] = {}
    for name, entry in table.items():
        if not isinstance(entry, dict) or "input" not in entry or "output" not in entry:
            raise PriceError(f"{source}: model {name!r} needs 'input' and 'output' prices")
        try:
            prices[name] = Price(
                float(entry["input"]),
                float(entry["output"]),
                None if entry.get("cached_input") is None else float(entry["cached_input"]),
            )
        except (TypeError, ValueError) as exc:
            raise PriceError(f"{source}: model {name!r}: prices must be numbers") from exc
    return prices


def user_price_file() -> Path:
    env = os.environ.get("THEOREMBENCH_PRICES")
    return Path(env).expanduser() if env else home() / "prices.toml"


class PriceTable:
    """Built-in prices overlaid with the user's file; looks up a model by name."""

    def __init__(self, prices: dict[str, Price], sources: list[str]):
        self.prices = prices
        self.sources = sources

    @classmethod
    def load(cls, extra: str | Path | None = None) -> PriceTable:
        builtin = resources.files("theorembench.llm").joinpath("prices.toml").read_text()
        prices = _parse(builtin, "built-in prices.toml")
        sources = ["built-in"]
        for path in [user_price_file(), Path(extra) if extra else None]:
            if path is not None and path.is_file():
                prices.update(_parse(path.read_text(), str(path)))
                sources.append(str(path))
        return cls(prices, sources)

    def lookup(self, model: str) -> Price | None:
        if model in self.prices:
            return self.prices[model]
        matches = [p for p in self.prices if fnmatch.fnmatchcase(model, p)]
        if not matches:
            return None
        return self.prices[max(matches, key=len)]

    def cost(
        self, model: str, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0
    ) -> float | None:
        price = self.lookup(model)
        if price is None:
            return None
        return price.cost(prompt_tokens, completion_tokens, cached_tokens)
