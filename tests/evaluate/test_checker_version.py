"""The answer checker's version (issue 19, item 10): every verdict and results file names it, and a verdict
stored by another version is graded again from the stored reply, without a model call, instead of being mixed in."""

from __future__ import annotations

import json


from theorembench.evaluate.answers import CHECKER_VERSION
from theorembench.methods.eternal.calibrate import calibrate
from theorembench.methods.eternal.evaluate import evaluate_eternal
from theorembench.methods.improof import autograde
from theorembench.methods.improof.answers import record_answer
from theorembench.methods.improof.catalog import get_problem, import_problems
from theorembench.store import Store
from theorembench.store.improof import ImproofRepo
from theorembench.store.steps import Steps

# the checker of version 1 dropped the brackets: it graded this reply right; version 2 grades it wrong
EXPECTED, REPLY = "[0,1)", "The set of admissible t is $\\boxed{(0,1)}$."


def eternal_instance(iid: str) -> dict:
    """One instance line in the shared format, written by hand."""
    return {"template_id": "t_demo", "instance_id": f"t_demo#{iid}", "problem": f"PROBLEM-{iid}: find the set.",
            "solution_steps": "By the theorem.", "numerical_value": EXPECTED, "exact_expression": "",
            "params_used": {"n": 3}, "answer_kind": "interval", "msc": ["26"], "paper_id": None, "theorem": None,
            "template_version": 1, "code_hash": "0" * 64, "seed": 1, "tier": "hard", "n_models_correct": 0,
            "suite_size": 2, "execution": {"status": "ok", "isolation": [], "wall_s": 0.01, "cpu_s": 0.01},
            "libraries": {}}  # fmt: skip


def age_stored_grades(store: Store, pipeline: str) -> int:
    """Make every stored sample look graded by version 1 of the checker: no version, and graded right."""
    steps = Steps(store, pipeline)
    aged = 0
    for key, stage, result in steps.all("answer"):
        assert result.ok and result.output["checker_version"] == CHECKER_VERSION
        result.output.pop("checker_version")
        result.output["correct"] = True
        steps.put(key, stage, result)
        aged += 1
    return aged


def test_eternal_eval_regrades_samples_of_another_checker_version_without_asking_again(fake_env, store, tmp_path):
    fake_env.set_script({"default": {"reply": REPLY}})
    src = tmp_path / "calibrated.jsonl"
    src.write_text("".join(json.dumps(eternal_instance(i)) + "\n" for i in ("A", "B")))
    out = tmp_path / "ev"
    first = evaluate_eternal(store, src, "openai-api/fake/ev", out_dir=out, write_log=False)
    assert first.results["checker_version"] == CHECKER_VERSION == "2"
    assert first.results["summary"]["overall"]["correct"] == 0
    asked = fake_env.stats()["total_requests"]
    assert asked == 2 and age_stored_grades(store, first.results["pipeline"]) == 2

    again = evaluate_eternal(store, src, "openai-api/fake/ev", out_dir=out, write_log=False)
    assert fake_env.stats()["total_requests"] == asked  # graded again from the stored replies
    assert again.results["summary"]["overall"]["correct"] == 0  # not the stale "right" of version 1
    written = json.loads((out / "results_openai-api_fake_ev.json").read_text())
    assert written["checker_version"] == CHECKER_VERSION
    outputs = [r.output for _, _, r in Steps(store, first.results["pipeline"]).all("answer")]
    assert [(o["correct"], o["checker_version"]) for o in outputs] == [(False, CHECKER_VERSION)] * 2


def test_eternal_calibration_regrades_trials_of_another_checker_version(fake_env, store, tmp_path):
    fake_env.set_script({"default": {"reply": REPLY}})
    src = tmp_path / "instances.jsonl"
    src.write_text(json.dumps(eternal_instance("A")) + "\n")
    suite = ["openai-api/fake/m1", "openai-api/fake/m2"]
    first = calibrate(store, src, suite, 1, out_dir=tmp_path / "cal")
    assert first.summary["checker_version"] == CHECKER_VERSION and fake_env.stats()["total_requests"] == 2
    assert age_stored_grades(store, first.summary["pipeline"]) == 2

    again = calibrate(store, src, suite, 1, out_dir=tmp_path / "cal")
    assert fake_env.stats()["total_requests"] == 2 and again.calls_made == 0
    trials = [json.loads(line) for line in (tmp_path / "cal" / "trials.jsonl").read_text().splitlines()]
    assert [t["correct"] for t in trials] == [False, False]  # with version 1's grades, every model solved it
    assert json.loads((tmp_path / "cal" / "calibration.json").read_text())["checker_version"] == CHECKER_VERSION


PROBLEM = {
    "id": "intervals", "title": "An interval", "statement": "Find the set of admissible $t$.", "solution": "Solve.",
    "tags": ["analysis"], "difficulty": {"background": 1, "reasoning": 1, "insight": 1, "compute": 1},
    "author": "alice@example.org",
    "subquestions": [{"text": "Which $t$ are admissible?", "answer": EXPECTED, "kind": "interval", "points": 1,
                      "rationale": "r"}],
}  # fmt: skip


def test_improof_auto_grades_follow_the_checker_version(store, tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(PROBLEM))
    import_problems(store, path)
    version = get_problem(store, "intervals").version
    answer_id = record_answer(store, run_id="r1", problem_id="intervals", version=version, model="m/x", tier=1,
                              epoch=0, mode="agentic", main_answer="proof", sub_answers=[REPLY],
                              stages=[{"stage": "main", "outcome": "submitted"}])  # fmt: skip
    # what the checker of version 1 stored: the reply graded right
    ImproofRepo(store).put_verdicts(answer_id, "checker-1", [{"sub_index": 0, "correct": True, "warning": "none",
                                                              "extracted": "(0,1)", "parsed": {}}])  # fmt: skip
    assert autograde.GRADER_VERSION == f"checker-{CHECKER_VERSION}"
    assert [v["source"] for v in autograde.effective_verdicts(store, answer_id)] == ["ungraded"]  # not mixed in
    assert autograde.regrade(store) == 1 and autograde.regrade(store) == 0
    [verdict] = autograde.effective_verdicts(store, answer_id)
    assert (verdict["correct"], verdict["grader_version"], verdict["source"]) == (False, "checker-2", "auto")
    assert verdict["parsed"]["checker_version"] == CHECKER_VERSION
    [graded] = autograde.grade_answer(store, answer_id)
    assert graded.correct is False and graded.checker_version == CHECKER_VERSION
