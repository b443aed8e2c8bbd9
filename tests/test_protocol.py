"""The released evaluation protocol: option order, prompt layout, answer extraction."""

from __future__ import annotations

import json
import random

import pytest

from theorembench.evaluate.mcq.items import load_dataset
from theorembench.evaluate.mcq.protocol import (
    extract_answer,
    hint_text,
    messages,
    shuffle_options,
    system_prompt,
    user_prompt,
)


def released_order(raw_item: dict, index: int, seed: int) -> tuple[list[str], str]:
    """The released scripts' procedure, written out on the raw JSON dicts."""
    options = [raw_item["mcq"]["correct_choice"], *raw_item["mcq"]["choices"]]
    random.Random(seed + index).shuffle(options)
    texts = [o["text"] for o in options]
    keyed = "ABCDE"[next(i for i, o in enumerate(options) if o is raw_item["mcq"]["correct_choice"])]
    return texts, keyed


@pytest.mark.parametrize("seed", [42, 0, 7])
def test_shuffle_matches_released_procedure_on_every_item(lmb_hard, seed):
    dataset = load_dataset(lmb_hard)
    raw = json.loads(lmb_hard.read_text())
    keyed_positions = set()
    for index, item in enumerate(dataset.items):
        presented = shuffle_options(item, index, seed)
        texts, keyed = released_order(raw[index], index, seed)
        assert [t for _, t in presented.options] == texts
        assert presented.correct_label == keyed
        assert [label for label, _ in presented.options] == list("ABCDE")
        assert presented.origin[presented.correct_label] == "A"
        keyed_positions.add(keyed)
    assert len(keyed_positions) > 1  # the shuffle really moves the answer around


def test_user_prompt_layout(lmb_hard):
    item = load_dataset(lmb_hard).items[3]
    presented = shuffle_options(item, 3, 42)
    text = user_prompt(item, presented, sketch=False)
    expected = (
        f"## Question\n\n{item.mcq.question}\n\n## Answer Choices\n\n"
        + "\n\n".join(f"({label}) {t}" for label, t in presented.options)
    )
    assert text == expected
    with_hint = user_prompt(item, presented, sketch=True)
    assert with_hint == expected + f"\n\n## Useful Hints\n\n{item.expanded_sketch}"


def test_placeholder_sketch_kept_in_released_style_replaced_in_clean(lmb_hard):
    items = load_dataset(lmb_hard).items
    placeholder = [it for it in items if (it.expanded_sketch or "").strip() == "No expanded sketch found."]
    assert len(placeholder) == 2
    item = placeholder[0]
    assert hint_text(item, "released") == "No expanded sketch found."
    assert hint_text(item, "clean") == item.sketch


def test_system_prompt_styles():
    released, clean = system_prompt("released"), system_prompt("clean")
    assert "\\boxed{{}}" in released and "\\boxed{{A}}" in released
    assert "\\boxed{}" in clean and "{{" not in clean
    assert "step by step" in released
    with pytest.raises(ValueError):
        system_prompt("fancy")


def test_messages_are_system_then_user(lmb_hard):
    item = load_dataset(lmb_hard).items[0]
    msgs = messages(item, shuffle_options(item, 0, 42), sketch=False)
    assert [m["role"] for m in msgs] == ["system", "user"]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("so the answer is \\boxed{C}", "C"),
        ("\\boxed{B} at first, but on reflection \\boxed{D}", "D"),
        ("\\boxed{D} ... mentions option E later", "D"),  # a boxed letter beats later letters
        ("  b  ", "B"),  # one-character reply, any case
        ("e", "E"),
        ("I pick A, no wait, C.", "C"),  # last standalone capital
        ("\\boxed{{E}}", "E"),  # doubled braces (the released prompt's quirk) fall to the last capital
        ("\\boxed{F}", None),
        ("The answer is unclear.", None),  # no standalone A-E ("A" inside words does not count)
        ("", None),
        (None, None),
        ("Answer: \\boxed{ C }", "C"),  # not a valid box; the standalone C is found
    ],
)
def test_extract_answer(reply, expected):
    assert extract_answer(reply) == expected
