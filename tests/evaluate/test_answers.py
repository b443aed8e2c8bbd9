"""Answer checking (issue 10, item 5; issue 19, items 8-10): hand-labelled vectors, huge and hostile answers, the
worker's limits, the command, the false positives and refused formats of issue 19, and the checker's version."""

from __future__ import annotations

import collections
import json
import math

import pytest
from helpers.paths import GOLDEN
from typer.testing import CliRunner

from theorembench.cli.app import app
from theorembench.evaluate.answers import (
    CHECKER_VERSION,
    AnswerChecker,
    Verdict,
    check_answer,
    check_answers,
    extract_answer,
    guess_kind,
)

VECTORS = json.loads((GOLDEN / "answer_vectors.json").read_text())["vectors"]


@pytest.fixture(scope="module")
def checker():
    with AnswerChecker(timeout=5) as c:
        yield c


def test_there_are_enough_hand_labelled_vectors_of_every_kind():
    groups = collections.Counter(v["group"] for v in VECTORS)
    assert len(VECTORS) >= 150
    for group in ("integer", "rational", "boolean", "expression", "real", "collection", "extraction"):
        labels = {v["label"] for v in VECTORS if v["group"] == group}
        assert {True, False} <= labels, group
        assert groups[group] >= 15, group
    assert groups["hostile"] >= 10


def test_every_labelled_vector_agrees(checker):
    verdicts = checker.check_many({"expected": v["expected"], "answer": v["answer"], "kind": v["kind"]} for v in VECTORS)
    wrong = [f"{v['group']}/{v['note']}: want {v['label']}, got {r.correct} {r.messages}"
             for v, r in zip(VECTORS, verdicts, strict=True) if r.correct is not v["label"]]  # fmt: skip
    assert not wrong, "\n".join(wrong)


def test_a_closed_form_equals_its_exact_integer_value(checker):
    value = 2**180 * math.factorial(180)
    assert checker.check(r"2^{180}\cdot 180!", str(value)).correct is True
    assert checker.check(r"2^{180}\cdot 180!", str(value + 1)).correct is False
    grouped = f"{value:,}"  # thousands separators in the reply
    assert checker.check(str(value), rf"\boxed{{{grouped}}}", "integer").correct is True


def test_hundred_thousand_digit_integers_are_exact(checker):
    big = "9" * 50_000 + "1" * 50_000
    assert checker.check(big, big).correct is True
    assert checker.check(big, big[:-1] + "2").correct is False
    assert checker.check(big, "-" + big).correct is False
    verdict = checker.check(big, f"So the count is \\boxed{{{big}}}.")
    assert verdict.correct is True and verdict.expected.startswith("<integer of about")


HOSTILE = [
    "10^{10^{10}}", "2^{2^{2^{2^{2^{2}}}}}", "9^9^9^9", "(" * 10_000 + "1" + ")" * 10_000,
    "{" * 10_000 + "1" + "}" * 10_000, r"\sqrt{" * 10_000 + "2" + "}" * 10_000, "-" * 100_000 + "1",
    "^2".join(["2"] * 10_000), "1+" * 60_000 + "1", "1" * 300_001, r"\binom{10^{12}}{5\cdot 10^{11}}",
    "(10^{100000})!", "e^{10^{10}}", r"\sqrt{10^{10^{6}}}", r"(10^{200000})^{10}", "7!!!", "10^{10^{10}} - 10^{10^{10}}",
]  # fmt: skip


@pytest.mark.parametrize("answer", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_answers_come_back_too_large_or_timed_out(checker, answer):
    verdict = checker.check("7", answer)
    assert verdict.correct is None and verdict.warning == "high"
    assert any(m.startswith(("too large", "timeout")) for m in verdict.messages), verdict.messages


def test_hostile_replies_never_hang_extraction():
    assert extract_answer("x" * 100_000).text is not None  # one formula-like line (no prose): taken whole
    assert extract_answer(r"\boxed{" * 100_000).messages == ["20 unbalanced \\boxed"]
    assert extract_answer("ab " * 100_000).text is None
    assert extract_answer(("Answer is" + " " * 4_000 + ": x\n") * 50).text == "x"  # no backtracking blow-up


def test_nothing_in_an_answer_is_executed(checker, tmp_path):
    canary = tmp_path / "executed"
    for answer in (f"__import__('os').system('touch {canary}')", f"exec(\"open('{canary}','w')\")",
                   f"lambda: open('{canary}', 'w')", "Symbol('x').__class__"):  # fmt: skip
        verdict = checker.check("7", answer)
        assert verdict.correct is None and any(m.startswith("unparsed") for m in verdict.messages)
    assert not canary.exists()


def test_a_slow_comparison_times_out_inside_the_worker_and_the_worker_lives_on():
    heavy = ("(x+y+z+w)^{30}", "(x+y+z+w)^{29}x + (x+y+z+w)^{29}(y+z+w)")  # equal, but proving it is slow
    with AnswerChecker(timeout=0.5) as c:
        verdict = c.check(*heavy)
        assert verdict.correct is None and verdict.messages[0].startswith("timeout")
        worker = c._proc
        assert c.check("1/2", "0.5").correct is True and c._proc is worker


def test_a_worker_that_does_not_answer_is_killed_and_replaced():
    with AnswerChecker(timeout=5) as c:
        assert c.check("1", "1").correct is True
        first = c._proc
        c.timeout, c.grace = 0.2, 0.2  # the parent now waits less than the worker's own alarm
        verdict = c.check("(x+y+z+w)^{30}", "(x+y+z+w)^{29}x + (x+y+z+w)^{29}(y+z+w)")
        assert verdict.correct is None and verdict.messages == ["timeout: killed after 0.2 s"]
        assert first.poll() is not None and c._proc is None
        c.timeout = 5
        assert c.check("2", "2").correct is True and c._proc is not first


def test_extraction_rules():
    found = extract_answer(r"We get \boxed{\frac{1}{2}} and so $\boxed{ \boxed{3} }$.")
    assert (found.text, found.candidates, found.source) == ("3", [r"\frac{1}{2}", "3"], "boxed")
    assert extract_answer("x\n**Final Answer:** $42$.").text == "42"
    assert extract_answer("x\nAnswer:\n\n y^2 \n").text == "y^2"
    assert extract_answer(r"\fbox{7} then \boxed{7}").candidates == ["7"]
    long_prose = "This is a long argument without any final answer. " * 5
    assert extract_answer(long_prose).source is None


def test_kinds_are_guessed_from_the_expected_answer():
    assert [guess_kind(x) for x in ("42", "111,198,615,276", "-13/45", r"\frac{1}{3}", "3.14", "Yes",
                                    r"2^{180}\cdot 180!", "(1, 2)", "[1, 2]", r"\{1, 2\}", "1, 2", "[0, 1)",
                                    r"(-\infty, 0] \cup [1, \infty)", r"x \in (0, 1]", "0,111")] == [
        "integer", "integer", "rational", "rational", "real", "boolean", "expression", "tuple", "list", "set", "tuple",
        "interval", "interval", "interval", "real"]  # fmt: skip


def test_verdicts_are_json_and_tolerances_configurable():
    loose = check_answers([{"expected": "3.14", "answer": r"\pi", "kind": "real"}], rel_tol=1e-3)[0]
    strict = check_answers([{"expected": "3.14", "answer": r"\pi", "kind": "real"}])[0]
    assert loose.correct is True and loose.warning == "low" and "tolerance used" in loose.messages[0]
    assert strict.correct is False
    assert json.loads(json.dumps(loose.to_dict())) == loose.to_dict() and isinstance(loose, Verdict)


def test_the_last_boxed_answer_counts(checker):
    verdict = checker.check("42", r"First \boxed{41}, corrected: \boxed{42}.")
    assert verdict.correct is True and verdict.warning == "low"
    assert "2 different boxed answers: the last one counts" in verdict.messages
    assert checker.check("41", r"First \boxed{41}, corrected: \boxed{42}.").correct is False
    assert checker.check("5", r"Either \boxed{5} or \boxed{6}.").correct is False


# issue 19, item 8: each of these was graded correct; now it is wrong, or unjudged with a warning
FALSE_POSITIVES = [
    ("(0,9)", "[0,9)", None), ("(0,9)", "[0,9]", None), ("[0,1)", "(0,1)", None), ("(0,9)", "[0,9]", "interval"),
    ("x=1, y=2", "y=1, x=2", None), ("No", "No. Wait, on reflection the claim does hold, so the answer is Yes.", None),
    ("Yes", "Yes or no, depending on whether G is abelian.", None), ("114", r"N_8 \approx 114", None),
    ("114", r"So $N_8 \approx 114$ by the estimate above.\nFinal Answer: $N_8 \approx 114$", "integer"),
]  # fmt: skip


@pytest.mark.parametrize(("expected", "reply", "kind"), FALSE_POSITIVES, ids=range(len(FALSE_POSITIVES)))
def test_the_false_positives_of_issue_19_are_not_graded_correct(checker, expected, reply, kind):
    verdict = checker.check(expected, reply, kind)
    assert verdict.correct is not True, verdict
    assert verdict.correct is False or verdict.warning == "high"


def test_a_value_below_one_compares_without_a_crash(checker):
    # max(1, |expected|) was a plain int for |expected| < 1: every such comparison came back null
    assert checker.check(r"1-\frac{1}{e}", r"\frac{e-1}{e}").correct is True
    assert checker.check(r"1-\frac{1}{e}", r"\frac{e+1}{e}").correct is False
    assert checker.check(r"\frac{\sqrt{3}}{2}", r"\frac{3}{2\sqrt{3}}").correct is True


REFUSED_BEFORE = [
    (r"\frac{40}{9}", r"4\frac{4}{9}", None), (r"\frac{40}{9}", "4 4/9", None), ("1234567", r"1,\!234,\!567", None),
    ("14916", "14 {, }916", None), ("5", r"5\text{ cm}", None), ("3.14", "3,14", "real"), ("0.28", r"28\%", "real"),
    (r"\frac{\pi^2}{6}", r"\zeta(2)", None),
    ("12", "Some work.\nFinal Answer: The final answer is 12. I hope it is correct.", None),
]  # fmt: skip


@pytest.mark.parametrize(("expected", "reply", "kind"), REFUSED_BEFORE, ids=range(len(REFUSED_BEFORE)))
def test_formats_refused_before_issue_19_are_read(checker, expected, reply, kind):
    assert checker.check(expected, reply, kind).correct is True


def test_every_verdict_carries_the_checker_version(checker):
    assert CHECKER_VERSION == "2"  # bump on any change to extraction, parsing or comparison
    for verdict in (checker.check("1", "1"), checker.check("1", "x" * 300 + " " + "ab " * 100), check_answer("1", "2")):
        assert verdict.checker_version == CHECKER_VERSION and verdict.to_dict()["checker_version"] == CHECKER_VERSION


def test_the_command_prints_the_verdict_json():
    runner = CliRunner()
    result = runner.invoke(app, ["answers", "check", "--expected", "-13/45", "--answer", r"so $\boxed{\dfrac{13}{-45}}$"])
    assert result.exit_code == 0, result.output
    verdict = json.loads(result.output)
    assert verdict["correct"] is True and verdict["kind"] == "rational" and verdict["expected"] == "-13/45"
    result = runner.invoke(app, ["answers", "check", "--expected", "1", "--answer", "1", "--kind", "matrix"])
    assert result.exit_code == 2 and "unknown answer kind" in result.output
