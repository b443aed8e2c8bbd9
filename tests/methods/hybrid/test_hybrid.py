"""Proof2Hybrid: thresholds, dedup, aggregation and evaluation, with scripted judges on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass

import pytest
from helpers.hybrid import verdict

from theorembench.common.settings import SettingsError
from theorembench.llm import LLM, GenerateSettings
from theorembench.methods.hybrid.config import load_config
from theorembench.methods.hybrid.evaluate import evaluate_generation, parse_selection, random_baselines, score
from theorembench.methods.hybrid.stages import Distractor, HybridBuilder, aggregate, build, normalized

J1, J2, G1, G2 = "openai-api/fake/judge1", "openai-api/fake/judge2", "openai-api/fake/gen1", "openai-api/fake/gen2"


@dataclass
class FakeSeed:
    id: str
    kind: str
    statement: str
    proof: str | None
    tag: str | None = None
    source: str = "test"
    chapter: str = "test"

    @property
    def text(self) -> str:
        return self.statement if self.kind == "definition" else f"{self.statement}\n\nProof. {self.proof}"


def cfg(**over):
    return load_config(None, **over)


def run(coro):
    return asyncio.run(coro)


@pytest.mark.parametrize(
    ("over", "needle"),
    [
        ({"models.judges": [J1], "seed_filter.n1": 2, "seed_filter.k1": 1}, "k1=1 must exceed m1*n1/2"),
        ({"models.judges": [J1], "seed_filter.n1": 3, "seed_filter.k1": 4}, "can never be reached"),
        ({"distractors.n2": 2, "distractors.k2": 3}, "k2=3 must not exceed n2=2"),
        ({"models.judges": [J1, J2], "seed_filter.n1": 3, "seed_filter.k1": 4, "distractor_filter.n3": 3,
          "distractor_filter.k3": 3, "distractor_filter.k4": 4}, "m3*n3/2 < k3"),
        ({"models.judges": [J1, J2], "seed_filter.n1": 3, "seed_filter.k1": 4, "distractor_filter.n3": 3,
          "distractor_filter.k3": 4, "distractor_filter.k4": 5}, "<= 4 with m3=2"),
        ({"questions.m": 6, "questions.n": 6}, "0 < m < n"),
    ],
)  # fmt: skip
def test_parameter_validation(over, needle):
    with pytest.raises(SettingsError, match=needle.replace("*", r"\*").replace("(", r"\(")):
        cfg(**over).check()


def test_paper_defaults_validate_with_four_judges():
    c = cfg(**{"models.judges": ["a/1", "b/2", "c/3", "d/4"], "models.generators": ["g/1"] * 5})
    c.check()
    assert (c.seed_filter.k1, c.distractors.n2, c.distractors.k2, c.distractor_filter.k3, c.distractor_filter.k4,
            c.questions.m, c.questions.n) == (8, 6, 2, 7, 10, 2, 6)  # fmt: skip
    with pytest.raises(SettingsError, match="k1=8"):
        cfg().check()  # one judge cannot reach the paper's k1


def two_judges(**extra):
    return cfg(**{"models.judges": [J1, J2], "models.generators": [G1, G2], "seed_filter.n1": 2,
                  "seed_filter.k1": 3, "distractors.n2": 3, "distractors.k2": 2, "distractor_filter.n3": 3,
                  "distractor_filter.k3": 4, "distractor_filter.k4": 4, **extra})  # fmt: skip


def test_seed_filter_threshold_exactly_met_and_missed(fake_env, store):
    # 2 judges x 2 verdicts; k1 = 3. KEEP gets 3 "correct", DROP gets 2.
    fake_env.set_script({"rules": [
        {"match": "KEEP-SEED", "model": "judge1", "reply": [verdict("correct"), verdict("correct")]},
        {"match": "KEEP-SEED", "model": "judge2", "reply": [verdict("correct"), verdict("incorrect")]},
        {"match": "DROP-SEED", "model": "judge1", "reply": [verdict("correct"), verdict("incorrect")]},
        {"match": "DROP-SEED", "model": "judge2", "reply": [verdict("correct"), verdict("incorrect")]},
    ]})  # fmt: skip
    builder = HybridBuilder(store, LLM(store), two_judges(), pipeline="t")
    keep = run(builder.filter_seed(FakeSeed("s1", "definition", "KEEP-SEED: a group is ...", None)))
    drop = run(builder.filter_seed(FakeSeed("s2", "definition", "DROP-SEED: a ring is ...", None)))
    assert keep.output["correct"] == 3 and keep.output["kept"]
    assert drop.output["correct"] == 2 and not drop.output["kept"]
    assert len(keep.call_ids) == 4 and len(keep.output["verdicts"]) == 4


def test_distractors_dedup_random_choice_and_proof_only_changes(fake_env, store):
    seed = FakeSeed("s1", "statement_proof", "Lemma. Every finite group of prime order is cyclic.",
                    "Take g != e; its order divides p, so it is p.")  # fmt: skip
    gen1 = json.dumps({"distractors": [
        {"text": "Take g != e; its order divides p-1, so it is p.", "change": "p -> p-1"},
        {"text": "Take  g != e;  its order divides p-1,\nso it is p.", "change": "same, other spacing"},
        {"text": "Take g != e; its order divides p, so it is p.", "change": "nothing (copy of the seed)"},
    ]})  # fmt: skip
    gen2 = json.dumps({"distractors": [
        {"text": "Take any g; its order divides p, so it is p.", "change": "dropped g != e"},
        {"text": "Take g != e; its order is at most p, so it is p.", "change": "divides -> at most"},
        {"text": "Take g != e; its order divides p^2, so it is p.", "change": "p -> p^2"},
    ]})  # fmt: skip
    fake_env.set_script({"rules": [{"model": "gen1", "match": "flawed versions", "reply": gen1},
                                   {"model": "gen2", "match": "flawed versions", "reply": gen2}]})  # fmt: skip
    c = two_judges(**{"distractors.k2": 3})
    builder = HybridBuilder(store, LLM(store), c, pipeline="t")
    out = run(builder.generate(seed)).output
    texts = [d["text"] for d in out["distractors"]]
    assert out["duplicates_removed"] == 2  # the whitespace twin and the copy of the seed
    assert len(texts) == 4 and len({normalized(t) for t in texts}) == 4
    assert all(t.startswith(seed.statement + "\n\nProof. ") for t in texts)  # only the proof changes
    assert {d["change"] for d in out["distractors"]} >= {"p -> p-1", "dropped g != e"}
    # k2 < n2: a seeded random choice per model, reproducible
    c2 = two_judges(**{"distractors.k2": 1})
    a = run(HybridBuilder(store, LLM(store), c2, pipeline="t2").generate(seed)).output["distractors"]
    b = run(HybridBuilder(store, LLM(store), c2, pipeline="t3").generate(seed)).output["distractors"]
    assert len(a) == 2 and [d["id"] for d in a] == [d["id"] for d in b]


@pytest.mark.parametrize(("incorrect", "kept"), [(3, False), (4, True), (5, False), (6, False)])
def test_distractor_filter_window_edges(fake_env, store, incorrect, kept):
    # 2 judges x 3 verdicts = 6; window k3 = k4 = 4 (3 < 4 <= 4 <= 4)
    verdicts = [verdict("incorrect")] * incorrect + [verdict("correct")] * (6 - incorrect)
    fake_env.set_script({"rules": [{"model": "judge1", "match": "DIS", "reply": verdicts[:3]},
                                   {"model": "judge2", "match": "DIS", "reply": verdicts[3:]}]})  # fmt: skip
    builder = HybridBuilder(store, LLM(store), two_judges(), pipeline=f"w{incorrect}")
    result = run(builder.filter_distractor(Distractor("d1", "s1", G1, "DIS: a flawed proof", "x")))
    assert result.output["incorrect"] == incorrect and result.output["kept"] is kept


def seeds_and_distractors(n_seeds: int, per_seed: int):
    seeds = [FakeSeed(f"s{i}", "definition", f"Definition {i}.", None, tag=f"T{i:03d}") for i in range(n_seeds)]
    dis = [Distractor(f"s{i}#0.{k}", f"s{i}", G1, f"Wrong definition {i}.{k}.", "x")
           for i in range(n_seeds) for k in range(per_seed)]  # fmt: skip
    return seeds, dis


def test_aggregation_distinct_origins_exhaustion_and_reproducibility():
    seeds, dis = seeds_and_distractors(8, 2)
    qs = aggregate(seeds, dis, m=2, n=6, seed=1)
    assert qs == aggregate(seeds, dis, m=2, n=6, seed=1)
    assert qs != aggregate(seeds, dis, m=2, n=6, seed=2)
    used_seeds = [it["origin"] for q in qs for it in q["items"] if it["correct"]]
    used_dis = [it["distractor_id"] for q in qs for it in q["items"] if not it["correct"]]
    assert len(used_seeds) == len(set(used_seeds)) and len(used_dis) == len(set(used_dis))
    for q in qs:
        assert len(q["items"]) == 6 and len({it["origin"] for it in q["items"]}) == 6  # distinct origins
        assert q["answer"] == sorted(it["number"] for it in q["items"] if it["correct"])
        assert len(q["answer"]) == 2
    # 8 seeds -> at most 4 questions; each needs 4 distractors from origins not used in it
    assert len(qs) == 4
    # exhaustion: too few distinct origins for the distractors
    seeds, dis = seeds_and_distractors(3, 5)
    assert aggregate(seeds, dis, m=2, n=6, seed=0) == []


@pytest.mark.parametrize(
    ("reply", "expected"),
    [("so \\boxed{2, 5}", [2, 5]), ("\\boxed{5,2}", [2, 5]), ("first \\boxed{1,2} then \\boxed{3, 4}", [3, 4]),
     ("The correct items are 3 and 6.", [3, 6]), ("Answer: items 1, 4", [1, 4]), ("\\boxed{2, 9}", [2]),
     ("I do not know.", None), ("", None)],
)  # fmt: skip
def test_parse_selection(reply, expected):
    assert parse_selection(reply, 6) == expected


def test_loose_and_tight_metrics_by_hand():
    assert score([2, 5], [2, 5]) == (1.0, 1.0)
    assert score([2, 4], [2, 5]) == (0.5, 0.0)
    assert score([1, 3], [2, 5]) == (0.0, 0.0)
    assert score([2, 5, 6], [2, 5]) == (0.0, 0.0)  # naming three items is not an answer
    assert score(None, [2, 5]) == (0.0, 0.0)
    base = random_baselines(2, 6)
    assert base["loose"] == pytest.approx(1 / 3) and base["tight"] == pytest.approx(1 / 15)


def test_generation_evaluation_through_the_llm_layer(fake_env, store, tmp_path):
    from inspect_ai.log import read_eval_log

    seeds, dis = seeds_and_distractors(8, 2)
    qs = aggregate(seeds, dis, m=2, n=6, seed=3)
    # the model names the right items for q1, one right for q2, nothing parsable for the rest
    q1, q2 = qs[0], qs[1]
    wrong = [it["number"] for it in q2["items"] if not it["correct"]][0]
    first = q1["items"][0]["text"]
    second = q2["items"][0]["text"]
    fake_env.set_script({"rules": [
        {"match": "### Item 1\n\n" + __import__("re").escape(first), "reply": f"\\boxed{{{q1['answer'][0]}, {q1['answer'][1]}}}"},
        {"match": "### Item 1\n\n" + __import__("re").escape(second), "reply": f"\\boxed{{{q2['answer'][0]}, {wrong}}}"},
    ], "default": {"reply": "hmm"}})  # fmt: skip
    res = run(evaluate_generation(store, LLM(store), "openai-api/fake/m", qs, settings=GenerateSettings(),
                                  log_dir=tmp_path / "logs", name="unit"))  # fmt: skip
    s = res["summary"]
    nq = len(qs)
    assert nq >= 3 and s["questions"] == nq
    assert s["loose"]["value"] == pytest.approx(1.5 / nq, abs=1e-4) and s["tight"]["value"] == pytest.approx(1 / nq, abs=1e-4)
    assert s["unparsed"] == nq - 2
    assert s["random_baseline"]["loose"] == pytest.approx(100 / 3)
    log = read_eval_log(res["log"])
    assert len(log.samples) == nq and log.results.scores[0].metrics["tight"].value == pytest.approx(1 / nq, abs=1e-4)
    assert len(store.results(res["run_id"])) == nq


def test_full_build_with_scripted_models(fake_env, store, tmp_path):
    J3 = "openai-api/fake/judge3"
    seeds = [FakeSeed(f"s{i}", "statement_proof", f"Lemma S{i}. Statement {i}.", f"Proof body {i}.") for i in range(8)]
    gen = json.dumps({"distractors": [{"text": f"Flawed body {k}.", "change": f"change {k}"} for k in range(3)]})
    # 3 judges x 2 verdicts: seeds judged correct 6 times (k1 = 4); every distractor judged incorrect
    # by judge1 and judge2 (4 times) and correct by judge3: inside the window k3 = k4 = 4
    fake_env.set_script({"rules": [
        {"match": "flawed versions", "reply": gen},
        {"match": "Flawed body", "model": "judge3", "reply": verdict("correct")},
        {"match": "Flawed body", "reply": verdict("incorrect")},
        {"match": "Statement", "reply": verdict("correct")},
    ]})  # fmt: skip
    c = cfg(**{"models.judges": [J1, J2, J3], "models.generators": [G1], "seed_filter.n1": 2, "seed_filter.k1": 4,
               "distractors.n2": 3, "distractors.k2": 2, "distractor_filter.n3": 2, "distractor_filter.k3": 4,
               "distractor_filter.k4": 4})  # fmt: skip
    builder = HybridBuilder(store, LLM(store), c, pipeline="full")
    outcome = run(build(builder, seeds, concurrency=2))
    from theorembench.methods.hybrid.stages import write_outputs

    summary = write_outputs(store, outcome, tmp_path / "out", c).summary
    f = summary["funnel"]
    assert f["seeds"] == 8 and f["kept_seeds"] == 8
    assert f["distractors"] == 16 and f["kept_distractors"] == 16
    assert f["questions"] >= 3
    assert summary["per_question"]["calls"] > 0
    audit = [json.loads(line) for line in (tmp_path / "out" / "audit.jsonl").read_text().splitlines()]
    assert len(audit) == 6 * f["questions"] and all(len(a["verdicts"]) == 6 for a in audit)
    assert all(a["change"] for a in audit if not a["correct"])
    ppl = json.loads((tmp_path / "out" / "ppl_questions.json").read_text())
    assert len(ppl) == 8 and all(len(q["options"]) == 3 and q["correct"] == 0 for q in ppl)
    # a rerun pays for nothing
    served = fake_env.stats()["completed"]
    run(build(HybridBuilder(store, LLM(store), c, pipeline="full"), seeds, concurrency=2))
    assert fake_env.stats()["completed"] == served


def test_bounds_can_be_relaxed_only_explicitly():
    base = {"models.judges": [J1], "seed_filter.n1": 2, "seed_filter.k1": 2, "distractor_filter.n3": 5,
            "distractor_filter.k3": 0, "distractor_filter.k4": 5}  # fmt: skip
    with pytest.raises(SettingsError, match="m3\\*n3/2 < k3"):
        cfg(**base).check()
    cfg(**base, **{"distractor_filter.enforce_bounds": False}).check()
    with pytest.raises(SettingsError, match="k3 <= k4 <= m3\\*n3 = 5"):
        cfg(**{**base, "distractor_filter.k4": 9}, **{"distractor_filter.enforce_bounds": False}).check()


# --------------------------------------------------------------------------- issue 9: results users can trust

def judged_seed() -> FakeSeed:
    return FakeSeed("s1", "definition", "KEEP-SEED: a group is a set with an associative operation ...", None)


def test_a_judge_failing_after_its_retries_fails_the_step_and_the_rerun_judges_it(fake_env, store):
    # judge2 answers 429 to every attempt: no verdict is not a verdict "incorrect"
    fake_env.set_script({"rules": [
        {"match": "KEEP-SEED", "model": "judge2", "reply": verdict("correct"), "faults": [{"kind": "429", "times": 50}]},
        {"match": "KEEP-SEED", "reply": verdict("correct")},
    ]})  # fmt: skip
    first = run(HybridBuilder(store, LLM(store), two_judges(), pipeline="t").filter_seed(judged_seed()))
    assert first.status == "failed" and first.output is None
    assert "judge2" in first.reason and "sample 0" in first.reason
    assert len(first.call_ids) == 3  # judge1's two verdicts and judge2's failed call, all traceable
    log = fake_env.requests
    assert [(r["model"], r["outcome"]) for r in log] == [("judge1", "ok")] * 2 + [("judge2", "429")] * 4
    # the server is healthy again: the step runs again, judge1's verdicts come from the cache
    fake_env.set_script({"rules": [{"match": "KEEP-SEED", "reply": verdict("correct")}]})
    second = run(HybridBuilder(store, LLM(store), two_judges(), pipeline="t").filter_seed(judged_seed()))
    assert second.status == "ok" and second.output["correct"] == 4 and second.output["kept"] is True
    rerun = fake_env.requests[len(log):]
    assert [(r["model"], r["outcome"]) for r in rerun] == [("judge2", "ok")] * 2  # no answered call paid twice


def test_a_distractor_judge_failure_is_not_a_rejection(fake_env, store):
    fake_env.set_script({"rules": [
        {"match": "DIS", "model": "judge1", "reply": verdict("incorrect"), "faults": [{"kind": "500", "times": 50}]},
        {"match": "DIS", "reply": verdict("incorrect")},
    ]})  # fmt: skip
    dis = Distractor("d1", "s1", G1, "DIS: a flawed proof", "x")
    first = run(HybridBuilder(store, LLM(store), two_judges(), pipeline="t").filter_distractor(dis))
    assert first.status == "failed" and "judge1" in first.reason
    fake_env.set_script({"rules": [{"model": "judge1", "match": "DIS", "reply": verdict("incorrect")},
                                   {"model": "judge2", "match": "DIS", "reply": [verdict("incorrect"), verdict("correct")]}]})  # fmt: skip
    second = run(HybridBuilder(store, LLM(store), two_judges(), pipeline="t").filter_distractor(dis))
    assert second.status == "ok" and second.output["incorrect"] == 4 and second.output["kept"] is True


def test_a_generator_failure_fails_the_step_and_the_rerun_reuses_the_other_generator(fake_env, store):
    seed = FakeSeed("s1", "statement_proof", "Lemma. Every finite group of prime order is cyclic.",
                    "Take g != e; its order divides p, so it is p.")  # fmt: skip
    reply = json.dumps({"distractors": [{"text": f"Take g; its order divides {k}p.", "change": f"c{k}"}
                                        for k in range(3)]})  # fmt: skip
    fake_env.set_script({"rules": [
        {"model": "gen2", "match": "flawed versions", "reply": reply, "faults": [{"kind": "429", "times": 50}]},
        {"match": "flawed versions", "reply": reply},
    ]})  # fmt: skip
    first = run(HybridBuilder(store, LLM(store), two_judges(), pipeline="t").generate(seed))
    assert first.status == "failed" and "gen2" in first.reason and first.output is None
    n_before = len(fake_env.requests)
    fake_env.set_script({"rules": [{"match": "flawed versions", "reply": reply}]})
    second = run(HybridBuilder(store, LLM(store), two_judges(), pipeline="t").generate(seed))
    assert second.status == "ok" and {d["generator"] for d in second.output["distractors"]} == {G1, G2}
    assert [r["model"] for r in fake_env.requests[n_before:]] == ["gen2"]  # gen1's reply came from the cache


def test_a_failed_step_is_counted_in_the_summary(fake_env, store, tmp_path):
    from theorembench.methods.hybrid.stages import write_outputs

    fake_env.set_script({"rules": [{"match": "KEEP-SEED", "reply": verdict("correct"),
                                    "faults": [{"kind": "429", "times": 50}]}]})  # fmt: skip
    c = two_judges()
    outcome = run(build(HybridBuilder(store, LLM(store), c, pipeline="t"), [judged_seed()]))
    summary = write_outputs(store, outcome, tmp_path / "out", c).summary
    assert summary["failed_steps"] == {"seed_filter": ["s1"]} and summary["funnel"]["kept_seeds"] == 0


# ---- a Stacks-like folder of eight definitions, for whole builds through the service

def toy_stacks(root, count: int = 8):
    (root / "tags").mkdir(parents=True)
    (root / "preamble.tex").write_text("\\documentclass{amsart}\n\\theoremstyle{definition}\n"
                                       "\\newtheorem{definition}[subsection]{Definition}\n")  # fmt: skip
    defs = "".join(f"\\begin{{definition}}\n\\label{{definition-w{i}}}\nA widget of kind {i} is a set with {i} "
                   "marked points.\n\\end{definition}\n\n" for i in range(count))  # fmt: skip
    (root / "toy.tex").write_text(f"\\input{{preamble}}\n\\begin{{document}}\n\\title{{Toy}}\n{defs}\\end{{document}}\n")
    (root / "tags" / "tags").write_text("# tag,full_label\n" + "".join(f"0B{i:02d},toy-definition-w{i}\n"
                                                                      for i in range(count)))  # fmt: skip
    return root


J3 = "openai-api/fake/judge3"
THREE_JUDGES = {"seed_filter.n1": 2, "seed_filter.k1": 4, "distractors.n2": 3, "distractors.k2": 2,
                "distractor_filter.n3": 2, "distractor_filter.k3": 4, "distractor_filter.k4": 4}  # fmt: skip


def script_three_judges(fake) -> None:
    gen = json.dumps({"distractors": [{"text": f"A widget of kind {k} is a flawed set.", "change": f"c{k}"}
                                      for k in range(3)]})  # fmt: skip
    fake.set_script({"rules": [
        {"match": "flawed versions", "reply": gen},
        {"match": "flawed set", "model": "judge3", "reply": verdict("correct")},
        {"match": "flawed set", "reply": verdict("incorrect")},
        {"match": "marked points", "reply": verdict("correct")},
    ]})  # fmt: skip


def build_toy(store, root, out, **over):
    from theorembench.methods.hybrid.service import build_hybrid

    keys: list[str] = []
    summary = build_hybrid(store, stacks=root, generators=[G1], judges=[J1, J2, J3], out_dir=out,
                           overrides={**THREE_JUDGES, **over}, concurrency=2,
                           on_step=lambda key, stage, status: keys.append(key) if stage == "seed_filter" else None).summary  # fmt: skip
    return summary, sorted(keys)


def test_changing_the_draw_seed_reuses_every_model_call(fake_env, store, tmp_path):
    script_three_judges(fake_env)
    root = toy_stacks(tmp_path / "stacks")
    summary, _ = build_toy(store, root, tmp_path / "a", **{"questions.seed": 0})
    funnel = summary["funnel"]
    assert (funnel["seeds"], funnel["kept_seeds"], funnel["kept_distractors"]) == (8, 8, 16) and funnel["questions"] >= 3
    paid = fake_env.stats()["total_requests"]
    assert paid > 0
    # a new draw of the questions: every generator and judge call is reused, none is made again
    summary, _ = build_toy(store, root, tmp_path / "b", **{"questions.seed": 1})
    assert fake_env.stats()["total_requests"] == paid and summary["funnel"]["questions"] >= 3
    a = json.loads((tmp_path / "a" / "questions.json").read_text())
    b = json.loads((tmp_path / "b" / "questions.json").read_text())
    assert a != b
    # the sampling seed is what reaches the model calls: changing it asks again
    build_toy(store, root, tmp_path / "c", **{"questions.seed": 1, "generation.sampling_seed": 5})
    assert fake_env.stats()["total_requests"] > paid


def test_max_seeds_draws_at_random_with_the_draw_seed(fake_env, store, tmp_path):
    from theorembench.methods.hybrid.stages import draw_seeds

    seeds = [FakeSeed(f"s{i}", "definition", f"D{i}", None) for i in range(10)]
    # recorded once for Python's random.Random(seed).sample over the id-sorted pool
    assert [s.id for s in draw_seeds(seeds, 3, seed=0)] == DRAW_0
    assert [s.id for s in draw_seeds(seeds, 3, seed=1)] == DRAW_1
    assert [s.id for s in draw_seeds(list(reversed(seeds)), 3, seed=0)] == DRAW_0  # input order does not matter
    assert [s.id for s in draw_seeds(seeds, 0, seed=0)] == sorted(s.id for s in seeds)
    assert len(draw_seeds(seeds, 99, seed=0)) == 10
    # through the service: --max-seeds 3 judges the drawn seeds, not the first three by id
    script_three_judges(fake_env)
    summary, judged = build_toy(store, toy_stacks(tmp_path / "stacks"), tmp_path / "o",
                                **{"generation.max_seeds": 3, "questions.seed": 0})  # fmt: skip
    assert summary["funnel"]["seeds"] == 3 and judged == TOY_DRAW_0
    assert judged != ["stacks:0B00", "stacks:0B01", "stacks:0B02"]


DRAW_0 = ["s0", "s6", "s9"]
DRAW_1 = ["s1", "s2", "s4"]
TOY_DRAW_0 = ["stacks:0B03", "stacks:0B06", "stacks:0B07"]


@pytest.mark.parametrize(
    "body",
    ["Proof. Take g; its order divides p-1.", "  proof: Take g; its order divides p-1.",
     "\\textit{Proof.} Take g; its order divides p-1.", "\\noindent\\emph{Proof}. Take g; its order divides p-1.",
     "{\\it Proof.} Take g; its order divides p-1.", "**Proof.** Take g; its order divides p-1.",
     "\\begin{proof} Take g; its order divides p-1. \\end{proof}", "Take g; its order divides p-1."],
)  # fmt: skip
def test_a_proof_label_in_a_distractor_body_is_removed(body):
    from theorembench.methods.hybrid.stages import strip_proof_label

    assert strip_proof_label(body) == "Take g; its order divides p-1."


def test_proof_label_kept_when_it_is_text():
    from theorembench.methods.hybrid.stages import strip_proof_label

    assert strip_proof_label("Proofs of this kind are short.") == "Proofs of this kind are short."
    assert strip_proof_label("Proof of Lemma 2. It holds.") == "Proof of Lemma 2. It holds."


def test_distractor_questions_never_show_proof_twice(fake_env, store):
    seed = FakeSeed("s1", "statement_proof", "Lemma. Every finite group of prime order is cyclic.",
                    "Take g != e; its order divides p, so it is p.")  # fmt: skip
    reply = json.dumps({"distractors": [
        {"text": "Proof. Take g != e; its order divides p-1, so it is p.", "change": "p -> p-1"},
        {"text": "\\textit{Proof.} Take g != e; its order divides p^2, so it is p.", "change": "p -> p^2"},
        {"text": "Proof. Take g != e; its order divides p, so it is p.", "change": "a labelled copy of the seed"},
    ]})  # fmt: skip
    fake_env.set_script({"rules": [{"match": "flawed versions", "reply": reply}]})
    c = two_judges(**{"models.generators": [G1], "distractors.k2": 3})
    out = run(HybridBuilder(store, LLM(store), c, pipeline="t").generate(seed)).output
    texts = [d["text"] for d in out["distractors"]]
    assert texts == ["Lemma. Every finite group of prime order is cyclic.\n\nProof. Take g != e; its order divides p-1, so it is p.",
                     "Lemma. Every finite group of prime order is cyclic.\n\nProof. Take g != e; its order divides p^2, so it is p."]  # fmt: skip
    assert out["duplicates_removed"] == 1  # the labelled copy is the seed itself


def test_one_judge_error_names_the_fix_and_the_suggested_file_validates(tmp_path):
    from typer.testing import CliRunner

    from theorembench.cli import app
    from theorembench.methods.hybrid.config import fitting_thresholds

    with pytest.raises(SettingsError) as info:
        cfg(**{"models.judges": [J1]}).check()
    message = str(info.value)
    assert "k1=8" in message and "for 4 judges" in message and "hybrid config --judges 1" in message
    assert "k1 = 2" in message and "n3 = 5, k3 = 3, k4 = 3" in message
    # by hand: 1 judge x 3 verdicts -> k1 = 2 (> 1.5); the distractor window needs 5 verdicts: 2.5 < 3 <= 3 <= 3
    assert fitting_thresholds(1).model_dump() == {"n1": 3, "k1": 2, "n3": 5, "k3": 3, "k4": 3}
    assert fitting_thresholds(2).model_dump() == {"n1": 3, "k1": 4, "n3": 3, "k3": 4, "k4": 4}
    assert fitting_thresholds(4).model_dump() == {"n1": 3, "k1": 8, "n3": 3, "k3": 7, "k4": 10}  # the paper's
    for judges in (1, 2, 3, 5):
        res = CliRunner().invoke(app, ["hybrid", "config", "--judges", str(judges)])
        assert res.exit_code == 0, res.output
        path = tmp_path / f"h{judges}.toml"
        path.write_text(res.output)
        load_config(path, **{"models.judges": [f"openai-api/fake/j{i}" for i in range(judges)]}).check()
    res = CliRunner().invoke(app, ["hybrid", "config"])
    assert "k1 = 8" in res.output and "k4 = 10" in res.output  # without --judges: the paper's values


def test_generation_scores_carry_n_and_intervals_and_errors_count_as_not_correct(fake_env, store, tmp_path):
    from inspect_ai.log import read_eval_log

    seeds, dis = seeds_and_distractors(10, 2)
    qs = aggregate(seeds, dis, m=2, n=6, seed=3)[:4]
    assert len(qs) == 4
    wrong = [it["number"] for it in qs[1]["items"] if not it["correct"]][0]
    rules = [
        {"match": re.escape(qs[0]["items"][0]["text"]) + "\n", "reply": "\\boxed{%d, %d}" % tuple(qs[0]["answer"])},
        {"match": re.escape(qs[1]["items"][0]["text"]) + "\n", "reply": "\\boxed{%d, %d}" % (qs[1]["answer"][0], wrong)},
        {"match": re.escape(qs[2]["items"][0]["text"]) + "\n", "reply": "\\boxed{%d, %d}" % tuple(qs[2]["answer"])},
        {"match": re.escape(qs[3]["items"][0]["text"]) + "\n", "reply": "x", "faults": [{"kind": "429", "times": 50}]},
    ]  # fmt: skip
    fake_env.set_script({"rules": rules})
    res = run(evaluate_generation(store, LLM(store), "openai-api/fake/m", qs, settings=GenerateSettings(),
                                  log_dir=tmp_path / "logs", name="unit"))  # fmt: skip
    s = res["summary"]
    # the 4th question failed after its retries: no answer, so 0 on both, and it stays in n
    # loose 1, 0.5, 1, 0; tight 1, 0, 1, 0
    assert s["questions"] == 4 and s["errors"] == 1 and s["n"] == 4
    assert s["loose"]["value"] == pytest.approx(2.5 / 4, abs=1e-4) and s["tight"]["value"] == pytest.approx(2 / 4)
    # Wilson, 2 of 4, z = 1.96: centre 0.5, half 0.3498: [15.00, 85.00]
    assert s["tight"]["ci95"] == pytest.approx([0.1500, 0.8500], abs=1e-4)
    assert (s["loose"]["method"], s["tight"]["method"]) == ("wilson-mean", "wilson")
    assert s["loose"]["n"] == s["tight"]["n"] == 4 and s["loose"]["errors"] == s["tight"]["errors"] == 1
    # the loose mean of (1, 0.5, 1, 0) is 0.625: the Wilson interval at p = 0.625 with n = 4
    low, high = s["loose"]["ci95"]
    assert 0.0 <= low < s["loose"]["value"] < high <= 1.0
    assert s["score"] == s["tight"] and "cost_usd" in s
    # secondary, labelled: over the 3 answered questions (Wilson 2 of 3: [20.77, 93.85])
    a = s["answered_only"]
    assert a["n"] == 3 and a["tight"]["value"] == pytest.approx(2 / 3, abs=1e-4) and "secondary" in a["note"]
    assert a["tight"]["ci95"] == pytest.approx([0.2077, 0.9385], abs=1e-4)
    assert res["details"][3]["final"] is False  # a 429: transient, asked again by the next run
    log = read_eval_log(res["log"])
    errored = [sample for sample in log.samples if sample.error is not None]
    assert [sample.id for sample in errored] == [qs[3]["id"]]


def test_an_edited_judge_prompt_reruns_the_judging_and_reuses_every_other_call(fake_env, store, tmp_path,
                                                                               monkeypatch):  # fmt: skip
    from theorembench.methods.hybrid import prompts

    script_three_judges(fake_env)
    root = toy_stacks(tmp_path / "stacks")
    build_toy(store, root, tmp_path / "a")

    def systems() -> list[str]:
        return [r["body"]["messages"][0]["content"] for r in fake_env.requests]

    judged = [s for s in systems() if s.startswith("You are a careful research mathematician refereeing")]
    others = [s for s in systems() if not s.startswith("You are a careful research mathematician refereeing")]
    assert judged and others
    monkeypatch.setattr(prompts, "_JUDGE_SYSTEM", prompts._JUDGE_SYSTEM + " Say why.")
    build_toy(store, root, tmp_path / "b")
    new = systems()[len(judged) + len(others):]
    # every seed is judged again with the edited instructions; the generators' calls all come from the cache
    assert len(new) == len(judged) and all(s.endswith(" Say why.") for s in new)
