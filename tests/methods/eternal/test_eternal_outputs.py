"""EternalMath's measured radar, its missing outputs and evaluation settings (issue 21, items 16-18), with scripted
models on 127.0.0.1 and hand-counted expectations."""

from __future__ import annotations

import json
from pathlib import Path

from theorembench.methods.eternal.evaluate import evaluate_eternal
from theorembench.methods.eternal.originality import measure_instances
from theorembench.methods.eternal.report import radars

M1 = "openai-api/fake/m1"
RIGHT, WRONG = "So the value is \\boxed{12}.", "So the value is \\boxed{13}."
GROUPS = ("Let G be a finite group of order {v} and H a subgroup of index two; how many conjugacy classes of G meet "
          "H when G acts on itself by conjugation?")  # fmt: skip
PATHS = ("Count the lattice paths from the origin to the point ({v}, {v}) that use unit steps east and north and never "
         "rise above the diagonal line joining the two endpoints.")  # fmt: skip


def row(tid: str, k: int, problem: str, **extra) -> dict:
    """One instance line in the shared format, written by hand (answer 12)."""
    return {"template_id": tid, "instance_id": f"{tid}#{k}", "problem": problem.format(v=k + 3),
            "solution_steps": "By the theorem.", "numerical_value": "12", "answer_kind": "integer",
            "msc": ["05"], "paper_id": "2501.00001v1", "theorem": "Theorem 1", **extra}  # fmt: skip


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


# -- item 16: D4, D5 and D6 are measured -------------------------------------------------------------------


def test_originality_is_measured_against_a_corpus_and_other_templates(tmp_path):
    # template a: 2 instances; template b states a's problem with other numbers (a near-duplicate across
    # templates: numbers normalise to one token, so the estimated similarity is 1); template c is
    # a corpus text with other numbers; template d is new. Same-template instances are never compared.
    rows = [row("a", 0, GROUPS), row("a", 1, GROUPS), row("b", 5, GROUPS),
            row("c", 0, PATHS), row("d", 0, "Find the number of spanning trees of the complete graph on {v} vertices, "
                                              "counted as labelled trees on a fixed vertex set.")]  # fmt: skip
    corpus = tmp_path / "known.txt"
    corpus.write_text(PATHS.format(v=10) + "\n")
    found = measure_instances(rows, [str(corpus)])
    assert {k: v["original"] for k, v in found.items()} == {"a#0": False, "a#1": False, "b#5": False, "c#0": False,
                                                            "d#0": True}  # fmt: skip
    assert found["c#0"]["nearest"] == f"{corpus}:1" and found["b#5"]["nearest"].startswith("a#")
    alone = measure_instances(rows[:2] + rows[3:])  # no corpus, no b: only the cross-template comparison
    assert all(v["original"] for v in alone.values()) and "no corpus given" in alone["a#0"]["against"]


def test_eval_records_levels_and_originality_and_the_radar_reads_them(fake_env, store, tmp_path):
    rows = [row("a", 0, GROUPS), row("b", 0, GROUPS.replace("{v}", "{v}1")),
            row("c", 0, PATHS, paper_id=None, theorem=None, academic_level="olympiad", msc=["97", "11"]),
            row("d", 0, "How many labelled trees on {v} vertices are there?", paper_id=None, theorem=None)]
    path = write(tmp_path / "i.jsonl", rows)
    fake_env.set_script({"default": {"reply": RIGHT}, "rules": [{"match": "labelled trees", "reply": WRONG}]})
    result = evaluate_eternal(store, path, M1, out_dir=tmp_path / "o", write_log=False)
    items = {i["instance_id"]: i for i in result.results["items"]}
    assert [items[k]["academic_level"] for k in ("a#0", "b#0", "c#0", "d#0")] == ["research", "research",
                                                                                  "olympiad", None]  # fmt: skip
    assert [items[k]["originality"]["original"] for k in ("a#0", "b#0", "c#0", "d#0")] == [False, False, True, True]
    r = radars([result.results])["all"]["indicators"]
    # D4 = (1.0 + 1.0 + 0.6) / 3 over the 3 instances with a level; D5 = classes 05, 11 of 60 (97 is excluded by
    # construction); D6 = 2 original of 4; one model at 3/4: D1 = D2 = 0.25
    assert r == {"D1": 0.25, "D2": 0.25, "D3": 0.0, "D4": 0.8667, "D5": 0.0333, "D6": 0.5}


# -- item 17: Table 1, Figures 4 and 5, the public subset, the audit's removals ----------------------------


def test_table1_counts_each_paper_once_under_its_primary_class():
    from theorembench.methods.eternal.release import msc_table

    # papers: p1 (05, two instances), p2 (05), p3 (35), p4 (11 primary, 05 secondary): 05 2 of 4, 11 and 35 1 each
    rows = [row("a", 0, PATHS, paper_id="p1", msc=["05"]), row("a", 1, PATHS, paper_id="p1", msc=["05"]),
            row("b", 0, PATHS, paper_id="p2", msc=["05A05"]), row("c", 0, PATHS, paper_id="p3", msc=["35"]),
            row("d", 0, PATHS, paper_id="p4", msc=["11", "05"])]  # fmt: skip
    t = msc_table(rows)
    assert t["papers"] == 4
    assert [(r["class"], r["papers"], r["share"]) for r in t["rows"]] == [("05", 2, 0.5), ("11", 1, 0.25),
                                                                          ("35", 1, 0.25)]  # fmt: skip
    assert t["rows"][0]["name"] == "Combinatorics"
    grouped = msc_table(rows, other_below=0.3)  # 11 and 35 at 25% each fall under 30%: "Other", 2 papers
    assert [(r["class"], r["papers"]) for r in grouped["rows"]] == [("05", 2), ("other", 2)]


def test_report_draws_the_models_side_by_side(fake_env, store, tmp_path):
    tiers = ["easy", "medium", "hard", "hard"]
    rows = [row(f"t{k}", 0, PATHS.replace("lattice", f"lattice-{k}"), tier=t) for k, t in enumerate(tiers)]
    path = write(tmp_path / "i.jsonl", rows)
    fake_env.set_script({"default": {"reply": RIGHT}, "rules": [{"match": "lattice-3", "reply": WRONG},
                                                                {"match": "lattice-2", "model": "m2", "reply": WRONG}]})
    for model in (M1, "openai-api/fake/m2"):
        result = evaluate_eternal(store, path, model, out_dir=tmp_path / "o", write_log=False)
    text = result.files["report"].read_text()
    assert "## Models side by side (Figures 4 and 5)" in text and "(models.svg)" in text
    fig4 = (tmp_path / "o" / "models.svg").read_text()
    fig5 = (tmp_path / "o" / "tiers_by_model.svg").read_text()
    # m1 3/4 (75%), m2 2/4 (50%); in the hard tier m1 1/2, m2 0/2: two models' bars in each of three tiers
    assert "75% [" in fig4 and "50% [" in fig4 and fig5.count('class="bar"') == 6
    assert "m1 hard: 50.0%" in fig5 and "m2 hard: 0.0%" in fig5
    # no judge was given: the report says so, never "labelled by None"
    assert "labelled by None" not in text and "no judge model was given" in text


def test_public_subset_withholds_the_answers(tmp_path):
    from typer.testing import CliRunner

    from theorembench.cli import app

    # 10 instances: 6 hard, 4 easy; a subset of 5 in proportion: 3 hard and 2 easy
    rows = [row("t", k, PATHS, tier="hard" if k < 6 else "easy", params_used={"v": k + 3}) for k in range(10)]
    src = write(tmp_path / "c.jsonl", rows)
    res = CliRunner().invoke(app, ["eternal", "export", str(src), "--out", str(tmp_path / "public.jsonl"), "--n", "5"])
    assert res.exit_code == 0, res.output
    public = [json.loads(x) for x in (tmp_path / "public.jsonl").read_text().splitlines()]
    answers = [json.loads(x) for x in (tmp_path / "public.answers.jsonl").read_text().splitlines()]
    assert sorted(p["tier"] for p in public) == ["easy", "easy", "hard", "hard", "hard"]
    assert all(set(p) == {"instance_id", "problem", "answer_kind", "tier", "msc"} for p in public)
    assert [a["instance_id"] for a in answers] == [p["instance_id"] for p in public]
    assert all(a["numerical_value"] == "12" and a["solution_steps"] for a in answers)


def test_audit_apply_removes_the_instances_marked_invalid(tmp_path):
    from typer.testing import CliRunner

    from theorembench.cli import app
    from theorembench.methods.eternal.audit import audit_sample

    rows = [row("a", 0, PATHS), row("a", 1, PATHS), row("b", 0, GROUPS), row("b", 1, GROUPS)]
    src = write(tmp_path / "i.jsonl", rows)
    audit_sample(src, tmp_path / "audit.json", n=4, seed=0)
    key = json.loads((tmp_path / "audit.key.json").read_text())["key"]
    verdicts = [{"audit_id": a, "verdict": "invalid" if iid == "a#1" else "valid"} for a, iid in key.items()]
    (tmp_path / "audit.json").write_text(json.dumps(verdicts))
    runner = CliRunner()
    res = runner.invoke(app, ["eternal", "audit", "apply", str(tmp_path / "audit.json"), "--instances", str(src),
                              "--out", str(tmp_path / "clean.jsonl")])  # fmt: skip
    assert res.exit_code == 0, res.output
    kept = [json.loads(x)["instance_id"] for x in (tmp_path / "clean.jsonl").read_text().splitlines()]
    assert kept == ["a#0", "b#0", "b#1"] and "removed: a#1" in res.output
    res = runner.invoke(app, ["eternal", "audit", "apply", str(tmp_path / "audit.json"), "--instances", str(src),
                              "--out", str(tmp_path / "clean2.jsonl"), "--whole-template"])  # fmt: skip
    kept = [json.loads(x)["instance_id"] for x in (tmp_path / "clean2.jsonl").read_text().splitlines()]
    assert res.exit_code == 0 and kept == ["b#0", "b#1"]


# -- item 18: evaluation settings ------------------------------------------------------------------------------


def _bodies(fake, model: str) -> list[dict]:
    return [r["body"] for r in fake.requests if r["model"] == model and r["body"]]


def test_eval_and_calibrate_take_effort_budget_timeout_and_model_variants(fake_env, tmp_path):
    from typer.testing import CliRunner

    from theorembench.cli import app

    fake_env.set_script({"default": {"reply": RIGHT}})
    src = write(tmp_path / "i.jsonl", [row("a", 0, PATHS)])
    db = ["--db", str(tmp_path / "c.db")]
    runner = CliRunner()
    res = runner.invoke(app, ["eternal", "eval", str(src), "--model", M1, "--reasoning-effort", "high",
                              "--thinking-budget", "2000", "--timeout", "30", "--out", str(tmp_path / "e"), *db])
    assert res.exit_code == 0, res.output
    assert [b.get("reasoning_effort") for b in _bodies(fake_env, "m1")] == ["high"]
    doc = json.loads((tmp_path / "e" / "results_openai-api_fake_m1.json").read_text())
    assert {k: doc["settings"][k] for k in ("reasoning_effort", "thinking_budget", "timeout")} == {
        "reasoning_effort": "high", "thinking_budget": 2000, "timeout": 30.0}
    # the paper's suite names variants: GPT-5.1-high, GPT-5.2-xhigh; model@effort is that model at that effort
    res = runner.invoke(app, ["eternal", "calibrate", str(src), "--suite", f"{M1}@xhigh", "--suite",
                              "openai-api/fake/m2", "--trials", "1", "--out", str(tmp_path / "cal"), *db])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert [b.get("reasoning_effort") for b in _bodies(fake_env, "m1")] == ["high", "xhigh"]
    assert [b.get("reasoning_effort") for b in _bodies(fake_env, "m2")] == [None]
    trials = [json.loads(x) for x in (tmp_path / "cal" / "trials.jsonl").read_text().splitlines()]
    assert sorted(t["model"] for t in trials) == [f"{M1}@xhigh", "openai-api/fake/m2"]
    res = runner.invoke(app, ["eternal", "eval", str(src), "--model", M1, "--reasoning-effort", "extreme", *db])
    assert res.exit_code == 2 and "'extreme' is not one of none, minimal, low, medium, high, xhigh" in res.output


def test_the_taxonomy_judge_is_told_how_a_long_reply_ended_and_what_it_repeats():
    from theorembench.methods.eternal.taxonomy import MAX_REPLY_CHARS, judge_messages

    loop = "Recall that the energy is the sum of the absolute values of the eigenvalues.\n"
    reply = "HEAD: we set up the graph.\n" + loop * 400 + "TAIL: so the answer is \\boxed{7}."
    assert len(reply) > 2 * MAX_REPLY_CHARS
    prompt = judge_messages("P", "12", "S", reply, "length")[1]["content"]
    assert "HEAD: we set up the graph." in prompt and "TAIL: so the answer is" in prompt
    assert "finish reason 'length' (it hit the token limit: cut off, not concluded)" in prompt
    assert "399 lines repeat an earlier line; the most repeated one occurs 400 times" in prompt
    assert "characters left out; in it" in prompt  # what the elided middle held


def test_screening_scores_a_hosted_generator_on_a_named_endpoint(fake_env, store, tmp_path, monkeypatch):
    from helpers.eternal import BASE, GEN, add_papers, rules

    from theorembench.methods.eternal.build import build_eternal
    from theorembench.testing.fakellm import FakeLLMServer

    # the generator's server gives no log-probabilities, as a hosted chat API; the scorer's server does
    fake_env.set_script({"rules": rules(), "logprobs_mode": "none"})
    ids = add_papers(store, tmp_path, ("THETA",))
    over = {**BASE, "review.screening": True, "review.validity": False}
    skipped = build_eternal(store, paper_ids=list(ids.values()), generator=GEN, overrides=over,
                            instances_per_template=3, seed=0, out_dir=tmp_path / "o1")  # fmt: skip
    assert skipped.funnel["reviewed_templates"] == 1
    assert any("provider returns no log-probabilities" in n for n in skipped.summary["notes"])
    with FakeLLMServer({"default": {"reply": "unused"}, "logprob_default": -0.1,
                        "logprob_rules": [{"match": "LOWCONF", "logprob": -400.0}]}) as scorer:  # fmt: skip
        monkeypatch.setenv("SCORER_BASE_URL", scorer.base_url)
        monkeypatch.setenv("SCORER_API_KEY", "test-key")
        scored = build_eternal(store, paper_ids=list(ids.values()), generator=GEN, out_dir=tmp_path / "o2",
                               overrides={**over, "review.scoring_model": "openai-api/scorer/gen"},
                               instances_per_template=3, seed=0)  # fmt: skip
        assert all(r["path"].endswith("/completions") for r in scorer.requests) and scorer.requests
    assert scored.funnel["reviewed_templates"] == 0 and scored.summary["rejections_by_stage"] == {"screening": 1}
