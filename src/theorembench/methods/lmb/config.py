"""Every parameter of ``theorembench lmb build``, with the paper's defaults.

``theorembench lmb config`` prints the settings file written from these models (each field's
description is its comment); edit a copy and pass it with ``--config``. Command-line model
options override the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from theorembench.common.settings import Section, Settings


class Models(Section):
    generator: str = Field("local/smollm2", description="sketch, classification, stems, distractors, repairs")
    judges: list[str] = Field(default_factory=list, description="rubric and stem-only judges; empty = the generator")
    calibrator: str = Field("", description="hardness calibration model; empty = the generator")


class Generation(Section):
    """Stages 3b-4b and the item assembly.

    Why ``substitution_resistant_fraction`` defaults to 1/5 and ``meta_distractor_share`` to 1 (a
    deliberate difference from the paper). Let s be the share of items keyed to the meta-option and d
    the share of the other items where the meta-option replaces a false distractor. The meta-option is
    then shown in s + (1 - s) d of the items and is correct in s of them, so
    P(correct | meta-option shown) = s / (s + (1 - s) d). With five options chance is 1/5, reached when
    d = 4 s / (1 - s), which is at most 1 only for s <= 1/5. In the paper's design (about half the
    items keyed to the meta-option, and d = 0: the released 202511 hard split keys it in all 14 items
    that show it) a model that picks the meta-option whenever it is shown gets s + (1 - s)/5, about 60%,
    for free. With s = 1/5 and d = 1 the meta-option is in every item and right in one of five: its
    presence says nothing and "always pick it" is worth chance. ``substitution_resistant_fraction = 0.5``
    with ``meta_distractor_share = 0`` restores the paper's behaviour. Whatever the shares, the build's
    shortcut audit (``shortcut_audit.json``) measures the result on the hard split.
    """

    temperature: float = Field(0.7, description="generator sampling temperature")
    max_tokens: int = Field(4096, description="per generation call")
    reasoning_effort: str = Field("", description='e.g. "medium" for reasoning models; empty = provider default')
    max_regenerations: int = Field(2, ge=0, le=10, description="stem regenerations after a red flag")
    red_flag_checks: bool = Field(True, description="reject trivialising stems (turn off only for smoke runs on "
                                                    "tiny models)")  # fmt: skip
    repair_stem: bool = Field(True, description="theorem-only repair pass for self-containedness")
    sketch_inputs: Literal["intro+proof", "intro+proof+context", "proof+context"] = Field(
        "intro+proof", description='what the sketch writer reads besides the theorem: "intro+proof" (the release: the '
                                   "Introduction's text after the theorem first, the theorem's own proof second), "
                                   '"intro+proof+context" (and the recovered context), "proof+context" (no '
                                   "Introduction text)")  # fmt: skip
    stem_inputs: Literal["theorem", "theorem+context", "theorem+context+sketch"] = Field(
        "theorem", description='what the stem writer reads: "theorem" (the paper), "theorem+context", '
                               '"theorem+context+sketch"')  # fmt: skip
    variants: int = Field(2, ge=1, le=5, description="distractor sets per theorem: the original and one "
                                                     "regenerated (Stage 6, step 1)")  # fmt: skip
    substitution_resistant_fraction: float = Field(
        0.2, ge=0.0, le=1.0, description="share of items whose keyed answer is the meta-option (the paper: about "
                                         "0.5; 0.2 with meta_distractor_share 1 puts it at chance: see Generation)")  # fmt: skip
    meta_distractor_share: float = Field(
        1.0, ge=0.0, le=1.0, description="share of the other theorems whose items show the meta-option as a false "
                                         "distractor, so that its presence does not give the answer away (1: see "
                                         "Generation in methods/lmb/config.py for why)")  # fmt: skip
    seed: int = Field(20250101, description="decides which theorems' items are substitution-resistant and which "
                                            "show the meta-option as a distractor (nothing else)")  # fmt: skip
    sampling_seed: int = Field(20250101, description="sampling seed of every generator and judge call (part of the "
                                                     "cache key)")  # fmt: skip


class Surface(Section):
    min_length_ratio: float = Field(0.5, description="false options only; the weaker-true option may be shorter")
    max_length_ratio: float = 1.8
    max_latex_density_gap: float = Field(0.25, description="|density(option) - density(A)|, density = LaTeX/math "
                                                           "characters per character")  # fmt: skip
    short_chars: int = Field(120, ge=0, description="texts shorter than this are measured with more tolerance (see "
                                                    "methods/lmb/surface.py)")  # fmt: skip
    revisions: int = Field(1, ge=0, le=5, description="revision rounds for offenders; items still failing are kept "
                                                      "with surface_flags")  # fmt: skip


class Latex(Section):
    check: bool = Field(True, description="KaTeX per math segment and pdflatex on the whole item")
    repairs: int = Field(1, ge=0, le=5, description="LLM repair rounds for invalid LaTeX before the item is dropped")


class Filters(Section):
    rubric_min: int = Field(5, ge=0, le=8, description="keep items with ALS+TAS+GPS+DQS >= this (0-8)")
    stem_only: bool = Field(True, description="Stage 5: drop items answerable from the stem alone")


class Calibration(Section):
    enabled: bool = Field(True, description="Stage 6: keep per theorem the hardest variant the calibrator gets wrong")
    reasoning_effort: str = "medium"
    max_tokens: int = 16384
    seed: int = Field(42, description="option order shown to the calibrator")
    recheck: bool = Field(True, description="the calibrator answers the hard split once more: summary.json's "
                                            "hard_accuracy")  # fmt: skip


class Context(Section):
    context_chars: int = 4000
    full_context_chars: int = 12000


class Output(Section):
    layout: Literal["flat", "released"] = Field(
        "flat", description='"flat": every split and summary.json in the output folder; "released": the authors\' '
                            "layout, data/<YYYYMM>/hard/qaEval_<YYYYMM>_ge5_hard.json, the other splits and summary.json "
                            "in data/<YYYYMM>/")  # fmt: skip


class Audit(Section):
    options_only: bool = Field(True, description="the shortcut audit's options-only baseline: the first judge "
                                                 "answers each hard item from its options alone, without the stem "
                                                 "(one call per hard item; the other baselines cost nothing)")  # fmt: skip


class LMBConfig(Settings):
    TOML_HEADER = ("theorembench lmb build: LiveMathematicianBench generation settings.\n"
                   "Defaults follow the LiveMathematicianBench paper; see the README for each stage.")  # fmt: skip
    models: Models = Field(default_factory=Models)
    generation: Generation = Field(default_factory=Generation)
    surface: Surface = Field(default_factory=Surface, description="computed anti-gaming constraints on the "
                                                                  "options vs option A (calibrated on the release)")
    latex: Latex = Field(default_factory=Latex)
    filters: Filters = Field(default_factory=Filters)
    calibration: Calibration = Field(default_factory=Calibration)
    context: Context = Field(default_factory=Context, description="how much recovered context the generator reads")
    output: Output = Field(default_factory=Output, description="where the splits go")
    audit: Audit = Field(default_factory=Audit, description="the shortcut audit of the hard split "
                                                            "(shortcut_audit.json)")  # fmt: skip

    @property
    def judges(self) -> list[str]:
        return self.models.judges or [self.models.generator]

    @property
    def calibrator(self) -> str:
        return self.models.calibrator or self.models.generator


def config_toml() -> str:
    """The documented settings file with the paper's defaults."""
    return LMBConfig.default_toml()


def load_config(path: str | Path | None = None, **overrides: Any) -> LMBConfig:
    return LMBConfig.load(path, **overrides)
