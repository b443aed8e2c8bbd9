"""Every setting of ``theorembench eternal build``, in one TOML file (``theorembench eternal config`` prints it).

Settings come from these defaults, then ``--config FILE``, then the command-line options.
Each stage's stored steps are keyed by a hash of the settings that shape that stage's
output (:meth:`EternalConfig.stage_key`), so changing, say, the number of instances reuses
every model call, and changing the generator reruns only the stages it writes.
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from theorembench.common.digest import json_digest
from theorembench.common.errors import UserError
from theorembench.common.tomlconfig import load_layered

DEFAULT_TOML = """\
# theorembench eternal build: EternalMath settings.

[models]
generator = "local/smollm2"      # meta-templates (stage c) and code translation (stage d)
judge = ""                       # computability, MSC fallback and validity judge; empty = the generator

[filter]                         # stage a
months_back = 24                 # recency: papers published at most this many months before reference_date
reference_date = ""              # YYYY-MM-DD; empty = today (the date used is written to summary.json)
authority = "journal"            # any | journal (arXiv journal-ref or DOI) | list (venues/institutions below)
venues = []                      # authority = "list": matched (case-insensitive) against journal-ref and DOI
institutions = []                # authority = "list": matched against the affiliations in the paper's LaTeX
trust_local = true               # papers added from local files (no arXiv metadata) pass recency and authority
computability = true             # ask the judge whether the paper states computable input -> output results

[classification]                 # stage b
max_codes = 3                    # MSC2020 classes per paper, the authors' \\subjclass first
exclude = ["00", "01", "97"]     # a paper whose primary class is one of these is excluded
llm_fallback = true              # no \\subjclass: the judge classifies (codes checked against the table)

[templates]                      # stage c
per_paper = 3                    # meta-templates asked of the generator per paper (the paper: 2 to 3)
paper_chars = 24000              # how much of the paper's text the generator and the judges read

[translation]                    # stage d
enabled = true                   # the translator rewrites formal_solution and writes the brute-force check
repair_rounds = 1                # rounds that show the translator its code's execution error
trial_cases = 2                  # small cases run in the sandbox to find execution errors

[execution]                      # stages e and g, in the sandbox
instances_per_template = 5
seed = 0
timeout_s = 20                   # per template's sandboxed process
per_instance_s = 5               # per run of the code inside it (an instance runs twice): one run that
                                 #   never ends costs its instance, not the template's other instances
memory_mb = 1024

[review]                         # stage f
validity = true                  # the judge checks a rendered instance: self-contained, unambiguous, one answer
originality_threshold = 0.8      # estimated Jaccard similarity of word 5-shingles that counts as a near-duplicate
shingle_words = 5
num_perm = 128                   # MinHash permutations
corpora = []                     # files of known problems (one text a line, or JSONL with a "problem"/"text" field)
screening = false                # drop generations whose average token log-probability is below the threshold
min_avg_logprob = -1.5           #   (needs a server that returns prompt log-probabilities; skipped otherwise)

[generation]
temperature = 0.7
max_tokens = 8192
sampling_seed = 0
"""

_CLASS = re.compile(r"\d{2}")


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Models(_Section):
    generator: str = "local/smollm2"
    judge: str = ""


class Filter(_Section):
    months_back: int = Field(24, ge=1, le=600)
    reference_date: str = ""
    authority: Literal["any", "journal", "list"] = "journal"
    venues: list[str] = Field(default_factory=list)
    institutions: list[str] = Field(default_factory=list)
    trust_local: bool = True
    computability: bool = True

    @field_validator("reference_date")
    @classmethod
    def _date(cls, value: str) -> str:
        if value:
            date.fromisoformat(value)  # a ValueError names the bad date
        return value

    def reference(self) -> date:
        return date.fromisoformat(self.reference_date) if self.reference_date else date.today()


class Classification(_Section):
    max_codes: int = Field(3, ge=1, le=3)
    exclude: list[str] = Field(default_factory=lambda: ["00", "01", "97"])
    llm_fallback: bool = True

    @field_validator("exclude")
    @classmethod
    def _classes(cls, value: list[str]) -> list[str]:
        bad = [v for v in value if not _CLASS.fullmatch(v)]
        if bad:
            raise ValueError(f"not two-digit MSC classes: {bad}")
        return value


class Templates(_Section):
    per_paper: int = Field(3, ge=1, le=10)
    paper_chars: int = Field(24000, ge=1000)


class Translation(_Section):
    enabled: bool = True
    repair_rounds: int = Field(1, ge=0, le=3)
    trial_cases: int = Field(2, ge=1, le=10)


class Execution(_Section):
    instances_per_template: int = Field(5, ge=1, le=100000)
    seed: int = 0
    timeout_s: float = Field(20, gt=0, le=3600)
    per_instance_s: float = Field(5, gt=0, le=3600)
    memory_mb: int = Field(1024, ge=64)


class Review(_Section):
    validity: bool = True
    originality_threshold: float = Field(0.8, gt=0.0, le=1.0)
    shingle_words: int = Field(5, ge=1, le=20)
    num_perm: int = Field(128, ge=16, le=1024)
    corpora: list[str] = Field(default_factory=list)
    screening: bool = False
    min_avg_logprob: float = -1.5


class Generation(_Section):
    temperature: float = 0.7
    max_tokens: int = 8192
    sampling_seed: int = 0


class EternalConfig(_Section):
    models: Models = Field(default_factory=Models)
    filter: Filter = Field(default_factory=Filter)
    classification: Classification = Field(default_factory=Classification)
    templates: Templates = Field(default_factory=Templates)
    translation: Translation = Field(default_factory=Translation)
    execution: Execution = Field(default_factory=Execution)
    review: Review = Field(default_factory=Review)
    generation: Generation = Field(default_factory=Generation)

    @property
    def judge(self) -> str:
        return self.models.judge or self.models.generator

    def stage_key(self, *parts: Any) -> str:
        """A short hash of the given settings (sections' dumps, model names, prompt versions)."""
        data = [p.model_dump() if isinstance(p, BaseModel) else p for p in parts]
        return json_digest(data, 12, ascii_only=True)

    def check(self) -> None:
        problems = []
        if self.filter.authority == "list" and not (self.filter.venues or self.filter.institutions):
            problems.append("filter.authority = \"list\" needs filter.venues and/or filter.institutions")
        ex = self.execution
        if ex.per_instance_s > ex.timeout_s:
            problems.append(f"execution.per_instance_s ({ex.per_instance_s:g}) is above execution.timeout_s "
                            f"({ex.timeout_s:g}): the template's process would be stopped first")  # fmt: skip
        for path in self.review.corpora:
            if not Path(path).is_file():
                problems.append(f"review.corpora: {path}: no such file")
        if problems:
            raise EternalConfigError("; ".join(problems))


class EternalConfigError(UserError, ValueError):
    pass


def load_config(path: str | Path | None = None, **overrides: Any) -> EternalConfig:
    return load_layered(DEFAULT_TOML, EternalConfig, path, overrides, EternalConfigError)


def config_toml() -> str:
    return DEFAULT_TOML


__all__ = ["DEFAULT_TOML", "EternalConfig", "EternalConfigError", "config_toml", "load_config"]
