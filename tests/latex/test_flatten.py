"""Main-file detection and flattening with a source map: the six real papers and crafted trees."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers.paths import SHARED

from theorembench.latex.encoding import decode_tex
from theorembench.latex.flatten import FlatDocument, find_main_file, flatten

PAPERS = SHARED / "data" / "papers"
MANIFEST = json.loads((PAPERS / "manifest.json").read_text()) if (PAPERS / "manifest.json").is_file() else []
needs_papers = pytest.mark.skipif(not MANIFEST, reason=f"shared papers not found at {PAPERS}")
NAMES = [m["short_name"] for m in MANIFEST] or ["none"]
UNESCAPED_PERCENT = re.compile(r"(?<!\\)(?:\\\\)*%")


def entry(name: str) -> dict:
    return next(m for m in MANIFEST if m["short_name"] == name)


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return root


def source_lines(root: Path, rel: str) -> list[str]:
    text, _ = decode_tex((root / rel).read_bytes())
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def where(doc: FlatDocument, needle: str) -> tuple[str, int]:
    idx = doc.text.find(needle)
    assert idx >= 0, f"{needle!r} not in the flat text"
    return doc.locate(idx)


def document(body: str, preamble: str = "") -> str:
    return "\\documentclass{article}\n" + preamble + "\\begin{document}\n" + body + "\n\\end{document}\n"


# --------------------------------------------------------------------------- real papers


@needs_papers
@pytest.mark.parametrize("paper", NAMES)
def test_main_file_detection_matches_manifest(paper: str):
    main, candidates = find_main_file(PAPERS / paper / "src")
    assert main == entry(paper)["main_tex"]
    assert candidates[0] == main


@needs_papers
@pytest.mark.parametrize("paper", [m["short_name"] for m in MANIFEST if m["main_theorem"]] or ["none"])
def test_main_theorem_is_in_the_flat_text_and_maps_back(paper: str):
    theorem = entry(paper)["main_theorem"]
    doc = flatten(PAPERS / paper / "src")
    raw = theorem["body_first200_raw"]
    idx = doc.text.find(raw)
    assert idx >= 0
    assert doc.text.count(raw) == 1
    file, line = doc.locate(idx)
    assert file == theorem["file"]
    assert line in (theorem["line"], theorem["line"] + 1)  # the body starts on the \begin line or the next
    begin = doc.text.rfind("\\begin{" + theorem["environment"] + "}", 0, idx)
    assert doc.locate(begin) == (theorem["file"], theorem["line"])


@needs_papers
@pytest.mark.parametrize("paper", NAMES)
def test_flat_text_maps_every_sampled_character_to_its_source_line(paper: str):
    root = PAPERS / paper / "src"
    doc = flatten(root)
    assert doc.main_file == entry(paper)["main_tex"]
    assert doc.files[0] == doc.main_file
    assert set(doc.files) <= set(entry(paper)["files"])
    assert doc.problems == []
    lines = {f: source_lines(root, f) for f in doc.files}
    offsets = [s[0] for s in doc.segments] + [len(doc.text)]
    checked = 0
    for off in range(0, len(doc.text), 97):
        if doc.text[off] == "\n":
            continue
        file, line = doc.locate(off)
        nxt = min(o for o in offsets if o > off)
        eol = doc.text.find("\n", off)
        piece = doc.text[off : min(nxt, eol if eol >= 0 else len(doc.text), off + 60)]
        assert piece in lines[file][line - 1], (file, line, piece)
        checked += 1
    assert checked > 100


@needs_papers
def test_inclusion_order_and_relative_paths_of_real_papers():
    carleson = flatten(PAPERS / "carleson-blueprint" / "src")
    assert carleson.files == ["arxiv.tex", "preamble/common.tex", "preamble/print.tex", "chapter/main.tex"]
    sag = flatten(PAPERS / "sag-projective" / "src")
    assert sag.files[:3] == ["projective/main.tex", "overview/history-and-introduction.tex", "projective/intro.tex"]
    assert "projective/veronese.tex" in sag.files  # \input{veronese}: no extension
    bb5 = flatten(PAPERS / "bb5-busy-beaver" / "src")
    # \include{sections/decider-0-loop-results} inside sections/decider-0-loops.tex: relative to the main file
    assert "sections/decider-0-loop-results.tex" in bb5.files
    assert "sections/decider-1-translated-cyclers.tex" not in bb5.files  # its \input is commented out
    cholesky = flatten(PAPERS / "cholesky-selection" / "src")
    assert "figures/screening/uncond.tex" in cholesky.files
    assert "figures/kernel/grid_1e-5/points_1.tex" not in cholesky.files  # % \input{...}
    assert "experimental_design_linalg_supplement.tex" not in cholesky.files


@needs_papers
def test_comments_are_gone_and_escaped_percent_survives():
    docs = {name: flatten(PAPERS / name / "src") for name in NAMES}
    for name, doc in docs.items():
        assert not UNESCAPED_PERCENT.search(doc.text), name
    bb5 = docs["bb5-busy-beaver"].text
    assert "\\label{fig:hope}" not in bb5  # inside a %-commented figure
    assert "Amusingly, Brady opens his article" not in bb5
    assert "\\label{th:BB5}" in bb5
    carleson = docs["carleson-blueprint"].text
    assert "remark(Georges Gonthier): removed 1+" not in carleson
    assert "\\setdefaultlanguage{english}" not in carleson
    tao = docs["tao-factorial"].text
    assert "\\usepackage{mathtools}" in tao and "ctan.org/pkg/mathtools" not in tao
    assert "37.12\\%$) would end up being true" in docs["equational-theories"].text
    assert "The bbchallenge Collaboration (credits)." not in bb5  # a %-commented paragraph
    assert "reminiscent of the Polymath Project" not in bb5
    assert "The bbchallenge Collaboration: $S(5)$ credits." in bb5  # its live version


# --------------------------------------------------------------------------- crafted trees: inclusion


def test_input_cycle_is_recorded_and_terminates(tmp_path: Path):
    write(
        tmp_path,
        {"main.tex": document("\\input{a}"), "a.tex": "A-text\n\\input{b}\n", "b.tex": "B-text\n\\input{a.tex}\n"},
    )
    doc = flatten(tmp_path)
    assert doc.text.count("A-text") == 1 and doc.text.count("B-text") == 1
    assert any("cycle" in p and "main.tex -> a.tex -> b.tex -> a.tex" in p for p in doc.problems)
    assert doc.files == ["main.tex", "a.tex", "b.tex"]


def test_self_input_and_same_file_twice(tmp_path: Path):
    write(tmp_path, {"main.tex": document("\\input{m}\\input{m}\\input{main}"), "m.tex": "M"})
    doc = flatten(tmp_path)
    assert doc.text.count("M") == 2  # a file may be read twice; only cycles are cut
    assert any("cycle" in p for p in doc.problems)


def test_depth_limit(tmp_path: Path):
    files = {"main.tex": document("\\input{f1}")}
    for i in range(1, 30):
        files[f"f{i}.tex"] = f"level{i}-\n\\input{{f{i + 1}}}\n"
    files["f30.tex"] = "bottom"
    write(tmp_path, files)
    doc = flatten(tmp_path, max_depth=5)
    assert "level5-" in doc.text and "level6-" not in doc.text
    assert any("depth" in p for p in doc.problems)
    deep = flatten(tmp_path)  # the default, 20
    assert "level20-" in deep.text and "level21-" not in deep.text


def test_missing_file_is_a_problem_and_the_rest_goes_on(tmp_path: Path):
    write(tmp_path, {"main.tex": document("before\n\\input{nothere}\nafter\n\\include{gone}")})
    doc = flatten(tmp_path)
    assert "before" in doc.text and "after" in doc.text
    assert any("nothere" in p and "not found" in p and "main.tex line 4" in p for p in doc.problems)
    assert any("gone" in p for p in doc.problems)


def test_include_and_includeonly(tmp_path: Path):
    body = "\\include{ch1}\n\\include{ch2}\n\\include{ch3.tex}\n\\input{ch2}"
    files = {"ch1.tex": "Chapter-one", "ch2.tex": "Chapter-two", "ch3.tex": "Chapter-three"}
    write(tmp_path / "all", {"main.tex": document(body), **files})
    doc = flatten(tmp_path / "all")
    assert [doc.text.count(f"Chapter-{n}") for n in ("one", "two", "three")] == [1, 2, 1]
    write(tmp_path / "only", {"main.tex": document(body, "\\includeonly{ch1, ch3}\n"), **files})
    doc = flatten(tmp_path / "only")
    # \include{ch2} is skipped, \input{ch2} is not affected by \includeonly
    assert [doc.text.count(f"Chapter-{n}") for n in ("one", "two", "three")] == [1, 1, 1]
    assert doc.problems == []


def test_input_paths_are_relative_to_the_main_file_folder(tmp_path: Path):
    write(
        tmp_path,
        {
            "main.tex": document("\\input{a/plain}\n\\input b.tex\n\\input b\n"),
            "a/plain.tex": "plain-start\n\\input{b}\n\\subimport{x/}{y}\n",
            "a/b.tex": "WRONG-a-b",
            "b.tex": "root-b",
            "x/y.tex": "root-x-y",
            "a/x/y.tex": "WRONG-a-x-y",
        },
    )
    doc = flatten(tmp_path)
    assert doc.text.count("root-b") == 3 and "WRONG" not in doc.text
    assert "root-x-y" in doc.text  # \subimport outside any import: relative to the main file's folder


def test_import_and_subimport_semantics(tmp_path: Path):
    write(
        tmp_path,
        {
            "main.tex": document("\\import{chapters/}{one}\n\\subimport*{chapters/sub/}{three}"),
            "chapters/one.tex": "one-start\n\\subimport{sub/}{two}\n\\input{helper}\n",
            "chapters/helper.tex": "chapters-helper",
            "helper.tex": "WRONG-root-helper",
            "chapters/sub/two.tex": "two-start\n\\input{three}\n",
            "chapters/sub/three.tex": "sub-three",
            "three.tex": "WRONG-root-three",
            "sub/two.tex": "WRONG-root-sub-two",
        },
    )
    doc = flatten(tmp_path)
    assert "WRONG" not in doc.text
    assert doc.text.count("sub-three") == 2
    assert doc.files == [
        "main.tex", "chapters/one.tex", "chapters/sub/two.tex", "chapters/sub/three.tex", "chapters/helper.tex",
    ]  # fmt: skip
    assert where(doc, "two-start") == ("chapters/sub/two.tex", 1)


def test_nested_import_of_the_importing_folder_and_includefrom(tmp_path: Path):
    write(
        tmp_path,
        {
            "main.tex": document(
                "\\import{chapters/intro/}{main}\n\\includefrom{parts/}{p1}\n\\includefrom{parts/}{p2}",
                "\\includeonly{p1}\n",
            ),
            "chapters/intro/main.tex": "intro-main\n\\import{./}{section}\n",
            "chapters/intro/section.tex": "intro-section\n\\subimport{deeper/}{leaf}\n",
            "chapters/intro/deeper/leaf.tex": "the-leaf",
            "parts/p1.tex": "part-one",
            "parts/p2.tex": "part-two",
        },
    )  # fmt: skip
    doc = flatten(tmp_path)
    assert doc.problems == []
    # \import{./}{section} from an imported file: found through the enclosing import folder
    assert "intro-section" in doc.text and "the-leaf" in doc.text
    assert "part-one" in doc.text and "part-two" not in doc.text  # \includefrom honours \includeonly


def test_subfile_and_import_at_the_root(tmp_path: Path):
    write(tmp_path, {"main.tex": document("\\subfile{ch}\n\\import{}{imp}\n\\subimport{./}{sub}"),
                     "ch.tex": "\\documentclass[main]{subfiles}\n\\begin{document}\nchapter-at-root\n\\end{document}",
                     "imp.tex": "imported-at-root", "sub.tex": "subimported-at-root"})  # fmt: skip
    doc = flatten(tmp_path)
    assert doc.problems == []
    for text in ("chapter-at-root", "imported-at-root", "subimported-at-root"):
        assert text in doc.text


def test_symlink_leaving_the_root_is_not_read(tmp_path: Path):
    write(tmp_path, {"outside.tex": "TOP-SECRET", "paper/main.tex": document("\\input{leak}")})
    (tmp_path / "paper" / "leak.tex").symlink_to(tmp_path / "outside.tex")
    doc = flatten(tmp_path / "paper")
    assert "TOP-SECRET" not in doc.text
    assert doc.files == ["main.tex"] and doc.problems


def test_main_in_a_subfolder_and_nothing_read_outside_the_root(tmp_path: Path):
    root = tmp_path / "paper"
    write(tmp_path, {"secret.tex": "TOP-SECRET"})
    write(
        root,
        {
            "proj/main.tex": document("\\input{../shared/s}\n\\input{../../secret}\n\\import{/etc/}{passwd}"),
            "shared/s.tex": "shared-s",
        },
    )
    assert find_main_file(root) == ("proj/main.tex", ["proj/main.tex"])
    doc = flatten(root)
    assert "shared-s" in doc.text and "TOP-SECRET" not in doc.text
    assert sum("outside the source folder" in p for p in doc.problems) == 2
    assert doc.files == ["proj/main.tex", "shared/s.tex"]


def test_subfile_contributes_only_its_body(tmp_path: Path):
    write(
        tmp_path,
        {
            "main.tex": document("\\subfile{chapters/ch1}", "\\usepackage{subfiles}\n"),
            "chapters/ch1.tex": (
                "\\documentclass[../main.tex]{subfiles}\n\\usepackage{subpreamble}\n\\begin{document}\n"
                "Body of chapter one.\n\\input{fig}\n\\end{document}\nafter-the-end\n"
            ),
            "chapters/fig.tex": "figure-in-chapters",
            "fig.tex": "WRONG-root-fig",
        },
    )
    assert find_main_file(tmp_path)[0] == "main.tex"  # the subfile is a candidate, but included
    doc = flatten(tmp_path)
    assert "Body of chapter one." in doc.text and "figure-in-chapters" in doc.text
    for absent in ("subpreamble", "after-the-end", "WRONG", "[../main.tex]{subfiles}"):
        assert absent not in doc.text
    assert doc.text.count("\\end{document}") == 1
    assert where(doc, "Body of chapter one.") == ("chapters/ch1.tex", 4)


def test_text_after_end_document_and_endinput_is_dropped(tmp_path: Path):
    write(
        tmp_path,
        {
            "main.tex": document("\\input{part}\nend-of-body") + "junk after the end\n\\input{never}\n",
            "part.tex": "part-text \\endinput still-on-the-line\nNOT-READ\n",
            "never.tex": "NEVER",
        },
    )
    doc = flatten(tmp_path)
    assert "part-text" in doc.text and "still-on-the-line" in doc.text
    assert "NOT-READ" not in doc.text and "junk after" not in doc.text and "NEVER" not in doc.text
    assert doc.text.endswith("\\end{document}")


def test_computed_arguments_are_not_followed(tmp_path: Path):
    write(tmp_path, {"main.tex": document("\\newcommand{\\inp}[1]{\\input{figs/#1}}\n\\inp{a}")})
    doc = flatten(tmp_path)
    assert any("computed argument" in p for p in doc.problems)
    assert "\\newcommand{\\inp}[1]{\\input{figs/#1}}" in doc.text


# --------------------------------------------------------------------------- crafted trees: cleaning


def test_percent_comments(tmp_path: Path):
    body = (
        "alpha % trailing remark\n"
        "% a whole comment line\n"
        "   % an indented one\n"
        "beta 50\\% kept\\\\% after a line break\n"
        "gamma%\n"
        "delta\n"
    )
    write(tmp_path, {"main.tex": document(body)})
    doc = flatten(tmp_path)
    for gone in ("trailing remark", "whole comment", "indented one", "after a line break"):
        assert gone not in doc.text
    assert "alpha \nbeta 50\\% kept\\\\\ngamma\ndelta" in doc.text  # comment-only lines vanish entirely
    assert where(doc, "beta") == ("main.tex", 6)
    assert where(doc, "delta") == ("main.tex", 8)


def test_iffalse_blocks_respect_nesting(tmp_path: Path):
    body = (
        "visible-1\n"
        "\\iffalse\n"
        "hidden-1 \\ifx\\a\\b hidden-2 \\else hidden-3 \\fi hidden-4\n"
        "\\ifnum1=1 hidden-5 \\fi\n"
        "\\input{never}\n"
        "\\fi\n"
        "visible-2 \\iffalse inline-hidden\\fi visible-3\n"
        "\\iffalse $a \\iff b$ hidden-6 \\fi\n"
        "\\iffalse hidden-7 \\else visible-4 \\fi\n"
        "\\iftrue visible-5 \\else hidden-8 \\fi\n"
        "\\newif\\ifdraft\n"
        "\\iffalse \\ifdraft hidden-9 \\fi hidden-10 \\fi\n"
        "\\let\\ifmine\\iffalse\n"
        "visible-6\n"
        "% \\iffalse in a comment\n"
        "visible-7\n"
        "\\iffalse % \\fi inside a comment does not close\n"
        "hidden-11\n"
        "\\fi\n"
        "visible-8"
    )
    write(tmp_path, {"main.tex": document(body), "never.tex": "NEVER"})
    doc = flatten(tmp_path)
    assert "hidden" not in doc.text and "NEVER" not in doc.text
    for k in range(1, 9):
        assert f"visible-{k}" in doc.text
    assert "never.tex" not in doc.files
    assert where(doc, "visible-2") == ("main.tex", 9)
    assert where(doc, "visible-8") == ("main.tex", 22)
    assert "visible-1\nvisible-2" in doc.text  # the whole-line block leaves no blank line


def test_iffalse_inside_a_definition_or_unclosed_is_left_alone(tmp_path: Path):
    body = "\\def\\skipit{\\iffalse}\n\\def\\endskipit{\\fi}\nkept-text\n"
    write(tmp_path / "def", {"main.tex": document(body)})
    doc = flatten(tmp_path / "def")
    assert "\\def\\skipit{\\iffalse}" in doc.text and "kept-text" in doc.text
    assert doc.problems == []
    write(tmp_path / "open", {"main.tex": document("\\iffalse never closed\nstill-here")})
    doc = flatten(tmp_path / "open")
    assert "still-here" in doc.text
    assert any("without a matching" in p for p in doc.problems)


def test_comment_environments(tmp_path: Path):
    body = (
        "shown-1\n"
        "\\begin{comment}\nsecret-1 \\input{never}\n\\end{comment}\n"
        "shown-2\n"
        "\\begin{hide}secret-2\\end{hide}\n"
        "shown-3"
    )
    preamble = "\\usepackage{comment}\n\\excludecomment{hide}\n"
    write(tmp_path, {"main.tex": document(body, preamble), "never.tex": "NEVER"})
    doc = flatten(tmp_path)
    assert "secret" not in doc.text and "NEVER" not in doc.text
    assert "shown-1\nshown-2\nshown-3" in doc.text
    assert where(doc, "shown-3") == ("main.tex", 11)


def test_verbatim_keeps_percent(tmp_path: Path):
    body = (
        "\\begin{verbatim}\n50% of a verbatim line\n\\input{never}\n\\end{verbatim}\n"
        "\\begin{lstlisting}[language=Python]\nx = 1 % 2\n\\end{lstlisting}\n"
        "\\begin{Verbatim}\n%fancy\n\\end{Verbatim}\n"
        "\\begin{minted}{python}\nprint('%d' % 3)\n\\end{minted}\n"
        "\\begin{lean}\n-- 100% lean\n\\end{lean}\n"
        "inline \\verb|a%b| and \\verb+c%d+ and \\lstinline{e%f} % gone-1\n"
        "\\url{https://example.org/a%20b} and \\href{https://x.org/%7e}{link} % gone-2\n"
        "after % gone-3"
    )
    write(tmp_path, {"main.tex": document(body, "\\lstnewenvironment{lean}{}{}\n"), "never.tex": "NEVER"})
    doc = flatten(tmp_path)
    for kept in ("50% of a verbatim line", "\\input{never}", "x = 1 % 2", "%fancy", "print('%d' % 3)", "-- 100% lean",
                 "\\verb|a%b|", "\\verb+c%d+", "\\lstinline{e%f}", "\\url{https://example.org/a%20b}",
                 "\\href{https://x.org/%7e}{link}"):  # fmt: skip
        assert kept in doc.text, kept
    assert "gone" not in doc.text and "NEVER" not in doc.text
    assert where(doc, "after") == ("main.tex", 22)


def test_crlf_and_latin1_sources(tmp_path: Path):
    write(
        tmp_path,
        {
            "main.tex": document("first\r\n% comment\r\nsecond\r\n\\input{old}").encode(),
            "old.tex": "Th\xe9or\xe8me\n".encode("latin-1"),
        },
    )
    doc = flatten(tmp_path)
    assert "\r" not in doc.text
    assert where(doc, "second") == ("main.tex", 5)
    assert "Théorème" in doc.text
    assert doc.encodings["old.tex"] == "cp1252" and doc.encodings["main.tex"] == "utf-8"
    assert where(doc, "Théorème") == ("old.tex", 1)


# --------------------------------------------------------------------------- main file detection


def test_main_file_choice(tmp_path: Path):
    full = document("x")
    write(tmp_path / "named", {"main.tex": full, "zzz.tex": full + "%" * 500})
    assert find_main_file(tmp_path / "named")[0] == "main.tex"
    write(tmp_path / "largest", {"a.tex": full, "b.tex": document("a much longer body " * 20)})
    assert find_main_file(tmp_path / "largest") == ("b.tex", ["b.tex", "a.tex"])
    write(
        tmp_path / "commented",
        {"notes.tex": "%\\documentclass{article}\n\\begin{document}\n", "paper2.tex": full, "body.tex": "no class"},
    )
    assert find_main_file(tmp_path / "commented") == ("paper2.tex", ["paper2.tex"])
    big_figure = "\\documentclass{standalone}\n" + "\\begin{document}x\\end{document}" * 40
    write(tmp_path / "standalone", {"fig/plot.tex": big_figure, "paper.tex": full})
    assert find_main_file(tmp_path / "standalone")[0] == "paper.tex"
    write(tmp_path / "none", {"a.tex": "\\section{no document}"})
    assert find_main_file(tmp_path / "none") == (None, [])
    doc = flatten(tmp_path / "none")
    assert doc.main_file is None and doc.text == "" and doc.problems


def test_explicit_main_and_missing_main(tmp_path: Path):
    write(tmp_path, {"one.tex": document("ONE"), "two.tex": document("TWO")})
    assert "TWO" in flatten(tmp_path, "two.tex").text
    doc = flatten(tmp_path, "three.tex")
    assert doc.main_file is None and "not found" in doc.problems[0]
    assert flatten(tmp_path, "../one.tex").main_file is None


# --------------------------------------------------------------------------- the document object


def test_locate_and_json_round_trip(tmp_path: Path):
    write(tmp_path, {"main.tex": document("\\input{sec}\ntail"), "sec.tex": "% head\nsection-text\nmore"})
    doc = flatten(tmp_path)
    assert doc.locate(0) == ("main.tex", 1)
    assert where(doc, "section-text") == ("sec.tex", 2)
    assert where(doc, "more") == ("sec.tex", 3)
    assert where(doc, "tail") == ("main.tex", 4)
    assert doc.locate(len(doc.text))[0] == "main.tex"
    with pytest.raises(ValueError):
        doc.locate(len(doc.text) + 1)
    with pytest.raises(ValueError):
        doc.locate(-1)
    data = json.loads(json.dumps(doc.to_dict()))
    assert all(len(seg) == 3 for seg in data["source_map"])
    again = FlatDocument.from_dict(data)
    assert again.text == doc.text
    assert [again.locate(i) for i in range(len(doc.text))] == [doc.locate(i) for i in range(len(doc.text))]
    with pytest.raises(ValueError):
        FlatDocument("", None).locate(0)
