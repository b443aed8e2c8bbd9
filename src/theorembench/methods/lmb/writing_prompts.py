"""Prompts for the LiveMathematicianBench steps that write a question.

Stage 3b: the proof sketch; stage 3c: the logical category; stage 4a: the question stem
and the keyed option A (first draft, regeneration after red flags, theorem-only repair);
stage 4b: the sketch-adversarial distractors B-E and their revision after a surface
audit. Each ``*_messages`` builder returns the chat messages for one step; the reply
must satisfy the matching schema in :mod:`theorembench.methods.lmb.schemas`.
"""

from __future__ import annotations

from typing import Any

from theorembench.evaluate.mcq.items import META_OPTION
from theorembench.methods.lmb.categories import CATEGORIES, UNKNOWN_CATEGORY, Category, category_for_prompts
from theorembench.methods.lmb.prompt_parts import (
    SOURCE_BAN,
    Messages,
    block,
    chat_messages,
    dump,
    question_parts,
    reply_shape,
)
from theorembench.methods.lmb.schemas import SKETCH_HOOK_TYPES

# -- Stage 3b: proof sketch ---------------------------------------------------------------

_SKETCH_SYSTEM = """
You are a research mathematician summarising how a theorem is proved. You get the theorem and what its paper says about the proof: first the text that follows the theorem in the paper's Introduction, where authors usually outline their argument, then the theorem's own proof from the body when it was found, and sometimes surrounding context. Base the sketch on the Introduction's outline where it gives one; use the proof to make it precise.

Write "sketch", a proof sketch of 3 to 8 sentences that gives:
- the main idea of the argument;
- the key steps, in order;
- the load-bearing constraints: where each hypothesis is really used, any critical case split, what the constants depend on, uniform versus pointwise or effective versus ineffective control, the order of quantifiers, and what would break without a hypothesis.
Give no computations and no full details. If no proof is given, reconstruct the most plausible strategy from the text, without inventing named lemmas or results.

Then write "expanded_sketch": the same sketch, but with every symbol and term specific to the paper defined where it appears, and labels, equation numbers and citation keys replaced by what they stand for, so that it reads on its own.
"""


SKETCH_SOURCES = {"intro": "Introduction text after the theorem", "proof": "Proof", "context": "Context from the paper"}


def sketch_messages(theorem: str, sources: dict[str, str | None]) -> Messages:
    """The sketch request: the theorem, then each given source in ``SKETCH_SOURCES``' order (intro, proof,
    context), a missing one said to be missing."""
    blocks = [block("Theorem", theorem)]
    missing = {"intro": "(none: the Introduction says nothing after the theorem)",
               "proof": "(not available: infer the strategy from the text above)", "context": "(none given)"}
    blocks += [block(title, sources[key], missing[key]) for key, title in SKETCH_SOURCES.items() if key in sources]
    user = "\n\n".join([
        *blocks,
        reply_shape('{"sketch": "<3-8 sentences: main idea, key steps, load-bearing constraints>", '
               '"expanded_sketch": "<the same sketch with all notation defined>"}'),
    ])  # fmt: skip
    return chat_messages(_SKETCH_SYSTEM, user)


# -- Stage 3c: logical category -----------------------------------------------------------


def _category_list() -> str:
    return "\n".join(
        f"{i}. {c.name}: {c.canonical_form} {c.description}" for i, c in enumerate(CATEGORIES.values(), start=1)
    )


_CLASSIFY_SYSTEM = f"""
You classify research theorems by the logical form of their conclusion, whatever the field. There are thirteen categories, each with its canonical form:

{_category_list()}

Pick one or two categories that describe the main conclusion, the most prominent first (two only when the conclusion really has both shapes). Judge the logical shape (quantifiers, connectives, kind of claim), not the topic. Use the names exactly as written above.
"""


def classify_messages(theorem: str, context: str) -> Messages:
    user = "\n\n".join([
        block("Theorem", theorem),
        block("Context from the paper", context),
        reply_shape('{"categories": ["<category name>"], "reason": "<one or two sentences>"}'),
    ])  # fmt: skip
    return chat_messages(_CLASSIFY_SYSTEM, user)


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
5. {SOURCE_BAN}

Option A:
6. States the theorem's conclusion in full, up to harmless rephrasing, with every essential aspect of the result: its structure, existence claims, bounds, conditional clauses, arithmetic restrictions, and the same quantifiers, ranges, constants and dependencies. Nothing omitted, nothing added, no change of strength or scope, so that it is the unique strongest correct answer. A conclusion with several parts keeps all of them (several sentences, or "moreover", are fine when the theorem says that much).
7. Adds no auxiliary conclusion that the theorem does not state.
8. Uses LaTeX for mathematics ($...$ inline, \\[...\\] for displays) with valid syntax, and does not mention any proof.
"""


STEM_SYSTEM_PROMPTS: dict[str, str] = {name: _stem_system(cat).strip() for name, cat in CATEGORIES.items()}
# a theorem classified "unknown" (kept, as in the release) gets the generic prompts
UNKNOWN_STEM_SYSTEM_PROMPT = _stem_system(UNKNOWN_CATEGORY).strip()

_STEM_SHAPE = reply_shape('{"question": "<self-contained question stem>", '
                     '"correct_choice": {"label": "A", "text": "<the full conclusion asked about>"}}')  # fmt: skip


def _stem_inputs(theorem: str, context: str | None, sketch: str | None) -> list[str]:
    """The stem writer's inputs; as in the paper (Stage 4a) only the theorem unless context or sketch is given.

    ``None`` leaves a block out entirely (the theorem-only repair pass adds definitions later), so that
    neither the recovered context nor the proof sketch can leak into the stem.
    """
    parts = [block("Theorem", theorem)]
    if context is not None:
        parts.append(block("Context from the paper", context))
    if sketch is not None:
        parts.append(block("Proof sketch (to help you understand the result; do not use or mention it in the output)",
                           sketch))  # fmt: skip
    return parts


def stem_system_prompt(category: str) -> str:
    """The category's stage-4a system prompt (any accepted spelling of the category)."""
    return STEM_SYSTEM_PROMPTS.get(category_for_prompts(category).name, UNKNOWN_STEM_SYSTEM_PROMPT)


def stem_messages(category: str, theorem: str, context: str | None = None, sketch: str | None = None) -> Messages:
    cat = category_for_prompts(category)
    task = f"Write the stem and option A for this theorem ({cat.name}); probe {cat.decisive_feature}."
    system = STEM_SYSTEM_PROMPTS.get(cat.name, UNKNOWN_STEM_SYSTEM_PROMPT)
    return chat_messages(system, "\n\n".join([*_stem_inputs(theorem, context, sketch), task, _STEM_SHAPE]))


def stem_regenerate_messages(category: str, theorem: str, context: str | None, sketch: str | None,
                             previous: dict[str, Any], red_flags: list[str]) -> Messages:  # fmt: skip
    cat = category_for_prompts(category)
    problems = "\n".join(f"- {flag}" for flag in red_flags) or "- (no specific problem recorded)"
    task = (f"Your previous attempt was rejected. Write a new stem and option A for this theorem ({cat.name}) "
            f"that fix every problem listed and follow all the rules; probe {cat.decisive_feature}.")  # fmt: skip
    user = "\n\n".join([
        *_stem_inputs(theorem, context, sketch),
        block("Previous attempt", dump(previous)),
        block("Problems found", problems),
        task,
        _STEM_SHAPE,
    ])  # fmt: skip
    return chat_messages(STEM_SYSTEM_PROMPTS.get(cat.name, UNKNOWN_STEM_SYSTEM_PROMPT), user)


_STEM_REPAIR_SYSTEM = f"""
You make a multiple-choice question stem self-contained, working only from the theorem and the text of its paper (theorem-only repair).

1. Find every symbol, object, term or standing hypothesis in the stem and in option A that a specialist in the field could not understand without the paper.
2. Add a short inline definition of each to the stem, taken from the context or the theorem.
3. Add nothing that helps to pick the answer: no part of the conclusion and no hint about its strength.
4. Keep the question asked the same, and keep option A word for word unless its notation must match a definition you added.
5. {SOURCE_BAN}
6. If nothing is missing, return the question unchanged.
"""


def stem_repair_messages(question: dict[str, Any], theorem: str, context: str) -> Messages:
    user = "\n\n".join([
        block("Theorem", theorem),
        block("Context from the paper", context),
        block("Question to repair", dump(question)),
        _STEM_SHAPE,
    ])  # fmt: skip
    return chat_messages(_STEM_REPAIR_SYSTEM, user)


# -- Stage 4b: sketch-adversarial distractors -----------------------------------------------

_TEMPLATE_GLOSSES = (
    "boundary_range (move a range, threshold or excluded case), uniformity_effectivity (claim a uniformity or "
    "effectivity that fails), quantifier_dependence (change the quantifier order or what depends on what), "
    "property_confusion (a closely related but inequivalent object or property), stronger_trap (overstate the "
    "conclusion)"
)

_DISTRACTOR_SHAPE = reply_shape("""
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

Metadata, one entry per option: sketch_hook_type is the kind of proof step you exploited, one snake_case identifier: usually one of {", ".join(SKETCH_HOOK_TYPES)}, or a more fitting one of your own; tampered_component is a short phrase naming the constraint you changed (for C, the component you dropped); template_used is weaker_true for C and, for B, D, E, one of the five templates or wildcard.
"""


DISTRACTOR_SYSTEM_PROMPTS: dict[str, str] = {
    name: _distractor_system(cat).strip() for name, cat in CATEGORIES.items()
}


def distractor_messages(category: str, theorem: str, sketch: str, question: dict[str, Any]) -> Messages:
    cat = category_for_prompts(category)
    stem, a_text = question_parts(question)
    user = "\n\n".join([
        block("Theorem", theorem),
        block("Proof sketch", sketch),
        block("Question stem", stem),
        block("Option A (keyed, correct)", a_text),
        f"Write options B, C, D, E for this {cat.name} question.",
        _DISTRACTOR_SHAPE,
    ])  # fmt: skip
    return chat_messages(DISTRACTOR_SYSTEM_PROMPTS.get(cat.name) or _distractor_system(cat).strip(), user)


_REVISION_SYSTEM = f"""
You audit the other options (B-E) of a hard multiple-choice question as an adversary trying to find the answer without doing the mathematics.

For each option ask: can it be rejected, or can A be picked, by surface reading alone, because of length, LaTeX density, logical shape, hedging, a missing definition, a type mismatch, an obvious negation, a change of topic or an internal contradiction? Check also that C really follows from A and is strictly weaker, and that B, D and E are false given A and the proof sketch.

Rewrite every option that fails so that it keeps its purpose (the same tampered constraint and template) but can only be rejected by real mathematical inspection. Leave options that pass unchanged. Keep the labels, meta and sketch_usage_meta consistent with the final options; C stays weaker_true. Do not change the stem or option A. Valid LaTeX. Never write the sentence "{META_OPTION}"
"""


def distractor_revision_messages(question: dict[str, Any], distractors: dict[str, Any], sketch: str,
                                 problems: list[str] | None) -> Messages:  # fmt: skip
    stem, a_text = question_parts(question)
    current = {k: distractors.get(k) for k in ("choices", "meta", "sketch_usage_meta")}
    if problems:
        listed = "\n".join(f"- {p}" for p in problems)
        task = block("Measured surface problems (fix exactly these, keep everything else as it is)", listed)
    else:
        task = "Audit the options and rewrite those that can be rejected by surface reading."
    user = "\n\n".join([
        block("Question stem", stem),
        block("Option A (keyed, correct)", a_text),
        block("Proof sketch", sketch),
        block("Current options B-E", dump(current)),
        task,
        _DISTRACTOR_SHAPE,
    ])  # fmt: skip
    return chat_messages(_REVISION_SYSTEM, user)


__all__ = [
    "DISTRACTOR_SYSTEM_PROMPTS", "STEM_SYSTEM_PROMPTS", "classify_messages", "distractor_messages",
    "distractor_revision_messages", "sketch_messages", "stem_messages", "stem_regenerate_messages",
    "stem_repair_messages", "stem_system_prompt",
]  # fmt: skip
