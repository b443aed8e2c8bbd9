"""User-defined LaTeX macros: collect their definitions, expand their uses.

Downstream stages want a theorem in *standard* notation, so the paper's own
macros (``\\R``, ``\\Aut``, ``\\BBtheFifth`` ...) are replaced by what they stand
for. This module is a small, bounded imitation of TeX's macro processor, not a
TeX engine: catcodes are fixed (except for the ``\\ExplSyntaxOn`` body rules
below), grouping does not scope definitions, conditionals are not evaluated.

This module stays whole, past the 500-line rule: collecting and expanding share one
definition record and one scanner state (what a definition captured decides how a use
is read), and splitting them would put the two halves of each rule in two files.

Collecting (:meth:`MacroTable.collect`)
    ``\\newcommand`` / ``\\renewcommand`` / ``\\providecommand`` /
    ``\\DeclareRobustCommand`` (starred or not, name braced or bare, ``[n]``
    arguments, a default for the first); ``\\def`` / ``\\edef`` / ``\\gdef`` /
    ``\\xdef`` with undelimited (``#1#2``) or delimited (``#1.``, ``(#1,#2)``)
    parameter text (``\\edef`` bodies are *not* expanded at definition time);
    ``\\let\\a\\b`` / ``\\let\\a=\\b`` (a snapshot of ``\\b``'s definition at that
    point, or an alias of the primitive ``\\b``; ``\\let\\a\\undefined`` removes
    ``\\a``); ``\\DeclareMathOperator`` (``\\operatorname{..}``, starred
    ``\\operatorname*{..}``; a body that is itself one ``\\operatorname{X}`` is
    unwrapped to ``X``); ``\\NewDocumentCommand`` and its Renew/Provide/Declare
    (and Expandable) siblings with ``m``, ``o``, ``O{default}`` argument specs.
    Definitions inside ``\\ExplSyntaxOn ... \\ExplSyntaxOff`` have their spaces
    dropped (``~`` is a space); a body that uses expl3 functions
    (``\\clist_map_inline:nn``) is recorded as unsupported. Unsupported forms
    (other xparse argument types, ``#{`` parameter text, mathtools'
    ``\\DeclarePairedDelimiter``...) are recorded with ``supported=False`` and a
    ``reason``; they *shadow* earlier definitions of the name, and uses of them
    are left alone. Definitions inside ``%`` comments and verbatim-like
    environments are ignored; the bodies of definitions are not scanned for
    nested definitions.

Time
    ``\\providecommand`` does not replace an existing definition (except a
    ``\\let`` to ``\\relax``); every other form does. A definition is in force
    from the end of its construct on: ``table.at(pos)`` keeps those with
    ``end <= pos``. :meth:`MacroTable.expand` starts from the table's state and
    applies definitions it meets in the text as it passes them, so expanding a
    whole document with an empty table (:func:`expand_document`) gives every
    use the definition in force at its position.

Expanding (:meth:`MacroTable.expand`)
    Arguments are read like TeX: spaces skipped, a brace group (braces
    stripped) or one token (a control sequence or a single character), an
    optional ``[...]`` only for macros that have one. ``#n`` is substituted,
    ``##`` becomes ``#`` and the result is rescanned, so macros defined through
    other macros expand fully. Definition constructs and verbatim-like regions
    (``verbatim``, ``Verbatim``, ``lstlisting``, ``minted``, ``comment``,
    ``\\verb``, ``\\lstinline``) in the text are copied unchanged.

Grouping rule (so that meaning survives without TeX's token boundaries)
    A replacement is wrapped in ``{...}`` when *both*

    * the macro stands where a preceding command would read it as a
      one-token argument: a known argument-taking command (``\\frac`` and
      ``\\binom`` two, ``\\sqrt[..]``, ``\\mathbb``, ``\\hat``, ``\\text`` ... one)
      or a ``^`` / ``_`` still owes an argument (spaces between allowed; the
      output is followed token by token and brace by brace to know this); or,
      with nothing between them, the previous output token is a control word
      that is not a common argument-less one (relations, operators, Greek
      letters, spacing: ``\\in``, ``\\to``, ``\\alpha``, ``\\quad`` ...), a ``]``,
      or a ``}`` that did not just complete a known command; and
    * the replacement is more than one token (a multi-character text run
      counts as several) and is not already one brace group, contains none of
      ``\\begin``, ``\\end``, ``&``, ``\\\\``, ``\\left``, ``\\right``,
      ``\\middle``, ``\\item``, ``\\par``, ``\\cr``, ``\\hline`` or a blank line,
      and does not end with a control word (one that may read its own
      arguments from the text after the macro, like ``\\xspace``;
      ``\\limits`` / ``\\nolimits`` excepted).

    So ``\\frac\\R\\C`` becomes ``\\frac{\\mathbb{R}}{\\mathbb{C}}`` and ``x^\\n``
    with ``\\n`` -> ``12`` becomes ``x^{12}``, while ``x \\in \\R`` becomes
    ``x \\in \\mathbb{R}``.

Spacing
    Source whitespace is kept as it is. Where an expansion would put a control
    word directly before a letter (``\\eps x`` -> ``\\varepsilon``, then ``x``
    from an argument, or ``\\alpha`` before a macro expanding to ``x``), a space
    is inserted. A macro whose replacement is empty and that stood alone on its
    line (``\\leanok``) takes the line with it, so no blank line (a paragraph
    break in TeX) appears where the source had none.

Bounds
    Every expansion counts against ``max_expansions``; tokens produced by an
    expansion are one level deeper than the macro, and a macro met at
    ``max_depth`` is left unexpanded with an error naming it. When the budget
    (or an internal cap on produced tokens) runs out the rest of the text is
    copied unexpanded, with an error naming the macro. There is no recursion
    in the implementation, so no RecursionError.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import lru_cache

from theorembench.latex.scan import (
    CONTROL_WORD,
    ScanError,
    read_argument,
    read_group,
    read_optional,
    skip_space,
)

__all__ = ["Expansion", "MacroDef", "MacroTable", "Param", "expand_document"]


# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class Param:
    """One parameter of a macro.

    kind: ``"m"`` mandatory/undelimited, ``"o"`` optional without default
    (xparse ``o``: an absent argument gives the empty text), ``"O"`` optional
    with ``default``, ``"d"`` delimited (``\\def``), ending at ``delimiter``.
    """

    kind: str
    default: str | None = None
    delimiter: str = ""


@dataclass(frozen=True)
class MacroDef:
    """One definition event: what ``name`` means from offset ``end`` on."""

    name: str  # with the backslash: "\\R"
    kind: str  # the defining command without backslash: "newcommand", "def", "let", ...
    pos: int  # offset of the defining command
    end: int  # offset just after the whole construct
    body: str = ""  # replacement text with #1..#9
    params: tuple[Param, ...] = ()
    prefix: str = ""  # \def parameter text before #1 that a use must match
    alias_of: str | None = None  # \let to a primitive (or an undefined name): expands to this token, not rescanned
    supported: bool = True
    reason: str = ""  # why unsupported

    @property
    def nargs(self) -> int:
        return len(self.params)

    @property
    def default(self) -> str | None:
        """The default of the first argument when it is optional (``\\newcommand\\f[2][x]``)."""
        return self.params[0].default if self.params and self.params[0].kind == "O" else None


@dataclass
class Expansion:
    text: str
    errors: list[str] = field(default_factory=list)
    expanded: dict[str, int] = field(default_factory=dict)  # successful expansions per macro
    unsupported: dict[str, int] = field(default_factory=dict)  # uses left alone: their definition is unsupported


@dataclass(frozen=True)
class _Span:
    """A region the expander copies unchanged (a definition construct or verbatim text)."""

    pos: int
    end: int
    kind: str  # "definition" | "environment" | "verbatim"
    events: tuple[MacroDef, ...] = ()


class _Opaque(str):
    """A token standing for a whole _Span."""

    span: _Span

    def __new__(cls, text: str, span: _Span) -> _Opaque:
        obj = super().__new__(cls, text)
        obj.span = span
        return obj


# --------------------------------------------------------------------------- tokens

_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ@")
_TOKEN = re.compile(
    r"\\(?:[A-Za-z@]+|[^A-Za-z@])?"  # control word / control symbol (a lone final backslash too)
    r"|%[^\n]*\n?"  # comment with its line end
    r"|\s+"  # whitespace run
    r"|\#[1-9\#]?"  # parameter
    r"|[{}\[\]]"
    r"|[^\\{}\[\]\#%\s]+"  # text run
)
_CS_FULL = re.compile(r"\\(?:[A-Za-z@]+|.)", re.DOTALL)
_CW_FULL = re.compile(r"\\[A-Za-z@]+")
_ENDS_CW = re.compile(r"\\[A-Za-z@]+\Z")
_TRAIL_NL = re.compile(r"\n[ \t]*\Z")
_LEAD_NL = re.compile(r"[ \t]*\n")
_UNDEFINED = {"\\undefined", "\\@undefined"}
_PROVIDERS = {"providecommand", "ProvideDocumentCommand", "ProvideExpandableDocumentCommand"}

# After these control words a macro is not an argument: no grouping needed.
_NON_ARG = frozenset(
    "\\" + w
    for w in """
    in notin ni owns subset subseteq subsetneq supset supseteq supsetneq sqsubseteq sqsupseteq
    to gets mapsto rightarrow leftarrow Rightarrow Leftarrow leftrightarrow Leftrightarrow iff implies
    impliedby longrightarrow longleftarrow Longrightarrow Longleftarrow longmapsto hookrightarrow
    hookleftarrow twoheadrightarrow rightsquigarrow leadsto uparrow downarrow
    times cdot cdots ldots dots dotsc dotsb dotsm vdots ddots otimes oplus ominus odot circ bullet ast star
    cap cup sqcap sqcup setminus wedge vee land lor neg lnot amalg uplus div pm mp
    le leq ge geq leqslant geqslant ll gg ne neq lt gt prec preceq succ succeq lesssim gtrsim
    cong simeq sim approx equiv propto asymp doteq coloneqq eqqcolon colon defeq triangleq
    mid nmid parallel perp vdash dashv models vert Vert lvert rvert lVert rVert
    langle rangle lfloor rfloor lceil rceil lbrace rbrace backslash
    forall exists nexists emptyset varnothing infty partial nabla prime aleph hbar ell wp Re Im
    sum prod coprod int iint oint bigcup bigcap bigoplus bigotimes bigsqcup bigvee bigwedge
    lim limsup liminf sup inf max min det ker dim deg log ln exp sin cos tan hom arg gcd Pr
    quad qquad enspace thinspace negthinspace medspace thickspace
    displaystyle textstyle scriptstyle scriptscriptstyle limits nolimits
    big Big bigg Bigg bigl bigr Bigl Bigr biggl biggr Biggl Biggr
    alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi pi
    varpi rho varrho sigma varsigma tau upsilon phi varphi chi psi omega
    Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega
    diamond models vDash Vdash square Box lozenge dagger ddagger triangle triangleleft triangleright
    and or if else fi noindent indent newline linebreak relax ignorespaces centering
    """.split()
)
# Commands whose arguments are tracked: a macro standing as one of them (even after spaces) is grouped.
_ARITY_2 = "frac dfrac tfrac cfrac binom dbinom tbinom stackrel overset underset sideset".split()
_OPTIONAL_FIRST = frozenset(["\\sqrt", "\\xrightarrow", "\\xleftarrow"])
_ARG_TAKERS = {"\\" + w: 2 for w in _ARITY_2} | {
    "\\" + w: 1
    for w in """
    sqrt xrightarrow xleftarrow
    mathbb mathbf mathrm mathcal mathfrak mathscr mathsf mathit mathtt mathnormal boldsymbol bm pmb
    hat widehat tilde widetilde bar overline underline vec dot ddot dddot check breve acute grave mathring
    overrightarrow overleftarrow underbrace overbrace operatorname
    mathop mathrel mathbin mathord mathopen mathclose mathpunct mathinner
    text textrm textbf textit textsf texttt textsc textup textnormal emph mbox fbox boxed ensuremath
    phantom vphantom hphantom smash cancel not
    """.split()
}
# A replacement containing one of these is never wrapped in braces.
_NO_GROUP = frozenset(
    ["\\begin", "\\end", "\\\\", "\\left", "\\right", "\\middle", "\\item", "\\par", "\\cr", "\\crcr", "\\hline"]
)
_GROUP_OK_LAST = frozenset(["\\limits", "\\nolimits"])
# Control words whose next control sequence(s) must not be expanded (names, not uses).
_PROTECTING = {
    "\\newcommand": 1, "\\renewcommand": 1, "\\providecommand": 1, "\\DeclareRobustCommand": 1,
    "\\def": 1, "\\edef": 1, "\\gdef": 1, "\\xdef": 1, "\\let": 2, "\\DeclareMathOperator": 1,
    "\\NewDocumentCommand": 1, "\\RenewDocumentCommand": 1, "\\ProvideDocumentCommand": 1,
    "\\DeclareDocumentCommand": 1, "\\ifdefined": 1, "\\ifx": 2, "\\noexpand": 1, "\\string": 1,
    "\\meaning": 1, "\\show": 1, "\\futurelet": 3,
}  # fmt: skip

_MAX_TOKENS = 2_000_000  # total tokens an expansion may produce
_MAX_DELIMITED_UNITS = 20_000  # how far a delimited argument may reach


def _is_par(tok: str) -> bool:
    return tok == "\\par" or (tok[0].isspace() and tok.count("\n") >= 2)


def _is_text_run(tok: str) -> bool:
    c = tok[0]
    return not (c in "\\{}[]#%" or c.isspace())


@lru_cache(maxsize=8192)
def _body_tokens(body: str) -> tuple[str, ...]:
    return tuple(_TOKEN.findall(body))


@lru_cache(maxsize=1024)
def _units(s: str) -> tuple[str, ...]:
    """Parameter-text delimiters as matching units: control sequences, single characters, ' ' for spaces."""
    out: list[str] = []
    for t in _TOKEN.findall(s):
        if t[0] == "%":
            continue
        if t[0].isspace():
            if out and (out[-1] == " " or _CW_FULL.fullmatch(out[-1])):
                continue  # TeX skips spaces after a control word and collapses runs
            out.append(" ")
        elif t[0] == "\\" or len(t) == 1:
            out.append(t)
        else:
            out.extend(t)
    return tuple(out)


def _tokenize(text: str, spans: list[_Span]) -> list[str]:
    toks: list[str] = []
    p = 0
    for sp in spans:
        if sp.pos > p:
            toks.extend(_TOKEN.findall(text, p, sp.pos))
        toks.append(_Opaque(text[sp.pos : sp.end], sp))
        p = sp.end
    toks.extend(_TOKEN.findall(text, p))
    return toks


# --------------------------------------------------------------------------- collecting

_DEF_COMMANDS = [
    "newcommand", "renewcommand", "providecommand", "DeclareRobustCommand",
    "def", "edef", "gdef", "xdef", "let", "DeclareMathOperator",
    "NewDocumentCommand", "RenewDocumentCommand", "ProvideDocumentCommand", "DeclareDocumentCommand",
    "NewExpandableDocumentCommand", "RenewExpandableDocumentCommand",
    "ProvideExpandableDocumentCommand", "DeclareExpandableDocumentCommand",
    "DeclarePairedDelimiter", "DeclarePairedDelimiterX", "DeclarePairedDelimiterXPP",
    "newenvironment", "renewenvironment", "provideenvironment",
]  # fmt: skip
_VERBATIM_ENVS = r"verbatim\*?|Verbatim\*?|BVerbatim|LVerbatim|lstlisting|minted|comment|filecontents\*?"
_SCAN = re.compile(
    r"\\(?P<cmd>" + "|".join(sorted(_DEF_COMMANDS, key=len, reverse=True)) + r")(?![A-Za-z@])"
    r"|\\begin\s*\{(?P<verb>" + _VERBATIM_ENVS + r")\}"
    r"|\\(?P<inline>verb|lstinline)(?![A-Za-z@])"
    r"|\\(?P<expl>ExplSyntaxOn|ExplSyntaxOff)(?![A-Za-z@])"
    r"|\\[^A-Za-z@]"  # control symbol: \\ \% \{ ...
    r"|%[^\n]*"
)
_EXPL_TOKEN = re.compile(r"\\(?:[A-Za-z@_:]+|[^A-Za-z@_:])?|%[^\n]*\n?|\s+|[^\\%\s]+")
_OPERATORNAME = re.compile(r"\\operatorname\*?\s*\{")


def _read_cs(text: str, p: int) -> tuple[str, int]:
    """A bare control sequence after optional spaces (TeX's ``\\def\\foo`` syntax)."""
    q = skip_space(text, p)
    m = CONTROL_WORD.match(text, q)
    if not m:
        raise ScanError(f"expected a control sequence at offset {q}")
    name, end = m.group(0), m.end()
    if len(name) > 2 and name.endswith("*"):  # CONTROL_WORD takes a trailing star into the word
        name, end = name[:-1], end - 1
    return name, end


def _read_name(text: str, p: int) -> tuple[str, int]:
    """The name being defined: ``{\\foo}`` or ``\\foo``."""
    q = skip_space(text, p)
    if q < len(text) and text[q] == "{":
        inner, end = read_group(text, q)
        name = inner.strip()
    else:
        name, end = _read_cs(text, q)
    if not _CS_FULL.fullmatch(name):
        raise ScanError(f"not a command name: {name[:40]!r}")
    return name, end


def _star(text: str, p: int) -> tuple[bool, int]:
    q = skip_space(text, p)
    if text.startswith("*", q):
        return True, q + 1
    return False, p


def _expl_body(body: str) -> tuple[str, str]:
    """Body text under expl3 catcodes: spaces ignored, ``~`` a space; expl3 functions unsupported."""
    out: list[str] = []
    prev_cw = False
    for t in _EXPL_TOKEN.findall(body):
        if t[0] == "%" or t[0].isspace():
            continue
        if t[0] == "\\" and len(t) > 2 and t[1] in _LETTERS and ("_" in t or ":" in t):
            return body, f"expl3 code in the body ({t})"
        if prev_cw and t[0] in _LETTERS:
            out.append(" ")
        out.append(t if t[0] == "\\" else t.replace("~", " "))
        prev_cw = t[0] == "\\" and t[-1] in _LETTERS
    return "".join(out), ""


def _param_text(ptext: str) -> tuple[tuple[Param, ...], str, str]:
    """Parse a \\def parameter text: (params, prefix, reason-if-unsupported)."""
    pt = re.sub(r"%[^\n]*\n?[ \t]*", "", ptext).lstrip()
    parts = re.split(r"#(.)", pt, flags=re.DOTALL)
    prefix = parts[0]
    if "#" in prefix:
        return (), "", "parameter text ending in # (#{)"
    params: list[Param] = []
    for i in range(1, len(parts), 2):
        ch, lit = parts[i], parts[i + 1]
        if ch != str(len(params) + 1):
            return (), "", f"parameter text {pt!r} (#{ch})"
        if "#" in lit:
            return (), "", "parameter text ending in # (#{)"
        params.append(Param("d", delimiter=lit) if lit else Param("m"))
    if "{" in prefix or "}" in prefix or any("{" in p.delimiter or "}" in p.delimiter for p in params):
        return (), "", f"braces in parameter text {pt!r}"
    return tuple(params), prefix, ""


def _xparse_spec(spec: str) -> tuple[tuple[Param, ...], str]:
    params: list[Param] = []
    i, n = 0, len(spec)
    while i < n:
        c = spec[i]
        if c.isspace() or c == "+":
            i += 1
        elif c == "m":
            params.append(Param("m"))
            i += 1
        elif c == "o":
            params.append(Param("o"))
            i += 1
        elif c == "O":
            j = skip_space(spec, i + 1)
            try:
                default, i = read_group(spec, j)
            except ScanError:
                return (), f"argument spec {spec!r}"
            params.append(Param("O", default=default))
        else:
            return (), f"argument type {c!r} in spec {spec!r}"
    if len(params) > 9:
        return (), f"more than 9 arguments in spec {spec!r}"
    return tuple(params), ""


def _parse_definition(text: str, cmd: str, pos: int, p: int, expl: bool) -> tuple[list[MacroDef], int, str]:
    """Parse one defining construct whose command name ends at p; (events, end, span kind)."""

    def make(name: str, end: int, body: str = "", params: tuple[Param, ...] = (), **kw) -> MacroDef:
        reason = kw.pop("reason", "")
        if expl and body and not reason:
            body, reason = _expl_body(body)
        return MacroDef(name, cmd, pos, end, body, params, supported=not reason, reason=reason, **kw)

    if cmd in ("newcommand", "renewcommand", "providecommand", "DeclareRobustCommand"):
        _, p = _star(text, p)
        name, p = _read_name(text, p)
        n_str, p = read_optional(text, p)
        params: tuple[Param, ...] = ()
        if n_str is not None:
            try:
                n = int(n_str.strip())
            except ValueError:
                raise ScanError(f"bad argument count {n_str!r}") from None
            if not 0 <= n <= 9:
                raise ScanError(f"bad argument count {n}")
            default, p = read_optional(text, p)
            if n:
                first = Param("O", default=default) if default is not None else Param("m")
                params = (first,) + (Param("m"),) * (n - 1)
        body, p = read_argument(text, p)
        return [make(name, p, body, params)], p, "definition"

    if cmd in ("def", "edef", "gdef", "xdef"):
        name, p = _read_cs(text, p)
        q, n = p, len(text)
        while q < n and text[q] != "{":
            if text[q] == "\\":
                q += 2
            elif text[q] == "%":
                e = text.find("\n", q)
                q = n if e < 0 else e + 1
            else:
                q += 1
        if q >= n:
            raise ScanError(f"no body for \\{cmd}{name}")
        ptext = text[p:q]
        body, end = read_group(text, q)
        params, prefix, reason = _param_text(ptext)
        return [make(name, end, body, params, prefix=prefix, reason=reason)], end, "definition"

    if cmd == "let":
        name, p = _read_cs(text, p)
        q = skip_space(text, p)
        if text.startswith("=", q):
            q = skip_space(text, q + 1)
        if q >= len(text):
            raise ScanError("\\let without a target")
        m = CONTROL_WORD.match(text, q)
        if m:
            target, end = _read_cs(text, q)
        else:
            target, end = text[q], q + 1
        if target in "{}":
            return [make(name, end, reason=f"\\let to a brace ({target})")], end, "definition"
        return [MacroDef(name, "let", pos, end, alias_of=target)], end, "definition"

    if cmd == "DeclareMathOperator":
        star, p = _star(text, p)
        name, p = _read_name(text, p)
        body, p = read_argument(text, p)
        inner = body.strip()
        m = _OPERATORNAME.match(inner)
        if m:
            try:
                content, after = read_group(inner, m.end() - 1)
            except ScanError:
                content, after = "", -1
            if after == len(inner):
                inner = content
        op = "\\operatorname*" if star else "\\operatorname"
        return [make(name, p, f"{op}{{{inner}}}")], p, "definition"

    if cmd.endswith("DocumentCommand"):
        name, p = _read_name(text, p)
        spec, p = read_argument(text, p)
        body, p = read_argument(text, p)
        params, reason = _xparse_spec(spec)
        if not reason and re.search(r"\\(?:IfNoValue|IfValue|IfBoolean)", body):
            reason = "body tests for an absent argument (\\IfNoValueTF ...)"
        return [make(name, p, body, params, reason=reason)], p, "definition"

    if cmd.startswith("DeclarePairedDelimiter"):
        name, p = _read_name(text, p)
        count = 2
        if cmd != "DeclarePairedDelimiter":
            _, p = read_optional(text, p)
            count = 3 if cmd == "DeclarePairedDelimiterX" else 5
        for _ in range(count):
            _, p = read_argument(text, p)
        return [make(name, p, reason=f"\\{cmd} (mathtools paired delimiter)")], p, "definition"

    # \newenvironment and friends: copied unchanged by the expander, nothing to record
    _, p = _star(text, p)
    _, p = read_argument(text, p)
    n_str, p = read_optional(text, p)
    if n_str is not None:
        _, p = read_optional(text, p)
    _, p = read_argument(text, p)
    _, p = read_argument(text, p)
    return [], p, "environment"


def _scan(text: str) -> tuple[list[_Span], list[str]]:
    """Definition constructs and verbatim regions of text, in order; plus parse warnings."""
    spans: list[_Span] = []
    warnings: list[str] = []
    pos, n = 0, len(text)
    expl = False
    search = _SCAN.search
    while True:
        m = search(text, pos)
        if not m:
            break
        kind = m.lastgroup
        if kind == "cmd":
            cmd = m.group("cmd")
            try:
                events, end, span_kind = _parse_definition(text, cmd, m.start(), m.end(), expl)
            except ScanError as exc:
                warnings.append(f"\\{cmd} at offset {m.start()} not understood: {exc}")
                pos = m.end()
                continue
            spans.append(_Span(m.start(), end, span_kind, tuple(events)))
            pos = end
        elif kind == "verb":
            close = re.compile(r"\\end\s*\{" + re.escape(m.group("verb")) + r"\}").search(text, m.end())
            end = close.end() if close else n
            spans.append(_Span(m.start(), end, "verbatim"))
            pos = end
        elif kind == "inline":
            q = m.end()
            if text.startswith("*", q):
                q += 1
            if q < n and not text[q].isspace():
                delim = "}" if text[q] == "{" else text[q]
                e = text.find(delim, q + 1)
                if e >= 0 and "\n" not in text[q:e]:
                    spans.append(_Span(m.start(), e + 1, "verbatim"))
                    pos = e + 1
                    continue
            pos = m.end()
        elif kind == "expl":
            expl = m.group("expl") == "ExplSyntaxOn"
            pos = m.end()
        else:
            pos = m.end()
    return spans, warnings


def _is_relax(d: MacroDef) -> bool:
    return d.kind == "let" and d.alias_of == "\\relax"


def _apply(state: dict[str, MacroDef], d: MacroDef) -> MacroDef | None:
    """Put event d into state; returns the event as it took effect (None when ignored)."""
    if d.kind == "let" and d.alias_of is not None:
        if d.alias_of in _UNDEFINED:
            state.pop(d.name, None)
            return d
        target = state.get(d.alias_of)
        if target is not None:  # snapshot of the current meaning
            d = replace(target, name=d.name, kind="let", pos=d.pos, end=d.end)
        state[d.name] = d
        return d
    if d.kind in _PROVIDERS and d.name in state and not _is_relax(state[d.name]):
        return None
    state[d.name] = d
    return d


# --------------------------------------------------------------------------- the table


class MacroTable:
    """Definition events in text order, and the state they build."""

    def __init__(self, definitions: Iterable[MacroDef] = (), *, warnings: Iterable[str] = ()) -> None:
        state: dict[str, MacroDef] = {}
        events: list[MacroDef] = []
        for d in definitions:
            eff = _apply(state, d)
            events.append(eff if eff is not None else d)
        self._events: tuple[MacroDef, ...] = tuple(events)
        self._state = state
        self.warnings: list[str] = list(warnings)

    @classmethod
    def collect(cls, text: str) -> MacroTable:
        spans, warnings = _scan(text)
        return cls((d for sp in spans for d in sp.events), warnings=warnings)

    @property
    def definitions(self) -> tuple[MacroDef, ...]:
        """Every collected event in text order (a ``\\let`` as resolved when it was met)."""
        return self._events

    @property
    def names(self) -> list[str]:
        """Names defined in the final state, sorted (with backslashes)."""
        return sorted(self._state)

    @property
    def unsupported(self) -> list[MacroDef]:
        """Definitions in force that the expander leaves alone."""
        return [d for d in self._state.values() if not d.supported]

    def get(self, name: str) -> MacroDef | None:
        if not name.startswith("\\"):
            name = "\\" + name
        return self._state.get(name)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __len__(self) -> int:
        return len(self._state)

    def __repr__(self) -> str:
        return f"MacroTable({len(self._state)} macros, {len(self._events)} definitions)"

    def at(self, pos: int) -> MacroTable:
        """The table as it stands at offset pos: definitions whose construct ends at or before pos."""
        return MacroTable((d for d in self._events if d.end <= pos), warnings=self.warnings)

    def extended(self, text: str) -> MacroTable:
        """This table plus the definitions in text, which override and are in force at every offset.

        For meanings the pipeline knows better than the paper, e.g. leanblueprint's expl3
        ``\\uses``: ``table.extended(r"\\renewcommand{\\uses}[1]{}")``.
        """
        spans, warnings = _scan(text)
        extra = tuple(replace(d, pos=0, end=0) for sp in spans for d in sp.events)
        return MacroTable(self._events + extra, warnings=self.warnings + warnings)

    def expand(self, text: str, *, max_expansions: int = 20000, max_depth: int = 64) -> Expansion:
        """Expand the uses of the macros in text (see the module docstring for the rules)."""
        return _Expander(self._state, max_expansions, max_depth).run(text)


def expand_document(text: str, *, max_expansions: int = 200000, max_depth: int = 64) -> Expansion:
    """Expand a whole document, each use with the definitions in force at its position."""
    return MacroTable().expand(text, max_expansions=max_expansions, max_depth=max_depth)


# --------------------------------------------------------------------------- expanding

_Log = list[tuple[str, int]]


class _Fail(Exception):
    pass


class _Expander:
    def __init__(self, state: dict[str, MacroDef], max_expansions: int, max_depth: int) -> None:
        self.state = dict(state)
        self.max_expansions = max_expansions
        self.max_depth = max_depth
        self.errors: dict[str, None] = {}
        self.expanded: dict[str, int] = {}
        self.unsupported: dict[str, int] = {}
        self.count = 0
        self.produced = 0
        self.root = ""
        self.stopped = False
        self.toks: list[str] = []
        self.deps: list[int] = []
        self.out: list[str] = []
        self.prev_sig: str | None = None  # the last non-space token written
        self.adjacent = False  # nothing (no space, no comment) written after prev_sig
        self.last_cw = False
        self.depth = 0  # brace depth of the output
        self.frames: list[list] = []  # see track_arguments
        self.closed_known = False  # the last } closed the last argument of a known command

    # ----- output

    def emit(self, tok: str) -> None:
        c = tok[0]
        if self.last_cw and c in _LETTERS:
            self.out.append(" ")
        self.out.append(tok)
        if c.isspace() or c == "%":
            self.last_cw = False
            self.adjacent = False
            return
        self.prev_sig = tok
        self.adjacent = True
        self.last_cw = c == "\\" and tok[-1] in _LETTERS and _ENDS_CW.search(tok) is not None
        self.track_arguments(tok)

    def track_arguments(self, tok: str) -> None:
        """Follow which known commands (and ^, _) still owe arguments, as a stack of frames.

        A frame is [arguments owed, brace depth it was opened at, inside its optional [..],
        an optional [..] may come next].
        """
        frames = self.frames
        top = frames[-1] if frames else None
        self.closed_known = False
        if top is not None and top[2]:  # inside \sqrt[..]
            if tok == "{":
                self.depth += 1
            elif tok == "}":
                self.depth -= 1
            elif tok == "]" and self.depth == top[1]:
                top[2] = False
            return
        opt_ok = top is not None and top[3]
        if top is not None:
            top[3] = False
        if tok == "{":
            self.depth += 1
        elif tok == "}":
            self.depth -= 1
            while frames and frames[-1][1] > self.depth:
                frames.pop()  # a group closed on commands still owed arguments
            if frames and frames[-1][1] == self.depth:
                frames[-1][0] -= 1
                if frames[-1][0] <= 0:
                    frames.pop()
                    self.closed_known = True
        elif top is not None and top[1] == self.depth:
            if tok == "[" and opt_ok:
                top[2] = True
                return
            top[0] -= len(tok) if _is_text_run(tok) else 1
            if top[0] <= 0:
                frames.pop()
        arity = _ARG_TAKERS.get(tok)
        if arity:
            frames.append([arity, self.depth, False, tok in _OPTIONAL_FIRST])
        elif tok[-1] in "^_" and _is_text_run(tok):
            frames.append([1, self.depth, False, False])

    def error(self, msg: str) -> None:
        self.errors.setdefault(msg, None)

    # ----- input stack

    def pop_unit(self, log: _Log) -> str | None:
        """Next token, a text run split to its first character; comments skipped (logged)."""
        toks, deps = self.toks, self.deps
        while toks:
            t, d = toks.pop(), deps.pop()
            if t[0] == "%":
                log.append((t, d))
                continue
            if len(t) > 1 and type(t) is str and _is_text_run(t):
                toks.append(t[1:])
                deps.append(d)
                t = t[0]
            log.append((t, d))
            return t
        return None

    def restore(self, log: _Log, mark: int = 0) -> None:
        for t, d in reversed(log[mark:]):
            self.toks.append(t)
            self.deps.append(d)
        del log[mark:]

    def skip_spaces(self, log: _Log) -> None:
        toks, deps = self.toks, self.deps
        while toks:
            t = toks[-1]
            if (t[0].isspace() and t.count("\n") < 2) or t[0] == "%":
                log.append((toks.pop(), deps.pop()))
            else:
                break

    def group_rest(self, log: _Log) -> list[str]:
        """After an opening brace: the tokens up to its matching close (which is consumed)."""
        toks, deps = self.toks, self.deps
        depth, content = 1, []
        while toks:
            t, d = toks.pop(), deps.pop()
            log.append((t, d))
            if t == "{":
                depth += 1
            elif t == "}":
                depth -= 1
                if depth == 0:
                    return content
            content.append(t)
        raise _Fail("unbalanced braces in an argument")

    def read_m(self, log: _Log, i: int) -> list[str]:
        self.skip_spaces(log)
        t = self.pop_unit(log)
        if t is None or t == "}" or _is_par(t):
            raise _Fail(f"missing argument #{i}")
        if t == "{":
            return self.group_rest(log)
        return [t]

    def read_o(self, log: _Log) -> list[str] | None:
        mark = len(log)
        self.skip_spaces(log)
        if not self.toks or self.toks[-1] != "[":
            self.restore(log, mark)
            return None
        log.append((self.toks.pop(), self.deps.pop()))
        depth, content = 0, []
        while self.toks:
            t, d = self.toks.pop(), self.deps.pop()
            log.append((t, d))
            if t == "{":
                depth += 1
            elif t == "}":
                depth -= 1
                if depth < 0:
                    break
            elif t == "]" and depth == 0:
                return content
            content.append(t)
        self.restore(log, mark)  # no closing bracket: treat as absent
        return None

    def try_match(self, units: tuple[str, ...], log: _Log) -> bool:
        local: _Log = []
        for u in units:
            t = self.pop_unit(local)
            if t is None:
                self.restore(local)
                return False
            ok = (t[0].isspace() and t.count("\n") < 2) if u == " " else t == u
            if not ok:
                self.restore(local)
                return False
            if u[0] == "\\" and u[-1] in _LETTERS:
                self.skip_spaces(local)
        log.extend(local)
        return True

    def read_delimited(self, units: tuple[str, ...], log: _Log, i: int) -> list[str]:
        arg: list[str] = []
        steps = 0
        while not self.try_match(units, log):
            steps += 1
            t = self.pop_unit(log)
            if t is None or t == "}" or _is_par(t) or steps > _MAX_DELIMITED_UNITS:
                raise _Fail(f"argument #{i} does not end with {''.join(units)!r} before the paragraph ends")
            if t == "{":
                arg += ["{", *self.group_rest(log), "}"]
            else:
                arg.append(t)
        if len(arg) >= 2 and arg[0] == "{" and arg[-1] == "}":
            depth = 0
            for k, t in enumerate(arg):
                depth += (t == "{") - (t == "}")
                if depth == 0 and k < len(arg) - 1:
                    break
            else:
                arg = arg[1:-1]
        return arg

    # ----- expansion

    def read_args(self, tok: str, d: MacroDef, log: _Log) -> list[list[str]]:
        if (d.prefix or (d.params and d.params[0].kind == "d")) and _CW_FULL.fullmatch(tok):
            self.skip_spaces(log)
        if d.prefix and not self.try_match(_units(d.prefix), log):
            raise _Fail(f"use does not match its parameter text {d.prefix!r}")
        args: list[list[str]] = []
        for i, prm in enumerate(d.params, 1):
            if prm.kind == "m":
                args.append(self.read_m(log, i))
            elif prm.kind in ("o", "O"):
                a = self.read_o(log)
                if a is None:
                    a = list(_body_tokens(prm.default)) if prm.default else []
                args.append(a)
            else:
                args.append(self.read_delimited(_units(prm.delimiter), log, i))
        return args

    @staticmethod
    def substitute(d: MacroDef, args: list[list[str]]) -> list[str]:
        body = _body_tokens(d.body)
        if "#" not in d.body:
            return list(body)
        rep: list[str] = []
        for t in body:
            if t[0] == "#" and len(t) == 2:
                if t[1] == "#":
                    rep.append("#")
                    continue
                k = int(t[1]) - 1
                if k < len(args):
                    rep.extend(args[k])
                    continue
            rep.append(t)
        return rep

    def in_argument_position(self) -> bool:
        if self.frames:
            owed, depth, in_opt, _ = self.frames[-1]
            if owed > 0 and depth == self.depth and not in_opt:
                return True
        p = self.prev_sig
        if p is None or type(p) is not str or not self.adjacent:
            return False
        if p == "}":
            return not self.closed_known
        if p == "]":
            return True
        return p[0] == "\\" and _CW_FULL.fullmatch(p) is not None and p not in _NON_ARG and p not in _ARG_TAKERS

    def should_group(self, rep: list[str]) -> bool:
        if not self.in_argument_position():
            return False
        sig = [t for t in rep if not (t[0].isspace() or t[0] == "%")]
        if not sig:
            return False
        if len(sig) == 1 and (len(sig[0]) == 1 or not _is_text_run(sig[0])):
            return False  # a single token
        if sig[0] == "{" and sig[-1] == "}":
            depth = 0
            for k, t in enumerate(sig):
                depth += (t == "{") - (t == "}")
                if depth == 0:
                    if k == len(sig) - 1:
                        return False  # already one group
                    break
        for t in rep:
            if t in _NO_GROUP or (_is_text_run(t) and "&" in t) or (t[0].isspace() and t.count("\n") >= 2):
                return False
        last = sig[-1]
        return not (_CW_FULL.fullmatch(last) and last not in _GROUP_OK_LAST)

    def drop_empty_line(self) -> None:
        """An empty replacement that stood alone on its line removes the line."""
        toks, out = self.toks, self.out
        if not toks or not toks[-1][0].isspace():
            return
        m_next = _LEAD_NL.match(toks[-1])
        if not m_next:
            return
        j = len(out)
        while j and out[j - 1][0].isspace():
            j -= 1
        tail = "".join(out[j:])
        m_prev = _TRAIL_NL.search(tail)
        if m_prev:
            out[j:] = [tail[: m_prev.start() + 1]]
        elif "\n" not in tail and tail.strip(" \t") == "" and (j == 0 or out[j - 1].endswith("\n")):
            del out[j:]  # the macro began its line (after a comment line, or at the start)
        else:
            return
        rest = toks[-1][m_next.end() :]
        if rest:
            toks[-1] = rest
        else:
            toks.pop()
            self.deps.pop()

    def expand_one(self, tok: str, d: MacroDef, dep: int) -> None:
        if not d.supported:
            self.unsupported[tok] = self.unsupported.get(tok, 0) + 1
            self.emit(tok)
            return
        if dep == 0:
            self.root = tok
        if dep >= self.max_depth:
            self.error(f"{tok}: expansion depth limit ({self.max_depth}) exceeded (recursive definition?); left unexpanded")
            self.emit(tok)
            return
        if self.count >= self.max_expansions or self.produced > _MAX_TOKENS:
            what = f"{self.max_expansions} expansions" if self.count >= self.max_expansions else f"{_MAX_TOKENS} tokens"
            via = f" (from {self.root})" if self.root and self.root != tok else ""
            self.error(f"{tok}: expansion limit reached ({what}) while expanding {tok}{via}; rest of the text left unexpanded")
            self.stopped = True
            self.emit(tok)
            return
        if d.alias_of is not None:
            self.count += 1
            self.expanded[tok] = self.expanded.get(tok, 0) + 1
            self.emit(d.alias_of)
            return
        log: _Log = []
        try:
            args = self.read_args(tok, d, log)
        except _Fail as exc:
            self.restore(log)
            self.error(f"{tok}: {exc}; left unexpanded")
            self.emit(tok)
            return
        rep = self.substitute(d, args)
        self.count += 1
        self.expanded[tok] = self.expanded.get(tok, 0) + 1
        if not rep:
            self.drop_empty_line()
            return
        if self.should_group(rep):
            rep = ["{", *rep, "}"]
        rep.reverse()
        self.toks.extend(rep)
        self.deps.extend([dep + 1] * len(rep))
        self.produced += len(rep)

    def run(self, text: str) -> Expansion:
        spans, _ = _scan(text)
        toks = _tokenize(text, spans)
        toks.reverse()
        deps = [0] * len(toks)
        self.toks, self.deps = toks, deps
        state = self.state
        emit = self.emit
        protect = 0
        while toks:
            tok = toks.pop()
            dep = deps.pop()
            if tok[0] != "\\" or len(tok) == 1:
                emit(tok)
                continue
            if type(tok) is _Opaque:
                for ev in tok.span.events:
                    _apply(state, ev)
                emit(tok)
                continue
            if protect:
                protect -= 1
                emit(tok)
                continue
            d = state.get(tok)
            if d is not None:
                self.expand_one(tok, d, dep)
                if self.stopped:
                    break
                continue
            protect = _PROTECTING.get(tok, 0)
            emit(tok)
        if toks:  # stopped: copy the rest as it is
            emit(toks[-1])
            self.out.extend(reversed(toks[:-1]))
        return Expansion("".join(self.out), list(self.errors), dict(self.expanded), dict(self.unsupported))
