"""Every setting of ``theorembench eternal build`` (``theorembench eternal config`` prints the documented file).

Settings come from these defaults, then ``--config FILE``, then the command-line options.
Each stage's stored steps are named by the settings that shape that stage's output
(:func:`theorembench.methods.eternal.stages` builds the name with
:mod:`theorembench.pipeline.identity`), so changing, say, the number of instances reuses
every model call, and changing the generator reruns only the stages it writes.
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from theorembench.common.settings import Section, Settings

_CLASS = re.compile(r"\d{2}")


class Models(Section):
    generator: str = Field("local/smollm2", description="meta-templates (stage c) and code translation (stage d)")
    judge: str = Field("", description="computability and MSC fallback judge; empty = the generator")
    validity: str = Field("", description=(
        "validity judge; empty = the judge when one is set, else the generator\n"
        "  (which then reviews its own templates: the build says so)"))


class Filter(Section):
    months_back: int = Field(24, ge=1, le=600, description="recency: papers published at most this many months "
                                                             "before reference_date")  # fmt: skip
    reference_date: str = Field("", description="YYYY-MM-DD; empty = today (the date used is written to "
                                                "summary.json)")  # fmt: skip
    authority: Literal["any", "journal", "list", "signals"] = Field("signals", description=(
        "signals: one of journal-ref, DOI, a publication note in the arXiv comment,\n"
        "  a listed venue or institution, an affiliation with a research institution (a fresh arXiv\n"
        "  month can pass it) | journal: journal-ref or DOI only (most new arXiv papers fail it) |\n"
        "  list: a listed venue or institution | any"))
    venues: list[str] = Field(default_factory=list, description="matched (case-insensitive) against journal-ref, DOI "
                                                                "and the arXiv comment")  # fmt: skip
    institutions: list[str] = Field(default_factory=list, description=(
        "matched against the affiliations (arXiv metadata, the paper's LaTeX);\n"
        "  when given, only these count as an affiliation signal"))
    trust_local: bool = Field(True, description="papers added from local files (no arXiv metadata) pass recency "
                                                 "and authority")  # fmt: skip
    computability: bool = Field(True, description="ask the judge whether the paper states computable input -> "
                                                   "output results")  # fmt: skip

    @field_validator("reference_date")
    @classmethod
    def _date(cls, value: str) -> str:
        if value:
            date.fromisoformat(value)  # a ValueError names the bad date
        return value

    def reference(self) -> date:
        return date.fromisoformat(self.reference_date) if self.reference_date else date.today()


class Classification(Section):
    max_codes: int = Field(3, ge=1, le=3, description="MSC2020 classes per paper, the authors' \\subjclass first")
    exclude: list[str] = Field(default_factory=lambda: ["00", "01", "97"],
                               description="a paper whose primary class is one of these is excluded")  # fmt: skip
    llm_fallback: bool = Field(True, description="no \\subjclass: the judge classifies (codes checked against "
                                                  "the table)")  # fmt: skip

    @field_validator("exclude")
    @classmethod
    def _classes(cls, value: list[str]) -> list[str]:
        bad = [v for v in value if not _CLASS.fullmatch(v)]
        if bad:
            raise ValueError(f"not two-digit MSC classes: {bad}")
        return value


class Templates(Section):
    per_paper: int = Field(3, ge=1, le=10, description="meta-templates asked of the generator per paper (the "
                                                         "paper: 2 to 3)")  # fmt: skip
    paper_chars: int = Field(24000, ge=1000, description="how much of the paper's text the generator and the "
                                                           "judges read")  # fmt: skip


class Translation(Section):
    enabled: bool = Field(True, description="the translator rewrites formal_solution and writes the brute-force "
                                            "check")  # fmt: skip
    repair_rounds: int = Field(1, ge=0, le=3, description="rounds that show the translator its code's execution "
                                                            "error")  # fmt: skip
    trial_cases: int = Field(2, ge=1, le=10, description="small cases run in the sandbox to find execution errors")


class Execution(Section):
    instances_per_template: int = Field(5, ge=1, le=100000)
    seed: int = 0
    timeout_s: float = Field(20, gt=0, le=3600, description=(
        "a template's sandboxed process may take this (to start and import its\n"
        "  libraries) plus per_instance_s for each run it holds: the limit grows with the instances"))
    per_instance_s: float = Field(5, gt=0, le=3600, description=(
        "per run of the code inside it (an instance runs four times: once, then in a second\n"
        "  process rounding three ways); one run that\n"
        "  never ends costs its instance, not the template's other instances"))
    memory_mb: int = Field(1024, ge=64)


class Review(Section):
    validity: bool = Field(True, description=(
        "the validity judge reads the theorem, the paper's relevant excerpt and instances:\n"
        "  self-contained, unambiguous, one answer, faithful to the theorem"))
    keep_unverified: bool = Field(False, description=(
        "keep templates without small_case_check (nothing independent checks their formula;\n"
        "  by default they are left out of the release, as rejections at stage unverified)"))
    validity_instances: int = Field(3, ge=1, le=20, description="instances of each template the validity judge reads")
    excerpt_chars: int = Field(6000, ge=500, description="how much of the paper, nearest the theorem, it reads")
    originality_threshold: float = Field(0.8, gt=0.0, le=1.0, description=(
        "estimated Jaccard similarity of word 5-shingles that counts as a near-duplicate"))
    shingle_words: int = Field(5, ge=1, le=20)
    num_perm: int = Field(128, ge=16, le=1024, description="MinHash permutations")
    corpora: list[str] = Field(default_factory=list, description="files of known problems (one text a line, or "
                                                                 'JSONL with a "problem"/"text" field)')  # fmt: skip
    screening: bool = Field(False, description="drop generations whose average token log-probability is below the "
                                               "threshold")  # fmt: skip
    min_avg_logprob: float = Field(-1.5, description="  (needs a server that returns prompt log-probabilities; "
                                                     "skipped otherwise)")  # fmt: skip
    scoring_model: str = Field("", description=(
        "who scores the log-probabilities: empty = the generator (a hosted chat API gives\n"
        "  none, so screening is skipped); name a model whose server answers the legacy\n"
        "  /completions endpoint with echo (vllm/<model>, or openai-api/<service>/<model> with\n"
        "  <SERVICE>_BASE_URL): ideally the generator's own weights served there"))


class Generation(Section):
    temperature: float = 0.7
    max_tokens: int = 8192
    sampling_seed: int = 0


class EternalConfig(Settings):
    TOML_HEADER = "theorembench eternal build: EternalMath settings."
    models: Models = Field(default_factory=Models)
    filter: Filter = Field(default_factory=Filter, description="stage a")
    classification: Classification = Field(default_factory=Classification, description="stage b")
    templates: Templates = Field(default_factory=Templates, description="stage c")
    translation: Translation = Field(default_factory=Translation, description="stage d")
    execution: Execution = Field(default_factory=Execution, description="stages e and g, in the sandbox")
    review: Review = Field(default_factory=Review, description="stage f")
    generation: Generation = Field(default_factory=Generation)

    @property
    def judge(self) -> str:
        return self.models.judge or self.models.generator

    @property
    def validity_judge(self) -> str:
        """The validity judge: models.validity, else the judge, else the generator."""
        return self.models.validity or self.judge

    @property
    def scorer(self) -> str:
        """The model whose server scores the screened generations."""
        return self.review.scoring_model or self.models.generator

    def validity_note(self) -> str | None:
        """What to say when the validity judge is the generator reviewing its own work."""
        if self.review.validity and self.validity_judge == self.models.generator:
            return (f"the validity judge is the generator itself ({self.models.generator}): it reviews its own "
                    "templates (set models.validity or models.judge to another model)")  # fmt: skip
        return None

    def problems(self) -> list[str]:
        found = []
        if self.filter.authority == "list" and not (self.filter.venues or self.filter.institutions):
            found.append("filter.authority = \"list\" needs filter.venues and/or filter.institutions")
        for path in self.review.corpora:
            if not Path(path).is_file():
                found.append(f"review.corpora: {path}: no such file")
        return found


def load_config(path: str | Path | None = None, **overrides: Any) -> EternalConfig:
    return EternalConfig.load(path, **overrides)


def config_toml() -> str:
    """The documented settings file with every default."""
    return EternalConfig.default_toml()


__all__ = ["EternalConfig", "config_toml", "load_config"]
