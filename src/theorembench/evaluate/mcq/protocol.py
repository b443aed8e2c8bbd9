"""The LiveMathematicianBench evaluation protocol: option order, prompts, answer extraction.

Everything here reproduces the released evaluation scripts' behaviour so that a
score from theorembench can be compared with the published ones:

* the correct choice followed by the four distractors is shuffled with
  ``random.Random(seed + index)`` (index = position in the loaded file) and
  relabelled A–E;
* the user turn has a ``## Question`` block and a ``## Answer Choices`` block,
  plus a ``## Useful Hints`` block with the proof sketch in sketch-aware mode;
* the answer is the last ``\\boxed{X}`` (X in A–E), else a one-letter reply,
  else the last standalone capital A–E.

Two prompt styles exist. ``released`` (the default) keeps two quirks of the
released scripts: their system prompt reaches the model with doubled braces
(the string is never formatted), and an item whose ``expanded_sketch`` is the
placeholder "No expanded sketch found." gets that placeholder as its hint.
``clean`` fixes both.
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


def user_prompt(item: Item, presented: Presented, *, sketch: bool, style: str = "released") -> str:
    choices = "\n\n".join(f"({label}) {text}" for label, text in presented.options)
    text = f"## Question\n\n{item.mcq.question}\n\n## Answer Choices\n\n{choices}"
    if sketch:
        hint = hint_text(item, style)
        if hint:
            text += f"\n\n## Useful Hints\n\n{hint}"
    return text


def messages(item: Item, presented: Presented, *, sketch: bool, style: str = "released") -> list[dict[str, str]]:
    return [
        {"role": "system", "content": system_prompt(style)},
        {"role": "user", "content": user_prompt(item, presented, sketch=sketch, style=style)},
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
