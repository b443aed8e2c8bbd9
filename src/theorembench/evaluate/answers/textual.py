"""Answers in words: a multiple-choice letter (``(C)``, ``\\textbf{(C)}``) or a short text (``\\text{Evelyn}``).

A letter is compared with a letter; a text with a text, after case, spacing, punctuation
and ``\\text{}`` are set aside. Two single words that differ are different answers; any
other difference between texts is left unjudged (None), since wording is not meaning.
"""

from __future__ import annotations

import re

from theorembench.evaluate.answers.normalize import clean

_LETTER = re.compile(r"\(?\s*([A-J])\s*\)?")
_WORDS = re.compile(r"[A-Za-z][A-Za-z' -]*")
_WRAPPED = re.compile(r"\$?\s*\\(?:text|textbf|textit|mathrm|mbox|textnormal)\s*\{[^{}]*\}\s*\$?\.?")
# words a text answer may be made of that are also formulas: these stay formulas
_MATH_WORDS = {"pi", "e", "i", "infinity", "infty", "inf", "oo", "sqrt", "ln", "log", "exp", "sin", "cos", "tan"}


def expected_letter(expected: str) -> str | None:
    """The option letter when ``expected`` is one (``C``, ``(C)``, ``\\text{C}``), else None."""
    m = _LETTER.fullmatch(clean(expected).replace("{", "").replace("}", "").strip())
    return m[1] if m else None


def letters(answer: str) -> set[str]:
    """The option letters an answer names: ``C``, ``(C)``, ``(B) 12`` (the option, then its value), a sentence
    naming ``(D)``, or ``B or C`` (two); empty when it names none (``2C`` is a formula, not an option)."""
    text = clean(answer).replace("{", " ").replace("}", " ").strip()
    if m := _LETTER.fullmatch(text):
        return {m[1]}
    if found := set(re.findall(r"\(\s*([A-J])\s*\)", text)):  # "(B) 12", "the option is (D)", "(B) or (C)"
        return found
    if m := re.match(r"([A-H])\s*[).:]\s+\S", text):  # "B) 12", "B. 12"
        return {m[1]}
    tokens = re.findall(r"[A-Za-z]+|\S", text)
    if len(tokens) <= 9 and all(t in ("or", "and", ",", "/") or re.fullmatch(r"[A-H]", t) for t in tokens):
        return {t for t in tokens if re.fullmatch(r"[A-H]", t)}
    return set()


def as_text(answer: str, *, wrapped_only: bool = False) -> str | None:
    """The answer as plain words (lower case, single spaces), or None when it has anything but words."""
    raw = answer.strip()
    if wrapped_only and not _WRAPPED.fullmatch(raw):
        return None
    text = clean(raw).replace("{", " ").replace("}", " ").strip().rstrip(".!").strip()
    if not text or not _WORDS.fullmatch(text):
        return None
    words = " ".join(text.lower().replace("-", " ").split())
    return None if words in _MATH_WORDS else words


def same_text(expected: str, answer: str) -> bool | None:
    """True for the same words; False for two different single words; None otherwise."""
    if expected == answer:
        return True
    drop = {"the", "a", "an"}
    e = [w for w in expected.split() if w not in drop]
    a = [w for w in answer.split() if w not in drop]
    if e == a:
        return True
    if len(e) == 1 and len(a) == 1 and not e[0].startswith(a[0]) and not a[0].startswith(e[0]):
        return False
    return None
