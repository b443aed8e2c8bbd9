"""Model tiers of IMProofBench (the paper's App. D, Table 1) and the grading priority they give.

Tier 1: current frontier models. Tier 2: reserved for command-line agents (e.g. Claude Code);
no model is in it yet. Tier 3: the previous generation with strong mathematical results.
Tier 4: legacy models kept as a baseline. Only tiers 1–3 are graded by humans, tier 1 first.
The generation parameters use Inspect's ``GenerateConfig`` names, so a harness can pass them
as they are (``GenerateConfig(**params)``).

A model is found in Table 1 by the id a user types, which is rarely the table's own: providers
publish a dated snapshot beside an undated alias (``gpt-5`` and ``gpt-5-2025-08-07``,
``claude-opus-4-1`` and ``claude-opus-4-1-20250805``, ``grok-4`` and ``grok-4-0709``). An id matches
an entry when, with its date suffix taken off, it names the same model; see :func:`match_model`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

MODEL_TIERS: dict[int, str] = {
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

# a snapshot suffix: OpenAI's -2025-08-07, Anthropic's -20250805, xAI's -0709, Google's -preview-06-05; and the
# moving aliases -latest, -preview and Anthropic's -0 (claude-sonnet-4-0); an alias is taken to name the table's
# snapshot, as it did when the paper ran
_SNAPSHOT = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8}|\d{4}|preview-\d{2}-\d{2}|exp-\d{4}|latest|preview|0)$")
_MOVING = ("latest", "preview", "0")

#: how an id matched: the table's own id; an undated alias of its dated id; a dated id of its undated alias;
#: a snapshot of the same model with another date than the table's (not the model the paper ran)
MATCHES = ("endpoint", "alias", "dated", "other snapshot")


@dataclass(frozen=True)
class Table1Match:
    entry: TierModel
    how: str  # one of MATCHES

    @property
    def paper_model(self) -> bool:
        """Whether the id names the model the paper ran (not another dated snapshot of it)."""
        return self.how != "other snapshot"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.entry.name, "endpoint": self.entry.endpoint, "match": self.how}


def model_id(model: str) -> str:
    """The provider's model id in ``model``: after the last provider prefix (``openai/``, ``openrouter/x-ai/``),
    lower case, a Vertex ``@date`` written ``-date``."""
    return model.rsplit("/", 1)[-1].strip().lower().replace("@", "-")


def split_snapshot(model_id_: str) -> tuple[str, str | None]:
    """(the id without its snapshot suffix, the suffix or None): ``gpt-5-2025-08-07`` -> (``gpt-5``, ``2025-08-07``)."""
    found = _SNAPSHOT.search(model_id_)
    if found is None or found.start() == 0:
        return model_id_, None
    return model_id_[: found.start()], found.group(1)


def match_model(model: str) -> Table1Match | None:
    """The Table 1 entry a model id names, and how; None for a model the table does not list."""
    given = model_id(model)
    for entry in MODELS:
        if given == entry.endpoint:
            return Table1Match(entry, "endpoint")
    base, date = split_snapshot(given)
    for entry in MODELS:
        entry_base, entry_date = split_snapshot(entry.endpoint)
        if base != entry_base:
            continue
        if date is None or date in _MOVING:
            return Table1Match(entry, "alias" if entry_date else "endpoint")
        return Table1Match(entry, "dated" if entry_date is None else "other snapshot")
    return None


def find_model(model: str) -> TierModel | None:
    """The Table 1 entry of a model (a dated id, an alias, after any provider prefix), or None."""
    found = match_model(model)
    return found.entry if found else None


def tier_of(model: str) -> int | None:
    """The model's tier, or None for a model that Table 1 does not list."""
    found = find_model(model)
    return found.tier if found else None


def generation_params(model: str) -> dict[str, Any]:
    """Table 1's generation parameters for the model (empty for unlisted ones)."""
    found = find_model(model)
    return dict(found.params) if found else {}


def paper_model_problems(model: str, generate: dict[str, Any] | None = None) -> list[str]:
    """Why ``model`` would not run with the paper's settings: not in Table 1, another snapshot than the table's, or
    a generation setting that changes one of Table 1's parameters. Empty when it would."""
    found = match_model(model)
    if found is None:
        listed = ", ".join(m.endpoint for m in MODELS)
        return [f"model {model}: Table 1 does not list it (its models: {listed}; dated ids and aliases of them match)"]
    if not found.paper_model:
        return [f"model {model}: another snapshot of {found.entry.name} than Table 1's {found.entry.endpoint}"]
    given = generate or {}
    params = found.entry.params
    changed = sorted(k for k, v in given.items() if k in params and params[k] != v)
    return [f"generation setting {k} = {given[k]!r} changes Table 1's {params[k]!r} for {found.entry.name}"
            for k in changed]


def human_graded(tier: int | None) -> bool:
    """Whether answers of a model in this tier go to human graders (tiers 1–3)."""
    return tier in HUMAN_GRADED_TIERS


def grading_priority(tier: int | None) -> int | None:
    """The order in which graders see answers: 1 (tier 1) first; None for tiers not graded by humans."""
    return HUMAN_GRADED_TIERS.index(tier) + 1 if human_graded(tier) else None
