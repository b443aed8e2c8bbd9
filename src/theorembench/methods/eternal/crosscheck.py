"""The small-case cross-check, judged on the host: the formula's values against the brute force's.

The brute force runs in a process of its own on the declared small cases, then on **larger cases**
while its time budget affords them: the declared cases' progression continued (the step between the
last two cases, or the next prime for a prime parameter), kept within the ``param_check`` rules that
every declared case satisfies. Small cases alone cannot expose an error that only shows at larger
values (precision lost in floats, a wrong term that vanishes for small n). The formula runs, in
another process, on the declared cases and on every larger case the brute force finished.

A template is rejected when a declared case does not run or does not agree, or when a larger case
disagrees; a larger case where only the formula fails is noted, not held against it (the formula
may be meant for a smaller domain than the brute force).
"""

from __future__ import annotations

import json
from typing import Any

from theorembench.methods.eternal import params as P
from theorembench.methods.eternal import values as V
from theorembench.methods.eternal.grading import Checker, agree
from theorembench.methods.eternal.runs import RoleOutcome
from theorembench.methods.eternal.template import Template
from theorembench.methods.eternal.validate import RuleError, evaluate_rule, rules_of

EXTEND_STEPS = 8  # at most this many larger cases
CHECK_BUDGET_S = 1.0  # wall time the brute force may spend on the larger cases


def _show(params: dict) -> str:
    return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in params.items())


def _integer(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _held_rules(template: Template, cases: list[dict]) -> list[str]:
    """The ``param_check`` rules every declared small case satisfies (the larger cases must, too)."""
    held = []
    for rule in rules_of(template, "param_check"):
        try:
            if all(evaluate_rule(rule, template.decode_params(c)) for c in cases):
                held.append(rule)
        except (RuleError, ValueError):
            continue
    return held


def _step(spec: dict, value: int, delta: int) -> int:
    if spec["type"] == "prime" and delta > 0:
        value += 1
        while not P.is_prime(value):
            value += 1
        return value
    return value + delta


def larger_cases(template: Template, steps: int = EXTEND_STEPS) -> list[dict]:
    """Cases beyond the declared ones (JSON values), continuing their progression; [] where there is none."""
    scc = template.small_case_check
    if scc is None or not scc.cases:
        return []
    last, prev = scc.cases[-1], scc.cases[-2] if len(scc.cases) > 1 else None
    delta: dict[str, int] = {}
    for name, spec in template.params.items():
        if spec["type"] in ("int", "prime") and _integer(last[name]):
            delta[name] = last[name] - prev[name] if prev is not None and _integer(prev[name]) else 1
        elif prev is not None and prev[name] != last[name]:
            return []  # a non-integer parameter changes: no progression to continue
    if not delta or any(d < 0 for d in delta.values()) or not any(delta.values()):
        return []
    held, seen = _held_rules(template, scc.cases), {json.dumps(c, sort_keys=True) for c in scc.cases}
    out, case = [], dict(last)
    for _ in range(4 * steps):
        case = {k: _step(template.params[k], v, delta[k]) if k in delta else v for k, v in case.items()}
        if len(out) >= steps:
            break
        try:
            fits = all(evaluate_rule(rule, template.decode_params(case)) for rule in held)
        except (RuleError, ValueError):
            fits = False
        if fits and json.dumps(case, sort_keys=True) not in seen:
            out.append(dict(case))
    return out


def case_runs(template: Template, cases: list[dict], prefix: str, required: bool) -> list[dict]:
    names = list(template.params)
    return [{"id": f"{prefix}{i}", "params": {k: P.wire(template.params[k], v) for k, v in
             template.decode_params(c).items() if k in names}, "mode": "nearest", "required": required}
            for i, c in enumerate(cases)]  # fmt: skip


def _failed(who: str, run: Any, at: str) -> str:
    what = "timed out" if run.status == "timeout" else "failed"
    return f"{who} {what} on the small case {at}: {run.error}"


def cross_check_failure(template: Template, larger: list[dict], brute: RoleOutcome, formula: RoleOutcome,
                        checker: Checker, notes: set[str]) -> str | None:  # fmt: skip
    """Why the template fails the cross-check (None: every declared case and every larger one compared agrees)."""
    scc = template.small_case_check
    assert scc is not None
    for i, case in enumerate(scc.cases):
        at, cid = _show(case), f"case{i}"
        b, f = brute.runs.get(cid), formula.runs.get(cid)
        if f is not None and not f.ok:
            return _failed("formal_solution", f, at)
        if b is None:
            return f"the brute-force check did not finish at small case {at}: {brute.missing(cid)}"
        if not b.ok:
            return _failed("the brute-force check", b, at)
        if f is None:
            return f"formal_solution did not finish at small case {at}: {formula.missing(cid)}"
        if not agree(f.value, b.value, checker):
            return (f"formal_solution gives {V.text(f.value)[:120]} but the brute force gives "
                    f"{V.text(b.value)[:120]} at {at}")  # fmt: skip
    for i, case in enumerate(larger):
        cid, at = f"ext{i}", _show(case)
        b, f = brute.runs.get(cid), formula.runs.get(cid)
        if b is None or not b.ok:
            break
        if f is None or not f.ok:
            notes.add(f"formal_solution gives no value at {at}, a case beyond the declared small cases, where the "
                      f"brute force does: {f.error if f else 'not run'}")  # fmt: skip
            continue
        if not agree(f.value, b.value, checker):
            return (f"formal_solution gives {V.text(f.value)[:120]} but the brute force gives "
                    f"{V.text(b.value)[:120]} at {at}, a case beyond the declared small cases that the brute "
                    f"force ran in time")  # fmt: skip
    return None


def larger_done(larger: list[dict], brute: RoleOutcome) -> list[dict]:
    """The larger cases the brute force finished, in order (it stops at the first it does not)."""
    done = []
    for i, case in enumerate(larger):
        run = brute.runs.get(f"ext{i}")
        if run is None or not run.ok:
            break
        done.append(case)
    return done
