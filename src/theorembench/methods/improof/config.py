"""Settings of an IMProofBench harness run, checked before any work, and their digest (the pipeline name)."""

from __future__ import annotations

import shutil
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from theorembench.common.digest import json_digest
from theorembench.common.errors import UserError
from theorembench.methods.improof.prompts import prompt_texts

TOOLS = ("python", "bash", "sage", "search")
MODES = ("agentic", "single-turn")


class HarnessSettings(BaseModel):
    """What shapes a conversation. Defaults follow the paper: 300k/100k tokens, 15-minute and 8 GB tool limits."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    mode: Literal["agentic", "single-turn"] = "agentic"
    tools: tuple[str, ...] = ("python", "bash", "search")
    main_tokens: int = Field(default=300_000, gt=0)
    sub_tokens: int = Field(default=100_000, gt=0)
    tool_timeout_s: float = Field(default=900.0, gt=0)
    tool_memory_mb: int = Field(default=8192, ge=64)
    max_malformed: int = Field(default=3, ge=0)  # malformed tool-call turns in a row allowed; one more ends the stage
    max_turns: int = Field(default=200, ge=1)  # a stage's turn cap (a safety net: budgets end real runs first)
    search_provider: str | None = None  # a hosted provider of Inspect's web_search; None: the local paper index
    generate: dict[str, Any] = Field(default_factory=dict)  # Inspect GenerateConfig fields (Table 1's, then the user's)

    def digest(self, model: str, endpoint: str) -> str:
        """The hash of these settings, the prompts and the model: part of the pipeline name of the stored turns."""
        return json_digest({"settings": self.model_dump(mode="json"), "prompts": prompt_texts(), "model": model,
                            "endpoint": endpoint}, 16)  # fmt: skip


def check_settings(*, mode: str, tools: tuple[str, ...] | list[str] | str, main_tokens: int, sub_tokens: int,
                   epochs: int, **rest: Any) -> HarnessSettings:  # fmt: skip
    """Settings from the service's arguments, or a one-line UserError. ``sage`` needs ``sage`` on the PATH."""
    if mode not in MODES:
        raise UserError(f"unknown mode {mode!r}: use agentic or single-turn")
    if isinstance(tools, str):
        tools = [t.strip() for t in tools.split(",") if t.strip()]
    unknown = [t for t in tools if t not in TOOLS]
    if unknown:
        raise UserError(f"unknown tool(s) {', '.join(unknown)}: choose from {', '.join(TOOLS)}")
    if "sage" in tools and shutil.which("sage") is None:
        raise UserError("the sage tool needs SageMath: `sage` is not on the PATH (leave sage out of --tools)")
    if epochs < 1:
        raise UserError("--epochs must be at least 1")
    if main_tokens < 1 or sub_tokens < 1:
        raise UserError("token budgets must be positive")
    chosen = tuple(dict.fromkeys(tools)) if mode == "agentic" else ()
    try:
        return HarnessSettings(mode=mode, tools=chosen, main_tokens=main_tokens, sub_tokens=sub_tokens, **rest)  # type: ignore[arg-type]
    except ValidationError as exc:
        first = exc.errors()[0]
        raise UserError(f"harness setting {'.'.join(map(str, first['loc']))}: {first['msg']}") from None


def default_tools() -> tuple[str, ...]:
    """python, bash, search, and sage when SageMath is installed."""
    return ("python", "bash", "sage", "search") if shutil.which("sage") else ("python", "bash", "search")
