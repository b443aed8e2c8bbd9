"""The LiveMathematicianBench evaluation protocol: option order, prompts, answer extraction.

What reproduces the released evaluation scripts (``eval/eval.py``, ``eval/eval_vllm.py``)
byte for byte, checked on all 29 items of the released November 2025 hard split:

* the option order: the correct choice followed by the four distractors is shuffled
  with ``random.Random(seed + index)`` (index = position in the loaded file) and
  relabelled A–E;
* the user message: a ``## Question`` block and a ``## Answer Choices`` block, plus a
  ``## Useful Hints`` block with the proof sketch in sketch-aware mode;
* the answer extraction: the last ``\\boxed{X}`` (X in A–E), else a one-letter reply,
  else the last standalone capital A–E.

What does not: the system prompt. Ours is our own wording. Like the released one it
asks for step-by-step reasoning and a boxed letter, but it does not list the allowed
letters and does not say that nothing else may go inside the box; both can change
scores. ``--system-prompt FILE`` sends any text instead (the authors' own included),
and ``--user-template FILE`` replaces the user message (placeholders in
:data:`TEMPLATE_FIELDS`). Sampling settings are whatever the command sends: nothing by
default (each provider's own default applies), or a :data:`PRESETS` entry.

Two prompt styles exist. ``released`` (the default) keeps two quirks of the released
scripts: their system prompt reaches the model with doubled braces (the string is
never formatted), and an item whose ``expanded_sketch`` is the placeholder "No
expanded sketch found." gets that placeholder as its hint. ``clean`` fixes both.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from theorembench.evaluate.mcq.items import NO_EXPANDED_SKETCH, Item

LABELS = "ABCDE"

_SYSTEM = (
    "You are an expert research mathematician answering a multiple-choice question. "
    "Work through the problem step by step, then give your final answer as the letter of "
    "the single correct option inside \\boxed{{}}, for example \\boxed{{A}}."
)
PROMPT_STYLES = ("released", "clean")

# sampling settings a preset sends when the command gives none of its own
PRESETS: dict[str, dict[str, float]] = {
    # the released vLLM evaluator (eval_vllm.py) sends temperature 1.0 and top_p 0.95
    "released-vllm": {"temperature": 1.0, "top_p": 0.95},
}

# the user message of the released scripts, as a template
USER_TEMPLATE = "## Question\n\n{question}\n\n## Answer Choices\n\n{choices}{hints_block}"
TEMPLATE_FIELDS = {
    "question": "the question stem",
    "choices": "the shuffled options, '(A) text' each, separated by blank lines",
    "hints_block": "in sketch-aware mode '\\n\\n## Useful Hints\\n\\n' and the sketch; empty otherwise",
    "hint": "the sketch alone in sketch-aware mode; empty otherwise",
    "labels": "the allowed letters, 'A, B, C, D, E'",
}
REQUIRED_FIELDS = ("question", "choices")
_FIELD = re.compile(r"\{(" + "|".join(TEMPLATE_FIELDS) + r")\}")


def check_template(template: str) -> str | None:
    """Why a user template cannot be used (a missing required placeholder), or None when it can."""
    present = set(_FIELD.findall(template))
    missing = [f"{{{name}}}" for name in REQUIRED_FIELDS if name not in present]
    return f"the user template lacks {' and '.join(missing)}" if missing else None


def system_prompt(style: str = "released") -> str:
    if style == "released":
        return _SYSTEM  # the doubled braces reach the model, as in the released scripts
    if style == "clean":
        return _SYSTEM.replace("{{", "{").replace("}}", "}")
    raise ValueError(f"unknown prompt style {style!r}; choose one of {', '.join(PROMPT_STYLES)}")


@dataclass(frozen=True)
class Presented:
    """An item as the model sees it: shuffled options and the keyed label."""

    options: list[tuple[str, str]]  # (label, text) in display order
    correct_label: str
    origin: dict[str, str]  # display label -> original label (A = correct choice)


def shuffle_options(item: Item, index: int, seed: int = 42) -> Presented:
    original = [item.mcq.correct_choice, *item.mcq.choices]
    order = list(original)
    random.Random(seed + index).shuffle(order)
    options = [(LABELS[pos], choice.text) for pos, choice in enumerate(order)]
    correct = LABELS[next(pos for pos, c in enumerate(order) if c is item.mcq.correct_choice)]
    origin = {LABELS[pos]: choice.label for pos, choice in enumerate(order)}
    return Presented(options=options, correct_label=correct, origin=origin)


def hint_text(item: Item, style: str = "released") -> str | None:
    expanded = item.expanded_sketch
    if style == "clean" and expanded and expanded.strip() == NO_EXPANDED_SKETCH:
        expanded = None
    return expanded or item.sketch or None


def user_prompt(item: Item, presented: Presented, *, sketch: bool, style: str = "released",
                template: str | None = None) -> str:  # fmt: skip
    """The user message: the released layout, or ``template`` with its placeholders filled in one pass.

    Only the names in :data:`TEMPLATE_FIELDS` written as ``{name}`` are replaced; any other
    brace (``\\boxed{}``) stays as written, and text inside a filled value is never re-read.
    """
    hint = (hint_text(item, style) or "") if sketch else ""
    values = {
        "question": item.mcq.question,
        "choices": "\n\n".join(f"({label}) {text}" for label, text in presented.options),
        "hint": hint,
        "hints_block": f"\n\n## Useful Hints\n\n{hint}" if hint else "",
        "labels": ", ".join(LABELS),
    }
    return _FIELD.sub(lambda m: values[m.group(1)], USER_TEMPLATE if template is None else template)


def messages(item: Item, presented: Presented, *, sketch: bool, style: str = "released",
             system: str | None = None, user_template: str | None = None) -> list[dict[str, str]]:  # fmt: skip
    """System then user message; ``system`` and ``user_template`` replace ours when given."""
    return [
        {"role": "system", "content": system_prompt(style) if system is None else system},
        {"role": "user", "content": user_prompt(item, presented, sketch=sketch, style=style, template=user_template)},
    ]


_BOXED = re.compile(r"\\boxed\{([A-E])\}")
_STANDALONE = re.compile(r"\b([A-E])\b")


def extract_answer(reply: str | None) -> str | None:
    """The chosen label, or None when the reply names no option."""
    if not reply:
        return None
    text = reply.strip()
    boxed = _BOXED.findall(text)
    if boxed:
        return boxed[-1]
    if len(text) == 1 and text.upper() in LABELS:
        return text.upper()
    loose = _STANDALONE.findall(text)
    if loose:
        return loose[-1]
    return None
