"""Step e on the host side: run a template's job in the sandbox, and judge each result by the per-instance rules.

Validation rules (``validation_rule``) are read, never run: a rule is parsed with ``ast`` and
evaluated by a small interpreter that knows only comparisons (``< <= == != >= > in``), ``and``/``or``/
``not``, arithmetic (``+ - * / // % **``, exact: ``/`` of integers is a Fraction), list/tuple/set
literals, indexing with a constant, the names ``result`` and the parameters, and the functions
``abs``, ``min``, ``max``, ``len`` and ``is_prime``. ``value_check`` rules see ``result`` and the
parameters; ``param_check`` rules only the parameters (checked before any code runs).
``execution_check`` rules are what execution checks anyway. A rule of another type, one that does
not parse, uses anything else, or cannot be evaluated on a value, is ignored and a note says so.
"""

from __future__ import annotations

import ast
import json
import operator
import sys
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from theorembench.methods.eternal import params as P
from theorembench.methods.eternal.render import strip_bindings
from theorembench.methods.eternal.template import Template
from theorembench.sandbox import SandboxResult, run_sandboxed

HARNESS = Path(__file__).with_name("harness.py").read_text()
MAX_VALUE_CHARS = 100_000
MAX_OUTPUT_BYTES = 64_000_000
_CMP = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
        ast.GtE: operator.ge, ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}  # fmt: skip
_BIN = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
        ast.Mod: operator.mod}  # fmt: skip
_FUNCS = {"abs": abs, "min": min, "max": max, "len": len, "is_prime": P.is_prime, "isprime": P.is_prime}
_KIND_TYPES = {"integer": {"int"}, "rational": {"int", "rational"}, "boolean": {"bool"},
               "real": {"int", "rational", "float", "expression"}, "tuple": {"tuple"}, "list": {"list"},
               "set": {"set"}, "expression": {"int", "rational", "expression", "str", "bool"}}  # fmt: skip


class RuleError(ValueError):
    """A rule this interpreter does not accept or cannot evaluate."""


def _number(v: Any) -> bool:
    return isinstance(v, int | Fraction | float)


def _eval(node: ast.AST, env: dict[str, Any]) -> Any:
    if isinstance(node, ast.Expression):
        return _eval(node.body, env)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float | str | bool | type(None)):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in env:
            raise RuleError(f"unknown name {node.id!r}")
        return env[node.id]
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        items = [_eval(e, env) for e in node.elts]
        return set(items) if isinstance(node, ast.Set) else items if isinstance(node, ast.List) else tuple(items)
    if isinstance(node, ast.BoolOp):
        vals = (_eval(v, env) for v in node.values)
        return all(vals) if isinstance(node.op, ast.And) else any(vals)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not | ast.USub | ast.UAdd):
        v = _eval(node.operand, env)
        if isinstance(node.op, ast.Not):
            return not v
        if not _number(v):
            raise RuleError("sign of a non-number")
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.Compare):
        left = _eval(node.left, env)
        for op, comp in zip(node.ops, node.comparators):
            right = _eval(comp, env)
            if type(op) not in _CMP:
                raise RuleError(f"comparison {type(op).__name__} not allowed")
            if not _CMP[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.BinOp):
        a, b = _eval(node.left, env), _eval(node.right, env)
        if not (_number(a) and _number(b)):
            raise RuleError("arithmetic on non-numbers")
        if isinstance(node.op, ast.Div):
            return Fraction(a) / Fraction(b) if not (isinstance(a, float) or isinstance(b, float)) else a / b
        if isinstance(node.op, ast.Pow):
            too_big = isinstance(a, int) and abs(a).bit_length() * abs(b) > 10**6 if isinstance(b, int) else True
            if too_big or abs(b) > 10_000:
                raise RuleError("power too large")
            return Fraction(a) ** b if b < 0 and isinstance(a, int) else a**b
        if type(node.op) not in _BIN:
            raise RuleError(f"operator {type(node.op).__name__} not allowed")
        return _BIN[type(node.op)](a, b)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int):
        return _eval(node.value, env)[node.slice.value]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCS and not node.keywords:
        return _FUNCS[node.func.id](*(_eval(a, env) for a in node.args))
    raise RuleError(f"{type(node).__name__} not allowed")


def evaluate_rule(text: str, env: dict[str, Any]) -> bool:
    """The truth of one rule with the names in ``env``; ``RuleError`` when it is not accepted or not evaluable."""
    if len(text) > 2000:
        raise RuleError("rule too long")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError) as exc:
        raise RuleError("not an expression") from exc
    try:
        return bool(_eval(tree, env))
    except RuleError:
        raise
    except (TypeError, ValueError, ZeroDivisionError, IndexError, KeyError, OverflowError, RecursionError) as exc:
        raise RuleError(f"{type(exc).__name__}: {exc}") from exc


def rules_of(template: Template, kind: str) -> list[str]:
    return [r["rule"] for r in template.validation_rule if str(r.get("type", "")).strip().lower() == kind]


def rule_notes(template: Template) -> list[str]:
    """Notes for rules of a type we do not check."""
    known = {"value_check", "param_check", "execution_check"}
    return [f"validation rule of type {r.get('type')!r} ignored: {r['rule'][:120]}" for r in template.validation_rule
            if str(r.get("type", "")).strip().lower() not in known]  # fmt: skip


def check_param_rules(template: Template, params: dict[str, Any], notes: set[str]) -> str | None:
    """The first ``param_check`` rule the parameters fail (None: all hold or were ignored)."""
    for rule in rules_of(template, "param_check"):
        try:
            if not evaluate_rule(rule, dict(params)):
                return rule
        except RuleError as exc:
            notes.add(f"param_check rule {rule[:120]!r} ignored: {exc}")
    return None


def host_value(text: str, typ: str) -> Any:
    """The Python value of an exact result text (int, rational, bool, float), or None for other types."""
    if typ == "int":
        limit = sys.get_int_max_str_digits()
        sys.set_int_max_str_digits(0)
        try:
            return int(text)
        finally:
            sys.set_int_max_str_digits(limit)
    if typ == "rational":
        return Fraction(text)
    if typ == "bool":
        return text == "True"
    if typ == "float":
        return float(text)
    return None


def judge_value(template: Template, params: dict[str, Any], line: dict, notes: set[str]) -> str | None:
    """Why an executed instance's value is rejected (stage value_rule), or None."""
    text, typ, exact = line["value"], line["type"], line["exact"]
    if len(text) > MAX_VALUE_CHARS:
        return f"the answer has {len(text)} characters (limit {MAX_VALUE_CHARS})"
    if not exact and template.answer_kind != "real":
        return f"inexact result {text[:80]} (a float) where answer kind {template.answer_kind} needs an exact value"
    if typ not in _KIND_TYPES.get(template.answer_kind, set()):
        return f"answer kind {template.answer_kind}, but the result is a {typ} ({text[:80]})"
    rules = rules_of(template, "value_check")
    value = host_value(text, typ) if rules else None
    for rule in rules:
        if value is None:
            notes.add(f"value_check rule {rule[:120]!r} ignored: not applicable to a {typ} result")
            continue
        try:
            if not evaluate_rule(rule, dict(params, result=value)):
                return f"value rule failed: {rule[:200]} (result {text[:80]})"
        except RuleError as exc:
            notes.add(f"value_check rule {rule[:120]!r} ignored: {exc}")
    return None


@dataclass
class JobOutcome:
    """What the harness reported: small cases in order, instance lines by index, the started ones, the sandbox run."""

    sandbox: SandboxResult
    cases: list[dict] = field(default_factory=list)
    instances: dict[int, dict] = field(default_factory=dict)
    started: set[int] = field(default_factory=set)
    skipped: bool = False
    done: bool = False


def run_job(template: Template, candidates: list[dict[str, Any]], *, check: bool = True, timeout_s: float = 120,
            memory_mb: int = 2048, per_instance_s: float = 20) -> JobOutcome:  # fmt: skip
    """One sandboxed process: the small-case check (when ``check`` and the template has one), then each candidate."""
    names = list(template.params)
    job = {"code": strip_bindings(template.formal_solution, names), "per_instance_s": per_instance_s, "check": None,
           "instances": [{k: P.wire(template.params[k], c[k]) for k in names} for c in candidates]}  # fmt: skip
    scc = template.small_case_check
    if check and scc is not None:
        cases = [template.decode_params(c) for c in scc.cases]
        job["check"] = {"code": strip_bindings(scc.code, names),
                        "cases": [{k: P.wire(template.params[k], c[k]) for k in names} for c in cases]}  # fmt: skip
    files = {"harness.py": HARNESS, "job.json": json.dumps(job)}
    res = run_sandboxed(["python", "harness.py", "job.json"], files=files, timeout_s=timeout_s, memory_mb=memory_mb,
                        max_output_bytes=MAX_OUTPUT_BYTES)  # fmt: skip
    out = JobOutcome(sandbox=res)
    for raw in res.stdout.splitlines():
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        kind = line.get("kind") if isinstance(line, dict) else None
        if kind == "case":
            out.cases.append(line)
        elif kind == "start":
            out.started.add(line["index"])
        elif kind == "instance":
            out.instances[line["index"]] = line
        elif kind == "skip":
            out.skipped = True
        elif kind == "done":
            out.done = True
    return out


def _show(params: dict) -> str:
    return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in params.items())


def cross_check_failure(template: Template, out: JobOutcome) -> str | None:
    """Why the template fails the small-case check (None: every case agreed, or it has none)."""
    scc = template.small_case_check
    if scc is None:
        return None
    bad = next((c for c in out.cases if c.get("status") != "agree"), None)
    if bad is None and len(out.cases) == len(scc.cases):
        return None
    if bad is None:
        where = f" at small case {_show(scc.cases[len(out.cases)])}" if len(out.cases) < len(scc.cases) else ""
        return f"the sandbox stopped the small-case check{where}: {out.sandbox.status} ({out.sandbox.reason})"
    at, status = _show(bad.get("params", {})), bad.get("status", "")
    if status == "disagree":
        extra = f"; {bad['error']}" if bad.get("error") else ""
        return (f"formal_solution gives {bad.get('formula', '')[:120]} but the brute force gives "
                f"{bad.get('check', '')[:120]} at {at}{extra}")  # fmt: skip
    who = "formal_solution" if status.startswith("formula_") else "the brute-force check"
    what = "timed out" if status.endswith("timeout") else "failed"
    return f"{who} {what} on the small case {at}: {bad.get('error', '')}"
