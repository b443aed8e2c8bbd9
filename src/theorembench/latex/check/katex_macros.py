"""KaTeX ``macros`` from a paper preamble: its simple definitions converted (:func:`katex_macros_from_preamble`)."""

from __future__ import annotations

import re

from theorembench.latex.check.preamble import strip_comments
from theorembench.latex.macros import MacroDef, MacroTable
from theorembench.latex.scan import ScanError, read_argument

__all__ = ["katex_macros_from_preamble"]


def katex_macros_from_preamble(preamble: str) -> dict[str, str]:
    """KaTeX ``macros`` for the simple definitions of a preamble.

    Converted: ``\\newcommand``/``\\renewcommand``/``\\providecommand`` (an optional
    first argument becomes its default, since KaTeX macros take no optional
    arguments), ``\\def`` with undelimited parameters, ``\\DeclareMathOperator``
    (starred too), ``\\let``, xparse commands with ``m``/``o``/``O{}`` arguments and
    mathtools' ``\\DeclarePairedDelimiter`` (as ``\\left..#1\\right..``). Delimited
    ``\\def``s and other unsupported forms are left out. The last definition of a
    name wins, as in TeX. ``\\ensuremath`` and ``\\xspace`` used in bodies are given
    KaTeX meanings.
    """
    text = strip_comments(preamble or "")
    try:
        table = MacroTable.collect(text)
    except (ScanError, ValueError):
        return {}
    macros: dict[str, str] = {}
    for name in table.names:
        d = table.get(name)
        if d is None:
            continue
        body = _katex_body(d, text)
        if body is not None:
            macros[name] = body
    joined = " ".join(macros.values())
    if "\\ensuremath" in joined and "\\ensuremath" not in macros:
        macros["\\ensuremath"] = "#1"
    if "\\xspace" in joined and "\\xspace" not in macros:
        macros["\\xspace"] = ""
    return macros


def _katex_body(d: MacroDef, text: str) -> str | None:
    if d.kind == "DeclarePairedDelimiter":
        try:
            src = text[d.pos : d.end]
            p = len("\\DeclarePairedDelimiter")
            _, p = read_argument(src, p)
            left, p = read_argument(src, p)
            right, p = read_argument(src, p)
        except ScanError:
            return None
        return f"\\left{left.strip()} #1 \\right{right.strip()}"
    if not d.supported:
        return None
    if d.alias_of is not None:
        return d.alias_of
    if d.prefix or any(p.kind == "d" for p in d.params):
        return None
    body = d.body
    params = list(d.params)
    if params and params[0].kind in ("O", "o"):
        default = params[0].default or ""
        body = _substitute_first(body, default)
        params = params[1:]
    nargs = len(params)
    used = {int(k) for k in re.findall(r"(?<!#)#([1-9])", body)}
    gobble = "".join(f"\\@secondoftwo{{#{k}}}{{}}" for k in range(1, nargs + 1) if k not in used)
    return gobble + body


def _substitute_first(body: str, value: str) -> str:
    """Put value for #1 and renumber #2.. to #1.."""

    def repl(m: re.Match) -> str:
        k = int(m.group(1))
        return value if k == 1 else f"#{k - 1}"

    return re.sub(r"(?<!#)#([1-9])", repl, body)
