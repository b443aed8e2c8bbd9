"""What the LMB stages read, seen from the scripted LLM server (issue 9, items 18 and 19).

The sketch request carries the theorem's own proof (and the step says where it was
found); the stem request carries the theorem only, as in the paper's stage 4a, while the
theorem-only repair pass gets the recovered context. The chain and its replies are the
ones of ``test_lmb_build.py``.
"""

from __future__ import annotations

from helpers.lmb import build, papers, script, steps, write_config  # noqa: F401 - papers is a fixture

SKETCH_REPLY = "Inclusion-exclusion gives an alternating sum; compare it with the series of 1/e."


def _requests(fake_env, marker: str) -> list[str]:
    return [r["body"]["messages"][1]["content"] for r in fake_env.requests
            if marker in r["body"]["messages"][0]["content"]]  # fmt: skip


def _derangements(paper_ids: list[str]) -> list[str]:
    return [pid for pid in paper_ids if "derangement" in pid.lower()] or paper_ids[:1]


def test_sketch_reads_the_theorems_own_proof(fake_env, papers, tmp_path):  # noqa: F811
    fake_env.set_script(script())
    _res, split, _ = build(tmp_path, _derangements(papers))
    (sketch_request,) = _requests(fake_env, "summarising how a theorem is proved")
    proof_block = sketch_request[sketch_request.index("## Proof"):]
    # sections/proof.tex: the first proof after the theorem is Lemma~\ref{lem:fixing}'s, the second the theorem's
    assert "For $i \\in [n]$ let $A_i" in proof_block
    assert "A permutation fixing every point of $S$ is determined" not in proof_block
    (row,) = steps(tmp_path, "sketch")
    assert '"proof_source": "named proof at offset' in row["output"]
    assert "Proof of Theorem~\\\\ref{thm:nearest-integer}" in row["output"]
    assert split["full"] and all(it["proof_source"].startswith("named proof") for it in split["full"])


def test_stem_reads_the_theorem_only_and_the_repair_reads_the_context(fake_env, papers, tmp_path):  # noqa: F811
    fake_env.set_script(script())
    _res, split, _ = build(tmp_path, _derangements(papers))
    theorem = split["full"][0]["expanded_theorem"]
    context = (split["full"][0]["full_context"] or split["full"][0]["context"]).strip()
    (stem_request,) = _requests(fake_env, "You write the question stem and the keyed answer")
    assert theorem in stem_request
    assert SKETCH_REPLY not in stem_request and "## Proof sketch" not in stem_request
    assert "## Context from the paper" not in stem_request and context[:200] not in stem_request
    (repair_request,) = _requests(fake_env, "question stem self-contained")
    assert "## Context from the paper" in repair_request and context[:200] in repair_request
    assert SKETCH_REPLY not in repair_request


def test_stem_inputs_setting_restores_context_and_sketch(fake_env, papers, tmp_path):  # noqa: F811
    fake_env.set_script(script())
    cfg = write_config(tmp_path, generation={"stem_inputs": "theorem+context+sketch"})
    build(tmp_path, _derangements(papers), cfg=cfg)
    (stem_request,) = _requests(fake_env, "You write the question stem and the keyed answer")
    assert SKETCH_REPLY in stem_request and "## Context from the paper" in stem_request


def test_sketch_reads_the_introduction_after_the_theorem_first_and_records_its_sources(fake_env, papers,  # noqa: F811
                                                                                       tmp_path):  # fmt: skip
    # issue 21, item 1: the release's sketches quote the Introduction's text after the theorem; the proof comes second
    fake_env.set_script(script())
    _res, split, _ = build(tmp_path, _derangements(papers))
    item = split["full"][0]
    after = item["post_theorem_intro_text"].strip()
    assert len(after) > 100  # the sample paper outlines its argument right after the theorem
    (sketch_request,) = _requests(fake_env, "summarising how a theorem is proved")
    intro_at = sketch_request.index("## Introduction text after the theorem")
    assert after[:200] in sketch_request and intro_at < sketch_request.index(after[:200])
    assert intro_at < sketch_request.index("## Proof\n")
    assert "## Context from the paper" not in sketch_request  # the context is not a sketch source by default
    sources = item["sketch_sources"]
    assert sources["intro"] == len(after) and sources["proof"] > 0 and "context" not in sources
    assert sources["proof_source"].startswith("named proof")


def test_sketch_inputs_setting_adds_the_context_or_leaves_the_introduction_out(fake_env, papers, tmp_path):  # noqa: F811
    fake_env.set_script(script())
    cfg = write_config(tmp_path, generation={"sketch_inputs": "proof+context"})
    _res, split, _ = build(tmp_path, _derangements(papers), cfg=cfg)
    (sketch_request,) = _requests(fake_env, "summarising how a theorem is proved")
    assert "## Introduction text after the theorem" not in sketch_request
    assert "## Context from the paper" in sketch_request
    assert set(split["full"][0]["sketch_sources"]) == {"proof", "context", "proof_source"}
