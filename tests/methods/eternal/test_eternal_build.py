"""EternalMath build (stages a-g): every branch driven by scripted models on 127.0.0.1, expected counts by hand."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest
from helpers.cli import PYTHON, cli_env
from helpers.eternal import (
    BASE,
    COMP,
    DERANGE_CHECK,
    DERANGE_CODE,
    DERANGE_TEXT,
    GEN,
    JUDGE,
    VALID,
    add_papers,
    computable,
    derange,
    j,
    rules,
    validity_verdict,
)
from helpers.killing import kill_when_held
from helpers.sandbox import assert_nothing_reached, reaching_code
from typer.testing import CliRunner

from theorembench.cli.app import app
from theorembench.common.errors import UserError
from theorembench.methods.eternal import msc
from theorembench.methods.eternal.build import build_eternal
from theorembench.methods.eternal.originality import OriginalityIndex, read_corpus
from theorembench.pipeline.papers import add_local
from theorembench.store import Store
from theorembench.store.papers import PaperRepo

ALL = ("ALPHA", "BETA", "GAMMA", "DELTA", "EPSILON", "ZETA", "ETA")


def build(store, ids, out, **kw):
    over = {**BASE, **kw.pop("overrides", {})}
    return build_eternal(store, paper_ids=list(ids.values()), generator=GEN, judge=JUDGE, overrides=over,
                         instances_per_template=3, seed=0, out_dir=out, **kw)  # fmt: skip


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


# -- MSC --------------------------------------------------------------------------------------------


def test_msc_table_and_normalisation():
    table = msc.top_level()
    assert len(table) == 63 and table["05"] == "Combinatorics" and "02" not in table and "99" not in table
    assert msc.normalise_code("05C50") == "05" and msc.normalise_code("11-02") == "11"
    assert msc.normalise_code("35Qxx") == "35" and msc.normalise_code("68Q") == "68"
    assert msc.normalise_code("04A20") == "03" and msc.normalise_code("73B05") == "74"  # retired before 2010
    assert msc.normalise_code("99Z99") is None and msc.normalise_code("2010") is None
    text = "Primary 05C50; Secondary 20C30, 05A05, 11B68, 35Q30"
    assert msc.find_codes(text) == ["05C50", "20C30", "05A05", "11B68", "35Q30"]
    got = msc.classify_codes(msc.find_codes(text), source="subjclass")
    assert got.codes == ["05", "20", "11"] and got.excluded is None  # distinct, primary first, three at most
    edu = msc.classify_codes(["97D40", "05A05"], source="subjclass")
    assert edu.excluded and "97" in edu.excluded and edu.codes == ["05"]
    kept = msc.classify_codes(["05A05", "01A60", "00A05"], source="subjclass")
    assert kept.excluded is None and kept.codes == ["05"]  # excluded classes as secondary codes are dropped
    written = "Primary 05A05; Secondary 05A15"
    assert msc.subjclass_texts(f"\\subjclass[2020]{{{written}}}") == [written]
    assert msc.parse_msc_option("05, 11,05") == ["05", "11"] and msc.in_scope(["20", "05"], ["05"])
    assert not msc.in_scope(["35"], ["05", "11"]) and msc.in_scope(["35"], [])
    for bad in ("99", "04", "5"):
        with pytest.raises(ValueError, match="not an MSC2020 top-level class"):
            msc.parse_msc_option(bad)


# -- paper filter --------------------------------------------------------------------------------------


def test_filter_recency_window_and_authority_rules():
    from theorembench.common.settings import SettingsError
    from theorembench.methods.eternal.config import load_config
    from theorembench.methods.eternal.filter import PaperInput, authority, recency

    cfg = load_config(None, **{"filter.reference_date": "2026-01-15"}).filter

    def paper(published=None, source="arxiv", meta=None, latex=None):
        return PaperInput(id="p", source=source, title="t", abstract="a", latex=latex, theorem=None,
                          meta=meta or {}, published=published)  # fmt: skip

    # 24 months back from 2026-01 at month granularity: 2024-01 is in, 2023-12 and 2026-02 are out
    assert recency(paper("2024-01-31T00:00:00Z"), cfg).passed and not recency(paper("2023-12-31"), cfg).passed
    assert not recency(paper("2026-02-01"), cfg).passed and not recency(paper(None), cfg).passed
    assert recency(paper(None, source="local"), cfg).passed  # the user added it: trusted
    assert authority(paper(meta={"doi": "10.1000/x"}), cfg).passed
    assert not authority(paper(meta={}), cfg).passed and authority(paper(source="local"), cfg).passed
    listed = load_config(None, **{"filter.authority": "list", "filter.venues": ["Inventiones"],
                                  "filter.institutions": ["Institute for Advanced Study"]}).filter  # fmt: skip
    assert authority(paper(meta={"journal_ref": "Invent. Math. 1 (2025)"}), listed).passed is False
    assert authority(paper(meta={"journal_ref": "Inventiones Math. 1 (2025)"}), listed).passed
    affil = "\\address{School of Mathematics, Institute for Advanced Study, Princeton}"
    assert authority(paper(latex=affil), listed).reason == "institution Institute for Advanced Study"
    assert authority(paper(source="local"), load_config(None, **{"filter.authority": "any"}).filter).passed
    with pytest.raises(SettingsError, match="needs filter.venues"):
        load_config(None, **{"filter.authority": "list"}).check()
    with pytest.raises(SettingsError, match="reference_date"):
        load_config(None, **{"filter.reference_date": "2026-13-01"})


# -- the whole build ----------------------------------------------------------------------------------


def test_scripted_build_funnel_rejections_and_resume(fake_env, store, tmp_path):
    fake_env.set_script({"rules": rules()})
    ids = add_papers(store, tmp_path, ALL)
    result = build(store, ids, tmp_path / "out", msc="05,11,20")
    # 7 papers: EPSILON too old, ZETA without journal-ref, DELTA primary 97, ETA (35) outside --msc,
    # BETA not computable; ALPHA writes 3 templates (one wrong formula, one near-duplicate), GAMMA one
    # (the validity judge rejects it); the one template left gives 3 instances
    assert result.funnel == {"papers": 7, "recent": 6, "authoritative": 5, "classified": 4, "in_scope": 3,
                             "computable": 2, "templates": 4, "well_formed": 4, "validated_templates": 3,
                             "reviewed_templates": 1, "instances": 3}  # fmt: skip
    rej = lines(tmp_path / "out" / "rejections.jsonl")
    by_template = {r["template_id"]: (r["stage"], r["reason"]) for r in rej}
    a = ids["ALPHA"]
    assert len(rej) == 3 and set(by_template) == {f"{a}:t2", f"{a}:t3", f"{ids['GAMMA']}:t1"}
    assert by_template[f"{a}:t2"][0] == "cross_check" and "brute force" in by_template[f"{a}:t2"][1]
    assert by_template[f"{a}:t3"] [0] == "originality" and f"template {a}:t1" in by_template[f"{a}:t3"][1]
    assert by_template[f"{ids['GAMMA']}:t1"][0] == "validity" and "unambiguous" in by_template[f"{ids['GAMMA']}:t1"][1]
    papers = {p["paper_id"]: p for p in lines(tmp_path / "out" / "papers.jsonl")}
    assert papers[ids["EPSILON"]]["stopped_at"] == "recency" and papers[ids["ZETA"]]["stopped_at"] == "authority"
    assert papers[ids["DELTA"]]["stopped_at"] == "classify" and "97" in papers[ids["DELTA"]]["reason"]
    assert papers[ids["ETA"]]["stopped_at"] == "msc" and papers[ids["ETA"]]["msc"] == ["35"]
    assert papers[ids["BETA"]]["stopped_at"] == "computability" and papers[ids["BETA"]]["status"] == "rejected"
    assert papers[a]["msc"] == ["05"] and papers[a]["checks"]["classify"]["source"] == "subjclass"
    gamma = papers[ids["GAMMA"]]["checks"]["classify"]
    assert gamma["source"] == "llm" and gamma["codes"] == ["20"] and gamma["invalid"] == ["99"]
    insts = lines(tmp_path / "out" / "instances.jsonl")
    assert {i["template_id"] for i in insts} == {f"{a}:t1"} and all(i["msc"] == ["05"] for i in insts)
    derangements = {4: 9, 5: 44, 6: 265, 7: 1854, 8: 14833, 9: 133496, 10: 1334961, 11: 14684570, 12: 176214841}
    assert all(int(i["numerical_value"]) == derangements[i["params_used"]["n"]] for i in insts)
    assert all(i["originality"]["original"] is True and i["originality"]["threshold"] == 0.8 for i in insts)
    assert [t["template_id"] for t in json.loads((tmp_path / "out" / "templates.json").read_text())] == [f"{a}:t1"]
    # model calls: 1 classification (GAMMA), 3 computability, 2 template generations, 2 validity verdicts
    assert fake_env.stats()["total_requests"] == 8
    costs = {row["stage"]: row["calls"] for row in result.costs}
    assert costs == {"classify": 1, "computability": 3, "templates": 2, "validity": 2, "total": 8}
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["funnel"] == result.funnel and summary["rejections_by_stage"] == {
        "cross_check": 1, "originality": 1, "validity": 1}
    # a second run finds every step stored: no model call at all, and the instances themselves come from
    # the store, down to their measured timings and the number of larger cases the brute force finished
    # in its time budget (both differ when the sandboxed code runs again)
    again = build(store, ids, tmp_path / "out2", msc="05,11,20")
    assert fake_env.stats()["total_requests"] == 8 and again.funnel == result.funnel
    assert lines(tmp_path / "out2" / "instances.jsonl") == insts


def test_shipped_sample_papers_pass_the_default_filter(fake_env, store, tmp_path):
    from importlib import resources

    fake_env.set_script({"rules": [{"match": COMP, "reply": computable(False)}]})
    repo = PaperRepo(store)
    with resources.as_file(resources.files("theorembench.data").joinpath("papers")) as root:
        ids = {p.name: add_local(repo, p) for p in sorted(Path(root).iterdir()) if p.is_dir()}
    result = build_eternal(store, paper_ids=list(ids.values()), generator=GEN, out_dir=tmp_path / "o")  # defaults
    assert result.funnel["papers"] == result.funnel["authoritative"] == result.funnel["in_scope"] == 3
    papers = {p["paper_id"]: p for p in lines(tmp_path / "o" / "papers.jsonl")}
    assert {name: papers[pid]["msc"] for name, pid in ids.items()} == {
        "derangements": ["05"], "monotone-subsequences": ["05"], "primorial-bound": ["11"]}
    assert all(p["checks"]["classify"]["source"] == "subjclass" for p in papers.values())
    assert fake_env.stats()["total_requests"] == 3  # three computability verdicts, no classification call


def test_failed_call_is_a_failed_step_that_runs_again(fake_env, store, tmp_path):
    fault = {"faults": [{"kind": "500", "times": 20}]}
    fake_env.set_script({"rules": rules(comp_alpha=fault)})
    ids = add_papers(store, tmp_path, ("ALPHA",))
    first = build(store, ids, tmp_path / "o1")
    assert first.funnel["computable"] == 0 and first.funnel["templates"] == 0
    assert list(first.summary["failed_steps"]) == ["computability"]
    assert lines(tmp_path / "o1" / "rejections.jsonl") == []  # never a rejection
    paper = lines(tmp_path / "o1" / "papers.jsonl")[0]
    assert (paper["stopped_at"], paper["status"]) == ("computability", "failed")
    assert fake_env.stats()["total_requests"] == 4  # one try and three retries
    fake_env.set_script({"rules": rules()})
    second = build(store, ids, tmp_path / "o2")
    assert second.summary["failed_steps"] == {} and second.funnel["instances"] == 3
    assert second.funnel["validated_templates"] == 2 and second.funnel["reviewed_templates"] == 1


def test_llm_classification_without_a_valid_code_fails_and_asks_again(fake_env, store, tmp_path):
    bad = {"match": "(?s)MSC2020 top-level classes:.*PAPER-GAMMA", "reply": j({"codes": ["99", "2"], "reason": "?"})}
    fake_env.set_script({"rules": rules(before=[bad])})
    ids = add_papers(store, tmp_path, ("GAMMA",))
    first = build(store, ids, tmp_path / "o1")
    assert first.summary["failed_steps"].keys() == {"classify"} and first.funnel["classified"] == 0
    assert fake_env.stats()["total_requests"] == 1
    build(store, ids, tmp_path / "o2")  # the invalid reply is not served from the cache: the judge is asked anew
    assert fake_env.stats()["total_requests"] == 2
    fake_env.set_script({"rules": rules()})
    third = build(store, ids, tmp_path / "o3")
    assert third.funnel["in_scope"] == 1 and third.funnel["validated_templates"] == 1


def test_subjclass_first_and_msc_restriction(fake_env, store, tmp_path):
    fake_env.set_script({"rules": rules()})
    ids = add_papers(store, tmp_path, ("ALPHA", "BETA"))
    result = build(store, ids, tmp_path / "o", msc="11")
    # ALPHA (05) is outside --msc 11; BETA (11) goes to the judge, which finds nothing computable
    assert (result.funnel["classified"], result.funnel["in_scope"], result.funnel["computable"]) == (2, 1, 0)
    assert fake_env.count(match="MSC2020 top-level classes") == 0  # both have \subjclass: no classification call
    assert fake_env.stats()["total_requests"] == 1
    by_month = build_eternal(store, month="2025-06", generator=GEN, overrides=BASE, msc="11", out_dir=tmp_path / "m")
    assert by_month.funnel["papers"] == 1 and by_month.funnel["in_scope"] == 0  # ALPHA alone, outside 11
    with pytest.raises(UserError, match="no stored papers for 2024-02"):
        build_eternal(store, month="2024-02", generator=GEN, out_dir=tmp_path / "m")
    with pytest.raises(UserError, match="msc 97: excluded"):
        build(store, ids, tmp_path / "o", msc="97")
    with pytest.raises(UserError, match="not an MSC2020 top-level class"):
        build(store, ids, tmp_path / "o", msc="05,99")


def test_translation_writes_blind_check_and_repairs_once(fake_env, store, tmp_path):
    broken = j({"formal_solution": "result = derangements_of(n)", "notes": "uses a helper"})
    fixed = j({"formal_solution": DERANGE_CODE, "notes": "inclusion-exclusion"})
    check = j({"small_case_check": {"params": {"n": [4, 5]}, "code": DERANGE_CHECK}})
    before = [
        {"match": "Running that code in the sandbox failed", "reply": fixed},
        {"match": "Write formal_solution for this template", "reply": broken},
        {"match": "Write small_case_check for the problem below", "reply": check},
    ]  # fmt: skip
    only = j({"templates": [dict(derange("a1"), formal_solution="result = 0", small_case_check=None)]})
    fake_env.set_script({"rules": rules(before=before, alpha_templates=only)})
    ids = add_papers(store, tmp_path, ("ALPHA",))
    result = build(store, ids, tmp_path / "o", overrides={"translation.enabled": True})
    assert result.funnel["validated_templates"] == 1 and result.funnel["instances"] == 3
    assert fake_env.count(match="Running that code in the sandbox failed") == 1  # one repair round
    # the brute-force check is written blind: its prompt shows neither the formula nor the solution
    check_req = [r for r in fake_env.requests if "Write small_case_check" in json.dumps(r)]
    assert len(check_req) == 1 and "math.factorial" not in json.dumps(check_req[0])
    assert "Inclusion-exclusion" not in json.dumps(check_req[0])
    tpl = json.loads((tmp_path / "o" / "templates.json").read_text())[0]
    assert tpl["formal_solution"] == DERANGE_CODE and tpl["small_case_check"]["params"] == {"n": [4, 5]}
    # comp, templates, solution, check, repair, validity
    assert fake_env.stats()["total_requests"] == 6
    build(store, ids, tmp_path / "o2", overrides={"translation.enabled": True})
    assert fake_env.stats()["total_requests"] == 6


def test_screening_rejects_low_confidence_generation(fake_env, store, tmp_path):
    fake_env.set_script({"rules": rules(), "logprob_default": -0.1,
                         "logprob_rules": [{"match": "LOWCONF", "logprob": -400.0}]})  # fmt: skip
    ids = add_papers(store, tmp_path, ("GAMMA", "THETA"))
    over = {"review.screening": True, "review.validity": False}
    result = build(store, ids, tmp_path / "o", overrides=over)
    rej = lines(tmp_path / "o" / "rejections.jsonl")
    assert [(r["template_id"], r["stage"]) for r in rej] == [(f"{ids['THETA']}:t1", "screening")]
    assert "below -1.5" in rej[0]["reason"]
    assert result.funnel["validated_templates"] == 2 and result.funnel["reviewed_templates"] == 1


def test_screening_skipped_when_no_logprobs(fake_env, store, tmp_path):
    fake_env.set_script({"rules": rules(), "logprobs_mode": "none"})
    ids = add_papers(store, tmp_path, ("GAMMA", "THETA"))
    result = build(store, ids, tmp_path / "o", overrides={"review.screening": True, "review.validity": False})
    assert result.funnel["reviewed_templates"] == 2 and lines(tmp_path / "o" / "rejections.jsonl") == []
    assert any("provider returns no log-probabilities" in n for n in result.summary["notes"])


def test_originality_against_a_user_corpus(fake_env, store, tmp_path):
    corpus = tmp_path / "known.jsonl"
    known = DERANGE_TEXT.format(p="n").replace("{n}", "7")
    corpus.write_text(j({"problem": "Unrelated: find all primes below 10."}) + "\n" + j({"problem": known}) + "\n")
    assert [place for place, _ in read_corpus(corpus)] == [f"{corpus}:1", f"{corpus}:2"]
    fake_env.set_script({"rules": rules(alpha_templates=j({"templates": [derange("a1")]}))})
    ids = add_papers(store, tmp_path, ("ALPHA",))
    result = build(store, ids, tmp_path / "o", overrides={"review.corpora": [str(corpus)]})
    rej = lines(tmp_path / "o" / "rejections.jsonl")
    assert [r["stage"] for r in rej] == ["originality"] and f"corpus text {corpus}:2" in rej[0]["reason"]
    assert result.funnel["reviewed_templates"] == 0 and fake_env.count(match=VALID) == 0


def test_originality_threshold_keeps_a_rewording():
    index = OriginalityIndex(threshold=0.8)
    base = ("Let G be a finite group of order {n} and let H be a subgroup of index two. "
            "How many conjugacy classes of G meet H when G acts on itself by conjugation?")  # fmt: skip
    reworded = ("Suppose a group G has exactly {n} elements and a normal subgroup H with quotient of order two. "
                "Count the conjugacy classes of G that intersect H.")  # fmt: skip
    assert index.check("t1", base, {"n"}) is None
    assert index.check("t2", reworded, {"n"}) is None
    dup = index.check("t3", base.replace("{n}", "{m}"), {"m"})
    assert dup is not None and dup.duplicate_of == "t1" and dup.similarity == 1.0


# -- the command line ----------------------------------------------------------------------------------


def test_cli_config_and_bad_options(store, tmp_path):
    runner = CliRunner()
    res = runner.invoke(app, ["eternal", "config"])
    assert res.exit_code == 0 and "[filter]" in res.output and 'authority = "signals"' in res.output
    assert "per_instance_s = 5" in res.output
    db = str(tmp_path / "c.db")
    res = runner.invoke(app, ["eternal", "build", "--month", "2025-13", "--generator", GEN, "--db", db])
    assert res.exit_code == 2 and "--month must be YYYY-MM" in res.output
    res = runner.invoke(app, ["eternal", "build", "--generator", GEN, "--db", db])
    assert res.exit_code == 2 and "--month/--paper needs exactly one" in res.output


def _calls(db: Path) -> int:
    if not db.exists():
        return 0
    with Store(db) as s:
        return s.usage()["ok"]


def test_killed_build_resumes_without_repeating_a_call(fake_env, tmp_path):
    db = tmp_path / "kill.db"
    with Store(db) as s:
        ids = add_papers(s, tmp_path, ("ALPHA", "GAMMA"))
    (tmp_path / "cfg.toml").write_text('[filter]\nreference_date = "2026-01-15"\n[translation]\nenabled = false\n')
    fake_env.set_script({"rules": rules(), "max_responses": 3})  # answer 3 requests, then hold the rest
    cmd = [PYTHON, "-m", "theorembench.cli", "eternal", "build", "--generator", GEN, "--judge", JUDGE,
           "--config", str(tmp_path / "cfg.toml"), "--instances-per-template", "3", "--db", str(db),
           "--out", str(tmp_path / "out")] + [a for pid in ids.values() for a in ("--paper", pid)]  # fmt: skip
    kill_when_held(cmd, fake_env, answered=3, stored=lambda: _calls(db), cwd=tmp_path)  # the answers are in the ledger
    assert not (tmp_path / "out" / "summary.json").exists()
    fake_env.set_script({"rules": rules()})
    done = subprocess.run(cmd, env=cli_env(), cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "EternalMath funnel" in done.stdout
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["funnel"]["instances"] == 3 and summary["funnel"]["validated_templates"] == 3
    # every prompt was answered once: classification, 2 computability, 2 templates, 2 validity
    completed = fake_env.stats()["prompt_keys_completed"]
    assert len(completed) == 7 and set(completed.values()) == {1}
    before = fake_env.stats()["total_requests"]
    again = subprocess.run(cmd, env=cli_env(), cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and fake_env.stats()["total_requests"] == before


# -- stage e through the build: code that never ends, code that reaches out, bad renderings, duplicates -------

# small limits keep these tests short; the scripted templates have no small_case_check (unverified): kept here
FAST = {"execution.per_instance_s": 0.5, "execution.timeout_s": 3, "review.keep_unverified": True}


def scripted(tid: str, problem: str, code: str, values: list[int] | None = None, **extra) -> dict:
    """A generator's template over the choice domain ``values`` (every value drawn when there are three)."""
    return {"template_id": tid, "problem_template": problem, "output_type": "Integer", "formal_solution": code,
            "natural_lang_solution": "Compute it.", "validation_rule": [], "params": {"n": {"type": "choice", "values": values or [4, 5, 6]}},
            **extra}  # fmt: skip


def test_never_ending_code_is_killed_and_the_build_goes_on(fake_env, store, tmp_path):
    looping_check = scripted("spin", "LOOP-CHECKED: How many derangements has a set of {n} elements?",
                             "while True:\n    pass\nresult = n",
                             small_case_check={"params": {"n": [4, 5]}, "code": "result = n"})  # fmt: skip
    one_loop = scripted("five", "LOOP-SQUARE: What is the square of the integer {n}?",
                        "while n == 5:\n    pass\nresult = n * n")  # fmt: skip
    deaf = scripted("deaf", "LOOP-DEAF: What is the cube of the integer {n}?",
                    "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nwhile True:\n    pass\n"
                    "result = n ** 3")  # fmt: skip
    square_ok = {"match": f"(?s){VALID}.*LOOP-SQUARE", "reply": validity_verdict(True)}
    fake_env.set_script({"rules": rules(before=[square_ok],
                                        alpha_templates=j({"templates": [looping_check, one_loop, deaf]}))})
    ids = add_papers(store, tmp_path, ("ALPHA",))
    a = ids["ALPHA"]
    result = build(store, ids, tmp_path / "o", overrides=FAST)
    assert result.funnel == {"papers": 1, "recent": 1, "authoritative": 1, "classified": 1, "in_scope": 1,
                             "computable": 1, "templates": 3, "well_formed": 3, "validated_templates": 1,
                             "reviewed_templates": 1, "instances": 2}  # fmt: skip
    assert result.summary["rejections_by_stage"] == {"cross_check": 1, "execution": 4}
    assert result.summary["instantiate"]["limits"] == {"timeout_s": 3, "memory_mb": 1024, "per_instance_s": 0.5}
    rej = lines(tmp_path / "o" / "rejections.jsonl")
    # t1: the formula never ends on the first small case, so the whole template goes
    [t1] = [r for r in rej if r["template_id"] == f"{a}:t1"]
    assert (t1["stage"], t1["params_used"]) == ("cross_check", None)
    assert t1["reason"] == "formal_solution timed out on the small case n=4: no result within 0.5 s"
    # t2: only n = 5 loops; its per-run timer costs that instance and no other
    [t2] = [r for r in rej if r["template_id"] == f"{a}:t2"]
    assert (t2["stage"], t2["params_used"]) == ("execution", {"n": 5})
    assert t2["reason"] == "timed out: no result within 0.5 s"
    insts = lines(tmp_path / "o" / "instances.jsonl")
    assert sorted((i["params_used"]["n"], i["numerical_value"]) for i in insts) == [(4, "16"), (6, "36")]
    # t3 ignores SIGALRM: no matter, each run is a child process its supervisor kills at the per-run limit
    t3 = [r for r in rej if r["template_id"] == f"{a}:t3"]
    assert sorted(r["params_used"]["n"] for r in t3) == [4, 5, 6] and {r["stage"] for r in t3} == {"execution"}
    assert {r["reason"] for r in t3} == {"timed out: no result within 0.5 s"}
    # computability, templates, one validity verdict; a rerun asks nothing again and gets the same outcome
    assert fake_env.stats()["total_requests"] == 3
    again = build(store, ids, tmp_path / "o2", overrides=FAST)
    assert fake_env.stats()["total_requests"] == 3 and again.funnel == result.funnel
    assert [(r["template_id"], r["stage"], r["reason"]) for r in lines(tmp_path / "o2" / "rejections.jsonl")] == \
        [(r["template_id"], r["stage"], r["reason"]) for r in rej]  # fmt: skip


def test_translated_code_that_never_ends_is_shown_to_the_translator_then_rejected(fake_env, store, tmp_path):
    loop = j({"formal_solution": "while True:\n    pass\nresult = n", "notes": "a loop"})
    check = j({"small_case_check": {"params": {"n": [4, 5]}, "code": DERANGE_CHECK}})
    before = [
        {"match": "Running that code in the sandbox failed", "reply": loop},
        {"match": "Write formal_solution for this template", "reply": loop},
        {"match": "Write small_case_check for the problem below", "reply": check},
    ]  # fmt: skip
    only = j({"templates": [dict(derange("a1"), formal_solution="result = 0", small_case_check=None)]})
    fake_env.set_script({"rules": rules(before=before, alpha_templates=only)})
    ids = add_papers(store, tmp_path, ("ALPHA",))
    over = {**FAST, "translation.enabled": True}
    result = build(store, ids, tmp_path / "o", overrides=over)
    assert (result.funnel["well_formed"], result.funnel["validated_templates"], result.funnel["instances"]) == (1, 0, 0)
    [rej] = lines(tmp_path / "o" / "rejections.jsonl")
    assert rej["stage"] == "cross_check"
    assert rej["reason"] == "formal_solution timed out on the small case n=4: no result within 0.5 s"
    # the one repair round showed the translator the time limit it ran into
    [repair] = [r for r in fake_env.requests if "Running that code in the sandbox failed" in json.dumps(r)]
    assert "no result within 0.5 s" in json.dumps(repair)
    assert fake_env.stats()["total_requests"] == 5  # computability, templates, solution, check, repair
    build(store, ids, tmp_path / "o2", overrides=over)
    assert fake_env.stats()["total_requests"] == 5


def test_code_reading_the_store_or_opening_a_socket_is_contained(fake_env, tmp_path):
    from theorembench.common.paths import home

    canary = "CANARY-5b1e-do-not-leak"
    db = home() / "theorembench.db"  # the store this build itself uses
    db.parent.mkdir(parents=True, exist_ok=True)
    (home() / "canary.txt").write_text(canary)
    with reaching_code(home() / "canary.txt", db) as code:  # the same code as test_eternal_instantiate.py's test
        # answer kind expression accepts a text result: had a read worked, the text would be the instance's answer
        reach = scripted("reach", "REACH-OUT: Name the value for case {n}.", code, [1, 2, 3], answer_kind="expression")
        fake_env.set_script({"rules": rules(alpha_templates=j({"templates": [reach]}))})
        with Store(db) as store:
            ids = add_papers(store, tmp_path, ("ALPHA",))
            assert db.is_file() and (home() / "canary.txt").read_text() == canary  # the host can read both
            result = build(store, ids, tmp_path / "o", overrides=FAST)
    assert (result.funnel["well_formed"], result.funnel["validated_templates"], result.funnel["instances"]) == (1, 0, 0)
    rej = {r["params_used"]["n"]: r for r in lines(tmp_path / "o" / "rejections.jsonl")}
    assert {r["stage"] for r in rej.values()} == {"execution"}
    assert_nothing_reached({n: r["reason"] for n, r in rej.items()})
    out = "".join(p.read_text() for p in (tmp_path / "o").iterdir())
    assert lines(tmp_path / "o" / "instances.jsonl") == [] and canary not in out
    assert canary not in json.dumps(fake_env.requests)  # nor did it reach a model
    assert "PAPER-ALPHA" not in (tmp_path / "o" / "rejections.jsonl").read_text()  # nothing of the store's content
    assert fake_env.stats()["total_requests"] == 2  # computability, templates: no instance to review


def test_unresolved_placeholder_and_left_name_reject_at_render(fake_env, store, tmp_path):
    undeclared = scripted("m", "RENDER-ONE: Compute {n} plus {m}.", "result = n + 1")
    left = scripted("left", "RENDER-TWO: In $S_{n}$ count the $n$-cycles; n is {n}.", "result = 1")
    fake_env.set_script({"rules": rules(alpha_templates=j({"templates": [undeclared, left]}))})
    ids = add_papers(store, tmp_path, ("ALPHA",))
    a = ids["ALPHA"]
    result = build(store, ids, tmp_path / "o", overrides=FAST)
    assert (result.funnel["templates"], result.funnel["well_formed"], result.funnel["validated_templates"],
            result.funnel["instances"]) == (2, 2, 0, 0)  # fmt: skip
    assert result.summary["rejections_by_stage"] == {"render": 6}
    rej = lines(tmp_path / "o" / "rejections.jsonl")
    assert sorted((r["template_id"], r["params_used"]["n"]) for r in rej) == [
        (f"{a}:t1", 4), (f"{a}:t1", 5), (f"{a}:t1", 6), (f"{a}:t2", 4), (f"{a}:t2", 5), (f"{a}:t2", 6)]
    assert {(r["template_id"], r["reason"]) for r in rej} == {
        (f"{a}:t1", "unresolved placeholder {m} in the problem"),
        (f"{a}:t2", "parameter name n left in the rendered problem (as a symbol in math, never bound to its value)")}
    # nothing ran: the rendering is checked before the sandbox starts
    assert [row.get("sandbox") for row in result.summary["instantiate"]["per_template"]] == [None, None]
    assert fake_env.stats()["total_requests"] == 2


def test_small_domain_and_equal_answers_are_reported_and_deduplicated(fake_env, store, tmp_path):
    parity = scripted("parity", "DUP-ONE: What is the remainder of {n} on division by 2?", "result = n % 2", [1, 3])
    ok = {"match": f"(?s){VALID}.*DUP-ONE", "reply": validity_verdict(True)}
    fake_env.set_script({"rules": rules(before=[ok], alpha_templates=j({"templates": [parity]}))})
    ids = add_papers(store, tmp_path, ("ALPHA",))
    tid = f"{ids['ALPHA']}:t1"
    result = build(store, ids, tmp_path / "o", overrides=FAST)  # three instances asked of a two-value domain
    assert (result.funnel["validated_templates"], result.funnel["reviewed_templates"], result.funnel["instances"]) \
        == (1, 1, 1)  # fmt: skip
    assert result.summary["rejections_by_stage"] == {"duplicate": 2}
    [inst] = lines(tmp_path / "o" / "instances.jsonl")
    kept = inst["params_used"]["n"]
    assert kept in (1, 3) and inst["numerical_value"] == "1"
    assert inst["instance_id"] == f"{tid}#" + hashlib.sha256(f'{{"n":{kept}}}'.encode()).hexdigest()[:10]
    rej = lines(tmp_path / "o" / "rejections.jsonl")
    [short] = [r for r in rej if r["params_used"] is None]
    assert short["stage"] == "duplicate"
    assert short["reason"] == "the parameter domain holds only 2 distinct values; 3 instances were asked for, 2 drawn"
    [same] = [r for r in rej if r["params_used"] is not None]
    assert same["stage"] == "duplicate" and same["params_used"] == {"n": 4 - kept}  # the other of 1 and 3
    assert same["reason"] == f"same answer as {inst['instance_id']}"
    assert fake_env.stats()["total_requests"] == 3  # computability, templates, one validity verdict
