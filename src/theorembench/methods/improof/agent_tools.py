"""The tools a model gets in the harness: python, bash and sage in the sandbox, search, and submit.

``python`` and ``bash`` are Inspect's own tools; they, and ``sage`` (``sage -c`` in the same
sandbox, offered only when SageMath is installed), run in the ``theorembench`` Inspect sandbox
environment: isolated, one work folder per conversation, with the run's time and memory limits.
``search`` reads the local paper index on the host (or is Inspect's ``web_search`` when a hosted
provider is configured). ``submit`` does nothing but answer; the harness reads the answer from
the call itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from theorembench.methods.improof.config import HarnessSettings
from theorembench.methods.improof.prompts import SUBMIT_DESCRIPTION, SUBMITTED
from theorembench.methods.improof.search import hosted_search, paper_search_tool


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


def build_tools(settings: HarnessSettings, *, search_index: Path | None, model_provider: str) -> list[Any]:
    """The tools of an agentic conversation, ``submit`` last; none in single-turn mode."""
    if settings.mode != "agentic":
        return []
    from inspect_ai.tool import bash, python

    timeout = int(settings.tool_timeout_s)
    out: list[Any] = []
    for name in settings.tools:
        if name == "python":
            out.append(python(timeout=timeout))
        elif name == "bash":
            out.append(bash(timeout=timeout))
        elif name == "sage":
            out.append(sage_tool(timeout))
        elif name == "search":
            if settings.search_provider:
                out.append(hosted_search(settings.search_provider, model_provider))
            elif search_index is not None:
                out.append(paper_search_tool(search_index))
    out.append(submit_tool())
    return out


def offered_names(settings: HarnessSettings) -> list[str]:
    """The tool names the prompt lists (``search`` is ``web_search`` with a hosted provider)."""
    return ["web_search" if t == "search" and settings.search_provider else t for t in settings.tools]
