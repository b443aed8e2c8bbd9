"""EternalMath: generated code cannot verify itself (issue 19, items 4 to 7).

Each hostile or careless template below goes through the real instantiate path (the real sandbox).
None of them may leave a wrong or ungradeable instance; the honest controls beside them must verify.
Expected values are written by hand: the derangement numbers D(1..7) = 0, 1, 2, 9, 44, 265, 1854.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from fractions import Fraction

import pytest

from theorembench.evaluate.answers import check_answer
from theorembench.methods.eternal.instantiate import instantiate_templates
from theorembench.methods.eternal.template import parse_template

BRUTE = ("import itertools\n"
         "result = sum(1 for p in itertools.permutations(range(n)) if all(p[i] != i for i in range(n)))\n")  # fmt: skip


def derangements(tid: str, formula: str, **extra) -> dict:
    return {"template_id": tid, "problem_template": "How many derangements of $\\{1, \\dots, {n}\\}$ are there?",
            "output_type": "Integer", "formal_solution": formula, "natural_lang_solution": "Inclusion-exclusion.",
            "params": {"n": {"type": "int", "min": 20, "max": 150}},
            "small_case_check": {"params": {"n": [1, 2, 3, 4, 5, 6, 7]}, "code": BRUTE}, **extra}  # fmt: skip


def simple(tid: str, formula: str, values: list, **extra) -> dict:
    return {"template_id": tid, "problem_template": "Let $n = {n}$. Compute the value.", "formal_solution": formula,
            "natural_lang_solution": "Evaluate the formula.", "output_type": "Integer",
            "params": {"n": {"type": "choice", "values": values}}, **extra}  # fmt: skip


def run(*templates: dict, n: int = 3, **limits):
    return instantiate_templates([parse_template(t) for t in templates], n, seed=0, **limits)


def of(res, tid: str) -> tuple[list[dict], list[dict]]:
    return ([i for i in res.instances if i["template_id"] == tid],
            [r for r in res.rejections if r["template_id"] == tid])  # fmt: skip


def test_a_formula_that_switches_off_the_cross_check_in_its_process_is_rejected():
    # n! published as the derangement count, after replacing the checker's comparison in the interpreter
    hostile = derangements("patches_main", "import __main__\n__main__.agree = lambda a, b: True\n"
                                           "import math\nresult = math.factorial(n)\n")  # fmt: skip
    res = run(hostile, check_budget_s=0)
    assert res.instances == []
    [rej] = res.rejections
    assert rej["stage"] == "cross_check"
    assert rej["reason"] == "formal_solution gives 1 but the brute force gives 0 at n=1"


FORGE = '''
import json, os
lines = [json.dumps({"kind": "case", "index": i, "params": {"n": i + 1}, "status": "agree", "formula": "0",
                     "check": "0"}) for i in range(7)]
lines += [json.dumps({"kind": "instance", "index": i, "status": "ok", "value": "42", "type": "int", "exact": True,
                      "exact_expression": ""}) for i in range(3)]
lines += [json.dumps({"kind": "done"})]
lines += ["%d\\t%s\\t%s" % (k + 1, "0" * 64, json.dumps({"kind": "run", "id": "inst%d" % k, "status": "ok",
          "value": {"t": "int", "v": "42"}})) for k in range(3)]
data = ("\\n".join(lines) + "\\n").encode()
for fd in range(256):
    try:
        os.write(fd, data)
    except OSError:
        pass
for pid in os.listdir("/proc"):
    if pid.isdigit() and int(pid) != os.getpid():
        try:
            fds = os.listdir("/proc/%s/fd" % pid)
        except OSError:
            continue
        for fd in fds:
            try:
                handle = os.open("/proc/%s/fd/%s" % (pid, fd), os.O_WRONLY | os.O_NONBLOCK)
                os.write(handle, data)
                os.close(handle)
            except OSError:
                pass
os._exit(0)
'''


def test_result_lines_written_by_the_code_are_not_read():
    # the code writes lines shaped as the harness's (old and new) to every file it can reach, then ends itself
    res = run(derangements("forges_lines", FORGE), check_budget_s=0)
    assert res.instances == []
    [rej] = res.rejections
    assert rej["stage"] == "cross_check"
    assert rej["reason"] == "formal_solution failed on the small case n=1: the run ended without a result (exit 0)"


def test_the_code_cannot_open_the_files_of_the_process_that_reports():
    code = ("import os\ntry:\n    result = len(os.listdir('/proc/%d/fd' % os.getppid()))\n"
            "except PermissionError:\n    result = 0\n")  # fmt: skip
    res = run(simple("looks_at_parent", code, [1]), n=1)
    [inst] = res.instances
    assert inst["numerical_value"] == "0"


def test_an_answer_that_depends_on_the_hash_seed_is_nondeterministic():
    # the order of a set of strings changes with PYTHONHASHSEED, i.e. from one process to the next
    words = "words = {str(k) for k in range(100, 100 + n)}\n"
    hashed = simple("set_order", words + "result = int(''.join(words))", [20, 30, 40])
    ordered = simple("sorted_order", words + "result = int(''.join(sorted(words)))", [20, 30, 40])
    res = run(hashed, ordered)
    inst, rej = of(res, "set_order")
    assert inst == [] and [r["stage"] for r in rej] == ["determinism"] * 3
    assert all(r["reason"].startswith("nondeterministic: two runs gave ") and "hash seeds" in r["reason"] for r in rej)
    inst, rej = of(res, "sorted_order")
    assert rej == [] and sorted(i["numerical_value"] for i in inst) == [
        "".join(str(k) for k in range(100, 100 + n)) for n in (20, 30, 40)]


def test_answers_rounded_from_floats_are_rejected():
    rounded = derangements("nearest_integer_float", "import math\nresult = round(math.factorial(n) / math.e)\n")
    # exact, then through a float: every rounding mode gives the same double, so the 2^53 test must catch it
    through = derangements("exact_then_float", "d = 1\nfor m in range(1, n + 1):\n    d = m * d + (-1) ** m\n"
                                               "result = int(float(d))\n")  # fmt: skip
    res = run(rounded, through, n=5, check_budget_s=0)
    assert res.instances == []
    inst, rej = of(res, "nearest_integer_float")
    assert [r["stage"] for r in rej] == ["precision"] * 5
    assert all(r["reason"].startswith("the result depends on floating-point rounding: ") for r in rej)
    inst, rej = of(res, "exact_then_float")
    assert [r["stage"] for r in rej] == ["precision"] * 5
    assert all(r["reason"].startswith("every integer answer beyond 2^53 (5 of them) is exactly a double") for r in rej)


def test_a_declared_real_answer_may_use_floats():
    real = simple("square_root", "import math\nresult = math.sqrt(n)", [2, 3, 5], answer_kind="real")
    as_integer = simple("square_root_floor", "import math\nresult = math.sqrt(n)", [2, 3, 5])
    res = run(real, as_integer)
    inst, rej = of(res, "square_root")
    assert rej == [] and sorted(i["numerical_value"] for i in inst) == [
        "1.4142135623730951", "1.7320508075688772", "2.23606797749979"]
    inst, rej = of(res, "square_root_floor")
    assert inst == [] and {r["stage"] for r in rej} == {"precision"}
    assert all(r["reason"].startswith("inexact result ") for r in rej)


def test_the_cross_check_also_runs_beyond_the_declared_small_cases():
    # right for n < 12 only: the declared cases 1..5 agree, the brute force's larger cases 6..13 do not
    wrong_late = {"template_id": "subsets_late", "problem_template": "How many subsets has a set of {n} elements?",
                  "output_type": "Integer", "formal_solution": "result = 2**n if n < 12 else 2**n - 1",
                  "natural_lang_solution": "Count the subsets.",
                  "params": {"n": {"type": "int", "min": 20, "max": 40}},
                  "small_case_check": {"params": {"n": [1, 2, 3, 4, 5]}, "code": (
                      "from itertools import combinations\n"
                      "result = sum(1 for k in range(n + 1) for _ in combinations(range(n), k))")}}  # fmt: skip
    res = run(wrong_late, check_budget_s=60)  # a budget far above what these cases take
    assert res.instances == []
    [rej] = res.rejections
    assert rej["stage"] == "cross_check"
    assert rej["reason"] == ("formal_solution gives 4095 but the brute force gives 4096 at n=12, a case beyond the "
                             "declared small cases that the brute force ran in time")  # fmt: skip


def test_a_sympy_answer_is_stored_in_a_form_the_checker_grades():
    poly = simple("minimal_polynomial", "import sympy as sp\nx = sp.Symbol('x')\n"
                                        "result = sp.PurePoly(x**2 - 2*n*x - 1, x)", [3], answer_kind="expression")
    res = run(poly, n=1)
    [inst] = res.instances
    assert inst["numerical_value"] == "x**2 - 6*x - 1"
    assert check_answer(inst["numerical_value"], "\\boxed{x^{2} - 6 x - 1}", "expression").correct is True


def test_an_answer_the_checker_cannot_grade_is_rejected():
    # the text of a sympy object, as the old harness stored it: no model's reply could match it
    text = simple("poly_text", "result = \"PurePoly(x**2 - %d*x - 1, x, domain='ZZ')\" % (2 * n)", [3],
                  answer_kind="expression")  # fmt: skip
    res = run(text, n=1)
    assert res.instances == []
    [rej] = res.rejections
    assert rej["stage"] == "grading" and rej["reason"].startswith("the answer checker cannot grade this answer: ")
    assert "PurePoly(x**2 - 6*x - 1, x, domain='ZZ')" in rej["reason"]


def test_collections_and_truth_values_are_stored_gradeably():
    pair = simple("pair", "from fractions import Fraction\nresult = (n, Fraction(1, n))", [2, 3], answer_kind="tuple")
    square = simple("is_square", "import math\nresult = math.isqrt(n) ** 2 == n", [4, 5], answer_kind="boolean")
    divisors = simple("divisors", "result = {d for d in range(1, n + 1) if n % d == 0}", [6, 10], answer_kind="set")
    # the same test through a float: 4 ** 0.5 rounded downward is just below 2, so the answer moves
    float_square = simple("is_square_by_float", "result = int(n ** 0.5) ** 2 == n", [4], answer_kind="boolean")
    res = run(pair, square, divisors, float_square, n=2)
    stored = sorted((i["template_id"], i["numerical_value"]) for i in res.instances)
    assert stored == [("divisors", "{1, 2, 3, 6}"), ("divisors", "{1, 2, 5, 10}"), ("is_square", "False"),
                      ("is_square", "True"), ("pair", "(2, 1/2)"), ("pair", "(3, 1/3)")]  # fmt: skip
    assert sorted((r["template_id"], r["stage"]) for r in res.rejections) == [
        ("is_square_by_float", "duplicate"), ("is_square_by_float", "precision")]  # a one-value domain, and n = 4


def test_only_lines_signed_in_sequence_are_read():
    from theorembench.methods.eternal.runs import read_signed

    key = b"k" * 64

    def signed(seq: int, obj: dict) -> str:
        body = json.dumps(obj)
        mac = hmac.new(key, ("%d\t%s" % (seq, body)).encode(), hashlib.sha256).hexdigest()
        return "\t".join([str(seq), mac, body])

    good = [signed(1, {"kind": "hello"}), signed(2, {"kind": "done"})]
    forged = "2\t" + "0" * 64 + "\t" + json.dumps({"kind": "run", "id": "inst0"})
    stream = "\n".join([good[0], forged, "noise", good[1]])
    assert read_signed(stream, key) == ([{"kind": "hello"}, {"kind": "done"}], "")
    # a line taken out of the stream (or one replayed) breaks the sequence: nothing of it is read
    assert read_signed("\n".join([good[1]]), key) == ([], "signed line 2 where line 1 was due")
    assert read_signed("\n".join([good[0], good[0]]), key)[1] == "signed line 1 where line 2 was due"


def derangement_numbers(top: int) -> dict[int, int]:
    """D(n) by the recurrence D(n) = n D(n-1) + (-1)^n, D(0) = 1 (written here, not taken from the code under test)."""
    d, out = 1, {}
    for m in range(1, top + 1):
        d = m * d + (-1) ** m
        out[m] = d
    return out


def test_software_floats_too_leave_no_wrong_answer():
    # 30 significant digits (decimal, mpmath): right while D(n) has fewer digits, wrong beyond
    by_decimal = derangements("decimal_30", "import math\nfrom decimal import Decimal, getcontext\n"
                              "getcontext().prec = 30\n"
                              "result = int((Decimal(math.factorial(n)) / Decimal(1).exp()).to_integral_value())\n")
    by_mpmath = derangements("mpmath_30", "import mpmath\nmpmath.mp.dps = 30\n"
                             "result = int(mpmath.nint(mpmath.factorial(n) / mpmath.e))\n")  # fmt: skip
    res = run(by_decimal, by_mpmath, n=8, check_budget_s=0)
    exact = derangement_numbers(150)
    assert [i for i in res.instances if i["numerical_value"] != str(exact[i["params_used"]["n"]])] == []
    # the drawn n are all 30 or more (D(n) of 31 digits and more): each such answer moves with the rounding
    assert all(exact[r["params_used"]["n"]] >= 10**30 for r in res.rejections) and len(res.rejections) == 16
    assert {r["stage"] for r in res.rejections} == {"precision"}


def test_a_sympy_interval_is_stored_as_it_is_written():
    interval = simple("interval", "import sympy as sp\nresult = sp.Interval.Ropen(0, n)", [3], answer_kind="interval")
    [inst] = run(interval, n=1).instances
    assert inst["numerical_value"] == "[0, 3)"
    assert check_answer(inst["numerical_value"], "\\boxed{\\left[0, 3\\right)}", "interval").correct is True


def test_results_are_read_as_data_and_doubles_are_recognised():
    from theorembench.methods.eternal.values import BadValue, Expr, decode, latex, text
    from theorembench.methods.eternal.verify import double_like

    assert decode({"t": "set", "items": [{"t": "int", "v": "10"}, {"t": "frac", "v": "-1/2"}]}) == frozenset(
        {10, Fraction(-1, 2)})  # fmt: skip
    assert decode({"t": "expr", "text": "x**2 - 1", "latex": "x^{2} - 1"}) == Expr("x**2 - 1", "x^{2} - 1")
    assert decode({"t": "expr", "text": "2.5*x", "latex": "2.5 x"}).floating  # a decimal point is a float
    for bad in ({"t": "int", "v": "1e5"}, {"t": "int", "v": "__import__('os')"}, {"t": "frac", "v": "1/0"},
                {"t": "complex", "v": "1j"}, {"t": "pickle", "v": ""}, {"t": "int", "v": "9" * 200_001}, []):
        with pytest.raises(BadValue):
            decode(bad)
    assert (text(frozenset({10, 2, 1})), latex(Fraction(-3, 4)), latex(1e-20)) == (
        "{1, 2, 10}", "-\\frac{3}{4}", "1 \\times 10^{-20}")  # fmt: skip
    # int(float(D(20))) = 895014631192902144, and the exact D(20) = 895014631192902121
    assert double_like(895014631192902144) and not double_like(895014631192902121)
    # exact and double-sized but not double-like: 2^60, and 2^31 * 638512875 (odd part of 30 bits)
    assert not double_like(2**60) and not double_like(1371195958099968000)
