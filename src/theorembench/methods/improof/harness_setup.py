"""What ``run_improof_eval`` checks and settles before any work: the model's provider package, Table 1 and the
paper's settings, the generation settings, the harness settings, the problems and the search tool's index.

A refusal here costs nothing: no run is created and no model is called.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from theorembench.common.errors import InvalidSetting, UserError
from theorembench.llm import ModelSpec
from theorembench.methods.improof.catalog import get_problem, list_problems
from theorembench.methods.improof.config import HarnessSettings, check_paper_settings, default_tools
from theorembench.methods.improof.model_tiers import generation_params
from theorembench.methods.improof.problems import Problem
from theorembench.methods.improof.search import ensure_index, index_documents
from theorembench.store import Store

#: the harness settings a caller may give (None: HarnessSettings' value, the paper's or ours)
HARNESS_FIELDS = ("main_tokens", "sub_tokens", "tool_timeout_s", "tool_memory_mb", "max_malformed", "max_turns",
                  "wording", "hosted_tools", "over_budget_answer")  # fmt: skip
EMPTY_INDEX = ("the store holds no papers, so the search tool's local paper index is empty (IMProofBench's "
               "problems are not papers)")  # fmt: skip


@dataclass
class Prepared:
    settings: HarnessSettings
    problems: list[Problem]
    search_index: Path | None
    notes: list[str] = field(default_factory=list)


def _problems(store: Store, problem_ids: Sequence[str] | None) -> list[Problem]:
    if problem_ids:
        return [get_problem(store, pid) for pid in dict.fromkeys(problem_ids)]
    active = [p["id"] for p in list_problems(store, status="active")]
    if not active:
        raise InvalidSetting("problem_ids", "none given, and no active problems in the store: import some "
                             "(theorembench improof import) or name the problems to run")  # fmt: skip
    return [get_problem(store, pid) for pid in active]


# Inspect providers that need a package theorembench installs only with an extra: provider -> (module, extra)
PROVIDER_PACKAGES = {"grok": ("xai_sdk", "grok")}


def check_provider_package(spec: ModelSpec) -> None:
    """A one-line UserError, before any work, when Inspect's provider for the model needs a package not installed."""
    import importlib.util

    need = PROVIDER_PACKAGES.get(spec.provider)
    if need is not None and importlib.util.find_spec(need[0]) is None:
        raise UserError(f"model {spec.name}: Inspect's {spec.provider} provider needs the {need[0]} package, which is "
                        f"not installed: pip install 'theorembench[{need[1]}]'")  # fmt: skip


def _check_generate(params: dict[str, Any]) -> None:
    from inspect_ai.model import GenerateConfig
    from pydantic import ValidationError

    try:
        GenerateConfig(**params)
    except (ValidationError, TypeError) as exc:
        raise UserError(f"generation settings {sorted(params)}: {str(exc).splitlines()[0]}") from None


def harness_settings(spec: ModelSpec, *, mode: str, tools: Sequence[str] | str | None, epochs: int,
                     search_provider: str | None, generate: dict[str, Any] | None, given: dict[str, Any],
                     paper_settings: bool) -> HarnessSettings:  # fmt: skip
    """Checked settings: Table 1's generation parameters under the user's, the paper's settings held to when asked."""
    check_provider_package(spec)
    if paper_settings:
        check_paper_settings(spec.name, generate, given)
    gen = {**generation_params(spec.name), **(generate or {})}
    _check_generate(gen)
    return HarnessSettings.from_args(mode=mode, tools=default_tools() if tools is None else tools, epochs=epochs,
                                     search_provider=search_provider, generate=gen,
                                     **{k: v for k, v in given.items() if v is not None})  # fmt: skip


def search_index(store: Store, settings: HarnessSettings, *, asked: bool) -> tuple[HarnessSettings, Path | None,
                                                                                   list[str]]:  # fmt: skip
    """The local index for the search tool, built from the store's papers, and what to say about it. An empty index
    leaves the tool out of the default tools; a tool the user named (``asked``) is kept, and the note says that every
    search will find nothing."""
    if "search" not in settings.tools or settings.search_provider:
        return settings, None, []
    path = ensure_index(store)
    if index_documents(path):
        return settings, path, []
    fix = "add papers (theorembench papers add or fetch) or give a hosted search provider"
    if asked:
        return settings, path, [f"search tool offered as asked, but {EMPTY_INDEX}: every search finds nothing; {fix}"]
    kept = tuple(t for t in settings.tools if t != "search")
    return settings.model_copy(update={"tools": kept}), None, [f"search tool left out: {EMPTY_INDEX}; {fix}"]


def prepare(store: Store, spec: ModelSpec, problem_ids: Sequence[str] | None, *, tools: Sequence[str] | str | None,
            **kw: Any) -> Prepared:
    """Settings, problems and search index of a run, checked; ``kw`` as :func:`harness_settings` takes them."""
    settings = harness_settings(spec, tools=tools, **kw)
    problems = _problems(store, problem_ids)
    settings, index, notes = search_index(store, settings, asked=tools is not None)
    return Prepared(settings, problems, index, notes)
