"""JSON schemas for the replies of every LLM step of LiveMathematicianBench generation.

Each ``*_SCHEMA`` constant is the JSON Schema (Draft 2020-12) that one step's reply must
satisfy (:data:`ALL_SCHEMAS` names them by step); the label and template vocabularies
the schemas and the prompts share sit here too.

The schemas stay within what the model backends understand: no ``items: false``
(inspect's schema model rejects it) and a one-value ``enum`` next to every
``const`` (``const`` is dropped on the way to some providers).
"""

from __future__ import annotations

from typing import Any

from theorembench.methods.lmb.categories import CATEGORY_NAMES, UNKNOWN

DISTRACTOR_LABELS: tuple[str, ...] = ("B", "C", "D", "E")
FALSE_LABELS: tuple[str, ...] = ("B", "D", "E")
WEAKER_TRUE_LABEL = "C"

# The hook types the stage-4b prompt offers, then three more that the released items use. A guide, not a closed
# list: the release has others (2512.20055v1::alt1 uses combinatorial_check), so a reply may name any identifier.
SKETCH_HOOK_TYPES: list[str] = [
    "case_split", "counting_estimate", "trace_identity", "geometric_construction", "computational_check",
    "outer_automorphism", "finiteness", "characteristic", "regularity", "other",
    "boundary_range", "boundedness", "iteration",
]  # fmt: skip
HOOK_IDENTIFIER = r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$"  # snake_case, as every released hook type
FALSE_TEMPLATES: list[str] = [
    "boundary_range", "uniformity_effectivity", "quantifier_dependence", "property_confusion", "stronger_trap",
    "wildcard",
]  # fmt: skip
TEMPLATES: list[str] = [*FALSE_TEMPLATES[:5], "weaker_true", "wildcard"]
# examples of the matching judge's short verdict (free text in the release: "Does not match", "stronger than
# correct answer", "The predicted answer is weaker/incomplete."); ``match`` carries the decision
MATCH_VERDICTS: list[str] = ["matches", "does not match", "stronger than the keyed answer", "weaker or incomplete"]
RUBRIC_DIMENSIONS: tuple[str, ...] = ("ALS", "TAS", "GPS", "DQS")


# -- schemas -----------------------------------------------------------------------------


def _const(value: str) -> dict[str, Any]:
    return {"type": "string", "const": value, "enum": [value]}


def _text(min_length: int = 1) -> dict[str, Any]:
    return {"type": "string", "minLength": min_length}


def _obj(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def _choice(label: str | None) -> dict[str, Any]:
    lab = _const(label) if label else {"type": "string", "enum": list(DISTRACTOR_LABELS)}
    return _obj({"label": lab, "text": _text()})


def _usage(label: str | None, templates: list[str]) -> dict[str, Any]:
    lab = _const(label) if label else {"type": "string", "enum": list(DISTRACTOR_LABELS)}
    return _obj({
        "label": lab,
        "sketch_hook_type": {"type": "string", "pattern": HOOK_IDENTIFIER},
        "tampered_component": _text(),
        "template_used": {"type": "string", "enum": templates},
    })  # fmt: skip


def _fixed_array(prefix: list[dict[str, Any]], generic: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "prefixItems": prefix, "items": generic, "minItems": len(prefix), "maxItems": len(prefix)}


SKETCH_SCHEMA: dict[str, Any] = _obj({"sketch": _text(), "expanded_sketch": _text()})

CLASSIFY_SCHEMA: dict[str, Any] = _obj({
    # "unknown" when none fits: the theorem is kept with that type, as in the release
    "categories": {"type": "array", "items": {"type": "string", "enum": [*CATEGORY_NAMES, UNKNOWN]},
                   "minItems": 1, "maxItems": 2},  # as in the release
    "reason": {"type": "string"},
})  # fmt: skip

STEM_SCHEMA: dict[str, Any] = _obj({"question": _text(), "correct_choice": _obj({"label": _const("A"), "text": _text()})})

DISTRACTOR_SCHEMA: dict[str, Any] = _obj({
    "choices": _fixed_array([_choice(lab) for lab in DISTRACTOR_LABELS], _choice(None)),
    "meta": _obj({
        "weaker_true_label": _const(WEAKER_TRUE_LABEL),
        "false_labels": _fixed_array([_const(lab) for lab in FALSE_LABELS],
                                     {"type": "string", "enum": list(FALSE_LABELS)}),
        "wildcard_false_label": {"type": "string", "enum": list(FALSE_LABELS)},
    }),
    "sketch_usage_meta": _fixed_array(
        [_usage(lab, ["weaker_true"] if lab == WEAKER_TRUE_LABEL else FALSE_TEMPLATES) for lab in DISTRACTOR_LABELS],
        _usage(None, TEMPLATES),
    ),
})  # fmt: skip

_DIMENSION = _obj({"score": {"type": "integer", "minimum": 0, "maximum": 2}, "justification": {"type": "string"}})
RUBRIC_SCHEMA: dict[str, Any] = _obj({
    **{dim: _DIMENSION for dim in RUBRIC_DIMENSIONS},
    "total_score": {"type": "integer", "minimum": 0, "maximum": 8},
    "overall_assessment": {"type": "string"},
})  # fmt: skip

STEM_ONLY_SCHEMA: dict[str, Any] = _obj({"answer": _text()})

MATCH_SCHEMA: dict[str, Any] = _obj({
    "match": {"type": "boolean"},
    "verdict": {"type": "string", "minLength": 1, "maxLength": 200},
    "score": {"type": "number", "minimum": 0, "maximum": 1},
    "reason": {"type": "string"},
})  # fmt: skip

LATEX_REPAIR_SCHEMA: dict[str, Any] = _obj({"text": _text()})

ALL_SCHEMAS: dict[str, dict[str, Any]] = {
    "sketch": SKETCH_SCHEMA, "classify": CLASSIFY_SCHEMA, "stem": STEM_SCHEMA, "distractors": DISTRACTOR_SCHEMA,
    "rubric": RUBRIC_SCHEMA, "stem_only": STEM_ONLY_SCHEMA, "match": MATCH_SCHEMA, "latex_repair": LATEX_REPAIR_SCHEMA,
}  # fmt: skip


__all__ = [
    "ALL_SCHEMAS", "CLASSIFY_SCHEMA", "DISTRACTOR_LABELS", "DISTRACTOR_SCHEMA", "FALSE_LABELS", "FALSE_TEMPLATES",
    "LATEX_REPAIR_SCHEMA", "MATCH_SCHEMA", "MATCH_VERDICTS", "RUBRIC_DIMENSIONS", "RUBRIC_SCHEMA", "SKETCH_HOOK_TYPES",
    "SKETCH_SCHEMA", "STEM_ONLY_SCHEMA", "STEM_SCHEMA", "TEMPLATES", "WEAKER_TRUE_LABEL",
]  # fmt: skip
