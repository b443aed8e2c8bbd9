"""EternalMath steps e and g: templates, parameters, rendering, sandboxed execution, the cross-check, instances.

The Cayley-graph example of the paper's §3.4 is written in our template format below. Few sandbox
starts are made (three per template per call: brute force, formula, replay), so the file stays fast.
"""

from __future__ import annotations

import hashlib
import json
import math
from fractions import Fraction
from random import Random

import mpmath
import pytest
from helpers.sandbox import assert_nothing_reached, reaching_code
from typer.testing import CliRunner

from theorembench.cli import app
from theorembench.evaluate.answers import KINDS
from theorembench.methods.eternal import params as P
from theorembench.methods.eternal.crosscheck import case_runs
from theorembench.methods.eternal.instantiate import instantiate_templates, write_outputs
from theorembench.methods.eternal.render import render_problem, strip_bindings, substitute
from theorembench.methods.eternal.runs import run_role
from theorembench.methods.eternal.template import TemplateError, load_templates, parse_template
from theorembench.methods.eternal.validate import RuleError, evaluate_rule
from theorembench.sandbox import probe

runner = CliRunner()

# Brute force for the Cayley graph of S_n on its n-cycles: build the adjacency matrix (u ~ a∘u for
# every n-cycle a) and sum the absolute values of its eigenvalues.
#
# Which small n does the check cover? Theorem 1.6(b) of the paper the case study cites is stated
# for a prime p, where the p-singular elements of S_p are exactly its p-cycles. The problem the
# template renders asks about the graph on the n-cycles, and for that graph the formula holds for
# every n: the set of n-cycles is a conjugacy class, so the eigenvalues are chi(n-cycle)(n-1)!/chi(1)
# with multiplicity chi(1)^2, and by Murnaghan-Nakayama chi(n-cycle) = ±1 on the n hooks (whose
# degrees are C(n-1, k)) and 0 elsewhere; the energy is (n-1)! * sum_k C(n-1, k) = 2^(n-1) (n-1)!.
# So the check runs on n = 3, 4, 5, 6 (the energies 8, 48, 384, 3840), which includes the primes
# 3 and 5 where the theorem itself applies; 7 would mean a 5040 x 5040 matrix, too slow for a test.
CAYLEY_BRUTE = """
import itertools
import numpy as np

perms = list(itertools.permutations(range(n)))
index = {p: i for i, p in enumerate(perms)}

def cycle_length_of_0(p):
    k, x = 1, p[0]
    while x != 0:
        k, x = k + 1, p[x]
    return k

n_cycles = [p for p in perms if cycle_length_of_0(p) == n]
adjacency = np.zeros((len(perms), len(perms)))
for u in perms:
    for a in n_cycles:
        adjacency[index[u], index[tuple(a[u[i]] for i in range(n))]] = 1
result = int(round(float(np.abs(np.linalg.eigvalsh(adjacency)).sum())))
"""

CAYLEY = {
    "template_id": "abstract_algebra_cayley_graph_energy_001",
    "target_paper_module": "Energy of the Cayley graph of S_n on its n-cycles (Theorem 1.6(b) of the case study)",
    "core_math_concept": "E(Gamma_n(S_n)) = 2^(n-1) (n-1)! for prime n",
    "param_definition": [{"var_name": "n", "var_type": "Integer", "var_constraint": "n prime, 5 <= n <= 400",
                          "var_source": "a random prime"}],
    "problem_template": "Consider the graph $\\Delta$ whose vertex set is the symmetric group $S_{n}$, the "
                        "permutations of $\\{1, 2, \\dots, {n}\\}$. Two permutations $u, v$ are adjacent when "
                        "$v = a \\circ u$ for some {n}-cycle $a \\in S_{n}$ (a cycle of length {n}). Given that "
                        "$n = {n}$ is a prime number, calculate the energy of $\\Delta$.",
    "output_type": "Integer",
    "param_generation_rule": ["Step 1: draw a prime n from 5..400."],
    "natural_lang_solution": "By Theorem 1.6(b), $E(\\Delta) = 2^{n-1} \\cdot ({n}-1)!$.",
    "formal_solution": "import math\n\nresult = 2**(n-1) * math.factorial(n-1)\n",
    "validation_rule": [{"type": "execution_check", "rule": "formal_solution executes without error"},
                        {"type": "value_check", "rule": "result > 0"}],
    "params": {"n": {"type": "prime", "min": 5, "max": 400}},
    "small_case_check": {"params": {"n": [3, 4, 5, 6]}, "code": CAYLEY_BRUTE},
    "msc": ["05", "20"],
}  # fmt: skip

# the A.4 example's value for n = 181, first 68 digits (copied from the paper's appendix)
A4_PREFIX = "30787231995743823029136398527529273784987541275633483346534477543568"


def template(**fields) -> dict:
    base = {"template_id": "t", "problem_template": "Let $n = {n}$. Compute it.", "formal_solution": "result = n",
            "natural_lang_solution": "The answer is {n}.",
            "output_type": "Integer", "params": {"n": {"type": "choice", "values": [1, 2, 3]}}}  # fmt: skip
    return base | fields


def by_params(result) -> tuple[dict, dict]:
    inst = {json.dumps(i["params_used"], sort_keys=True): i for i in result.instances}
    rej = {json.dumps(r["params_used"], sort_keys=True): r for r in result.rejections if r["params_used"] is not None}
    return inst, rej


def test_cayley_every_prime_gives_the_formula():
    t = parse_template(CAYLEY)
    res = instantiate_templates([t], 76, seed=11)  # 5..400 holds 76 primes: every one is drawn
    assert res.rejections == [] and res.validated_templates == [CAYLEY["template_id"]]
    values = {i["params_used"]["n"]: i["numerical_value"] for i in res.instances}
    assert len(values) == 76 and all(P.is_prime(n) for n in values)
    assert values[5] == "384" and values[7] == "46080" and values[11] == "3715891200"
    assert values[181].startswith(A4_PREFIX)
    # 180! holds 36 + 7 + 1 = 44 factors 5 (Legendre), and twos to spare: exactly 44 trailing zeros
    assert len(values[181]) - len(values[181].rstrip("0")) == 44
    for n, v in values.items():
        assert v == str(2 ** (n - 1) * math.factorial(n - 1))
    inst = next(i for i in res.instances if i["params_used"] == {"n": 181})
    assert inst["instance_id"] == CAYLEY["template_id"] + "#" + hashlib.sha256(b'{"n":181}').hexdigest()[:10]
    assert "$S_{181}$" in inst["problem"] and "181-cycle" in inst["problem"] and "$n = 181$" in inst["problem"]
    assert "{n}" not in inst["problem"] and "(181-1)!" in inst["solution_steps"]
    assert inst["answer_kind"] == "integer" and inst["msc"] == ["05", "20"]
    # n = 7 is a 5040 x 5040 matrix: beyond the brute force's budget for larger cases, so only the declared 4
    assert inst["cross_check"] == {"cases": 4, "larger": 0, "largest": None}
    assert inst["code_hash"] == hashlib.sha256(CAYLEY["formal_solution"].encode()).hexdigest()
    assert inst["execution"]["status"] == "ok" and inst["execution"]["isolation"] == probe().layers
    assert inst["seed"] == 11 and inst["template_version"] == 1
    assert inst["libraries"]["python"].startswith("3.") and inst["libraries"]["numpy"]
    assert res.summary["instances"] == 76 and res.summary["validated_templates"] == 1


def test_cayley_brute_force_gives_the_hand_energies():
    # the formula at the small cases, by hand: 2^2*2!, 2^3*3!, 2^4*4!, 2^5*5!
    assert [2 ** (n - 1) * math.factorial(n - 1) for n in (3, 4, 5, 6)] == [8, 48, 384, 3840]
    t = parse_template(CAYLEY)
    out = run_role("brute", CAYLEY_BRUTE, case_runs(t, t.small_case_check.cases, "case", True), hash_seed=1,
                   per_run_s=20, timeout_s=120, memory_mb=2048)  # fmt: skip
    assert [(k, r.status, r.value) for k, r in out.runs.items()] == [
        ("case0", "ok", 8), ("case1", "ok", 48), ("case2", "ok", 384), ("case3", "ok", 3840)]


def test_appendix_a2_variant_is_rejected_by_the_cross_check():
    # the paper's own A.2 code, in its style (n = {n}, print), with its checks: it executes and is positive
    code = "import math\nn = {n}\n\nresult = (2**n - 1) * \\\n    math.factorial(n - 1)\n\nprint(result)"
    wrong = parse_template(CAYLEY | {"formal_solution": code})
    unchecked = parse_template({k: v for k, v in CAYLEY.items() if k != "small_case_check"}
                               | {"formal_solution": code, "template_id": "a2_without_cross_check"})  # fmt: skip
    res = instantiate_templates([wrong, unchecked], 5, seed=1)
    [rej] = [r for r in res.rejections if r["template_id"] == wrong.template_id]
    assert rej["stage"] == "cross_check" and rej["instance_id"] is None
    assert rej["reason"] == "formal_solution gives 14 but the brute force gives 8 at n=3"
    assert res.validated_templates == ["a2_without_cross_check"]  # the paper's checks alone pass it
    for inst in res.instances:
        n = inst["params_used"]["n"]
        assert inst["numerical_value"] == str((2**n - 1) * math.factorial(n - 1))


def test_non_terminating_code_is_killed_and_recorded():
    looping = parse_template(template(template_id="loops", formal_solution="while n == 2:\n    pass\nresult = 10 * n"))
    deaf = parse_template(template(template_id="ignores_its_timer", formal_solution=(
        "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nwhile n == 2:\n    pass\nresult = 10 * n")))
    res = instantiate_templates([looping, deaf], 3, seed=0, per_instance_s=0.5, timeout_s=2)
    loops = [i for i in res.instances if i["template_id"] == "loops"]
    assert sorted(i["numerical_value"] for i in loops) == ["10", "30"]
    [rej] = [r for r in res.rejections if r["template_id"] == "loops"]
    assert rej["params_used"] == {"n": 2} and rej["stage"] == "execution"
    assert rej["reason"] == "timed out: no result within 0.5 s"
    # each run is a child process that its supervisor kills at the limit: ignoring SIGALRM changes nothing
    [deaf_rej] = [r for r in res.rejections if r["template_id"] == "ignores_its_timer"]
    assert deaf_rej["params_used"] == {"n": 2} and deaf_rej["stage"] == "execution"
    assert deaf_rej["reason"] == "timed out: no result within 0.5 s"
    deaf_done = [i for i in res.instances if i["template_id"] == "ignores_its_timer"]
    assert sorted(i["numerical_value"] for i in deaf_done) == ["10", "30"]


def test_reading_the_store_or_a_socket_is_contained(isolated):
    secret = "TOP-SECRET-4711"
    home_file = isolated / "home" / "notes.txt"
    home_file.parent.mkdir(parents=True, exist_ok=True)
    home_file.write_text(secret)
    store = isolated / ".theorembench" / "theorembench.db"
    store.parent.mkdir(parents=True, exist_ok=True)
    store.write_text(secret)
    with reaching_code(home_file, store) as code:  # the same code as the build's test (test_eternal_build.py)
        res = instantiate_templates([parse_template(template(formal_solution=code, answer_kind="expression"))], 3, 0)
    _, rej = by_params(res)
    assert res.instances == [] and len(rej) == 3
    assert all(r["stage"] == "execution" for r in rej.values())
    assert_nothing_reached({r["params_used"]["n"]: r["reason"] for r in rej.values()})
    assert secret not in json.dumps(res.rejections) + json.dumps(res.summary)


def test_unresolved_placeholder_and_left_name_reject_without_running():
    bad = parse_template(template(template_id="bad", problem_template="Compute {n} plus {m}."))
    left = parse_template(template(template_id="left", problem_template="In $S_{n}$ count the $n$-cycles; n is {n}."))
    res = instantiate_templates([bad, left], 3, seed=0)
    assert res.instances == [] and res.summary["per_template"][0].get("sandbox") is None  # nothing ran
    assert {r["stage"] for r in res.rejections} == {"render"} and len(res.rejections) == 6
    reasons = {(r["template_id"], r["reason"].split(" (")[0]) for r in res.rejections}
    assert reasons == {("bad", "unresolved placeholder {m} in the problem"),
                       ("left", "parameter name n left in the rendered problem")}  # fmt: skip


def test_rendering_keeps_latex_and_judges_left_names():
    assert substitute(r"$S_{n}$ on $\{1, 2\}$ and $\{1, \dots, {n}\}$, {n} letters", {"n": "5"}) == \
        r"$S_{5}$ on $\{1, 2\}$ and $\{1, \dots, 5\}$, 5 letters"  # fmt: skip
    assert substitute(r"$\frac{n}{2}$ in $\mathbb{N}$, {{n}}", {"n": "7", "N": "9"}) == \
        r"$\frac{7}{2}$ in $\mathbb{N}$, {7}"  # fmt: skip
    assert render_problem("Let $n = {n}$. Count derangements of $n$ letters.", {"n": "7"})[1] is None
    assert render_problem("Count the $n$-cycles of $S_{n}$.", {"n": "7"})[1].startswith("parameter name n left")
    assert render_problem("Take the set {k} with {n}.", {"n": "7"})[1] == "unresolved placeholder {k} in the problem"
    assert render_problem(r"Take $x^{k}$ and $\frac{a}{b}$ with {n}.", {"n": "7"})[1] is None  # LaTeX groups
    assert strip_bindings("import math\nn = {n}\nresult = n", ["n"]) == \
        "import math\npass  # n is bound by the harness\nresult = n"  # fmt: skip


def test_duplicates_are_removed_and_reported():
    t = parse_template(template(formal_solution="result = n % 2"))
    res = instantiate_templates([t], 10, seed=5)
    assert sorted(i["numerical_value"] for i in res.instances) == ["0", "1"]
    dups = [r for r in res.rejections if r["stage"] == "duplicate"]
    assert len(res.rejections) == len(dups) == 2
    [short] = [r for r in dups if r["params_used"] is None]
    assert short["reason"] == "the parameter domain holds only 3 distinct values; 10 instances were asked for, 3 drawn"
    [same] = [r for r in dups if r["params_used"] is not None]
    assert same["params_used"]["n"] in (1, 3) and same["reason"].startswith("same answer as t#")


def test_nondeterministic_code_is_rejected():
    code = "import random, time\nresult = random.randint(1, 10**12) if n == 1 else time.perf_counter_ns()"
    t = parse_template(template(formal_solution=code, params={"n": {"type": "choice", "values": [1, 2]}}))
    res = instantiate_templates([t], 2, seed=0)
    assert res.instances == [] and [r["stage"] for r in res.rejections] == ["determinism", "determinism"]
    assert all(r["reason"].startswith("nondeterministic: two runs gave") for r in res.rejections)


def test_rational_and_tuple_parameters():
    t = parse_template({
        "template_id": "rt", "problem_template": "Multiply {r} by the first entry of the pair {t}.",
        "formal_solution": "from fractions import Fraction\nassert isinstance(r, Fraction) and isinstance(t, tuple)\n"
                           "result = r * t[0]",
        "output_type": "Rational", "natural_lang_solution": "Multiply.",
        "params": {"r": {"type": "rational", "num_min": 1, "num_max": 3, "den_min": 2, "den_max": 3},
                   "t": {"type": "tuple", "items": [{"type": "int", "min": 1, "max": 2},
                                                    {"type": "choice", "values": ["a", "b"]}]}},
        "small_case_check": {"params": [{"r": "1/2", "t": [2, "a"]}, {"r": "2/3", "t": [1, "b"]}],
                             "code": "result = sum([r] * t[0])"},
        "validation_rule": [{"type": "value_check", "rule": "result > 0"}, {"type": "param_check", "rule": "t[0] >= 1"},
                            {"type": "format_check", "rule": "the answer is a fraction"}],
    })  # fmt: skip
    res = instantiate_templates([t], 4, seed=2)
    assert len(res.instances) + len(res.rejections) == 4 and len(res.instances) >= 2
    assert all(r["stage"] == "duplicate" and r["reason"].startswith("same answer") for r in res.rejections)
    for inst in res.instances:
        r, (k, letter) = inst["params_used"]["r"], inst["params_used"]["t"]
        assert isinstance(r, str) and isinstance(k, int) and letter in ("a", "b")
        assert inst["numerical_value"] == str(Fraction(r) * k)
        assert inst["problem"] == f"Multiply {r} by the first entry of the pair ({k}, {letter})."
        assert inst["answer_kind"] == "rational"
    assert res.summary["per_template"][0]["notes"] == [
        "validation rule of type 'format_check' ignored: the answer is a fraction"]


def test_params_domains():
    rat = {"type": "rational", "num_min": 1, "num_max": 3, "den_min": 2, "den_max": 3}
    assert P.contains(rat, Fraction(1, 1)) and P.contains(rat, Fraction(3, 2)) and not P.contains(rat, Fraction(1, 4))
    assert not P.contains(rat, Fraction(3, 1)) and P.size(rat) == 5  # 1/2 1/3 1 2/3 3/2
    assert P.decode(rat, "2/4") == Fraction(1, 2) and P.encode(rat, Fraction(1, 2)) == "1/2"
    tup = {"type": "tuple", "items": [{"type": "int", "min": 1, "max": 2}, rat]}
    assert P.decode(tup, [1, "1/3"]) == (1, Fraction(1, 3)) and P.encode(tup, (1, Fraction(1, 3))) == [1, "1/3"]
    assert P.text((1, Fraction(1, 3))) == "(1, 1/3)"
    prime = {"type": "prime", "min": 5, "max": 400}
    assert P.size(prime) == 76 and not P.contains(prime, 9) and P.contains(prime, 397) and not P.contains(prime, 3)
    big = {"type": "prime", "min": 10**12, "max": 10**12 + 1000}  # far above any sieve: drawn and tested
    rng = Random(0)
    assert all(P.is_prime(p) and 10**12 <= p <= 10**12 + 1000 for p in (P.sample(big, rng) for _ in range(5)))
    assert P.size(big) is None
    assert [P.is_prime(x) for x in (2, 91, 97, 561, 2**61 - 1)] == [True, False, True, False, True]
    with pytest.raises(ValueError):
        P.decode(tup, [1])


def test_template_problems_one_line_each(tmp_path):
    with pytest.raises(TemplateError) as exc:
        parse_template({"template_id": "x", "problem_template": "n is {n}", "answer_kind": "number",
                        "params": {"n": {"type": "primes", "min": 1, "max": 9},
                                   "k": {"type": "int", "min": 9, "max": 1}},
                        "param_definition": [{"var_name": "m"}],
                        "small_case_check": {"params": {"n": [1]}, "code": "result = ("}})  # fmt: skip
    assert exc.value.problems == [
        "formal_solution: required",
        "natural_lang_solution: required (each instance's solution_steps are rendered from it)",
        "answer_kind: 'number' is not one of " + ", ".join(KINDS),  # the answer checker's kinds
        "params.n.type: unknown parameter type 'primes' (use one of int, prime, choice, rational, tuple)",
        "params.k: min (9) is greater than max (1)",
        "param_definition: names m, which params does not declare",
        "param_definition: does not name n, k, which params declares",
        "small_case_check.code: Python syntax error at line 1: '(' was never closed",
    ]  # fmt: skip
    path = tmp_path / "t.json"
    path.write_text(json.dumps([template(), template()]))
    with pytest.raises(TemplateError) as exc:
        load_templates(path)
    assert exc.value.problems == ["template 2 (t): template_id 't' is used twice"]
    assert parse_template(template()).answer_kind == "integer"


def test_rules_are_interpreted_not_run():
    assert evaluate_rule("result > 0", {"result": 5}) and not evaluate_rule("result > 0", {"result": -1})
    assert evaluate_rule("n in [5, 7, 11]", {"n": 7}) and not evaluate_rule("n in [5, 7, 11]", {"n": 13})
    assert evaluate_rule("result == 2**(n-1) * 6 and n / 2 == 2", {"result": 48, "n": 4})
    for rule in ("__import__('os').system('true')", "result.__class__", "open('x')", "n is prime", "9**9**9 > 1"):
        with pytest.raises(RuleError):
            evaluate_rule(rule, {"result": 1, "n": 2})


def test_cli_writes_instances_and_rejects_a_bad_file(tmp_path):
    from importlib import resources

    demo = resources.files("theorembench.data").joinpath("eternal/derangements.json")
    out_dir = tmp_path / "out"
    res = runner.invoke(app, ["eternal", "instantiate", str(demo), "--n", "3", "--seed", "4", "--out", str(out_dir)])
    assert res.exit_code == 0, res.output
    lines = [json.loads(x) for x in (out_dir / "instances.jsonl").read_text().splitlines()]
    assert len(lines) == 3 and (out_dir / "rejections.jsonl").read_text() == ""
    mpmath.mp.dps = 1000  # D(n) is the integer nearest to n!/e, computed here another way
    for inst in lines:
        n = inst["params_used"]["n"]
        assert 20 <= n <= 300 and inst["numerical_value"] == str(int(mpmath.nint(mpmath.factorial(n) / mpmath.e)))
    summary = json.loads((out_dir / "summary.json").read_text())
    # the 7 declared cases agree, and the larger ones the brute force had time for (how many depends on the machine)
    assert summary["instances"] == 3 and summary["per_template"][0]["cross_check"].startswith("agree (7 cases")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([template(params={"n": {"type": "int", "min": 4, "max": 2}})]))
    res = runner.invoke(app, ["eternal", "instantiate", str(bad), "--out", str(tmp_path / "nothing")])
    assert res.exit_code == 2 and "template 1 (t): params.n: min (4) is greater than max (2)" in res.output
    assert not (tmp_path / "nothing").exists()


def test_write_outputs(tmp_path):
    from theorembench.methods.eternal.instantiate import InstantiateResult

    paths = write_outputs(InstantiateResult(instances=[{"a": 1}], rejections=[], summary={"instances": 1}), tmp_path)
    assert paths["instances"].read_text() == '{"a": 1}\n' and paths["rejections"].read_text() == ""
