"""The demo as a service: what `theorembench demo` runs, and with which settings.

The embedded model writes poor questions and rarely survives a check, so the demo lowers the
thresholds that would reject everything it writes, so that every stage of every method runs.
Real builds use each method's defaults (its ``config`` command prints them). The command
(``cli/demo.py``) only draws the steps; what each step does and with what lives here.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

DEMO_MODEL = "local/smollm2"
DEMO_MONTH = "2026-11"

# LiveMathematicianBench: short replies, two variants, no red-flag or stem-only filter, open surface bounds
LMB_OVERRIDES = MappingProxyType({
    "generation.max_tokens": 700, "generation.variants": 2, "generation.red_flag_checks": False, "filters.rubric_min": 0,
    "filters.stem_only": False, "surface.min_length_ratio": 0.0, "surface.max_length_ratio": 100.0,
    "surface.max_latex_density_gap": 1.0, "surface.revisions": 0, "latex.repairs": 1, "context.full_context_chars": 2000,
})  # fmt: skip
# Proof2Hybrid: one judge and few calls per seed; the tiny model judges nearly everything correct, so the bounds
# are opened to let every stage run (the paper's values: `theorembench hybrid config`)
HYBRID_OVERRIDES = MappingProxyType({
    "seed_filter.n1": 1, "seed_filter.k1": 1, "distractors.n2": 2, "distractors.k2": 1,
    "distractor_filter.n3": 1, "distractor_filter.k3": 0, "distractor_filter.k4": 1,
    "distractor_filter.enforce_bounds": False, "questions.m": 1, "questions.n": 3,
    "generation.max_tokens": 400, "generation.max_seeds": 6,
})  # fmt: skip
# EternalMath: two templates a paper, short replies, one small batch of instances; the embedded model's templates
# rarely survive the cross-check (an honest outcome), so the demo also instantiates a shipped template
ETERNAL_OVERRIDES = MappingProxyType({
    "templates.per_paper": 2, "templates.paper_chars": 4000, "generation.max_tokens": 700,
    "translation.repair_rounds": 0, "execution.instances_per_template": 3,
})  # fmt: skip
# IMProofBench: small budgets; the tiny model rarely calls a tool or `submit`, so its agentic stages end on their
# budgets, and the single-turn mode (App. I.1) gets boxed answers
IMPROOF_BUDGETS = MappingProxyType({"main_tokens": 400, "sub_tokens": 160})


@dataclass(frozen=True)
class DemoSettings:
    """Everything the demo's steps are run with (the command sets ``model``, ``out_dir`` and ``max_tokens``)."""

    model: str = DEMO_MODEL
    out_dir: Path = Path("demo-output")
    max_tokens: int = 384  # per evaluation answer
    month: str = DEMO_MONTH
    lmb: Mapping[str, Any] = field(default_factory=lambda: LMB_OVERRIDES)
    hybrid: Mapping[str, Any] = field(default_factory=lambda: HYBRID_OVERRIDES)
    eternal: Mapping[str, Any] = field(default_factory=lambda: ETERNAL_OVERRIDES)
    eternal_shipped_instances: int = 5  # of the template shipped for the derangements paper
    improof_budgets: Mapping[str, int] = field(default_factory=lambda: IMPROOF_BUDGETS)
    improof_reply_tokens: int = 160  # per model call, so a stage ends within a few calls
    improof_modes: tuple[tuple[str, str | None], ...] = (("agentic", "python"), ("single-turn", None))
    improof_tool_timeout_s: int = 60
    improof_tool_memory_mb: int = 2048
    concurrency: int = 1  # one request at a time: the embedded model serves one

    def improof_generate(self) -> dict[str, Any]:
        return {"max_tokens": self.improof_reply_tokens}


@contextmanager
def shipped_file(*parts: str) -> Iterator[Path]:
    """A file shipped in ``theorembench.data`` (sample papers, items, templates), as a path for the call."""
    with resources.as_file(resources.files("theorembench.data").joinpath(*parts)) as path:
        yield Path(path)


def instantiate_shipped_template(settings: DemoSettings, out_dir: Path, *, accept: bool | None) -> tuple[Any, dict]:
    """Instantiate the template shipped for the derangements paper in the sandbox (refusing below full isolation
    unless ``accept``), stamp the isolation used on every instance and write them to ``out_dir``; returns the
    instantiation result and the isolation record."""
    from theorembench.methods.eternal.instantiate import instantiate_templates, write_outputs
    from theorembench.methods.eternal.summary import stamp_isolation
    from theorembench.methods.eternal.template import load_templates
    from theorembench.sandbox import accepting_weak_isolation, require_isolation

    with shipped_file("eternal", "derangements.json") as path:
        templates = load_templates(path)
    isolation = require_isolation(accept, purpose="EternalMath validation of the shipped template")
    with accepting_weak_isolation(True if isolation["weak_isolation_accepted"] else None):
        result = instantiate_templates(templates, settings.eternal_shipped_instances, 0)
    stamp_isolation(result.instances, isolation)
    result.summary["isolation"] = isolation
    write_outputs(result, out_dir)
    return result, isolation


def build_demo_release(store: Any, settings: DemoSettings, paper_ids: list[str], *, accept: bool | None,
                       on_step: Any = None) -> Any:  # fmt: skip
    """The month's release from the sample papers, with the demo's settings for every method: the same steps as
    the demo's builds, so the release finds them stored and pays for no call again."""
    from theorembench.suite.release import ReleaseSettings, build_release

    cfg = ReleaseSettings.load(None, **{"models.generator": settings.model, "models.judges": [settings.model],
                                        "models.calibrator": settings.model, "fetch.llm_fallback": False}).check()
    overrides = {"lmb": dict(settings.lmb), "eternal": dict(settings.eternal), "hybrid": dict(settings.hybrid)}
    return build_release(store, month=settings.month, settings=cfg, paper_ids=paper_ids,
                         out=settings.out_dir / "releases", overrides=overrides, concurrency=settings.concurrency,
                         accept_weak_isolation=accept, on_step=on_step)  # fmt: skip


def release_files(release: Any) -> dict[str, Path]:
    """The release's files a model is evaluated on, per method that has items in it."""
    files: dict[str, Path] = {}
    for method, key in (("lmb", "hard"), ("eternal", "instances"), ("hybrid", "questions")):
        block = release.manifest["methods"].get(method)
        if block and block["counts"]["items"] and key in block["files"]:
            path = release.folder / block["files"][key]
            files[method] = path if method != "hybrid" else path.parent
    return files


__all__ = ["DEMO_MODEL", "DEMO_MONTH", "DemoSettings", "build_demo_release", "instantiate_shipped_template",
           "release_files", "shipped_file"]
