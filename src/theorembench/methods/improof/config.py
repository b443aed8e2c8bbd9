"""Settings of an IMProofBench harness run, checked before any work, and their digest (the pipeline name)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field, ValidationError

from theorembench.common.errors import InvalidSetting
from theorembench.common.settings import Settings, SettingsError, validation_line
from theorembench.methods.improof.model_tiers import paper_model_problems
from theorembench.methods.improof.prompts import prompt_texts
from theorembench.pipeline.identity import identity
from theorembench.sandbox.tools import host_tool, tool_runs_inside

TOOLS = ("python", "bash", "sage", "search")
MODES = ("agentic", "single-turn")
WORDINGS = ("ours", "paper")
HOSTED_TOOLS = ("web_search", "code_execution")  # the provider's own tools, single-turn (App. I.1, Table 2)
OVER_BUDGET = ("keep", "discard")
VERSION = "1"  # bump when the stored turns change shape


class HarnessSettings(Settings):
    """What shapes a conversation. Defaults follow the paper: 300k/100k tokens, 15-minute and 8 GB tool limits."""

    model_config = ConfigDict(frozen=True)
    TOML_HEADER = "IMProofBench harness settings (defaults: the paper's)."
    mode: Literal["agentic", "single-turn"] = Field("agentic", description="agentic (tools) or single-turn")
    tools: tuple[str, ...] = Field(("python", "bash", "search"), description="of " + ", ".join(TOOLS))
    main_tokens: int = Field(300_000, gt=0, description="the main agent's token budget (the paper: 300k)")
    sub_tokens: int = Field(100_000, gt=0, description="each sub-question's token budget (the paper: 100k)")
    tool_timeout_s: float = Field(900.0, gt=0, description="per tool call (the paper: 15 minutes)")
    tool_memory_mb: int = Field(8192, ge=64, description="per tool call (the paper: 8 GB)")
    max_malformed: int = Field(3, ge=0, description="malformed tool-call turns in a row allowed; one more ends "
                                                    "the stage")  # fmt: skip
    max_turns: int = Field(200, ge=1, description="a stage's turn cap (a safety net: budgets end real runs first)")
    search_provider: str | None = Field(None, description="a hosted provider of Inspect's web_search; unset: the "
                                                          "local paper index")  # fmt: skip
    generate: dict[str, Any] = Field(default_factory=dict, description="Inspect GenerateConfig fields (Table 1's, "
                                                                       "then the user's)")  # fmt: skip
    wording: Literal["ours", "paper"] = Field("ours", description="the prompts and tool names: ours, or paper (App. "
                                              "H point by point, paraphrased, with sage_computation and "
                                              "web_search)")  # fmt: skip
    hosted_tools: tuple[str, ...] = Field((), description="single-turn only: the provider's own tools (App. I.1, "
                                          "Table 2), of " + ", ".join(HOSTED_TOOLS))  # fmt: skip
    over_budget_answer: Literal["keep", "discard"] = Field("keep", description="a submit in the call that passes the "
                                                          "budget: keep it (marked over budget) or discard it "
                                                          "(recorded, not scored; Inspect's token limit)")  # fmt: skip

    def problems(self) -> list[str]:
        """Known tools only; ``sage`` needs a SageMath that runs inside the sandbox (one found on the host
        outside what the sandbox shows would fail there)."""
        unknown = [t for t in self.tools if t not in TOOLS]
        if unknown:
            return [f"tools: unknown tool(s) {', '.join(unknown)}: choose from {', '.join(TOOLS)}"]
        hosted = [t for t in self.hosted_tools if t not in HOSTED_TOOLS]
        if hosted:
            return [f"hosted_tools: unknown tool(s) {', '.join(hosted)}: choose from {', '.join(HOSTED_TOOLS)}"]
        if self.hosted_tools and self.mode != "single-turn":
            return ["hosted_tools: the provider's own tools are for single-turn mode (App. I.1); agentic runs use "
                    "the sandbox's tools"]  # fmt: skip
        if "sage" in self.tools and self.mode == "agentic" and not tool_runs_inside("sage"):
            why = host_tool("sage")["check"]
            return [f"tools: the sage tool needs a SageMath that runs inside the sandbox: {why} (leave sage out of "
                    "the tools; `theorembench sandbox check` lists the tools usable inside)"]  # fmt: skip
        return []

    @classmethod
    def from_args(cls, *, mode: str, tools: tuple[str, ...] | list[str] | str, epochs: int = 1,
                  **values: Any) -> HarnessSettings:  # fmt: skip
        """Checked settings from a service's arguments (``tools`` may be comma-separated; ``epochs`` is checked,
        not kept), or a one-line SettingsError naming the setting. Single-turn runs offer no tools."""
        if mode not in MODES:
            raise SettingsError(f"mode: unknown mode {mode!r}: use agentic or single-turn")
        if isinstance(tools, str):
            tools = [t.strip() for t in tools.split(",") if t.strip()]
        if isinstance(values.get("hosted_tools"), str):
            values["hosted_tools"] = tuple(t.strip() for t in values["hosted_tools"].split(",") if t.strip())
        if epochs < 1:
            raise SettingsError(f"epochs = {epochs}: must be at least 1")
        try:
            settings = cls(mode=mode, tools=tuple(dict.fromkeys(tools)), **values)  # type: ignore[arg-type]
        except ValidationError as exc:
            raise SettingsError(validation_line(exc, "harness setting")) from None
        settings.check()
        return settings if mode == "agentic" else settings.model_copy(update={"tools": ()})

    def pipeline_digest(self, model: str, endpoint: str) -> str:
        """The identity of the stored turns (part of the pipeline name): IMProofBench's version, its prompts, the
        code that shapes a conversation, these settings and the model with its endpoint. Grading code is left
        out: a changed grader regrades the stored answers without asking the model again."""
        from theorembench.methods.improof import prompts

        here = Path(__file__).parent  # read, not imported: these modules import this one
        texts: list[Any] = [prompts, *prompt_texts()]
        if self.wording == "paper":
            from theorembench.methods.improof import prompts_paper

            texts += [prompts_paper, *prompts_paper.texts()]
        return identity(version=VERSION, prompts=texts,
                        code=[here / "conversation.py", here / "agent_tools.py", here / "budget.py"],
                        settings={"settings": self.model_dump(mode="json"), "model": model, "endpoint": endpoint})


def harness_defaults(*names: str) -> dict[str, Any]:
    """The paper's value of each named setting (all when none named), as plain JSON values."""
    paper = HarnessSettings().model_dump(mode="json")
    return {n: paper[n] for n in names} if names else paper


PAPER_FIXED = ("main_tokens", "sub_tokens", "tool_timeout_s", "tool_memory_mb")  # what paper_settings holds to


def check_paper_settings(model: str, generate: dict[str, Any] | None, given: dict[str, Any]) -> None:
    """With the paper's settings asked for: the model must be one of Table 1's (a dated id or an alias of it) and
    neither its Table 1 parameters nor the paper's budgets and tool limits may be changed; else InvalidSetting."""
    paper = harness_defaults(*PAPER_FIXED)
    problems = paper_model_problems(model, generate)
    problems += [f"{k} = {given[k]} is not the paper's {paper[k]}" for k in PAPER_FIXED
                 if given.get(k) is not None and given[k] != paper[k]]  # fmt: skip
    if problems:
        raise InvalidSetting("paper_settings", template="{setting} asks for Table 1's model and the paper's "
                             "settings, but " + "; ".join(problems) + " (leave {setting} off to run it as it is)")


def default_tools() -> tuple[str, ...]:
    """python, bash, search, and sage when SageMath really runs inside the sandbox."""
    return ("python", "bash", "sage", "search") if tool_runs_inside("sage") else ("python", "bash", "search")
