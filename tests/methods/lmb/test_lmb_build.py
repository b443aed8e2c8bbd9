"""`theorembench lmb build`, every branch driven by the scripted LLM server on 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
from importlib import resources
from pathlib import Path

import pytest
from helpers.cli import PYTHON, cli_env
from helpers.killing import kill_when_held
from helpers.lmb import (
    A_TEXT,
    CAL,
    GEN,
    JUDGE,
    STEM,
    build,
    distractors,
    match,
    papers,  # noqa: F401 - a fixture
    requests_to,
    rubric,
    runner,
    script,
    steps,
    write_config,
)

from theorembench.cli import app
from theorembench.common.settings import SettingsError
from theorembench.evaluate.mcq.items import META_OPTION, load_dataset
from theorembench.methods.lmb.config import load_config
from theorembench.methods.lmb.funnel import select_hard
from theorembench.methods.lmb.stages import validate_distractors
from theorembench.methods.lmb.surface import check_surface
from theorembench.pipeline.steps import StepFailed
from theorembench.store import Store


def test_full_chain_follows_the_paper_order_and_the_released_layout(fake_env, papers, tmp_path):
    # calls come one theorem at a time (concurrency 1), so reply sequences address theorems and variants:
    # theorem 0 passes the rubric and the stem-only filter, so it alone gets an alternative set, which fails
    # the rubric; theorem 1 fails the rubric; theorem 2's stem is answerable alone
    stems = [json.dumps(dict(STEM, question=STEM["question"] + f" (Case {k}.)")) for k in range(3)]
    sets = [distractors(marker=f" (variant {k})") for k in range(4)]  # every item its own options
    s = script(stem=stems, repair=stems, distractors=sets, revise=sets,
               rubric=[rubric(), rubric((1, 1, 1, 0)), rubric((1, 1, 1, 0)), rubric()],
               match=[match(False), match(True)])  # fmt: skip
    fake_env.set_script(s)
    res, split, summary = build(tmp_path, papers)
    full, ge5, hard, pool = split["full"], split["ge5"], split["ge5_hard"], split["pool"]
    # Stage 6 order: alternatives only for the item that passed the rubric and the stem-only filter
    assert requests_to(fake_env, "You write the four other options") == 4  # 3 originals + 1 alternative
    assert requests_to(fake_env, "You grade a multiple-choice question") == 4
    assert requests_to(fake_env, "Answer the research question you are given") == 2  # theorems 0 and 2
    assert [it["id"] for it in full] == papers and [it["id"] for it in ge5] == [papers[0], papers[2]]
    assert [it["id"] for it in pool] == [f"{papers[0]}::alt1", f"{papers[0]}::orig"]
    assert summary["funnel"] == {"theorems": 3, "generated": 3, "rubric": 2, "stem_nontrivial": 1, "pool": 2,
                                 "eligible": 1, "hard": 1}  # fmt: skip
    assert [it["id"] for it in hard] == [f"{papers[0]}::orig"]
    keys = {"id", "paper_link", "theorems_cnt", "theorem", "ref_dict", "pre_theorem_intro_text_len",
            "pre_theorem_intro_text", "context", "full_context", "post_theorem_intro_text_len",
            "post_theorem_intro_text", "sketch", "expanded_sketch", "expanded_theorem", "theorem_type", "mcq",
            "qa quality eval", "stem_triviality", "source_id", "variant", "candidate_source_key",
            "hard_selection_meta"}  # fmt: skip
    for item in full + pool:
        assert keys <= set(item)
        assert item["theorems_cnt"] == 2  # each sample paper states a theorem and one lemma or proposition up front
        assert item["theorem_type"] == ["Inequality or Bound", "Universal"]
        assert item["candidate_source_key"] == item["source_id"] + "::['Inequality or Bound', 'Universal']"
        mcq = item["mcq"]
        assert [c["label"] for c in mcq["choices"]] == ["B", "C", "D", "E"]
        assert mcq["correct_choice"]["text"] == (META_OPTION if item["substitution_resistant"] else A_TEXT)
        # the meta-option is a distractor only where the item records it (never C, never in a keyed item)
        shown = [c["label"] for c in mcq["choices"] if c["text"] == META_OPTION]
        assert shown == ([mcq["meta"]["meta_distractor_label"]] if mcq["meta"].get("meta_distractor_label") else [])
        assert "C" not in shown and not (item["substitution_resistant"] and shown)
        for stage in ("sketch", "classify", "stem", "distractors", "rubric"):
            assert item["call_ids"][stage], stage
    # the released stem_triviality: the theorem's id, its rubric total as score, the judge's short verdict
    st = hard[0]["stem_triviality"]
    assert {k: st[k] for k in ("id", "score", "match", "verdict")} == {
        "id": papers[0], "score": 6, "match": False, "verdict": "does not match"}
    assert pool[0]["stem_triviality"] == st  # the alternative shares the theorem's filter result
    assert full[2]["stem_triviality"]["verdict"] == "matches" and full[1]["stem_triviality"] is None
    assert pool[0]["substitution_resistant"] == pool[1]["substitution_resistant"]
    meta = hard[0]["hard_selection_meta"]
    assert meta["selected_variant"] == "orig" and meta["model_is_correct"] is False and meta["selected_from"] == 1
    # no answer could be read: level 2, as a wrong answer (the release's 2511.12549v2::orig); rubric 6, the orig set
    assert meta["selection_rank"] == [2, 6.0, 0]
    # the output loads in `eval mcq` exactly like the released split
    assert len(load_dataset(tmp_path / "out" / "qaEval_202611_ge5_hard.json").items) == len(hard)
    fake_env.set_script({"default": {"reply": "\\boxed{A}"}})
    ev = runner.invoke(app, ["eval", "mcq", str(tmp_path / "out" / "qaEval_202611_full.json"), "--model", GEN,
                             "--out", str(tmp_path / "r.json")])  # fmt: skip
    assert ev.exit_code == 0, ev.output
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["all"]["total"] == 3
    # funnel, costs and rejections are printed and saved, with the released summary fields
    assert "funnel 202611" in res.output and "stem_only rejected" in res.output
    stages = {row["stage"]: row for row in summary["costs"]}
    assert stages["distractors"]["calls"] == 8  # 4 items x (generate + adversarial revision)
    assert stages["calibrate"]["calls"] == 1 and stages["recheck"]["calls"] == 1
    assert summary["rejections"]["rubric rejected"] == {"total score below 5": 2}
    assert summary["rejections"]["stem_only rejected"] == {"answerable from the stem alone": 1}
    assert summary["hard_selection_summary"] == {"pool_size": 2, "eligible_after_min_score": 1, "source_groups": 1,
                                                 "selected_count": 1, "dropped_solved_sources": 0, "min_score": 5.0}
    assert (summary["hard_accuracy"], summary["hard_correct"], summary["hard_total"]) == (0.0, 0, 1)


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


def test_malformed_json_is_retried_boundedly_then_rejected_and_never_paid_for_again(fake_env, papers, tmp_path):
    fake_env.set_script(script(distractors="Sure! B is false, C is weaker..."))
    _res, split, summary = build(tmp_path, papers[:1])
    rows = steps(tmp_path, "distractors")
    assert len(rows) == 1 and rows[0]["status"] == "rejected"  # no alternative set for a theorem without an item
    assert "output was malformed" in rows[0]["reason"] and "in 3 attempts" in rows[0]["reason"]
    assert len(json.loads(rows[0]["call_ids"])) == 3  # 1 ask + 2 bounded repair turns, each unusable
    assert split["full"] == [] and any(k.startswith("distractors") for k in summary["rejections"])
    asked = requests_to(fake_env, "You write the four other options")
    build(tmp_path, papers[:1])
    assert requests_to(fake_env, "You write the four other options") == asked  # final: a rerun asks nothing


def test_surface_offenders_are_revised_then_flagged(fake_env, papers, tmp_path):
    long_b = "For every integer $n \\ge 1$ " + "and moreover every related quantity behaves as expected " * 6 + "."
    fake_env.set_script(script(distractors=distractors(b_text=long_b), revise=distractors(b_text=long_b)))
    _res, split, _ = build(tmp_path, papers[:1])
    rows = steps(tmp_path, "distractors")
    assert rows and all(r["status"] == "ok" for r in rows)  # kept, not silently dropped
    flags = split["full"][0]["surface_flags"]
    assert any("option B is" in f and "as long as option A" in f for f in flags)
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
    assert len(split["full"]) == 1 and len(split["pool"]) == 2
    assert all(it["latex_check"]["checked"] for it in split["pool"])


def test_calibration_drops_solved_sources_and_keeps_the_hardest_variant(fake_env, papers, tmp_path):
    import re

    from theorembench.evaluate.mcq.items import Item
    from theorembench.evaluate.mcq.protocol import messages, shuffle_options

    # distinct distractor sets per variant (calls come in order: one theorem at a time, orig then alt1)
    sets = [distractors(marker=f" (variant {k})") for k in range(6)]
    rubrics = [rubric((2, 2, 2, 2)), rubric((2, 2, 1, 1))] * 3
    fake_env.set_script(script(distractors=sets, revise=sets, rubric=rubrics))
    _res, split, _ = build(tmp_path, papers)
    pool = split["pool"]
    assert len(pool) == 6
    assert len(split["ge5_hard"]) == 3 and all(it["variant"] == "orig" for it in split["ge5_hard"])  # best rubric wins
    # a second calibrator solves every variant of the first theorem and the orig of the third, and answers the
    # others wrongly; asked again about the kept items, it gets the third theorem's right
    first, second, third = papers
    rules = []
    for index, item in enumerate(pool):
        solve = item["source_id"] == first or (item["source_id"] == third and item["variant"] == "orig")
        parsed = Item.model_validate(item)
        presented = shuffle_options(parsed, index, 42)
        prompt = messages(parsed, presented, sketch=False)[1]["content"]
        right = presented.correct_label
        wrong = "B" if right != "B" else "C"
        replies = [f"\\boxed{{{right if solve else wrong}}}", f"\\boxed{{{right if item['source_id'] == third else wrong}}}"]
        rules.append({"match": re.escape(prompt) + "$", "reply": replies})
    s = script(distractors=sets, revise=sets, rubric=rubrics)
    s["rules"] = rules + s["rules"]
    fake_env.set_script(s)
    _res, split2, summary = build(tmp_path, papers, calibrator="openai-api/fake/cal2")
    hard = {it["source_id"]: it for it in split2["ge5_hard"]}
    assert first not in hard  # every variant solved: the source is dropped
    assert hard[third]["variant"] == "alt1"  # the orig was solved: the unsolved alt1 is kept
    assert hard[third]["hard_selection_meta"]["selected_from"] == 2
    assert hard[third]["hard_selection_meta"]["selection_rank"] == [2, 6.0, 1]
    assert hard[second]["variant"] == "orig" and hard[second]["hard_selection_meta"]["selection_rank"] == [2, 8.0, 0]
    assert summary["hard_selection_summary"]["dropped_solved_sources"] == 1
    assert summary["hard_selection_summary"]["eligible_after_min_score"] == 6
    # the second answer on the hard split: 1 of 2 right
    assert (summary["hard_accuracy"], summary["hard_correct"], summary["hard_total"]) == (0.5, 1, 2)
    assert summary["hard_accuracy_ci95"] == [0.0945, 0.9055]  # Wilson, 1 of 2


def test_select_hard_unit():
    def item(src, variant, score):
        return {"id": f"{src}::{variant}", "source_id": src, "variant": variant, "qa quality eval": {"total_score": score}}

    pool = [item("s1", "orig", 6), item("s1", "alt1", 7), item("s2", "orig", 8), item("s2", "alt1", 8),
            item("s3", "orig", 5), item("s4", "orig", 5), item("s4", "alt1", 7)]  # fmt: skip
    answers = {i["id"]: {"model_is_correct": False, "model_answer": "B", "correct_answer": "C"} for i in pool}
    answers["s3::orig"]["model_is_correct"] = True
    answers["s4::alt1"]["model_answer"] = None  # no answer read: ranked as a wrong answer (issue 21, item 4)
    hard = select_hard(pool, answers)
    assert [(h["source_id"], h["variant"]) for h in hard] == [("s1", "alt1"), ("s2", "alt1"), ("s4", "alt1")]
    assert hard[0]["hard_selection_meta"] == {"selected_from": 2, "selected_variant": "alt1", "model_is_correct": False,
                                              "model_answer": "B", "correct_answer": "C",
                                              "selection_rank": [2, 7.0, 1]}  # fmt: skip
    assert hard[1]["hard_selection_meta"]["selection_rank"] == [2, 8.0, 1]  # a tie goes to the later set, as released
    assert hard[2]["hard_selection_meta"]["selection_rank"] == [2, 7.0, 1]  # unanswered, rubric 7 beats wrong, 5
    # without calibration every item counts as missed
    assert [h["id"] for h in select_hard(pool, None)] == ["s1::alt1", "s2::alt1", "s3::orig", "s4::alt1"]


def test_released_selection_rank_and_stem_triviality_meanings(lmb_hard):
    """What the checks above rely on, read off the released hard split."""
    items = json.loads(lmb_hard.read_text())
    for it in items:
        rank, st = it["hard_selection_meta"]["selection_rank"], it["stem_triviality"]
        assert rank == [2, float(it["qa quality eval"]["total_score"]), 0 if it["variant"] == "orig" else 1]
        assert st["id"] == it["source_id"] and st["match"] is False and isinstance(st["verdict"], str)
        if it["variant"] == "orig" and it["source_id"] != "2511.17325v1":  # one original was graded again
            assert st["score"] == it["qa quality eval"]["total_score"]
    resistant = [it for it in items if it["mcq"]["correct_choice"]["text"].startswith("One of the remaining")]
    assert len(resistant) == 14 and len(items) == 29  # 48%, as in the paper's 85 of 177
    assert sorted({it["theorems_cnt"] for it in items}) == [1, 2, 3, 4, 5, 10]
    unknown = [it for it in items if it["theorem_type"] == "unknown"]
    assert [it["candidate_source_key"] for it in unknown] == ["2511.16910v1::unknown"]


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
        with pytest.raises(StepFailed):
            validate_distractors(broken)


def test_config_defaults_and_errors(tmp_path):
    cfg = load_config()
    assert cfg.filters.rubric_min == 5 and cfg.generation.variants == 2 and cfg.generation.substitution_resistant_fraction == 0.2
    bad = tmp_path / "bad.toml"
    bad.write_text("[filters]\nrubric_min = 11\n")
    with pytest.raises(SettingsError, match="filters.rubric_min"):
        load_config(bad)
    bad.write_text("[filters]\nunknown = 1\n")
    with pytest.raises(SettingsError, match="filters.unknown"):
        load_config(bad)
    res = runner.invoke(app, ["lmb", "config"])
    assert res.exit_code == 0 and "rubric_min = 5" in res.output


def test_substitution_resistant_status_is_drawn_per_theorem():
    from theorembench.methods.lmb.stages import substitution_resistant

    ids = [f"2611.{k:05d}v1" for k in range(2000)]
    share = sum(substitution_resistant(i, 20250101, 0.3) for i in ids) / len(ids)
    assert 0.27 < share < 0.33  # the configured fraction, over theorems (one draw each, not one per variant)
    assert not any(substitution_resistant(i, 7, 0.0) for i in ids) and all(substitution_resistant(i, 7, 1.0) for i in ids)
    other = [substitution_resistant(i, 7, 0.5) for i in ids]
    assert other != [substitution_resistant(i, 20250101, 0.5) for i in ids]  # the selection seed decides which


def test_changing_the_selection_seed_reuses_every_cached_call(fake_env, papers, tmp_path):
    fake_env.set_script(script())
    every = {"substitution_resistant_fraction": 1.0}  # the draw cannot change any prompt
    build(tmp_path, papers[:1], cfg=write_config(tmp_path, generation={**every, "seed": 1}))
    served = len(fake_env.requests)
    assert served > 0
    _res, split, _ = build(tmp_path, papers[:1], cfg=write_config(tmp_path, generation={**every, "seed": 2}))
    assert len(fake_env.requests) == served  # 0 new requests: the sampling seed is another setting
    assert split["pool"] and all(it["substitution_resistant"] for it in split["pool"])
    build(tmp_path, papers[:1], cfg=write_config(tmp_path, generation={**every, "seed": 2, "sampling_seed": 3}))
    assert len(fake_env.requests) > served  # a new sampling seed is a new call


def test_unknown_category_is_kept(fake_env, papers, tmp_path):
    fake_env.set_script(script(classify=json.dumps({"categories": ["unknown"], "reason": "none fits"})))
    _res, split, summary = build(tmp_path, papers[:1])
    item = split["full"][0]
    assert item["theorem_type"] == "unknown" and item["candidate_source_key"] == f"{papers[0]}::unknown"
    assert summary["funnel"]["generated"] == 1 and item["stem_triviality"]["theorem_type"] == "unknown"
    stem_prompts = [r for r in fake_env.requests if "You write the question stem" in r["body"]["messages"][0]["content"]]
    assert stem_prompts and "Logical category of the theorem: unknown" in stem_prompts[0]["body"]["messages"][0]["content"]


def test_theorems_cnt_counts_theorem_blocks_of_the_introduction():
    from theorembench.methods.lmb.stages import intro_theorem_count

    text = "\n".join([
        "\\newtheorem{theorem}{Theorem}\\newtheorem{lemma}{Lemma}\\newtheorem{conjecture}{Conjecture}",
        "\\newtheorem{remark}{Remark}\\newtheorem{cor}{Corollary}",
        "\\begin{document}",
        "\\section{Introduction}",
        "\\begin{theorem}A.\\end{theorem}", "\\begin{lemma}B.\\end{lemma}", "\\begin{cor}C.\\end{cor}",
        "\\begin{remark}R.\\end{remark}", "\\begin{conjecture}Q.\\end{conjecture}",
        "\\section{Proofs}",
        "\\begin{theorem}D.\\end{theorem}",
        "\\end{document}",
    ])  # fmt: skip
    assert intro_theorem_count(text) == 3  # theorem, lemma, corollary; not the remark, conjecture or later theorem
    assert intro_theorem_count(text.replace("\\section{Introduction}", "\\section{Setting}")) == 1


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
    db = tmp_path / "home" / "theorembench.db"

    def answers_stored() -> int:
        if not db.exists():
            return 0
        with Store(db) as store:
            return store.usage()["ok"]

    kill_when_held(cmd, fake_env, answered=17, stored=answers_stored, cwd=tmp_path, env=env)
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


def test_an_edited_prompt_reruns_its_stage_and_reuses_every_other_call(fake_env, papers, tmp_path, monkeypatch):
    from theorembench.methods.lmb import check_prompts

    fake_env.set_script(script())
    build(tmp_path, papers[:1])
    markers = {"sketch": "summarising how a theorem is proved", "stem": "You write the question stem",
               "distractors": "You write the four other options", "rubric": "You grade a multiple-choice question"}
    before = {name: requests_to(fake_env, m) for name, m in markers.items()}
    assert before["rubric"] > 0 and before["sketch"] > 0
    # the rubric's instructions change (as an edit of the file would): the rubric is asked again, once per item
    # it graded, and every other stage runs again from stored model calls, paying for nothing
    monkeypatch.setattr(check_prompts, "_RUBRIC_SYSTEM", check_prompts._RUBRIC_SYSTEM + "\nBe strict.")
    build(tmp_path, papers[:1])
    after = {name: requests_to(fake_env, m) for name, m in markers.items()}
    assert after == {**before, "rubric": 2 * before["rubric"]}
    systems = [r["body"]["messages"][0]["content"] for r in fake_env.requests]
    rubric_systems = [s for s in systems if markers["rubric"] in s]
    assert all("Be strict." in s for s in rubric_systems[before["rubric"]:])


def test_selection_rank_reproduces_the_released_ranks(lmb_hard):
    # every released hard item's selection_rank from its own calibration answer and rubric total, the unanswered
    # 2511.12549v2::orig ([2, 7.0, 0]) included
    from theorembench.methods.lmb.funnel import selection_rank

    released = json.loads(lmb_hard.read_text())
    for item in released:
        meta = item["hard_selection_meta"]
        assert selection_rank(item, meta) == meta["selection_rank"], item["id"]
    assert any(it["hard_selection_meta"]["model_answer"] is None for it in released)


def test_the_released_layout_puts_the_hard_split_where_the_authors_loader_reads_it(fake_env, papers, tmp_path):
    # issue 21, item 7: their loader reads data/<month>/hard/qaEval_<month>_ge5_hard.json
    from helpers.lmb import GEN, JUDGE

    fake_env.set_script(script())
    args = ["lmb", "build", "--month", "2026-11", "--generator", GEN, "--judge", JUDGE, "--calibrator", CAL,
            "--out-dir", str(tmp_path / "rel"), "--concurrency", "1", "--config", str(write_config(tmp_path)),
            "--layout", "released", "--paper", papers[0]]  # fmt: skip
    res = runner.invoke(app, args, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    month = tmp_path / "rel" / "data" / "202611"
    hard = json.loads((month / "hard" / "qaEval_202611_ge5_hard.json").read_text())
    assert isinstance(hard, list) and (month / "qaEval_202611_full.json").is_file()
    assert json.loads((month / "summary.json").read_text())["hard_count"] == len(hard)
    assert not (tmp_path / "rel" / "qaEval_202611_full.json").exists()
    bad = runner.invoke(app, [*args[:-4], "--layout", "nested", "--paper", papers[0]])
    assert bad.exit_code == 2 and "layout" in bad.output
