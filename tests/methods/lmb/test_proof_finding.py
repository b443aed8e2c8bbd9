"""The sketch stage reads the theorem's own proof (issue 9, item 18), or none, and says which.

Hand-written LaTeX covers each way a paper gives the proof of a theorem stated in its
Introduction; the real papers under ../shared/data/papers and the sample papers were
read by eye, and the expected proof of each is written below by hand.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest
from helpers.paths import SHARED

from theorembench.latex.extract import load_paper, rule_path
from theorembench.latex.proofs import find_theorem_proof, theorem_names
from theorembench.methods.lmb import prompts as P
from theorembench.methods.lmb.stages import find_proof

HEAD = r"""\documentclass{amsart}
\newtheorem{theorem}{Theorem}[section]
\newtheorem{lemma}[theorem]{Lemma}
\begin{document}
\section{Introduction}
"""
MAIN = r"""\begin{theorem}\label{thm:main}
Every widget is blue.
\end{theorem}
"""
LEMMA = r"""\section{Tools}
\begin{lemma}\label{lem:aux}
Every gadget is round.
\end{lemma}
\begin{proof}
LEMMA-PROOF gadgets roll.
\end{proof}
"""
TAIL = "\n\\end{document}\n"


def _find(tex: str, **kw):
    start = tex.index("\\label{thm:main}")
    end = tex.index("\\end{theorem}", start)
    kw.setdefault("label", "thm:main")
    return find_theorem_proof(tex, start=start, end=end, env="theorem", **kw)


def test_named_proof_after_another_lemma_proof():
    tex = HEAD + "Intro text.\n" + MAIN + LEMMA + (
        "\\section{Proof}\n\\begin{proof}[Proof of Theorem~\\ref{thm:main}]\nOWN-PROOF widgets reflect blue.\n"
        "\\end{proof}") + TAIL  # fmt: skip
    found = _find(tex)
    assert found is not None and found.how == "named proof"
    assert found.text == "OWN-PROOF widgets reflect blue."
    assert "Proof of Theorem~\\ref{thm:main}" in found.describe()


def test_named_by_printed_number_not_by_a_longer_one():
    tex = HEAD + r"""\begin{theorem}\label{thm:first}
Every sprocket is green.
\end{theorem}
""" + MAIN + LEMMA + r"""\begin{proof}[Proof of Theorem 1.1]
WRONG-PROOF about sprockets.
\end{proof}
\begin{proof}[Proof of Theorem 1.2]
OWN-PROOF by colour theory.
\end{proof}""" + TAIL  # fmt: skip
    assert theorem_names(tex, start=tex.index("\\label{thm:main}"), label="thm:main", note=None,
                         env="theorem").numbers >= {"1.2"}  # fmt: skip
    found = _find(tex, label=None)
    assert found is not None and found.how == "named proof" and found.text == "OWN-PROOF by colour theory."


def test_letter_numbered_theorem():
    tex = HEAD.replace("[section]", "") + "\\renewcommand{\\thetheorem}{\\Alph{theorem}}\n" + MAIN + LEMMA + (
        "\\begin{proof}[Proof of Theorem A]\nOWN-PROOF lettered.\n\\end{proof}") + TAIL  # fmt: skip
    found = _find(tex, label=None)
    assert found is not None and found.text == "OWN-PROOF lettered."


def test_restatement_with_the_same_reference_then_proof():
    tex = HEAD + MAIN + LEMMA + r"""\section{Main proof}
\begin{theorem*}[Theorem~\ref{thm:main}]
Every widget is blue.
\end{theorem*}
\begin{proof}
OWN-PROOF after restating.
\end{proof}""" + TAIL  # fmt: skip
    tex = tex.replace("\\newtheorem{lemma}", "\\newtheorem*{theorem*}{Theorem}\n\\newtheorem{lemma}")
    found = _find(tex)
    assert found is not None and found.how == "restatement" and found.text == "OWN-PROOF after restating."


def test_restated_by_number_in_the_note():
    tex = HEAD + MAIN + LEMMA + r"""\begin{theorem}[Theorem 1.1, restated]
Every widget is blue.
\end{theorem}
\begin{proof}
OWN-PROOF restated by number.
\end{proof}""" + TAIL  # fmt: skip
    found = _find(tex)
    assert found is not None and found.how == "restatement" and found.text == "OWN-PROOF restated by number."


def test_restatable_macro_then_proof():
    tex = HEAD + r"""\begin{restatable}{theorem}{widgetthm}\label{thm:main}
Every widget is blue.
\end{restatable}
""" + LEMMA + "\\section{Proof}\n\\widgetthm*\n\\begin{proof}\nOWN-PROOF via restatable.\n\\end{proof}" + TAIL
    start = tex.index("\\label{thm:main}")
    found = find_theorem_proof(tex, start=start, end=tex.index("\\end{restatable}"), label="thm:main", env="theorem")
    assert found is not None and found.how == "restatement" and found.text == "OWN-PROOF via restatable."


def test_proof_section_and_its_continuation():
    tex = HEAD + MAIN + LEMMA + r"""\section{Proof of the upper bound}
We now prove the upper half of Theorem~\ref{thm:main}. UPPER-HALF.
\section{Proof of the lower bound}
LOWER-HALF finishes it.
\section{Proof of Lemma 7}
UNRELATED.""" + TAIL  # fmt: skip
    found = _find(tex)
    assert found is not None and found.how == "proof heading"
    assert "UPPER-HALF" in found.text and "LOWER-HALF" in found.text and "UNRELATED" not in found.text
    assert "LEMMA-PROOF" not in found.text


def test_paragraph_heading_names_the_theorem():
    tex = HEAD + MAIN + LEMMA + r"""\section{Arguments}
\paragraph{Proof of Theorem~\ref{thm:main}.} OWN-PROOF in a paragraph.
\section{Remarks}
NOT-PART.""" + TAIL  # fmt: skip
    found = _find(tex)
    assert found is not None and found.how == "proof heading"
    assert "OWN-PROOF in a paragraph." in found.text and "NOT-PART" not in found.text


def test_proof_directly_after_is_still_fine():
    tex = HEAD + MAIN + "This is shown as follows.\n\\begin{proof}\nOWN-PROOF right away.\n\\end{proof}\n" + LEMMA + TAIL
    found = _find(tex)
    assert found is not None and found.how == "following proof" and found.text == "OWN-PROOF right away."


@pytest.mark.parametrize("between", ["", "Some words first.\n"])
def test_no_proof_found_when_only_other_results_are_proved(between):
    # the first proof after the theorem belongs to a lemma (the old rule took it)
    tex = HEAD + MAIN + between + LEMMA + "\\begin{proof}[Proof of Lemma~\\ref{lem:aux}]\nOTHER.\n\\end{proof}" + TAIL
    assert _find(tex) is None
    adjacent_other = HEAD + MAIN + "\\begin{proof}[Proof of Lemma 3]\nOTHER.\n\\end{proof}" + TAIL
    assert _find(adjacent_other) is None


def test_pipeline_records_no_proof_found_and_the_sketch_prompt_says_so():
    tex = HEAD + MAIN + LEMMA + TAIL
    start = tex.index("\\label{thm:main}")
    record = {"theorem": {"start_pos": start, "end_pos": tex.index("\\end{theorem}"), "label": "thm:main",
                          "env_name": "theorem"}, "theorem_title": None}  # fmt: skip
    proof, where = find_proof(tex, record)
    assert proof is None and where == "no proof found"
    assert "not available" in P.sketch_messages("Every widget is blue.", {"intro": "", "proof": proof})[1]["content"]
    record["theorem"]["end_pos"] = -1  # not located in the paper
    assert find_proof(tex, record) == (None, "no proof found: the theorem was not located in the paper")


def _paper_proof(root: Path, main: str | None = None):
    paper = load_paper(root, main)
    block, _intro, _reason = rule_path(paper)
    assert block is not None
    return find_theorem_proof(paper.text, start=block.start_pos, end=block.end_pos, label=block.label,
                              note=block.note, env=block.env_name)  # fmt: skip


PAPERS = SHARED / "data" / "papers"


@pytest.mark.parametrize(
    ("name", "main", "how", "begins", "contains"),
    [
        # proved near the end, after dozens of other proofs: "Proof of \Cref{classical-carleson}"
        ("carleson-blueprint", "arxiv.tex", "named proof", "\\proves{classical-carleson}",
         "By applying \\Cref{exceptional-set-carleson} with a sequence"),
        # no proof environment: Sections 2 and 3, "Proof of upper bound" and "Proof of lower bound"
        ("tao-factorial", "erdos-391_improv.tex", "proof heading", "\\section{Proof of upper bound}",
         "We now establish the lower bound."),
        # restatable theorem, restated as \thBBTheFifth* in the Results section and proved there
        ("bb5-busy-beaver", "bbchallenge-paper.tex", "restatement",
         "The \\Coq proof enumerates 5-state Turing machines in Tree Normal Form", "S(5) = 47{,}176{,}870"),
    ],
)  # fmt: skip
def test_real_papers(name, main, how, begins, contains):
    if not PAPERS.is_dir():
        pytest.skip(f"shared data not found at {PAPERS}")
    found = _paper_proof(PAPERS / name / "src", main)
    assert found is not None and found.how == how
    assert found.text.startswith(begins) and contains in found.text


@pytest.mark.parametrize(
    ("name", "begins"),
    [
        ("derangements", "For $i \\in [n]$ let $A_i = \\{ \\sigma \\in \\Sym : \\sigma(i) = i \\}$."),
        ("monotone-subsequences", "All labels lie in $\\{1, \\dots, \\inc(a)\\} \\times"),
        ("primorial-bound", "We argue by induction on $n$."),
    ],
)
def test_sample_papers_named_proofs(name, begins):
    # in each, the first proof after the theorem proves a lemma or a proposition
    root = Path(str(resources.files("theorembench.data") / "papers" / name))
    found = _paper_proof(root)
    assert found is not None and found.how == "named proof" and found.text.startswith(begins)
