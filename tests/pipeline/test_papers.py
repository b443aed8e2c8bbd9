"""Papers -> main theorems on the real paper sources, through the CLI and the store."""

from __future__ import annotations

import io
import json
import re
import tarfile

import pytest
import sqlalchemy as sa
from helpers.paths import SHARED
from typer.testing import CliRunner

from theorembench.cli import app
from theorembench.store import Store
from theorembench.store.papers import PaperRepo

PAPERS = SHARED / "data" / "papers"
runner = CliRunner()


def manifest() -> list[dict]:
    path = PAPERS / "manifest.json"
    if not path.is_file():
        pytest.skip("shared paper data not found")
    return json.loads(path.read_text())


def by_name(name: str) -> dict:
    return next(p for p in manifest() if p["short_name"] == name)


def add(*paths, extra=()):
    res = runner.invoke(app, ["papers", "add", *map(str, paths), "--no-llm", *extra], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return [line for line in res.output.splitlines() if line.strip()]


def show(paper_id: str) -> dict:
    res = runner.invoke(app, ["papers", "show", paper_id, "--json"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def norm(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("name", ["carleson-blueprint", "sag-projective", "tao-factorial", "equational-theories",
                                  "cholesky-selection", "bb5-busy-beaver"])  # fmt: skip
def test_rule_path_matches_ground_truth(name):
    entry = by_name(name)
    lines = add(PAPERS / name / "eprint.tar.gz")
    assert len(lines) == 1
    paper_id = lines[0].split()[0]
    assert paper_id.startswith("local:")
    data = show(paper_id)
    truth = entry["main_theorem"]
    record = data["main_theorem"]["record"]
    if truth is None:
        assert record is None, record and record["theorem"]
        assert data["main_theorem"]["path"] == "none"
        assert "no theorem-like environment" in data["main_theorem"]["reason"] or "no Introduction" in data["main_theorem"]["reason"]
        return
    th = record["theorem"]
    assert record["extraction_path"] == "rule"
    assert th["env_name"] == truth["environment"] or (truth["environment"] == "restatable" and th["env_name"] == "theorem")
    assert th["label"] == truth["label"]
    assert record["source"]["file"] == truth["file"]
    assert abs(record["source"]["line"] - truth["line"]) <= 1
    assert norm(truth["body_first200_raw"])[:80] in norm(th["content"])
    for key in ("ref_dict", "pre_theorem_intro_text", "context", "full_context", "expanded_theorem",
                "post_theorem_intro_text"):  # fmt: skip
        assert key in record
    assert 0 < len(record["context"]) <= 4000 and len(record["full_context"]) <= 12000
    assert record["pre_theorem_intro_text_len"] == len(record["pre_theorem_intro_text"])


def test_carleson_theorem_is_self_contained():
    paper_id = add(PAPERS / "carleson-blueprint" / "eprint.tar.gz")[0].split()[0]
    record = show(paper_id)["main_theorem"]["record"]
    expanded = record["expanded_theorem"]
    assert r"\eqref{eq:trig-series}" not in expanded and r"\eqref{eq:fourier-coefficients}" not in expanded
    assert "eq:trig-series" in record["ref_dict"] and "eq:fourier-coefficients" in record["ref_dict"]
    assert r"\leanok" not in expanded and r"\lean{" not in expanded and r"\uses{" not in expanded
    clean = norm(by_name("carleson-blueprint")["main_theorem"]["body_first200_clean"])
    assert clean[:60] in norm(expanded)
    assert record["theorem_title"] == "classical Carleson"


def test_rerun_skips_done_work_and_ids_are_stable(tmp_path):
    first = add(PAPERS / "tao-factorial" / "eprint.tar.gz")[0]
    with Store(tmp_path / "home" / "theorembench.db") as store:
        created = store.fetch(sa.text("SELECT created_at FROM theorems"))[0][0]
    second = add(PAPERS / "tao-factorial" / "eprint.tar.gz")[0]
    assert first == second
    with Store(tmp_path / "home" / "theorembench.db") as store:
        rows = store.fetch(sa.text("SELECT created_at FROM theorems"))
        assert len(rows) == 1 and rows[0][0] == created


def test_single_file_gz_and_folder_sources():
    gz_line = add(PAPERS / "tao-factorial" / "eprint.gz")[0]
    folder_line = add(PAPERS / "bb5-busy-beaver" / "src")[0]
    assert "theorem \\label{main}" in gz_line
    assert "theorem \\label{th:BB5}" in folder_line


def test_broken_inputs_are_recorded_and_the_run_goes_on(tmp_path):
    corrupt = tmp_path / "corrupt.tar.gz"
    corrupt.write_bytes(b"\x1f\x8b\x08\x00" + b"not really gzip" * 10)
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(b"%PDF-1.5\n%\xe2\xe3\n1 0 obj\n")
    notex = tmp_path / "notex.tar.gz"
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        data = b"just a readme"
        info = tarfile.TarInfo("README")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    notex.write_bytes(buf.getvalue())
    lines = add(corrupt, pdf, notex, PAPERS / "tao-factorial" / "eprint.tar.gz")
    assert len(lines) == 4
    assert "failed" in lines[0]
    assert "skipped" in lines[1] and "PDF" in lines[1]
    assert "no main .tex file" in lines[2]
    assert "theorem \\label{main}" in lines[3]


def test_llm_fallback_finds_a_statement(fake_env, monkeypatch):
    """equational-theories states no theorem in its introduction: the LLM extractor is asked."""
    src = (PAPERS / "equational-theories" / "src").rglob("*.tex")
    statement = None
    for path in src:
        m = re.search(r"\\begin\{theorem\}(?:\[[^\]]*\])?(.*?)\\end\{theorem\}", path.read_text(errors="replace"), re.DOTALL)
        if m and len(m.group(1).split()) > 12:
            statement = m.group(1).strip()
            break
    assert statement
    reply = json.dumps({"found": True, "environment": "theorem", "statement": statement, "reason": "central claim"})
    fake_env.set_script({"default": {"reply": reply}})
    res = runner.invoke(app, ["papers", "add", str(PAPERS / "equational-theories" / "eprint.tar.gz"),
                              "--extractor-model", "openai-api/fake/extractor"], catch_exceptions=False)  # fmt: skip
    assert res.exit_code == 0, res.output
    paper_id = res.output.split()[0]
    data = show(paper_id)
    record = data["main_theorem"]["record"]
    assert record["extraction_path"] == "llm"
    assert record["theorem"]["start_pos"] >= 0  # located in the source
    assert data["main_theorem"]["call_ids"]
    body = fake_env.requests[0]["body"]
    assert body["response_format"]["type"] == "json_schema"
    assert "at most one" in body["messages"][0]["content"]


# stated in equational-theories' metatheorems.tex (\label{thm:canon}); its introduction states no theorem
CANONIZER = "Whenever $R$ is weakly collapsing, a weak canonizer, and non-overlapping, then $C_R$ is a canonizer."


def add_with_fake(name: str):
    res = runner.invoke(app, ["papers", "add", str(PAPERS / name / "eprint.tar.gz"),
                              "--extractor-model", "openai-api/fake/extractor"], catch_exceptions=False)  # fmt: skip
    assert res.exit_code == 0, res.output
    return res.output.split()[0], res.output


def fallback_reply(statement: str) -> str:
    return json.dumps({"found": True, "environment": "theorem", "statement": statement, "reason": "central claim"})


def test_llm_fallback_malformed_reply_fails_and_runs_again(fake_env):
    """A reply still malformed after the repairs is a failure, not an outcome: the next run asks again."""
    manifest()
    fake_env.set_script({"default": {"reply": "I think the main theorem is about magmas."}})
    paper_id, output = add_with_fake("cholesky-selection")
    assert "failed" in output and "malformed model output" in output and "no valid JSON" in output
    assert fake_env.stats()["completed"] == 3  # one ask + two bounded repair turns
    data = show(paper_id)
    assert data["main_theorem"] is None  # nothing stored as a theorem
    assert data["paper"]["status"] == "failed" and "runs again next time" in data["paper"]["reason"]
    # the next run asks the model again and stores its answer
    fake_env.set_script({"default": {"reply": json.dumps({"found": False, "statement": "", "reason": "none"})}})
    paper_id, output = add_with_fake("cholesky-selection")
    assert fake_env.stats()["completed"] >= 1
    data = show(paper_id)
    assert data["paper"]["status"] == "extracted"
    assert data["main_theorem"]["path"] == "none" and "found no primary theorem" in data["main_theorem"]["reason"]


def test_llm_fallback_throttled_fails_and_runs_again(fake_env):
    """429 on every attempt: no theorem row, the paper is failed with the reason; a healthy rerun extracts it."""
    manifest()
    fake_env.set_script({"default": {"reply": "x", "faults": [{"kind": "429", "times": 100, "retry_after": 0}]}})
    paper_id, output = add_with_fake("equational-theories")
    assert "failed" in output and "model call failed" in output
    data = show(paper_id)
    assert data["main_theorem"] is None
    assert data["paper"]["status"] == "failed" and "LLM fallback failed" in data["paper"]["reason"]
    fake_env.set_script({"default": {"reply": fallback_reply(CANONIZER)}})
    paper_id, output = add_with_fake("equational-theories")
    data = show(paper_id)
    assert data["paper"]["status"] == "extracted"
    assert data["main_theorem"]["record"]["extraction_path"] == "llm"


def test_llm_fallback_statement_not_in_the_paper_is_rejected(fake_env):
    manifest()
    invented = "Every finite magma in which $x \\diamond y = y \\diamond x$ holds has exactly seventeen elements."
    fake_env.set_script({"default": {"reply": fallback_reply(invented)}})
    paper_id, output = add_with_fake("equational-theories")
    assert "not found in the paper" in output
    theorem = show(paper_id)["main_theorem"]
    assert theorem["record"] is None and theorem["path"] == "none"
    assert "rejected: not found in the paper" in theorem["reason"] and "threshold 0.9" in theorem["reason"]


def test_llm_fallback_statement_with_other_whitespace_is_accepted(fake_env):
    manifest()
    respaced = "Whenever $R$ is  weakly collapsing,\n  a weak canonizer, and non-overlapping,\n then $C_R$ is a canonizer."
    fake_env.set_script({"default": {"reply": fallback_reply(respaced)}})
    paper_id, _ = add_with_fake("equational-theories")
    record = show(paper_id)["main_theorem"]["record"]
    assert record["extraction_path"] == "llm"
    assert record["theorem"]["content"] == CANONIZER  # the paper's own text is kept
    assert record["theorem"]["start_pos"] >= 0


def test_locate_exact_after_normalisation_fuzzy_and_absent():
    from theorembench.pipeline.theorem_fallback import locate

    text = ("Intro text.\n\\begin{theorem}\\label{t}Let $G$ be a finite group. Then $G$ is % a comment\n"
            "  cyclic if its order is prime.\\end{theorem}\nMore text.")  # fmt: skip
    where, ratio = locate(text, "Let $G$ be a finite group.\nThen $G$ is cyclic if its order is prime.")
    assert ratio == 1.0 and where is not None
    assert text[where.start : where.end] == ("Let $G$ be a finite group. Then $G$ is % a comment\n"
                                             "  cyclic if its order is prime.")  # fmt: skip
    # one letter wrong in 52 normalised characters: fuzzy, above 0.9
    where, ratio = locate(text, "Let $G$ be a finite groop. Then $G$ is cyclic if its order is prime.")
    assert where is not None and 0.9 <= ratio < 1.0
    assert text[where.start : where.end].startswith("Let $G$") and text[where.start : where.end].endswith("prime.")
    # another claim altogether
    where, ratio = locate(text, "Every abelian group of order four is isomorphic to the Klein group.")
    assert where is None and ratio < 0.9


def test_papers_list_and_show_text(tmp_path):
    add(PAPERS / "tao-factorial" / "eprint.tar.gz", PAPERS / "cholesky-selection" / "eprint.tar.gz")
    res = runner.invoke(app, ["papers", "list"], catch_exceptions=False)
    assert res.exit_code == 0 and "theorem main" in res.output and "none" in res.output
    with Store(tmp_path / "home" / "theorembench.db") as store:
        ids = [p["id"] for p in PaperRepo(store).list()]
    res = runner.invoke(app, ["papers", "show", ids[0]], catch_exceptions=False)
    assert "expanded theorem" in res.output
    res = runner.invoke(app, ["papers", "show", "nope"])
    assert res.exit_code == 2 and "no paper 'nope'" in res.output


def test_fetch_month_from_a_mirror(tmp_path):
    """`papers fetch` against a local arXiv mirror: metadata, e-prints (tar.gz, PDF-only, missing), theorems."""
    from theorembench.sources import arxiv as ax
    from theorembench.testing.arxiv_mirror import ArxivMirror

    api = SHARED / "data" / "arxiv_api"
    feed, empty = api / "query_testing_start10_max10.xml", api / "id_0000.0000_no_results.xml"
    routes = [({"search_query": re.compile("submittedDate"), "start": "0"}, feed),
              ({"search_query": re.compile("submittedDate")}, empty)]  # fmt: skip
    eprints = {"2403.16981v2": PAPERS / "tao-factorial" / "eprint.tar.gz",
               "2004.03322v1": b"%PDF-1.5\n%\xe2\xe3\n"}  # fmt: skip
    ax.LIMITER.reset()
    with ArxivMirror(routes, eprints=eprints) as mirror:
        args = ["papers", "fetch", "--month", "2024-03", "--max", "3", "--base-url", mirror.base_url,
                "--delay", "0", "--no-llm"]  # fmt: skip
        res = runner.invoke(app, args, catch_exceptions=False)
        assert res.exit_code == 0, res.output
        assert "3 papers for 2024-03" in res.output
        first_requests = len(mirror.requests)
        # a rerun downloads nothing it has: only the failed download is tried again
        res = runner.invoke(app, args, catch_exceptions=False)
        assert res.exit_code == 0
        again = [r.path for r in mirror.requests[first_requests:] if r.path.startswith("/e-print/")]
        assert again == ["/e-print/1912.09881v1"]
    with Store(tmp_path / "home" / "theorembench.db") as store:
        repo = PaperRepo(store)
        papers = {p["id"]: p for p in repo.list(month="2024-03")}
        assert set(papers) == {"2403.16981v2", "2004.03322v1", "1912.09881v1"}
        tao = papers["2403.16981v2"]
        assert tao["primary_category"] == "math.ST" and tao["status"] == "extracted"
        assert repo.theorem("2403.16981v2")["record"]["theorem"]["label"] == "main"
        assert papers["2004.03322v1"]["status"] == "skipped" and "PDF" in papers["2004.03322v1"]["reason"]
        assert papers["1912.09881v1"]["status"] == "failed" and "download failed" in papers["1912.09881v1"]["reason"]


def test_fetch_records_an_eprint_over_the_cap(tmp_path):
    """`papers fetch --max-eprint-mb`: an e-print over the cap (14,535 bytes against 10,485) is failed with
    the reason, and one under it goes through."""
    from theorembench.sources import arxiv as ax
    from theorembench.testing.arxiv_mirror import ArxivMirror, Reply

    api = SHARED / "data" / "arxiv_api"
    routes = [({"search_query": re.compile("submittedDate"), "start": "0"}, api / "query_testing_start10_max10.xml"),
              ({"search_query": re.compile("submittedDate")}, api / "id_0000.0000_no_results.xml")]  # fmt: skip
    tao = Reply(200, PAPERS / "tao-factorial" / "eprint.tar.gz", "application/octet-stream", send_length=False)
    ax.LIMITER.reset()
    with ArxivMirror(routes, eprints={"2403.16981v2": tao, "2004.03322v1": b"%PDF-1.5\n%\xe2\xe3\n"}) as mirror:
        res = runner.invoke(app, ["papers", "fetch", "--month", "2024-03", "--max", "2", "--base-url", mirror.base_url,
                                  "--delay", "0", "--no-llm", "--max-eprint-mb", "0.01"], catch_exceptions=False)  # fmt: skip
        assert res.exit_code == 0, res.output
    with Store(tmp_path / "home" / "theorembench.db") as store:
        papers = {p["id"]: p for p in PaperRepo(store).list(month="2024-03")}
    assert papers["2403.16981v2"]["status"] == "failed"
    assert "larger than the cap of 10485 bytes" in papers["2403.16981v2"]["reason"]
    assert papers["2004.03322v1"]["status"] == "skipped"
    assert not list((tmp_path / "home" / "eprints").glob("2403.16981*"))


def test_fetch_rejects_a_bad_month():
    res = runner.invoke(app, ["papers", "fetch", "--month", "2024-13", "--base-url", "http://127.0.0.1:9", "--no-llm"])
    assert res.exit_code == 2 and "month" in res.output.lower()


def test_source_map_is_stored_and_traces_the_theorem():
    from theorembench.latex.flatten import FlatDocument

    paper_id = add(PAPERS / "carleson-blueprint" / "eprint.tar.gz")[0].split()[0]
    record = show(paper_id)["main_theorem"]["record"]
    flat = FlatDocument.from_dict(json.loads(open(record["source"]["flat_document"]).read()))
    th = record["theorem"]
    assert flat.text[th["start_pos"] : th["end_pos"]] == th["content"]
    file, line = flat.locate(th["start_pos"])
    assert file == "chapter/main.tex" and line in (105, 106)


def test_non_utf8_source_is_decoded_and_recorded(tmp_path):
    folder = tmp_path / "latin"
    folder.mkdir()
    tex = (
        "\\documentclass{amsart}\n\\newtheorem{theorem}{Theorem}\n\\begin{document}\n"
        "\\section{Introduction}\nLet $G$ be a group (caf\u00e9 na\u00efve).\n"
        "\\begin{theorem}\\label{t}Every finite group of prime order is cyclic.\\end{theorem}\n"
        "\\end{document}\n"
    )
    (folder / "paper.tex").write_bytes(tex.encode("latin-1"))
    line = add(folder)[0]
    assert "theorem \\label{t}" in line
    record = show(line.split()[0])["main_theorem"]["record"]
    assert any("not UTF-8" in p for p in record["problems"])
    assert "caf\u00e9" in record["context"]


HOSTILE_TITLE = "Groups [/b] and [link=http://x]t[/link]"


def test_titles_and_errors_with_markup_print_literally(tmp_path):
    """A paper title and an error message holding Rich markup print as written: no crash, no link."""
    folder = tmp_path / "hostile"
    folder.mkdir()
    (folder / "paper.tex").write_text(
        "\\documentclass{amsart}\n\\newtheorem{theorem}{Theorem}\n\\title{" + HOSTILE_TITLE + "}\n"
        "\\begin{document}\n\\maketitle\n\\section{Introduction}\n"
        "\\begin{theorem}\\label{t}Every finite group of prime order is cyclic.\\end{theorem}\n\\end{document}\n"
    )
    paper_id = add(folder)[0].split()[0]
    res = runner.invoke(app, ["papers", "list"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert "Groups [/b] and" in res.output and "[link=http://x]t[/" in res.output  # the cell wraps at 80 columns
    res = runner.invoke(app, ["papers", "show", paper_id], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert f"{paper_id}  extracted  {HOSTILE_TITLE}" in res.output
    res = runner.invoke(app, ["papers", "show", "x[/b]y[link=http://x]t[/link]"], catch_exceptions=False)
    assert res.exit_code == 2
    assert "error: no paper 'x[/b]y[link=http://x]t[/link]' in the store" in res.output


LEMMA_FIRST = r"""\documentclass{amsart}
\newtheorem{theorem}{Theorem}[section]
\newtheorem{lemma}[theorem]{Lemma}
\begin{document}
\section{Introduction}
We study widgets. A first observation is the following.
\begin{lemma}\label{lem:easy}Every widget has a colour.\end{lemma}
Our main result, proved in Section 2, says much more.
\section{The main theorem}
\begin{theorem}\label{thm:main}Every widget of odd degree is blue, and every blue widget has odd degree.\end{theorem}
\begin{proof}By counting.\end{proof}
\end{document}
"""


def test_a_lemma_in_the_introduction_is_not_the_main_theorem_the_llm_fallback_decides(fake_env, tmp_path):
    # issue 21, item 5: the Introduction holds only a lemma; the theorem is stated in Section 2
    folder = tmp_path / "lemma-first"
    folder.mkdir()
    (folder / "main.tex").write_text(LEMMA_FIRST)
    statement = "Every widget of odd degree is blue, and every blue widget has odd degree."
    fake_env.set_script({"default": {"reply": fallback_reply(statement)}})
    res = runner.invoke(app, ["papers", "add", str(folder), "--extractor-model", "openai-api/fake/extractor"],
                        catch_exceptions=False)  # fmt: skip
    assert res.exit_code == 0, res.output
    data = show(res.output.split()[0])
    record = data["main_theorem"]["record"]
    assert record["extraction_path"] == "llm" and len(fake_env.requests) == 1
    assert statement in record["theorem"]["content"] and "has a colour" not in record["theorem"]["content"]
    assert "lemma" in record["extraction_reason"] or "lemma" in data["main_theorem"]["reason"]
