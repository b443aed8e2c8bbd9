"""Model tiers of IMProofBench (the paper's App. D, Table 1) and the grading priority they give.

Tier 1: current frontier models. Tier 2: reserved for command-line agents (e.g. Claude Code);
no model is in it yet. Tier 3: the previous generation with strong mathematical results.
Tier 4: legacy models kept as a baseline. Only tiers 1–3 are graded by humans, tier 1 first.
The generation parameters use Inspect's ``GenerateConfig`` names, so a harness can pass them
as they are (``GenerateConfig(**params)``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

TIERS: dict[int, str] = {
    1: "frontier models with state-of-the-art mathematical reasoning",
    2: "reserved for command-line agents (not implemented yet)",
    3: "previous-generation models with strong mathematical performance",
    4: "legacy models, kept for comparison and as a baseline",
}
HUMAN_GRADED_TIERS = (1, 2, 3)


@dataclass(frozen=True)
class TierModel:
    name: str  # the paper's name
    endpoint: str  # the provider's model id
    tier: int
    params: dict[str, Any] = field(default_factory=dict)


MODELS: tuple[TierModel, ...] = (
    TierModel("Claude Opus 4.1", "claude-opus-4-1-20250805", 1,
              {"cache_prompt": "auto", "max_tokens": 32000, "reasoning_tokens": 31000}),
    TierModel("GPT-5", "gpt-5", 1, {"reasoning_effort": "high", "reasoning_summary": "auto"}),
    TierModel("Gemini 2.5 Pro", "gemini-2.5-pro", 1, {"reasoning_tokens": 32768}),
    TierModel("Grok 4", "grok-4-0709", 1),
    TierModel("o4-mini", "o4-mini-2025-04-16", 3, {"reasoning_effort": "high", "reasoning_summary": "auto"}),
    TierModel("Claude Sonnet 4", "claude-sonnet-4-20250514", 3,
              {"cache_prompt": "auto", "max_tokens": 64000, "reasoning_tokens": 63000}),
    TierModel("GPT-4o", "gpt-4o-2024-11-20", 3),
    TierModel("Gemini 2.5 Flash", "gemini-2.5-flash", 3, {"reasoning_tokens": 24576}),
    TierModel("Grok 3", "grok-3", 3),
    TierModel("o3", "o3-2025-04-16", 4, {"reasoning_effort": "high", "reasoning_history": "auto",
                                          "reasoning_summary": "auto", "reasoning_tokens": 100000}),
)  # fmt: skip


def find_model(model: str) -> TierModel | None:
    """The Table 1 entry of a model, by its endpoint id alone or after a provider prefix (``openai/gpt-5``)."""
    name = model.rsplit("/", 1)[-1].strip().lower()
    return next((m for m in MODELS if m.endpoint == name), None)


def tier_of(model: str) -> int | None:
    """The model's tier, or None for a model that Table 1 does not list."""
    found = find_model(model)
    return found.tier if found else None


def generation_params(model: str) -> dict[str, Any]:
    """Table 1's generation parameters for the model (empty for unlisted ones)."""
    found = find_model(model)
    return dict(found.params) if found else {}


def human_graded(tier: int | None) -> bool:
    """Whether answers of a model in this tier go to human graders (tiers 1–3)."""
    return tier in HUMAN_GRADED_TIERS


def grading_priority(tier: int | None) -> int | None:
    """The order in which graders see answers: 1 (tier 1) first; None for tiers not graded by humans."""
    return HUMAN_GRADED_TIERS.index(tier) + 1 if human_graded(tier) else None
