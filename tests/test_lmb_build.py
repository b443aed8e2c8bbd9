"""`theorembench lmb build`, every branch driven by the scripted LLM server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from importlib import resources
from pathlib import Path

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from conftest import PYTHON, cli_env
from theorembench.cli import app
from theorembench.evaluate.mcq.items import META_OPTION, load_dataset
from theorembench.methods.lmb.config import ConfigError, load_config
from theorembench.methods.lmb.pipeline import StageFailure, select_hard, validate_distractors
from theorembench.methods.lmb.surface import check_surface
from theorembench.store import Store

runner = CliRunner()
GEN, JUDGE, CAL = "openai-api/fake/gen", "openai-api/fake/judge", "openai-api/fake/cal"

A_TEXT = "For every integer $n \\ge 1$ one has $|D_n - n!/e| < 1/(n+1)$ and the sign of $D_n - n!/e$ is $(-1)^n$."
STEM = {"question": "Let $D_n$ be the number of permutations of $\\{1,\\dots,n\\}$ without fixed points. "
                    "What is the sharpest statement about the distance between $D_n$ and $n!/e$?",
        "correct_choice": {"label": "A", "text": A_TEXT}}  # fmt: skip


def distractors(marker: str = "", b_text: str | None = None, broken: str | None = None) -> str:
    texts = {
        "B": b_text or f"For every integer $n \\ge 1$ one has $|D_n - n!/e| < 1/(n+2)$ and the sign of $D_n - n!/e$ is $(-1)^n${marker}.",
        "C": "For every integer $n \\ge 1$ one has $|D_n - n!/e| < 1$ and $D_n$ is the integer nearest $n!/e$.",
        "D": "For every integer $n \\ge 1$ one has $|D_n - n!/e| < 1/(n+1)$ and the sign of $D_n - n!/e$ is $(-1)^{n+1}$.",
        "E": broken or "For every integer $n \\ge 2$ one has $|D_n - n!/e| < 1/n^2$ and the sign of $D_n - n!/e$ is $(-1)^n$.",
    }  # fmt: skip
    usage = [{"label": lab, "sketch_hook_type": "counting_estimate", "tampered_component": f"part {lab}",
              "template_used": t} for lab, t in zip("BCDE", ["boundary_range", "weaker_true", "stronger_trap", "wildcard"])]  # fmt: skip
    return json.dumps({"choices": [{"label": k, "text": v} for k, v in texts.items()],
                       "meta": {"weaker_true_label": "C", "false_labels": ["B", "D", "E"], "wildcard_false_label": "E"},
                       "sketch_usage_meta": usage})  # fmt: skip


def rubric(scores=(2, 2, 1, 1)) -> str:
    dims = dict(zip(("ALS", "TAS", "GPS", "DQS"), scores))
    return json.dumps({**{k: {"score": v, "justification": "ok"} for k, v in dims.items()},
                       "total_score": 8, "overall_assessment": "fine"})  # fmt: skip


def match(trivial: bool) -> str:
    return json.dumps({"match": trivial, "verdict": "stem-trivial" if trivial else "stem-nontrivial",
                       "score": 0.9 if trivial else 0.1, "reason": "compared"})  # fmt: skip


def script(**override) -> dict:
    """Replies routed by each stage's system prompt (see methods/lmb/prompts.py)."""
    replies = {
        "sketch": json.dumps({"sketch": "Inclusion-exclusion gives an alternating sum; compare it with the series of 1/e.",
                              "expanded_sketch": "Write D_n by inclusion-exclusion and bound the tail of the series."}),
        "classify": json.dumps({"categories": ["Inequality or Bound", "Universal"], "reason": "a sharp bound"}),
        "stem": json.dumps(STEM),
        "repair": json.dumps(STEM),
        "distractors": distractors(),
        "revise": distractors(),
        "rubric": rubric(),
        "stem_only": json.dumps({"answer": "It is at most one."}),
        "match": match(False),
        "latex": json.dumps({"text": "fixed"}),
        "calibrate": "I cannot decide.",
    }  # fmt: skip
    replies.update(override)
    routes = [
        ("summarising how a theorem is proved", "sketch"), ("You classify research theorems", "classify"),
        ("You write the question stem and the keyed answer", "stem"), ("question stem self-contained", "repair"),
        ("You write the four other options", "distractors"), ("You audit the other options", "revise"),
        ("You grade a multiple-choice question", "rubric"), ("Answer the research question you are given", "stem_only"),
        ("You compare a free-form answer", "match"), ("You fix the LaTeX syntax", "latex"),
        ("answering a multiple-choice question", "calibrate"),
    ]  # fmt: skip
    return {"rules": [{"match": pattern, "reply": replies[name]} for pattern, name in routes],
            "default": {"reply": "unexpected prompt"}}  # fmt: skip


@pytest.fixture
def papers(fake_env) -> list[str]:
    root = resources.files("theorembench.data") / "papers"
    folders = sorted(str(p) for p in Path(str(root)).iterdir() if p.is_dir())
    res = runner.invoke(app, ["papers", "add", *folders, "--no-llm"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return [line.split()[0] for line in res.output.splitlines() if line.strip()]


def write_config(tmp_path: Path, **sections) -> Path:
    base = {"latex": {"check": False}, "calibration": {"max_tokens": 100}}
    for key, values in sections.items():
        base.setdefault(key, {}).update(values)
    lines = []
    for section, values in base.items():
        lines.append(f"[{section}]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in values.items()]
    path = tmp_path / "lmb.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def build(tmp_path: Path, paper_ids: list[str], *extra: str, cfg: Path | None = None, calibrator: str = CAL):
    args = ["lmb", "build", "--month", "2026-11", "--generator", GEN, "--judge", JUDGE, "--calibrator", calibrator,
            "--out-dir", str(tmp_path / "out"), "--concurrency", "1", "--config", str(cfg or write_config(tmp_path))]
    for pid in paper_ids:
        args += ["--paper", pid]
    res = runner.invoke(app, [*args, *extra], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    split = {name: json.loads((tmp_path / "out" / f"qaEval_202611_{name}.json").read_text())
             for name in ("full", "ge5", "ge5_hard")}  # fmt: skip
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    return res, split, summary


def steps(tmp_path: Path, stage: str) -> list:
    with Store(tmp_path / "home" / "theorembench.db") as store:
        return store.fetch(sa.text("SELECT key, status, reason, output, call_ids FROM steps WHERE stage = :stage"
                                   " ORDER BY key"), {"stage": stage})  # fmt: skip


def test_full_chain_outputs_released_layout_and_funnel(fake_env, papers, tmp_path):
    # calls come one theorem at a time (concurrency 1), so reply sequences address theorems and variants
    stems = [json.dumps(dict(STEM, question=STEM["question"] + f" (Case {k}.)")) for k in range(3)]
    sets = [distractors(marker=f" (variant {k})") for k in range(6)]  # every item its own options
    # rubric: the 2nd item (theorem 1, alt1) scores 3 < 5; stem-only: theorem 2's stem is answerable alone
    s = script(stem=stems, repair=stems, distractors=sets, revise=sets,
               rubric=[rubric(), rubric((1, 1, 1, 0)), rubric(), rubric(), rubric(), rubric()],
               match=[match(False), match(True), match(False)])  # fmt: skip
    fake_env.set_script(s)
    res, split, summary = build(tmp_path, papers)
    full, ge5, hard = split["full"], split["ge5"], split["ge5_hard"]
    assert len(full) == 6 and len(ge5) == 5
    assert summary["funnel"] == {"theorems": 3, "generated": 6, "rubric": 5, "stem_nontrivial": 3, "hard": 2}
    assert {it["source_id"] for it in hard} == {papers[0], papers[2]}
    keys = {"id", "paper_link", "theorems_cnt", "theorem", "ref_dict", "pre_theorem_intro_text_len",
            "pre_theorem_intro_text", "context", "full_context", "post_theorem_intro_text_len",
            "post_theorem_intro_text", "sketch", "expanded_sketch", "expanded_theorem", "theorem_type", "mcq",
            "qa quality eval", "stem_triviality", "source_id", "variant", "candidate_source_key",
            "hard_selection_meta"}  # fmt: skip
    for item in full:
        assert keys <= set(item)
        assert item["variant"] in ("orig", "alt1") and item["id"] == f"{item['source_id']}::{item['variant']}"
        assert item["theorem_type"] == ["Inequality or Bound", "Universal"]
        assert item["candidate_source_key"].startswith(item["source_id"] + "::")
        mcq = item["mcq"]
        assert [c["label"] for c in mcq["choices"]] == ["B", "C", "D", "E"]
        assert mcq["correct_choice"]["text"] == (META_OPTION if item["substitution_resistant"] else A_TEXT)
        assert all(c["text"] != META_OPTION for c in mcq["choices"])
        for stage in ("sketch", "classify", "stem", "distractors", "rubric"):
            assert item["call_ids"][stage], stage
    assert any(it["substitution_resistant"] for it in full) and not all(it["substitution_resistant"] for it in full)
    for item in hard:
        meta = item["hard_selection_meta"]
        assert meta["selected_variant"] == item["variant"] and meta["model_is_correct"] is False
    # the output loads in `eval mcq` exactly like the released split
    assert len(load_dataset(tmp_path / "out" / "qaEval_202611_ge5_hard.json").items) == len(hard)
    fake_env.set_script({"default": {"reply": "\\boxed{A}"}})
    ev = runner.invoke(app, ["eval", "mcq", str(tmp_path / "out" / "qaEval_202611_full.json"), "--model", GEN,
                             "--out", str(tmp_path / "r.json")])  # fmt: skip
    assert ev.exit_code == 0, ev.output
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["all"]["total"] == 6
    # funnel, costs and rejections are printed and saved
    assert "funnel 202611" in res.output and "stem_only rejected" in res.output
    stages = {row["stage"]: row for row in summary["costs"]}
    assert stages["distractors"]["calls"] == 12  # 6 items x (generate + adversarial revision)
    assert stages["calibrate"]["calls"] == 3
    assert summary["rejections"]["rubric rejected"] == {"total score below 5": 1}
    assert summary["rejections"]["stem_only rejected"] == {"answerable from the stem alone": 2}


def test_rerun_pays_for_nothing(fake_env, papers, tmp_path):
    fake_env.set_script(script())
    _res, first, _ = build(tmp_path, papers)
    served = fake_env.stats()["completed"]
    _res, second, _ = build(tmp_path, papers)
    assert fake_env.stats()["completed"] == served
    assert [it["id"] for it in first["ge5_hard"]] == [it["id"] for it in second["ge5_hard"]]


def test_red_flag_regeneration_and_repair(fake_env, papers, tmp_path):
    flagged = dict(STEM, question="According to the theorem, " + STEM["question"])
    repaired = dict(STEM, question="Let $D_n$ (a derangement count) be as follows. " + STEM["question"])
    fake_env.set_script(script(stem=[json.dumps(flagged), json.dumps(STEM)], repair=json.dumps(repaired)))
    build(tmp_path, papers[:1])
    row = steps(tmp_path, "stem")[0]
    out = json.loads(row["output"])
    assert row["status"] == "ok" and len(out["red_flag_history"]) == 2
    assert out["red_flag_history"][0] and out["red_flag_history"][1] == []
    assert out["repaired"] and out["question"].startswith("Let $D_n$ (a derangement count)")
    assert len(json.loads(row["call_ids"])) == 3  # flagged, regenerated, repair


def test_stem_rejected_when_red_flags_persist(fake_env, papers, tmp_path):
    flagged = dict(STEM, question="Which of the following is the strongest result in the paper about $D_n$ and $n!/e$?")
    fake_env.set_script(script(stem=json.dumps(flagged)))
    _res, split, summary = build(tmp_path, papers[:1], cfg=write_config(tmp_path, generation={"max_regenerations": 1}))
    assert split["full"] == []
    row = steps(tmp_path, "stem")[0]
    assert row["status"] == "rejected" and "red flags after 2 attempts" in row["reason"]
    assert summary["funnel"]["generated"] == 0


def test_malformed_json_is_retried_boundedly_then_recorded_as_failed(fake_env, papers, tmp_path):
    fake_env.set_script(script(distractors="Sure! B is false, C is weaker..."))
    _res, split, summary = build(tmp_path, papers[:1])
    rows = steps(tmp_path, "distractors")
    assert len(rows) == 2 and all(r["status"] == "failed" for r in rows)
    assert "malformed model output" in rows[0]["reason"]
    assert len(json.loads(rows[0]["call_ids"])) == 3  # 1 + 2 bounded repair turns
    assert split["full"] == [] and "distractors failed" in summary["rejections"]


def test_surface_offenders_are_revised_then_rejected(fake_env, papers, tmp_path):
    long_b = "For every integer $n \\ge 1$ " + "and moreover every related quantity behaves as expected " * 6 + "."
    fake_env.set_script(script(distractors=distractors(b_text=long_b), revise=distractors(b_text=long_b)))
    build(tmp_path, papers[:1])
    rows = steps(tmp_path, "distractors")
    assert all(r["status"] == "rejected" and "option B is" in r["reason"] and "as long as option A" in r["reason"]
               for r in rows)  # fmt: skip
    requests = [r for r in fake_env.requests if "You audit the other options" in r["body"]["messages"][0]["content"]]
    assert any("option B is" in r["body"]["messages"][1]["content"] for r in requests)  # problems quoted back


@pytest.mark.skipif(not __import__("shutil").which("pdflatex"), reason="pdflatex not installed")
def test_invalid_latex_repair_then_drop(fake_env, papers, tmp_path):
    broken = "For every integer $n \\ge 1$ one has $|D_n - \\frac{n!}{e| < 1/n^2$ and the sign of $D_n$ is $(-1)^n$."
    still = json.dumps({"text": "For every $n \\ge 1$ one has $\\frac{n!}{e < 1/n^2$ and more $(-1)^n$."})
    fake_env.set_script(script(distractors=distractors(broken=broken), revise=distractors(broken=broken), latex=still))
    _res, split, summary = build(tmp_path, papers[:1], cfg=write_config(tmp_path, latex={"check": True, "repairs": 1}))
    rows = steps(tmp_path, "latex")
    assert rows and all(r["status"] == "rejected" and "choice E" in r["reason"] for r in rows)
    assert split["ge5_hard"] == [] and split["full"] == []
    # a repair that fixes the string lets the item through
    fixed = json.dumps({"text": "For every integer $n \\ge 2$ one has $|D_n - n!/e| < 1/n^2$ and the sign of $D_n - n!/e$ is $(-1)^n$."})
    fake_env.set_script(script(distractors=distractors(broken=broken), revise=distractors(broken=broken), latex=fixed))
    _res, split, _ = build(tmp_path, papers[:1], cfg=write_config(tmp_path, latex={"check": True, "repairs": 2}))
    assert len(split["full"]) == 2
    assert all(it["latex_check"]["checked"] for it in split["full"])


def test_calibration_drops_solved_sources_and_keeps_the_hardest_variant(fake_env, papers, tmp_path):
    import re

    from theorembench.evaluate.mcq.items import Item
    from theorembench.evaluate.mcq.protocol import messages, shuffle_options

    # distinct distractor sets per variant (calls come in order: one theorem at a time)
    sets = [distractors(marker=f" (variant {k})") for k in range(6)]
    rubrics = [rubric((2, 2, 2, 2)), rubric((2, 2, 1, 1))] * 3
    fake_env.set_script(script(distractors=sets, revise=sets, rubric=rubrics))
    _res, split, _ = build(tmp_path, papers)
    pool = split["full"]
    assert len(split["ge5_hard"]) == 3 and all(it["variant"] == "orig" for it in split["ge5_hard"])  # best rubric wins
    # a second calibrator solves every variant of the first theorem and the orig of the third
    first, third = pool[0]["source_id"], pool[4]["source_id"]
    rules = []
    for index, item in enumerate(pool):
        solve = item["source_id"] == first or (item["source_id"] == third and item["variant"] == "orig")
        parsed = Item.model_validate(item)
        presented = shuffle_options(parsed, index, 42)
        prompt = messages(parsed, presented, sketch=False)[1]["content"]
        rules.append({"match": re.escape(prompt) + "$",
                      "reply": f"\\boxed{{{presented.correct_label}}}" if solve else "I cannot decide."})  # fmt: skip
    s = script(distractors=sets, revise=sets, rubric=rubrics)
    s["rules"] = rules + s["rules"]
    fake_env.set_script(s)
    _res, split2, summary = build(tmp_path, papers, calibrator="openai-api/fake/cal2")
    hard = {it["source_id"]: it for it in split2["ge5_hard"]}
    assert first not in hard  # every variant solved: the source is dropped
    assert hard[third]["variant"] == "alt1"  # the orig was solved: the unsolved alt1 is kept
    assert hard[third]["hard_selection_meta"]["selected_from"] == 2
    assert hard[pool[2]["source_id"]]["variant"] == "orig"
    assert summary["hard_selection_summary"]["dropped_solved_sources"] == 1


def test_select_hard_unit():
    def item(src, variant, score):
        return {"id": f"{src}::{variant}", "source_id": src, "variant": variant, "qa quality eval": {"total_score": score}}

    pool = [item("s1", "orig", 6), item("s1", "alt1", 7), item("s2", "orig", 8), item("s2", "alt1", 8),
            item("s3", "orig", 5)]  # fmt: skip
    answers = {i["id"]: {"model_is_correct": False, "model_answer": "B", "correct_answer": "C"} for i in pool}
    answers["s3::orig"]["model_is_correct"] = True
    hard = select_hard(pool, answers)
    assert [(h["source_id"], h["variant"]) for h in hard] == [("s1", "alt1"), ("s2", "orig")]
    assert hard[0]["hard_selection_meta"] == {"selected_from": 2, "selected_variant": "alt1", "model_is_correct": False,
                                              "model_answer": "B", "correct_answer": "C", "selection_rank": 1}  # fmt: skip


def test_surface_and_structure_checks_unit():
    ok = check_surface(A_TEXT, {"B": A_TEXT.replace("n+1", "n+2"), "C": "For every $n$, $D_n \\approx n!/e$."},
                       weaker_true="C")  # fmt: skip
    assert ok.ok, ok.problems
    bad = check_surface(A_TEXT, {"B": "No.", "D": "There exists a unique $n$ with no bound whatsoever, if and only if not."},
                        weaker_true="C")  # fmt: skip
    assert any("option B is 0.0x" in p for p in bad.problems)
    assert any("option D differs from option A in logical shape" in p for p in bad.problems)
    good = json.loads(distractors())
    validate_distractors(good)
    for breaker in (lambda d: d["choices"].reverse(), lambda d: d["meta"].update(wildcard_false_label="C"),
                    lambda d: d["choices"][0].update(text=META_OPTION),
                    lambda d: d["choices"][1].update(text=d["choices"][0]["text"])):  # fmt: skip
        broken = json.loads(distractors())
        breaker(broken)
        with pytest.raises(StageFailure):
            validate_distractors(broken)


def test_config_defaults_and_errors(tmp_path):
    cfg = load_config()
    assert cfg.filters.rubric_min == 5 and cfg.generation.variants == 2 and cfg.generation.substitution_resistant_fraction == 0.5
    bad = tmp_path / "bad.toml"
    bad.write_text("[filters]\nrubric_min = 11\n")
    with pytest.raises(ConfigError, match="filters.rubric_min"):
        load_config(bad)
    bad.write_text("[filters]\nunknown = 1\n")
    with pytest.raises(ConfigError, match="filters.unknown"):
        load_config(bad)
    res = runner.invoke(app, ["lmb", "config"])
    assert res.exit_code == 0 and "rubric_min = 5" in res.output


def test_kill_and_resume_loses_nothing_and_repeats_no_call(fake_env, papers, tmp_path):
    cfg = write_config(tmp_path)
    cmd = [PYTHON, "-m", "theorembench.cli", "lmb", "build", "--month", "2026-11", "--generator", GEN, "--judge", JUDGE,
           "--calibrator", CAL, "--out-dir", str(tmp_path / "out"), "--concurrency", "2", "--config", str(cfg)]
    for pid in papers:
        cmd += ["--paper", pid]
    # reference: the same build uninterrupted, in a store of its own
    root = resources.files("theorembench.data") / "papers"
    folders = sorted(str(p) for p in Path(str(root)).iterdir() if p.is_dir())
    ref_env = cli_env(THEOREMBENCH_HOME=str(tmp_path / "ref"))
    fake_env.set_script(script())
    for args in (["papers", "add", *folders, "--no-llm"], cmd[3:]):
        ref = subprocess.run([PYTHON, "-m", "theorembench.cli", *args], env=ref_env, cwd=tmp_path,
                             capture_output=True, text=True, timeout=300)  # fmt: skip
        assert ref.returncode == 0, ref.stdout + ref.stderr
    expected = json.loads((tmp_path / "out" / "qaEval_202611_full.json").read_text())
    reference_calls = fake_env.stats()["completed"]
    (tmp_path / "out" / "qaEval_202611_full.json").unlink()

    fake_env.reset()
    s = script()
    s["max_responses"] = 17
    fake_env.set_script(s)
    env = cli_env()
    proc = subprocess.Popen(cmd, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    db = tmp_path / "home" / "theorembench.db"
    try:
        fake_env.wait_for(lambda st: st["completed"] == 17 and st["held"] >= 1, timeout=120)
        deadline = time.monotonic() + 30
        while True:  # the 17 answers reach the store before the kill (bounded wait on a condition)
            with Store(db) as store:
                if store.usage()["ok"] >= 17:
                    break
            assert time.monotonic() < deadline
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not (tmp_path / "out" / "qaEval_202611_full.json").exists()
    fake_env.set_script(script())
    done = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    got = json.loads((tmp_path / "out" / "qaEval_202611_full.json").read_text())
    assert [it["id"] for it in got] == [it["id"] for it in expected]  # no item lost
    assert [it["mcq"] for it in got] == [it["mcq"] for it in expected]
    assert fake_env.stats()["completed"] == reference_calls  # killed + resumed = one clean run: no call paid twice
    again = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and fake_env.stats()["completed"] == reference_calls
