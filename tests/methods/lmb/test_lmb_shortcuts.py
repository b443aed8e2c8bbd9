"""The shortcut audit (issue 22, items 6-7): the meta-option as a distractor, the audit's heuristics on the release
and on hand-made items, the options-only baseline through the fake server, and `theorembench lmb audit`."""

from __future__ import annotations

import json

from helpers.lmb import (
    A_TEXT,
    GEN,
    build,
    papers,  # noqa: F401 - a fixture
    requests_to,
    runner,
    script,
    write_config,
)

from theorembench.cli import app
from theorembench.evaluate.mcq.items import META_OPTION, load_dataset
from theorembench.methods.lmb.config import load_config
from theorembench.methods.lmb.shortcuts import shortcut_audit, similarity_to_others, tie_score
from theorembench.methods.lmb.stages import meta_distractor_label

OPTIONS_ONLY = "its question is withheld"  # the options-only system prompt, told apart from the other stages'
META = {"weaker_true_label": "C", "false_labels": ["B", "D", "E"], "wildcard_false_label": "E"}


def item(item_id: str, a: str, b: str, c: str, d: str, e: str) -> dict:
    return {"id": item_id, "mcq": {"question": f"Question {item_id}?", "correct_choice": {"label": "A", "text": a},
                                   "choices": [{"label": lab, "text": t} for lab, t in zip("BCDE", (b, c, d, e))]}}


# four items whose heuristics were worked out by hand (token-set Jaccard, lengths in characters)
HAND = [
    item("t1", "x y z", "x y", "x z", "y z", "q"),  # A longest, E shortest; A's mean Jaccard 2/4 is the highest
    item("t2", META_OPTION, "p", "p q", "p r", "p s"),  # meta keyed and longest; B ({p}) the most similar
    item("t3", "u v", META_OPTION, "u", "v", "u v w x"),  # meta a distractor (longest); A the most similar (0.375)
    item("t4", "ab", "cd", "e", "f", "g"),  # A and B tie longest; C, D, E tie shortest; all similarities 0 (5-way)
]


def test_the_release_keys_the_meta_option_whenever_it_is_shown(lmb_hard):
    # by hand from the file (jq over its options, whitespace collapsed): 14 of 29 items show the meta-option, all 14
    # as the keyed answer; the keyed option is the shortest in 12 items outright and ties in one (2511.06595v1::orig,
    # 414 characters like option E), the longest in none but one tie (2511.06951v1::orig, 160 like option E)
    audit = shortcut_audit(json.loads(lmb_hard.read_text()))
    assert audit["items"] == 29 and audit["chance"] == 0.2
    assert audit["meta_option"] == {"shown": 14, "keyed": 14, "as_distractor": 0}
    b = audit["baselines"]
    assert b["meta_option_when_shown"]["estimate"] == {"value": 1.0, "ci95": [0.7847, 1.0], "n": 14, "errors": 0,
                                                       "method": "wilson"}  # fmt: skip
    assert b["meta_option"]["estimate"]["value"] == 0.5862  # (14 + 15/5) / 29: always the meta-option, else a guess
    assert b["shortest"]["estimate"]["value"] == 0.431  # 12.5 / 29
    assert b["longest"]["estimate"]["value"] == 0.0172  # 0.5 / 29
    assert {"meta_option", "meta_option_when_shown", "shortest"} <= set(audit["flagged"])
    assert "longest" not in audit["flagged"] and "options_only" in audit["skipped"]


def test_heuristics_on_hand_made_items():
    assert similarity_to_others(["x y z", "x y", "x z", "y z", "q"]) == [0.5, 1 / 3, 1 / 3, 1 / 3, 0.0]
    assert tie_score([2.0, 2.0, 1.0, 1.0, 1.0]) == 0.5 and tie_score([2.0, 2.0, 1.0, 1.0, 1.0], best=min) == 0.0
    audit = shortcut_audit(HAND)
    b = audit["baselines"]
    assert audit["meta_option"] == {"shown": 2, "keyed": 1, "as_distractor": 1}
    assert b["meta_option"]["estimate"]["value"] == 0.35  # (1/5 + 1 + 0 + 1/5) / 4
    assert b["meta_option_when_shown"]["estimate"]["value"] == 0.5 and b["meta_option_when_shown"]["estimate"]["n"] == 2
    assert b["longest"]["estimate"]["value"] == 0.625  # (1 + 1 + 0 + 1/2) / 4
    assert b["shortest"]["estimate"]["value"] == 0.0
    assert b["most_similar"]["estimate"]["value"] == 0.55  # (1 + 0 + 1 + 1/5) / 4
    # Wilson at 0.625 with n=4: [0.2194, 0.9088], above chance 0.2: the only baseline flagged
    assert b["longest"]["estimate"]["ci95"][0] == 0.2194 and audit["flagged"] == ["longest"]


def test_the_meta_distractor_is_drawn_per_theorem_and_never_replaces_c():
    ids = [f"2611.{k:05d}v1" for k in range(2000)]
    drawn = [meta_distractor_label(i, f"{i}::orig", META, seed=7, share=0.3, resistant=False) for i in ids]
    assert 0.27 < sum(d is not None for d in drawn) / len(ids) < 0.33
    assert {d for d in drawn if d} == {"B", "D", "E"}  # never A, never the weaker-but-true C
    # a theorem's variants agree on whether (the hardest-variant pick cannot favour it); the label is per item
    alts = [meta_distractor_label(i, f"{i}::alt1", META, seed=7, share=0.3, resistant=False) for i in ids]
    assert [d is None for d in drawn] == [a is None for a in alts] and drawn != alts
    assert all(meta_distractor_label(i, i, META, seed=7, share=1.0, resistant=True) is None for i in ids[:50])
    assert not any(meta_distractor_label(i, i, META, seed=7, share=0.0, resistant=False) for i in ids[:50])
    assert drawn == [meta_distractor_label(i, f"{i}::orig", META, seed=7, share=0.3, resistant=False) for i in ids]
    assert load_config().generation.meta_distractor_share == 1.0


def test_a_build_shows_the_meta_option_as_a_distractor_and_ships_the_audit(fake_env, papers, tmp_path):
    s = script()
    s["rules"].insert(0, {"match": OPTIONS_ONLY, "reply": "From the options alone: \\boxed{B}"})
    fake_env.set_script(s)
    cfg = write_config(tmp_path, generation={"substitution_resistant_fraction": 0.0, "meta_distractor_share": 1.0})
    res, split, summary = build(tmp_path, papers, cfg=cfg)
    for it in split["full"] + split["pool"]:
        mcq = it["mcq"]
        assert mcq["correct_choice"]["text"] == A_TEXT and not it["substitution_resistant"]
        shown = [c["label"] for c in mcq["choices"] if c["text"] == META_OPTION]
        assert shown == [it["meta_distractor"]] and shown[0] in ("B", "D", "E")
        assert mcq["meta"]["meta_distractor_label"] == shown[0]
    rubric_users = [r["body"]["messages"][1]["content"] for r in fake_env.requests
                    if "You grade a multiple-choice question" in r["body"]["messages"][0]["content"]]  # fmt: skip
    assert rubric_users and all("placed here as a false option" in u for u in rubric_users)
    hard = split["ge5_hard"]
    assert len(hard) == 3 and len(load_dataset(tmp_path / "out" / "qaEval_202611_ge5_hard.json").items) == 3
    audit = json.loads((tmp_path / "out" / "shortcut_audit.json").read_text())
    assert audit["meta_option"] == {"shown": 3, "keyed": 0, "as_distractor": 3}
    assert audit["baselines"]["meta_option_when_shown"]["estimate"]["value"] == 0.0
    assert audit["baselines"]["options_only"]["model"] == "openai-api/fake/judge"
    assert requests_to(fake_env, OPTIONS_ONLY) == 3  # one stem-less answer per hard item
    assert summary["shortcut_audit"]["flagged"] == audit["flagged"]
    assert "shortcut audit: 3 items" in res.output and "shortcut_audit:" in res.output
    assert [r["stage"] for r in summary["costs"]][-2:] == ["options_only", "total"]
    build(tmp_path, papers, cfg=cfg)
    assert requests_to(fake_env, OPTIONS_ONLY) == 3  # a rerun asks nothing again


def test_lmb_audit_command_asks_the_options_only_model_once(fake_env, tmp_path):
    texts = {"k1": ("KEYED-ONE", "alpha one", "beta one", "gamma one", "delta one"),
             "k2": ("KEYED-TWO", "alpha two", "beta two", "gamma two", "delta two"),
             "k3": ("KEYED-THREE", "alpha three", "beta three", "gamma three", "delta three")}  # fmt: skip
    path = tmp_path / "items.json"
    path.write_text(json.dumps([item(k, *v) for k, v in texts.items()]))
    # a model that sees through the options: it names wherever the keyed text was shuffled to
    rules = [{"match": rf"\({lab}\) KEYED-", "reply": f"\\boxed{{{lab}}}"} for lab in "ABCDE"]
    fake_env.set_script({"rules": rules, "default": {"reply": "no idea"}})
    out = tmp_path / "audit.json"
    res = runner.invoke(app, ["lmb", "audit", str(path), "--model", GEN, "--out", str(out)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert requests_to(fake_env, OPTIONS_ONLY) == 3
    assert all("## Question" not in r["body"]["messages"][1]["content"] for r in fake_env.requests)  # no stem sent
    assert all("Question k" not in r["body"]["messages"][1]["content"] for r in fake_env.requests)
    audit = json.loads(out.read_text())
    oo = audit["baselines"]["options_only"]
    assert oo["estimate"]["value"] == 1.0 and oo["estimate"]["n"] == 3 and oo["model"] == GEN
    assert oo["estimate"]["ci95"] == [0.4385, 1.0] and "options_only" in audit["flagged"]  # Wilson 3/3
    again = runner.invoke(app, ["lmb", "audit", str(path), "--model", GEN], catch_exceptions=False)
    assert again.exit_code == 0 and requests_to(fake_env, OPTIONS_ONLY) == 3  # resumed from the stored steps


def test_lmb_audit_command_without_a_model_and_on_bad_input(tmp_path, lmb_hard):
    res = runner.invoke(app, ["lmb", "audit", str(lmb_hard)])
    assert res.exit_code == 0, res.output
    assert "options-only baseline skipped: no --model given" in res.output
    assert "meta-option shown in 14 (keyed 14, distractor 0)" in res.output
    assert "flagged (95% interval above chance): meta_option, meta_option_when_shown, shortest" in res.output
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"id": "x", "mcq": {"question": "Q", "correct_choice": {"label": "A", "text": "a"},
                                                   "choices": []}}]))  # fmt: skip
    res = runner.invoke(app, ["lmb", "audit", str(bad)])
    assert res.exit_code == 2 and res.output.startswith("error:") and len(res.output.strip().splitlines()) == 1
    res = runner.invoke(app, ["lmb", "audit", str(lmb_hard), "--model", "nosuch/provider-model"])
    assert res.exit_code == 2 and "error:" in res.output
