"""The sample papers shipped in ``theorembench.data/papers`` go through the real extraction path.

Each paper is located through the package (as the demo finds them), flattened, given to the
rule-based main-theorem pick, and turned into a theorem record. Nothing here needs TeX.
"""

from __future__ import annotations

import importlib.resources
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from theorembench.latex.extract import ExtractSettings, build_record, load_paper, rule_path
from theorembench.latex.theorems import declarations_with_builtins, pick_main_theorem


@dataclass(frozen=True)
class Sample:
    name: str
    main_file: str
    files: tuple[str, ...]  # in inclusion order
    label: str  # of the main theorem
    theorem_file: str
    earlier: tuple[str, str]  # (kind, label) of the lemma/proposition stated before it in the Introduction
    expansions: tuple[str, ...]  # what the paper's macros become in the expanded theorem
    leftover: tuple[str, ...]  # macro names that must be gone from the expanded theorem
    macros: tuple[str, ...]  # macros counted in macros_expanded
    eqref: str  # the Introduction equation, inlined where \eqref stood
    definition: str  # a piece of the Preliminaries/Setup definition, expanded, in the context
    full_context: str  # a piece of prose from the Preliminaries/Setup section, expanded
    title: str
    msc: tuple[str, ...]
    keywords: tuple[str, ...]


SAMPLES = [
    Sample(
        name="derangements",
        main_file="main.tex",
        files=("main.tex", "macros.tex", "sections/intro.tex", "sections/preliminaries.tex", "sections/proof.tex"),
        label="thm:nearest-integer",
        theorem_file="sections/intro.tex",
        earlier=("lemma", "lem:fixing"),
        expansions=(
            r"$n \in \mathbb{N}$",  # \def\N
            r"derangements in" "\n" r"$\mathfrak{S}_{n}$",  # \Sym with its optional argument's default
            r"\left\lvert D_{n} - \frac{n!}{e} \right\rvert < \frac{1}{n+1}",  # \abs{..}, \der{n}
            r"$\operatorname{Fix}(\sigma) = \emptyset$",  # \DeclareMathOperator
        ),
        leftover=(r"\der", r"\Sym", r"\abs", r"\Fix", r"\N"),
        macros=(r"\N", r"\der", r"\Sym", r"\abs", r"\Fix"),
        eqref=r"is given by \(D_{n} = n! \sum_{k=0}^{n} \frac{(-1)^k}{k!}\) and satisfies",
        definition=r"$\operatorname{Fix}(\sigma) = \{ i \in [n] : \sigma(i) = i \}$",
        full_context=r"$\mathfrak{S}_{m}$ for the group of bijections of $[m]$",  # \Sym[m]: the default overridden
        title="Derangements and the nearest integer to $n!/e$",
        msc=("05A05", "05A15", "05A16"),
        keywords=("derangements", "inclusion--exclusion", "fixed points", "alternating series"),
    ),
    Sample(
        name="monotone-subsequences",
        main_file="monotone.tex",
        files=("monotone.tex",),
        label="thm:erdos-szekeres",
        theorem_file="monotone.tex",
        earlier=("proposition", "prop:pigeonhole"),
        expansions=(
            r"$a = (a_1, \dots, a_{N})$",  # \seq{a}: the optional length defaults to N
            r"$b = (b_1, \dots, b_{rs})$",  # \seq[rs]{b}
            r"$\mathbb{R}$",  # \def\R
            r"$\operatorname{inc}(b) = r$ and $\operatorname{dec}(b) = s$",  # \DeclareMathOperator
        ),
        leftover=(r"\seq", r"\R", r"\inc", r"\dec"),
        macros=(r"\seq", r"\R", r"\inc", r"\dec"),
        eqref=r"satisfies \(\operatorname{inc}(a) \cdot \operatorname{dec}(a) \ge N\).",
        definition=r"it is \emph{increasing} if",
        full_context=r"The pair $(x_i, y_i)$ is the" "\n" r"\emph{label} of $i$",
        title="Monotone subsequences and the pigeonhole principle",
        msc=("05A05", "05D10"),
        keywords=(r"Erd\H{o}s--Szekeres theorem", "monotone subsequences", "pigeonhole principle"),
    ),
    Sample(
        name="primorial-bound",
        main_file="primorial.tex",
        files=("primorial.tex", "parts/intro.tex", "parts/setup.tex", "parts/proof.tex"),
        label="thm:primorial",
        theorem_file="parts/intro.tex",
        earlier=("proposition", "prop:middle"),
        expansions=(
            r"$\vartheta(n) \le (n - 1) \log 4$",  # \cheb[n]
            r"$\vartheta(x) < x \log 4$",  # \cheb: the optional argument's default
            r"$p \in \mathcal{P}$",  # \def\Primes
        ),
        leftover=(r"\cheb", r"\Primes"),
        macros=(r"\cheb", r"\Primes"),
        eqref=r"the function \(\vartheta(x) = \sum_{p \in \mathcal{P},\ p \le x} \log p\) satisfies",
        definition=r"the \emph{order} $\operatorname{ord}_p(k)$ is the",  # \DeclareMathOperator in the definition
        full_context=r"$\vartheta(x) = \vartheta(\lfloor x \rfloor)$",
        title="An elementary linear bound for Chebyshev's function",
        msc=("11N05", "11A41"),
        keywords=("Chebyshev function", "primorial", "central binomial coefficient", "Bertrand's postulate"),
    ),
]
IDS = [s.name for s in SAMPLES]


@pytest.fixture(scope="module")
def papers_dir() -> Iterator[Path]:
    """The shipped papers folder, found through the package like the demo finds it."""
    with importlib.resources.as_file(importlib.resources.files("theorembench.data") / "papers") as path:
        yield Path(path)


@pytest.fixture
def no_tex(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No TeX on PATH and no subprocess at all: extraction must be pure Python."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))

    def refuse(*args, **kwargs):
        raise AssertionError(f"extraction tried to run an external program: {args!r}")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    monkeypatch.setattr(os, "system", refuse)
    monkeypatch.setattr(os, "posix_spawn", refuse, raising=False)
    monkeypatch.setattr(os, "execv", refuse)


def record_for(root: Path) -> tuple[dict, object]:
    paper = load_paper(root)
    block, intro, reason = rule_path(paper)
    assert block is not None, reason
    return build_record(paper, block, path="rule", reason=reason, settings=ExtractSettings(), intro=intro), paper


def test_the_shipped_papers(papers_dir: Path):
    assert papers_dir.is_dir()
    assert sorted(p.name for p in papers_dir.iterdir() if p.is_dir()) == sorted(IDS)
    assert "original" in (papers_dir / "README.md").read_text(encoding="utf-8")
    for sample in SAMPLES:
        for rel in sample.files:
            data = (papers_dir / sample.name / rel).read_bytes()
            assert data.isascii(), f"{sample.name}/{rel} should be plain ASCII LaTeX"
            assert data.count(b"\n") < 150
        total = sum((papers_dir / sample.name / rel).read_text().count("\n") for rel in sample.files)
        assert 60 <= total <= 150, (sample.name, total)


@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_main_file_and_flattening(papers_dir: Path, sample: Sample, no_tex):
    paper = load_paper(papers_dir / sample.name)
    assert paper.flat.main_file == sample.main_file
    assert paper.flat.files == list(sample.files)
    assert paper.problems == []
    text = paper.text
    assert "\\input" not in text  # every inclusion was followed
    assert text.count("\\begin{document}") == 1 and "\\end{document}" not in text.split("\\begin{document}")[0]
    assert "%" not in text.replace("\\%", "")  # comments are gone


@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_declarations_and_rule_pick(papers_dir: Path, sample: Sample, no_tex):
    paper = load_paper(papers_dir / sample.name)
    decls = declarations_with_builtins(paper.text, paper.style_texts)
    assert decls["theorem"].kind == "theorem"
    assert any(d.starred for d in decls.values())  # a starred, unnumbered environment
    assert decls[sample.earlier[0]].shared_counter == "theorem"  # shares the theorem counter
    assert decls["definition"].kind == "remark" and decls["definition"].style == "definition"
    if sample.name != "primorial-bound":
        assert decls["theorem"].style == "plain"
    assert decls["theorem"].within == "section"  # numbered within sections

    block, intro, reason = rule_path(paper)
    assert block is not None, reason
    assert intro is not None and intro.title == "Introduction"
    assert block.env_name == "theorem" and block.kind == "theorem"
    assert block.label == sample.label
    assert reason == "first theorem block of the Introduction"

    # the lemma/proposition stated earlier in the Introduction is a candidate, but not the pick
    pick = pick_main_theorem(paper.text, decls)
    first = pick.candidates[0]
    assert (first.kind, first.label) == sample.earlier
    assert first.block_start < block.block_start
    assert [c.label for c in pick.candidates if c.kind in ("theorem", "lemma", "proposition")] == [
        sample.earlier[1],
        sample.label,
    ]


@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_record(papers_dir: Path, sample: Sample, no_tex):
    rec, paper = record_for(papers_dir / sample.name)
    assert rec["problems"] == []
    assert rec["extraction_path"] == "rule"
    assert rec["theorem"]["env_name"] == "theorem" and rec["theorem"]["label"] == sample.label
    assert rec["theorem_kind"] == "theorem"
    assert rec["source"]["file"] == sample.theorem_file and rec["source"]["main_file"] == sample.main_file
    assert rec["source"]["files"] == list(sample.files)
    line = rec["source"]["line"]
    source_line = (papers_dir / sample.name / sample.theorem_file).read_text().splitlines()[line - 1]
    assert source_line.startswith("\\begin{theorem}")

    expanded = rec["expanded_theorem"]
    for piece in sample.expansions:
        assert piece in expanded, (piece, expanded)
    for name in sample.leftover:
        assert name not in expanded, (name, expanded)
    assert set(sample.macros) <= set(rec["macros_expanded"])
    assert "\\eqref" not in expanded and sample.eqref in expanded
    assert "\\ref" not in expanded

    # the Introduction text before the theorem, and the definition it points to in the Preliminaries/Setup
    assert rec["context"] and len(rec["context"]) <= ExtractSettings().context_chars
    assert sample.definition in rec["context"]
    assert sample.full_context in rec["full_context"]
    assert sample.earlier[1] in rec["ref_dict"]  # the \ref to the earlier lemma/proposition
    assert any(label.startswith("def:") for label in rec["ref_dict"])
    assert rec["theorem"]["content"] in paper.text

    assert rec["msc"] == list(sample.msc)
    assert rec["keywords"] == list(sample.keywords)
    assert rec["title"] == sample.title
    assert len(rec["abstract"]) > 100 and rec["abstract"] in " ".join(paper.text.split())


def test_pdflatex_is_not_needed(papers_dir: Path, no_tex):
    """The whole extraction of every sample runs with an empty PATH and subprocesses forbidden."""
    import shutil

    assert shutil.which("pdflatex") is None and shutil.which("latexmk") is None
    for sample in SAMPLES:
        rec, _ = record_for(papers_dir / sample.name)
        assert rec["theorem"]["label"] == sample.label and rec["problems"] == []
