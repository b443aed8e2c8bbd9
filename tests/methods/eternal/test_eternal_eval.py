"""EternalMath tiers, calibration, evaluation, taxonomy, radar, report and audit, with scripted models on 127.0.0.1."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from theorembench.cli import app
from theorembench.common.errors import UserError
from theorembench.common.stats import Estimate
from theorembench.methods.eternal.audit import audit_import, audit_sample
from theorembench.methods.eternal.calibrate import calibrate
from theorembench.methods.eternal.difficulty import parse_rule, tier_of, tier_ranges, tiers_from_rows
from theorembench.methods.eternal.evaluate import evaluate_eternal, import_taxonomy
from theorembench.methods.eternal.radar import radar
from theorembench.methods.eternal.report import render
from theorembench.methods.eternal.scoring import summarize
from theorembench.methods.eternal.taxonomy import export_labels
from theorembench.store.steps import Steps

SUITE = [f"openai-api/fake/m{i}" for i in range(1, 6)]
RIGHT, WRONG = "So the value is \\boxed{12}.", "So the value is \\boxed{13}."
cli = CliRunner()


def instance(iid: str, *, value: str = "12", tier: str | None = None, msc: list[str] | None = None) -> dict:
    """One instance line in the shared format, written by hand."""
    row = {"template_id": "t_demo", "instance_id": f"t_demo#{iid}", "problem": f"PROBLEM-{iid}: compute the value.",
           "solution_steps": "By the theorem the value is 12.", "numerical_value": value, "exact_expression": "",
           "params_used": {"n": 3}, "answer_kind": "integer", "msc": msc if msc is not None else ["05"],
           "paper_id": None, "theorem": None, "template_version": 1, "code_hash": "0" * 64, "seed": 1,
           "execution": {"status": "ok", "isolation": [], "wall_s": 0.01, "cpu_s": 0.01}, "libraries": {}}  # fmt: skip
    if tier is not None:
        row.update(tier=tier, n_models_correct=0, suite_size=5)
    return row


def write_instances(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def script_from(table: dict[str, dict[str, str]]) -> dict:
    """Fake-server rules from ``instance -> model -> 'CCW'`` (C: a correct trial, W: a wrong one)."""
    rules = [{"match": f"PROBLEM-{iid}:", "model": model, "reply": [RIGHT if c == "C" else WRONG for c in outcomes]}
             for iid, per_model in table.items() for model, outcomes in per_model.items()]  # fmt: skip
    return {"default": {"reply": WRONG}, "rules": rules}


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# -- tiers: pure ------------------------------------------------------------------------------


def test_thresholds_reproduce_the_papers_five_model_tiers_and_scale_by_fraction():
    # the per-model rule's exclusion: all models correct is always excluded
    assert tier_ranges(5, "rule") == {"easy": [4], "medium": [2, 3], "hard": [0, 1], "excluded": [5]}
    assert tier_ranges(10, "rule") == {"easy": [8, 9], "medium": [4, 5, 6, 7], "hard": [0, 1, 2, 3], "excluded": [10]}
    assert tier_ranges(3, "rule") == {"easy": [], "medium": [2], "hard": [0, 1], "excluded": [3]}
    # the paper's: five of five correct is easy (4+), unless every trial of every model was right (excluded)
    assert tier_ranges(5) == {"easy": [4, 5], "medium": [2, 3], "hard": [0, 1], "excluded": [5]}
    assert tier_of(1, 5) == "hard" and tier_of(2, 5) == "medium" and tier_of(4, 5) == "easy" and tier_of(5, 5) is None
    with pytest.raises(ValueError):
        tier_of(6, 5)


def test_rules_over_trials():
    two_of_three = [True, False, True]
    assert parse_rule("majority").correct(two_of_three) and not parse_rule("majority").correct([True, False])
    assert parse_rule("any").correct([False, True, False]) and not parse_rule("all").correct(two_of_three)
    assert parse_rule("at_least:2").correct(two_of_three) and not parse_rule("at_least:3").correct(two_of_three)
    with pytest.raises(ValueError, match="unknown rule"):
        parse_rule("most")
    with pytest.raises(ValueError, match="at_least:4"):
        parse_rule("at_least:4").check(3)


# -- calibrate: five scripted models, K = 3 -----------------------------------------------------

# instance -> model -> outcome of trials 1..3; models not listed answer wrong every time.
TABLE = {
    "P1": {"m1": "CCC", "m2": "CCC", "m3": "CCC", "m4": "CCC", "m5": "CCC"},  # all five: excluded
    "P2": {"m1": "CCC", "m2": "CCC", "m3": "CWC", "m4": "CCW"},  # four: easy
    "P3": {"m1": "CCC", "m2": "WCC", "m3": "CCC", "m4": "CWW"},  # three (m4 has 1 of 3): medium
    "P4": {"m1": "CCC", "m2": "CWC", "m5": "WWC"},  # two: medium
    "P5": {"m1": "CWC", "m2": "WWC"},  # one: hard
    "P6": {"m2": "WCW", "m3": "CWW", "m4": "WWC", "m5": "WCW"},  # none by majority (four with 1 of 3): hard
}


def test_calibrate_tiers_five_scripted_models_majority_of_three(fake_env, store, tmp_path):
    fake_env.set_script(script_from(TABLE))
    src = write_instances(tmp_path / "instances.jsonl", [instance(i) for i in TABLE])
    out = tmp_path / "cal"
    result = calibrate(store, src, SUITE, 3, out_dir=out)
    assert fake_env.stats()["total_requests"] == 6 * 5 * 3
    kept = {r["instance_id"]: (r["tier"], r["n_models_correct"], r["suite_size"])
            for r in read_jsonl(out / "calibrated.jsonl")}  # fmt: skip
    assert kept == {"t_demo#P2": ("easy", 4, 5), "t_demo#P3": ("medium", 3, 5), "t_demo#P4": ("medium", 2, 5),
                    "t_demo#P5": ("hard", 1, 5), "t_demo#P6": ("hard", 0, 5)}  # fmt: skip
    excluded = read_jsonl(out / "excluded.jsonl")
    assert [r["instance_id"] for r in excluded] == ["t_demo#P1"] and excluded[0]["n_models_correct"] == 5
    assert result.table["tiers"] == {"easy": {"n": 1, "share": 0.2}, "medium": {"n": 2, "share": 0.4},
                                     "hard": {"n": 2, "share": 0.4}}  # fmt: skip
    # the instance lines keep every field of the input
    p2 = next(r for r in read_jsonl(out / "calibrated.jsonl") if r["instance_id"] == "t_demo#P2")
    assert p2["problem"] == "PROBLEM-P2: compute the value." and p2["params_used"] == {"n": 3}

    rows = read_jsonl(out / "trials.jsonl")
    assert len(rows) == 90 and all(r["status"] == "ok" for r in rows)
    m3_p2 = sorted(r["correct"] for r in rows if r["instance_id"] == "t_demo#P2" and r["model"] == SUITE[2])
    assert m3_p2 == [False, True, True]  # distinct samples: the scripted sequence was walked, not one cached reply

    # recomputed from the stored rows for another rule or suite, without any model call
    ids = [f"t_demo#{i}" for i in TABLE]
    anyrule = {a.instance_id: a.tier for a in tiers_from_rows(rows, ids, SUITE, 3, parse_rule("any"))}
    assert anyrule["t_demo#P6"] == "easy" and anyrule["t_demo#P5"] == "medium" and anyrule["t_demo#P4"] == "medium"
    four = {a.instance_id: (a.status, a.tier) for a in tiers_from_rows(rows, ids, SUITE[:4], 3, parse_rule("majority"))}
    # P2: all four correct by majority, but m3 and m4 each missed a trial: easy by the paper's exclusion, excluded
    # by the per-model rule's; P1 (every trial right) is excluded by both
    assert four["t_demo#P2"] == ("tiered", "easy") and four["t_demo#P4"] == ("tiered", "medium")
    assert four["t_demo#P1"] == ("excluded", None)
    by_rule = {a.instance_id: a.status for a in tiers_from_rows(rows, ids, SUITE[:4], 3, parse_rule("majority"),
                                                                  "rule")}  # fmt: skip
    assert by_rule["t_demo#P2"] == "excluded"

    # a second run asks nothing: every trial is a finished step
    again = calibrate(store, src, SUITE, 3, out_dir=out)
    assert fake_env.stats()["total_requests"] == 90 and again.calls_made == 0
    assert again.table == result.table


def test_failed_call_is_no_outcome_and_a_resumed_run_asks_only_it(fake_env, store, tmp_path):
    table = {"Q1": {"m1": "CC", "m2": "CC"}, "Q2": {"m1": "CC", "m2": "WW"}}
    script = script_from(table)
    for rule in script["rules"]:
        if rule["match"] == "PROBLEM-Q2:" and rule["model"] == "m2":
            rule["faults"] = [{"kind": "500", "times": 1}]
    fake_env.set_script(script)
    src = write_instances(tmp_path / "i.jsonl", [instance("Q1"), instance("Q2")])
    suite, out = SUITE[:2], tmp_path / "cal"
    first = calibrate(store, src, suite, 2, out_dir=out, max_retries=0)
    assert fake_env.stats()["total_requests"] == 8 and first.failed_trials == 1
    assert first.pending == ["t_demo#Q2"]
    assert [r["instance_id"] for r in read_jsonl(out / "excluded.jsonl")] == ["t_demo#Q1"]
    assert read_jsonl(out / "calibrated.jsonl") == []  # Q2 is pending: not tiered on three of four trials
    failed = [r for r in read_jsonl(out / "trials.jsonl") if r["status"] != "ok"]
    assert len(failed) == 1 and failed[0]["correct"] is None and failed[0]["model"] == SUITE[1]
    assert first.summary["per_model"][SUITE[1]]["trials"] == 3  # the failed trial is not counted as answered
    steps = [res.status for _, _, res in Steps(store, first.summary["pipeline"]).all("answer")]
    assert sorted(steps) == ["failed"] + ["ok"] * 7

    second = calibrate(store, src, suite, 2, out_dir=out, max_retries=0)
    assert fake_env.stats()["total_requests"] == 9  # only the failed trial was asked again
    assert second.pending == [] and second.failed_trials == 0
    assert [(r["instance_id"], r["tier"]) for r in read_jsonl(out / "calibrated.jsonl")] == [("t_demo#Q2", "medium")]
    calibrate(store, src, suite, 2, out_dir=out, max_retries=0)
    assert fake_env.stats()["total_requests"] == 9


def test_calibrate_checks_before_any_call(fake_env, store, tmp_path):
    src = write_instances(tmp_path / "i.jsonl", [instance("Q1")])
    with pytest.raises(UserError, match="at_least:3"):
        calibrate(store, src, SUITE, 2, rule="at_least:3", out_dir=tmp_path / "c")
    with pytest.raises(UserError, match="twice"):
        calibrate(store, src, [SUITE[0], SUITE[0]], 2, out_dir=tmp_path / "c")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"instance_id": "x", "problem": "p"}) + "\n")
    with pytest.raises(UserError, match="no numerical_value"):
        calibrate(store, bad, SUITE, 2, out_dir=tmp_path / "c")
    assert fake_env.stats()["total_requests"] == 0


def test_calibrate_cli_prints_the_tier_table(fake_env, tmp_path):
    fake_env.set_script(script_from({"P2": TABLE["P2"], "P5": TABLE["P5"]}))
    src = write_instances(tmp_path / "i.jsonl", [instance("P2"), instance("P5")])
    args = ["eternal", "calibrate", str(src), *[x for m in SUITE for x in ("--suite", m)], "--trials", "3",
            "--out", str(tmp_path / "cal"), "--db", str(tmp_path / "c.db")]  # fmt: skip
    res = cli.invoke(app, args, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert "EternalMath tiers: 5 models, 3 trials each, rule majority" in res.output
    lines = {line.split("│")[1].strip(): line for line in res.output.splitlines() if line.count("│") >= 4}
    assert "4–5" in lines["easy"] and "50.0%" in lines["easy"] and "0–1" in lines["hard"]
    assert "every model of the suite answered right in every trial" in " ".join(res.output.split())


# -- eval, taxonomy and overrides -------------------------------------------------------------


def labels_reply(*names: str) -> str:
    return json.dumps({"labels": list(names), "rationale": "scripted"})


def test_eval_per_tier_and_msc_with_failed_call_and_taxonomy_round_trip(fake_env, store, tmp_path):
    rows = [instance("E1", tier="easy", msc=["05"]), instance("E2", tier="easy", msc=["05C50", "20"]),
            instance("H1", tier="hard", msc=["11"]), instance("H2", tier="hard", msc=["11"]),
            instance("H3", tier="hard", msc=["11"])]  # fmt: skip
    src = write_instances(tmp_path / "calibrated.jsonl", rows)
    fake_env.set_script({"default": {"reply": WRONG}, "rules": [
        {"match": "PROBLEM-E1:", "model": "ev", "reply": RIGHT},
        {"match": "PROBLEM-E2:", "model": "ev", "reply": RIGHT},
        {"match": "PROBLEM-H1:", "model": "ev", "reply": RIGHT},
        {"match": "PROBLEM-H3:", "model": "ev", "reply": WRONG, "faults": [{"kind": "500", "times": 1}]},
        {"match": "PROBLEM-H2:", "model": "judge", "reply": labels_reply("Knowledge Gap", "Calculation Drift")},
        {"match": "PROBLEM-H3:", "model": "judge", "reply": labels_reply("Knowledge Gap")},
    ]})  # fmt: skip
    out = tmp_path / "ev"
    got = evaluate_eternal(store, src, "openai-api/fake/ev", judge="openai-api/fake/judge", out_dir=out,
                           max_retries=0, log_dir=tmp_path / "logs")  # fmt: skip
    s = got.results["summary"]
    # H3's call failed transiently: no answer, so it counts in n as not correct, and is asked again next run
    assert (s["errors"], s["pending"], s["failed_samples"]) == (0, 1, 1)
    assert s["overall"] == {"value": 0.6, "ci95": [0.2307, 0.8824], "n": 5, "errors": 1, "method": "wilson",
                            "correct": 3}  # fmt: skip
    assert s["score"] == {k: s["overall"][k] for k in ("value", "ci95", "n", "errors", "method")}  # the headline
    # the one result every evaluation returns: the headline as an Estimate, the files, the pending sample
    assert (got.kind, got.score, got.incomplete) == ("eternal.eval", Estimate(0.6, 5, 0.2307, 0.8824, "wilson", 1), 1)
    assert got.path == out / "results_openai-api_fake_ev.json" and got.files["report"].is_file() and got.log.is_file()
    assert (s["answered_only"]["n"], s["answered_only"]["value"]) == (4, 0.75)  # secondary, labelled
    assert (s["by_tier"]["easy"]["n"], s["by_tier"]["easy"]["value"]) == (2, 1.0)
    assert (s["by_tier"]["hard"]["n"], s["by_tier"]["hard"]["value"], s["by_tier"]["hard"]["ci95"]) == \
        (3, 0.3333, [0.0615, 0.7923])  # fmt: skip
    assert (s["by_tier"]["hard"]["errors"], s["by_tier"]["easy"]["errors"]) == (1, 0)
    assert {c: (b["n"], b["correct"]) for c, b in s["by_msc"].items()} == {"05": (2, 2), "11": (3, 1), "20": (1, 1)}
    assert got.log is not None and got.log.exists()
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(got.log))
    assert [sc.name for sc in log.results.scores] == ["final_answer"] and log.results.total_samples == 5
    tax = got.results["taxonomy"]
    assert (tax["failures"], tax["labelled"], tax["unlabelled"]) == (1, 1, 0)
    assert tax["counts"]["Knowledge Gap"] == 1 and tax["counts"]["Calculation Drift"] == 1
    assert sum(tax["counts"].values()) == 2
    report = got.files["report"].read_text()
    assert "| openai-api/fake/ev | 1 | 60.0% [23.1–88.2] n=5, 1 error |" in report  # H3's failed call
    assert (out / "taxonomy.svg").exists() and (out / "radar.svg").exists()

    # a rerun asks only the failed sample (and the judge for the new wrong answer it gets)
    before = fake_env.stats()["total_requests"]
    again = evaluate_eternal(store, src, "openai-api/fake/ev", judge="openai-api/fake/judge", out_dir=out,
                             max_retries=0, write_log=False)  # fmt: skip
    assert fake_env.stats()["total_requests"] == before + 2
    assert again.results["summary"]["overall"]["n"] == 5 and again.results["taxonomy"]["labelled"] == 2

    # export, a person edits, import: overrides win
    labels_csv = export_labels(again.results["taxonomy"]["labels"], tmp_path / "labels.csv")
    with labels_csv.open() as fh:
        exported = list(csv.DictReader(fh))
    assert {r["instance_id"]: r["labels"] for r in exported} == {
        "t_demo#H2": "Knowledge Gap; Calculation Drift", "t_demo#H3": "Knowledge Gap"}
    h2 = next(r for r in exported if r["instance_id"] == "t_demo#H2")
    edited = tmp_path / "edited.csv"
    with edited.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(exported[0]))
        w.writeheader()
        w.writerow({**h2, "labels": "stop too early; Boundary Neglect"})
    stored, _ = import_taxonomy(store, edited, again.path)
    assert stored == 1
    doc = json.loads(again.path.read_text())
    assert doc["taxonomy"]["overridden"] == 1
    assert {k: v for k, v in doc["taxonomy"]["counts"].items() if v} == {
        "Knowledge Gap": 1, "Stop-too-early": 1, "Boundary Neglect": 1}

    # an unknown category or id stops the whole import: one line per bad row, nothing stored
    bad = tmp_path / "bad.json"
    h3 = next(r for r in exported if r["instance_id"] == "t_demo#H3")
    bad.write_text(json.dumps([{"id": h3["id"], "labels": ["Inconsistency"]},
                               {"id": h2["id"], "labels": ["Bad Luck"]},
                               {"id": "nobody|t_demo#Z|0|00000000", "labels": ["Inconsistency"]}]))  # fmt: skip
    with pytest.raises(UserError) as info:
        import_taxonomy(store, bad, again.path)
    lines = str(info.value).splitlines()
    assert len(lines) == 2 and "item 2: unknown category 'Bad Luck'" in lines[0] and "item 3: unknown id" in lines[1]
    doc = json.loads(again.path.read_text())
    assert doc["taxonomy"]["counts"]["Inconsistency"] == 0 and doc["taxonomy"]["overridden"] == 1


def test_invalid_judge_labels_are_a_failed_step(fake_env, store, tmp_path):
    src = write_instances(tmp_path / "c.jsonl", [instance("H1", tier="hard")])
    fake_env.set_script({"default": {"reply": WRONG}, "rules": [
        {"match": "PROBLEM-H1:", "model": "judge", "reply": labels_reply("Bad Luck")}]})  # fmt: skip
    got = evaluate_eternal(store, src, "openai-api/fake/ev", judge="openai-api/fake/judge", out_dir=tmp_path / "o",
                           write_log=False)  # fmt: skip
    tax = got.results["taxonomy"]
    assert (tax["failures"], tax["labelled"], tax["unlabelled"]) == (1, 0, 1)
    assert sum(tax["counts"].values()) == 0 and tax["labels"][0]["status"] == "failed"


def test_mean_at_n_uses_distinct_samples_and_a_wilson_interval_at_the_mean(fake_env, store, tmp_path):
    src = write_instances(tmp_path / "c.jsonl", [instance("M1", tier="medium"), instance("M2", tier="medium")])
    fake_env.set_script({"default": {"reply": WRONG}, "rules": [
        {"match": "PROBLEM-M1:", "model": "ev", "reply": [RIGHT, WRONG, RIGHT]},
        {"match": "PROBLEM-M2:", "model": "ev", "reply": RIGHT}]})  # fmt: skip
    got = evaluate_eternal(store, src, "openai-api/fake/ev", n=3, out_dir=tmp_path / "o", write_log=False)
    items = {i["instance_id"]: i["score"] for i in got.results["items"]}
    assert items == {"t_demo#M1": pytest.approx(2 / 3), "t_demo#M2": 1.0}
    medium = got.results["summary"]["by_tier"]["medium"]
    # two items scoring 2/3 and 1: mean 5/6; Wilson at p = 5/6 with n = 2, by hand with z = 1.96
    z, p, n = 1.96, 5 / 6, 2
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert (medium["n"], medium["value"], medium["method"]) == (2, 0.8333, "wilson-mean")
    assert medium["ci95"] == pytest.approx([centre - half, min(1.0, centre + half)], abs=2e-4)
    assert fake_env.stats()["total_requests"] == 6


def test_eval_taxonomy_and_report_commands(fake_env, tmp_path):
    src = write_instances(tmp_path / "c.jsonl", [instance("E1", tier="easy"), instance("H1", tier="hard")])
    fake_env.set_script({"default": {"reply": WRONG}, "rules": [
        {"match": "PROBLEM-E1:", "model": "ev", "reply": RIGHT},
        {"match": "PROBLEM-H1:", "model": "judge", "reply": labels_reply("Redundancy Loop")}]})  # fmt: skip
    db, out = str(tmp_path / "c.db"), tmp_path / "ev"
    res = cli.invoke(app, ["eternal", "eval", str(src), "--model", "openai-api/fake/ev", "--judge",
                           "openai-api/fake/judge", "--out", str(out), "--db", db], catch_exceptions=False)  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "50.0% [9.4–90.5] n=2" in res.output and "Redundancy Loop" in res.output
    results = out / "results_openai-api_fake_ev.json"
    res = cli.invoke(app, ["eternal", "taxonomy", "export", str(results), "--out", str(tmp_path / "l.json")])
    assert res.exit_code == 0, res.output
    rows = json.loads((tmp_path / "l.json").read_text())
    assert [r["labels"] for r in rows] == [["Redundancy Loop"]]
    rows[0]["labels"] = ["Inconsistency", "calculation drift"]
    (tmp_path / "l.json").write_text(json.dumps(rows))
    res = cli.invoke(app, ["eternal", "taxonomy", "import", str(tmp_path / "l.json"), "--results", str(results),
                           "--db", db])  # fmt: skip
    assert res.exit_code == 0, res.output
    counts = json.loads(results.read_text())["taxonomy"]["counts"]
    assert {k: v for k, v in counts.items() if v} == {"Inconsistency": 1, "Calculation Drift": 1}
    rows[0]["labels"] = ["Luck"]
    (tmp_path / "l.json").write_text(json.dumps(rows))
    res = cli.invoke(app, ["eternal", "taxonomy", "import", str(tmp_path / "l.json"), "--results", str(results),
                           "--db", db])  # fmt: skip
    assert res.exit_code == 2 and "unknown category 'Luck'" in res.output
    res = cli.invoke(app, ["eternal", "report", str(results), "--out", str(tmp_path / "rep")])
    assert res.exit_code == 0, res.output
    assert "D1 difficulty" in res.output and "population standard deviation" in res.output
    assert "| Inconsistency | 1 |" in (tmp_path / "rep" / "report.md").read_text()


# -- the paper's figures through the report code ------------------------------------------------


def synthetic_items() -> list[dict]:
    items = []
    for tier, total, right in (("easy", 116, 110), ("medium", 262, 200), ("hard", 404, 31)):
        for k in range(total):
            items.append({"instance_id": f"{tier}{k}", "tier": tier, "msc": ["05"],
                          "samples": [{"sample": 0, "status": "ok", "correct": k < right}]})  # fmt: skip
    return items


def test_regression_on_the_papers_per_tier_percentages():
    items = synthetic_items()
    assert len(items) == 782
    summary = summarize(items, 1)
    tiers = summary["by_tier"]
    assert [round(100 * tiers[t]["value"], 1) for t in ("easy", "medium", "hard")] == [94.8, 76.3, 7.7]
    assert (tiers["easy"]["n"], tiers["medium"]["n"], tiers["hard"]["n"]) == (116, 262, 404)
    assert tiers["hard"]["ci95"] == [0.0546, 0.1069]
    assert summary["tier_share"]["hard"] == {"n": 404, "share": 0.5166}
    doc = {"kind": "eternal.eval", "model": "paper-model", "file": "synthetic.jsonl", "summary": summary,
           "items": items, "taxonomy": None}  # fmt: skip
    text, svgs = render([doc])
    assert "| paper-model | 1 | 43.6% [40.2–47.1] n=782 | 94.8% [89.2–97.6] n=116 | 76.3% [70.8–81.1] n=262 | " \
           "7.7% [5.5–10.7] n=404 |" in text  # fmt: skip
    assert "hard 404 (51.66%)" in text
    assert "tiers_paper-model.svg" in svgs


# -- radar -----------------------------------------------------------------------------------


def test_radar_on_a_hand_made_result_set():
    measured = {"measured": True, "against": "(no corpus given) only among the instances of other templates"}
    instances = [{"msc": ["05", "20"], "paper_id": "p1", "originality": dict(measured, original=True)},
                 {"msc": ["05C50"], "academic_level": "graduate", "originality": dict(measured, original=True)},
                 {"msc": ["11"], "paper_id": "p2", "originality": dict(measured, original=False)},
                 {"msc": ["97"], "originality": dict(measured, original=True)}]  # fmt: skip
    r = radar({"a": 0.5, "b": 0.25, "c": 0.75}, instances)
    # mu = 0.5; population sigma = sqrt((0 + 0.0625 + 0.0625) / 3) = 0.2041; D4 = (1.0 + 0.8 + 1.0) / 3 (the
    # fourth has no level); classes 05, 11, 20 of the 60 (97 is excluded by construction); 3 of 4 original
    assert r["indicators"] == {"D1": 0.5, "D2": 0.25, "D3": 0.4082, "D4": 0.9333, "D5": 0.05, "D6": 0.75}
    assert r["sigma_kind"] == "population" and r["covered_classes"] == ["05", "11", "20"]
    assert r["d5_denominator"] == 60
    unmeasured = radar({"a": 0.0}, [{"msc": ["05"]}])
    assert unmeasured["indicators"]["D3"] is None and unmeasured["indicators"]["D6"] is None
    assert unmeasured["indicators"]["D4"] is None and any("D6 undefined" in c for c in unmeasured["choices"])


def test_report_states_the_radar_choices_for_several_models():
    def doc(model: str, right: int) -> dict:
        items = [{"instance_id": f"i{k}", "tier": "hard" if k < 2 else "medium", "msc": ["05"] if k % 2 else ["11"],
                  "samples": [{"sample": 0, "status": "ok", "correct": k < right}]} for k in range(4)]  # fmt: skip
        return {"kind": "eternal.eval", "model": model, "file": "f.jsonl", "summary": summarize(items, 1),
                "items": items, "taxonomy": None}  # fmt: skip

    text, svgs = render([doc("a", 2), doc("b", 1), doc("c", 3)])
    assert "| D1 difficulty | 0.50 | 0.17 |" in text  # hard tier: accuracies 1, 0.5, 1 -> mu 5/6
    assert "| D3 discriminability | 0.41 | 0.28 |" in text
    assert "population standard deviation" in text and "of 60" in text and "models: a, b, c (3)" in text
    assert 'class="series"' in svgs["radar.svg"]


# -- audit -----------------------------------------------------------------------------------


def test_audit_blind_sample_and_precision_with_wilson_interval(tmp_path):
    rows = [instance(f"A{k}", tier="hard") for k in range(5)]
    src = write_instances(tmp_path / "c.jsonl", rows)
    got = audit_sample(src, tmp_path / "audit.csv", n=100, seed=7)
    assert got["n"] == 5
    text = (tmp_path / "audit.csv").read_text()
    assert "t_demo" not in text and "hard" not in text  # no instance id, template or tier is shown
    with (tmp_path / "audit.csv").open() as fh:
        sample = list(csv.DictReader(fh))
    assert list(sample[0]) == ["audit_id", "problem", "answer", "solution_steps", "verdict", "comment"]
    assert [r["audit_id"] for r in sample] == ["A001", "A002", "A003", "A004", "A005"]
    verdicts = ["valid", "Valid", "valid", "invalid", ""]
    for r, v in zip(sample, verdicts, strict=True):
        r["verdict"] = v
    with (tmp_path / "audit.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(sample[0]))
        w.writeheader()
        w.writerows(sample)
    result = audit_import(tmp_path / "audit.csv")
    assert (result["judged"], result["valid"], result["invalid"], result["unjudged"]) == (4, 3, 1, 1)
    assert result["precision"]["value"] == 0.75 and result["precision"]["ci95"] == [0.3006, 0.9544]
    key = json.loads((tmp_path / "audit.key.json").read_text())["key"]
    assert result["invalid_instances"] == [key["A004"]]

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"audit_id": "A001", "verdict": "maybe"}, {"audit_id": "A999", "verdict": "valid"}]))
    with pytest.raises(UserError) as info:
        audit_import(bad, key=tmp_path / "audit.key.json")
    assert len(str(info.value).splitlines()) == 2


def test_audit_cli(tmp_path):
    src = write_instances(tmp_path / "c.jsonl", [instance(f"A{k}") for k in range(3)])
    res = cli.invoke(app, ["eternal", "audit", "sample", "--n", "2", str(src), "--out", str(tmp_path / "s.json")])
    assert res.exit_code == 0, res.output
    sample = json.loads((tmp_path / "s.json").read_text())
    assert len(sample) == 2
    for r in sample:
        r["verdict"] = "valid"
    (tmp_path / "s.json").write_text(json.dumps(sample))
    res = cli.invoke(app, ["eternal", "audit", "import", str(tmp_path / "s.json")])
    assert res.exit_code == 0, res.output
    assert "100.0% [34.2–100.0] n=2" in res.output


def test_a_call_refused_for_good_counts_as_not_correct_and_is_never_asked_again(fake_env, store, tmp_path):
    """A deterministic 400 ("prompt is too long") is final for its sample: in n, under errors, not asked again."""
    rows = [instance(f"I{k}") for k in range(1, 7)]
    src = write_instances(tmp_path / "instances.jsonl", rows)
    too_long = [{"kind": "400", "times": 99, "message": "prompt is too long"}]
    fake_env.set_script({"default": {"reply": RIGHT}, "rules": [
        {"match": "PROBLEM-I5:", "model": "ev", "faults": too_long},
        {"match": "PROBLEM-I6:", "model": "ev", "faults": too_long}]})  # fmt: skip
    first = evaluate_eternal(store, src, "openai-api/fake/ev", out_dir=tmp_path / "ev", write_log=False)
    s = first.results["summary"]
    # the model that errors on 2 of 6 scores 4/6, not 4/4
    assert (s["overall"]["n"], s["overall"]["correct"], s["errors"], s["pending"]) == (6, 4, 2, 0)
    assert {i["instance_id"]: i["samples"][0]["status"] for i in first.results["items"]}["t_demo#I5"] == "error"
    before = fake_env.stats()["total_requests"]
    again = evaluate_eternal(store, src, "openai-api/fake/ev", out_dir=tmp_path / "ev", write_log=False)
    assert fake_env.stats()["total_requests"] == before  # final: nothing is asked again
    assert again.results["summary"]["overall"]["n"] == 6 and again.results["summary"]["errors"] == 2


def test_calibration_counts_a_refused_trial_as_not_correct_instead_of_leaving_it_pending(fake_env, store, tmp_path):
    src = write_instances(tmp_path / "instances.jsonl", [instance("P1")])
    fake_env.set_script({"default": {"reply": RIGHT}, "rules": [
        {"match": "PROBLEM-P1:", "model": "m5", "faults": [{"kind": "400", "times": 99}]}]})  # fmt: skip
    got = calibrate(store, src, SUITE, 1, out_dir=tmp_path / "cal")
    # four models right, m5 refused: 4 of 5 correct is easy (the paper's c = 4), not pending
    assert got.pending == [] and got.summary["refused_trials"] == 1
    [kept] = read_jsonl(tmp_path / "cal" / "calibrated.jsonl")
    assert (kept["tier"], kept["n_models_correct"]) == ("easy", 4)
