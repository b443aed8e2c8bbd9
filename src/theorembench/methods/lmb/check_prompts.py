"""Prompts for the LiveMathematicianBench steps that check or mend a drafted question.

The quality rubric (ALS, TAS, GPS, DQS), stage 5's stem-only triviality test (answer the
stem without options, then match that answer against the keyed one) and the repair of
LaTeX that failed to compile. Each ``*_messages`` builder returns the chat messages for
one step; the reply must satisfy the matching schema in
:mod:`theorembench.methods.lmb.schemas`.
"""

from __future__ import annotations

from typing import Any

from theorembench.evaluate.mcq.items import META_OPTION
from theorembench.methods.lmb.prompt_parts import Messages, block, chat_messages, question_parts, reply_shape

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

_META_DISTRACTOR_NOTE = (
    "Note: option ({label}) is the meta-option sentence, placed here as a false option on purpose (so that its "
    "presence does not reveal the answer). It is false because the keyed option A, the strongest statement that "
    "holds, is among the options. Do not count it against the distractor quality."
)


def rubric_messages(item_mcq: dict[str, Any], theorem: str, sketch: str) -> Messages:
    stem, a_text = question_parts(item_mcq)
    options = [f"(A) {a_text}  [keyed answer]"]
    options += [f"({c.get('label')}) {c.get('text')}" for c in item_mcq.get("choices") or []]
    parts = [
        block("Theorem", theorem),
        block("Proof sketch", sketch),
        block("Question", stem),
        block("Options", "\n\n".join(options)),
    ]
    if " ".join(a_text.split()) == META_OPTION:
        parts.append(_META_NOTE)
    for choice in item_mcq.get("choices") or []:
        if " ".join(str(choice.get("text") or "").split()) == META_OPTION:
            parts.append(_META_DISTRACTOR_NOTE.format(label=choice.get("label")))
    parts.append(reply_shape(
        '{"ALS": {"score": 0, "justification": "..."}, "TAS": {"score": 0, "justification": "..."}, '
        '"GPS": {"score": 0, "justification": "..."}, "DQS": {"score": 0, "justification": "..."}, '
        '"total_score": 0, "overall_assessment": "..."}'
    ))
    return chat_messages(_RUBRIC_SYSTEM, "\n\n".join(parts))


# -- Stage 5: stem-only triviality ------------------------------------------------------------

_STEM_ONLY_SYSTEM = """
You are an expert mathematician. Answer the research question you are given; no answer options are shown. State the most precise and strongest conclusion you can justify, as a mathematical statement with explicit quantifiers, ranges, constants and dependencies. Do not hedge and do not list alternatives.
"""


def stem_only_messages(question: str) -> Messages:
    user = "\n\n".join([block("Question", question), reply_shape('{"answer": "<your precise answer>"}')])
    return chat_messages(_STEM_ONLY_SYSTEM, user)


_MATCH_SYSTEM = """
You compare a free-form answer to a research question with the keyed correct answer. They match only when the free answer states the same mathematical content with the same strength: the same objects, quantifiers, ranges, constants and dependencies, up to notation and wording. An answer that is weaker, stronger, partial or different does not match.

match: true or false. verdict: a short phrase naming the relation, such as "matches", "does not match", "stronger than the keyed answer" or "weaker or incomplete". score: from 0 to 1, how completely the free answer captures the keyed answer (1 = the same statement). reason: one or two sentences.
"""


def match_messages(question: str, open_answer: str, correct_text: str) -> Messages:
    user = "\n\n".join([
        block("Question", question),
        block("Free-form answer", open_answer),
        block("Keyed correct answer", correct_text),
        reply_shape('{"match": false, "verdict": "does not match", "score": 0.0, "reason": "..."}'),
    ])  # fmt: skip
    return chat_messages(_MATCH_SYSTEM, user)


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
        block("Errors", "\n".join(f"- {e}" for e in errors) or "- (no message)"),
        block("Macro definitions of the paper", macros),
        block("Text", text),
        reply_shape('{"text": "<the whole text with only the LaTeX syntax fixed>"}'),
    ])  # fmt: skip
    return chat_messages(_LATEX_REPAIR_SYSTEM, user)


# -- shortcut audit: the options without their question -----------------------------------------

_OPTIONS_ONLY_SYSTEM = """
You are shown only the five answer options of a research-level multiple-choice question; its question is withheld on purpose. Exactly one option is the intended answer. Judge from the options alone (their wording, their internal consistency, how they relate to one another) which one it most likely is. Give a short reason, then the letter of your choice inside \\boxed{}, for example \\boxed{C}.
"""


def options_only_messages(options: list[tuple[str, str]]) -> Messages:
    """The audit's options-only baseline: the shown options, ``(label, text)`` in display order, and no stem."""
    listed = "\n\n".join(f"({label}) {text}" for label, text in options)
    user = "\n\n".join([block("Answer options (the question is withheld)", listed),
                         "Which option is the intended answer? End with \\boxed{<letter>}."])  # fmt: skip
    return chat_messages(_OPTIONS_ONLY_SYSTEM, user)


__all__ = ["latex_repair_messages", "match_messages", "options_only_messages", "rubric_messages",
           "stem_only_messages"]  # fmt: skip
