"""Every parameter of ``theorembench lmb build``, in one TOML file with the paper's defaults.

``theorembench lmb config`` prints this file with its comments; edit a copy and pass
it with ``--config``. Command-line model options override the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from theorembench.common.digest import json_digest
from theorembench.common.errors import UserError
from theorembench.common.tomlconfig import load_layered

DEFAULT_TOML = """\
# theorembench lmb build: LiveMathematicianBench generation settings.
# Defaults follow the LiveMathematicianBench paper; see the README for each stage.

[models]
generator = "local/smollm2"      # sketch, classification, stems, distractors, repairs
judges = []                      # rubric and stem-only judges; empty = the generator
calibrator = ""                  # hardness calibration model; empty = the generator

[generation]
temperature = 0.7                # generator sampling temperature
max_tokens = 4096                # per generation call
reasoning_effort = ""            # e.g. "medium" for reasoning models; empty = provider default
max_regenerations = 2            # stem regenerations after a red flag
red_flag_checks = true           # reject trivialising stems (turn off only for smoke runs on tiny models)
repair_stem = true               # theorem-only repair pass for self-containedness
stem_inputs = "theorem"          # what the stem writer reads: "theorem" (the paper), "theorem+context", "theorem+context+sketch"
variants = 2                     # distractor sets per theorem: the original and one regenerated (Stage 6, step 1)
substitution_resistant_fraction = 0.5   # share of items whose keyed answer is the meta-option
seed = 20250101                  # decides which theorems' items are substitution-resistant (nothing else)
sampling_seed = 20250101         # sampling seed of every generator and judge call (part of the cache key)

[surface]                        # computed anti-gaming constraints on the options vs option A (calibrated on the release)
min_length_ratio = 0.5           # false options only; the weaker-true option may be shorter
max_length_ratio = 1.8
max_latex_density_gap = 0.25     # |density(option) - density(A)|, density = LaTeX/math characters per character
short_chars = 120                # texts shorter than this are measured with more tolerance (see methods/lmb/surface.py)
revisions = 1                    # revision rounds for offenders; items still failing are kept with surface_flags

[latex]
check = true                     # KaTeX per math segment and pdflatex on the whole item
repairs = 1                      # LLM repair rounds for invalid LaTeX before the item is dropped

[filters]
rubric_min = 5                   # keep items with ALS+TAS+GPS+DQS >= this (0-8)
stem_only = true                 # Stage 5: drop items answerable from the stem alone

[calibration]
enabled = true                   # Stage 6: keep per theorem the hardest variant the calibrator gets wrong
reasoning_effort = "medium"
max_tokens = 16384
seed = 42                        # option order shown to the calibrator
recheck = true                   # the calibrator answers the hard split once more: summary.json's hard_accuracy

[context]                        # how much recovered context the generator reads
context_chars = 4000
full_context_chars = 12000
"""


class Models(BaseModel):
    model_config = ConfigDict(extra="forbid")
    generator: str = "local/smollm2"
    judges: list[str] = Field(default_factory=list)
    calibrator: str = ""


class Generation(BaseModel):
    model_config = ConfigDict(extra="forbid")
    temperature: float = 0.7
    max_tokens: int = 4096
    reasoning_effort: str = ""
    max_regenerations: int = Field(2, ge=0, le=10)
    red_flag_checks: bool = True
    repair_stem: bool = True
    stem_inputs: Literal["theorem", "theorem+context", "theorem+context+sketch"] = "theorem"
    variants: int = Field(2, ge=1, le=5)
    substitution_resistant_fraction: float = Field(0.5, ge=0.0, le=1.0)
    seed: int = 20250101  # picks the substitution-resistant theorems
    sampling_seed: int = 20250101  # the seed of every generator and judge call


class Surface(BaseModel):
    model_config = ConfigDict(extra="forbid")
    min_length_ratio: float = 0.5
    max_length_ratio: float = 1.8
    max_latex_density_gap: float = 0.25
    short_chars: int = Field(120, ge=0)
    revisions: int = Field(1, ge=0, le=5)


class Latex(BaseModel):
    model_config = ConfigDict(extra="forbid")
    check: bool = True
    repairs: int = Field(1, ge=0, le=5)


class Filters(BaseModel):
    model_config = ConfigDict(extra="forbid")
    rubric_min: int = Field(5, ge=0, le=8)
    stem_only: bool = True


class Calibration(BaseModel):
    model_config = ConfigDict(extra="forbid")
    enabled: bool = True
    reasoning_effort: str = "medium"
    max_tokens: int = 16384
    seed: int = 42
    recheck: bool = True


class Context(BaseModel):
    model_config = ConfigDict(extra="forbid")
    context_chars: int = 4000
    full_context_chars: int = 12000


class LMBConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    models: Models = Field(default_factory=Models)
    generation: Generation = Field(default_factory=Generation)
    surface: Surface = Field(default_factory=Surface)
    latex: Latex = Field(default_factory=Latex)
    filters: Filters = Field(default_factory=Filters)
    calibration: Calibration = Field(default_factory=Calibration)
    context: Context = Field(default_factory=Context)

    @property
    def judges(self) -> list[str]:
        return self.models.judges or [self.models.generator]

    @property
    def calibrator(self) -> str:
        return self.models.calibrator or self.models.generator

    def key(self, *sections: str) -> str:
        """A short hash of the named sections (all when none): the settings part of a stage key."""
        data = self.model_dump()
        if sections:
            data = {s: data[s] for s in sections}
        return json_digest(data, 12, ascii_only=True)


class ConfigError(UserError, ValueError):
    pass


def load_config(path: str | Path | None = None, **overrides: Any) -> LMBConfig:
    return load_layered(DEFAULT_TOML, LMBConfig, path, overrides, ConfigError)
