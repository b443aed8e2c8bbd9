"""The macro layer: definitions collected with their offsets, uses expanded, bounded."""

from __future__ import annotations

import json
import re

import pytest
from helpers.paths import SHARED

from theorembench.latex.macros import MacroTable, Param, _scan, _tokenize, expand_document

PAPERS = SHARED / "data" / "papers"
STACKS = SHARED / "data" / "stacks"


def ex(defs: str, text: str, **kw) -> str:
    result = MacroTable.collect(defs).expand(text, **kw)
    assert result.errors == [], result.errors
    return result.text


# --------------------------------------------------------------------------- definition forms


def test_newcommand_forms():
    t = MacroTable.collect(
        r"\newcommand{\R}{\mathbb{R}}"
        r"\newcommand\Z{\mathbb{Z}}"
        r"\newcommand*{\pair}[2]{\langle #1, #2\rangle}"
        r"\newcommand*\sq[1]{#1^2}"
    )
    assert t.names == ["\\R", "\\Z", "\\pair", "\\sq"]
    assert t.get("pair").nargs == 2 and t.get("\\pair").kind == "newcommand"
    assert t.expand(r"$\R\Z \pair{a}{b} \sq x$").text == r"$\mathbb{R}\mathbb{Z} \langle a, b\rangle x^2$"


def test_newcommand_optional_default_used_and_overridden():
    t = MacroTable.collect(r"\newcommand{\foo}[2][x]{(#1|#2)}")
    d = t.get("foo")
    assert d.nargs == 2 and d.default == "x" and d.params[0] == Param("O", default="x")
    assert t.expand(r"\foo{a}").text == "(x|a)"
    assert t.expand(r"\foo[b]{c}").text == "(b|c)"
    assert t.expand(r"\foo [d] e").text == "(d|e)"


def test_offsets_and_at_renewcommand_applies_after_its_position():
    text = r"\newcommand{\x}{one} A \renewcommand{\x}{two} B"
    t = MacroTable.collect(text)
    first, second = t.definitions
    assert (first.pos, first.end) == (0, text.index(" A"))
    assert second.pos == text.index(r"\renewcommand") and second.kind == "renewcommand"
    assert t.at(0).get("x") is None
    assert t.at(text.index("A")).expand(r"\x").text == "one"
    assert t.at(text.index("B")).expand(r"\x").text == "two"
    assert t.expand(r"\x").text == "two"


def test_providecommand_does_not_override():
    t = MacroTable.collect(r"\newcommand\R{A}\providecommand\R{B}\providecommand{\S}{C}")
    assert t.expand(r"\R\S").text == "AC"
    assert t.get("R").kind == "newcommand" and t.get("S").kind == "providecommand"


def test_def_family_and_later_def_overrides():
    t = MacroTable.collect(r"\def\C{\mathbb{C}}\edef\E{e}\gdef\G#1#2{#2#1}\xdef\X{x}\def\C{\mathbf{C}}")
    assert t.get("C").kind == "def" and t.get("E").kind == "edef" and t.get("X").kind == "xdef"
    assert t.expand(r"\C\E\G ab\X").text == r"\mathbf{C}ebax"
    assert t.at(t.definitions[1].pos).expand(r"\C").text == r"\mathbb{C}"


def test_def_delimited_parameters():
    t = MacroTable.collect(r"\def\foo#1.{[#1]}\def\pair(#1,#2){<#1;#2>}")
    assert t.get("foo").params == (Param("d", delimiter="."),)
    assert t.expand(r"\foo abc. rest").text == "[abc] rest"
    assert t.expand(r"\pair(a,{b,c}) end").text == "<a;b,c> end"
    bad = t.expand(r"\pair x")  # does not match its parameter text: left alone
    assert bad.text == r"\pair x" and any("\\pair" in e for e in bad.errors)


def test_let_snapshot_semantics():
    t = MacroTable.collect(r"\def\a{1}\let\b\a\def\a{2}")
    assert t.expand(r"\b\a").text == "12"
    assert t.get("b").kind == "let" and t.get("b").body == "1"


def test_let_with_equals_and_primitive_alias():
    t = MacroTable.collect(r"\def\a{A}\let\c=\a \let\oldt = \t \renewcommand\t{\mathbf{t}}")
    assert t.expand(r"\c").text == "A"
    assert t.get("oldt").alias_of == "\\t"
    # the alias keeps the primitive meaning; it is not rescanned into the new \t
    assert t.expand(r"\oldt{o} \t").text == r"\t{o} \mathbf{t}"
    gone = MacroTable.collect(r"\def\a{A}\let\a\undefined")
    assert gone.get("a") is None and gone.expand(r"\a").text == r"\a"


def test_declare_math_operator():
    t = MacroTable.collect(
        r"\DeclareMathOperator{\Aut}{Aut}\DeclareMathOperator*{\argmax}{arg\,max}"
        r"\DeclareMathOperator*\swan{swan}\DeclareMathOperator{\supp}{\operatorname{supp}}"
    )
    assert t.expand(r"$\Aut(X) \argmax_x \swan \supp f$").text == (
        r"$\operatorname{Aut}(X) \operatorname*{arg\,max}_x \operatorname*{swan} \operatorname{supp} f$"
    )


def test_expl_syntax_and_document_commands():
    t = MacroTable.collect(
        r"\ExplSyntaxOn \newcommand{\inc}[1]{ #1 ~ + ~ 1 } \ExplSyntaxOff"
        r"\NewDocumentCommand{\x}{m O{d}}{(#1,#2)}"
        r"\DeclareDocumentCommand\y{o m}{[#1|#2]}"
    )
    assert t.expand(r"\inc{n}").text == "n + 1"
    assert t.expand(r"\x{a} \x{a}[b]").text == "(a,d) (a,b)"
    assert t.expand(r"\y{q} \y[p]{q}").text == "[|q] [p|q]"
    assert t.get("x").kind == "NewDocumentCommand" and [p.kind for p in t.get("x").params] == ["m", "O"]


def test_unsupported_forms_recorded_and_left_alone():
    t = MacroTable.collect(
        r"\newcommand\s{old}\NewDocumentCommand{\s}{s m}{S}"
        r"\ExplSyntaxOn \NewDocumentCommand{\uses}{m}{\clist_map_inline:nn{#1}{\ref{##1}}} \ExplSyntaxOff"
        r"\def\brace#1#{B}"
    )
    by_name = {d.name: d for d in t.unsupported}
    assert set(by_name) == {"\\s", "\\uses", "\\brace"}
    assert "'s'" in by_name["\\s"].reason and "expl3" in by_name["\\uses"].reason
    result = t.expand(r"\s*{a} \uses{x,y} \brace{z}")
    assert result.text == r"\s*{a} \uses{x,y} \brace{z}"  # the older \s does not leak through
    assert result.unsupported == {"\\s": 1, "\\uses": 1, "\\brace": 1} and result.errors == []


def test_comments_and_verbatim_hold_no_definitions():
    t = MacroTable.collect("%\\newcommand\\a{no}\n\\begin{verbatim}\\def\\b{no}\\end{verbatim}\\verb|\\def\\c{no}|")
    assert t.names == []


# --------------------------------------------------------------------------- expansion


def test_rescanning_macros_defined_through_macros():
    defs = r"\newcommand\R{\mathbb{R}}\newcommand\Rn[1]{\R^{#1}}\newcommand\sp{\Rn{n}}"
    assert ex(defs, r"$\sp$") == r"$\mathbb{R}^{n}$"


def test_grouping_keeps_arguments_whole():
    defs = r"\newcommand\R{\mathbb{R}}\def\C{\mathbb{C}}\newcommand\n{12}\newcommand\N{{\mathbb{N}}}"
    assert ex(defs, r"$\frac\R\C$") == r"$\frac{\mathbb{R}}{\mathbb{C}}$"
    assert ex(defs, r"$\frac \R \C$") == r"$\frac {\mathbb{R}} {\mathbb{C}}$"
    assert ex(defs, r"$x^\n + y_\R$") == r"$x^{12} + y_{\mathbb{R}}$"
    assert ex(defs, r"$\sqrt[3]\R$") == r"$\sqrt[3]{\mathbb{R}}$"
    # already one group, or not in an argument position: no braces added
    assert ex(defs, r"$\frac\N\N$") == r"$\frac{\mathbb{N}}{\mathbb{N}}$"
    assert ex(defs, r"$x \in \R, \R^2$") == r"$x \in \mathbb{R}, \mathbb{R}^2$"
    assert ex(defs, r"$\frac{1}{2} \R \C\R$") == r"$\frac{1}{2} \mathbb{R} \mathbb{C}\mathbb{R}$"
    assert ex(defs, r"$\frac{\hat\R}\C$") == r"$\frac{\hat{\mathbb{R}}}{\mathbb{C}}$"


def test_grouping_never_wraps_structure():
    defs = (
        r"\newcommand\ba{\begin{aligned}}\newcommand\amp{a & b}\newcommand\nl{x \\ y}"
        r"\newcommand\lr{\left( x \right)}\newcommand\coq{Coq\xspace}"
    )
    assert ex(defs, r"\frac\ba") == r"\frac\begin{aligned}"
    assert ex(defs, r"\frac\amp") == r"\frac a & b"
    assert ex(defs, r"\frac\nl") == r"\frac x \\ y"
    assert ex(defs, r"\hat\lr") == r"\hat\left( x \right)"
    assert ex(defs, r"\emph\coq") == r"\emph Coq\xspace"


def test_control_words_stay_separated_from_letters():
    defs = r"\newcommand\eps{\varepsilon}\newcommand\f[1]{#1x}\def\al{\alpha}\def\y{y}\newcommand\R{\mathbb{R}}"
    assert ex(defs, r"$\eps x$") == r"$\varepsilon x$"
    assert ex(defs, r"$\f\beta$") == r"$\beta x$"
    assert ex(defs, r"$\al\y$") == r"$\alpha y$"
    assert ex(defs, r"$\R x$") == r"$\mathbb{R} x$"


def test_empty_macro_on_its_own_line_leaves_no_blank_line():
    defs = r"\newcommand{\leanok}{}\newcommand{\lean}[1]{}"
    assert ex(defs, "\\label{a}\n    \\leanok\n    \\lean{x}\n    Let $f$.") == "\\label{a}\n    Let $f$."
    assert ex(defs, "a \\lean{x} b") == "a  b"


def test_definitions_and_verbatim_in_the_input_are_not_expanded():
    t = MacroTable.collect(r"\newcommand\R{\mathbb{R}}")
    text = r"\R \newcommand\foo{\R} \def\bar#1{\R#1} \begin{verbatim}\R\end{verbatim} \verb|\R| \foo"
    result = t.expand(text)
    assert result.text == (
        r"\mathbb{R} \newcommand\foo{\R} \def\bar#1{\R#1} \begin{verbatim}\R\end{verbatim} \verb|\R| \mathbb{R}"
    )
    assert result.expanded == {"\\R": 2, "\\foo": 1}


def test_definitions_met_while_expanding_apply_from_their_position():
    result = expand_document(r"\def\x{1}\x \renewcommand\x{2}\x \providecommand\x{3}\x")
    assert result.text == r"\def\x{1}1 \renewcommand\x{2}2 \providecommand\x{3}2"


def test_missing_argument_is_an_error_and_left_alone():
    result = MacroTable.collect(r"\newcommand\f[1]{<#1>}").expand(r"a \f")
    assert result.text == r"a \f" and result.errors and "\\f" in result.errors[0]


def test_text_without_macros_is_unchanged():
    text = "Mixed % comment {x}\n\\alpha_{1}^{2} [a] #1 \\\\ \\{ \u00e9\u00a0 end\\"
    assert MacroTable.collect(r"\newcommand\R{R}").expand(text).text == text


# --------------------------------------------------------------------------- bounds


@pytest.mark.parametrize(
    ("defs", "names"),
    [
        (r"\def\a{\a}", {"\\a"}),
        (r"\def\a{\b}\def\b{\a}", {"\\a", "\\b"}),
        (r"\def\a{\a x}", {"\\a"}),
        (r"\newcommand\a[1]{\a{#1#1}}", {"\\a"}),
        ("".join(r"\def\%s{\%s\%s}" % (chr(97 + i), chr(98 + i), chr(98 + i)) for i in range(25)), None),
        (r"\def\a{\a\a}", {"\\a"}),
    ],
)
def test_runaway_definitions_stop_with_an_error(defs, names):
    result = MacroTable.collect(defs).expand(r"before \a{x} after")
    assert result.errors, result.text[:200]
    named = re.findall(r"\\[a-z]", result.errors[0])
    assert named and (names is None or set(named) <= names)
    assert result.text.startswith("before ")
    assert sum(result.expanded.values()) <= 20000


def test_runaway_partial_text_and_limits():
    result = MacroTable.collect(r"\def\a{\a x}").expand(r"\a.", max_depth=5)
    assert result.text == r"\a x x x x x." and "\\a" in result.errors[0]
    tight = MacroTable.collect(r"\def\a{a}").expand(r"\a\a\a\a", max_expansions=2)
    assert tight.text == r"aa\a\a" and "limit" in tight.errors[0]


# --------------------------------------------------------------------------- real papers


def manifest() -> dict[str, dict]:
    path = PAPERS / "manifest.json"
    if not path.is_file():
        pytest.skip("shared paper data not found")
    return {p["short_name"]: p for p in json.loads(path.read_text())}


def paper_text(name: str) -> str:
    entry = manifest()[name]
    src = PAPERS / name / "src"
    return "\n".join(
        (src / f).read_text(errors="replace") for f in entry["files"] if f.endswith((".tex", ".sty", ".cls"))
    )


def carleson_preamble() -> str:
    manifest()
    pre = PAPERS / "carleson-blueprint" / "src" / "preamble"
    return (pre / "common.tex").read_text() + "\n" + (pre / "print.tex").read_text()


def test_carleson_macros():
    text = carleson_preamble()
    assert r"\DeclareMathOperator*{\esssup}{\operatorname{ess\,sup}}" in text
    t = MacroTable.collect(text)
    assert t.get("esssup").body == r"\operatorname*{ess\,sup}"
    assert t.get("C").kind == "def"
    result = t.expand("$\\esssup_{x} |f| \\in \\C$\n\\leanok\n\\lean{thm_x}\n\\proves{y} text")
    assert result.text == "$\\operatorname*{ess\\,sup}_{x} |f| \\in \\mathbb{C}$\n text"
    assert result.errors == [] and result.expanded["\\leanok"] == 1
    assert not t.get("uses").supported and "expl3" in t.get("uses").reason


def test_carleson_main_theorem_body():
    body = manifest()["carleson-blueprint"]["main_theorem"]["body_first200_raw"]
    result = MacroTable.collect(carleson_preamble()).expand(body)
    assert result.errors == []
    assert result.expanded == {"\\leanok": 1, "\\lean": 1}
    assert "\\leanok" not in result.text and "\\lean{" not in result.text
    assert result.text.startswith("\\label{classical-carleson}\n    \\uses{exceptional-set-carleson}\n    Let $f$")
    assert not re.search(r"\n[ \t]*\n", result.text)  # no paragraph break made up


def test_extended_overrides_everywhere():
    text = r"\newcommand\a{A} x \NewDocumentCommand{\uses}{s m}{U}"
    t = MacroTable.collect(text).extended(r"\renewcommand{\uses}[1]{}\newcommand\b{B}")
    assert t.at(0).expand(r"\b\uses{x}").text == "B"
    assert t.at(len(text)).expand(r"\a\b \uses{x}").text == "AB "
    assert MacroTable.collect(text).expand(r"\uses{x}").text == r"\uses{x}"


def test_sag_projective_macros_follow_the_preamble():
    manifest()
    sty = (PAPERS / "sag-projective" / "src" / "util" / "zariski.sty").read_text()
    t = MacroTable.collect(sty)
    for name in ("bP", "Aut", "Pic"):
        m = re.search(r"\\newcommand\{\\%s\}\{(.*)\}\s*$" % name, sty, re.MULTILINE)
        assert t.get(name).body == m.group(1)
    assert re.search(r"\\DeclareMathOperator\{\\PGL\}\{PGL\}", sty)
    result = t.expand(r"$\Aut(\bP^n)$ is $\PGL_{n+1}$, $\Pic(\bP^n) = \Z$, \ignore{dropped}.")
    assert result.text == (
        r"$\mathrm{Aut}(\mathbb{P}^n)$ is $\operatorname{PGL}_{n+1}$, $\mathrm{Pic}(\mathbb{P}^n) = \mathbb{Z}$, ."
    )


def test_bb5_theorem_matches_manifest_expansion():
    entry = manifest()["bb5-busy-beaver"]
    text = (PAPERS / "bb5-busy-beaver" / "src" / "bbchallenge-paper.tex").read_text()
    table = MacroTable.collect(text).at(text.index(r"\label{th:BB5}"))
    result = table.expand(entry["main_theorem"]["body_first200_raw"])
    assert result.errors == []
    assert result.text.strip().endswith(entry["main_theorem"]["body_expanded"])


def test_tao_redefined_t_only_after_its_position():
    entry = manifest()["tao-factorial"]
    text = (PAPERS / "tao-factorial" / "src" / "erdos-391_improv.tex").read_text()
    t = MacroTable.collect(text)
    pos = text.index(r"\renewcommand\t{")
    assert t.at(pos).get("t") is None
    assert t.at(pos + 30).expand(r"$\t$").text == r"$\mathbf{t}$"
    result = t.at(text.index(r"\label{main}")).expand(entry["main_theorem"]["body_first200_raw"])
    assert result.errors == []


def test_stacks_preamble_defs():
    path = STACKS / "preamble.tex"
    if not path.is_file():
        pytest.skip("stacks data not found")
    t = MacroTable.collect(path.read_text())
    assert t.expand(r"$\Hom_R(M, N)$ $\frac\Spec\etale$").text == (
        r"$\mathop{\mathrm{Hom}}\nolimits_R(M, N)$ $\frac{\mathop{\mathrm{Spec}}}{\acute{e}tale}$"
    )


@pytest.mark.parametrize(
    "name",
    [
        "carleson-blueprint", "sag-projective", "tao-factorial",
        "equational-theories", "cholesky-selection", "bb5-busy-beaver",
    ],
)  # fmt: skip
def test_whole_real_papers(name):
    text = paper_text(name)
    spans, warnings = _scan(text)
    assert "".join(_tokenize(text, spans)) == text
    table = MacroTable.collect(text)
    assert len(table) > 5 and table.warnings == warnings
    final = table.expand(text)
    in_order = expand_document(text)
    assert final.errors == [] and in_order.errors == []
    assert sum(final.expanded.values()) > 10
    # definitions themselves are copied unchanged
    for d in table.definitions[:20]:
        assert text[d.pos : d.end] in final.text
