"""Proof2Hybrid against its paper: the aggregation draws until no question remains, the two judge panels are
sized apart, and perplexity scoring puts nothing before an option unless asked."""

from __future__ import annotations

import itertools
import json
import random
from types import SimpleNamespace

import pytest
from helpers.hybrid import verdict
from helpers.paths import SHARED
from typer.testing import CliRunner

from theorembench.cli import app
from theorembench.common.settings import SettingsError
from theorembench.methods.hybrid.config import load_config
from theorembench.methods.hybrid.stages import Distractor, aggregate

runner = CliRunner()
STACKS = SHARED / "data" / "stacks"
J1, J2, J3, J4 = (f"openai-api/fake/judge{i}" for i in range(1, 5))


def seed(sid: str) -> SimpleNamespace:
    return SimpleNamespace(id=sid, text=f"Definition {sid}.", kind="definition", tag=None)


def distractor(origin: str, k: int) -> Distractor:
    return Distractor(f"{origin}#0.{k}", origin, "g", f"Wrong definition {origin}.{k}.", "x")


# ------------------------------------------------------------------ item 9: draw until no question remains


@pytest.mark.parametrize("draw_seed", [0, 5])
def test_the_one_valid_question_is_found_whatever_is_drawn_first(draw_seed):
    # seeds A and B, one distractor of A, m = 1, n = 2: the only question is (B, a1); an A drawn first
    # as the seed item used to end the aggregation with none (questions.seed 0 and 5 did)
    [q] = aggregate([seed("A"), seed("B")], [distractor("A", 1)], m=1, n=2, seed=draw_seed)
    pairs = sorted((it["origin"], it["correct"], it["distractor_id"]) for it in q["items"])
    assert pairs == [("A", False, "A#0.1"), ("B", True, None)]
    assert q["answer"] == [next(it["number"] for it in q["items"] if it["correct"])]


def _a_question_remains(seed_ids: set[str], distractors: list[Distractor], m: int, n: int) -> bool:
    """Brute force: some m seeds and n - m distractors of pairwise distinct origins."""
    for seeds in itertools.combinations(sorted(seed_ids), m):
        free = [d for d in distractors if d.seed_id not in seeds]
        for chosen in itertools.combinations(free, n - m):
            if len({d.seed_id for d in chosen}) == n - m:
                return True
    return False


@pytest.mark.parametrize("case", range(30))
def test_aggregation_stops_only_when_the_pool_can_form_no_question(case):
    rng = random.Random(case)
    m, n = rng.choice([(1, 2), (1, 3), (2, 4), (2, 5)])
    seeds = [seed(f"s{i}") for i in range(rng.randint(2, 6))]
    origins = [s.id for s in seeds] + ["gone"]  # a seed filtered out can still leave distractors
    dis = [distractor(o, k) for o in origins for k in range(rng.randint(0, 3))]
    qs = aggregate(seeds, dis, m=m, n=n, seed=case)
    assert qs == aggregate(seeds, dis, m=m, n=n, seed=case)  # reproducible
    used_seeds = {it["origin"] for q in qs for it in q["items"] if it["correct"]}
    used_dis = {it["distractor_id"] for q in qs for it in q["items"] if not it["correct"]}
    for q in qs:
        assert len(q["items"]) == n and len({it["origin"] for it in q["items"]}) == n
        assert sum(it["correct"] for it in q["items"]) == m
    assert len(used_seeds) == m * len(qs) and len(used_dis) == (n - m) * len(qs)  # nothing used twice
    rest_seeds = {s.id for s in seeds} - used_seeds
    rest_dis = [d for d in dis if d.id not in used_dis]
    assert not _a_question_remains(rest_seeds, rest_dis, m, n)


# ------------------------------------------------------------------ item 10: m1 and m3 apart


def test_one_judge_list_serves_both_filters_by_default():
    c = load_config(None, **{"models.judges": [J1, J2]})
    assert c.seed_panel == c.distractor_panel == [J1, J2] and (c.m1, c.m3) == (2, 2)
    c = load_config(None, **{"models.judges": [J1], "models.distractor_judges": [J2, J3]})
    assert (c.seed_panel, c.distractor_panel, c.m1, c.m3) == ([J1], [J2, J3], 1, 2)


def test_thresholds_are_checked_per_panel_and_the_fix_fits_both():
    with pytest.raises(SettingsError) as info:
        load_config(None, **{"models.seed_judges": [J1], "models.distractor_judges": [J1, J2, J3]}).check()
    message = str(info.value)
    # the paper's k1 = 8 needs more than the 1 x 3 seed verdicts; k3 = 7, k4 = 10 do not fit 3 x 3 = 9
    assert "k1=8" in message and "<= 7 with m3=3 judges" in message
    # by hand: 1 seed judge x 3 -> k1 = 2 (> 1.5, >= 2/3 of 3); 3 x 3 = 9 distractor verdicts -> k3 = 5, k4 = 7
    assert "fit 1 seed judge and 3 distractor judges: [seed_filter] n1 = 3, k1 = 2 and " in message
    assert "[distractor_filter] n3 = 3, k3 = 5, k4 = 7" in message
    assert "theorembench hybrid config --seed-judges 1 --distractor-judges 3" in message


def test_the_printed_file_for_two_panels_validates(tmp_path):
    res = runner.invoke(app, ["hybrid", "config", "--seed-judges", "1", "--distractor-judges", "3"])
    assert res.exit_code == 0, res.output
    path = tmp_path / "h.toml"
    path.write_text(res.output)
    c = load_config(path, **{"models.seed_judges": [J1], "models.distractor_judges": [J1, J2, J3]}).check()
    assert (c.seed_filter.k1, c.distractor_filter.k3, c.distractor_filter.k4) == (2, 5, 7)
    assert "fit 1 seed judge and 3 distractor judges" in res.output
    # --judges alone still fits both panels alike (2 x 3 = 6 verdicts each: k1 = 4, k3 = k4 = 4)
    res = runner.invoke(app, ["hybrid", "config", "--judges", "2"])
    assert "k1 = 4" in res.output and "k3 = 4" in res.output and "k4 = 4" in res.output


def test_a_panel_change_is_a_new_pipeline():
    from theorembench.methods.hybrid.service import build_pipeline

    def name(**over):
        return build_pipeline(load_config(None, **over).model_dump(exclude={"questions": True}))

    same = name(**{"models.judges": [J1, J2]})
    assert same == name(**{"models.judges": [J1, J2]})
    assert same != name(**{"models.judges": [J1, J2], "models.distractor_judges": [J3]})


@pytest.fixture
def stacks():
    if not (STACKS / "brauer.tex").is_file():
        pytest.skip("shared Stacks data not found")
    return STACKS


def test_build_asks_each_filter_its_own_panel(fake_env, stacks, tmp_path):
    gen = json.dumps({"distractors": [{"text": f"A subtly wrong version number {k}.", "change": f"change {k}"}
                                      for k in range(3)]})  # fmt: skip
    fake_env.set_script({"rules": [
        {"match": "flawed versions", "reply": gen},
        # 3 distractor judges x 2 verdicts: judge2 and judge3 say incorrect, judge4 correct: 4 of 6, in 4..4
        {"match": "subtly wrong version", "model": "judge4", "reply": verdict("correct")},
        {"match": "subtly wrong version", "reply": verdict("incorrect")},
        {"match": "refereeing a single item", "reply": verdict("correct")},
    ]})  # fmt: skip
    cfg = tmp_path / "h.toml"
    # 1 seed judge x 2 verdicts (k1 = 2 > 1); 3 distractor judges x 2 verdicts: 3 < 4 <= 4 <= 4
    cfg.write_text("[seed_filter]\nn1 = 2\nk1 = 2\n[distractors]\nn2 = 3\nk2 = 2\n"
                   "[distractor_filter]\nn3 = 2\nk3 = 4\nk4 = 4\n")  # fmt: skip
    args = ["hybrid", "build", "--stacks", str(stacks), "--chapter", "brauer", "--max-seeds", "6",
            "--generator", "openai-api/fake/gen", "--seed-judge", J1, "--distractor-judge", J2,
            "--distractor-judge", J3, "--distractor-judge", J4, "--config", str(cfg),
            "--out-dir", str(tmp_path / "hb")]  # fmt: skip
    res = runner.invoke(app, args, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "hb" / "summary.json").read_text())
    f = summary["funnel"]
    assert (f["seeds"], f["kept_seeds"], f["distractors"], f["kept_distractors"]) == (6, 6, 12, 12)
    assert summary["config"]["models"]["seed_judges"] == [J1]
    assert summary["config"]["models"]["distractor_judges"] == [J2, J3, J4]
    judged = [(r["model"], "subtly wrong version" in r["body"]["messages"][-1]["content"])
              for r in fake_env.requests if "refereeing" in r["body"]["messages"][0]["content"]]  # fmt: skip
    assert {m for m, is_dis in judged if not is_dis} == {"judge1"}  # 6 seeds x 2 verdicts, judge1 only
    assert sum(not is_dis for _, is_dis in judged) == 12
    assert {m for m, is_dis in judged if is_dis} == {"judge2", "judge3", "judge4"}
    assert sum(is_dis for _, is_dis in judged) == 12 * 3 * 2


# ------------------------------------------------------------------ item 11: the perplexity prefix


@pytest.fixture
def ppl_folder(tmp_path):
    folder = tmp_path / "hb"
    folder.mkdir()
    (folder / "questions.json").write_text("[]")
    (folder / "ppl_questions.json").write_text(json.dumps(
        [{"id": "s1", "options": ["A true proof.", "A false proof."], "correct": 0}]))  # fmt: skip
    return folder


def scored_prompts(server) -> list[str]:
    probe = ", ".join(str(i) for i in range(1, 13))  # the alignment probe, sent first
    return [r["body"]["prompt"] for r in server.requests
            if r["endpoint"] == "completions" and r["body"]["prompt"] != probe]  # fmt: skip


@pytest.mark.parametrize("flag", [[], ["--perplexity-prefix"]])
def test_perplexity_scores_the_option_alone_unless_the_prefix_is_asked(fake_env, ppl_folder, tmp_path, flag):
    fake_env.set_script({"logprob_rules": [{"match": "true", "logprob": -0.5}, {"match": "false", "logprob": -3.0}]})
    out = tmp_path / "r.json"
    res = runner.invoke(app, ["hybrid", "eval", str(ppl_folder), "--model", "openai-api/fake/m", "--mode",
                              "perplexity", "--out", str(out), *flag])  # fmt: skip
    assert res.exit_code == 0, res.output
    ppl = json.loads(out.read_text())["perplexity"]
    [detail] = ppl["details"]
    sentence = "The following is a correct piece of mathematics, taken from a reference text.\n\n"
    if not flag:  # the paper: each option on its own
        assert sorted(scored_prompts(fake_env)) == ["A false proof.", "A true proof."]
        assert ppl["prefix"] == ""
        # the fake gives the prompt's first token ("A") no log-prob; " true"/" false", " proof", "." are
        # scored (unmatched tokens: -2): (-0.5 - 2 - 2) / 3 and (-3 - 2 - 2) / 3
        assert detail["n_tokens"] == [3, 3]
        assert detail["mean_logprobs"] == pytest.approx([-4.5 / 3, -7 / 3])
    else:
        assert sorted(scored_prompts(fake_env)) == [sentence + "A false proof.", sentence + "A true proof."]
        assert ppl["prefix"] == sentence
        # "\n\nA" now straddles the prefix's end and is scored too (-2): (-2 - 0.5 - 2 - 2) / 4, (-2 - 3 - 2 - 2) / 4
        assert detail["n_tokens"] == [4, 4]
        assert detail["mean_logprobs"] == pytest.approx([-6.5 / 4, -9 / 4])
    assert detail["chosen"] == 0 and ppl["summary"]["score"] == pytest.approx(100.0)
