"""The prompts and reply schemas of the EternalMath build (stages a to d and the validity review).

``VERSION`` is part of every stage's settings hash: edit a prompt, bump it, and the
stages that use it run again (their earlier model calls stay in the cache).
"""

from __future__ import annotations

import json
from typing import Any

VERSION = "2"

Messages = list[dict[str, str]]

# -- a. computability ----------------------------------------------------------------------

COMPUTABILITY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "computable": {"type": "boolean"},
        "reason": {"type": "string"},
        "results": {"type": "array", "items": {
            "type": "object",
            "properties": {
                "statement": {"type": "string"},
                "parameters": {"type": "array", "items": {"type": "object", "properties": {
                    "name": {"type": "string"}, "domain": {"type": "string"}}, "required": ["name", "domain"]}},
                "output": {"type": "string"},
                "kind": {"type": "string", "enum": ["exact value", "sharp bound"]},
            },
            "required": ["statement", "parameters", "output", "kind"],
        }},
    },
    "required": ["computable", "reason", "results"],
}  # fmt: skip


def computability_messages(paper: str) -> Messages:
    system = (
        "You screen research mathematics papers for a benchmark of computational problems. A paper is COMPUTABLE "
        "when it proves at least one result with explicit input and output: named parameters ranging over stated "
        "domains (integers, primes, small rationals, choices from a finite list) and an output that a short "
        "program can compute exactly for concrete parameter values, or a sharp bound attained for those values. "
        "Pure existence statements, qualitative properties, asymptotics without explicit constants, and results "
        "whose output cannot be computed in seconds for moderate parameters do not count."
    )
    user = (
        "Decide the computability of the paper below. List every result that qualifies (its statement in one or "
        "two sentences, its parameters with their domains, what it outputs, and whether the output is an exact "
        "value or a sharp bound). If none qualifies, set computable to false and give the reason.\n\n"
        f"=== PAPER ===\n{paper}\n=== END ===\n\n"
        'Reply with JSON only: {"computable": true|false, "reason": "...", "results": [{"statement": "...", '
        '"parameters": [{"name": "n", "domain": "prime, 5 <= n <= 400"}], "output": "...", '
        '"kind": "exact value"|"sharp bound"}]}'
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


# -- b. MSC classification (when the paper has no \subjclass) -------------------------------

CLASSIFY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"codes": {"type": "array", "items": {"type": "string"}}, "reason": {"type": "string"}},
    "required": ["codes", "reason"],
}


def classify_messages(paper: str, table: str, max_codes: int) -> Messages:
    system = ("You assign Mathematics Subject Classification (MSC2020) top-level classes to research papers. "
              "Answer only with two-digit classes from the table you are given.")  # fmt: skip
    user = (
        f"MSC2020 top-level classes:\n{table}\n\n"
        f"Give between one and {max_codes} classes for the paper below, the main one first.\n\n"
        f"=== PAPER ===\n{paper}\n=== END ===\n\n"
        'Reply with JSON only: {"codes": ["05", "20"], "reason": "one sentence"}'
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


# -- c. meta-templates ----------------------------------------------------------------------

TEMPLATES_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"templates": {"type": "array", "items": {
        "type": "object",
        "properties": {
            "template_id": {"type": "string"},
            "problem_template": {"type": "string"},
            "params": {"type": "object"},
            "formal_solution": {"type": "string"},
            "output_type": {"type": "string"},
            "natural_lang_solution": {"type": "string"},
            "validation_rule": {"type": "array"},
        },
        "required": ["template_id", "problem_template", "params", "formal_solution", "output_type",
                     "natural_lang_solution", "validation_rule"],
    }}},
    "required": ["templates"],
}  # fmt: skip

_EXAMPLE_TEMPLATE = {
    "template_id": "derangements_count",
    "target_paper_module": "Theorem 1",
    "core_math_concept": "derangements; inclusion-exclusion",
    "param_definition": [{"var_name": "n", "var_type": "Integer", "var_constraint": "4 <= n <= 30",
                          "var_source": "number of letters in Theorem 1"}],
    "problem_template": "How many permutations of $\\{1, \\dots, {n}\\}$ leave no element in its place?",
    "output_type": "Integer",
    "param_generation_rule": ["n uniform in [4, 30]"],
    "natural_lang_solution": "By inclusion-exclusion the count is $\\sum_{k=0}^{{n}} (-1)^k {n}!/k!$.",
    "formal_solution": "import math\nresult = sum((-1)**k * math.factorial(n) // math.factorial(k) "
                       "for k in range(n + 1))\nexact_expression = f\"sum((-1)^k * {n}!/k!, k = 0..{n})\"",
    "validation_rule": [{"type": "param_check", "rule": "4 <= n <= 30"},
                        {"type": "value_check", "rule": "result > 0"}],
    "params": {"n": {"type": "int", "min": 4, "max": 30}},
    "small_case_check": {"params": {"n": [4, 5, 6]}, "code": "from itertools import permutations\n"
                         "result = sum(all(p[i] != i for i in range(n)) for p in permutations(range(n)))"},
    "answer_kind": "integer",
}  # fmt: skip

TEMPLATE_RULES = """\
Rules for every template:
- problem_template is a complete, self-contained problem in LaTeX: define every object, state every \
hypothesis, and ask for one exact value. Write parameters as {name} for the declared names only; every other \
brace is LaTeX and stays as it is. Do not mention the paper.
- params declares the domain of every parameter, one of: {"type": "int", "min": a, "max": b}; \
{"type": "prime", "min": a, "max": b}; {"type": "choice", "values": [...]}; \
{"type": "rational", "num_min": a, "num_max": b, "den_min": c, "den_max": d}; \
{"type": "tuple", "items": [domain, ...]}. Choose domains in which the theorem's hypotheses hold.
- formal_solution is Python 3 in which each parameter is already bound as a variable of the same name; it \
computes the exact answer from the theorem's formula and assigns it to result (an int, a fractions.Fraction, \
a bool, or a sympy expression), and assigns to exact_expression the answer's closed form for these values as \
text (e.g. "2^(180) * 180!"). It may import math, fractions, itertools, sympy and networkx; it reads no files \
and opens no network connection.
- small_case_check gives a few small parameter values ({"n": [3, 4, 5]}, or a list of parameter objects) and \
brute-force Python that computes result for them straight from the definitions (enumeration, direct \
computation), never from the theorem's formula. Both programs must agree on every small case.
- natural_lang_solution (required) explains, step by step and with the {name} placeholders, how the answer \
follows from the theorem; it becomes each instance's solution. output_type is Integer, Rational, Real, Boolean \
or Expression. validation_rule (required) lists checks as Python expressions: type param_check (on the \
parameters only), value_check (on result and the parameters) or execution_check."""


def templates_messages(paper: str, results: list[dict[str, Any]], n: int) -> Messages:
    system = ("You turn theorems of research mathematics papers into parameterised problem templates whose answers "
              "a program computes exactly. You write precise mathematics and correct Python.")  # fmt: skip
    found = json.dumps(results, ensure_ascii=False, indent=1) if results else "(none listed)"
    user = (
        f"Write up to {n} distinct meta-templates, each from a different quantitative or constructive result of "
        "the paper below. Each template is one JSON object with the fields of this example (a classical "
        f"result, shown for the format only):\n{json.dumps(_EXAMPLE_TEMPLATE, ensure_ascii=False, indent=1)}\n\n"
        f"{TEMPLATE_RULES}\n\nCandidate results a screening judge found in the paper:\n{found}\n\n"
        f"=== PAPER ===\n{paper}\n=== END ===\n\n"
        'Reply with JSON only: {"templates": [ ... ]}'
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


# -- d. code translation ----------------------------------------------------------------------

SOLUTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"formal_solution": {"type": "string"}, "notes": {"type": "string"}},
    "required": ["formal_solution"],
}
CHECK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"small_case_check": {"type": "object", "properties": {
        "params": {"type": ["object", "array"]}, "code": {"type": "string"}}, "required": ["params", "code"]}},
    "required": ["small_case_check"],
}  # fmt: skip


def _problem_part(t: dict[str, Any]) -> str:
    shown = {k: t.get(k) for k in ("problem_template", "params", "param_definition", "output_type") if k in t}
    return json.dumps(shown, ensure_ascii=False, indent=1)


def solution_messages(t: dict[str, Any], paper_result: str = "") -> Messages:
    system = ("You are a code translator: you turn the solution of a parameterised mathematics problem into exact, "
              "deterministic Python.")  # fmt: skip
    draft = t.get("formal_solution") or "(none)"
    user = (
        "Write formal_solution for this template: Python 3 in which each parameter is already bound as a variable "
        "of the same name, which computes the exact answer by the solution's formula and assigns it to result "
        "(int, fractions.Fraction, bool or sympy expression), and which assigns to exact_expression the answer's "
        "closed form for these values as text (e.g. \"2^(180) * 180!\"). Only math, fractions, itertools, sympy "
        "and networkx may be imported; no files, no network, no randomness. Keep the draft if it is right; fix it "
        "if not.\n\n"
        f"Problem:\n{_problem_part(t)}\n\nNatural-language solution:\n{t.get('natural_lang_solution') or '(none)'}"
        f"\n\nTheorem it comes from: {paper_result or t.get('target_paper_module') or '(not given)'}\n\n"
        f"Draft formal_solution:\n{draft}\n\n"
        'Reply with JSON only: {"formal_solution": "...", "notes": "one sentence"}'
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def check_messages(t: dict[str, Any]) -> Messages:
    system = ("You write brute-force checks: programs that compute the answer to a mathematics problem for small "
              "parameters straight from its definitions, by enumeration or direct computation.")  # fmt: skip
    user = (
        "Write small_case_check for the problem below, without any closed formula for its answer: choose three "
        "to five small parameter values inside the declared domains for which exhaustive computation finishes "
        "in a few seconds, and Python 3 in which each parameter is already bound as a variable of the same name "
        "and which assigns the answer to result (same type as the problem's output). Only math, fractions, "
        "itertools, sympy and networkx may be imported.\n\n"
        f"Problem:\n{_problem_part(t)}\n\n"
        'Reply with JSON only: {"small_case_check": {"params": {"n": [3, 4, 5]}, "code": "..."}}'
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def repair_messages(messages: Messages, reply: str, error: str) -> Messages:
    """One repair round: the earlier request, the reply, and the error its code raised in the sandbox."""
    return [*messages, {"role": "assistant", "content": reply}, {"role": "user", "content": (
        f"Running that code in the sandbox failed:\n{error}\n\nFix the code and reply with the corrected JSON only, "
        "in the same shape.")}]  # fmt: skip


# -- f. validity review -------------------------------------------------------------------------

VALIDITY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "self_contained": {"type": "boolean"},
        "unambiguous": {"type": "boolean"},
        "unique_answer": {"type": "boolean"},
        "faithful": {"type": "boolean"},
        "valid": {"type": "boolean"},
        "reason": {"type": "string"},
    },
    "required": ["self_contained", "unambiguous", "unique_answer", "faithful", "valid", "reason"],
}
VALIDITY_CHECKS = ("self_contained", "unambiguous", "unique_answer", "faithful")


def validity_messages(theorem: str, excerpt: str, instances: list[dict[str, str]]) -> Messages:
    """The validity review of one template: the theorem, the paper's excerpt and several of its instances."""
    system = ("You review mathematics problems before they enter a benchmark. You are strict: a problem a careful "
              "expert could read two ways, that relies on an unstated assumption, or whose answer does not follow "
              "from the theorem it is built on, is rejected.")  # fmt: skip
    shown = "\n\n".join(f"--- INSTANCE {k + 1} ---\nPROBLEM:\n{i['problem']}\n\nSOLUTION:\n{i['solution']}\n\n"
                         f"ANSWER: {i['answer']}" for k, i in enumerate(instances))  # fmt: skip
    user = (
        f"Review these {len(instances)} instances of one parameterised template, each with the solution and the "
        "answer a program computed for it, against the theorem the template comes from and the part of the paper "
        "that states it.\n"
        "- self_contained: every object and hypothesis needed is defined in each problem itself;\n"
        "- unambiguous: each problem has only one reasonable reading;\n"
        "- unique_answer: each asks for one well-defined value, and the stated answer is that value;\n"
        "- faithful: the parameter values satisfy the theorem's hypotheses, and the solution and answer follow "
        "from the theorem (not from a misreading of it);\n"
        "- valid: all four hold for every instance.\n\n"
        f"THEOREM: {theorem or '(not named)'}\n\n=== PAPER EXCERPT ===\n{excerpt or '(none available)'}\n"
        f"=== END ===\n\n{shown}\n\n"
        'Reply with JSON only: {"self_contained": true, "unambiguous": true, "unique_answer": true, '
        '"faithful": true, "valid": true, "reason": "one or two sentences"}'
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


__all__ = ["CHECK_SCHEMA", "CLASSIFY_SCHEMA", "COMPUTABILITY_SCHEMA", "SOLUTION_SCHEMA", "TEMPLATES_SCHEMA",
           "TEMPLATE_RULES", "VALIDITY_CHECKS", "VALIDITY_SCHEMA", "VERSION", "check_messages", "classify_messages",
           "computability_messages", "repair_messages", "solution_messages", "templates_messages",
           "validity_messages"]  # fmt: skip
