"""MSC2020 top-level classes: the shipped table, code normalisation, ``\\subjclass`` parsing and exclusions.

The table (``data/eternal/msc2020_top.json``) holds the 63 two-digit classes of MSC2020.
MSC2020 kept the 63 top-level classes of MSC2010 (it renamed two of them: 00 and 91), so a
2010 code maps to the 2020 class with the same two digits; the differences between the two
editions lie at the three- and five-character levels, which this benchmark does not use.
Two classes retired before 2010 still appear in old papers and are mapped to their
successors: 04 (set theory, moved to 03E in MSC2000) and 73 (mechanics of solids, merged
into 74 in MSC2000). Any other two-digit number is not a class and is rejected.

A full code (``05C50``, ``11-02``, ``35Qxx``, ``68Q``) normalises to its first two digits.
A paper gets at most three classes: the distinct classes of its codes in the order written
(the primary code first). A paper whose primary class is 00, 01 or 97 is excluded; such a
class given as a secondary code is dropped from the paper's list.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

EXCLUDED = ("00", "01", "97")
RETIRED = {"04": "03", "73": "74"}
MAX_CODES = 3

# one MSC code: two digits, then optionally "-XX"/"-02", or a letter with optional "xx"/two digits
_CODE = re.compile(r"(?<![\w.])(\d{2})(?:-(?:\d{2}|xx|XX)|[A-Z](?:\d{2}|xx|XX)?)?(?![\w.])")
_SUBJCLASS = re.compile(r"\\(?:subjclass|msc|MSC|amsclass|mathclass|subclass)\s*(?:\[[^\]]*\])?\s*\{([^{}]*)\}")
_ENV = re.compile(r"\\begin\s*\{(AMS|msc|MSC|MSCcodes|subjclass)\}(.*?)\\end\s*\{\1\}", re.DOTALL)


@cache
def top_level() -> dict[str, str]:
    """The 63 MSC2020 top-level classes: two-digit code -> name."""
    text = resources.files("theorembench.data").joinpath("eternal", "msc2020_top.json").read_text(encoding="utf-8")
    return dict(json.loads(text))


def class_name(code: str) -> str:
    return top_level().get(code, "unknown class")


def normalise_code(code: str) -> str | None:
    """The MSC2020 top-level class of one code (``05C50`` -> ``05``, ``04A20`` -> ``03``); None when not a class."""
    m = _CODE.fullmatch(code.strip())
    if m is None:
        return None
    two = RETIRED.get(m.group(1), m.group(1))
    return two if two in top_level() else None


def find_codes(text: str) -> list[str]:
    """The MSC-shaped codes in a piece of text, in order (``"Primary 05C50; Secondary 20C30"`` -> both)."""
    return [m.group(0) for m in _CODE.finditer(text)]


def subjclass_texts(latex: str) -> list[str]:
    """The contents of every ``\\subjclass{...}`` (and ``\\msc``, ``\\begin{AMS}`` ...) of a paper's LaTeX."""
    texts = [m.group(1) for m in _SUBJCLASS.finditer(latex)]
    texts += [m.group(2) for m in _ENV.finditer(latex)]
    return [" ".join(t.split()) for t in texts if t.strip()]


@dataclass
class Classification:
    """A paper's classes after normalisation, with what was dropped and whether the paper is excluded."""

    codes: list[str]  # at most MAX_CODES top-level classes, primary first
    source: str  # "subjclass" | "llm" | "record"
    raw: list[str] = field(default_factory=list)  # the codes as written
    invalid: list[str] = field(default_factory=list)  # codes that are not MSC2020 classes
    excluded: str | None = None  # why the paper is out (its primary class is 00, 01 or 97)

    def to_dict(self) -> dict[str, object]:
        return {"codes": self.codes, "source": self.source, "raw": self.raw, "invalid": self.invalid,
                "excluded": self.excluded}  # fmt: skip


def classify_codes(codes: Iterable[str], *, source: str, max_codes: int = MAX_CODES,
                   exclude: Iterable[str] = EXCLUDED) -> Classification:  # fmt: skip
    """Normalise codes written in order (primary first): distinct classes, capped, with exclusions applied."""
    raw = [c.strip() for c in codes if c and c.strip()]
    classes: list[str] = []
    invalid: list[str] = []
    for code in raw:
        top = normalise_code(code)
        if top is None:
            invalid.append(code)
        elif top not in classes:
            classes.append(top)
    out = set(exclude)
    excluded = None
    if classes and classes[0] in out:
        excluded = f"primary MSC class {classes[0]} ({class_name(classes[0])}) is excluded"
    kept = [c for c in classes if c not in out][:max_codes]
    return Classification(kept, source, raw, invalid, excluded)


def parse_msc_option(text: str | Iterable[str] | None) -> list[str]:
    """``--msc 05,11`` as a list of classes; raises ValueError naming a code that is not an MSC2020 class."""
    if text is None:
        return []
    parts = re.split(r"[,\s]+", text) if isinstance(text, str) else [p for t in text for p in re.split(r"[,\s]+", t)]
    classes: list[str] = []
    for part in (p for p in parts if p):
        top = normalise_code(part)
        if top is None or RETIRED.get(part[:2]) is not None and len(part) == 2:
            raise ValueError(f"{part}: not an MSC2020 top-level class (two digits, e.g. 05 or 11)")
        if top not in classes:
            classes.append(top)
    return classes


def in_scope(codes: list[str], restrict: list[str]) -> bool:
    """Whether a paper with these classes is in a build restricted to ``restrict`` (empty: everything)."""
    return not restrict or any(c in restrict for c in codes)


def table_text() -> str:
    """The class table as lines ``05 Combinatorics`` (for the classification prompt)."""
    return "\n".join(f"{code} {name}" for code, name in top_level().items())


__all__ = ["EXCLUDED", "MAX_CODES", "RETIRED", "Classification", "class_name", "classify_codes", "find_codes",
           "in_scope", "normalise_code", "parse_msc_option", "subjclass_texts", "table_text", "top_level"]  # fmt: skip
