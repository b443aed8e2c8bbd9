"""The paper's own parameter format (Appendix A.2): ``param_definition`` read into ``params`` domains.

The paper's meta-template declares each parameter in words: ``var_type`` ("Integer") and
``var_constraint`` ("n is a prime number, with n ∈ [5, 400] to ensure feasibility of
computation"). A template that gives ``param_definition`` but no ``params`` has its domains read
from those words, where they say enough:

* the type: ``Integer`` (or int, natural, positive integer) gives an integer domain, and the word
  "prime" in the constraint (or ``var_source``) a prime domain;
* the range: ``n ∈ [a, b]``, ``n in [a, b]``, ``a <= n <= b`` (``≤``, ``\\le``, ``\\leq``, strict ``<``
  too), ``a <= n`` with ``n <= b``, "between a and b", "from a to b";
* a finite list: ``n ∈ {a, b, c}`` or ``n in [a, b, c]`` (three values or more), "one of a, b, c"
  give a choice.

Anything else (a rational, an unbounded range, a condition in words only) is not guessed: the
template is refused with one line that shows the ``params`` entry to add.
"""

from __future__ import annotations

import re
from typing import Any

_NUM = r"(-?\d+)"
_INTEGER_TYPES = re.compile(r"\b(integer|int|natural|prime|whole)\b", re.I)
_REPLACE = (("∈", " in "), ("≤", "<="), ("≥", ">="), ("\\leq", "<="), ("\\geq", ">="), ("\\le", "<="),
            ("\\ge", ">="), ("\\in", " in "), ("$", " "), ("\\{", "{"), ("\\}", "}"), ("\\dots", "..."),
            ("\\ldots", "..."), ("\\cdots", "..."))  # fmt: skip


def _normal(text: str) -> str:
    for a, b in _REPLACE:
        text = text.replace(a, b)
    return " ".join(text.split())


def _numbers(text: str) -> list[int]:
    return [int(x) for x in re.findall(_NUM, text)]


def _range(text: str, name: str) -> tuple[int, int] | None:
    """The closed integer range the constraint states for ``name``, if any."""
    n = re.escape(name)
    if m := re.search(rf"\b{n}\s+in\s*\[\s*{_NUM}\s*,\s*{_NUM}\s*\]", text):
        return int(m[1]), int(m[2])
    if m := re.search(rf"{_NUM}\s*(<=?)\s*{n}\s*(<=?)\s*{_NUM}", text):
        lo, hi = int(m[1]) + (m[2] == "<"), int(m[4]) - (m[3] == "<")
        return lo, hi
    low = re.search(rf"\b{n}\s*(>=?)\s*{_NUM}|{_NUM}\s*(<=?)\s*{n}\b", text)
    high = re.search(rf"\b{n}\s*(<=?)\s*{_NUM}|{_NUM}\s*(>=?)\s*{n}\b", text)
    if low and high:
        lo = int(low[2]) + (low[1] == ">") if low[1] else int(low[3]) + (low[4] == "<")
        hi = int(high[2]) - (high[1] == "<") if high[1] else int(high[3]) - (high[4] == ">")
        return lo, hi
    if m := re.search(rf"\bbetween\s+{_NUM}\s+and\s+{_NUM}|\bfrom\s+{_NUM}\s+(?:to|up to)\s+{_NUM}", text, re.I):
        nums = [int(x) for x in m.groups() if x is not None]
        return nums[0], nums[1]
    return None


def _choices(text: str, name: str) -> list[int] | None:
    n = re.escape(name)
    m = re.search(rf"\b{n}\s+in\s*[\[{{]([^\]}}]*)[\]}}]", text) or re.search(r"\bone of\s*[\[{(]?([-\d,\s]+)", text)
    if not m or "..." in m[1]:
        return None
    values = _numbers(m[1])
    return values if len(values) >= 3 else None


def domain_of(definition: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """The domain one ``param_definition`` entry states, and how it was read (or why it could not be)."""
    name = str(definition.get("var_name") or "")
    kind = str(definition.get("var_type") or "")
    words = _normal(f"{definition.get('var_constraint') or ''}")
    source = _normal(f"{definition.get('var_source') or ''}")
    if not _INTEGER_TYPES.search(f"{kind} {words}"):
        return None, f"var_type {kind!r} is not an integer type"
    prime = bool(re.search(r"\bprimes?\b", f"{words} {source}", re.I))
    if (values := _choices(words, name)) is not None:
        return {"type": "choice", "values": values}, f"one of {values}"
    found = _range(words, name)
    if found is None:
        return None, f"no closed range in {words!r}"
    lo, hi = found
    if lo > hi:
        return None, f"an empty range {lo}..{hi} in {words!r}"
    return {"type": "prime" if prime else "int", "min": lo, "max": hi}, f"{'primes' if prime else 'integers'} " \
        f"{lo}..{hi}"  # fmt: skip


def params_from_definitions(definitions: Any) -> tuple[dict[str, dict] | None, list[str], str]:
    """``(params, notes, problem)``: the domains read from every entry, or None and the one-line problem."""
    if not isinstance(definitions, list) or not definitions or not all(isinstance(d, dict) for d in definitions):
        return None, [], ""
    params: dict[str, dict] = {}
    notes: list[str] = []
    for d in definitions:
        name = str(d.get("var_name") or "")
        dom, how = domain_of(d)
        if dom is None:
            example = '{"type": "int", "min": 1, "max": 20}'
            return None, [], (f"params: required: param_definition's var_constraint for {name or '?'} could not be "
                              f"read as a domain ({how}); add \"params\": {{\"{name or 'n'}\": {example}}}")  # fmt: skip
        params[name] = dom
        notes.append(f"params read from param_definition: {name} = {how}")
    return params, notes, ""


__all__ = ["domain_of", "params_from_definitions"]
