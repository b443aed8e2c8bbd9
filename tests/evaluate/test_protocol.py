"""The released evaluation protocol: option order, prompt layout, answer extraction."""

from __future__ import annotations

import json

import pytest
from helpers.paths import GOLDEN as GOLDEN_DIR

from theorembench.evaluate.mcq.items import load_dataset
from theorembench.evaluate.mcq.protocol import (
    check_template,
    extract_answer,
    hint_text,
    messages,
    shuffle_options,
    system_prompt,
    user_prompt,
)

GOLDEN = GOLDEN_DIR / "lmb_202511_hard_shuffle_seed42.json"


def golden_orders() -> dict[str, dict]:
    return {entry["id"]: entry for entry in json.loads(GOLDEN.read_text())["items"]}


def test_shuffle_matches_recorded_order_on_every_released_item(lmb_hard):
    """Seed 42: each item's display order and keyed label, as recorded once in tests/golden."""
    dataset = load_dataset(lmb_hard)
    raw = json.loads(lmb_hard.read_text())
    golden = golden_orders()
    assert [entry["id"] for entry in golden.values()] == [it.id for it in dataset.items]
    for index, item in enumerate(dataset.items):
        entry = golden[item.id]
        assert entry["index"] == index
        presented = shuffle_options(item, index, 42)
        assert "".join(presented.origin[label] for label in "ABCDE") == entry["order"]
        assert presented.correct_label == entry["keyed"]
        by_label = {o["label"]: o["text"] for o in [raw[index]["mcq"]["correct_choice"], *raw[index]["mcq"]["choices"]]}
        assert [t for _, t in presented.options] == [by_label[original] for original in entry["order"]]
    # a few entries written out by hand, as a check on the fixture itself
    assert (golden["2511.04651v1::alt1"]["order"], golden["2511.04651v1::alt1"]["keyed"]) == ("DBCEA", "E")
    assert (golden["2511.23123v1::orig"]["order"], golden["2511.23123v1::orig"]["keyed"]) == ("AEBDC", "A")
    assert "".join(e["keyed"] for e in golden.values()) == "EEDAEDCEBCDAAEDECDBBCADBEEDEE"


@pytest.mark.parametrize("seed", [0, 7])
def test_other_seeds_give_a_relabelled_permutation(lmb_hard, seed):
    dataset = load_dataset(lmb_hard)
    keyed = set()
    for index, item in enumerate(dataset.items):
        presented = shuffle_options(item, index, seed)
        assert [label for label, _ in presented.options] == list("ABCDE")
        assert sorted(presented.origin.values()) == list("ABCDE")
        assert presented.origin[presented.correct_label] == "A"
        keyed.add(presented.correct_label)
    assert len(keyed) > 1  # the shuffle really moves the answer around


def test_user_prompt_layout(lmb_hard):
    item = load_dataset(lmb_hard).items[3]
    raw = json.loads(lmb_hard.read_text())[3]["mcq"]
    text_of = {o["label"]: o["text"] for o in [raw["correct_choice"], *raw["choices"]]}
    presented = shuffle_options(item, 3, 42)
    text = user_prompt(item, presented, sketch=False)
    # recorded display order of item 3 under seed 42: A E B D C
    expected = (
        f"## Question\n\n{raw['question']}\n\n## Answer Choices\n\n"
        f"(A) {text_of['A']}\n\n(B) {text_of['E']}\n\n(C) {text_of['B']}\n\n(D) {text_of['D']}\n\n(E) {text_of['C']}"
    )
    assert text == expected
    with_hint = user_prompt(item, presented, sketch=True)
    assert with_hint == expected + f"\n\n## Useful Hints\n\n{item.expanded_sketch}"


def test_user_template_fills_its_placeholders_once_and_leaves_other_braces(lmb_hard):
    item = load_dataset(lmb_hard).items[3]
    presented = shuffle_options(item, 3, 42)
    template = "Q: {question}\nOptions:\n{choices}\nLetters: {labels}. Box it: \\boxed{}, not {other}.{hints_block}"
    text = user_prompt(item, presented, sketch=False, template=template)
    choices = user_prompt(item, presented, sketch=False).split("## Answer Choices\n\n", 1)[1]
    assert text == (f"Q: {item.mcq.question}\nOptions:\n{choices}\nLetters: A, B, C, D, E. "
                    "Box it: \\boxed{}, not {other}.")  # fmt: skip
    hinted = user_prompt(item, presented, sketch=True, template="{question}|{choices}|{hint}")
    assert hinted.endswith("|" + item.expanded_sketch)
    assert check_template(template) is None
    assert check_template("{question} only") == "the user template lacks {choices}"
    msgs = messages(item, presented, sketch=False, system="Be brief.", user_template="{choices} / {question}")
    assert msgs[0] == {"role": "system", "content": "Be brief."}
    assert msgs[1]["content"] == f"{choices} / {item.mcq.question}"


def test_template_value_is_not_read_again(lmb_hard):
    item = load_dataset(lmb_hard).items[0].model_copy(deep=True)
    item.mcq.question = "What is {choices}?"
    presented = shuffle_options(item, 0, 42)
    assert user_prompt(item, presented, sketch=False, template="{question}").startswith("What is {choices}?")


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
