"""Prompts and JSON schemas for every LLM step of LiveMathematicianBench generation.

Each ``*_messages`` builder returns chat messages (a system and a user message)
for one step; the matching ``*_SCHEMA`` constant is the JSON Schema (Draft
2020-12) that the reply must satisfy. Every user message ends with the JSON
shape expected, so that small local models see it last.

The schemas stay within what the model backends understand: no ``items: false``
(inspect's schema model rejects it) and a one-value ``enum`` next to every
``const`` (``const`` is dropped on the way to some providers).

``red_flags`` is the automatic check on a drafted stem and keyed option
(Stage 4a): source references, generic "which is correct" phrasings, a keyed
option that bundles several clauses, and a stem that gives the option away.
"""

from __future__ import annotations

import json
import re
from typing import Any

from theorembench.evaluate.mcq.items import META_OPTION
from theorembench.methods.lmb.categories import CATEGORIES, CATEGORY_NAMES, Category, get_category

Messages = list[dict[str, str]]

DISTRACTOR_LABELS: tuple[str, ...] = ("B", "C", "D", "E")
FALSE_LABELS: tuple[str, ...] = ("B", "D", "E")
WEAKER_TRUE_LABEL = "C"

# The hook types the stage-4b prompt offers, then three more that the released items use.
SKETCH_HOOK_TYPES: list[str] = [
    "case_split", "counting_estimate", "trace_identity", "geometric_construction", "computational_check",
    "outer_automorphism", "finiteness", "characteristic", "regularity", "other",
    "boundary_range", "boundedness", "iteration",
]  # fmt: skip
FALSE_TEMPLATES: list[str] = [
    "boundary_range", "uniformity_effectivity", "quantifier_dependence", "property_confusion", "stronger_trap",
    "wildcard",
]  # fmt: skip
TEMPLATES: list[str] = [*FALSE_TEMPLATES[:5], "weaker_true", "wildcard"]
MATCH_VERDICTS: list[str] = ["stem-trivial", "stem-nontrivial"]
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
        "sketch_hook_type": {"type": "string", "enum": SKETCH_HOOK_TYPES},
        "tampered_component": _text(),
        "template_used": {"type": "string", "enum": templates},
    })  # fmt: skip


def _fixed_array(prefix: list[dict[str, Any]], generic: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "prefixItems": prefix, "items": generic, "minItems": len(prefix), "maxItems": len(prefix)}


SKETCH_SCHEMA: dict[str, Any] = _obj({"sketch": _text(), "expanded_sketch": _text()})

CLASSIFY_SCHEMA: dict[str, Any] = _obj({
    "categories": {"type": "array", "items": {"type": "string", "enum": list(CATEGORY_NAMES)},
                   "minItems": 1, "maxItems": 3},
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
    "verdict": {"type": "string", "enum": MATCH_VERDICTS},
    "score": {"type": "number", "minimum": 0, "maximum": 1},
    "reason": {"type": "string"},
})  # fmt: skip

LATEX_REPAIR_SCHEMA: dict[str, Any] = _obj({"text": _text()})

ALL_SCHEMAS: dict[str, dict[str, Any]] = {
    "sketch": SKETCH_SCHEMA, "classify": CLASSIFY_SCHEMA, "stem": STEM_SCHEMA, "distractors": DISTRACTOR_SCHEMA,
    "rubric": RUBRIC_SCHEMA, "stem_only": STEM_ONLY_SCHEMA, "match": MATCH_SCHEMA, "latex_repair": LATEX_REPAIR_SCHEMA,
}  # fmt: skip


# -- shared pieces -----------------------------------------------------------------------


def _messages(system: str, user: str) -> Messages:
    return [{"role": "system", "content": system.strip()}, {"role": "user", "content": user.strip()}]


def _block(title: str, text: str | None, missing: str = "(none given)") -> str:
    body = (text or "").strip()
    return f"## {title}\n{body or missing}"


def _shape(example: str) -> str:
    return "Reply with one JSON object of exactly this shape and nothing else:\n" + example.strip()


def _dump(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=1)


def _question_parts(question: dict[str, Any]) -> tuple[str, str]:
    stem = str(question.get("question") or "")
    correct = question.get("correct_choice") or {}
    text = str(correct.get("text") or "") if isinstance(correct, dict) else str(correct)
    return stem, text


_SOURCE_BAN = (
    "Never refer to the source: no 'the theorem', 'the paper', 'the authors', 'the main result', 'as proved', "
    "no numbered references such as 'Theorem 2.1' or 'Lemma 3', no \\ref or \\cite, and nothing about a proof "
    "or a sketch."
)


# -- Stage 3b: proof sketch ---------------------------------------------------------------

_SKETCH_SYSTEM = """
You are a research mathematician summarising how a theorem is proved. You get the theorem, text from its paper, and the proof when it is available.

Write "sketch", a proof sketch of 3 to 8 sentences that gives:
- the main idea of the argument;
- the key steps, in order;
- the load-bearing constraints: where each hypothesis is really used, any critical case split, what the constants depend on, uniform versus pointwise or effective versus ineffective control, the order of quantifiers, and what would break without a hypothesis.
Give no computations and no full details. If no proof is given, reconstruct the most plausible strategy from the text, without inventing named lemmas or results.

Then write "expanded_sketch": the same sketch, but with every symbol and term specific to the paper defined where it appears, and labels, equation numbers and citation keys replaced by what they stand for, so that it reads on its own.
"""


def sketch_messages(theorem: str, context: str, proof: str | None) -> Messages:
    user = "\n\n".join([
        _block("Theorem", theorem),
        _block("Context from the paper", context),
        _block("Proof", proof, "(not available: infer the strategy from the context)"),
        _shape('{"sketch": "<3-8 sentences: main idea, key steps, load-bearing constraints>", '
               '"expanded_sketch": "<the same sketch with all notation defined>"}'),
    ])  # fmt: skip
    return _messages(_SKETCH_SYSTEM, user)


# -- Stage 3c: logical category -----------------------------------------------------------


def _category_list() -> str:
    return "\n".join(
        f"{i}. {c.name}: {c.canonical_form} {c.description}" for i, c in enumerate(CATEGORIES.values(), start=1)
    )


_CLASSIFY_SYSTEM = f"""
You classify research theorems by the logical form of their conclusion, whatever the field. There are thirteen categories, each with its canonical form:

{_category_list()}

Pick 1 to 3 categories that describe the main conclusion, the most prominent first. Judge the logical shape (quantifiers, connectives, kind of claim), not the topic. Use the names exactly as written above.
"""


def classify_messages(theorem: str, context: str) -> Messages:
    user = "\n\n".join([
        _block("Theorem", theorem),
        _block("Context from the paper", context),
        _shape('{"categories": ["<category name>"], "reason": "<one or two sentences>"}'),
    ])  # fmt: skip
    return _messages(_CLASSIFY_SYSTEM, user)


# -- Stage 4a: stem and keyed option --------------------------------------------------------


def _stem_system(cat: Category) -> str:
    return f"""
You write the question stem and the keyed answer (option A) of a hard multiple-choice question for research mathematicians, built from one theorem. Wrong options are written later by someone else: write none.

Logical category of the theorem: {cat.name}
Canonical form: {cat.canonical_form}
Decisive feature to probe: {cat.decisive_feature}
How to shape the stem for this category: {cat.stem_strategy}

The stem:
1. Before writing, separate for yourself the theorem's standing assumptions (setting, parameter ranges, structural hypotheses, equations, boundary conditions) from its conclusion. Do not weaken or strengthen either.
2. Is a genuine research question about a specific object or property, built around the single decisive feature above ({cat.decisive_feature}). Never a generic request such as "which of the following is correct" or "which is the strongest result below".
3. Is self-contained: it states every essential assumption and defines inline each object, symbol and term specific to the source. Standard notions of the field need no definition.
4. Gives nothing away: it does not contain the keyed answer or words that single it out.
5. {_SOURCE_BAN}

Option A:
6. States the conclusion that the question asks about in full, up to harmless rephrasing: the same quantifiers, ranges, constants and dependencies. Nothing omitted, nothing added, no change of strength or scope, so that it is the unique strongest correct answer.
7. Is one statement, not a bundle. If the theorem has several independent parts, build the question around the part carrying the decisive feature and state that part only; do not chain separate facts with "moreover" or enumerate (i), (ii).
8. Uses LaTeX for mathematics ($...$ inline, \\[...\\] for displays) with valid syntax, and does not mention any proof.
"""


STEM_SYSTEM_PROMPTS: dict[str, str] = {name: _stem_system(cat).strip() for name, cat in CATEGORIES.items()}

_STEM_SHAPE = _shape('{"question": "<self-contained question stem>", '
                     '"correct_choice": {"label": "A", "text": "<the full conclusion asked about>"}}')  # fmt: skip


def _stem_inputs(theorem: str, context: str, sketch: str) -> list[str]:
    return [
        _block("Theorem", theorem),
        _block("Context from the paper", context),
        _block("Proof sketch (to help you understand the result; do not use or mention it in the output)", sketch),
    ]


def stem_system_prompt(category: str) -> str:
    """The category's stage-4a system prompt (any accepted spelling of the category)."""
    return STEM_SYSTEM_PROMPTS[get_category(category).name]


def stem_messages(category: str, theorem: str, context: str, sketch: str) -> Messages:
    cat = get_category(category)
    task = f"Write the stem and option A for this theorem ({cat.name}); probe {cat.decisive_feature}."
    return _messages(STEM_SYSTEM_PROMPTS[cat.name], "\n\n".join([*_stem_inputs(theorem, context, sketch), task,
                                                                 _STEM_SHAPE]))  # fmt: skip


def stem_regenerate_messages(category: str, theorem: str, context: str, sketch: str,
                             previous: dict[str, Any], red_flags: list[str]) -> Messages:  # fmt: skip
    cat = get_category(category)
    problems = "\n".join(f"- {flag}" for flag in red_flags) or "- (no specific problem recorded)"
    task = (f"Your previous attempt was rejected. Write a new stem and option A for this theorem ({cat.name}) "
            f"that fix every problem listed and follow all the rules; probe {cat.decisive_feature}.")  # fmt: skip
    user = "\n\n".join([
        *_stem_inputs(theorem, context, sketch),
        _block("Previous attempt", _dump(previous)),
        _block("Problems found", problems),
        task,
        _STEM_SHAPE,
    ])  # fmt: skip
    return _messages(STEM_SYSTEM_PROMPTS[cat.name], user)


_STEM_REPAIR_SYSTEM = f"""
You make a multiple-choice question stem self-contained, working only from the theorem and the text of its paper (theorem-only repair).

1. Find every symbol, object, term or standing hypothesis in the stem and in option A that a specialist in the field could not understand without the paper.
2. Add a short inline definition of each to the stem, taken from the context or the theorem.
3. Add nothing that helps to pick the answer: no part of the conclusion and no hint about its strength.
4. Keep the question asked the same, and keep option A word for word unless its notation must match a definition you added.
5. {_SOURCE_BAN}
6. If nothing is missing, return the question unchanged.
"""


def stem_repair_messages(question: dict[str, Any], theorem: str, context: str) -> Messages:
    user = "\n\n".join([
        _block("Theorem", theorem),
        _block("Context from the paper", context),
        _block("Question to repair", _dump(question)),
        _STEM_SHAPE,
    ])  # fmt: skip
    return _messages(_STEM_REPAIR_SYSTEM, user)


# -- Stage 4b: sketch-adversarial distractors -----------------------------------------------

_TEMPLATE_GLOSSES = (
    "boundary_range (move a range, threshold or excluded case), uniformity_effectivity (claim a uniformity or "
    "effectivity that fails), quantifier_dependence (change the quantifier order or what depends on what), "
    "property_confusion (a closely related but inequivalent object or property), stronger_trap (overstate the "
    "conclusion)"
)

_DISTRACTOR_SHAPE = _shape("""
{"choices": [{"label": "B", "text": "<false>"}, {"label": "C", "text": "<weaker but true>"}, {"label": "D", "text": "<false>"}, {"label": "E", "text": "<false>"}],
 "meta": {"weaker_true_label": "C", "false_labels": ["B", "D", "E"], "wildcard_false_label": "<B, D or E>"},
 "sketch_usage_meta": [
  {"label": "B", "sketch_hook_type": "<hook>", "tampered_component": "<short phrase>", "template_used": "<template>"},
  {"label": "C", "sketch_hook_type": "<hook>", "tampered_component": "<short phrase>", "template_used": "weaker_true"},
  {"label": "D", "sketch_hook_type": "<hook>", "tampered_component": "<short phrase>", "template_used": "<template>"},
  {"label": "E", "sketch_hook_type": "<hook>", "tampered_component": "<short phrase>", "template_used": "<template>"}]}
""")


def _distractor_system(cat: Category) -> str:
    hints = "\n".join(f"- {strategy}: {hint}." for strategy, hint in cat.distractor_hints.items())
    return f"""
You write the four other options (B, C, D, E) of a hard multiple-choice question for research mathematicians. You get the theorem, a proof sketch, the question stem and the keyed option A. Do not change the stem or option A.

Logical category: {cat.name}. Decisive feature: {cat.decisive_feature}.

Work privately first: read the theorem, the sketch, the stem and A; find the central objects, hypotheses, quantifiers and case splits; pick from the sketch 1 to 3 load-bearing steps and the constraint each one enforces (a range or excluded case, what a constant depends on, uniform versus pointwise, effective versus ineffective, quantifier order, a hidden hypothesis, a structural restriction).

The options:
- C is weaker but true: it follows from A by dropping exactly one essential component, so it is correct yet not the strongest answer.
- B, D and E are false hard negatives. Each breaks exactly one sketch-derived load-bearing constraint, and should be very hard to rule out without understanding why the argument needs that constraint.
- Two of B, D, E use two different templates among: {_TEMPLATE_GLOSSES}. The third is the wildcard: free in form, but still tied to a specific constraint from the sketch; put its label in meta.wildcard_false_label.

For this category the perturbation strategies look like this:
{hints}
Use semantic weakening for C; build B, D and E from the other strategies, always with a change that makes the statement false.

Surface rules:
- Near miss: each option differs from A in one or two mathematically meaningful places. No unrelated statements, blunt negations or changes of topic.
- B, D and E match A in logical shape (quantifiers and clauses), LaTeX density and approximate length; C may be slightly shorter. When A has several clauses, tamper with one and keep the rest close to A.
- Spread A's key technical terms across the false options so that no keyword points to the answer. No hedging words unless A has them. No undefined symbols or type errors that give an option away.
- At least two false options look compatible with the hypotheses and fail only on a subtle point an expert has to check.
- Valid LaTeX. Never write the sentence "{META_OPTION}"

Metadata, one entry per option: sketch_hook_type is the kind of proof step you exploited ({", ".join(SKETCH_HOOK_TYPES)}); tampered_component is a short phrase naming the constraint you changed (for C, the component you dropped); template_used is weaker_true for C and, for B, D, E, one of the five templates or wildcard.
"""


DISTRACTOR_SYSTEM_PROMPTS: dict[str, str] = {
    name: _distractor_system(cat).strip() for name, cat in CATEGORIES.items()
}


def distractor_messages(category: str, theorem: str, sketch: str, question: dict[str, Any]) -> Messages:
    cat = get_category(category)
    stem, a_text = _question_parts(question)
    user = "\n\n".join([
        _block("Theorem", theorem),
        _block("Proof sketch", sketch),
        _block("Question stem", stem),
        _block("Option A (keyed, correct)", a_text),
        f"Write options B, C, D, E for this {cat.name} question.",
        _DISTRACTOR_SHAPE,
    ])  # fmt: skip
    return _messages(DISTRACTOR_SYSTEM_PROMPTS[cat.name], user)


_REVISION_SYSTEM = f"""
You audit the other options (B-E) of a hard multiple-choice question as an adversary trying to find the answer without doing the mathematics.

For each option ask: can it be rejected, or can A be picked, by surface reading alone, because of length, LaTeX density, logical shape, hedging, a missing definition, a type mismatch, an obvious negation, a change of topic or an internal contradiction? Check also that C really follows from A and is strictly weaker, and that B, D and E are false given A and the proof sketch.

Rewrite every option that fails so that it keeps its purpose (the same tampered constraint and template) but can only be rejected by real mathematical inspection. Leave options that pass unchanged. Keep the labels, meta and sketch_usage_meta consistent with the final options; C stays weaker_true. Do not change the stem or option A. Valid LaTeX. Never write the sentence "{META_OPTION}"
"""


def distractor_revision_messages(question: dict[str, Any], distractors: dict[str, Any], sketch: str,
                                 problems: list[str] | None) -> Messages:  # fmt: skip
    stem, a_text = _question_parts(question)
    current = {k: distractors.get(k) for k in ("choices", "meta", "sketch_usage_meta")}
    if problems:
        listed = "\n".join(f"- {p}" for p in problems)
        task = _block("Measured surface problems (fix exactly these, keep everything else as it is)", listed)
    else:
        task = "Audit the options and rewrite those that can be rejected by surface reading."
    user = "\n\n".join([
        _block("Question stem", stem),
        _block("Option A (keyed, correct)", a_text),
        _block("Proof sketch", sketch),
        _block("Current options B-E", _dump(current)),
        task,
        _DISTRACTOR_SHAPE,
    ])  # fmt: skip
    return _messages(_REVISION_SYSTEM, user)


# -- quality rubric --------------------------------------------------------------------------

_RUBRIC_SYSTEM = """
You grade a multiple-choice question that was built from a research theorem. Score four dimensions with 0, 1 or 2:

ALS (answer leakage): 2 = neither the stem nor the wording of the options gives the keyed answer away; 1 = a mild hint (shared wording, a telltale length or keyword); 0 = the answer can be read off.
TAS (tautology avoidance): 2 = the keyed statement is substantive and choosing it takes real mathematical inference, not recall or a restatement of the stem; 1 = mostly recall of the exact statement, or partly self-evident; 0 = trivially true or a restatement of the stem.
GPS (generative pressure): 2 = the options differ in subtle, meaningful ways, so the solver must work out what actually follows; 1 = some pressure, but some options fall quickly; 0 = guessable from surface cues.
DQS (distractor quality): 2 = the other options are plausible, precise and mathematically distinct, each failing for a definite reason; 1 = mixed; 0 = sloppy, implausible, duplicated or accidentally correct.

total_score is the sum of the four scores (0 to 8). Justify each score in one or two sentences, then give a one-sentence overall assessment.
"""

_META_NOTE = (
    "Note: the keyed option A is the substitution-resistant meta-option. One of B-E (the weaker but true "
    "option) is correct as stated, and a strictly stronger statement also holds, so A is the right answer."
)


def rubric_messages(item_mcq: dict[str, Any], theorem: str, sketch: str) -> Messages:
    stem, a_text = _question_parts(item_mcq)
    options = [f"(A) {a_text}  [keyed answer]"]
    options += [f"({c.get('label')}) {c.get('text')}" for c in item_mcq.get("choices") or []]
    parts = [
        _block("Theorem", theorem),
        _block("Proof sketch", sketch),
        _block("Question", stem),
        _block("Options", "\n\n".join(options)),
    ]
    if " ".join(a_text.split()) == META_OPTION:
        parts.append(_META_NOTE)
    parts.append(_shape(
        '{"ALS": {"score": 0, "justification": "..."}, "TAS": {"score": 0, "justification": "..."}, '
        '"GPS": {"score": 0, "justification": "..."}, "DQS": {"score": 0, "justification": "..."}, '
        '"total_score": 0, "overall_assessment": "..."}'
    ))
    return _messages(_RUBRIC_SYSTEM, "\n\n".join(parts))


# -- Stage 5: stem-only triviality ------------------------------------------------------------

_STEM_ONLY_SYSTEM = """
You are an expert mathematician. Answer the research question you are given; no answer options are shown. State the most precise and strongest conclusion you can justify, as a mathematical statement with explicit quantifiers, ranges, constants and dependencies. Do not hedge and do not list alternatives.
"""


def stem_only_messages(question: str) -> Messages:
    user = "\n\n".join([_block("Question", question), _shape('{"answer": "<your precise answer>"}')])
    return _messages(_STEM_ONLY_SYSTEM, user)


_MATCH_SYSTEM = """
You compare a free-form answer to a research question with the keyed correct answer. They match only when the free answer states the same mathematical content with the same strength: the same objects, quantifiers, ranges, constants and dependencies, up to notation and wording. An answer that is weaker, stronger, partial or different does not match.

match: true or false. verdict: "stem-trivial" when they match, "stem-nontrivial" otherwise. score: from 0 to 1, how completely the free answer captures the keyed answer (1 = the same statement). reason: one or two sentences.
"""


def match_messages(question: str, open_answer: str, correct_text: str) -> Messages:
    user = "\n\n".join([
        _block("Question", question),
        _block("Free-form answer", open_answer),
        _block("Keyed correct answer", correct_text),
        _shape('{"match": false, "verdict": "stem-nontrivial", "score": 0.0, "reason": "..."}'),
    ])  # fmt: skip
    return _messages(_MATCH_SYSTEM, user)


# -- LaTeX repair --------------------------------------------------------------------------------

_LATEX_REPAIR_SYSTEM = """
You fix the LaTeX syntax of a piece of mathematical text that failed to compile. Change only what the errors require: unbalanced braces or math delimiters, mismatched \\left/\\right, misspelled or undefined macros (expand them using the macro definitions given, or use a standard equivalent), stray characters. Keep the wording and the mathematics exactly as they are. Return the whole corrected text.
"""

_MAX_MACROS_CHARS = 6000


def latex_repair_messages(text: str, errors: list[str], macros: str) -> Messages:
    macros = (macros or "").strip()
    if len(macros) > _MAX_MACROS_CHARS:
        macros = macros[:_MAX_MACROS_CHARS] + "\n% (truncated)"
    user = "\n\n".join([
        _block("Errors", "\n".join(f"- {e}" for e in errors) or "- (no message)"),
        _block("Macro definitions of the paper", macros),
        _block("Text", text),
        _shape('{"text": "<the whole text with only the LaTeX syntax fixed>"}'),
    ])  # fmt: skip
    return _messages(_LATEX_REPAIR_SYSTEM, user)


# -- red flags on a drafted stem --------------------------------------------------------------------

_THEOREM_WORDS = r"theorem|lemma|proposition|corollary"

RED_FLAG_PATTERNS: list[tuple[str, str]] = [
    (r"(?i)\bwhich of the following (?:\w+ )?(?:is|are|gives|states) (?:the )?(?:strongest|best|most general|main|"
     r"correct|true|right) (?:result|theorem|claim|answer|option)s?\b",
     "generic 'which of the following is the strongest result' phrasing instead of a question about a specific object"),
    (r"(?i)\bwhich (?:one |option |choice |answer |statement |of (?:the following|these|the above|the options|"
     r"the statements)(?: statements| options| choices)? )?(?:is|are) (?:correct|true|right|valid)\s*(?:[?.:]|$)",
     "generic 'which is correct' question"),
    (r"(?i)\b(?:correct|true|right) (?:result|answer|statement|option|choice)s? (?:below|above|among (?:the|these)|"
     r"from the list)|\b(?:select|choose|pick) the (?:correct|true|right)\b",
     "asks for 'the correct result below' instead of a mathematical question"),
    (rf"(?i)\baccording to (?:the|this|that|our|its) (?:{_THEOREM_WORDS}|paper|article|result|statement|authors?|"
     r"text|source|proof)\b",
     "refers to the source ('according to the theorem')"),
    (rf"(?i)\bthe (?:{_THEOREM_WORDS}|result) (?:above|below|states|shows|asserts|says|claims|proves|establishes|"
     r"implies|guarantees)\b",
     "refers to the source ('the theorem above', 'the theorem states')"),
    (r"(?i)\b(?:this|the(?: above| given| stated| following| preceding| present| original| source| main)?)\s+"
     r"(?:theorem|lemma|corollary)\b(?!\s+(?:of|due to)\b)",
     "mentions 'the theorem' instead of stating the mathematics"),
    (r"(?i)\b(?:in|from|of|by) (?:the|this|our) (?:paper|article|manuscript|preprint|text|source)\b|"
     r"\b(?:this|our) work\b|\bthe authors?\b",
     "refers to the paper or its authors"),
    (r"(?i)\b(?:the|our|its|this) main (?:result|theorem|conclusion|proposition)s?\b",
     "refers to 'the main result'"),
    (r"(?i)\bas (?:(?:was|is|has been|we) )?(?:proved|proven|established)\b|"
     r"\bas (?:(?:was|is|has been|we) )?shown (?:above|below|earlier|previously|in)\b|\bwe (?:prove|show|establish)\b",
     "refers to a proof ('as proved')"),
    (r"\b(?:Theorem|Lemma|Proposition|Corollary|Conjecture|Section|Remark|Definition|Claim|Equation|Eq\.)\s*~?\s*"
     r"(?:\d|\\ref\b|\\eqref\b|\\cref\b|[A-Z]\b)|\b(?i:theorem|lemma|proposition|corollary|section|equation)\s*~?\s*\d",
     "numbered reference such as 'Theorem 2'"),
    (r"\\(?:ref|eqref|cref|Cref|autoref|cite|citep|citet)\s*\{",
     "dangling \\ref or \\cite"),
    (r"(?i)\b(?:the|this|our|its) (?:proof sketch|sketch|proof)\b(?![-\w])",
     "mentions the proof or the sketch"),
]

_COMPILED = [(re.compile(rx), desc) for rx, desc in RED_FLAG_PATTERNS]

MIN_STEM_CHARS = 40
MIN_STEM_WORDS = 6
MAX_OPTION_SENTENCES = 2
_MIN_VERBATIM_CHARS = 20

_MATH = re.compile(r"\$\$.*?\$\$|\$[^$]*\$|\\\[.*?\\\]|\\\(.*?\\\)|\\begin\{(\w+\*?)\}.*?\\end\{\1\}", re.DOTALL)
_ABBREV = re.compile(r"\b(?:i\.e|e\.g|cf|resp|etc|vs|viz|et al|a\.e|w\.r\.t|i\.i\.d|Thm|Prop|Lem|Cor|Eq|Fig|Sec)\.",
                     re.IGNORECASE)  # fmt: skip
_SENTENCE_END = re.compile(r"[.!?](?=\s+[A-Z(\\$]|\s*$)")
_BUNDLE = re.compile(
    r";\s*(?:moreover|furthermore|in addition|additionally|also)\b|\band (?:furthermore|moreover)\b",
    re.IGNORECASE,
)
_ENUMERATION = re.compile(
    r"(?:^|[\s:;,])\((?:i|1|a)\)\s.*?(?:^|[\s:;,])\((?:ii|2|b)\)\s",
    re.DOTALL,
)


def _plain(text: str) -> str:
    """Text with math replaced by a placeholder and abbreviations defused, for sentence counting."""
    out = _MATH.sub(" X ", text)
    out = _ABBREV.sub("abbr", out)
    return " ".join(out.split())


def sentence_count(text: str) -> int:
    plain = _plain(text)
    if not plain:
        return 0
    pieces = [p for p in _SENTENCE_END.split(plain) if re.search(r"[A-Za-z]", p)]
    return max(1, len(pieces))


def _norm(text: str) -> str:
    return " ".join(text.split()).strip().rstrip(".;,").lower()


def red_flags(question: dict[str, Any]) -> list[str]:
    """Problems that disqualify a drafted stem and keyed option; empty when it is acceptable."""
    stem, a_text = _question_parts(question)
    flags: list[str] = []
    stem_clean = " ".join(stem.split())
    if not stem_clean:
        flags.append("the stem is empty")
    elif len(stem_clean) < MIN_STEM_CHARS or len(stem_clean.split()) < MIN_STEM_WORDS:
        flags.append(f"the stem is too short to be self-contained ({len(stem_clean)} characters)")
    is_meta = " ".join(a_text.split()) == META_OPTION
    for rx, desc in _COMPILED:
        for where, text in (("the stem", stem), ("option A", "" if is_meta else a_text)):
            found = rx.search(text)
            if found:
                flags.append(f"{desc}: {where} contains {found.group(0).strip()!r}")
                break
    if not a_text.strip():
        flags.append("option A is empty")
    elif not is_meta:
        n = sentence_count(a_text)
        plain = _plain(a_text)
        if n > MAX_OPTION_SENTENCES:
            flags.append(f"option A bundles several theorem clauses ({n} sentences); keep one decisive statement")
        elif _BUNDLE.search(plain):
            flags.append("option A bundles several theorem clauses (joined by 'moreover' or 'furthermore')")
        elif _ENUMERATION.search(plain):
            flags.append("option A bundles several theorem clauses (an enumeration (i), (ii), ...)")
        a_norm = _norm(a_text)
        if len(a_norm) >= _MIN_VERBATIM_CHARS and a_norm in _norm(stem):
            flags.append("the stem contains option A verbatim, giving the answer away")
    return flags


__all__ = [
    "ALL_SCHEMAS", "CLASSIFY_SCHEMA", "DISTRACTOR_SCHEMA", "DISTRACTOR_SYSTEM_PROMPTS", "FALSE_TEMPLATES",
    "LATEX_REPAIR_SCHEMA", "MATCH_SCHEMA", "MATCH_VERDICTS", "RED_FLAG_PATTERNS", "RUBRIC_SCHEMA", "SKETCH_HOOK_TYPES",
    "SKETCH_SCHEMA", "STEM_ONLY_SCHEMA", "STEM_SCHEMA", "STEM_SYSTEM_PROMPTS", "TEMPLATES", "classify_messages",
    "distractor_messages", "distractor_revision_messages", "latex_repair_messages", "match_messages", "red_flags",
    "rubric_messages", "sentence_count", "sketch_messages", "stem_messages", "stem_only_messages",
    "stem_regenerate_messages", "stem_repair_messages", "stem_system_prompt",
]  # fmt: skip
