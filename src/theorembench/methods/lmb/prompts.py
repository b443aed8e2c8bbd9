"""Prompts and JSON schemas for every LLM step of LiveMathematicianBench generation.

Each ``*_messages`` builder returns chat messages (a system and a user message)
for one step; the matching ``*_SCHEMA`` constant is the JSON Schema (Draft
2020-12) that the reply must satisfy. Every user message ends with the JSON
shape expected, so that small local models see it last.

The names live in smaller modules; this one gathers them so that callers write
``from theorembench.methods.lmb import prompts as P`` and ``P.<name>``:

* :mod:`~theorembench.methods.lmb.schemas`: the reply schemas and the label and
  template vocabularies;
* :mod:`~theorembench.methods.lmb.writing_prompts`: sketch, classification, stem and
  keyed option, distractors (stages 3b to 4b);
* :mod:`~theorembench.methods.lmb.check_prompts`: quality rubric, stem-only
  triviality (answer and match), LaTeX repair, the shortcut audit's options-only answer;
* :mod:`~theorembench.methods.lmb.stem_red_flags`: ``red_flags``, the automatic check
  on a drafted stem and keyed option (Stage 4a);
* :mod:`~theorembench.methods.lmb.prompt_parts`: the pieces the prompts are built from.
"""

from __future__ import annotations

from theorembench.methods.lmb.check_prompts import (
    latex_repair_messages,
    match_messages,
    options_only_messages,
    rubric_messages,
    stem_only_messages,
)
from theorembench.methods.lmb.prompt_parts import Messages
from theorembench.methods.lmb.schemas import (
    ALL_SCHEMAS,
    CLASSIFY_SCHEMA,
    DISTRACTOR_LABELS,
    DISTRACTOR_SCHEMA,
    FALSE_LABELS,
    FALSE_TEMPLATES,
    LATEX_REPAIR_SCHEMA,
    MATCH_SCHEMA,
    MATCH_VERDICTS,
    RUBRIC_DIMENSIONS,
    RUBRIC_SCHEMA,
    SKETCH_HOOK_TYPES,
    SKETCH_SCHEMA,
    STEM_ONLY_SCHEMA,
    STEM_SCHEMA,
    TEMPLATES,
    WEAKER_TRUE_LABEL,
)
from theorembench.methods.lmb.stem_red_flags import (
    MIN_STEM_CHARS,
    MIN_STEM_WORDS,
    RED_FLAG_PATTERNS,
    red_flags,
)
from theorembench.methods.lmb.writing_prompts import (
    DISTRACTOR_SYSTEM_PROMPTS,
    STEM_SYSTEM_PROMPTS,
    classify_messages,
    distractor_messages,
    distractor_revision_messages,
    sketch_messages,
    stem_messages,
    stem_regenerate_messages,
    stem_repair_messages,
    stem_system_prompt,
)

__all__ = [
    "ALL_SCHEMAS",
    "CLASSIFY_SCHEMA",
    "DISTRACTOR_LABELS",
    "DISTRACTOR_SCHEMA",
    "DISTRACTOR_SYSTEM_PROMPTS",
    "FALSE_LABELS",
    "FALSE_TEMPLATES",
    "LATEX_REPAIR_SCHEMA",
    "MATCH_SCHEMA",
    "MATCH_VERDICTS",
    "MIN_STEM_CHARS",
    "MIN_STEM_WORDS",
    "RED_FLAG_PATTERNS",
    "RUBRIC_DIMENSIONS",
    "RUBRIC_SCHEMA",
    "SKETCH_HOOK_TYPES",
    "SKETCH_SCHEMA",
    "STEM_ONLY_SCHEMA",
    "STEM_SCHEMA",
    "STEM_SYSTEM_PROMPTS",
    "TEMPLATES",
    "WEAKER_TRUE_LABEL",
    "Messages",
    "classify_messages",
    "distractor_messages",
    "distractor_revision_messages",
    "latex_repair_messages",
    "match_messages",
    "options_only_messages",
    "red_flags",
    "rubric_messages",
    "sketch_messages",
    "stem_messages",
    "stem_only_messages",
    "stem_regenerate_messages",
    "stem_repair_messages",
    "stem_system_prompt",
]  # fmt: skip
