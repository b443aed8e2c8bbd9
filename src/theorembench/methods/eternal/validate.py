"""Step e on the host side: the per-instance rules, read and judged here on the values the sandbox returned.

Validation rules (``validation_rule``) are read, never run: a rule is parsed with ``ast`` and
evaluated by a small interpreter that knows only comparisons (``< <= == != >= > in``), ``and``/``or``/
``not``, arithmetic (``+ - * / // % **``, exact: ``/`` of integers is a Fraction), list/tuple/set
literals, indexing with a constant, the names ``result`` and the parameters, and the functions
``abs``, ``min``, ``max``, ``len`` and ``is_prime``. ``value_check`` rules see ``result`` and the
parameters (a ``positivity`` rule is a value rule: its text, or ``result > 0`` when it has none);
``param_check`` rules only the parameters (checked before any code runs).
``execution_check`` rules are what execution checks anyway. A rule of another type, one that does
not parse, uses anything else, or cannot be evaluated on a value, is ignored and a note says so.
"""

from __future__ import annotations

import ast
import operator
from fractions import Fraction
from typing import Any

from theorembench.methods.eternal import params as P
from theorembench.methods.eternal import values as V
from theorembench.methods.eternal.template import Template

MAX_VALUE_CHARS = 100_000
_CMP = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
        ast.GtE: operator.ge, ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}  # fmt: skip
_BIN = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
        ast.Mod: operator.mod}  # fmt: skip
_FUNCS = {"abs": abs, "min": min, "max": max, "len": len, "is_prime": P.is_prime, "isprime": P.is_prime}
_KIND_TYPES = {"integer": {"int"}, "rational": {"int", "rational"}, "boolean": {"bool"},
               "real": {"int", "rational", "float", "expression"}, "tuple": {"tuple"}, "list": {"list"},
               "set": {"set"}, "expression": {"int", "rational", "expression", "str", "bool"},
               "interval": {"expression"}}  # fmt: skip


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


# rule types read as another: a "positivity" rule is a value rule (its text, e.g. "result > 0", or that by default)
ALIASES = {"positivity": "value_check"}
KNOWN_TYPES = ("value_check", "param_check", "execution_check", *ALIASES)


def _kind(rule: dict) -> str:
    kind = str(rule.get("type", "")).strip().lower()
    return ALIASES.get(kind, kind)


def rules_of(template: Template, kind: str) -> list[str]:
    out = []
    for r in template.validation_rule:
        if _kind(r) == kind:
            text = r["rule"].strip()
            out.append(text or "result > 0" if str(r.get("type", "")).strip().lower() == "positivity" else r["rule"])
    return out


def rule_notes(template: Template) -> list[str]:
    """Notes for rules of a type we do not check."""
    known = set(KNOWN_TYPES)
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


def judge_value(template: Template, params: dict[str, Any], value: Any, notes: set[str]) -> str | None:
    """Why an executed instance's value is rejected (stage value_rule), or None; ``value`` as :mod:`values` reads it."""
    text, typ = V.text(value), V.type_of(value)
    if len(text) > MAX_VALUE_CHARS:
        return f"the answer has {len(text)} characters (limit {MAX_VALUE_CHARS})"
    if typ not in _KIND_TYPES.get(template.answer_kind, set()):
        return f"answer kind {template.answer_kind}, but the result is a {typ} ({text[:80]})"
    for rule in rules_of(template, "value_check"):
        if typ in ("expression", "str"):
            notes.add(f"value_check rule {rule[:120]!r} ignored: not applicable to a {typ} result")
            continue
        try:
            if not evaluate_rule(rule, dict(params, result=value)):
                return f"value rule failed: {rule[:200]} (result {text[:80]})"
        except RuleError as exc:
            notes.add(f"value_check rule {rule[:120]!r} ignored: {exc}")
    return None
