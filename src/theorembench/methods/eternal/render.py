"""Rendering a template's text for one set of parameter values, and the checks that reject a bad rendering.

Substitution: ``{name}`` (spaces inside allowed) is replaced by the value's text only when ``name``
is a declared parameter, the ``{`` is not escaped (``\\{``), and it is not the argument of a LaTeX
command that takes a name rather than a value (``\\mathbb{N}``, ``\\label{n}``, ...). Where the braces
are a LaTeX group (after ``_``, ``^``, ``}``, ``]`` or a command) they are kept: with ``n = 181``,
``S_{n}`` becomes ``S_{181}`` and ``\\frac{n}{2}`` becomes ``\\frac{181}{2}``; elsewhere ``{n}`` becomes
``181``. Every other brace is LaTeX and stays (``\\{1, 2\\}``).

A rendered problem is rejected when:

- an **unresolved placeholder** is left: ``{name}`` for a declared parameter (its value was
  missing), or ``{word}`` for a word that is no parameter, where the braces are not a LaTeX group
  (not after a command, ``_``, ``^``, ``}`` or ``]``): e.g. ``"the set {m}"`` when only ``n`` is declared;
- a **parameter name is left** in it: a declared name standing alone as a symbol in math mode
  (``$...$``, ``$$...$$``, ``\\(...\\)``, ``\\[...\\]``), e.g. ``$S_n$`` or ``$n$-cycle`` after ``{n}``
  was rendered elsewhere; or, for names that cannot be English words (with a digit or ``_``), standing
  alone anywhere. The name is allowed when the rendered problem also binds it to its value
  (``n = 7`` or ``n := 7``), as in "Let $n = 7$. Count the derangements of $n$ letters."
"""

from __future__ import annotations

import re

NAME_COMMANDS = ("begin", "end", "label", "ref", "eqref", "cite", "mathbb", "mathcal", "mathfrak", "mathscr",
                 "operatorname", "usepackage")  # fmt: skip
_NAME_ARG = r"\\(?:" + "|".join(NAME_COMMANDS) + r")\*?\s*"
_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_MATH = re.compile(r"(?<!\\)\$\$(.+?)(?<!\\)\$\$|(?<!\\)\$(.+?)(?<!\\)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.DOTALL)
_NAME_GROUPS = re.compile(_NAME_ARG + r"\{[^{}]*\}")
_GROUP_BEFORE = re.compile(r"(?:\\[A-Za-z]+\*?\s*|[_^}\]])$")  # a LaTeX argument or sub/superscript group
_LOOSE = re.compile(r"(?<![\\A-Za-z0-9_^}\]])\{\s*(" + _IDENT + r")\s*\}(?![_^])")


def _placeholder(names: list[str]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(r"(?<!\\)\{\s*(" + alternatives + r")\s*\}")


def substitute(text: str, values: dict[str, str]) -> str:
    """``text`` with each ``{name}`` of a declared parameter replaced by its value's text (one pass)."""
    if not values:
        return text
    pattern = _placeholder(list(values))

    def one(part: str) -> str:
        def repl(m: re.Match[str]) -> str:
            in_group = _GROUP_BEFORE.search(part[max(0, m.start() - 40) : m.start()])
            return "{" + values[m[1]] + "}" if in_group else values[m[1]]

        return pattern.sub(repl, part)

    return _mask_name_args(text, one)


def _mask_name_args(text: str, fn) -> str:
    """Apply ``fn`` to the text outside name-command groups such as ``\\mathbb{N}``."""
    out, last = [], 0
    for m in _NAME_GROUPS.finditer(text):
        out += [fn(text[last : m.start()]), m[0]]
        last = m.end()
    return "".join(out + [fn(text[last:])])


def unresolved(text: str, names: list[str]) -> list[str]:
    """Placeholders left in rendered text: ``{name}`` of a declared name, or a loose ``{word}`` (see module doc)."""
    found: list[str] = []
    masked = _NAME_GROUPS.sub(" ", text)
    if names:
        found += [m[0] for m in _placeholder(names).finditer(masked)]
    found += [m[0] for m in _LOOSE.finditer(masked) if m[1] not in names]
    return list(dict.fromkeys(found))


def _math_segments(text: str) -> list[str]:
    return [next(g for g in m.groups() if g is not None) for m in _MATH.finditer(text)]


def left_names(text: str, values: dict[str, str]) -> list[str]:
    """Declared names left standing alone in the rendered problem and not bound there to their value."""
    left = []
    math = [_NAME_GROUPS.sub(" ", s) for s in _math_segments(text)]
    for name, value in values.items():
        token = re.compile(r"(?<![\\A-Za-z])" + re.escape(name) + r"(?![A-Za-z0-9])")
        anywhere = bool(re.search(r"[0-9_]", name)) and re.search(r"(?<![\\A-Za-z0-9_])" + re.escape(name)
                                                                   + r"(?![A-Za-z0-9_])", text)  # fmt: skip
        if not (anywhere or any(token.search(s) for s in math)):
            continue
        bound = re.search(r"(?<![\\A-Za-z0-9_])" + re.escape(name) + r"\s*:?=\s*" + re.escape(value)
                          + r"(?![0-9A-Za-z/.])", text)  # fmt: skip
        if not bound:
            left.append(name)
    return left


def render_problem(template: str, values: dict[str, str]) -> tuple[str, str | None]:
    """The rendered problem and the reason to reject it (None when it is fine)."""
    text = substitute(template, values)
    bad = unresolved(text, list(values))
    if bad:
        return text, f"unresolved placeholder {', '.join(bad)} in the problem"
    left = left_names(text, values)
    if left:
        return text, (f"parameter name {', '.join(left)} left in the rendered problem (as a symbol in math, "
                      f"never bound to its value)")  # fmt: skip
    return text, None


def render_solution(template: str, values: dict[str, str]) -> tuple[str, str | None]:
    """The rendered solution steps; only a declared placeholder left unresolved rejects it."""
    text = substitute(template, values)
    bad = [m[0] for m in _placeholder(list(values)).finditer(_NAME_GROUPS.sub(" ", text))] if values else []
    return text, (f"unresolved placeholder {', '.join(dict.fromkeys(bad))} in the solution" if bad else None)


def strip_bindings(code: str, names: list[str]) -> str:
    """Paper-style code binds a parameter with a line ``n = {n}``; the harness binds it, so such lines go."""
    if not names:
        return code
    alternatives = "|".join(re.escape(n) for n in names)
    pattern = re.compile(r"^([ \t]*)(" + alternatives + r")[ \t]*=[ \t]*\{[ \t]*\2[ \t]*\}[ \t]*(#.*)?$", re.MULTILINE)
    return pattern.sub(r"\1pass  # \2 is bound by the harness", code)
