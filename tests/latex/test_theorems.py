"""Theorem-environment declarations, the Introduction, and the main-theorem rule."""

from __future__ import annotations

import pytest

from theorembench.latex.context import keywords, msc_codes
from theorembench.latex.refs import collect_labels, expand_refs, refs_in
from theorembench.latex.theorems import (
    classify,
    declarations_with_builtins,
    find_declarations,
    introduction,
    pick_main_theorem,
)


def test_every_declaration_form():
    text = r"""
    \theoremstyle{plain}
    \newtheorem{thm}{Theorem}[section]
    \newtheorem{lem}[thm]{Lemma}
    \newtheorem*{mainthm}{Main Theorem}
    \theoremstyle{remark}
    \newtheorem{rem}[thm]{Remark}
    \declaretheorem[name=Proposition, sibling=thm, style=plain]{prop}
    \declaretheorem{conjecture}
    \spnewtheorem{mythm}{Theorem}[section]{\bfseries}{\itshape}
    \spnewtheorem*{claimx}{Claim}{\bfseries}{\rmfamily}
    \newtheorem{axiomNum}{Axiom}
    \newcommand{\mk}[1]{\newtheorem{#1}{X}}
    """
    d = find_declarations(text)
    assert d["thm"].title == "Theorem" and d["thm"].within == "section" and d["thm"].kind == "theorem"
    assert d["thm"].style == "plain"
    assert d["lem"].shared_counter == "thm" and d["lem"].kind == "lemma"
    assert d["mainthm"].starred and d["mainthm"].kind == "theorem"
    assert d["rem"].style == "remark" and d["rem"].kind == "remark"
    assert d["prop"].form == "declaretheorem" and d["prop"].shared_counter == "thm" and d["prop"].kind == "proposition"
    assert d["conjecture"].title == "Conjecture" and d["conjecture"].kind == "remark"
    assert d["mythm"].form == "spnewtheorem" and d["mythm"].kind == "theorem"
    assert d["claimx"].starred and d["claimx"].kind == "remark"
    assert d["axiomNum"].kind == "axiom"
    assert "#1" not in d  # a declaration inside a macro body is not a declaration


@pytest.mark.parametrize(
    ("title", "name", "kind"),
    [("Theorem", "thm", "theorem"), ("Theorem A", "thmA", "theorem"), ("Main Theorem", "main", "theorem"),
     ("Lemma", "lem", "lemma"), ("Key Lemma", "keylem", "lemma"), ("Corollary", "cor", "corollary"),
     ("Proposition", "prop", "proposition"), ("Definition", "defn", "remark"), ("Conjecture", "conj", "remark"),
     ("Axiom", "axiom", "axiom"), ("Remark", "rem", "remark"), ("Example", "ex", "remark"),
     ("Criterion", "crit", "other"), ("", "theorem", "theorem")],
)  # fmt: skip
def test_classify(title, name, kind):
    assert classify(title, name) == kind


@pytest.mark.parametrize(
    ("heading", "is_intro"),
    [(r"\section{Introduction}", True), (r"\section*{Introduction}", True),
     (r"\section{Introduction and main results}", True), (r"\section{1. Introduction}", True),
     (r"\section[Intro]{Introduction}\label{s:intro}", True), (r"\chapter{Introduction}", True),
     (r"\section*{A brief introduction to synthetic algebraic geometry}", False),
     (r"\section{Preliminaries}", False)],
)  # fmt: skip
def test_introduction_heading(heading, is_intro):
    nxt = "chapter" if heading.startswith("\\chapter") else "section"
    text = f"\\begin{{document}}\n{heading}\nSome text.\n\\{nxt}{{Next}}\nMore.\n\\end{{document}}"
    sec = introduction(text)
    assert (sec is not None) == is_intro
    if sec:
        assert text[sec.body_start : sec.end].strip().endswith("Some text.")


DOC = r"""\documentclass{amsart}
\newtheorem{theorem}{Theorem}
\newtheorem{lemma}[theorem]{Lemma}
\newtheorem{proposition}[theorem]{Proposition}
\newtheorem{conjecture}[theorem]{Conjecture}
\newtheorem*{axiom}{Axiom}
\begin{document}
\section{Introduction}
%s
\section{Proofs}
\begin{theorem}\label{late}Late theorem.\end{theorem}
\end{document}
"""


@pytest.mark.parametrize(
    ("intro", "env", "label"),
    [
        (r"\begin{lemma}\label{l}A lemma.\end{lemma} \begin{theorem}[Main]\label{m}The theorem.\end{theorem}", "theorem", "m"),
        # issue 21, item 5: a proposition, lemma or corollary is never the main theorem (the LLM fallback decides)
        (r"\begin{conjecture}\label{c}C.\end{conjecture} \begin{proposition}\label{p}P.\end{proposition}", None, None),
        (r"\begin{axiom}\label{a}An axiom.\end{axiom}", None, None),
        (r"No environments at all.", None, None),
        (r"\begin{restatable}[Named]{theorem}{mainres}\label{r}Restated.\end{restatable}", "theorem", "r"),
        (r"\begin{theorem}\label{first}One.\end{theorem}\begin{theorem}\label{second}Two.\end{theorem}", "theorem", "first"),
    ],
)  # fmt: skip
def test_main_theorem_rule(intro, env, label):
    text = DOC % intro
    pick = pick_main_theorem(text, declarations_with_builtins(text))
    if env is None:
        assert pick.block is None and "no theorem-like environment" in pick.reason
    else:
        assert pick.block is not None
        assert (pick.block.env_name, pick.block.label) == (env, label)
        assert pick.block.content.endswith(text[pick.block.start_pos : pick.block.end_pos])


def test_no_introduction_falls_through():
    text = (DOC % "x").replace(r"\section{Introduction}", r"\section{Overview}")
    pick = pick_main_theorem(text, declarations_with_builtins(text))
    assert pick.block is None and pick.reason == "no Introduction heading"


def test_labels_and_reference_expansion():
    text = r"""
\section{Setup}\label{sec:setup}
Let $f$ be as follows.
\begin{equation}\label{eq:f} f(x) = x^2 + 1 \end{equation}
\begin{align} a &= b \label{eq:ab} \\ c &= d \tag{$\ast$}\label{eq:cd} \end{align}
\begin{lemma}\label{lem:key} Every $x$ is fine. \end{lemma}
\begin{theorem}\label{thm:main} By Lemma~\ref{lem:key}, $f$ satisfies \eqref{eq:f}; see \Cref{sec:setup} and \cref{eq:ab,eq:nowhere}. \end{theorem}
"""
    targets, problems = collect_labels(text)
    assert targets["eq:f"].kind == "equation" and targets["eq:f"].env == "equation"
    assert targets["eq:cd"].tag == r"$\ast$"
    assert targets["lem:key"].kind == "environment" and targets["lem:key"].content.startswith(r"\begin{lemma}")
    assert targets["sec:setup"].kind == "section" and targets["sec:setup"].content == "Setup"
    assert refs_in(text.split(r"\begin{theorem}")[1]) == ["lem:key", "eq:f", "sec:setup", "eq:ab", "eq:nowhere"]
    body = text.split(r"\begin{theorem}")[1].split(r"\end{theorem}")[0]
    expanded, unresolved = expand_refs(body, targets, skip={"thm:main"})
    assert r"\(f(x) = x^2 + 1\)" in expanded
    assert "[Every $x$ is fine.]" in expanded
    assert "the section \u201cSetup\u201d" in expanded
    assert r"\eqref" not in expanded and r"\Cref" not in expanded
    assert unresolved == ["eq:nowhere"]
    dup, problems = collect_labels(r"\begin{lemma}\label{x}A\end{lemma}\begin{lemma}\label{x}B\end{lemma}")
    assert "duplicate label 'x'" in problems[0] and "A" in dup["x"].content


def test_msc_and_keywords():
    assert msc_codes(r"\subjclass[2020]{Primary 11N05; Secondary 11B65, 05A10}") == ["11N05", "11B65", "05A10"]
    assert msc_codes(r"\begin{AMS} 65F15, 62K05 \end{AMS}") == ["65F15", "62K05"]
    assert keywords(r"\keywords{Cholesky factorization, experimental design; sparsity}") == [
        "Cholesky factorization", "experimental design", "sparsity"]
    assert keywords(r"\begin{keywords} a, b \end{keywords}") == ["a", "b"]


def test_figure_reference_becomes_its_caption():
    text = (r"\begin{figure}\centering\includegraphics{a.png}\caption{The growth of $f$.}\label{fig:a}\end{figure}"
            r"\begin{theorem}See \Cref{fig:a}.\end{theorem}")
    targets, _ = collect_labels(text)
    expanded, _ = expand_refs(r"See \Cref{fig:a}.", targets)
    assert expanded == "See (the figure: The growth of $f$.)."


def test_a_custom_theorem_like_environment_comes_after_theorems_and_before_nothing():
    # issue 21, item 5: custom theorem-like environments are the rule path's second choice, a lemma never is
    doc = DOC.replace(r"\begin{document}", "\\newtheorem{hauptsatz}{Hauptsatz}\n\\begin{document}")
    text = doc % r"\begin{lemma}\label{l}A lemma.\end{lemma} \begin{hauptsatz}\label{h}The main claim.\end{hauptsatz}"
    pick = pick_main_theorem(text, declarations_with_builtins(text))
    assert pick.block is not None and (pick.block.env_name, pick.block.label) == ("hauptsatz", "h")
    text = DOC % r"\begin{lemma}\label{l}A lemma.\end{lemma} \begin{corollary}\label{c}A corollary.\end{corollary}"
    pick = pick_main_theorem(text, declarations_with_builtins(text))
    assert pick.block is None and "a lemma, proposition or corollary is never taken" in pick.reason
