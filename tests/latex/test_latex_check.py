"""LaTeX checks of item strings: KaTeX per math segment, pdflatex per item (latex/check)."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from helpers.paths import LMB_HARD

from theorembench.latex import check as lc
from theorembench.latex.check import (
    LatexReport,
    available,
    check_item,
    check_katex,
    check_pdflatex,
    engines,
    katex,
    katex_macros_from_preamble,
    math_segments,
    pdflatex,
    sanitize_preamble,
    scan_math,
)

_AVAILABLE = available()
needs_katex = pytest.mark.skipif(_AVAILABLE["katex"] is not None, reason=f"KaTeX: {_AVAILABLE['katex']}")
needs_pdflatex = pytest.mark.skipif(_AVAILABLE["pdflatex"] is not None, reason=f"pdflatex: {_AVAILABLE['pdflatex']}")
needs_both = pytest.mark.skipif(
    any(v is not None for v in _AVAILABLE.values()), reason=f"engines unavailable: {_AVAILABLE}"
)


# --------------------------------------------------------------------------- math_segments


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (r"a $x$ b \(y\) c \[z\] d $$w$$ e", ["x", "y", "z", "w"]),
        (r"costs \$5, or \$6 with $x$ tax", ["x"]),  # escaped dollars are text
        (r"line\\$x$", ["x"]),  # \\ is a line break: the $ after it opens math
        (r"$\text{if $x>0$ holds}$ and $y$", [r"\text{if $x>0$ holds}", "y"]),  # $ nested in \text
        (r"$\{a\}\cup{b}$", [r"\{a\}\cup{b}"]),
        (r"$a\$b$", [r"a\$b"]),  # \$ inside math does not close it
        (r"$$a$$ then $b$$c$", ["a", "b", "c"]),
        (
            r"Then \begin{align*} a &= \begin{cases} 1 & x>0 \\ 0 \end{cases} \end{align*} ok",
            [r"\begin{align*} a &= \begin{cases} 1 & x>0 \\ 0 \end{cases} \end{align*}"],
        ),
        (
            r"\begin{equation}\begin{split} a&=b \end{split}\end{equation}",
            [r"\begin{equation}\begin{split} a&=b \end{split}\end{equation}"],
        ),  # fmt: skip
        (r"\begin{math} x \end{math} and \begin{displaymath} y \end{displaymath}", [" x ", " y "]),
        (r"\begin{itemize}\item $p$ \item text\end{itemize}", ["p"]),  # text environments are not math
        (r"no math at all, 50\% off", []),
        (r"\[ \text{a \(b\) c} \]", [r" \text{a \(b\) c} "]),
    ],
)
def test_math_segments(text: str, expected: list[str]) -> None:
    assert math_segments(text) == expected


def test_scan_math_marks_unclosed_segments() -> None:
    segs = scan_math(r"fine $a$ then $b + c without end")
    assert [s.error is None for s in segs] == [True, False]
    assert "never closed" in segs[1].error
    assert math_segments(r"fine $a$ then $b + c without end") == ["a"]
    (seg,) = scan_math(r"x \begin{align} a &= b")
    assert seg.error and r"\end{align}" in seg.error and seg.display
    # an unbalanced brace: the segment still ends at the first closer, for KaTeX to complain about
    (seg,) = scan_math(r"then $\frac{a}{b$ holds")
    assert seg.error is None and seg.tex == r"\frac{a}{b"


# --------------------------------------------------------------------------- preamble handling


PAPER_PREAMBLE = r"""
\documentclass[11pt]{amsart}
\usepackage[utf8]{inputenc}
\usepackage{amsmath,hyperref,mathrsfs,tikz} % comment \input{x}
\input{macros}
\include{chapter1}
\immediate\write18{touch PWNED-PREAMBLE}
\hypersetup{colorlinks=true}
\newcommand{\R}{\mathbb{R}}
\newcommand{\norm}[1]{\left\lVert #1 \right\rVert}
\newcommand{\second}[2]{#2}
\newcommand{\opt}[2][x]{#1^{#2}}
\renewcommand{\epsilon}{\varepsilon}
\def\tb{\mathcal{B}}
\def\pair(#1,#2){\langle #1, #2\rangle}
\DeclareMathOperator{\dcl}{dcl}
\DeclareMathOperator*{\argmax}{arg\,max}
\let\eps\varepsilon
\DeclarePairedDelimiter{\abs}{\lvert}{\rvert}
\newcommand{\Rn}{\ensuremath{\R^n}\xspace}
\begin{document}
"""


def test_sanitize_preamble_drops_file_shell_and_unknown_package_commands() -> None:
    clean = sanitize_preamble(PAPER_PREAMBLE)
    for gone in (r"\documentclass", r"\input", r"\include", r"\write18", r"\immediate", "PWNED", r"\hypersetup",
                 "hyperref", "tikz", "inputenc", r"\begin{document}", "comment"):  # fmt: skip
        assert gone not in clean, gone
    assert "amsmath" not in clean  # loaded by the check document anyway (no option clash)
    for kept in (r"\newcommand{\R}{\mathbb{R}}", r"\def\tb{\mathcal{B}}", r"\DeclareMathOperator*{\argmax}",
                 r"\DeclarePairedDelimiter{\abs}", r"\let\eps\varepsilon"):  # fmt: skip
        assert kept in clean, kept
    if shutil.which("kpsewhich") and engines.kpsewhich(engines.search_path(), ("mathrsfs.sty", "rsfs10.tfm")) == {
        "mathrsfs.sty",
        "rsfs10.tfm",
    }:
        assert r"\usepackage{mathrsfs}" in clean
    assert sanitize_preamble(r"\openin3=/etc/passwd \read3 to\x \def\y{1}").strip() == r"\def\y{1}"
    assert sanitize_preamble(r"\end \def\y{1}") == r"\def\y{1}"


def test_katex_macros_from_preamble() -> None:
    macros = katex_macros_from_preamble(PAPER_PREAMBLE)
    assert macros[r"\R"] == r"\mathbb{R}"
    assert macros[r"\norm"] == r"\left\lVert #1 \right\rVert"
    assert macros[r"\tb"] == r"\mathcal{B}"
    assert macros[r"\dcl"] == r"\operatorname{dcl}"
    assert macros[r"\argmax"] == r"\operatorname*{arg\,max}"
    assert macros[r"\eps"] == r"\varepsilon"
    assert macros[r"\epsilon"] == r"\varepsilon"
    assert macros[r"\abs"] == r"\left\lvert #1 \right\rvert"
    assert macros[r"\opt"] == r"x^{#1}"  # KaTeX macros take no optional argument: the default is used
    assert macros[r"\second"].endswith("#2") and "#1" in macros[r"\second"]  # KaTeX must still read two arguments
    assert r"\pair" not in macros  # delimited \def: not expressible as a KaTeX macro string
    assert macros[r"\ensuremath"] == "#1" and macros[r"\xspace"] == ""
    assert katex_macros_from_preamble("% \\newcommand{\\x}{y}\n") == {}


# --------------------------------------------------------------------------- valid strings

VALID = {
    "question": (
        r"Let $f\colon \mathbb{R}^n\to\mathbb{R}$ be smooth and set \(g(x) \coloneqq \bm{x}^\top A \bm{x}\). "
        r"Suppose \[ \sum_{k=1}^{\infty} \frac{1}{k^2} = \frac{\pi^2}{6}, \] and"
        "\n"
        r"\begin{align*} a &= \left( \int_0^1 f \right)^2 \\ b &= \begin{cases} 1 & x>0, \\ 0 & \text{else} \end{cases}"
        r" \end{align*}"
        "\n"
        r"Which is true? (It costs \$5; 50\% of cases; Kähler–Einstein; “quotes”.)"
    ),
    "choice A": r"$\operatorname{Area}(\Sigma)\geqslant 2\pi^2$ with $$\lim_{t\to 0}\|\omega_t\|_{C^0}=0.$$",
    "choice B": r"For all $\varepsilon>0$ there is $\delta$ with $\text{if $|x|<\delta$ then } |f(x)|<\varepsilon$.",
    "choice C": r"Unicode in math: $α ≤ β$ and $x ∈ ℝ$; \emph{emphasis} and \textbf{bold}.",
    "choice D": r"$\mathcal{O}_X$, $\mathfrak{g}$, $\widetilde{M}$, $\binom{n}{k}$, $\sqrt[3]{x}$, $\overline{z}$",
    "choice E": "One of the remaining options is correct, but a stronger result can be proven.",
}


@needs_both
def test_valid_strings_pass_both_engines() -> None:
    report = check_item(VALID)
    assert report.ok, [str(i) for i in report.issues]
    assert report.issues == [] and report.skipped == []
    assert report.checked["katex"] == sum(len(math_segments(t)) for t in VALID.values()) == 17
    assert report.checked["pdflatex"] == len(VALID)


def _released_items() -> list[dict]:
    if not LMB_HARD.is_file():
        pytest.skip(f"released data not found at {LMB_HARD}")
    return json.loads(LMB_HARD.read_text(encoding="utf-8"))


def _mcq_strings(item: dict) -> dict[str, str]:
    mcq = item["mcq"]
    strings = {"question": mcq["question"]}
    for choice in sorted([*mcq["choices"], mcq["correct_choice"]], key=lambda c: c["label"]):
        strings[f"choice {choice['label']}"] = choice["text"]
    return strings


# Released items whose strings fail, what fails and why (checked against the data below):
# item -> (KaTeX failures, pdflatex failures, a preamble that fixes them or None)
RELEASED_FAILURES = {
    # \dcl (definable closure), a paper macro
    "2511.13447v1::alt1": ({"question"}, {"question"}, r"\DeclareMathOperator{\dcl}{dcl}"),
    # \ch (Chern character), a paper macro; KaTeX knows a built-in \ch (the cosh operator), so only pdflatex fails
    "2511.21288v1::alt1": (set(), {"question", "choice C", "choice D", "choice E"}, r"\DeclareMathOperator{\ch}{ch}"),
    # \AndI, \AndII, \RS, \des, \ides, \maj, \Des: the paper's permutation classes and statistics
    "2511.12549v2::orig": (
        {"question", "choice A", "choice B", "choice C", "choice D", "choice E"},
        {"question", "choice A", "choice B", "choice C", "choice D", "choice E"},
        "\n".join(
            [
                r"\newcommand{\AndI}{\mathfrak{A}^{\mathrm{I}}}",
                r"\newcommand{\AndII}{\mathfrak{A}^{\mathrm{II}}}",
                r"\newcommand{\RS}{\mathcal{RS}}",
                r"\DeclareMathOperator{\des}{des}",
                r"\DeclareMathOperator{\ides}{ides}",
                r"\DeclareMathOperator{\maj}{maj}",
                r"\DeclareMathOperator{\Des}{Des}",
            ]
        ),
    ),  # fmt: skip
    # a real defect: "... diffeomorphic to S^{n-m}\times \mathbb T^m$." lacks its opening $
    "2511.04407v1::orig": ({"choice B"}, {"choice B"}, None),
    # a real defect: a control character (U+0007) where "\gamma" was meant
    "2511.03722v1::alt1": ({"choice E"}, {"choice E"}, None),
}


@needs_both
def test_released_items_pass_except_the_known_failures() -> None:
    items = _released_items()
    batch: dict[str, str] = {}
    for item in items:
        if item["id"] not in RELEASED_FAILURES:
            batch.update({f"{item['id']} {k}": v for k, v in _mcq_strings(item).items()})
    assert len(batch) >= 100
    report = check_item(batch)
    assert report.ok, [str(i) for i in report.issues][:5]
    assert report.checked["pdflatex"] == len(batch) and report.checked["katex"] > 500


@needs_both
@pytest.mark.parametrize("item_id", sorted(RELEASED_FAILURES))
def test_released_failures_are_reported_where_they_are(item_id: str) -> None:
    (item,) = [x for x in _released_items() if x["id"] == item_id]
    strings = _mcq_strings(item)
    katex_where, pdflatex_where, fix = RELEASED_FAILURES[item_id]
    report = check_item(strings)
    assert not report.ok and report.skipped == []
    assert report.wheres("katex") == katex_where
    assert report.wheres("pdflatex") == pdflatex_where
    assert all(i.message and i.segment for i in report.issues)
    if fix is None:
        return
    for issue in report.issues:  # the undefined paper macro is named
        assert "Undefined control sequence" in issue.message
    fixed = check_item(strings, preamble=fix)
    assert fixed.ok, [str(i) for i in fixed.issues]


@needs_both
def test_theorem_with_paper_macros_varmathbb_and_tb() -> None:
    """Released theorem texts use \\varmathbb and \\tb (paper macros): they fail until a preamble defines them."""
    items = {x["id"]: x for x in _released_items()}
    strings = {
        "theorem": items["2511.19681v1::orig"]["theorem"]["content"],
        "reference": items["2511.04651v1::alt1"]["ref_dict"]["DG3"],
        "stem": items["2511.04651v1::alt1"]["mcq"]["question"],
    }
    assert r"\varmathbb" in strings["theorem"] and r"\tb" in strings["reference"]
    report = check_item(strings)
    assert report.wheres("katex") == {"theorem", "reference"}
    assert report.wheres("pdflatex") == {"theorem", "reference"}
    assert any(r"\varmathbb" in i.message for i in report.issues if i.where == "theorem" and i.engine == "katex")
    preamble = "\n".join([
        r"\newcommand{\varmathbb}[1]{\mathbb{#1}}", r"\def\tb{B}", r"\newcommand{\ve}{\varepsilon}",
        r"\newcommand{\ddbar}{\sqrt{-1}\partial\bar\partial}", r"\newtheorem{corollary}{Corollary}",
    ])  # fmt: skip
    fixed = check_item(strings, preamble=preamble)
    assert fixed.ok, [str(i) for i in fixed.issues]


# --------------------------------------------------------------------------- invalid strings


INVALID = [
    # (name, bad string, engines that must flag it, a word the message of each must contain)
    ("unbalanced brace in math", r"Then $\frac{a}{b$ holds.", {"katex", "pdflatex"}, ""),
    ("extra closing brace in math", r"Then $a}+b$ holds.", {"katex", "pdflatex"}, ""),
    ("unbalanced brace in text", r"The set {a, b is finite.", {"pdflatex"}, "group open"),
    ("unclosed dollar", r"Let $x+y be given.", {"katex", "pdflatex"}, ""),
    ("frac missing an argument", r"Then $\frac{a}$ holds.", {"katex", "pdflatex"}, ""),
    ("unknown control sequence", r"Then $\foobarbaz x$ holds.", {"katex", "pdflatex"}, "Undefined control sequence"),
    ("align without end", "Then\n\\begin{align}\na &= b\n", {"katex", "pdflatex"}, "align"),
    ("left without right", r"Then $\left( x + y$ holds.", {"katex", "pdflatex"}, "right"),
    ("unclosed display", r"Then \[ x = y holds.", {"katex", "pdflatex"}, ""),
]


@needs_both
@pytest.mark.parametrize(("name", "bad", "engines", "word"), INVALID, ids=[x[0] for x in INVALID])
def test_invalid_string_is_flagged_by_the_right_engine_at_the_right_place(name, bad, engines, word) -> None:
    strings = {"question": VALID["question"], "choice B": bad, "choice C": VALID["choice B"]}
    report = check_item(strings)
    assert not report.ok and report.skipped == []
    for engine in ("katex", "pdflatex"):
        expected = {"choice B"} if engine in engines else set()
        assert report.wheres(engine) == expected, (engine, [str(i) for i in report.issues])
    for issue in report.issues:
        assert issue.message and issue.segment
        assert word.lower() in issue.message.lower(), str(issue)
    # the strings after the bad one were checked too
    assert report.checked["pdflatex"] == 3


@needs_pdflatex
def test_pdflatex_reports_every_failing_string_and_the_line_it_failed_on() -> None:
    strings = {
        "question": "A fine stem with $x$.",
        "choice A": "Fine.\nStill fine, but $\\undefinedmacro$ here.\nAnd more.",
        "choice B": "Fine $y$.",
        "choice C": r"Then $\left( x$.",
        "choice D": "Fine again.",
    }
    report = check_pdflatex(strings)
    assert [i.where for i in report.issues] == ["choice A", "choice C"]
    first = report.issues[0]
    assert first.engine == "pdflatex" and "Undefined control sequence" in first.message
    assert "\\undefinedmacro" in first.message and first.segment == "Still fine, but $\\undefinedmacro$ here."
    assert report.checked == {"pdflatex": 5}
    one = check_pdflatex(strings, max_compiles=1)
    assert [i.where for i in one.issues] == ["choice A"] and "not checked" in one.skipped[0]
    assert not one.complete and not one.ok
    assert report.complete


@needs_pdflatex
def test_string_that_ends_the_document_early_is_caught() -> None:
    strings = {"question": r"Fine.", "choice A": r"x \end{document} y", "choice B": r"$\nosuchmacro$"}
    report = check_pdflatex(strings)
    assert [i.where for i in report.issues] == ["choice A", "choice B"]
    assert "ended early" in report.issues[0].message


@needs_pdflatex
def test_preamble_errors_are_charged_to_the_preamble() -> None:
    report = check_pdflatex({"question": "$\\R$"}, preamble="\\newcommand{\\R}{\\mathbb{R}}\n\\newcommand{\\R}{x}")
    assert [i.where for i in report.issues] == ["preamble"]
    assert "already defined" in report.issues[0].message
    assert report.checked == {"pdflatex": 0} and "not checked" in report.skipped[0]


@needs_katex
def test_katex_macros_option_and_strictness() -> None:
    strings = {"q": r"$\R^n$, $\norm{x}$ and $α$", "a": r"$\R$ and $\nope$"}
    report = check_katex(strings, macros={r"\R": r"\mathbb{R}", r"\norm": r"\left\|#1\right\|"})
    assert report.wheres() == {"a"} and report.checked == {"katex": 5}
    (issue,) = report.issues
    assert issue.engine == "katex" and r"\nope" in issue.message and issue.segment == r"$\nope$"
    # a \gdef in one segment does not leak into the next
    leak = check_katex({"a": r"$\gdef\foo{x}\foo$", "b": r"$\foo$"})
    assert leak.wheres() == {"b"}
    # an endless macro is stopped by KaTeX's expansion limit
    loop = check_katex({"a": r"$\def\x{\x}\x$"})
    assert "Too many expansions" in loop.issues[0].message


# --------------------------------------------------------------------------- safety


@needs_both
def test_shell_escape_and_file_access_do_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # every temporary file of the check goes here
    target = tmp_path / "pwned"
    strings = {
        "question": rf"Run \immediate\write18{{touch {target}}} now and $x$.",
        "choice A": r"\input{/etc/passwd}",
        "choice B": r"\newread\rr\openin\rr=/etc/passwd \ifeof\rr ok\else\read\rr to\xx\errmessage{READ:\xx}\fi",
        "choice C": rf"\immediate\openout7={tmp_path}/written.txt \immediate\write7{{x}}",
        "choice D": r"\immediate\openout7=relative.txt \immediate\write7{x}\immediate\closeout7 fine",
        "choice E": r"$\input{/etc/passwd}$",
    }
    preamble = rf"\immediate\write18{{touch {target}-pre}}" + "\n" + r"\input{/etc/passwd}" + "\n\\def\\y{1}"
    report = check_item(strings, preamble=preamble)
    assert not target.exists() and not Path(f"{target}-pre").exists()
    assert not (tmp_path / "written.txt").exists() and not Path("relative.txt").exists()
    assert os.listdir(scratch) == []  # the temporary directories are gone
    messages = " ".join(i.message + i.segment for i in report.issues)
    assert "root:" not in messages  # /etc/passwd was never read
    # every string is flagged: the commands are out of place in an item, and the reads fail
    assert report.wheres("pdflatex") == set(strings)
    assert "preamble" not in report.wheres()  # the preamble's \input and \write18 were removed
    assert any("/etc/passwd" in i.message for i in report.issues if i.where == "choice A")
    assert report.wheres("katex") == {"choice E"}


@needs_pdflatex
def test_endless_loop_times_out_and_is_charged_to_its_string() -> None:
    strings = {"question": "fine", "choice A": r"\def\x{\x}\x", "choice B": "never reached"}
    report = check_pdflatex(strings, timeout_s=1)
    assert [i.where for i in report.issues] == ["choice A"]
    assert "did not finish" in report.issues[0].message
    assert report.skipped and "not checked" in report.skipped[0]


# --------------------------------------------------------------------------- availability, batching


def test_unavailable_engines_are_skipped_not_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv(lc.PATH_ENV, str(empty))
    status = available()
    assert status["katex"] and "node" in status["katex"]
    assert status["pdflatex"] and "pdflatex" in status["pdflatex"]
    report = check_item({"question": r"$\frac{a}$ broken"})
    # nothing was checked: no issue found, yet the item has not passed
    assert report.issues == [] and report.passed
    assert not report.complete and not report.ok
    assert [s.split(":")[0] for s in report.skipped] == ["katex", "pdflatex"]
    assert report.checked == {"katex": 0, "pdflatex": 0}
    assert report.to_dict()["ok"] is False and report.to_dict()["complete"] is False


@needs_katex
def test_path_without_pdflatex_keeps_katex(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    only_node = tmp_path / "bin"
    only_node.mkdir()
    (only_node / "node").symlink_to(shutil.which("node"))
    monkeypatch.setenv(lc.PATH_ENV, str(only_node))
    assert available()["katex"] is None and available()["pdflatex"]
    report = check_item({"question": r"$\frac{a}$ broken"})
    assert report.wheres("katex") == {"question"}
    assert len(report.skipped) == 1 and report.skipped[0].startswith("pdflatex: pdflatex not found")
    # KaTeX alone passing a string is not a pass: pdflatex never saw it
    fine = check_item({"question": r"$x$ fine"})
    assert fine.passed and fine.checked == {"katex": 1, "pdflatex": 0}
    assert not fine.complete and not fine.ok


@needs_pdflatex
def test_spent_time_budget_is_not_a_pass() -> None:
    report = check_pdflatex({"question": "Fine $x$.", "choice A": "Fine $y$."}, timeout_s=0)
    assert report.issues == [] and report.checked == {"pdflatex": 0}
    assert report.skipped == ["pdflatex: 2 string(s) not checked (time budget of 0 s spent)"]
    assert not report.complete and not report.ok


def test_missing_katex_package_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(lc.KATEX_DIR_ENV, str(tmp_path / "nowhere"))
    assert "katex npm package was not found" in available()["katex"]
    report = check_katex({"q": "$x$"})
    assert not report.ok and report.checked == {"katex": 0} and "katex npm package" in report.skipped[0]


@needs_both
def test_a_batch_of_fifty_strings_is_one_node_run_and_one_pdflatex_run(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real_run = engines.run_process

    def counting_run(cmd, **kw):
        calls.append(Path(cmd[0]).name)
        return real_run(cmd, **kw)

    monkeypatch.setattr(katex, "run_process", counting_run)
    monkeypatch.setattr(pdflatex, "run_process", counting_run)
    strings = {f"s{k}": VALID[key] for k, key in enumerate(list(VALID) * 9) if k < 50}
    assert len(strings) == 50
    report = check_item(strings)
    assert report.ok, [str(i) for i in report.issues][:3]
    assert sorted(calls) == ["node", "pdflatex"]
    assert report.checked["pdflatex"] == 50


def test_report_merge_and_dict() -> None:
    a = LatexReport(checked={"katex": 2})
    b = LatexReport(checked={"pdflatex": 1}, skipped=["katex: x"])
    b.add(lc.LatexIssue("question", "$x$", "pdflatex", "boom"))
    assert a.ok and a.passed and a.complete
    merged = LatexReport(checked={}).merge(a).merge(b)
    assert not merged.ok and merged.checked == {"katex": 2, "pdflatex": 1} and merged.skipped == ["katex: x"]
    unchecked = LatexReport(checked={"katex": 0}).merge(LatexReport(checked={}, skipped=["pdflatex: not found"]))
    assert unchecked.passed and not unchecked.complete and not unchecked.ok
    d = merged.to_dict()
    assert (d["ok"], d["passed"], d["complete"]) == (False, False, False)
    assert d["issues"][0] == {"where": "question", "segment": "$x$", "engine": "pdflatex", "message": "boom"}
    assert re.search("pdflatex", str(merged.issues[0]))


# --------------------------------------------------------------------------- bounded output, off the event loop


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> dict[str, list]:
    """What each pdflatex compile read: (bytes of its output kept, why it was stopped) and the log bytes read."""
    seen: dict[str, list] = {"output": [], "log": []}
    real_run, real_head = pdflatex.run_process, pdflatex._read_head

    def run(cmd, **kw):
        ran = real_run(cmd, **kw)
        seen["output"].append((ran.bytes_read, ran.stopped))
        return ran

    def head(path: Path, limit: int) -> str:
        text = real_head(path, limit)
        seen["log"].append((len(text.encode("utf-8")), path.stat().st_size if path.is_file() else 0))
        return text

    monkeypatch.setattr(pdflatex, "run_process", run)
    monkeypatch.setattr(pdflatex, "_read_head", head)
    return seen


@needs_pdflatex
def test_a_string_that_prints_without_end_is_stopped_at_the_output_cap(reads, monkeypatch) -> None:
    monkeypatch.setattr(pdflatex, "OUTPUT_CAP", 64 << 10)
    strings = {"question": "Fine $x$.", "choice A": r"\loop\message{flood flood flood}\iftrue\repeat",
               "choice B": "Fine $y$."}  # fmt: skip
    report = check_pdflatex(strings, timeout_s=120)
    assert [i.where for i in report.issues] == ["choice A"]
    assert report.issues[0].message.startswith("output limit: pdflatex was stopped past 64 KB of output")
    assert report.checked == {"pdflatex": 3} and report.complete  # the others compiled again, without it
    # the flooding compile: exactly the cap of its output read, and it was stopped there
    assert reads["output"][0] == (65536, "output")
    assert reads["output"][1][1] is None
    assert all(read <= 256 << 10 for read, _on_disk in reads["log"])


@needs_pdflatex
def test_a_string_that_floods_only_the_log_is_stopped_by_the_file_size_limit(reads, monkeypatch) -> None:
    monkeypatch.setattr(pdflatex, "LOG_LIMIT", 1 << 20)
    flood = r"\tracingonline=0 \tracingcommands=3 \loop\relax\iftrue\repeat"  # tracing goes to the log alone
    report = check_pdflatex({"question": "Fine $x$.", "choice A": flood, "choice B": "Fine $y$."}, timeout_s=120)
    assert [i.where for i in report.issues] == ["choice A"]
    assert report.issues[0].message.startswith("output limit: pdflatex was stopped past a 1024 KB log")
    assert report.checked == {"pdflatex": 3} and report.complete
    assert reads["output"][0][1] == "file size"
    # the log reached the limit on disk; only its head was read
    assert reads["log"][0] == (256 << 10, 1 << 20)


def test_process_output_is_capped_and_the_child_stopped(tmp_path: Path) -> None:
    from theorembench.latex.check.process import Limits, run_process

    script = "import sys\nwhile True:\n    sys.stdout.write('x' * 4096)\n"
    ran = run_process([sys.executable, "-c", script], input_text=None, timeout_s=120, cwd=str(tmp_path),
                      env=None, max_output=10_000, limits=Limits(cpu_s=120))  # fmt: skip
    assert (ran.returncode, ran.out, ran.stopped, ran.bytes_read) == (None, "x" * 10_000, "output", 10_000)
    big = tmp_path / "big"  # a child writing a file without end is stopped at the file-size limit
    ran = run_process([shutil.which("sh") or "/bin/sh", "-c", "exec yes > big"], input_text=None, timeout_s=120,
                      cwd=str(tmp_path), env=None, limits=Limits(file_bytes=100_000))  # fmt: skip
    assert ran.stopped == "file size" and big.stat().st_size == 100_000


def _blocking_pdflatex(folder: Path, port: int) -> None:
    """A stand-in pdflatex that tells the test it started, then waits for the test's event loop to answer."""
    folder.mkdir()
    exe = folder / "pdflatex"
    exe.write_text(
        f"#!{sys.executable}\n"
        "import socket\n"
        f"conn = socket.create_connection(('127.0.0.1', {port}))\n"
        "conn.sendall(b'started\\n')\n"
        "conn.makefile('rb').readline()\n"
        "print('[tb-document] [tb-begin:0] [tb-end:0] [tb-done]', flush=True)\n"
    )  # fmt: skip
    exe.chmod(0o755)


def test_the_event_loop_runs_while_a_check_is_in_flight(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stand-in engine only finishes when a coroutine on the same loop answers it.

    Were the check run on the loop, that coroutine could not run until the engine was
    killed at its timeout: the check would then report an issue, and the answer would
    come after the check had finished.
    """
    import asyncio

    async def scenario() -> tuple[list[bool], LatexReport]:
        pending_when_answered: list[bool] = []
        task: asyncio.Task | None = None

        async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.readline()
            pending_when_answered.append(task is not None and not task.done())
            writer.write(b"go\n")
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(answer, "127.0.0.1", 0)
        _blocking_pdflatex(tmp_path / "bin", server.sockets[0].getsockname()[1])
        monkeypatch.setenv(lc.PATH_ENV, str(tmp_path / "bin"))  # no node, no kpsewhich: KaTeX is skipped
        async with server:
            task = asyncio.create_task(lc.check_item_async({"question": "Fine."}, timeout_s=30))
            report = await task
        return pending_when_answered, report

    pending_when_answered, report = asyncio.run(scenario())
    assert pending_when_answered == [True]
    assert report.issues == [] and report.checked == {"katex": 0, "pdflatex": 1}
