"""What the LMB stages read, seen from the scripted LLM server (issue 9, items 18 and 19).

The sketch request carries the theorem's own proof (and the step says where it was
found); the stem request carries the theorem only, as in the paper's stage 4a, while the
theorem-only repair pass gets the recovered context. The chain and its replies are the
ones of ``test_lmb_build.py``.
"""

from __future__ import annotations

from test_lmb_build import build, papers, script, steps, write_config  # noqa: F401 - papers is a fixture

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
