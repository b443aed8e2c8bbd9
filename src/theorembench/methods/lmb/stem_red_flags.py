"""Red flags: the automatic check on a drafted stem and keyed option (Stage 4a).

:func:`red_flags` lists what disqualifies a draft: a stem too short to be
self-contained, references to the source (the theorem, the paper, numbered references,
``\\ref``), generic "which is correct" phrasings, and a stem that gives the option away.

Option A is not limited in length or clauses: the paper's stage 4a (Appendix G) asks it to
capture the theorem's full conclusion with all its essential aspects, and the paper's own
Appendix C items have keyed options of several sentences joined by "Moreover". (An earlier
"bundle" flag rejected those; ``tests/golden/lmb_appendix_c.json`` holds them, and every
one must pass.)
"""

from __future__ import annotations

import re
from typing import Any

from theorembench.evaluate.mcq.items import META_OPTION
from theorembench.methods.lmb.prompt_parts import question_parts

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
_MIN_VERBATIM_CHARS = 20

def _norm(text: str) -> str:
    return " ".join(text.split()).strip().rstrip(".;,").lower()


def red_flags(question: dict[str, Any]) -> list[str]:
    """Problems that disqualify a drafted stem and keyed option; empty when it is acceptable."""
    stem, a_text = question_parts(question)
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
        a_norm = _norm(a_text)
        if len(a_norm) >= _MIN_VERBATIM_CHARS and a_norm in _norm(stem):
            flags.append("the stem contains option A verbatim, giving the answer away")
    return flags


__all__ = [
    "MIN_STEM_CHARS", "MIN_STEM_WORDS", "RED_FLAG_PATTERNS", "red_flags"
]  # fmt: skip
