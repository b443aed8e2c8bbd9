"""Seed items for Proof2Hybrid: the Stacks Project chapters and stored papers."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from helpers.paths import SHARED

from theorembench.latex.extract import load_paper
from theorembench.methods.hybrid.seeds import (
    Seed,
    count_labelled_environments,
    paper_seeds,
    read_tags,
    stacks_seeds,
)

STACKS = SHARED / "data" / "stacks"
CHAPTERS = ["sets", "brauer", "schemes", "topology"]
TAO = SHARED / "data" / "papers" / "tao-factorial" / "src"
STATEMENTS = ("lemma", "proposition", "theorem")
COMMENT_ENVS = ("reference", "slogan", "history")

needs_stacks = pytest.mark.skipif(not (STACKS / "tags" / "tags").is_file(), reason=f"no Stacks data at {STACKS}")


@pytest.fixture(scope="module")
def stacks() -> tuple[list[Seed], list[str]]:
    if not (STACKS / "tags" / "tags").is_file():
        pytest.skip(f"no Stacks data at {STACKS}")
    return stacks_seeds(STACKS, CHAPTERS)


@pytest.fixture(scope="module")
def tags_file() -> dict[str, str]:
    """The tags file parsed here, independently of the module: full_label -> tag."""
    out: dict[str, str] = {}
    for line in (STACKS / "tags" / "tags").read_text().splitlines():
        if line.startswith("#") or "," not in line:
            continue
        tag, label = line.split(",", 1)
        out[label] = tag
    return out


def by_id(seeds: list[Seed]) -> dict[str, Seed]:
    return {s.id: s for s in seeds}


def line_count(text: str) -> Counter:
    """An independent line-by-line count: environments, and statements whose next non-blank line opens a proof."""
    lines = [re.sub(r"(?<!\\)%.*", "", line).strip() for line in text.splitlines()]
    counts: Counter = Counter()
    open_env = None
    for i, line in enumerate(lines):
        m = re.match(r"\\begin\{(definition|lemma|proposition|theorem)\}", line)
        if m and open_env is None:
            open_env = m.group(1)
            counts[open_env] += 1
        if open_env and line.startswith(f"\\end{{{open_env}}}"):
            following = next((x for x in lines[i + 1 :] if x), "")
            if open_env != "definition" and following.startswith("\\begin{proof}"):
                counts[f"{open_env}+proof"] += 1
            open_env = None
    return counts


# --------------------------------------------------------------------------- Stacks: counts


@needs_stacks
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_seed_counts_match_an_independent_count(stacks, chapter: str) -> None:
    seeds, _ = stacks
    text = (STACKS / f"{chapter}.tex").read_text()
    independent = line_count(text)
    got = Counter(s.type for s in seeds if s.chapter == chapter)
    assert got["definition"] == independent["definition"]
    for env in STATEMENTS:
        assert got[env] == independent[f"{env}+proof"], env
    assert sum(got.values()) == independent["definition"] + sum(independent[f"{e}+proof"] for e in STATEMENTS)
    # the module's own regex cross-check agrees with both
    counts = count_labelled_environments(text)
    assert counts["seeds"] == sum(got.values())
    for env in ("definition", *STATEMENTS):
        assert counts[env] == independent[env], env
    assert counts["with_proof"] == sum(independent[f"{e}+proof"] for e in STATEMENTS)


@needs_stacks
def test_readme_numbers_agree_with_the_seeds(stacks) -> None:
    seeds, _ = stacks
    readme = (STACKS / "README.md").read_text()
    checked = 0
    for chapter in CHAPTERS:
        row = next(line for line in readme.splitlines() if line.startswith(f"| `{chapter}.tex`"))
        claims = re.findall(r"(\d+) (lemma|definition|theorem|proposition)s?\b", row)
        assert claims, row
        got = Counter(s.type for s in seeds if s.chapter == chapter)
        for number, env in claims:
            assert got[env] == int(number), (chapter, env)
            checked += 1
    assert checked >= 10
    brauer = Counter(s.type for s in seeds if s.chapter == "brauer")
    assert (brauer["lemma"], brauer["definition"], brauer["theorem"]) == (22, 7, 4)
    sets = Counter(s.type for s in seeds if s.chapter == "sets")
    assert (sets["lemma"], sets["proposition"], sets["theorem"], sets["definition"]) == (16, 1, 1, 0)


@needs_stacks
def test_every_seed_has_its_tag_from_the_tags_file(stacks, tags_file) -> None:
    seeds, problems = stacks
    assert problems == []
    assert len({s.id for s in seeds}) == len(seeds)
    for s in seeds:
        assert s.source == "stacks"
        assert s.label.startswith(f"{s.chapter}-")
        assert s.tag == tags_file[s.label], s.label
        assert s.id == f"stacks:{s.tag}"
        assert re.fullmatch(r"[0-9A-Z]{4}", s.tag)
        assert re.fullmatch(rf"{s.chapter}\.tex:\d+", s.origin)
    # an origin points at the \begin line of its environment
    s = next(s for s in seeds if s.label == "brauer-definition-finite")
    line = int(s.origin.split(":")[1])
    source = (STACKS / "brauer.tex").read_text().splitlines()
    assert source[line - 1].startswith("\\begin{definition}")
    assert source[line] == "\\label{definition-finite}"


# --------------------------------------------------------------------------- Stacks: cleaning


@needs_stacks
def test_no_refs_labels_or_comment_environments_survive(stacks) -> None:
    seeds, _ = stacks
    for s in seeds:
        for bad in ("\\ref{", "\\label{", "\\hyperref", "\\cite", *(f"\\begin{{{e}}}" for e in COMMENT_ENVS)):
            assert bad not in s.text, (s.id, bad)
    # and neither does the text held in those comment environments
    flat = " ".join(" ".join(s.text.split()) for s in seeds)
    hidden = []
    for chapter in CHAPTERS:
        source = (STACKS / f"{chapter}.tex").read_text()
        for env in COMMENT_ENVS:
            for body in re.findall(rf"\\begin\{{{env}\}}(.*?)\\end\{{{env}\}}", source, re.S):
                hidden.append(" ".join(body.split()))
    assert len(hidden) == 22  # 15 slogans, 6 references, 1 history in these chapters
    for body in hidden:
        assert body not in flat, body
    assert "Simple finite algebras over a field are matrix algebras" not in flat


@needs_stacks
def test_preamble_macros_are_expanded(stacks) -> None:
    seeds, _ = stacks
    for s in seeds:
        assert not re.search(r"\\(Spec|Sch|colim|Hom|Mor|Ob|SheafHom|QCoh)(?![A-Za-z])", s.text), s.id
    texts = "\n".join(s.text for s in seeds)
    assert "\\mathop{\\mathrm{Spec}}" in texts
    assert "\\mathit{Sch}" in texts
    assert "\\mathop{\\mathrm{colim}}\\nolimits" in texts
    # a seed whose source says "$\Spec(R)$"
    affine = next(s for s in seeds if s.label == "schemes-definition-affine-scheme")
    expected = "isomorphic\nas a locally ringed space to $\\mathop{\\mathrm{Spec}}(R)$ for some ring $R$."
    assert expected in affine.statement


@needs_stacks
def test_references_become_tags(stacks, tags_file) -> None:
    seeds = by_id(stacks[0])
    # same chapter: "Combine Lemmas \ref{lemma-centralizer} and \ref{lemma-tensor-simple}."
    a, b = tags_file["brauer-lemma-centralizer"], tags_file["brauer-lemma-tensor-simple"]
    seed = seeds[f"stacks:{tags_file['brauer-lemma-tensor-central-simple']}"]
    assert seed.proof == f"Combine Lemmas {a} and {b}."
    # another chapter, with the prefix of \externaldocument: Topology, Lemma \ref{topology-lemma-...}
    target = tags_file["topology-lemma-composition-quasi-compact"]
    seed = seeds[f"stacks:{tags_file['schemes-lemma-composition-quasi-compact']}"]
    assert f"Topology, Lemma {target}" in seed.text
    assert seeds[f"stacks:{target}"].label == "topology-lemma-composition-quasi-compact"
    # no "Lemma Lemma": the source already names the type
    assert not re.search(r"\b(Lemma|Definition|Section|Theorem)s? \1\b", "\n".join(s.text for s in seeds.values()))


@needs_stacks
def test_definitions_have_no_proof_and_statements_have_theirs(stacks, tags_file) -> None:
    seeds = by_id(stacks[0])
    definition = seeds[f"stacks:{tags_file['brauer-definition-finite']}"]
    assert definition.kind == "definition" and definition.type == "definition"
    assert definition.proof is None
    assert definition.text == definition.statement
    assert definition.statement.startswith("Let $A$ be a $k$-algebra. We say $A$ is {\\it finite}")
    lemma = seeds[f"stacks:{tags_file['brauer-lemma-centralizer']}"]
    assert lemma.kind == "statement_proof" and lemma.type == "lemma"
    assert lemma.statement.startswith("Let $A$, $A'$ be $k$-algebras.")
    assert lemma.proof.startswith("Denote $C'' \\subset A \\otimes_k A'$ the centralizer")
    assert lemma.proof.endswith("= C \\otimes_k C'$.")
    assert lemma.text == lemma.statement + "\n\nProof. " + lemma.proof
    noted = next(s for s in seeds.values() if s.label == "topology-lemma-tube-lemma" or s.note == "Tube lemma")
    assert noted.note == "Tube lemma"
    assert not noted.statement.startswith("[")


@needs_stacks
def test_chapter_selection_and_round_trip(stacks) -> None:
    only, problems = stacks_seeds(STACKS, ["brauer.tex"])
    assert problems == []
    assert {s.chapter for s in only} == {"brauer"}
    assert [s.to_dict() for s in only] == [s.to_dict() for s in stacks[0] if s.chapter == "brauer"]
    for s in only:
        assert Seed.from_dict(json.loads(json.dumps(s.to_dict()))) == s
    with pytest.raises(FileNotFoundError):
        stacks_seeds(STACKS, ["no-such-chapter"])


# --------------------------------------------------------------------------- a small Stacks-like folder

PREAMBLE = r"""\documentclass{amsart}
\usepackage{verbatim}
\newenvironment{reference}{\comment}{\endcomment}
\newenvironment{slogan}{\comment}{\endcomment}
\newenvironment{history}{\comment}{\endcomment}
\externaldocument[other-chap-]{other-chap}
\theoremstyle{plain}
\newtheorem{theorem}[subsection]{Theorem}
\newtheorem{proposition}[subsection]{Proposition}
\newtheorem{lemma}[subsection]{Lemma}
\theoremstyle{definition}
\newtheorem{definition}[subsection]{Definition}
\newtheorem{remark}[subsection]{Remark}
\def\Spec{\mathop{\mathrm{Spec}}}
"""

TOY = r"""\input{preamble}
\begin{document}
\title{Toy}
\section{Intro}
\label{section-intro}

\begin{definition}
\label{definition-thing}
A {\it thing} is $\Spec(R)$ for a ring $R$. % hidden \ref{lemma-missing}
\end{definition}

\begin{lemma}[Named one]
\label{lemma-one}
\begin{slogan}
SLOGAN-TEXT is never shown.
\end{slogan}
\begin{reference}
\cite[Page 3]{EGA}
\end{reference}
Every thing is affine, see Definition \ref{definition-thing} and
(\ref{equation-star}).
\end{lemma}

\begin{proof}
By \ref{lemma-two} and Other-chap, Lemma \ref{other-chap-lemma-x}, see \cite{Hartshorne}
and Section \ref{section-intro}; also \ref{lemma-missing}.
\begin{equation}
\label{equation-star}
x = y
\end{equation}
\end{proof}

\begin{lemma}
\label{lemma-two}
No proof follows.
\end{lemma}

\begin{remark}
\label{remark-r}
Not a seed.
\end{remark}

\begin{proposition}
\label{proposition-p}
P holds.
\end{proposition}

\begin{proof}
Trivial, see Lemmas \ref{lemma-one} and \ref{lemma-two}, or \cite[Thm 1]{A,B};
for example \ref{lemma-one} with \ref{equation-star}.
\end{proof}
\end{document}
"""

TAGS = """# List of current tags
# tag,full_label
0AAA,toy-section-intro
0AAB,toy-definition-thing
0AAC,toy-lemma-one
0AAD,toy-lemma-two
0AAE,toy-equation-star
0AAF,other-chap-lemma-x
0AAG,toy-proposition-p
#0AAH,toy-lemma-retired
"""


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    root = tmp_path / "stacks"
    (root / "tags").mkdir(parents=True)
    (root / "preamble.tex").write_text(PREAMBLE)
    (root / "toy.tex").write_text(TOY)
    (root / "notes.tex").write_text("not a chapter: no document environment\n")
    (root / "tags" / "tags").write_text(TAGS)
    return root


def test_toy_chapter_seeds_and_cleaning(toy: Path) -> None:
    seeds, problems = stacks_seeds(toy)
    assert [s.id for s in seeds] == ["stacks:0AAB", "stacks:0AAC", "stacks:0AAG"]
    assert {s.chapter for s in seeds} == {"toy"}
    d, lemma, prop = seeds
    assert d.statement == "A {\\it thing} is $\\mathop{\\mathrm{Spec}}(R)$ for a ring $R$."
    assert d.proof is None and d.origin == "toy.tex:7"
    assert lemma.note == "Named one"
    assert lemma.statement == "Every thing is affine, see Definition 0AAB and\n(0AAE)."
    assert lemma.proof == (
        "By Lemma 0AAD and Other-chap, Lemma 0AAF, see [Hartshorne]\n"
        "and Section 0AAA; also Lemma [toy-lemma-missing].\n\\begin{equation}\nx = y\n\\end{equation}"
    )
    assert prop.proof == "Trivial, see Lemmas 0AAC and 0AAD, or [A; B, Thm 1];\nfor example Lemma 0AAC with (0AAE)."
    assert "SLOGAN" not in lemma.text and "EGA" not in lemma.text and "hidden" not in d.text
    # problems: the statement without a proof, the unknown label (once per use)
    assert any("lemma-two" in p and "proof" in p for p in problems)
    assert any("lemma-missing" in p for p in problems)
    assert len(problems) == 2
    assert count_labelled_environments(TOY) == {
        "definition": 1, "lemma": 2, "proposition": 1, "theorem": 0, "labelled": 4, "statements": 3,
        "with_proof": 2, "without_proof": 1, "seeds": 3,
    }  # fmt: skip


def test_toy_without_tags_file(toy: Path) -> None:
    (toy / "tags" / "tags").unlink()
    seeds, problems = stacks_seeds(toy, ["toy"])
    assert [s.id for s in seeds] == ["stacks:toy-definition-thing", "stacks:toy-lemma-one", "stacks:toy-proposition-p"]
    assert all(s.tag is None for s in seeds)
    assert any("tags" in p for p in problems)
    assert "Lemma [toy-lemma-two]" in seeds[1].proof


def test_read_tags_skips_comments(toy: Path) -> None:
    tags = read_tags(toy / "tags" / "tags")
    assert tags["toy-lemma-one"] == "0AAC"
    assert "toy-lemma-retired" not in tags and len(tags) == 7


# --------------------------------------------------------------------------- papers

PAPER = r"""\documentclass{amsart}
\newcommand{\R}{\mathbb{R}}
\newtheorem{thm}{Theorem}
\newtheorem{lem}[thm]{Lemma}
\newtheorem{cor}[thm]{Corollary}
\theoremstyle{definition}
\newtheorem{defn}[thm]{Definition}
\newtheorem{rem}[thm]{Remark}
\begin{document}
\section{Setup}\label{sec:setup}
\begin{defn}\label{def:nice}
A function $f\colon \R \to \R$ is \emph{nice} if $f(0)=0$.
\end{defn}
\begin{lem}[Key]\label{lem:key}
Every linear map $\R\to\R$ is nice (Definition~\ref{def:nice}).
\end{lem}
\begin{proof}
Write $f(x) = ax$; then \eqref{eq:zero} holds:
\begin{equation}\label{eq:zero} f(0) = a \cdot 0 = 0. \end{equation}
See \cite[Ch.~1]{Rudin} and Section~\ref{sec:setup}. % secret comment
\end{proof}
\begin{thm}\label{thm:main}
Main statement.
\end{thm}
Some text in between.
\begin{proof}
Proof far away.
\end{proof}
\begin{cor}
By Lemma \ref{lem:key} and \ref{lem:nowhere}, zero is nice.
\end{cor}
\begin{proof}[Proof of the corollary]
Apply \cref{lem:key}.
\end{proof}
\begin{rem}\label{rem:x}A remark.\end{rem}
\end{document}
"""


def test_paper_seeds_from_a_small_folder(tmp_path: Path) -> None:
    src = tmp_path / "paper"
    src.mkdir()
    (src / "main.tex").write_text(PAPER)
    seeds, problems = paper_seeds(load_paper(src), "p1")
    assert [(s.id, s.type, s.kind) for s in seeds] == [
        ("p1:def:nice", "definition", "definition"),
        ("p1:lem:key", "lemma", "statement_proof"),
        ("p1:3", "corollary", "statement_proof"),
    ]
    d, lem, cor = seeds
    assert all(s.source == "paper" and s.tag is None and s.chapter == "p1" for s in seeds)
    assert d.statement == "A function $f\\colon \\mathbb{R} \\to \\mathbb{R}$ is \\emph{nice} if $f(0)=0$."
    assert d.proof is None and d.text == d.statement and d.origin == "main.tex:11"
    assert lem.note == "Key" and lem.label == "lem:key"
    assert lem.statement == "Every linear map $\\mathbb{R}\\to\\mathbb{R}$ is nice (Definition~(def:nice))."
    assert "then (eq:zero) holds" in lem.proof
    assert "See [Rudin, Ch.~1] and Section~(sec:setup)." in lem.proof
    assert "secret" not in lem.proof and "\\label" not in lem.proof
    assert lem.text == lem.statement + "\n\nProof. " + lem.proof
    assert cor.statement == "By Lemma (lem:key) and (lem:nowhere), zero is nice."
    assert cor.proof == "Apply Lemma (lem:key)."
    assert any("thm:main" in p for p in problems)
    assert any("lem:nowhere" in p for p in problems)
    for s in seeds:
        assert Seed.from_dict(s.to_dict()) == s


@pytest.mark.skipif(not TAO.is_dir(), reason=f"no paper at {TAO}")
def test_paper_seeds_from_a_stored_paper() -> None:
    paper = load_paper(TAO)
    seeds, problems = paper_seeds(paper, "tao-factorial")
    text = paper.text
    # independent count: proposition/lemma/theorem/corollary blocks directly followed by a proof, and definitions
    pairs = re.findall(
        r"\\begin\{(lemma|proposition|theorem|corollary)\}.*?\\end\{\1\}\s*\\begin\{proof\}", text, re.S
    )
    defs = re.findall(r"\\begin\{definition\}", text)
    assert len(seeds) == len(pairs) + len(defs) >= 2
    assert Counter(s.type for s in seeds if s.kind == "statement_proof") == Counter(pairs)
    for s in seeds:
        assert s.id.startswith("tao-factorial:")
        assert re.fullmatch(r"erdos-391_improv\.tex:\d+", s.origin)
        for bad in ("\\ref{", "\\eqref{", "\\label{", "\\cite"):
            assert bad not in s.text, (s.id, bad)
        if s.kind == "statement_proof":
            assert s.proof and s.text == s.statement + "\n\nProof. " + s.proof
    tne = by_id(seeds)["tao-factorial:tne"]
    assert "Lemma (upper-crit)" in tne.proof
    skipped = [p for p in problems if "no proof right after" in p]
    assert len(skipped) == len(re.findall(r"\\begin\{(?:lemma|proposition|theorem|corollary)\}", text)) - len(pairs)
