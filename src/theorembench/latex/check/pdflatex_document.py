"""The document pdflatex compiles: a minimal article with every string in its own paragraph.

The header loads amsmath, amssymb, amsthm, mathtools and bm, declares the unicode
a generated string may carry, and defines the marker macros ``\\TBCHKbegin`` /
``\\TBCHKend`` put around each string. They write ``[tb-begin:<n>]`` /
``[tb-end:<n>]`` to the log (``[tb-document]`` and ``[tb-done]`` mark the body),
and the end marker raises a ``TBCHK <n>: ...`` error for a string that ends in math
mode or leaves a group open; :mod:`theorembench.latex.check.pdflatex` reads them back.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CheckDocument", "build_check_document"]

# Unicode a generated string may carry in text or math; pdflatex's default UTF-8
# input knows accented Latin letters and common punctuation but not these.
_UNICODE_MATH = {
    "03B1": "alpha", "03B2": "beta", "03B3": "gamma", "03B4": "delta", "03B5": "epsilon", "03B6": "zeta",
    "03B7": "eta", "03B8": "theta", "03B9": "iota", "03BA": "kappa", "03BB": "lambda", "03BC": "mu",
    "03BD": "nu", "03BE": "xi", "03C0": "pi", "03C1": "rho", "03C3": "sigma", "03C4": "tau", "03C5": "upsilon",
    "03C6": "phi", "03C7": "chi", "03C8": "psi", "03C9": "omega", "0393": "Gamma", "0394": "Delta",
    "0398": "Theta", "039B": "Lambda", "039E": "Xi", "03A0": "Pi", "03A3": "Sigma", "03A6": "Phi",
    "03A8": "Psi", "03A9": "Omega", "2264": "leq", "2265": "geq", "2260": "neq", "2208": "in", "2209": "notin",
    "2282": "subset", "2286": "subseteq", "2192": "to", "21D2": "Rightarrow", "21D4": "Leftrightarrow",
    "2194": "leftrightarrow", "2190": "leftarrow", "21A6": "mapsto", "2200": "forall", "2203": "exists",
    "2205": "emptyset", "221E": "infty", "2211": "sum", "220F": "prod", "222B": "int", "2202": "partial",
    "2207": "nabla", "2229": "cap", "222A": "cup", "2248": "approx", "2261": "equiv", "223C": "sim",
    "2245": "cong", "2213": "mp", "2218": "circ", "2297": "otimes", "2295": "oplus", "22C5": "cdot",
    "2223": "mid", "2225": "parallel", "27E8": "langle", "27E9": "rangle", "2032": "prime", "2016": "Vert",
    "2227": "wedge", "2228": "vee", "00AC": "neg", "2283": "supset", "226A": "ll",
    "226B": "gg", "22A2": "vdash", "22A8": "models", "2243": "simeq",
}  # fmt: skip
_UNICODE_MATHBB = {"211D": "R", "2115": "N", "2124": "Z", "211A": "Q", "2102": "C"}

_HEADER = [
    r"\documentclass{article}",
    r"\usepackage{amsmath,amssymb,amsthm,mathtools,bm}",
    *(rf"\DeclareUnicodeCharacter{{{code}}}{{\ensuremath{{\{name}}}}}" for code, name in _UNICODE_MATH.items()),
    *(rf"\DeclareUnicodeCharacter{{{code}}}{{\ensuremath{{\mathbb{{{L}}}}}}}" for code, L in _UNICODE_MATHBB.items()),
    r"\DeclareUnicodeCharacter{00D7}{\ensuremath{\times}}",
    r"\DeclareUnicodeCharacter{00B7}{\ensuremath{\cdot}}",
    r"\DeclareUnicodeCharacter{2026}{\ldots}",
    r"\DeclareUnicodeCharacter{00A0}{~}",
    r"\DeclareUnicodeCharacter{2009}{\,}",
    r"\DeclareUnicodeCharacter{2212}{\ensuremath{-}}",
    r"\newcommand\TBCHKbegin[1]{\message{[tb-begin:#1]}}",
    r"\newcommand\TBCHKend[1]{%",
    r"  \ifmmode\errmessage{TBCHK #1: the string ends in math mode (an unclosed math delimiter)}\fi",
    r"  \ifnum\currentgrouplevel>\TBCHKlevel\relax",
    r"    \errmessage{TBCHK #1: the string leaves a group open"
    r" (an unbalanced brace or an environment without \string\end)}%",
    r"  \fi",
    r"  \message{[tb-end:#1]}}",
    r"\def\TBCHKlevel{0}",
]  # fmt: skip
_BODY_START = [r"\begin{document}", r"\edef\TBCHKlevel{\the\currentgrouplevel}\message{[tb-document]}"]
_BODY_END = [r"\message{[tb-done]}", r"\end{document}"]


@dataclass
class CheckDocument:
    """The source of a check document and where each string and the preamble lie in it."""

    source: str
    lines_of: dict[int, tuple[int, int]]  # string index -> (first line, last line), 1-based inclusive
    preamble_lines: tuple[int, int]


def build_check_document(texts: list[tuple[int, str]], preamble: str) -> CheckDocument:
    """The document for (index, string) pairs after the (sanitised) preamble, each string between its markers."""
    lines: list[str] = list(_HEADER)
    pre_first = len(lines) + 1
    lines.extend(preamble.split("\n") if preamble else [])
    pre_last = len(lines)
    lines.extend(_BODY_START)
    lines_of: dict[int, tuple[int, int]] = {}
    for idx, text in texts:
        first = len(lines) + 1
        lines.append(rf"\TBCHKbegin{{{idx}}}%")
        lines.extend((text or "").replace("\r\n", "\n").replace("\r", "\n").split("\n"))
        lines.append(rf"\TBCHKend{{{idx}}}")
        lines.append("")
        lines_of[idx] = (first, len(lines))
    lines.extend(_BODY_END)
    return CheckDocument("\n".join(lines) + "\n", lines_of, (pre_first, pre_last))
