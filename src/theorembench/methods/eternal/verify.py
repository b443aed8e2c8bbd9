"""One template's sandboxed runs and the checks on what they returned: cross-check, determinism, precision.

The runs (:mod:`runs`), three sandboxed processes side by side: the brute force on the small cases
and larger ones (when the template has a check), the formula on those cases and on every candidate,
and the replay of every candidate. Each candidate is then judged, here on the host:

- **execution**: the formula gave a value (in time, without an error);
- **time_limit**: not a failure of the code: the run never reported because its role's process was
  stopped at the process limit (:func:`role_limit`: a start allowance plus the per-run limit for each
  run, so it grows with the number of instances);
- **determinism**: the replay, in another process with another hash seed, gives the same value;
- **precision**: the value is the same rounding upward and downward (a result that went through
  floats moves with the rounding mode), holds no float, and, for the template as a whole, its
  integers beyond 2^53 do not all look like doubles (a full 53-bit mantissa and nothing below it:
  what ``int(x)`` of a float gives, e.g. ``round(math.factorial(n) / math.e)``). A template whose
  answer is real-valued declares ``answer_kind: real``; then the rounding may move the value by no
  more than the checker's tolerance, and a float is fine.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from theorembench.methods.eternal import crosscheck as X
from theorembench.methods.eternal import params as P
from theorembench.methods.eternal import values as V
from theorembench.methods.eternal.grading import Checker
from theorembench.methods.eternal.render import strip_bindings
from theorembench.methods.eternal.runs import RoleOutcome, Run, hash_seeds, run_role
from theorembench.methods.eternal.template import Template
from theorembench.sandbox.providers import Sandbox

MODES = ("nearest", "upward", "downward")
REAL_TOLERANCE = 1e-6  # the answer checker's default relative tolerance for a real answer
DOUBLE_BITS = 53
DOUBLE_LIKE_BITS = 41  # a float's integer has an odd part of at most 53 bits; honest ones rarely 41..53 bits


@dataclass
class Verification:
    """The runs of one template, the cross-check's verdict, and per candidate its value or its rejection."""

    roles: dict[str, RoleOutcome] = field(default_factory=dict)
    failure: str | None = None
    larger: list[dict] = field(default_factory=list)
    outcomes: list[Run | tuple[str, str]] = field(default_factory=list)
    seeds: tuple[int, int] = (0, 0)


def _wired(template: Template, values: dict[str, Any]) -> dict[str, Any]:
    return {k: P.wire(template.params[k], values[k]) for k in template.params}


def double_like(n: int) -> bool:
    """An integer beyond 2^53 that a double holds exactly, with an odd part of 41 to 53 bits (see module doc)."""
    if abs(n) <= 2**DOUBLE_BITS:
        return False
    odd = abs(n) >> ((abs(n) & -abs(n)).bit_length() - 1)
    return DOUBLE_LIKE_BITS <= odd.bit_length() <= DOUBLE_BITS


def _same(a: Any, b: Any, real: bool) -> bool:
    return V.close(a, b, REAL_TOLERANCE) if real else V.close(a, b, 0.0)


def _precision(template: Template, first: Run, replay: RoleOutcome, i: int, notes: set[str]) -> str | None:
    """Why the value is not exact enough for its answer kind (None: it is)."""
    real, value = template.answer_kind == "real", first.value
    if real and isinstance(value, float) and not math.isfinite(value):
        return f"the result {V.text(value)} is not a finite number"
    if not real and V.inexact(value):
        return (f"inexact result {V.text(value)[:80]} (a float) where answer kind {template.answer_kind} needs an "
                f"exact value")  # fmt: skip
    up, down = replay.runs.get(f"inst{i}:upward"), replay.runs.get(f"inst{i}:downward")
    if not (replay.rounding and up is not None and down is not None and up.mode_ok and down.mode_ok):
        notes.add("the rounding mode could not be changed in the sandbox: a result that went through floats is "
                  "caught only by its type and by the 2^53 test")  # fmt: skip
        return None
    for name, run in (("upward", up), ("downward", down)):
        if not run.ok:
            return f"rounding {name}, the code {'timed out' if run.status == 'timeout' else 'failed'}: {run.error}"
    if _same(value, up.value, real) and _same(value, down.value, real):
        return None
    shown = ", ".join(f"{V.text(r.value)[:60]} rounding {m}" for m, r in zip(MODES, (first, up, down)))
    if real:
        return f"the result moves by more than {REAL_TOLERANCE:g} (relative) with the rounding mode: {shown}"
    return (f"the result depends on floating-point rounding: {shown}; answer kind {template.answer_kind} needs "
            f"exact arithmetic (declare answer_kind real for a real-valued answer)")  # fmt: skip


def role_limit(timeout_s: float, per_run_s: float, runs: int, extra_s: float = 0.0) -> float:
    """A role's process limit: ``timeout_s`` to start (and import its libraries), plus ``per_run_s`` for each of
    its runs (and ``extra_s``), so that a template asked for more instances gets the time they need."""
    return timeout_s + per_run_s * runs + extra_s


def _lost(role: RoleOutcome, run_id: str) -> tuple[str, str] | None:
    """A run that never reported because its role's process was stopped at its limit: lost to the template's
    time limit, not an execution failure of the instance's code."""
    if role.sandbox.status != "timeout" or role.tampered or role.failure:
        return None
    when = "while this instance ran" if run_id in role.started else "before this instance ran"
    return "time_limit", (f"lost to the time limit: the {role.role} process reached its limit "
                          f"({role.sandbox.reason or 'timeout'}) {when}")


def _judge(template: Template, i: int, formula: RoleOutcome, replay: RoleOutcome, seeds: tuple[int, int],
           notes: set[str]) -> Run | tuple[str, str]:  # fmt: skip
    run = formula.runs.get(f"inst{i}")
    if run is None:
        return _lost(formula, f"inst{i}") or ("execution", formula.missing(f"inst{i}"))
    if run.status == "timeout":
        return "execution", f"timed out: {run.error}"
    if not run.ok:
        return "execution", run.error
    again = replay.runs.get(f"inst{i}:nearest")
    if again is None and (lost := _lost(replay, f"inst{i}:nearest")):
        return lost
    if again is None:
        why = replay.missing(f"inst{i}:nearest")
        return "determinism", f"nondeterministic: the run in a second process gave nothing: {why}"
    if not again.ok:
        how = "timed out" if again.status == "timeout" else "failed"
        return "determinism", f"nondeterministic: the run in a second process {how}: {again.error}"
    if not _same(run.value, again.value, template.answer_kind == "real"):
        return "determinism", (f"nondeterministic: two runs gave {V.text(run.value)[:200]} and then "
                               f"{V.text(again.value)[:200]} (two processes, hash seeds {seeds[0]} and {seeds[1]})")
    why = _precision(template, run, replay, i, notes)
    return ("precision", why) if why else run


def double_shaped(template: Template, outcomes: list[Run | tuple[str, str]]) -> str | None:
    """Why a template's integers look converted from floats: every one beyond 2^53 (at least one) is double-like."""
    if template.answer_kind == "real":
        return None
    big = [r.value for r in outcomes if isinstance(r, Run) and V.type_of(r.value) == "int" and
           abs(r.value) > 2**DOUBLE_BITS]  # fmt: skip
    if big and all(double_like(int(n)) for n in big):
        return (f"every integer answer beyond 2^53 ({len(big)} of them) is exactly a double with a full mantissa, as "
                f"int() of a float gives, e.g. {V.text(big[0])[:40]}; compute it in exact arithmetic")  # fmt: skip
    return None


def verify(template: Template, candidates: list[dict[str, Any]], seed: int, checker: Checker, notes: set[str], *,
           timeout_s: float, memory_mb: int, per_instance_s: float, check_budget_s: float,
           box: Sandbox | None = None) -> Verification:  # fmt: skip
    """Run the template's roles in ``box`` (None: the theorembench sandbox) and judge every candidate (see the
    module doc)."""
    names = list(template.params)
    code = strip_bindings(template.formal_solution, names)
    v = Verification(seeds=hash_seeds(seed, template.template_id))
    limits = {"per_run_s": per_instance_s, "memory_mb": memory_mb, "box": box}
    runs = [{"id": f"inst{i}", "params": _wired(template, c), "mode": "nearest"} for i, c in enumerate(candidates)]
    scc = template.small_case_check
    larger = X.larger_cases(template) if scc is not None else []
    # the formula runs on the declared cases first (a failure there ends the role), then the instances, then
    # the larger cases (only those the brute force finishes are compared), beside the brute force's process
    cases = X.case_runs(template, scc.cases, "case", True) if scc is not None else []
    formula_runs = cases + runs + X.case_runs(template, larger, "ext", False)
    # the replay runs beside them, on every candidate: nearest first, and a candidate's first failure skips the rest
    again = [{"id": f"inst{i}:{m}", "params": r["params"], "mode": m, "group": r["id"]} for i, r in enumerate(runs)
             for m in MODES]  # fmt: skip
    with ThreadPoolExecutor(3) as pool:
        formula_job = pool.submit(run_role, "formula", code, formula_runs, hash_seed=v.seeds[0],
                                  timeout_s=role_limit(timeout_s, per_instance_s, len(formula_runs)), **limits)
        replay_job = pool.submit(run_role, "replay", code, again, hash_seed=v.seeds[1],
                                 timeout_s=role_limit(timeout_s, per_instance_s, len(again)), **limits)
        if scc is not None:
            extend = {"runs": X.case_runs(template, larger, "ext", False), "budget_s": check_budget_s}
            v.roles["brute"] = run_role("brute", strip_bindings(scc.code, names), cases, extend=extend,
                                        hash_seed=v.seeds[0], **limits,
                                        timeout_s=role_limit(timeout_s, per_instance_s, len(cases), check_budget_s))
        formula = v.roles["formula"] = formula_job.result()
        replay = v.roles["replay"] = replay_job.result()
    if scc is not None:
        v.larger = X.larger_done(larger, v.roles["brute"])
        v.failure = X.cross_check_failure(template, v.larger, v.roles["brute"], formula, checker, notes)
        if v.failure:
            return v
    v.outcomes = [_judge(template, i, formula, replay, v.seeds, notes) for i in range(len(candidates))]
    return v
