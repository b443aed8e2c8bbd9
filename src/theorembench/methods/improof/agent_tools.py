"""The tools a model gets in the harness: python, bash and sage in the sandbox, search, and submit.

``python`` and ``bash`` are Inspect's own tools; they, and ``sage`` (``sage -c`` in the same
sandbox, offered only when SageMath really runs inside it: the sandbox has its own PATH and shows
only /usr and the interpreter, so a host ``sage`` elsewhere would fail there), run in the
``theorembench`` Inspect sandbox environment: isolated, one work folder per conversation, with the
run's time and memory limits.
``search`` reads the local paper index on the host (or is Inspect's ``web_search`` when a hosted
provider is configured). ``submit`` does nothing but answer; the harness reads the answer from
the call itself. With ``wording = "paper"`` the tools carry App. H's names (``sage_computation``,
``web_search``) and descriptions (:mod:`prompts_paper`).

Single-turn mode has no sandbox tools; it may offer the provider's own tools instead (App. I.1,
Table 2): Inspect's ``web_search`` and ``code_execution`` run on the provider's servers within the
one reply, for the providers whose API has them (:data:`HOSTED_PROVIDERS`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from theorembench.common.errors import UserError
from theorembench.methods.improof.config import HarnessSettings
from theorembench.methods.improof import prompts_paper
from theorembench.methods.improof.prompts import SUBMIT_DESCRIPTION, SUBMITTED, duration, memory
from theorembench.methods.improof.search import hosted_search, paper_search_tool
from theorembench.sandbox.tools import host_tool, tool_runs_inside


# Inspect's internal providers of the provider-hosted tools, by our provider names (Inspect names Google's search
# "gemini"); a provider not listed has neither in Inspect
HOSTED_PROVIDERS = {
    "web_search": {"openai": "openai", "anthropic": "anthropic", "grok": "grok", "google": "gemini",
                   "mistral": "mistral", "perplexity": "perplexity"},
    "code_execution": {"openai": "openai", "anthropic": "anthropic", "grok": "grok", "google": "google",
                       "mistral": "mistral"},
}  # fmt: skip


def hosted_tools(names: tuple[str, ...], model_provider: str) -> list[Any]:
    """The provider's own tools for a single-turn run; UserError when the model's provider has one of them not."""
    from inspect_ai.tool import code_execution, web_search

    out = []
    for name in names:
        inspect_provider = HOSTED_PROVIDERS[name].get(model_provider)
        if inspect_provider is None:
            have = ", ".join(sorted(HOSTED_PROVIDERS[name]))
            raise UserError(f"hosted tool {name}: Inspect has the provider's own {name} only for {have} models, "
                            f"not {model_provider}/ ones (an OpenAI-compatible server's API has none)")  # fmt: skip
        if name == "web_search":
            out.append(web_search({inspect_provider: True}))
        else:  # the provider's interpreter only: no fallback to a python tool in a sandbox
            out.append(code_execution(providers={inspect_provider: True, "python": False}))  # type: ignore[dict-item]
    return out


def submit_tool() -> Any:
    from inspect_ai.tool import tool

    @tool(name="submit")
    def submit() -> Any:
        async def execute(answer: str) -> str:
            """Register your final answer to the current question.

            Args:
                answer: The complete final answer (a proof for the main question, a short answer for a subquestion).

            Returns:
                A confirmation.
            """
            return SUBMITTED

        return execute

    from inspect_ai.tool import tool_with

    return tool_with(submit(), description=SUBMIT_DESCRIPTION)


def sage_tool(timeout_s: int) -> Any:
    """``sage``: runs SageMath code with ``sage -c`` in the sample's sandbox."""
    from inspect_ai.tool import tool
    from inspect_ai.util import sandbox

    @tool(name="sage")
    def sage() -> Any:
        async def execute(code: str) -> str:
            """Run a self-contained SageMath script and return what it prints.

            Args:
                code: SageMath code (Sage's preparser applies: x^2, K.<a> = ...); print what you want to see.

            Returns:
                The script's output, and its errors if it failed.
            """
            result = await sandbox().exec(["sage", "-c", code], timeout=timeout_s)
            if result.success:
                return result.stdout
            return f"{result.stdout}\n{result.stderr}".strip() or f"sage exited with code {result.returncode}"

        return execute

    return sage()


def _one_tool(name: str, settings: HarnessSettings, search_index: Path | None, model_provider: str) -> Any | None:
    from inspect_ai.tool import bash, python

    timeout = int(settings.tool_timeout_s)
    if name == "python":
        return python(timeout=timeout)
    if name == "bash":
        return bash(timeout=timeout)
    if name == "sage":
        if not tool_runs_inside("sage"):  # settings made without HarnessSettings.from_args: never offer it failing
            raise UserError(f"the sage tool: {host_tool('sage')['check']}")
        return sage_tool(timeout)
    if settings.search_provider:
        return hosted_search(settings.search_provider, model_provider)
    return paper_search_tool(search_index) if search_index is not None else None


def _paper_worded(name: str, tool: Any, settings: HarnessSettings) -> Any:
    """The tool under App. H's name and description."""
    from inspect_ai.tool import tool_with

    if name == "search" and settings.search_provider:
        return tool  # Inspect's web_search: named so already, described by the provider
    text = prompts_paper.tool_description(name, timeout=duration(settings.tool_timeout_s),
                                          memory=memory(settings.tool_memory_mb), local_search=name == "search")
    return tool_with(tool, name=prompts_paper.PAPER_TOOL_NAMES.get(name, name), description=text)


def build_tools(settings: HarnessSettings, *, search_index: Path | None, model_provider: str) -> list[Any]:
    """The tools of an agentic conversation, ``submit`` last; in single-turn mode the provider's own tools asked for
    (none by default)."""
    if settings.mode != "agentic":
        return hosted_tools(settings.hosted_tools, model_provider)
    paper = settings.wording == "paper"
    out: list[Any] = []
    for name in settings.tools:
        tool = _one_tool(name, settings, search_index, model_provider)
        if tool is not None:
            out.append(_paper_worded(name, tool, settings) if paper else tool)
    from inspect_ai.tool import tool_with

    out.append(tool_with(submit_tool(), description=prompts_paper.SUBMIT) if paper else submit_tool())
    return out


def offered_names(settings: HarnessSettings) -> list[str]:
    """The tool names the prompt lists (``search`` is ``web_search`` with a hosted provider or the paper's wording;
    ``sage`` is ``sage_computation`` in the paper's wording)."""
    if settings.wording == "paper":
        return [prompts_paper.PAPER_TOOL_NAMES[t] for t in settings.tools]
    return ["web_search" if t == "search" and settings.search_provider else t for t in settings.tools]
